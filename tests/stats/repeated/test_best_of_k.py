import numpy as np
import pytest
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats import best_of_k, ranking_stability
from vareval.stats.repeated.best_of_k import draw_best


def skewed_losses(n=200, seed=1):
    """A right-skewed, bounded-below loss sample like the repeated-runs note's (median .0034)."""
    rng = np.random.default_rng(seed)
    return 0.0023 + rng.lognormal(np.log(0.0011), 0.6, n)


@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("higher", [True, False])
def test_draw_best_matches_brute_force_law(k, higher):
    """The inverse-transform draw has the law of the best of k draws with replacement."""
    x = np.array([0.3, 0.1, 0.7, 0.7, 0.2, 0.9])
    rng = np.random.default_rng(0)
    fast = draw_best(x, k, 200_000, higher, rng)
    brute = rng.choice(x, size=(200_000, k))
    brute = brute.max(axis=1) if higher else brute.min(axis=1)
    values = np.unique(x)
    table = np.array([[np.sum(fast == v), np.sum(brute == v)] for v in values])
    table = table[table.sum(axis=1) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-4
    # and the exact law: P(max <= v) = F(v)^k, P(min <= v) = 1 - (1 - F(v))^k
    F = np.array([np.mean(x <= v) for v in values])
    exact = F**k if higher else 1 - (1 - F) ** k
    emp = np.array([np.mean(fast <= v) for v in values])
    np.testing.assert_allclose(emp, exact, atol=0.005)


def test_reference_note_shape_for_skewed_losses():
    """Median apparent gap large at k = 1 and shrinking with k; signed difference ~ 0."""
    r = best_of_k(skewed_losses(), (1, 3, 5, 10), higher_is_better=False, rng=0)
    assert r.median_gap[0] > 0.10
    assert np.all(np.diff(r.median_gap) < 0)
    assert np.all(np.diff(r.p90_gap) < 0)
    assert np.all(np.abs(r.mean_signed_difference) < 4 * r.mean_signed_difference_se)
    assert r.gap_quantiles.shape == (4, 2)
    np.testing.assert_array_equal(r.gap_quantiles[:, 0], r.median_gap)


def test_k1_gap_law_is_exact_for_two_points():
    # Sample {1, 2}: at k = 1 the two draws differ with probability 1/2, gap 1/2 relative to 2.
    r = best_of_k([1.0, 2.0], [1], quantiles=[0.25, 0.75], n_resamples=100_000, rng=3)
    np.testing.assert_allclose(r.gap_quantiles[0], [0.0, 0.5])
    r = best_of_k([1.0, 2.0], [1], relative=False, n_resamples=50_000, rng=3)
    assert r.p90_gap[0] == 1.0


def test_same_rng_same_answer_and_global_seed_has_no_effect():
    x = skewed_losses(50)
    np.random.seed(1)
    a = best_of_k(x, n_resamples=1000, rng=42)
    np.random.seed(2)
    b = best_of_k(x, n_resamples=1000, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a.gap_quantiles, b.gap_quantiles)
    s1 = ranking_stability(x, x + 0.0001, n_resamples=500, rng=7)
    s2 = ranking_stability(x, x + 0.0001, n_resamples=500, rng=7)
    np.testing.assert_array_equal(s1.mean_of_k, s2.mean_of_k)


def test_ranking_stability_k1_equals_exact_pairwise_probability():
    a = np.array([0.80, 0.83, 0.85, 0.86, 0.90])
    b = np.array([0.79, 0.81, 0.84, 0.85])
    r = ranking_stability(a, b, max_k=3, n_resamples=200_000, rng=0)
    s = np.sign(a[:, None] - b[None, :])
    exact = np.mean((s > 0) + 0.5 * (s == 0))  # a has the better mean
    assert r.reference == "a"
    for curve in (r.best_of_k, r.mean_of_k, r.median_of_k):
        assert curve[0] == pytest.approx(exact, abs=0.005)
    assert r.mean_of_k[2] > r.mean_of_k[0]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: best_of_k([1.0, 2.0], [0]), "ks"),
        (lambda: best_of_k([1.0, 2.0], [-3]), "ks"),
        (lambda: best_of_k([1.0, 2.0], [1.5]), "ks"),
        (lambda: best_of_k([0.0, 2.0]), "relative"),
        (lambda: best_of_k([1.0, 2.0], quantiles=[1.5]), "quantiles"),
        (lambda: best_of_k([1.0, 2.0], n_resamples=0), "n_resamples"),
        (lambda: best_of_k([1.0, 2.0], rng="x"), "rng"),
        (lambda: ranking_stability([1.0, 2.0], [2.0, 1.0]), "equal means"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()
