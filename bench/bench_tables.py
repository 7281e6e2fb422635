"""Benchmark: reading large tables against pyarrow, and `vareval significance` on big files.

Part 1: ``vareval.data.read_table`` (every cell read as text, columns turned
into numbers only when that loses nothing) against ``pyarrow.csv.read_csv``
(type inference, the anchor) and ``pandas.read_csv`` on the same file. Each
read runs alone in a fresh child process, so its peak memory is the child's
``VmHWM`` (every child imports pandas, pyarrow and vareval first: the
same baseline); CPU seconds (user + system, every thread) are printed beside
wall seconds, since on a loaded machine wall time measures the load. Readers
alternate over ``--rounds`` rounds; the lowest CPU and peak of each are kept.
Targets: vareval within 2x of pyarrow's CPU and 1.5x of its peak memory.
vareval's read uses its compiled spelling checks where they were built
(``VAREVAL_NO_KERNEL=1`` measures the numpy path instead).

The files: predictions (item, gold, two systems' integer labels; 10^3 to
10^7 rows), 6-decimal floats (model, seed, four metrics written ``%.6f``:
text for vareval, since ``0.970370`` may be a label), full-precision floats
(50 columns as pandas writes them), tricky labels (``1.10``, ``01``, ``NA``),
runs (model, seed, configuration, a 4-digit accuracy), and a wide predictions
table (42 label columns) read whole and, as ``significance --system a,b``
reads it, four columns. Every kind is also read at 10^3 and 10^4 rows
(``--no-small``: not), where a read takes milliseconds and its fixed costs
decide the ratio. Times are printed in milliseconds.

A read in a fresh process is its process's first: it pays what either
library does once (imports inside pandas or pyarrow, thread pools,
allocator growth). Files under 16 MB are also read warm: both readers in one
process, a first read each, then 30 reads interleaved; the median CPU of a
warm read of each and their ratio are printed beside.

Part 2: ``vareval significance`` end to end in a fresh process (start-up,
read, paired bootstrap, output) on the 10^6-row predictions file, and with
``--big``, on a 2 GB wide predictions file (12 x 10^6 items, 40 systems,
``--system s0,s1``): CPU, wall and peak memory.

Run: PYTHONPATH=src python bench/bench_tables.py [--rounds 2] [--big] [--dir DIR]
[--only WORD,...] [--no-small] (DIR keeps the generated files between runs; --only reads the
files whose name holds one of the words, e.g. ``--only 1e3,1e4``).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

READERS = ("vareval", "pyarrow", "pandas")


def _cpu(who=resource.RUSAGE_SELF):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def peak_mb():
    """This process's peak resident memory (VmHWM). Not ru_maxrss: Linux carries the
    parent's high-water mark into a child across fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(reader, path, columns):
    """Read ``path`` once with ``reader``; print CPU, wall and peak memory as JSON."""
    import pyarrow.csv as pa_csv

    from vareval.data import read_table

    columns = columns.split(",") if columns else None
    start_mb = peak_mb()
    cpu, wall = _cpu(), time.perf_counter()
    if reader == "vareval":
        table = read_table(path, columns=columns) if columns else read_table(path)
    elif reader == "pyarrow":
        options = pa_csv.ConvertOptions(include_columns=columns or [])
        table = pa_csv.read_csv(path, convert_options=options)
    else:
        table = pd.read_csv(path, usecols=columns)
    print(json.dumps({
        "cpu": _cpu() - cpu, "wall": time.perf_counter() - wall, "rows": len(table),
        "start_mb": start_mb, "peak_mb": peak_mb(),
    }))


def measure(reader, path, columns=None):
    cmd = [sys.executable, __file__, "--child", reader, str(path), ",".join(columns or [])]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
    return json.loads(out.stdout)


def run_command(cmd):
    """Run ``cmd`` in a child; its CPU, wall and peak memory (the only child waited for here)."""
    wrapper = [sys.executable, __file__, "--command", json.dumps(cmd)]
    out = subprocess.run(wrapper, check=True, capture_output=True, text=True, env=os.environ)
    return json.loads(out.stdout.strip().splitlines()[-1])


def command_child(cmd):
    """Run the command from this small process: its ru_maxrss then holds no large parent."""
    wall = time.perf_counter()
    done = subprocess.run(json.loads(cmd), capture_output=True, text=True, env=os.environ)
    if done.returncode:
        sys.exit(done.stderr)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - wall,
                      "peak_mb": usage.ru_maxrss / 1024}))


