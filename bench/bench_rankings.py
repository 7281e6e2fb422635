"""Benchmark: ranking methods over data sets against autorank, and the Bayesian
signed-rank test against baycomp, in one process.

- Friedman + Nemenyi critical difference (``friedman`` + ``critical_difference``,
  what autorank's non-parametric path computes) and the whole ``rank_methods``
  (which adds the Nemenyi p-values and all pairwise Wilcoxon tests with Holm)
  against ``autorank(force_mode="nonparametric")``, at 30 data sets x 8
  methods and at 100 data sets x 100 methods.
- ``bayesian_signed_rank`` (50,000 posterior draws, rope 0.01) against
  ``baycomp.SignedRankTest(...).probs()`` at 30 and 100 data sets.

Run: PYTHONPATH=src python bench/bench_rankings.py
Timings are best of 7 (3 for the Bayesian test) on a shared machine; BLAS limited to one thread.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import contextlib  # noqa: E402
import io  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from autorank import autorank  # noqa: E402
from baycomp import SignedRankTest  # noqa: E402

from bench_significance import best  # noqa: E402
from vareval.stats import (  # noqa: E402
    bayesian_signed_rank,
    critical_difference,
    friedman,
    rank_methods,
)


def row(label, anchor, ours):
    print(f"{label:44s} {ours:9.4f} {anchor:9.4f} {anchor / ours:7.1f}x")


def main():
    rng = np.random.default_rng(0)
    print(f"{'(seconds)':44s} {'vareval':>9s} {'anchor':>9s} {'ratio':>8s}")
    for n, k in ((30, 8), (100, 100)):
        x = rng.normal(size=(n, k)) + np.linspace(0, 1, k)
        frame = pd.DataFrame(x, columns=[f"m{i}" for i in range(k)])

        def anchor_rank(frame=frame):
            with contextlib.redirect_stdout(io.StringIO()):
                autorank(frame, force_mode="nonparametric", verbose=False)

        anchor = best(anchor_rank, 7)
        core = best(lambda x=x, k=k, n=n: (friedman(x), critical_difference(k, n)), 7)
        whole = best(lambda x=x: rank_methods(x), 7)
        row(f"Friedman + Nemenyi CD, {n} x {k} (autorank)", anchor, core)
        row(f"  rank_methods (+ {k * (k - 1) // 2} Wilcoxon, Holm)", anchor, whole)
    for n in (30, 100):
        d1 = rng.normal(0.8, 0.05, n)
        d2 = d1 + rng.normal(0.01, 0.02, n)
        ours = best(lambda d1=d1, d2=d2: bayesian_signed_rank(d1, d2, rope=0.01, rng=1))
        anchor = best(
            lambda d1=d1, d2=d2: SignedRankTest(d1, d2, rope=0.01, random_state=1).probs()
        )
        row(f"Bayesian signed rank, {n} data sets (baycomp)", anchor, ours)
        r = bayesian_signed_rank(d1, d2, rope=0.01, rng=1)
        ref = SignedRankTest(d1, d2, rope=0.01, random_state=1).probs()
        print(f"  p (left, rope, right): vareval ({r.p_left:.4f}, {r.p_rope:.4f}, "
              f"{r.p_right:.4f}), baycomp ({ref[0]:.4f}, {ref[1]:.4f}, {ref[2]:.4f})")
    print("Target: >= 20x autorank and >= 20x baycomp.")


if __name__ == "__main__":
    main()
