"""Small test sets: refusals, exact answers and the default test's choice."""

import numpy as np
import pytest
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats.testset.significance import (
    BOOTSTRAP_LEVEL_ITEMS,
    BOOTSTRAP_MIN_ITEMS,
    choose_test,
    compare_systems,
    mcnemar_exact,
    paired_bootstrap,
    paired_randomization,
)


@pytest.mark.parametrize("n", [1, 2, 3, BOOTSTRAP_MIN_ITEMS - 1])
def test_bootstrap_refuses_too_few_items(n):
    gold = np.zeros(n, int)
    with pytest.raises(ArgumentError, match=f"at least {BOOTSTRAP_MIN_ITEMS} items"):
        paired_bootstrap(gold, gold, gold + 1, ci="percentile", rng=0)


@pytest.mark.parametrize(("n", "exact"), [(1, 1.0), (2, 0.5), (3, 0.25)])
def test_randomization_on_tiny_sets_is_the_exact_permutation_test(n, exact):
    # A right on every item, B wrong: 2^n equally likely swap patterns, two of
    # them (no swap, all swapped) as extreme as observed.
    gold = np.zeros(n, int)
    r = paired_randomization(gold, gold, gold + 1, rng=0)
    assert r.path == "exact" and r.n_resamples == 2**n
    mc = mcnemar_exact(gold, gold, gold + 1)
    assert r.pvalue == exact == mc.pvalue
    # accuracy's default interval (Newcombe's) exists at any n; the bootstrap's does not
    assert r.ci_method == "newcombe" and r.confidence_interval() == mc.confidence_interval()
    boot = paired_randomization(gold, gold, gold + 1, rng=0, ci="bca")
    assert np.isnan(boot.confidence_interval()).all()
    assert "distinct bootstrap resamples" in boot.ci_note


def test_exact_randomization_equals_mcnemar_for_accuracy():
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 3, 40)
    a = np.where(rng.random(40) < 0.8, gold, (gold + 1) % 3)
    b = np.where(rng.random(40) < 0.8, gold, (gold + 1) % 3)
    m = int(np.sum((a == gold) != (b == gold)))
    assert 2**m <= 10_000
    for alt in ("two-sided", "greater", "less"):
        r = paired_randomization(gold, a, b, alternative=alt, rng=0)
        ref = mcnemar_exact(gold, a, b, alternative=alt).pvalue
        assert r.path == "exact" and r.pvalue == pytest.approx(ref, rel=1e-12)


def test_interval_shown_from_ten_items():
    gold = np.zeros(BOOTSTRAP_MIN_ITEMS, int)
    b = gold.copy()
    b[:4] = 1
    r = paired_randomization(gold, gold, b, rng=0)
    assert r.ci_note == "" and np.isfinite(r.confidence_interval()).all()


def test_default_test_follows_the_measured_threshold():
    assert choose_test(BOOTSTRAP_LEVEL_ITEMS - 1)[0] == "randomization"
    assert choose_test(BOOTSTRAP_LEVEL_ITEMS)[0] == "bootstrap"
    rng = np.random.default_rng(0)
    for n, test in ((30, "approximate randomization"), (400, "paired bootstrap")):
        gold = rng.integers(0, 3, n)
        preds = {"a": rng.integers(0, 3, n), "b": rng.integers(0, 3, n)}
        comp = compare_systems(gold, preds, metric="macro-f1", n_resamples=500, rng=0)
        assert comp.results[0].test == test
        assert str(n) in comp.test_reason


def test_exact_path_agrees_with_sampling():
    # The same comparison with sampled swaps (method="compressed"): same p
    # within Monte Carlo error.
    gold = np.zeros(12, int)
    b = gold.copy()
    b[:9] = 1
    exact = paired_randomization(gold, gold, b, rng=0)
    sampled = paired_randomization(
        gold, gold, b, method="compressed", n_resamples=20_000, rng=1
    )
    assert exact.path == "exact" and sampled.path == "compressed"
    assert exact.pvalue == pytest.approx(stats.binomtest(9, 9).pvalue)
    assert abs(sampled.pvalue - exact.pvalue) < 4.5 * np.sqrt(
        exact.pvalue * (1 - exact.pvalue) / 20_000
    ) + 1 / 20_001


# --- calibration of the default test (slow tier) ----------------------------------


def _exchangeable(rng, n, p=0.7, c=3):
    gold = rng.integers(0, c, n)
    a = np.where(rng.random(n) < p, gold, (gold + rng.integers(1, c, n)) % c)
    b = np.where(rng.random(n) < p, gold, (gold + rng.integers(1, c, n)) % c)
    return gold, a, b


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["accuracy", "macro-f1"])
@pytest.mark.parametrize("n", [30, 100, 200])
def test_default_test_holds_its_level(metric, n, scaled, rng):
    """Under exchangeable systems the default test rejects at most alpha (+ MC error)."""
    sims = scaled(2000)
    rejections = 0
    for _ in range(sims):
        gold, a, b = _exchangeable(rng, n)
        comp = compare_systems(
            gold, {"a": a, "b": b}, metric=metric, n_resamples=999, ci="percentile", rng=rng
        )
        rejections += comp.results[0].pvalue <= 0.05
    test = choose_test(n)[0]
    print(f"{metric} n={n} default {test}: {rejections}/{sims} = {rejections / sims:.4f}")
    # At most alpha plus Monte Carlo error: refuse only above the 99.9% point.
    assert rejections <= stats.binom.ppf(0.999, sims, 0.05), (rejections, sims)
