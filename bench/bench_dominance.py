"""Benchmark: vareval's ASO, ranking and Bayesian signed rank against deepsig, autorank, baycomp.

ASO: ``vareval.stats.aso`` with deepsig's grid (``dt=0.005``) and with the exact
integral, side by side with ``deepsig.aso`` (1.2.8, one job, no progress bar),
1,000 bootstrap resamples each, for 5 vs 5 and 200 vs 200 scores. deepsig
draws each bootstrap iteration in Python through joblib; vareval draws all
resamples at once and computes every violation ratio as one weighted sum.

Also: Friedman + Nemenyi (``rank_methods``) against ``autorank`` in its
non-parametric mode (30 data sets x 8 methods; autorank also runs its
normality tests and prints, so the ratio overstates the statistics alone),
and the Bayesian signed-rank test (50,000 posterior samples, 30 data sets,
rope 0.01) against ``baycomp.SignedRankTest``.

Run: PYTHONPATH=src python bench/bench_dominance.py
Timings are wall-clock (best of ``repeat``) on a shared machine: expect
noise; read the ratios, measured in the same run.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import contextlib  # noqa: E402
import io  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from vareval.stats import (  # noqa: E402
    aso,
    bayesian_signed_rank,
    critical_difference,
    friedman,
    rank_methods,
)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def row(name, anchor, ours, note=""):
    ratio = anchor / ours
    shown = f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2f}x"
    print(f"{name:<38}{anchor:>10.3f} s{ours:>12.4f} s{shown:>11}  {note}")


def main():
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    print(f"{'':<38}{'anchor':>12}{'vareval':>14}{'ratio':>11}")
    try:
        import deepsig
    except ImportError:
        deepsig = None
        print("deepsig not installed: pip install deepsig==1.2.8")
    for n in (5, 200):
        a, b = rng.normal(0.3, 1, n), rng.normal(0, 1, n)
        ours = best(lambda a=a, b=b: aso(a, b, dt=0.005, rng=1), 5)
        exact = best(lambda a=a, b=b: aso(a, b, rng=1), 5)
        if deepsig is not None:
            anchor = best(
                lambda a=a, b=b: deepsig.aso(a, b, seed=1, show_progress=False, num_jobs=1), 1
            )
            row(f"ASO {n} vs {n}, deepsig grid", anchor, ours)
            row(f"ASO {n} vs {n}, exact integral", anchor, exact)
        else:
            print(f"ASO {n} vs {n}: vareval {ours:.4f} s (grid), {exact:.4f} s (exact)")

    x = rng.normal(size=(30, 8)) + np.linspace(0, 1, 8)
    ours = best(lambda: (friedman(x), critical_difference(8, 30)), 3)
    whole = best(lambda: rank_methods(x), 3)
    try:
        import pandas as pd
        from autorank import autorank

        frame = pd.DataFrame(x, columns=[f"m{i}" for i in range(8)])

        def anchor_rank():
            with contextlib.redirect_stdout(io.StringIO()):
                autorank(frame, force_mode="nonparametric", verbose=False)

        anchor = best(anchor_rank, 3)
        row("Friedman + Nemenyi CD, 30 x 8", anchor, ours)
        row("  rank_methods (+ 28 Wilcoxon, Holm)", anchor, whole)
    except ImportError:
        print(f"Friedman + Nemenyi, 30 x 8: vareval {ours:.4f} s (autorank not installed)")

    d1 = rng.normal(0.8, 0.05, 30)
    d2 = d1 + rng.normal(0.01, 0.02, 30)
    ours = best(lambda: bayesian_signed_rank(d1, d2, rope=0.01, rng=1), 3)
    try:
        from baycomp import SignedRankTest

        anchor = best(lambda: SignedRankTest(d1, d2, rope=0.01, random_state=1).probs(), 3)
        row("Bayesian signed rank, 30 data sets", anchor, ours)
    except ImportError:
        print(f"Bayesian signed rank: vareval {ours:.4f} s (baycomp not installed)")


if __name__ == "__main__":
    main()
