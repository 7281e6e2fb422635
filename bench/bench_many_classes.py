"""Benchmark: the paired bootstrap of macro-F1 with many classes against scipy.

n = 10,000 items, b = 10,000 resamples, 3, 20 and 100 classes: vareval's
``paired_bootstrap`` (percentile interval) and ``scipy.stats.bootstrap``
(paired, vectorised statistic, percentile interval) in the same process.
Prints both times, the ratio and both 95 % intervals (they differ only by
Monte Carlo error: different draws).

With many classes the item types are many (thousands at 100 classes), so
vareval resamples item indices and sums each resample's per-class counts
over the nonzero entries only (an item touches its gold class and each
system's prediction), instead of a dense (b x T) @ (T x 6C) product.

Run: PYTHONPATH=src python bench/bench_many_classes.py
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time  # noqa: E402

import bench_significance as bs  # noqa: E402
from vareval.stats import paired_bootstrap  # noqa: E402

N, B = 10_000, 10_000


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def vareval_bootstrap(g, a, b):
    return paired_bootstrap(
        g, a, b, metric="macro-f1", n_resamples=B, ci="percentile", rng=0
    )


def main():
    print(f"n = {N:,} items, b = {B:,} resamples, macro-F1, paired bootstrap")
    print(
        f"{'classes':>7s} {'types':>6s} {'path':>10s} {'vareval s':>10s} "
        f"{'scipy s':>8s} {'ratio':>6s}  {'vareval CI':>19s}  {'scipy CI':>19s}"
    )
    for c in (3, 20, 100):
        bs.C = c  # the anchor's statistic loops over bs.C classes
        g, a, b = bs.make(N)
        t_v, r = min((timed(vareval_bootstrap, g, a, b) for _ in range(3)),
                     key=lambda x: x[0])
        t_s, ci = timed(bs.scipy_bootstrap, g, a, b, "macro-f1", B)
        lo, hi = r.confidence_interval()
        print(
            f"{c:7d} {r.n_types:6d} {r.path:>10s} {t_v:10.3f} {t_s:8.2f} "
            f"{t_s / t_v:5.0f}x  [{lo:+.5f}, {hi:+.5f}]  "
            f"[{ci.low:+.5f}, {ci.high:+.5f}]"
        )
    print("Target: >= 50x at every size; 100 classes well under 1 s.")


if __name__ == "__main__":
    main()
