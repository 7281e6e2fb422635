"""Tests of the simultaneous CDF bands, their exact coverage and the comparisons."""

import csv
import importlib.resources
import io
import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats import (
    EmpiricalDistribution,
    cdf_band,
    compare_tuning_curves,
    order_statistic_band,
    project_iterations,
    simultaneous_coverage,
)

opda_np = pytest.importorskip("opda.nonparametric")
SLOW_SCALE = float(os.environ.get("VAREVAL_SLOW_SCALE", "1"))

OPDA_METHOD = {
    "ld-hd": "ld_highest_density",
    "ld-et": "ld_equal_tailed",
    "ks": "ks",
    "dkw": "dkw",
}


def _opda_bands(ys, confidence, method, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return opda_np.EmpiricalDistribution.confidence_bands(
            ys, confidence, a=0.0, b=1.0, method=OPDA_METHOD[method],
            generator=np.random.default_rng(seed), n_jobs=1,
        )  # fmt: skip


# -- exact coverage ------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 10, 50, 140])
@pytest.mark.parametrize("eps", [0.02, 0.1, 0.2, 0.45])
def test_ks_band_coverage_is_kstwo(n, eps):
    i = np.arange(1, n + 1)
    lo, hi = np.clip(i / n - eps, 0, 1), np.clip((i - 1) / n + eps, 0, 1)
    assert simultaneous_coverage(lo, hi) == pytest.approx(
        stats.kstwo(n).cdf(eps), abs=1e-11
    )


@pytest.mark.parametrize("n", [400, 2000])
def test_ks_band_coverage_large_n(n):
    # scipy's kstwo switches to approximations above n = 140; 1e-6 covers them
    for conf in (0.5, 0.9, 0.99):
        band = order_statistic_band(n, conf, "ks")
        assert band.coverage == pytest.approx(conf, abs=1e-6)


def _closed_form_n2(lower, upper):
    """P(l1 <= U(1) <= u1, l2 <= U(2) <= u2) = 2 * area of {x < y} in the box.

    The area is the integral over x in [l1, u1] of max(0, u2 - max(x, l2)).
    """
    (l1, l2), (u1, u2) = lower, upper
    flat = max(0.0, min(u1, l2) - l1) * max(0.0, u2 - l2)
    x0, x1 = max(l1, l2), min(u1, u2)
    slope = ((u2 - x0) ** 2 - (u2 - x1) ** 2) / 2 if x1 > x0 else 0.0
    return 2 * (flat + slope)


def test_closed_form_n2_against_quadrature():
    lo, hi = [0.1, 0.3], [0.5, 0.8]
    quad = integrate.quad(lambda x: max(0.0, hi[1] - max(x, lo[1])), lo[0], hi[0])[0]
    assert _closed_form_n2(lo, hi) == pytest.approx(2 * quad, abs=1e-12)


def test_coverage_matches_closed_form_for_n_1_and_2(rng):
    for _ in range(50):
        lo = np.sort(rng.random(2) * 0.7)
        hi = np.maximum.accumulate(np.minimum(lo + rng.random(2) * 0.7, 1))
        assert simultaneous_coverage(lo, hi) == pytest.approx(
            _closed_form_n2(lo, hi), abs=1e-12
        )
        assert simultaneous_coverage(lo[:1], hi[:1]) == pytest.approx(hi[0] - lo[0])


def _steck(lower, upper):
    """Steck's (1971) determinant: n! det[(u_i - l_j)_+^(j-i+1) / (j-i+1)!]."""
    n = len(lower)
    m = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            p = j - i + 1
            if p == 0:
                m[i, j] = 1.0
            elif p > 0:
                m[i, j] = max(upper[i] - lower[j], 0.0) ** p / math.factorial(p)
    return math.factorial(n) * np.linalg.det(m)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(0, 1), min_size=n, max_size=n),
            st.lists(st.floats(0, 1), min_size=n, max_size=n),
        )
    )
)
def test_coverage_matches_stecks_determinant(bounds):
    a, b = np.sort(bounds[0]), np.sort(bounds[1])
    lower, upper = np.minimum(a, b), np.maximum(a, b)
    lower, upper = np.maximum.accumulate(lower), np.maximum.accumulate(upper)
    got = simultaneous_coverage(lower, upper)
    assert got == pytest.approx(max(_steck(lower, upper), 0.0), abs=1e-10)
    wider = simultaneous_coverage(lower * 0.9, np.minimum(upper * 1.1, 1))
    assert wider >= got - 1e-12


