"""Where a command's quantile or p-value comes from scipy.special instead of scipy.stats
(whose import costs more than the analysis), it is scipy.stats' value to the last bit."""

import numpy as np
import pytest
from scipy import special, stats

from vareval.stats import paired_difference
from vareval.stats.repeated.summary import median_interval
from vareval.stats.tasks import ranking


def _same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # NaN equals NaN here


def test_t_and_normal_functions_equal_scipy_stats():
    rng = np.random.default_rng(0)
    df = np.concatenate([rng.integers(1, 300, 2000), [0, -1, 0.5, 1e6, np.inf, np.nan]])
    x = np.abs(rng.normal(0, 5, df.size))
    q = rng.uniform(0.5, 1, df.size)
    _same(special.stdtr(df, -x), stats.t.sf(x, df))
    _same(special.stdtrit(df, q), stats.t.ppf(q, df))
    p = np.concatenate([rng.uniform(0, 1, 2000), [0.0, 1.0, 1e-300, np.nan]])
    _same(special.ndtri(p), stats.norm.ppf(p))


def test_the_median_interval_coverage_is_scipy_stats_binomial():
    for n in [*range(2, 400), 1001, 4096, 99_999, 1_000_000]:
        low_rank = np.arange(1, n // 2 + 1)
        cover = 1 - 2 * stats.binom.cdf(low_rank - 1, n, 0.5)
        ok = np.flatnonzero(cover >= 0.95 - 1e-12)
        expected = float(cover[ok[-1] if ok.size else 0])
        assert median_interval(np.arange(n, dtype=float), 0.95)[2] == expected, n
        # every candidate's coverage, not only the one chosen
        _same(1 - 2 * special.betainc(n - low_rank + 1, low_rank, 0.5), cover)


def test_the_paired_t_pvalue_is_scipy_stats():
    rng = np.random.default_rng(1)
    for k in (2, 3, 5, 10, 40):
        a, b = rng.normal(0, 1, k), rng.normal(0.3, 1, k)
        res = paired_difference(a, b)
        assert res.pvalue == 2 * stats.t.sf(abs(res.statistic), k - 1)
        assert res.pvalue == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_the_range_integral_weights_are_the_normal_density():
    z, w = (10 * v for v in np.polynomial.legendre.leggauss(256))
    _same(ranking._quadrature()[1], w * stats.norm.pdf(z))


def test_the_chi_square_tails_of_1_and_2_df_are_scipy_s():
    """The mixed model's LRTs take chdtrc at 1 and 2 df in closed form (no scipy.special import)."""
    from vareval.stats._lazy import special as lazy

    rng = np.random.default_rng(2)
    x = np.concatenate([np.linspace(0, 80, 4001), np.geomspace(1e-300, 1600, 2001),
                        np.linspace(1400, 1450, 5001), rng.exponential(10, 2000),
                        [0.0, np.inf]])  # fmt: skip
    for df in (1, 2, 1.0, np.int64(2)):
        ours = np.array([lazy.chdtrc(df, v) for v in x])
        ref = special.chdtrc(df, x)
        tol = np.where(x <= 80, 5e-14, 1e-12)  # erfc's own condition grows with x
        np.testing.assert_array_less(np.abs(ours - ref), tol * ref + 1e-320)
        _same(ours == 0, ref == 0)  # 0 where scipy underflows to 0, not a subnormal
    for bad in (-1.0, np.nan):  # below the support, NaN: NaN, as scipy
        assert np.isnan(lazy.chdtrc(1, bad)) and np.isnan(special.chdtrc(1, bad))
    # other df, arrays and other functions are scipy.special's own
    assert lazy.chdtrc(3, 2.5) == special.chdtrc(3, 2.5)
    _same(lazy.chdtrc(1, x[:50]), special.chdtrc(1, x[:50]))
    assert lazy.fdtrc is special.fdtrc and lazy.stdtrit is special.stdtrit
