"""Allocation's parametric bootstrap on a 9,000-row pilot: ``vareval.allocation``.

Run from the repository root:

    PYTHONPATH=src python bench/bench_allocation.py

The pilot: 6 experiments sharing 100 seeds, 5 configurations per seed, 3
reruns (9,000 rows); the allocation compares two experiments, so its mixed
model has seed, configuration, seed:experiment and configuration:experiment
intercepts, all nested in the seeds. The bootstrap refits that model
to every draw at once. The pilot is balanced and orthogonal, so each refit's
deviance comes from the strata's sums of squares (O(strata) per evaluation);
the anchor is the previous path, the same batched refit on the Schur
complement's independent blocks (``_USE_STRATA = False``), on the same draws.
The goal is the default 200 draws in < 10 s end to end.
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
    # the anchor: the Schur-complement refit of the same 200 draws
    boot._USE_STRATA = False
    try:
        t = time.perf_counter()
        old = vareval.allocation(d, n_resamples=200, **kw)
        told = time.perf_counter() - t
    finally:
        boot._USE_STRATA = True
    print(f"Schur-complement refit, 200 draws {told:7.2f} s  ratio {told / t200:5.1f}x")
    new = vareval.allocation(d, n_resamples=200, **kw)
    for name in new.upper:
        print(f"  upper 95% limit of {name:18s} strata {new.upper[name]:.6g}  "
              f"Schur {old.upper[name]:.6g}")
    rel = abs(new.draws / old.draws - 1).max()
    print(f"  largest relative difference of the 200 draws' SE: {rel:.1e}")

if __name__ == "__main__":
    main()