@pytest.mark.parametrize("confidence", [0.1, 0.5, 0.8, 0.95, 0.999])
@pytest.mark.parametrize("method", ["ld-hd", "ld-et"])
def test_ld_bands_at_n_1_and_2_match_the_closed_form(confidence, method):
    one = order_statistic_band(1, confidence, method)
    assert one.upper[0] - one.lower[0] == pytest.approx(confidence, abs=1e-12)
    two = order_statistic_band(2, confidence, method)
    assert _closed_form_n2(two.lower, two.upper) == pytest.approx(confidence, abs=1e-9)
    if method == "ld-hd":
        # Beta(1, 2) and Beta(2, 1) are monotone: HD intervals touch 0 and 1,
        # so 2 (1 - c)^2 ... closed form: 1 - 2 alpha + max(0, l2 - u1)^2
        alpha = 1 - two.level
        assert two.lower[0] == 0 and two.upper[1] == 1
        assert two.upper[0] == pytest.approx(1 - np.sqrt(alpha))
        gap = max(0.0, two.lower[1] - two.upper[0])
        assert 1 - 2 * alpha + gap**2 == pytest.approx(confidence, abs=1e-9)


@pytest.mark.parametrize(("n", "method"), [(2501, "ld-hd"), (1500, "ld-et")])
def test_grid_band_is_exact_and_close_to_the_full_band(monkeypatch, n, method):
    """Past EXACT_N an LD band bounds a grid of order statistics only.

    Its coverage is exact: the recursion over the grid equals the full
    recursion over the band filled in between grid points (an independent
    path through all n order statistics), and both equal the confidence. It is
    at most a few per cent wider than the band that bounds every one.
    """
    from vareval.stats.tuning import bands

    full = bands._order_statistic_band_cached.__wrapped__(n, 0.95, method)
    monkeypatch.setattr(bands, "EXACT_N", 1000)
    grid = bands._order_statistic_band_cached.__wrapped__(n, 0.95, method)
    assert bands._first_half(n).size < (n + 1) // 4
    assert grid.coverage == pytest.approx(0.95, abs=1e-9)
    assert simultaneous_coverage(grid.lower, grid.upper) == pytest.approx(
        grid.coverage, abs=1e-12
    )
    width, full_width = grid.upper - grid.lower, full.upper - full.lower
    assert 1.0 <= width.mean() / full_width.mean() < 1.06
    assert np.all(width / full_width < 1.12)
    # the extremes, which set the curve at large k, are bounded one by one
    assert grid.lower[-1] >= full.lower[-1] and grid.upper[0] <= full.upper[0]


def test_ks_coverage_past_exact_n_is_kstwo(monkeypatch):
    from vareval.stats.tuning import bands

    monkeypatch.setattr(bands, "EXACT_N", 1000)
    for method in ("ks", "dkw"):
        band = bands._order_statistic_band_cached.__wrapped__(5000, 0.9, method)
        assert band.coverage == pytest.approx(
            simultaneous_coverage(band.lower, band.upper), abs=1e-9
        )


