"""Benchmark: aggregates across tasks, vareval vs rliable 1.2.0, side by side.

Run from the repository root:

    PYTHONPATH=src python bench/bench_aggregate.py [--rliable-python /work/venvs/rliable/bin/python]
                                                   [--repeat 3]

rliable does not import with pandas 3, so it runs in its own environment (see
tests/data/rliable/make_reference.py) through a subprocess, on the same
scores, right after vareval. Three jobs, as in rliable's README:

- interval estimates: 10 methods x 10 runs x 50 tasks, median, IQM, mean and
  optimality gap, 2,000 stratified-bootstrap resamples;
- the run-score performance profile of the same 10 methods at 101 taus, 2,000 resamples;
- probability of improvement for one pair, 1,000 resamples.

vareval's time is the best of ``--repeat`` runs before and ``--repeat`` runs
after rliable's (load on a shared machine comes in bursts); rliable runs once.
Wall-clock and CPU (process) times are printed with the ratios rliable /
vareval; timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vareval.stats import interval_estimates, performance_profile, probability_of_improvement

RLIABLE = r"""
import json, sys, time
import numpy as np
from rliable import library as rly, metrics

scores = np.load(sys.argv[1])  # [method, task, run]
score_dict = {str(i): s.T for i, s in enumerate(scores)}  # rliable: [run, task]
taus = np.linspace(0.0, 2.0, 101)
func = lambda x: np.array([metrics.aggregate_median(x), metrics.aggregate_iqm(x),
                           metrics.aggregate_mean(x), metrics.aggregate_optimality_gap(x)])
def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    fn()
    return [time.perf_counter() - t, time.process_time() - c]
np.random.seed(0)
out = {
    "intervals": timed(lambda: rly.get_interval_estimates(score_dict, func, reps=2000)),
    "profile": timed(lambda: rly.create_performance_profile(score_dict, taus, reps=2000)),
    "improvement": timed(lambda: rly.get_interval_estimates(
        {"0,1": (score_dict["0"], score_dict["1"])}, metrics.probability_of_improvement,
        reps=1000)),
}
print(json.dumps(out))
"""


def best_of(repeat: int, fn) -> np.ndarray:
    """Shortest wall-clock and CPU (process) time over ``repeat`` calls."""
    best = np.full(2, np.inf)
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        best = np.minimum(best, [time.perf_counter() - wall, time.process_time() - cpu])
    return best


def time_vareval(scores, repeat: int) -> dict:
    taus = np.linspace(0.0, 2.0, 101)
    return {
        "intervals": best_of(repeat, lambda: interval_estimates(scores, n_resamples=2000, rng=0)),
        "profile": best_of(
            repeat, lambda: performance_profile(scores, taus, n_resamples=2000, rng=0)
        ),
        "improvement": best_of(
            repeat,
            lambda: probability_of_improvement(scores[0], scores[1], n_resamples=1000, rng=0),
        ),
    }


def time_rliable(scores, python: str) -> dict:
    if not Path(python).exists():
        print(f"no rliable environment at {python}; vareval only", file=sys.stderr)
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npy"
        np.save(path, scores)
        done = subprocess.run(
            [python, "-c", RLIABLE, str(path)], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        print(f"rliable failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return {}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rliable-python", default="/work/venvs/rliable/bin/python")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    scores = np.random.default_rng(0).gamma(2.0, 0.4, size=(10, 50, 10))
    before = time_vareval(scores, args.repeat)
    theirs = time_rliable(scores, args.rliable_python)
    after = time_vareval(scores, args.repeat)
    ours = {key: np.minimum(before[key], after[key]) for key in before}

    labels = {
        "intervals": "interval estimates, 10 x 50 x 10, 4 aggregates, 2,000 resamples",
        "profile": "performance profile, 10 methods, 101 taus, 2,000 resamples",
        "improvement": "P(improvement), one pair, 50 tasks x 10 runs, 1,000 resamples",
    }
    print(f"{'':<70}{'wall-clock seconds':>30}{'CPU seconds':>30}")
    print(f"{'job':<70}" + f"{'vareval':>10}{'rliable':>10}{'ratio':>10}" * 2)
    for key, label in labels.items():
        cells = ""
        for i in (0, 1):  # wall clock, then CPU time
            r = theirs[key][i] if key in theirs else None
            ratio = f"{r / ours[key][i]:10.0f}" if r else f"{'-':>10}"
            cells += f"{ours[key][i]:10.4f}" + (f"{r:10.2f}" if r else f"{'-':>10}") + ratio
        print(f"{label:<70}{cells}", flush=True)
    print("CPU time counts the work done, not the wait for a busy core; it includes")
    print("numpy's BLAS threads, if any.")


if __name__ == "__main__":
    main()
