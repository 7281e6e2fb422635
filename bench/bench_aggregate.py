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

With ``--many``: the whole default ``vareval aggregate`` and ``vareval rank``
commands (and ``rank --rope``'s 4,950 Bayesian tests with ``--rope``) on a
generated table of 100 methods x 100 tasks x 10 runs (``make_many``; written
to a temporary directory, not committed), wall-clock and CPU seconds of each
command's process; the goal is < 30 s each.

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


def make_many(path, methods: int = 100, tasks: int = 100, runs: int = 10, seed: int = 0):
    """Write a long table (method, task, seed, score) of methods x tasks x runs to ``path``.

    Methods differ by a small linear skill, tasks by an offset, runs by noise.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    skill = 0.3 * np.linspace(0, 1, methods)[:, None, None]
    score = skill + rng.normal(0, 1, (1, tasks, 1)) + rng.normal(0, 0.5, (methods, tasks, runs))
    m, t, r = np.meshgrid(np.arange(methods), np.arange(tasks), np.arange(runs), indexing="ij")
    pd.DataFrame({
        "method": [f"m{i:03d}" for i in m.ravel()],
        "task": [f"t{i:03d}" for i in t.ravel()],
        "seed": r.ravel(),
        "score": score.ravel(),
    }).to_csv(path, index=False)  # fmt: skip


def time_command(args: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``python -m vareval ARGS`` in its own process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vareval", *args], capture_output=True,
                          text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"vareval {args[0]} failed: {done.stderr.strip()[-300:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def many(rope: bool):
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "many.csv")
        make_many(path)
        roles = ["--metric", "score", "--by", "method", "--task", "task", "--pair-on", "seed"]
        jobs = {
            "aggregate (default: best by IQM vs 99 others)": ["aggregate", path, *roles],
            "rank (Friedman, Nemenyi, 4,950 Wilcoxon-Holm)": ["rank", path, *roles],
        }
        if rope:
            jobs["rank --rope 0.01 (+ 4,950 Bayesian signed rank)"] = [
                "rank", path, *roles, "--rope", "0.01"
            ]
        print(f"100 methods x 100 tasks x 10 runs{'':<27}{'wall s':>10}{'CPU s':>10}")
        for label, args in jobs.items():
            wall, cpu = time_command(args)
            print(f"{label:<60}{wall:10.1f}{cpu:10.1f}", flush=True)
        print("Goal: each default command < 30 s.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rliable-python", default="/work/venvs/rliable/bin/python")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--many", action="store_true", help="100 x 100 x 10: the CLI commands")
    parser.add_argument("--rope", action="store_true", help="with --many: time rank --rope too")
    args = parser.parse_args()
    if args.many:
        return many(args.rope)

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