def predictions(n, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    return pd.DataFrame({
        "item": np.arange(n), "gold": g,
        "model_a": np.where(rng.random(n) < 0.80, g, rng.integers(0, 3, n)),
        "model_b": np.where(rng.random(n) < 0.78, g, rng.integers(0, 3, n))})


def write_wide(path, rows, systems, seed=7):
    """Wide predictions with word labels, written chunk by chunk (bounded memory)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    rng = np.random.default_rng(seed)
    classes = np.array(["cat", "dog", "bird"])
    names = ["item", "gold", *(f"s{i}" for i in range(systems))]
    schema = pa.schema([(name, pa.string()) for name in names])
    options = pa_csv.WriteOptions(quoting_style="none")
    with pa_csv.CSVWriter(str(path), schema, write_options=options) as writer:
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            g = rng.integers(0, 3, n)
            cols = [np.char.add("q", np.arange(start, start + n).astype(str)), classes[g]]
            cols += [classes[np.where(rng.random(n) < 0.7 + 0.005 * i, g, rng.integers(0, 3, n))]
                     for i in range(systems)]
            writer.write_table(pa.table([pa.array(c) for c in cols], schema=schema))


KINDS = {  # kind -> (its large size, a table of n rows)
    "6-decimal": (1_000_000, lambda n, rng: pd.DataFrame({
        "model": rng.choice(["mlp", "svc"], n), "seed": rng.integers(0, 100, n),
        **{f"m{i}": rng.random(n) for i in range(4)}})),
    "50 floats": (100_000, lambda n, rng: pd.DataFrame(rng.random((n, 50)),
                                                       columns=[f"m{i}" for i in range(50)])),
    "labels": (500_000, lambda n, rng: pd.DataFrame({
        "item": np.char.add("q", np.arange(n).astype(str)),
        "gold": rng.choice(["cat", "dog", "1.10", "01", "NA"], n),
        "model_a": rng.choice(["cat", "dog", "1.1", "1"], n)})),
    "runs": (200_000, lambda n, rng: pd.DataFrame({
        "model": rng.choice(["mlp", "logreg"], n), "seed": rng.integers(0, 1000, n),
        "config": np.char.add("c", rng.integers(0, 50, n).astype(str)),
        "accuracy": rng.random(n).round(4)})),
}
SMALL = (1_000, 10_000)  # every kind also at these sizes: a small file's fixed costs


def files(folder, small=True, only=()):
    """(name, path, columns read) for Part 1, each written once into ``folder`` when first used.

    ``only``: the files whose name holds one of these words (every file if empty).
    """
    rng = np.random.default_rng(1)
    frames = {f"predictions 1e{k}": lambda k=k: predictions(10**k) for k in range(3, 8)}
    for kind, (large, make) in KINDS.items():
        for n in (*SMALL, large) if small else (large,):
            name = kind if n == large else f"{kind} 1e{len(str(n)) - 1}"
            frames[name] = lambda make=make, n=n: make(n, rng)
    wanted = lambda name: not only or any(word in name for word in only)  # noqa: E731
    out = []
    for name, make in frames.items():
        path = Path(folder) / f"{name.replace(' ', '_')}.csv"
        if wanted(name) and not path.exists():
            fmt = "%.6f" if name.startswith("6-decimal") else None
            make().to_csv(path, index=False, float_format=fmt)
        out.append((name, path, None))
    for n in (*SMALL, 1_000_000) if small else (1_000_000,):
        wide = Path(folder) / f"wide_1e{len(str(n)) - 1}x42.csv"
        name = "wide 42 cols" + ("" if n == 1_000_000 else f" 1e{len(str(n)) - 1}")
        if (wanted(name) or n == 1_000_000 and wanted("wide, 4 used")) and not wide.exists():
            write_wide(wide, n, 40)
        out.append((name, wide, None))
    out.append(("wide, 4 used", wide, ["item", "gold", "s0", "s1"]))
    return [entry for entry in out if wanted(entry[0])]


def ms(seconds) -> str:
    """Seconds as milliseconds, to three figures or so (2.35, 36.9, 3120)."""
    x = seconds * 1e3
    return f"{x:7.2f}" if x < 10 else f"{x:7.1f}" if x < 100 else f"{x:7.0f}"


WARM_BYTES = 16 << 20  # files read warm too (below this size: a read of milliseconds)


def warm_child(path, columns, calls):
    """Both readers in this one process: a first read each, then ``calls`` reads interleaved.

    Prints the median CPU of a warm read of each (``time.process_time``: every
    thread, in nanoseconds), the fair comparison where both run in one process.
    """
    import pyarrow.csv as pa_csv

    from vareval.data import read_table

    columns = columns.split(",") if columns else None
    options = pa_csv.ConvertOptions(include_columns=columns or [])
    readers = {"vareval": lambda: read_table(path, columns=columns),
               "pyarrow": lambda: pa_csv.read_csv(path, convert_options=options)}
    cpu = {name: [] for name in readers}
    for _ in range(int(calls) + 1):
        for name, read in readers.items():
            start = time.process_time()
            read()
            cpu[name].append(time.process_time() - start)
    print(json.dumps({name: float(np.median(v[1:])) for name, v in cpu.items()}))


def measure_warm(path, columns=None, calls=30):
    cmd = [sys.executable, __file__, "--warm", str(path), ",".join(columns or []), str(calls)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
    return json.loads(out.stdout)


def part1(folder, rounds, small=True, only=()):
    print(f"Part 1: reading tables; each read in a fresh process (its first read), lowest of "
          f"{rounds} rounds (CPU ms = user + system over all threads; wall ms; peak = the "
          "process's max RSS, MB). Warm: both readers in one process, interleaved, median CPU "
          f"ms of 30 reads after a first (files under {WARM_BYTES >> 20} MB)")
    head = (f"{'file':>18s} {'rows':>10s} | {'vareval CPU/wall/peak':>23s} | "
            f"{'pyarrow CPU/wall/peak':>23s} | {'pandas CPU/wall/peak':>23s} | "
            f"{'CPU ratio':>9s} {'peak ratio':>10s} | {'warm vareval/pyarrow':>20s} {'ratio':>6s}")
    print(head)
    for name, path, columns in files(folder, small, only):
        runs = {r: [] for r in READERS}
        for _ in range(rounds):
            for reader in READERS:
                runs[reader].append(measure(reader, path, columns))
        best = {r: {k: min(x[k] for x in v) for k in ("cpu", "wall", "peak_mb", "rows")}
                for r, v in runs.items()}
        cells = " | ".join(f"{ms(b['cpu'])} {ms(b['wall'])} {b['peak_mb']:7.0f}"
                           for b in best.values())
        v, a = best["vareval"], best["pyarrow"]
        warm = ""
        if path.stat().st_size < WARM_BYTES:
            w = measure_warm(path, columns)
            warm = (f" | {ms(w['vareval'])} {ms(w['pyarrow'])}      "
                    f"{w['vareval'] / w['pyarrow']:5.2f}x")
        print(f"{name:>18s} {v['rows']:10,d} | {cells} | "
              f"{v['cpu'] / a['cpu']:8.2f}x {v['peak_mb'] / a['peak_mb']:9.2f}x{warm}", flush=True)
    start = measure("pyarrow", path)["start_mb"]
    print(f"Targets: CPU within 2x of pyarrow, peak within 1.5x. Every child starts at "
          f"about {start:.0f} MB (pandas, pyarrow and vareval imported).")


def part2(folder, big):
    print("\nPart 2: vareval significance end to end in a fresh process")
    cases = [("predictions 1e6", Path(folder) / "predictions_1e6.csv",
              ["--gold", "gold", "--item", "item"])]
    if big:
        path = Path(folder) / "wide_12e6x42.csv"
        if not path.exists():
            write_wide(path, 12_000_000, 40)
        cases.append((f"wide {path.stat().st_size / 1e9:.2f} GB, 12e6 items, 40 systems", path,
                      ["--gold", "gold", "--item", "item", "--system", "s0,s1"]))
    for name, path, args in cases:
        r = run_command([sys.executable, "-m", "vareval", "significance", str(path), *args])
        print(f"{name}: {r['cpu']:.2f} s CPU, {r['wall']:.2f} s wall, peak {r['peak_mb']:.0f} MB "
              f"({' '.join(args)})", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--big", action="store_true",
                        help="also the 2 GB file through significance")
    parser.add_argument("--dir", default=None, help="keep the generated files here")
    parser.add_argument("--only", help="read only the files whose name holds one of these words")
    parser.add_argument("--no-small", action="store_true",
                        help="only predictions at 10^3-10^4 rows, not every kind")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--warm", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--command", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.warm:
        return warm_child(*args.warm)
    if args.command:
        return command_child(args.command)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or tmp
        Path(folder).mkdir(parents=True, exist_ok=True)
        only = args.only.split(",") if args.only else ()
        part1(folder, args.rounds, not args.no_small, only)
        if only:  # a subset of Part 1 only
            return
        part2(folder, args.big)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
