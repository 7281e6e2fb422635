"""Benchmark: the betting confidence sequence, one look and a whole sequential run, old vs new.

The old path is the implementation before the running state (commit ``ea99fa5``, read with
``git show`` into a temporary module): every look recomputed the whole sequence, with a
bisection costing O(n^2). The new path carries a ``SequenceState`` from look to look.

1. One look at n = 10,000 paired differences (accuracy differences in [-1, 1]).
2. A simulated 10,000-pair sequential run looking every 100 pairs, as ``run --until-settled``
   does (sequence and stopping rule at each look, the rule never settling: a worst case).
   The old run's 100 looks would take about 10 minutes; it measures the looks at
   1,000, 2,000, ..., 10,000 pairs and counts each for the ten looks up to it (an upper
   estimate; ``--old-every 100`` measures all 100). The old runner also computed the
   sequence twice at each new look; that factor is not counted.

Both paths' bounds are compared (largest absolute difference).

3. The same 10,000-pair run through the store: ``run_until_settled`` with a trivial
   trial (20,000 trials, serial engine, batches of 100, never settling), split into the
   runner's own time (growing the store, claiming, writing trials) and the looks'
   (reading the new pairs, the sequence, writing its record; CPU and wall), at 10,000
   and 20,000 pairs, for the run as it is and
   as it was at commit ``f62ef4f`` (``OLD_STORE_COMMIT``: every look rewrote the whole
   sequence as JSON), side by side. ``--skip-old`` skips 1-2.
4. One look at 10^3, 10^4, 2x10^4 and 10^5 pairs, the next 100 pairs arriving: the
   sequence state extended, the sequence and rule, and the look recorded in the store
   (CPU and wall, the median of 7 looks; "record" is the CPU of writing the look), as it
   is (new rows appended) and at
   ``OLD_STORE_COMMIT`` (the whole sequence as JSON). Reading the new pairs is the same
   code in both (from the first unfinished seed on) and is left out.

5. One pass over 10^4, 10^5 and 5x10^5 pairs (the scaling table's 10^6-row file), the
   betting sequence refined as by default, as it is (a window of candidates around each
   bound) and at commit ``3c58163`` (``GRID_COMMIT``: log K carried at all 1,001
   candidates), alternating old and new, CPU seconds; the largest bound difference.

Run: PYTHONPATH=src python bench/bench_sequential.py [--old-every 1000] [--skip-old]
     [--only 3|4|5]
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from vareval.stats.budget.sequential import SequenceState, confidence_sequence  # noqa: E402

OLD_COMMIT = "ea99fa5"
OLD_STORE_COMMIT = "f62ef4f"  # the last look that rewrote the whole sequence as JSON
GRID_COMMIT = "3c58163"  # the last betting state that carried every candidate of the grid
LOOK_SIZES = (1_000, 10_000, 20_000, 100_000)
N, EVERY, BOUNDS = 10_000, 100, (-1, 1)


def old_module(commit=OLD_COMMIT, path="src/vareval/stats/budget/sequential.py",
               name="old_sequential"):
    source = subprocess.run(
        ["git", "show", f"{commit}:{path}"],
        cwd=Path(__file__).parent, capture_output=True, text=True, check=True).stdout
    file = Path(tempfile.mkdtemp()) / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--old-every", type=int, default=1000)
    parser.add_argument("--skip-old", action="store_true")
    parser.add_argument("--only", choices=("3", "4", "5"))
    args = parser.parse_args()
    if not args.skip_old and args.only is None:
        old_versus_new(args)
    from vareval.experiment import sequential as seq

    old = old_module(OLD_STORE_COMMIT, "src/vareval/experiment/sequential.py", "old_run")
    if args.only in (None, "3"):
        for pairs in (N, 2 * N):
            t_old = store_run(old, "old (JSON)", pairs)
            t_new = store_run(seq, "new (rows)", pairs)
            print(f"   the looks at {pairs:,} pairs: ratio {t_old / t_new:.1f}x CPU")
    if args.only in (None, "4"):
        look_costs(old, seq)
    if args.only in (None, "5"):
        one_pass_sizes()


def one_pass_sizes(sizes=(10_000, 100_000, 500_000), repeats=2):
    """Part 5: one refined pass at each size, the whole grid carried (old) vs a window (new)."""
    from vareval.stats.budget import sequential as new

    old = old_module(GRID_COMMIT, name="grid_sequential")
    g = np.random.default_rng(5)
    print("5. one pass of the betting sequence (refined), CPU s, old (every candidate) vs "
          "new (a window), alternating, the best of", repeats)
    for n in sizes:
        base = g.normal(0.85, 0.02, n)  # as the scaling table's runs: two methods by seed
        x = (np.clip(base + 0.002 + g.normal(0, 0.01, n), 0, 1)
             - np.clip(base + g.normal(0, 0.01, n), 0, 1))
        cpu, bounds = {"old": [], "new": []}, {}
        for _ in range(repeats):
            for label, module in (("old", old), ("new", new)):
                c = time.process_time()
                out = module.betting_cs(x, BOUNDS)
                cpu[label].append(time.process_time() - c)
                bounds[label] = out
        diff = max(np.abs(bounds["old"][i] - bounds["new"][i]).max() for i in (0, 1))
        o, w = min(cpu["old"]), min(cpu["new"])
        print(f"   {n:>7,} pairs: old {o:7.2f} s, new {w:6.2f} s, ratio {o / w:5.1f}x; "
              f"largest bound difference {diff:.1e}")
        sys.stdout.flush()


def _old_write(module, st, state, cs, looks, start):
    module._write(st, "x", "a", "b", {"bounds": [0, 1]}, cs, None, looks, [])


def _new_write(module, st, state, cs, looks, start):
    module._write(st, "x", "a", "b", {"bounds": [0, 1]}, cs, None, looks, [], start)


def look_costs(old, new, batch=100, repeats=7):
    """Part 4: the cost of one look at each size, old and new (the median of ``repeats``)."""
    from vareval.experiment import Store

    g = np.random.default_rng(1)
    print(f"4. one look ({batch} new pairs: sequence state, rule, record), median of {repeats}:")
    for n in LOOK_SIZES:
        x = (g.binomial(1, 0.62, n + batch * repeats)
             - g.binomial(1, 0.60, n + batch * repeats)).astype(float)
        row = []
        for module, write in ((old, _old_write), (new, _new_write)):
            with tempfile.TemporaryDirectory() as tmp, \
                    Store(Path(tmp) / "s.db", create=True) as st:
                state = SequenceState(bounds=BOUNDS).extend(x[:n])
                looks = list(range(batch, n + 1, batch))
                write(module, st, state, state.sequence(looks=looks), looks, 0)
                cpu, wall, record = [], [], []
                for i in range(repeats):
                    start = n + i * batch
                    c, w = time.process_time(), time.perf_counter()
                    state.extend(x[start:start + batch])
                    looks.append(start + batch)
                    cs = state.sequence(looks=looks)
                    r = time.process_time()
                    write(module, st, state, cs, looks, start)
                    record.append(time.process_time() - r)
                    cpu.append(time.process_time() - c)
                    wall.append(time.perf_counter() - w)
                row.append([np.median(v) * 1e3 for v in (cpu, wall, record)])
        (oc, ow, orec), (nc, nw, nrec) = row
        print(f"   {n:>7,} pairs: old {oc:6.1f} ms CPU {ow:6.1f} ms wall (record {orec:6.1f}); "
              f"new {nc:5.1f} ms CPU {nw:5.1f} ms wall (record {nrec:4.1f}); "
              f"ratio {oc / nc:5.1f}x CPU {ow / nw:5.1f}x wall")
    sys.stdout.flush()


def store_run(seq, label, pairs=N):
    """Part 3: the run through the store, its time split into the runner's and the looks'."""
    from vareval.experiment import ExperimentSpec

    spent = {"run": 0.0, "run_cpu": 0.0}
    real_run = seq.run

    def timed_run(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return real_run(*a, **k)
        finally:
            spent["run"] += time.perf_counter() - t
            spent["run_cpu"] += time.process_time() - c

    seq.run = timed_run
    spec = ExperimentSpec(trial="vareval.experiment._demo:trivial_trial",
                          factors={"model": ["a", "b"]}, seeds=EVERY, entropy=1)
    with tempfile.TemporaryDirectory() as tmp:
        seq.trial_provenance(spec)  # its imports, once
        c = time.process_time()
        t, out = timed(seq.run_until_settled, spec, Path(tmp) / "s.db", compare=("a", "b"),
                       metric="x", bounds=(0, 1), budget=pairs, batch=EVERY, engine="serial",
                       progress=False)
        cpu = time.process_time() - c
    seq.run = real_run
    looks, looks_cpu = t - spent["run"], cpu - spent["run_cpu"]
    print(f"3. {label}: run_until_settled to {out.pairs:,} pairs ({out.trials_run:,} trials, a "
          f"look every {EVERY}): {t:.2f} s wall, {cpu:.2f} s CPU in all; the runner "
          f"{spent['run']:.2f} s wall, {spent['run_cpu']:.2f} s CPU; the looks {looks:.2f} s "
          f"wall, {looks_cpu:.2f} s CPU ({looks_cpu / len(out.sequence.looks) * 1e3:.1f} ms CPU "
          "a look)")
    sys.stdout.flush()
    return looks_cpu


def old_versus_new(args):
    old = old_module()
    g = np.random.default_rng(0)
    x = (g.binomial(1, 0.62, N) - g.binomial(1, 0.60, N)).astype(float)

    t_old, cs_old = timed(old.confidence_sequence, x, bounds=BOUNDS)
    t_new, cs_new = timed(confidence_sequence, x, bounds=BOUNDS)
    gap = max(np.abs(cs_old.low - cs_new.low).max(), np.abs(cs_old.high - cs_new.high).max())
    print(f"1. one look at n = {N:,}: old {t_old:.2f} s, new {t_new:.2f} s, "
          f"ratio {t_old / t_new:.1f}x; largest bound difference {gap:.1e}")

    looks = list(range(EVERY, N + 1, EVERY))
    t = time.perf_counter()
    state = SequenceState(bounds=BOUNDS)
    for i, n in enumerate(looks):
        state.extend(x[(looks[i - 1] if i else 0):n])
        cs = state.sequence(looks=looks[: i + 1])
    t_run = time.perf_counter() - t
    gap = max(np.abs(cs.low - cs_new.low).max(), np.abs(cs.high - cs_new.high).max())
    measured = looks[args.old_every // EVERY - 1 :: args.old_every // EVERY]
    t_old_run = 0.0
    for n in measured:
        t_old_run += timed(old.confidence_sequence, x[:n], bounds=BOUNDS,
                           looks=[m for m in looks if m <= n])[0]
    stand_for = args.old_every // EVERY
    t_old_run *= stand_for
    how = (f"{len(measured)} measured, each counted {stand_for}x" if stand_for > 1
           else "all measured")
    print(f"2. sequential run to {N:,} pairs, a look every {EVERY}: new {t_run:.2f} s in all "
          f"({len(looks)} looks; last sequence vs one pass: {gap:.1e}); old about "
          f"{t_old_run:.0f} s ({how}); ratio {t_old_run / t_run:.0f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
