"""Benchmark: ranking methods over data sets against autorank, and the Bayesian
signed-rank test against baycomp, in one process.

At 30 data sets x 8 methods and at 100 data sets x 100 methods:

- Friedman + Nemenyi critical difference (``friedman`` + ``critical_difference``),
  which is what ``autorank(force_mode="nonparametric")`` computes: the like-for-like row;
- the whole ``rank_methods`` (adds the Nemenyi p-value of every pair and the
  k(k-1)/2 Wilcoxon signed-rank tests with Holm, which autorank does not compute)
  against autorank, and its pairwise Wilcoxon + Holm against what a user would write
  instead: ``scipy.stats.wilcoxon`` per pair and statsmodels' Holm;
- ``bayesian_signed_rank`` (50,000 posterior draws, rope 0.01) against
  ``baycomp.SignedRankTest(...).probs()``: one pair at 10, 30, 100 and 300 data sets
  (CPU seconds, best of 3 interleaved rounds, with the wall-time ratio beside), and
  ``bayesian_signed_ranks`` on 20 pairs of the 100 x 100 table against baycomp
  called for the same 20 pairs (all 4,950 would take baycomp about 1.6 hours).

Run: PYTHONPATH=src python bench/bench_rankings.py
Timings are best of 7 (3 for the Bayesian tests) on a shared machine; BLAS limited to one thread.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import contextlib  # noqa: E402
import io  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from autorank import autorank  # noqa: E402
from baycomp import SignedRankTest  # noqa: E402
from scipy import stats  # noqa: E402
from statsmodels.stats.multitest import multipletests  # noqa: E402

from bench_significance import best  # noqa: E402
from vareval.stats import (  # noqa: E402
    bayesian_signed_rank,
    bayesian_signed_ranks,
    critical_difference,
    friedman,
    rank_methods,
)
from vareval.stats.tasks.ranking import pairwise_wilcoxon_pvalues  # noqa: E402


def row(label, anchor, ours):
    print(f"{label:52s} {ours:9.4f} {anchor:9.4f} {anchor / ours:7.1f}x", flush=True)


def interleaved(ours, anchor, rounds=3):
    """Best (CPU, wall) seconds of each, the two run in turn ``rounds`` times."""
    best_of = {ours: [np.inf, np.inf], anchor: [np.inf, np.inf]}
    for _ in range(rounds):
        for fn in (ours, anchor):
            cpu, wall = time.process_time(), time.perf_counter()
            fn()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            best_of[fn] = [min(best_of[fn][0], cpu), min(best_of[fn][1], wall)]
    return best_of[ours], best_of[anchor]


def scipy_wilcoxon_holm(x, iu):
    p = [stats.wilcoxon(x[:, i], x[:, j]).pvalue for i, j in zip(*iu, strict=True)]
    return multipletests(p, method="holm")[1]


def main():
    rng = np.random.default_rng(0)
    print(f"{'(seconds)':52s} {'vareval':>9s} {'anchor':>9s} {'ratio':>8s}")
    for n, k in ((30, 8), (100, 100)):
        x = rng.normal(size=(n, k)) + np.linspace(0, 1, k)
        frame = pd.DataFrame(x, columns=[f"m{i}" for i in range(k)])
        iu = np.triu_indices(k, 1)

        def anchor_rank(frame=frame):
            with contextlib.redirect_stdout(io.StringIO()):
                autorank(frame, force_mode="nonparametric", verbose=False)

        anchor = best(anchor_rank, 7)
        core = best(lambda x=x, k=k, n=n: (friedman(x), critical_difference(k, n)), 7)
        whole = best(lambda x=x: rank_methods(x), 7)
        row(f"Friedman + Nemenyi CD, {n} x {k} (autorank)", anchor, core)
        row(f"  rank_methods (+ Nemenyi p, {k * (k - 1) // 2} Wilcoxon, Holm)", anchor, whole)
        ours = best(lambda x=x, iu=iu: pairwise_wilcoxon_pvalues(x, iu), 7)
        theirs = best(lambda x=x, iu=iu: scipy_wilcoxon_holm(x, iu), 3)
        row(f"  {k * (k - 1) // 2} Wilcoxon + Holm (scipy loop, statsmodels)", theirs, ours)
        same = np.allclose(rank_methods(x).wilcoxon_pvalue_holm[iu], scipy_wilcoxon_holm(x, iu),
                           rtol=1e-12, atol=0)  # fmt: skip
        print(f"  Holm-adjusted Wilcoxon p-values equal scipy + statsmodels: {same}")
    for n in (10, 30, 100, 300):
        d1 = rng.normal(0.8, 0.05, n)
        d2 = d1 + rng.normal(0.01, 0.02, n)
        ours, anchor = interleaved(
            lambda d1=d1, d2=d2: bayesian_signed_rank(d1, d2, rope=0.01, rng=1),
            lambda d1=d1, d2=d2: SignedRankTest(d1, d2, rope=0.01, random_state=1).probs(),
        )
        row(f"Bayesian signed rank, {n} data sets, CPU (baycomp)", anchor[0], ours[0])
        print(f"  wall: vareval {ours[1]:.4f} s, baycomp {anchor[1]:.4f} s, "
              f"{anchor[1] / ours[1]:.1f}x")
        r = bayesian_signed_rank(d1, d2, rope=0.01, rng=1)
        ref = SignedRankTest(d1, d2, rope=0.01, random_state=1).probs()
        print(f"  p (left, rope, right): vareval ({r.p_left:.4f}, {r.p_rope:.4f}, "
              f"{r.p_right:.4f}), baycomp ({ref[0]:.4f}, {ref[1]:.4f}, {ref[2]:.4f})")
    x = 0.8 + 0.01 * rng.normal(size=(100, 100)) + np.linspace(0, 0.02, 100)
    pairs = [(0, j) for j in range(1, 21)]
    ours = best(lambda: bayesian_signed_ranks(x, pairs, rope=0.01, rng=1))
    anchor = best(
        lambda: [SignedRankTest(x[:, i], x[:, j], rope=0.01, random_state=1).probs()
                 for i, j in pairs]  # fmt: skip
    )
    row("Bayesian signed rank, 20 pairs of 100 x 100 (baycomp)", anchor, ours)
    print("Target: >= 20x autorank and >= 20x baycomp.")


if __name__ == "__main__":
    main()
