"""Tests of the coverage laboratory: KDE simulator, bootstrap bands, coverage."""

import csv
import importlib.resources
import io

import numpy as np
import pytest
from scipy import special, stats

from vareval.errors import ArgumentError
from vareval.stats import (
    ReflectedKDE,
    band_coverage,
    bootstrap_bands,
    bootstrap_coverage,
    clopper_pearson,
    simulated_tuning_curve,
)


def _hedwig(model):
    text = (
        importlib.resources.files("vareval") / "datasets" / "hedwig.tsv"
    ).read_text()
    rows = csv.DictReader(io.StringIO(text), delimiter="\t")
    return np.array([float(r["f1"]) for r in rows if r["model_name"] == model])


class Uniform:
    a, b = 0.0, 1.0

    def sample(self, size, rng=None):
        return rng.random(size)

    def cdf(self, y):
        return np.clip(y, 0, 1)

    def ppf(self, p):
        return np.asarray(p, dtype=float)


class Mixture:
    """0.3 Beta(2, 8) + 0.7 Beta(9, 2): bimodal, continuous, no point masses."""

    a, b = 0.0, 1.0
    w = 0.3

    def sample(self, size, rng=None):
        pick = rng.random(size) < self.w
        return np.where(pick, rng.beta(2, 8, size), rng.beta(9, 2, size))

    def cdf(self, y):
        return self.w * stats.beta.cdf(y, 2, 8) + (1 - self.w) * stats.beta.cdf(y, 9, 2)

    def ppf(self, p):
        lo, hi = np.zeros_like(p, dtype=float), np.ones_like(p, dtype=float)
        for _ in range(60):
            mid = (lo + hi) / 2
            below = self.cdf(mid) < p
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        return (lo + hi) / 2


@pytest.fixture(scope="module")
def lstm_kde():
    return ReflectedKDE(_hedwig("reg_lstm"), 0.05, a=0, b=1)


def test_kde_matches_scipy_reflected_kde(lstm_kde):
    ys = _hedwig("reg_lstm")
    ref = stats.gaussian_kde(np.concatenate([-ys, ys, 2 - ys]), bw_method=0.05)
    assert lstm_kde.bandwidth == pytest.approx(np.sqrt(ref.covariance[0, 0]))
    total = ref.integrate_box_1d(0, 1)
    for y in [0.0, 0.05, 0.3, 0.61, 0.9, 1.0]:
        assert lstm_kde.cdf(y) == pytest.approx(
            ref.integrate_box_1d(0, y) / total, abs=1e-12
        )
    grid = np.linspace(0.001, 0.999, 7)
    np.testing.assert_allclose(lstm_kde.pdf(grid), ref.pdf(grid) / total, rtol=1e-10)
    np.testing.assert_allclose(lstm_kde.fast_cdf(grid), lstm_kde.cdf(grid), atol=1e-8)


def test_kde_sampler_follows_its_cdf(lstm_kde):
    draws = lstm_kde.sample(50_000, rng=1)
    assert draws.min() >= 0 and draws.max() <= 1
    assert stats.kstest(draws, lstm_kde.cdf).pvalue > 1e-3
    p = np.array([0.01, 0.3, 0.5, 0.99])
    np.testing.assert_allclose(lstm_kde.cdf(lstm_kde.ppf(p)), p, atol=1e-10)


def test_true_tuning_curves(lstm_kde):
    c, h, m = lstm_kde.centres, lstm_kde.bandwidth, lstm_kde._mass
    lo, hi = (0 - c) / h, (1 - c) / h
    phi = stats.norm.pdf
    mean = (
        np.mean(c * (special.ndtr(hi) - special.ndtr(lo)) + h * (phi(lo) - phi(hi))) / m
    )
    assert lstm_kde.average_tuning_curve(1) == pytest.approx(mean, abs=1e-10)
    ks = np.array([1, 2, 5, 20])
    sim, se = simulated_tuning_curve(lstm_kde, ks, n_trials=100_000, rng=2)
    assert np.all(np.abs(sim - lstm_kde.average_tuning_curve(ks)) < 5 * se)
    down, se_down = simulated_tuning_curve(
        lstm_kde, ks, n_trials=100_000, higher_is_better=False, rng=3
    )
    truth_down = lstm_kde.average_tuning_curve(ks, higher_is_better=False)
    assert np.all(np.abs(down - truth_down) < 5 * se_down)
    np.testing.assert_allclose(
        lstm_kde.quantile_tuning_curve(ks), lstm_kde.ppf(0.5 ** (1 / ks)), atol=1e-12
    )