@pytest.mark.parametrize("n", [3, 10, 57, 300, 1000])
@pytest.mark.parametrize("confidence", [0.5, 0.95])
@pytest.mark.parametrize("method", ["ld-hd", "ld-et"])
def test_ld_band_hits_the_target_exactly(n, confidence, method):
    band = order_statistic_band(n, confidence, method)
    assert abs(band.coverage - confidence) < 1e-6
    assert abs(simultaneous_coverage(band.lower, band.upper) - confidence) < 1e-6
    i = np.arange(1, n + 1)
    beta = stats.beta(i, n + 1 - i)
    pointwise = beta.cdf(band.upper) - beta.cdf(band.lower)
    np.testing.assert_allclose(pointwise, band.level, atol=1e-9)
    if method == "ld-hd" and n > 2:
        inner = slice(1, n - 1)
        np.testing.assert_allclose(
            beta.logpdf(band.lower)[inner], beta.logpdf(band.upper)[inner], atol=1e-6
        )
    else:
        np.testing.assert_allclose(
            beta.cdf(band.lower), (1 - band.level) / 2, atol=1e-9
        )


def _brute_force(lower, upper, trials, rng):
    n = lower.size
    hits = 0
    step = max(1, 2_000_000 // n)
    for s in range(0, trials, step):
        u = np.sort(rng.random((min(step, trials - s), n)), axis=1)
        hits += int(np.all((lower <= u) & (u <= upper), axis=1).sum())
    return hits


def _check_against_simulation(band, trials, rng):
    hits = _brute_force(band.lower, band.upper, trials, rng)
    # 99.9 % Clopper-Pearson interval for the simulated coverage
    ci = stats.binomtest(hits, trials).proportion_ci(0.999, method="exact")
    assert ci.low <= band.coverage <= ci.high, (hits / trials, band.coverage)


def test_exact_coverage_agrees_with_simulation_fast(rng):
    for method in ("ld-hd", "ld-et", "dkw"):
        _check_against_simulation(order_statistic_band(10, 0.9, method), 20_000, rng)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 5, 25, 100, 400])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("method", ["ld-hd", "ld-et", "ks", "dkw"])
def test_exact_coverage_agrees_with_simulation(rng, scaled, n, confidence, method):
    band = order_statistic_band(n, confidence, method)
    _check_against_simulation(band, scaled(200_000), rng)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["ld-et", "ld-hd"])
def test_ld_bands_are_stable_for_large_n(method):
    band = order_statistic_band(20_000, 0.95, method)
    assert abs(band.coverage - 0.95) < 1e-6
    i = np.arange(1, 20_001)
    beta = stats.beta(i, 20_001 - i)
    pointwise = beta.sf(band.lower) + beta.cdf(band.upper) - 1
    np.testing.assert_allclose(pointwise, band.level, atol=1e-9)
    assert np.all(np.diff(band.lower) >= 0) and np.all(np.diff(band.upper) >= 0)
    assert np.all(band.lower < band.upper)


# -- agreement with opda -----------------------------------------------------


@pytest.mark.parametrize("method", ["ks", "dkw"])
@pytest.mark.parametrize("n", [1, 2, 9, 40, 500])
def test_ks_and_dkw_bands_are_opdas(rng, method, n):
    ys = rng.random(n)
    ours = cdf_band(ys, 0.9, a=0, b=1, method=method).distributions()
    theirs = _opda_bands(ys, 0.9, method)
    grid = np.concatenate([ys, rng.random(100), [0.0, 1.0]])
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.cdf(grid), t.cdf(grid), atol=1e-12)
    ks = np.concatenate([np.arange(1, 3 * n + 2), rng.uniform(1, 50, 20)])
    p = 0.5 ** (1 / ks)
    for o, t in zip(ours, theirs, strict=True):
        # opda's cumulative masses carry rounding error: where p sits exactly on
        # a jump of the CDF its quantile can differ; compare elsewhere
        jumps = o.cdf(o.support)
        keep = np.min(np.abs(p[:, None] - jumps), axis=1) > 1e-12
        np.testing.assert_allclose(
            o.quantile_tuning_curve(ks)[keep], t.quantile_tuning_curve(ks)[keep],
            atol=1e-12,
        )  # fmt: skip


def _opda_order_band(ys, confidence, method, seed):
    lower, _, upper = _opda_bands(ys, confidence, method, seed)
    ys = np.sort(ys)
    lo = lower.cdf(ys)
    hi = np.concatenate([[upper.cdf(0.0)], upper.cdf(ys)[:-1]])
    return lo, hi


