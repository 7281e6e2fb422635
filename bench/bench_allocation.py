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

The same pilot with 2 % of its rows missing (at random) is no longer
orthogonal; its refits take the strata of the completed design with an exact
correction for the missing rows (``_MissingRowsBatch``), side by side with the
balanced pilot and with the Schur path on the same draws. Times are CPU
seconds beside wall seconds.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

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


def timed(fn):
    """(result, CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def compare(label, d, kw):
    """The allocation with and without its bootstrap, and the Schur refit of the same draws."""
    print(f"{label}: {len(d):,} rows")
    _, c0, w0 = timed(lambda: vareval.allocation(d, n_resamples=0, **kw))
    print(f"  allocation, no bootstrap          CPU {c0:6.2f} s  wall {w0:6.2f} s")
    new, c200, w200 = timed(lambda: vareval.allocation(d, n_resamples=200, **kw))
    verdict = "met" if w200 < 10 else "NOT met"
    print(f"  allocation, 200 draws (default)   CPU {c200:6.2f} s  wall {w200:6.2f} s"
          f"  goal < 10 s: {verdict}")
    boot._USE_STRATA = False  # the anchor: the Schur-complement refit of the same 200 draws
    try:
        old, cold, wold = timed(lambda: vareval.allocation(d, n_resamples=200, **kw))
    finally:
        boot._USE_STRATA = True
    print(f"  Schur-complement refit, 200 draws CPU {cold:6.2f} s  wall {wold:6.2f} s"
          f"  ratio {cold / c200:5.1f}x CPU")
    for name in new.upper:
        print(f"    upper 95% limit of {name:18s} new {new.upper[name]:.6g}  "
              f"Schur {old.upper[name]:.6g}")
    rel = abs(new.draws / old.draws - 1).max()
    print(f"    largest relative difference of the 200 draws' SE: {rel:.1e}")
    return c200


def main():
    warnings.simplefilter("ignore")
    d = pilot()
    a, b = sorted(d.experiment.unique())[:2]
    kw = dict(metric="y", compare=(a, b), budget=2000)
    print(f"comparing {a} and {b}\n")
    balanced = compare("balanced pilot", d, kw)
    drop = np.random.default_rng(1).choice(len(d), round(0.02 * len(d)), replace=False)
    missing = compare("the pilot, 2 % of rows missing", d.drop(index=d.index[drop]), kw)
    print(f"\n2 %-missing pilot / balanced pilot, 200 draws: {missing / balanced:.2f}x CPU")


if __name__ == "__main__":
    main()
