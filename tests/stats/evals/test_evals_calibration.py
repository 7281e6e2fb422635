"""Slow tier: the default interval of a mean and of a paired difference keep 95 %
coverage, and the default paired test rejects at most at its level under the
null, on simulated benchmarks with clusters (ICC 0, 0.1, 0.3) and 1 to 10
samples per question, n = 10 to 2,000 (``_calibration.py`` says how they are
made). The naive CLT interval is measured beside it and falls short.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "vareval_test_evals_calibration", Path(__file__).with_name("_calibration.py")
)
cal = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cal)

# A 0/1 interval at n = 10 cannot hit 95 % at every true score; averaged over
# scores Wilson and Newcombe sit within about 1.5 points of it (measured once;
# no bench script yet), so small n get this allowance below 95 %.
ALLOWANCE = {10: 0.02, 30: 0.01}


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 30, 100, 1000, 2000])
def test_default_intervals_cover_and_the_default_test_holds_its_level(n, rng, scaled):
    sims = scaled(1000 if n <= 100 else 300, minimum=150)
    cells = [(icc, k) for icc in (0.0, 0.1, 0.3) for k in (1, 3, 10)]
    if n == 2000:
        cells = [(0.0, 1), (0.3, 3)]
    mc = 3 * math.sqrt(0.95 * 0.05 / sims)
    level_mc = 3 * math.sqrt(0.05 * 0.95 / sims)
    for icc, k in cells:
        mean_cov, naive_cov, diff_cov, reject = cal.run(rng, n, k, icc, sims)
        print(f"n={n} icc={icc} k={k}: mean {mean_cov:.3f} (naive {naive_cov:.3f}), "
              f"difference {diff_cov:.3f}, null rejection {reject:.3f}")
        floor = 0.95 - mc - ALLOWANCE.get(n, 0.0)
        assert mean_cov >= floor, (icc, k, mean_cov)
        assert diff_cov >= floor, (icc, k, diff_cov)
        assert reject <= 0.05 + level_mc, (icc, k, reject)
        if n >= 100:  # not conservative beyond the discreteness of small n
            assert mean_cov <= 0.95 + mc + 0.02 and diff_cov <= 0.95 + mc + 0.02
        # the naive CLT over answers falls short where answers are not independent
        if k >= 3 or icc > 0:
            assert naive_cov < mean_cov
