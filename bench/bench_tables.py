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
reads it, four columns.

Part 2: ``vareval significance`` end to end in a fresh process (start-up,
read, paired bootstrap, output) on the 10^6-row predictions file, and with
``--big``, on a 2 GB wide predictions file (12 x 10^6 items, 40 systems,
``--system s0,s1``): CPU, wall and peak memory.

Run: PYTHONPATH=src python bench/bench_tables.py [--rounds 2] [--big] [--dir DIR]
(DIR keeps the generated files between runs.)
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


def files(folder):
    """(name, rows, path, columns read) for Part 1, written once into ``folder``."""
    rng = np.random.default_rng(1)
    frames = {  # predictions at every size: the scaling of the read
        **{f"predictions 1e{k}": lambda k=k: predictions(10**k) for k in range(3, 8)},
        "6-decimal": lambda: pd.DataFrame({
            "model": rng.choice(["mlp", "svc"], 1_000_000),
            "seed": rng.integers(0, 100, 1_000_000),
            **{f"m{i}": rng.random(1_000_000) for i in range(4)}}),
        "50 floats": lambda: pd.DataFrame(rng.random((100_000, 50)),
                                          columns=[f"m{i}" for i in range(50)]),
        "labels": lambda: pd.DataFrame({
            "item": np.char.add("q", np.arange(500_000).astype(str)),
            "gold": rng.choice(["cat", "dog", "1.10", "01", "NA"], 500_000),
            "model_a": rng.choice(["cat", "dog", "1.1", "1"], 500_000)}),
        "runs": lambda: pd.DataFrame({
            "model": rng.choice(["mlp", "logreg"], 200_000),
            "seed": rng.integers(0, 1000, 200_000),
            "config": np.char.add("c", rng.integers(0, 50, 200_000).astype(str)),
            "accuracy": rng.random(200_000).round(4)}),
    }
    out = []
    for name, make in frames.items():
        path = Path(folder) / f"{name.replace(' ', '_')}.csv"
        if not path.exists():
            frame = make()
            fmt = "%.6f" if name == "6-decimal" else None
            frame.to_csv(path, index=False, float_format=fmt)
        out.append((name, path, None))
    wide = Path(folder) / "wide_1e6x42.csv"
    if not wide.exists():
        write_wide(wide, 1_000_000, 40)
    out += [("wide 42 cols", wide, None), ("wide, 4 used", wide, ["item", "gold", "s0", "s1"])]
    return out


def part1(folder, rounds):
    print(f"Part 1: reading tables; each read in a fresh process, lowest of {rounds} rounds "
          "(CPU s = user + system over all threads; peak = the process's max RSS, MB)")
    head = (f"{'file':>16s} {'rows':>11s} | {'vareval CPU/wall/peak':>22s} | "
            f"{'pyarrow CPU/wall/peak':>22s} | {'pandas CPU/wall/peak':>22s} | "
            f"{'CPU ratio':>9s} {'peak ratio':>10s}")
    print(head)
    for name, path, columns in files(folder):
        runs = {r: [] for r in READERS}
        for _ in range(rounds):
            for reader in READERS:
                runs[reader].append(measure(reader, path, columns))
        best = {r: {k: min(x[k] for x in v) for k in ("cpu", "wall", "peak_mb", "rows")}
                for r, v in runs.items()}
        cells = " | ".join(f"{b['cpu']:6.2f} {b['wall']:6.2f} {b['peak_mb']:7.0f}"
                           for b in best.values())
        v, a = best["vareval"], best["pyarrow"]
        print(f"{name:>16s} {v['rows']:11,d} | {cells} | "
              f"{v['cpu'] / a['cpu']:8.2f}x {v['peak_mb'] / a['peak_mb']:9.2f}x", flush=True)
    start = measure("pyarrow", Path(folder) / "runs.csv")["start_mb"]
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
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--command", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.command:
        return command_child(args.command)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or tmp
        Path(folder).mkdir(parents=True, exist_ok=True)
        part1(folder, args.rounds)
        part2(folder, args.big)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
