"""Tests of the empirical distribution of search outcomes and its tuning curves."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vareval.errors import ArgumentError, VarevalError
from vareval.stats import EmpiricalDistribution

opda_np = pytest.importorskip("opda.nonparametric")


def _opda(ys, ws=None, a=0.0, b=1.0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return opda_np.EmpiricalDistribution(ys, ws=ws, a=a, b=b)


def _tie_free(p, dist):
    """Mask of probabilities not within rounding of a jump of the CDF.

    opda accumulates the masses 1/n in floating point, so at p exactly equal
    to i/n its quantile can land one order statistic higher than the exact
    left-continuous inverse; those points are checked separately.
    """
    cw = dist.cdf(dist.support)
    return np.min(np.abs(np.asarray(p)[..., None] - cw), axis=-1) > 1e-12


def _samples(rng, n, kind):
    ys = rng.random(n)
    ws = None
    if kind == "ties":
        ys = np.round(ys, 1)
    elif kind == "weights":
        ws = rng.random(n)
        ws /= ws.sum()
    return ys, ws


@pytest.mark.parametrize("n", [1, 2, 7, 25, 100])
@pytest.mark.parametrize("kind", ["plain", "ties", "weights"])
def test_distribution_functions_agree_with_opda(rng, n, kind):
    ys, ws = _samples(rng, n, kind)
    ours, theirs = EmpiricalDistribution(ys, ws, a=0, b=1), _opda(ys, ws)
    grid = np.concatenate([ys, rng.random(50), [0.0, 1.0, -0.5, 1.5]])
    np.testing.assert_allclose(ours.cdf(grid), theirs.cdf(grid), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.pmf(grid), theirs.pmf(grid), rtol=0, atol=1e-12)
    ps = np.concatenate([rng.random(200), [0.0, 1.0]])
    keep = _tie_free(ps, ours)
    np.testing.assert_allclose(ours.ppf(ps)[keep], theirs.ppf(ps)[keep], atol=1e-12)
    assert ours.ppf(0.0) == 0.0  # Q(0) = a
    assert ours.mean == pytest.approx(theirs.mean, abs=1e-12)


@pytest.mark.parametrize("n", [1, 3, 25, 200])
@pytest.mark.parametrize("kind", ["plain", "ties", "weights"])
@pytest.mark.parametrize("minimize", [False, True])
def test_tuning_curves_agree_with_opda(rng, n, kind, minimize):
    ys, ws = _samples(rng, n, kind)
    ours, theirs = EmpiricalDistribution(ys, ws, a=0, b=1), _opda(ys, ws)
    ks = np.concatenate([np.arange(1, 2 * n + 2), rng.uniform(1, 3 * n, 20)])
    q = 0.5
    p = 1 - (1 - q) ** (1 / ks) if minimize else q ** (1 / ks)
    keep = _tie_free(p, ours)
    np.testing.assert_allclose(
        ours.quantile_tuning_curve(ks, higher_is_better=not minimize)[keep],
        theirs.quantile_tuning_curve(ks, minimize=minimize)[keep],
        rtol=0,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        ours.average_tuning_curve(ks, higher_is_better=not minimize),
        theirs.average_tuning_curve(ks, minimize=minimize),
        rtol=0,
        atol=1e-12,
    )
    if ws is None:
        kint = np.arange(1, 2 * n + 2)
        v_ref = theirs.v_tuning_curve(kint, minimize=minimize)
        u_ref = theirs.u_tuning_curve(kint, minimize=minimize)
        finite = np.isfinite(u_ref)
        assert finite.any()
        np.testing.assert_allclose(
            ours.v_statistic(kint, higher_is_better=not minimize), v_ref, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            ours.u_statistic(kint, higher_is_better=not minimize)[finite],
            u_ref[finite],
            rtol=0,
            atol=1e-12,
        )


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4, 10, 50, 137, 300, 500])
def test_u_and_v_agree_with_opda_many_n(n):
    rng = np.random.default_rng(n)
    ys = rng.normal(size=n)
    ours, theirs = EmpiricalDistribution(ys), _opda(ys, a=-np.inf, b=np.inf)
    ks = np.arange(1, n + 3)
    for minimize in (False, True):
        u_ref = theirs.u_tuning_curve(ks, minimize=minimize)
        finite = np.isfinite(u_ref)
        np.testing.assert_allclose(
            ours.u_statistic(ks, higher_is_better=not minimize)[finite], u_ref[finite], atol=1e-12
        )
        np.testing.assert_allclose(
            ours.v_statistic(ks, higher_is_better=not minimize),
            theirs.v_tuning_curve(ks, minimize=minimize),
            atol=1e-12,
        )


def test_quantile_at_exact_jumps_is_the_left_continuous_inverse(rng):
    ys = rng.random(24)
    dist = EmpiricalDistribution(ys, a=0, b=1)
    i = np.arange(1, 25)
    np.testing.assert_array_equal(dist.ppf(i / 24), np.sort(ys))
    # the median tuning curve at k = 1 is the lower median for even n
    assert dist.quantile_tuning_curve(1) == np.sort(ys)[11]


def _u_exact(ys, k):
    """U statistic in exact rational arithmetic (math.comb)."""
    n = len(ys)
    ys = sorted(ys)
    k = min(k, n)
    total = Fraction(0)
    denom = math.comb(n, k)
    for i in range(k, n + 1):
        total += Fraction(math.comb(i - 1, k - 1), denom) * Fraction(ys[i - 1])
    return float(total)


def test_u_statistic_is_stable_for_large_n():
    rng = np.random.default_rng(0)
    ys = rng.random(3000)
    dist = EmpiricalDistribution(ys, a=0, b=1)
    ks = [1, 2, 17, 500, 1500, 2999, 3000, 5000]
    got = dist.u_statistic(ks)
    assert np.all(np.isfinite(got))
    expected = [_u_exact(ys.tolist(), k) for k in ks]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # opda's binomial coefficients overflow here
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(_opda(ys).u_tuning_curve(ks)))


def test_v_statistic_equals_average_curve_and_real_k():
    rng = np.random.default_rng(1)
    dist = EmpiricalDistribution(rng.random(40), a=0, b=1)
    ks = np.array([[1.0, 2.5], [7.25, 40.0]])
    np.testing.assert_allclose(dist.v_statistic(ks), dist.average_tuning_curve(ks))
    assert dist.quantile_tuning_curve(ks).shape == (2, 2)
    assert dist.average_tuning_curve(3.5).shape == ()


def test_u_statistic_is_unbiased_for_a_small_population():
    # E over all k-subsets of the max = U statistic at k (an exact identity)
    import itertools

    ys = [0.1, 0.7, 0.3, 0.9, 0.5]
    dist = EmpiricalDistribution(ys, a=0, b=1)
    for k in range(1, 6):
        subsets = list(itertools.combinations(ys, k))
        assert dist.u_statistic(k) == pytest.approx(
            np.mean([max(s) for s in subsets]), abs=1e-15
        )
        assert dist.u_statistic(k, higher_is_better=False) == pytest.approx(
            np.mean([min(s) for s in subsets]), abs=1e-15
        )


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
    st.floats(0, 1),
)
def test_quantile_inverts_the_cdf(ys, p):
    dist = EmpiricalDistribution(ys, a=0, b=1)
    y = dist.ppf(p)
    assert dist.cdf(y) >= p - 1e-12
    assert 0 <= y <= 1
    below = dist.support[dist.support < y]
    assert np.all(dist.cdf(below) < p + 1e-12)
    ks = np.arange(1, 12)
    curve = dist.quantile_tuning_curve(ks)
    assert np.all(np.diff(curve) >= 0)
    assert np.all(np.diff(dist.quantile_tuning_curve(ks, higher_is_better=False)) <= 0)


def test_minimize_is_maximize_of_the_negated_scores(rng):
    ys = rng.random(15)
    up = EmpiricalDistribution(ys, a=0, b=1)
    down = EmpiricalDistribution(-ys, a=-1, b=0)
    ks = np.arange(1, 20)
    np.testing.assert_allclose(up.u_statistic(ks, higher_is_better=False), -down.u_statistic(ks))
    np.testing.assert_allclose(up.v_statistic(ks, higher_is_better=False), -down.v_statistic(ks))
    np.testing.assert_allclose(
        up.average_tuning_curve(ks, higher_is_better=False), -down.average_tuning_curve(ks)
    )


def test_sample_is_reproducible_and_ignores_the_global_seed():
    dist = EmpiricalDistribution([0.1, 0.2, 0.9], [0.2, 0.3, 0.5], a=0, b=1)
    np.random.seed(1)  # noqa: NPY002 (the global seed must have no effect)
    a = dist.sample(100, rng=42)
    np.random.seed(2)  # noqa: NPY002
    b = dist.sample(100, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.1, 0.2, 0.9}
    big = dist.sample(200_000, rng=0)
    assert np.mean(big == 0.9) == pytest.approx(0.5, abs=0.005)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scores=[0.5, 1.2], a=0, b=1), "within the bounds"),
        (dict(scores=[-0.1, 0.5], a=0, b=1), "within the bounds"),
        (dict(scores=[0.5], a=1, b=1), "a < b"),
        (dict(scores=[0.5], a=2, b=1), "a < b"),
        (dict(scores=[], a=0, b=1), "at least 1"),
        (dict(scores=[0.5, np.nan], a=0, b=1), "NaN"),
        (dict(scores=[0.5, 0.6], weights=[0.5, 0.6], a=0, b=1), "sum to 1"),
        (dict(scores=[0.5, 0.6], weights=[1.5, -0.5], a=0, b=1), "non-negative"),
        (dict(scores=[0.5, 0.6], weights=[1.0], a=0, b=1), "one weight per score"),
        (dict(scores=[0.5], a=float("nan"), b=1), "NaN"),
    ],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        EmpiricalDistribution(**kwargs)


def test_bad_curve_arguments():
    dist = EmpiricalDistribution([0.2, 0.4], a=0, b=1)
    with pytest.raises(ArgumentError, match="k"):
        dist.quantile_tuning_curve(0.0)
    with pytest.raises(ArgumentError, match="k"):
        dist.average_tuning_curve([1, 0])
    with pytest.raises(ArgumentError, match="whole numbers"):
        dist.u_statistic(2.5)
    with pytest.raises(ArgumentError, match="q"):
        dist.quantile_tuning_curve(2, q=1.5)
    with pytest.raises(ArgumentError, match="ppf"):
        dist.ppf(1.5)
    weighted = EmpiricalDistribution([0.2, 0.4], [0.3, 0.7], a=0, b=1)
    with pytest.raises(VarevalError, match="weights"):
        weighted.v_statistic(2)


def test_v_weights_equal_exact_rational_arithmetic(rng):
    # one power per point, differenced: (i/n)^k - ((i-1)/n)^k in exact fractions; the
    # rows telescope to 1 (the former two powers per point drifted by 3e-11 at n = 10^6)
    from vareval.stats.tuning.curves import _v_weights

    for _ in range(20):
        n = int(rng.integers(1, 40))
        k = rng.integers(1, 30, 3)
        exact = [[float(Fraction(i, n) ** int(kk) - Fraction(i - 1, n) ** int(kk))
                  for i in range(1, n + 1)] for kk in k]  # fmt: skip
        np.testing.assert_allclose(_v_weights(n, k), exact, rtol=0, atol=2e-15)
    k = np.array([1, 10, 1000, 10**6])
    np.testing.assert_allclose(_v_weights(10**6, k).sum(axis=-1), 1.0, rtol=0, atol=1e-15)