def _assert_within_monte_carlo_error(n, confidence, method, seed):
    """opda's LD band has Monte Carlo error; its exact coverage must be near target.

    opda takes the ``confidence`` quantile of 100,000 simulated statistics,
    so the exact coverage of its band is ~Beta(0.95 N, 0.05 N): SD
    sqrt(c (1 - c) / N). We allow 5 SD, and check that the endpoints lie
    between our exact bands at the confidences 5 SD either side.
    """
    ys = np.random.default_rng(seed).random(n)
    lo, hi = _opda_order_band(ys, confidence, method, seed)
    sd = np.sqrt(confidence * (1 - confidence) / 100_000)
    assert abs(simultaneous_coverage(lo, hi) - confidence) < 5 * sd
    narrow = order_statistic_band(n, confidence - 5 * sd, method)
    wide = order_statistic_band(n, confidence + 5 * sd, method)
    assert np.all(wide.lower <= lo + 1e-12) and np.all(lo <= narrow.lower + 1e-12)
    assert np.all(narrow.upper <= hi + 1e-12) and np.all(hi <= wide.upper + 1e-12)


@pytest.mark.parametrize("method", ["ld-hd", "ld-et"])
@pytest.mark.parametrize("n", [2, 6])
def test_ld_bands_match_opda_within_monte_carlo_error(method, n):
    _assert_within_monte_carlo_error(n, 0.9, method, seed=n)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["ld-hd", "ld-et"])
@pytest.mark.parametrize("n", [3, 25, 100, 250, 500])
def test_ld_bands_match_opda_within_monte_carlo_error_slow(method, n):
    if method == "ld-hd" and n > 250 and SLOW_SCALE < 1:
        pytest.skip("opda's highest-density band takes minutes at n = 500")
    _assert_within_monte_carlo_error(n, 0.95, method, seed=n)


# -- CDF bands and tuning-curve bands --------------------------------------------


def test_band_orders_and_induced_curves(rng):
    ys = rng.random(30)
    band = cdf_band(ys, 0.9, a=0, b=1)
    assert np.all(band.lower_cdf <= band.estimate_cdf)
    assert np.all(band.estimate_cdf <= band.upper_cdf)
    ks = np.arange(1, 61)
    curve = band.tuning_curve(ks)
    assert np.all(curve.lower <= curve.estimate) and np.all(
        curve.estimate <= curve.upper
    )
    lower_cdf, _, upper_cdf = band.distributions()
    # the upper CDF band gives the lower curve and vice versa
    np.testing.assert_array_equal(curve.lower, upper_cdf.quantile_tuning_curve(ks))
    np.testing.assert_array_equal(curve.upper, lower_cdf.quantile_tuning_curve(ks))
    down = band.tuning_curve(ks, higher_is_better=False)
    assert np.all(down.lower <= down.estimate) and np.all(down.estimate <= down.upper)
    assert band.to_dict()["method"] == "ld-hd"
    assert "CDFBand(" in repr(band)


def test_cached_band_cannot_be_altered():
    band = order_statistic_band(12, 0.9, "ld-hd")
    with pytest.raises(ValueError):
        band.lower[0] = 0.5


def test_ties_warn():
    with pytest.warns(VarevalWarning, match="tied"):
        cdf_band([0.1, 0.1, 0.5], 0.9, a=0, b=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cdf_band([0.1, 0.1, 0.5], 0.9, a=0, b=1, method="dkw")  # DKW holds anyway


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scores=[0.5, 1.2], a=0, b=1), "within the bounds"),
        (dict(scores=[0.5], a=1, b=0), "a < b"),
        (dict(scores=[], a=0, b=1), "at least 1"),
        (dict(scores=[0.5, np.nan], a=0, b=1), "NaN"),
        (dict(scores=[0.5], a=0, b=1, confidence=1.0), "confidence"),
        (dict(scores=[0.5], a=0, b=1, confidence=0.0), "confidence"),
        (dict(scores=[0.5], a=0, b=1, confidence=-0.2), "confidence"),
        (dict(scores=[0.5], a=0, b=1, method="bootstrap"), "method"),
    ],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        cdf_band(**kwargs)


