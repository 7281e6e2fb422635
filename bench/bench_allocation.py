"""Allocation's parametric bootstrap on a 9,000-row pilot: ``vareval.allocation``.

Run from the repository root:

    PYTHONPATH=src python bench/bench_allocation.py

The pilot: 6 experiments sharing 100 seeds, 5 configurations per seed, 3
reruns (9,000 rows); the allocation compares two experiments, so its mixed
model has seed, configuration, seed:experiment and configuration:experiment
intercepts, all nested in the seeds. The bootstrap refits that model to every
draw at once. Its anchor is the same refit on the dense Schur complement over
all the smaller factors' levels (the path taken before the refits used the
independent blocks, and still taken by designs without them), timed on a few
draws and scaled to the same number; the goal is the default 200 draws in
< 10 s end to end.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402
import warnings  # noqa: E402

import vareval  # noqa: E402
from vareval.experiment.design import reseeding_design  # noqa: E402
from vareval.experiment.simulate import simulate_responses  # noqa: E402
from vareval.stats.variance import bootstrap as boot  # noqa: E402


def pilot(seeds=100, configs=5, reruns=3, rng=0):
    d = reseeding_design(
        {"model": ["a", "b", "c"], "optimizer": ["sgd", "adam"]},
        seeds=seeds, configs=configs, reruns=reruns,
    )  # fmt: skip
    means = {e: 0.8 + 0.01 * i for i, e in enumerate(sorted(d.experiment.unique()))}
    return simulate_responses(
        d, means=means, sd_seed=0.01, sd_config=0.02, sd_residual=0.01, rng=rng
    )


def main():
    warnings.simplefilter("ignore")
    d = pilot()
    a, b = sorted(d.experiment.unique())[:2]
    kw = dict(metric="y", compare=(a, b), budget=2000)
    print(f"pilot: {len(d):,} rows, comparing {a} and {b}\n")
    t = time.perf_counter()
    vareval.allocation(d, n_resamples=0, **kw)
    t0 = time.perf_counter() - t
    print(f"allocation, no bootstrap          {t0:7.2f} s")
    t = time.perf_counter()
    vareval.allocation(d, n_resamples=200, **kw)
    t200 = time.perf_counter() - t
    verdict = "met" if t200 < 10 else "NOT met"
    print(f"allocation, 200 draws (default)   {t200:7.2f} s  goal < 10 s: {verdict}")
    # the anchor: the dense refit on a few draws, scaled to 200
    dense_draws = 19
    boot._USE_BLOCKS = False
    try:
        t = time.perf_counter()
        vareval.allocation(d, n_resamples=dense_draws, **kw)
        td = time.perf_counter() - t
    finally:
        boot._USE_BLOCKS = True
    per = (td - t0) / dense_draws
    print(
        f"dense refit, {dense_draws} draws            {td:7.2f} s  "
        f"({per:.2f} s a draw; 200 draws ~ {t0 + 200 * per:,.0f} s)"
    )
    ratio = (t0 + 200 * per) / t200
    print(f"ratio dense/blocks at 200 draws   {ratio:7.1f}x")


if __name__ == "__main__":
    main()
