"""Level of the paired bootstrap and approximate randomization on small test sets.

Two exchangeable systems (each right with probability ``p`` on every item of a
``C``-class test set, wrong classes uniform) are compared on many simulated test
sets; a test holds its level if it rejects the (true) null at most ``alpha``
of the time, up to Monte Carlo error. The table this prints is the one in
docs/significance.md, and it fixes ``BOOTSTRAP_MIN_ITEMS`` in
``vareval.stats.testset.significance``.

    PYTHONPATH=src python bench/calibrate_small_n.py [--sets 2000]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from vareval.stats import paired_bootstrap, paired_randomization


def _pair(rng, n, p, c=3):
    g = rng.integers(0, c, n)
    a = np.where(rng.random(n) < p, g, (g + rng.integers(1, c, n)) % c)
    b = np.where(rng.random(n) < p, g, (g + rng.integers(1, c, n)) % c)
    return g, a, b


def rates(n, p, metric, sets, resamples, alpha, seed, classes=3):
    """Rejection rates of both tests and the bootstrap CI's miss rate of 0."""
    rng = np.random.default_rng(seed)
    rej_b = rej_r = miss = 0
    for _ in range(sets):
        g, a, b = _pair(rng, n, p, classes)
        kw = dict(metric=metric, n_resamples=resamples, ci="percentile", rng=rng)
        boot = paired_bootstrap(g, a, b, **kw)
        # method="compressed": sampled swaps, as for a large test set
        rand = paired_randomization(g, a, b, ci_resamples=1, method="compressed", **kw)
        rej_b += boot.pvalue <= alpha
        rej_r += rand.pvalue <= alpha
        lo, hi = boot.confidence_interval()
        miss += not lo <= 0 <= hi
    return rej_b / sets, rej_r / sets, miss / sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--ns", default="20,30,50,75,100,150,200,300")
    ap.add_argument("--p", default="0.7,0.9")
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--metrics", default="accuracy,macro-f1")
    ap.add_argument("--seed", type=int, default=0, help="Seed of the first row.")
    args = ap.parse_args()
    alpha = 0.05
    hi = stats.binom.ppf(0.975, args.sets, alpha) / args.sets
    print(
        f"{args.sets} null test sets per row, {args.resamples} resamples, "
        f"{args.classes} classes, alpha {alpha}, two-sided; "
        f"Monte Carlo 97.5% point of the level: {hi:.4f}"
    )
    print("metric     p(correct)    n  bootstrap  randomization  bootstrap CI misses 0")
    seed = args.seed
    for metric in args.metrics.split(","):
        for p in map(float, args.p.split(",")):
            for n in map(int, args.ns.split(",")):
                seed += 1
                rb, rr, m = rates(
                    n, p, metric, args.sets, args.resamples, alpha, seed, args.classes
                )
                print(
                    f"{metric:10} {p:10.2f} {n:4d} {rb:10.4f} {rr:14.4f} {m:22.4f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