def test_bad_coverage_inputs():
    with pytest.raises(ArgumentError, match="non-decreasing"):
        simultaneous_coverage([0.2, 0.1], [0.5, 0.6])
    with pytest.raises(ArgumentError, match="same"):
        simultaneous_coverage([0.2], [0.5, 0.6])
    assert simultaneous_coverage([0.5, 0.6], [0.4, 0.7]) == 0.0
    with pytest.raises(ArgumentError, match="k"):
        cdf_band([0.5], a=0, b=1).tuning_curve(0)


# -- the case study -------------------------------------------------------------


def _hedwig_subsample():
    text = (
        importlib.resources.files("vareval") / "datasets" / "hedwig.tsv"
    ).read_text()
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    lstm = np.array([float(r["f1"]) for r in rows if r["model_name"] == "reg_lstm"])
    mlp = np.array([float(r["f1"]) for r in rows if r["model_name"] == "mlp"])
    assert (lstm.size, mlp.size) == (152, 145)
    gen = np.random.Generator(np.random.PCG64(0))
    return (
        gen.choice(lstm, size=25, replace=False),
        gen.choice(mlp, size=25, replace=False),
    )


def test_case_study_point_estimates():
    lstm, mlp = _hedwig_subsample()
    ks = np.arange(1, 26)
    el, em = EmpiricalDistribution(lstm, a=0, b=1), EmpiricalDistribution(mlp, a=0, b=1)
    v_ahead = el.v_statistic(ks) > em.v_statistic(ks)
    u_ahead = el.u_statistic(ks) > em.u_statistic(ks)
    np.testing.assert_array_equal(v_ahead, ks >= 20)
    np.testing.assert_array_equal(u_ahead, ks >= 14)


def test_case_study_bands():
    lstm, mlp = _hedwig_subsample()
    ks = np.arange(1, 26)
    with pytest.warns(VarevalWarning, match="tied"):  # the MLP's rounded F1
        cmp = compare_tuning_curves(lstm, mlp, ks, a=0, b=1, confidence=0.5)
    assert cmp.verdict[0] == "B better"  # B is the MLP
    assert np.all(cmp.verdict[1:] == "need more data")


def test_projection_is_labelled_and_monotone():
    rng = np.random.default_rng(3)
    a = rng.beta(2, 5, 20)
    b = rng.beta(2.6, 5, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        p = project_iterations(a, b, 1, a=0, b=1, confidence=0.9)
        assert p.leader == "B"
        assert "projection" in p.assumption
        assert p.iterations is not None and p.iterations > 20
        assert p.more_a == p.iterations - 20
        # the typical sample of that size does separate them, and a clearly
        # smaller one does not
        cmp = compare_tuning_curves(
            np.interp(np.arange(1, p.iterations + 1) / (p.iterations + 1),
                      np.arange(1, 21) / 21, np.sort(a)),
            np.interp(np.arange(1, p.iterations + 1) / (p.iterations + 1),
                      np.arange(1, 21) / 21, np.sort(b)),
            [1], a=0, b=1, confidence=0.9,
        )  # fmt: skip
        assert cmp.verdict[0] == "B better"
        same = project_iterations(a, a, 1, a=0, b=1)
        assert same.leader is None and same.iterations is None


def test_long_convolutions_equal_scipy_fftconvolve(rng):
    # the crossing recursion's FFT convolution calls scipy.fft directly (the per-call checks
    # of fftconvolve were a third of a 10^6-score band's time): the same numbers, bit for bit
    from scipy.signal import fftconvolve

    from vareval.stats.tuning.bands import _convolve

    for _ in range(50):
        a, b = rng.random(int(rng.integers(128, 3000))), rng.random(int(rng.integers(128, 3000)))
        np.testing.assert_array_equal(_convolve(a, b), np.maximum(fftconvolve(a, b), 0.0))
