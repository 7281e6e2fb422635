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
   (reading the new pairs, the sequence, writing its record). ``--skip-old`` skips 1-2.

Run: PYTHONPATH=src python bench/bench_sequential.py [--old-every 1000] [--skip-old]
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
N, EVERY, BOUNDS = 10_000, 100, (-1, 1)


def old_module():
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:src/vareval/stats/budget/sequential.py"],
        cwd=Path(__file__).parent, capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_sequential.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_sequential", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_sequential"] = module  # dataclasses look their module up
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
    args = parser.parse_args()
    if not args.skip_old:
        old_versus_new(args)
    store_run()


def store_run():
    from vareval.experiment import ExperimentSpec
    from vareval.experiment import sequential as seq

    spent = {"run": 0.0}
    real_run = seq.run

    def timed_run(*a, **k):
        t = time.perf_counter()
        try:
            return real_run(*a, **k)
        finally:
            spent["run"] += time.perf_counter() - t

    seq.run = timed_run
    spec = ExperimentSpec(trial="vareval.experiment._demo:trivial_trial",
                          factors={"model": ["a", "b"]}, seeds=EVERY, entropy=1)
    with tempfile.TemporaryDirectory() as tmp:
        t_check = timed(seq.trial_provenance, spec)[0]
        t, out = timed(seq.run_until_settled, spec, Path(tmp) / "s.db", compare=("a", "b"),
                       metric="x", bounds=(0, 1), budget=N, batch=EVERY, engine="serial",
                       progress=False)
    seq.run = real_run
    looks = t - spent["run"] - t_check
    print(f"3. run_until_settled to {out.pairs:,} pairs ({out.trials_run:,} trials, a look every "
          f"{EVERY}): {t:.2f} s in all; the runner {spent['run']:.2f} s, the looks {looks:.2f} s "
          f"(target < 5 s), the trial's import check {t_check:.2f} s")


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
