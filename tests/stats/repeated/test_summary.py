import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats import median_interval, summarize

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(arrays(float, st.integers(2, 60), elements=finite), st.floats(0.5, 0.999))
def test_summarize_agrees_with_numpy_and_scipy(x, confidence):
    s = summarize(x, confidence=confidence)
    assert s.n == x.size
    assert s.mean == pytest.approx(np.mean(x), rel=1e-12, abs=1e-9)
    assert s.sd == pytest.approx(np.std(x, ddof=1), rel=1e-9, abs=1e-9)
    assert s.se == pytest.approx(stats.sem(x), rel=1e-9, abs=1e-9)
    assert s.median == pytest.approx(np.median(x))
    assert s.iqr == pytest.approx(stats.iqr(x), rel=1e-9, abs=1e-9)
    assert (s.min, s.max, s.range) == (x.min(), x.max(), pytest.approx(np.ptp(x)))
    assert s.selected == x.max() and x[s.selected_index] == x.max()
    np.testing.assert_array_equal(s.scores, x)
    if s.sd > 0:
        ref = stats.ttest_1samp(x, 0).confidence_interval(confidence)
        assert s.confidence_interval() == pytest.approx((ref.low, ref.high), rel=1e-9, abs=1e-9)


def test_lower_is_better_selects_the_minimum():
    s = summarize([0.0034, 0.0029, 0.0041], higher_is_better=False)
    assert s.selected == 0.0029 and s.selected_index == 1


@pytest.mark.parametrize("n", [6, 7, 10, 20, 21, 50, 101])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_median_interval_matches_scipy_quantile_test(n, confidence):
    x = np.random.default_rng(n).normal(size=n)
    ref = stats.quantile_test(x, q=np.median(x), p=0.5).confidence_interval(confidence)
    lo, hi, coverage = median_interval(x, confidence)
    if np.isnan(ref.low):  # scipy gives up when even [min, max] is too short
        assert coverage < confidence
    else:
        assert (lo, hi) == (ref.low, ref.high)
        assert coverage >= confidence


def test_median_interval_coverage_is_the_exact_binomial_sum():
    # n = 3: [min, max] covers the median unless all three fall on one side: 1 - 2/8.
    s = summarize([0.831, 0.847, 0.822])
    assert (s.median_low, s.median_high) == (0.822, 0.847)
    assert s.median_ci_coverage == pytest.approx(0.75)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"scores": [1.0]}, "at least 2"),
        ({"scores": []}, "at least 2"),
        ({"scores": [1.0, np.nan]}, "NaN"),
        ({"scores": [[1.0, 2.0]]}, "one-dimensional"),
        ({"scores": ["a", "b"]}, "numbers"),
        ({"scores": [1.0, 2.0], "confidence": 1.0}, "confidence"),
        ({"scores": [1.0, 2.0], "confidence": 0}, "confidence"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        summarize(**kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 20])
def test_intervals_have_nominal_coverage(n, scaled, rng):
    """The t interval covers a normal mean, the order-statistic interval a skewed median."""
    sims = scaled(20000)
    hits_mean = hits_median = 0
    true_median = np.exp(0.0)  # lognormal(0, 1)
    for _ in range(sims):  # each summarize is already vectorised; the loop is the test harness
        s = summarize(rng.normal(1.0, 2.0, n))
        hits_mean += s.mean_low <= 1.0 <= s.mean_high
        m = summarize(rng.lognormal(0.0, 1.0, n))
        hits_median += m.median_low <= true_median <= m.median_high
    lo_mean = stats.binomtest(hits_mean, sims).proportion_ci(0.999)
    assert lo_mean.low <= 0.95 <= lo_mean.high
    achieved = median_interval(np.arange(n, dtype=float), 0.95)[2]
    ci = stats.binomtest(hits_median, sims).proportion_ci(0.999)
    assert ci.low <= achieved <= ci.high