def test_bootstrap_band_of_the_mean():
    # at k = 1 both estimators are the sample mean: the percentile band is close
    # to mean +- 1.96 sd / sqrt(n)
    ys = np.random.default_rng(4).random(200)
    se = ys.std() / np.sqrt(ys.size)
    for est in ("u", "v"):
        lo, hi = bootstrap_bands(ys, [1], estimator=est, n_resamples=20_000, rng=5)
        assert lo[0] == pytest.approx(ys.mean() - 1.96 * se, abs=0.08 * se)
        assert hi[0] == pytest.approx(ys.mean() + 1.96 * se, abs=0.08 * se)
    lo, hi = bootstrap_bands(np.full((3, 10), 0.4), [1, 5, 10], rng=0)
    assert lo.shape == (3, 3)
    np.testing.assert_allclose(lo, 0.4)
    np.testing.assert_allclose(hi, 0.4)


def test_clopper_pearson_matches_scipy():
    for x, n in [(0, 10), (3, 10), (10, 10), (950, 1000)]:
        ci = stats.binomtest(x, n).proportion_ci(0.95, method="exact")
        lo, hi = clopper_pearson(x, n, 0.95)
        assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_band_coverage_uniform_fast():
    res = band_coverage(Uniform(), 5, confidence=0.9, n_trials=4000, k=[1, 3], rng=6)
    assert res.low <= 0.9 <= res.high
    assert np.all(res.pointwise >= res.estimate)


def test_lab_is_reproducible_and_ignores_the_global_seed(lstm_kde):
    def run():
        return (
            lstm_kde.sample(10, rng=7),
            simulated_tuning_curve(lstm_kde, [1, 3], n_trials=100, rng=7)[0],
            bootstrap_bands(lstm_kde.sample(10, rng=1), [1, 3], n_resamples=50, rng=7),
            band_coverage(lstm_kde, 5, n_trials=50, k=[2], rng=7).pointwise,
            bootstrap_coverage(
                lstm_kde, 5, [1, 2], [0.3, 0.4], n_trials=20, n_resamples=20, rng=7
            ).pointwise,
        )

    np.random.seed(0)  # noqa: NPY002 (the global seed must have no effect)
    first = run()
    np.random.seed(1)  # noqa: NPY002
    second = run()
    for x, y in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)


def test_bad_inputs():
    with pytest.raises(ArgumentError, match="within"):
        ReflectedKDE([0.5, 1.5], 0.1, a=0, b=1)
    with pytest.raises(ArgumentError, match="bw"):
        ReflectedKDE([0.5, 0.6], 0.0, a=0, b=1)
    with pytest.raises(ArgumentError, match="a < b"):
        ReflectedKDE([0.5, 0.6], 0.1, a=1, b=0)
    with pytest.raises(ArgumentError, match="estimator"):
        bootstrap_bands([0.1, 0.2], [1], estimator="w")
    with pytest.raises(ArgumentError, match="confidence"):
        bootstrap_bands([0.1, 0.2], [1], confidence=1.5)
    with pytest.raises(ArgumentError, match="k"):
        bootstrap_bands([0.1, 0.2], [0])
    with pytest.raises(ArgumentError, match="successes"):
        clopper_pearson(11, 10)


# -- slow tier: the coverage findings ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 25, 100])
@pytest.mark.parametrize("dist", ["uniform", "kde", "mixture"])
@pytest.mark.parametrize("method", ["ld-hd", "ld-et"])
def test_ld_bands_cover_at_the_nominal_level(scaled, lstm_kde, n, dist, method):
    sampler = {"uniform": Uniform(), "kde": lstm_kde, "mixture": Mixture()}[dist]
    res = band_coverage(
        sampler, n, confidence=0.9, method=method, n_trials=scaled(20_000, 2000),
        k=[1, 2, 5, 10, 50], coverage_confidence=0.999, rng=np.random.default_rng(n),
    )  # fmt: skip
    # at or above nominal (exact for continuous distributions)
    assert res.high >= 0.9
    assert res.low <= 0.9
    # the tuning-curve band holds at least as often as the CDF band
    assert np.all(res.pointwise >= res.estimate)


@pytest.mark.slow
@pytest.mark.parametrize("model, bw", [("reg_lstm", 0.05), ("mlp", 0.0125)])
@pytest.mark.parametrize("estimator", ["u", "v"])
def test_bootstrap_pointwise_coverage_falls_as_k_grows(scaled, model, bw, estimator):
    kde = ReflectedKDE(_hedwig(model), bw, a=0, b=1)
    ks = np.arange(1, 51)
    truth = kde.average_tuning_curve(ks)
    res = bootstrap_coverage(
        kde, 50, ks, truth, estimator=estimator, n_trials=scaled(1000, 300),
        n_resamples=1024, confidence=0.95, rng=np.random.default_rng(11),
    )  # fmt: skip
    hi = res.pointwise_high
    assert hi[0] >= 0.85  # near nominal for the first points of the curve
    assert hi[-1] < 0.85  # well below nominal at k = n
    assert res.pointwise[-1] < res.pointwise[0] - 0.1
