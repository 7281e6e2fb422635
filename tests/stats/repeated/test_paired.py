import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from vareval.errors import ArgumentError
from vareval.stats import paired_difference, plan_replications

A = [0.831, 0.847, 0.822]
B = [0.818, 0.835, 0.809]


def test_reference_note_worked_example():
    r = paired_difference(A, B, rng=0)
    assert r.selected_gap == pytest.approx(0.012)
    assert r.estimate == pytest.approx(0.0126667, abs=1e-7)
    d = np.subtract(A, B)
    assert r.se == pytest.approx(np.std(d, ddof=1) / np.sqrt(3))
    ref = stats.ttest_rel(A, B)
    assert (r.statistic, r.pvalue) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    ci = ref.confidence_interval(0.95)
    assert r.confidence_interval() == pytest.approx((ci.low, ci.high))


def test_variance_decomposition_is_exact(rng):
    a = rng.normal(size=30)
    b = 0.7 * a + rng.normal(size=30)
    r = paired_difference(a, b, rng=rng)
    assert r.var_a + r.var_b - 2 * r.cov == pytest.approx(np.var(a - b, ddof=1))
    assert r.var_diff == pytest.approx(np.var(a - b, ddof=1))
    assert r.correlation == pytest.approx(np.corrcoef(a, b)[0, 1])
    assert r.se_unpaired == pytest.approx(np.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 30))
    assert r.variance_ratio > 1  # positive covariance: pairing saved runs


def test_bootstrap_interval_agrees_with_scipy():
    d_rng = np.random.default_rng(5)
    a = d_rng.normal(0.5, 1, 40)
    b = d_rng.normal(0.0, 1, 40)
    r = paired_difference(a, b, n_resamples=40_000, rng=1)
    ref = stats.bootstrap((a - b,), np.mean, n_resamples=40_000, method="percentile", rng=2)
    ci = ref.confidence_interval
    assert (r.bootstrap_low, r.bootstrap_high) == pytest.approx((ci.low, ci.high), abs=0.02)


def test_same_rng_same_answer_and_global_seed_has_no_effect():
    np.random.seed(0)
    r1 = paired_difference(A, B, n_resamples=500, rng=9)
    np.random.seed(1)
    r2 = paired_difference(A, B, n_resamples=500, rng=9)
    assert (r1.bootstrap_low, r1.bootstrap_high) == (r2.bootstrap_low, r2.bootstrap_high)


@pytest.mark.parametrize("effect", [0.2, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("power", [0.8, 0.9])
def test_power_plan_matches_statsmodels(effect, power):
    n = TTestPower().solve_power(effect_size=effect, alpha=0.05, power=power)
    plan = plan_replications(1.0, effect=effect, power=power)
    assert plan.k_required == max(2, int(np.ceil(n - 1e-6)))
    assert plan.achieved >= power
    ref = TTestPower().power(effect_size=effect, nobs=plan.curve_k, alpha=0.05)
    finite = np.isfinite(ref)  # statsmodels returns NaN far in scipy's lower nct tail
    np.testing.assert_allclose(plan.curve_power[finite], ref[finite], atol=1e-6)
    assert np.all(np.isfinite(plan.curve_power))
    z = stats.norm.ppf
    assert plan.k_normal == max(2, int(np.ceil(((z(0.975) + z(power)) / effect) ** 2)))


def test_se_plan_quadruples_to_halve():
    assert plan_replications(1.0, target_se=0.1).k_required == 100
    assert plan_replications(1.0, target_se=0.05).k_required == 400


def test_halfwidth_plan_is_the_smallest_k():
    p = plan_replications(0.01, target_halfwidth=0.005, confidence=0.95)
    half = lambda k: stats.t.ppf(0.975, k - 1) * 0.01 / np.sqrt(k)  # noqa: E731
    assert half(p.k_required) <= 0.005 < half(p.k_required - 1)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: paired_difference([1.0, 2.0], [1.0, 2.0, 3.0]), "paired"),
        (lambda: paired_difference([1.0], [2.0]), "at least 2"),
        (lambda: paired_difference(A, B, confidence=1.5), "confidence"),
        (lambda: paired_difference(A, B, n_resamples=0), "n_resamples"),
        (lambda: plan_replications(1.0), "exactly one"),
        (lambda: plan_replications(1.0, target_se=0.1, effect=0.2), "exactly one"),
        (lambda: plan_replications(-1.0, target_se=0.1), "sd_diff"),
        (lambda: plan_replications(1.0, target_se=0.0), "se"),
        (lambda: plan_replications(1.0, effect=1e-6, max_k=100), "max_k"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()


@pytest.mark.slow
def test_paired_t_interval_coverage(scaled, rng):
    """With correlated pairs the t interval of the mean difference covers ~95 %."""
    sims, k = scaled(20000), 8
    cov = [[1.0, 0.8], [0.8, 1.0]]
    draws = rng.multivariate_normal([0.3, 0.0], cov, size=(sims, k))
    intervals = (paired_difference(x[:, 0], x[:, 1], n_resamples=1, rng=0) for x in draws)
    hits = sum(lo <= 0.3 <= hi for lo, hi in (r.confidence_interval() for r in intervals))
    ci = stats.binomtest(hits, sims).proportion_ci(0.999)
    assert ci.low <= 0.95 <= ci.high


def test_no_bootstrap_draws_past_the_most_pairs(monkeypatch):
    """Past MAX_BOOTSTRAP_PAIRS the bootstrap is not drawn, and the note says why."""
    from vareval.stats.repeated import paired as module

    monkeypatch.setattr(module, "MAX_BOOTSTRAP_PAIRS", 50)
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 60), rng.normal(0, 1, 60)
    r = module.paired_difference(a, b, rng=0)
    assert np.isnan([r.bootstrap_low, r.bootstrap_high]).all() and "60 pairs" in r.bootstrap_note
    assert np.isfinite(r.confidence_interval()).all()
    kept = module.paired_difference(a[:50], b[:50], rng=0)
    assert np.isfinite([kept.bootstrap_low, kept.bootstrap_high]).all()
    assert kept.bootstrap_note == ""
