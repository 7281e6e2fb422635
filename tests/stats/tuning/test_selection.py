"""The test-score tuning curve of the configuration chosen on validation, and the choice.

Estimators against brute force over every k-subset (U) and every k-tuple (V),
ties in validation averaged over the tied winners; the jackknife against
explicit leave-one-out; the choice against a plain loop; coverage in the slow
tier against the exact value of a Gaussian model.
"""

import itertools
import os

import numpy as np
import pytest
from scipy import integrate, stats

from vareval.errors import ArgumentError
from vareval.stats import choose_on_validation, selection_curve

SCALE = float(os.environ.get("VAREVAL_SLOW_SCALE", "1"))


def _winner_test(val, tst, idx, hib):
    v, t = val[list(idx)], tst[list(idx)]
    best = v.max() if hib else v.min()
    return t[v == best].mean()  # ties: the average over the tied winners


@pytest.mark.parametrize("hib", [True, False])
@pytest.mark.parametrize("tied", [True, False])
def test_estimators_equal_brute_force_over_all_subsets(rng, hib, tied):
    n = 7
    val = rng.integers(0, 3, n).astype(float) if tied else rng.normal(size=n)
    tst = rng.normal(size=n)
    ks = np.arange(1, n + 1)
    res = selection_curve(val, tst, ks, higher_is_better=hib)
    u = [np.mean([_winner_test(val, tst, c, hib) for c in itertools.combinations(range(n), k)])
         for k in ks]  # fmt: skip
    v = [np.mean([_winner_test(val, tst, c, hib) for c in itertools.product(range(n), repeat=k)])
         for k in ks[:5]]  # fmt: skip
    np.testing.assert_allclose(res.estimate, u, rtol=0, atol=1e-13)
    np.testing.assert_allclose(res.v_statistic[:5], v, rtol=0, atol=1e-13)
    # the validation curve is the ordinary expected best-of-k of the validation scores
    best = max if hib else min
    uv = [np.mean([best(val[list(c)]) for c in itertools.combinations(range(n), k)]) for k in ks]
    np.testing.assert_allclose(res.validation, uv, rtol=0, atol=1e-13)
    np.testing.assert_allclose(res.optimism, (res.validation - res.estimate) * (1 if hib else -1))
    assert res.n_tie_groups == np.unique(val).size


def test_jackknife_equals_explicit_leave_one_out(rng):
    n = 9
    val, tst = rng.integers(0, 4, n).astype(float), rng.normal(size=n)
    ks = np.arange(1, n)
    res = selection_curve(val, tst, ks)
    loo = np.array([[selection_curve(np.delete(val, i), np.delete(tst, i), [k]).estimate[0]
                     for i in range(n)] for k in ks])  # fmt: skip
    se = np.sqrt((n - 1) / n * ((loo - loo.mean(1, keepdims=True)) ** 2).sum(1))
    np.testing.assert_allclose(res.se, se, rtol=1e-12, atol=1e-15)
    t = stats.t(n - 1).ppf(0.975)
    np.testing.assert_allclose(res.lower, res.estimate - t * se, rtol=1e-12)
    assert np.isnan(selection_curve(val, tst, [n]).se[0])  # no interval at k = n


def test_no_ties_is_the_test_score_in_validation_order(rng):
    val, tst = rng.normal(size=30), rng.normal(size=30)
    res = selection_curve(val, tst, [1, 30])
    assert res.estimate[0] == pytest.approx(tst.mean(), abs=1e-14)
    assert res.estimate[1] == tst[np.argmax(val)]


def test_choice_per_unit_against_a_plain_loop(rng):
    units = rng.integers(0, 5, 60)
    val, tst = rng.integers(0, 4, 60) / 4, rng.normal(size=60)
    for hib in (True, False):
        for ties in ("first", "average"):
            sel = choose_on_validation(val, tst, units, higher_is_better=hib, ties=ties)
            order = list(dict.fromkeys(units.tolist()))
            assert sel.unit.tolist() == order
            for j, u in enumerate(order):
                idx = np.flatnonzero(units == u)
                best = val[idx].max() if hib else val[idx].min()
                won = idx[val[idx] == best]
                assert sel.chosen[j] == won[0]
                assert sel.n_tied[j] == won.size and sel.n_searched[j] == idx.size
                want = tst[won].mean() if ties == "average" else tst[won[0]]
                assert sel.test[j] == pytest.approx(want, abs=1e-15)
            assert ("first" in sel.rule) == (ties == "first")


def test_bad_input_names_the_argument():
    with pytest.raises(ArgumentError, match="`validation` and `test`"):
        selection_curve([1, 2, 3], [1, 2], [1])
    with pytest.raises(ArgumentError, match="`test`"):
        selection_curve([1, 2], [1, np.nan], [1])
    with pytest.raises(ArgumentError, match="whole numbers"):
        selection_curve([1, 2], [1, 2], [1.5])
    with pytest.raises(ArgumentError, match="`ties`"):
        choose_on_validation([1, 2], [1, 2], ties="random")
    with pytest.raises(ArgumentError, match="`units`"):
        choose_on_validation([1, 2], [1, 2], [0])


def _expected_max_normal(k):
    f = lambda x: x * k * stats.norm.pdf(x) * stats.norm.cdf(x) ** (k - 1)  # noqa: E731
    return integrate.quad(f, -12, 12)[0]


@pytest.mark.slow
def test_interval_coverage_by_simulation(rng):
    """Validation = q + e1, test = q + e2 (q, e ~ normal): E[test | val] = val / (1 + s^2).

    So the true test score of the best-on-validation of k is
    E[max of k N(0, 1)] / sqrt(1 + s^2), known to quadrature error.
    """
    s, n, ks = 0.7, 40, np.array([1, 2, 3, 5])
    truth = np.array([_expected_max_normal(k) for k in ks]) / np.sqrt(1 + s**2)
    sims = int(4000 * SCALE)
    hits, est = np.zeros(ks.size), np.zeros(ks.size)
    for _ in range(sims):  # each simulated search is one call; the call itself is vectorised
        q = rng.normal(size=n)
        res = selection_curve(q + s * rng.normal(size=n), q + s * rng.normal(size=n), ks)
        hits += (res.lower <= truth) & (truth <= res.upper)
        est += res.estimate
    cover = hits / sims
    sd = np.sqrt(0.95 * 0.05 / sims)
    assert np.all(np.abs(cover - 0.95) < 0.02 + 4 * sd), cover  # near nominal for small k
    np.testing.assert_allclose(est / sims, truth, atol=5 * 0.2 / np.sqrt(sims))  # unbiased


@pytest.mark.slow
def test_rows_marked_below_nominal_are_the_ones_that_under_cover(rng, scaled):
    """n = 20: k <= n / 10 covers about 95 %; the marked rows fall to about 0.83 near k = n."""
    s, n, ks = 0.7, 20, np.array([1, 2, 3, 10, 19])
    truth = np.array([_expected_max_normal(k) for k in ks]) / np.sqrt(1 + s**2)
    sims = scaled(2000, minimum=500)
    hits = np.zeros(ks.size)
    for _ in range(sims):  # one call per simulated search; the call is vectorised over k
        q = rng.normal(size=n)
        res = selection_curve(q + s * rng.normal(size=n), q + s * rng.normal(size=n), ks)
        hits += (res.lower <= truth) & (truth <= res.upper)
    cover = hits / sims
    print(f"coverage at k = {ks.tolist()}: {cover.round(3).tolist()} over {sims}")
    assert res.below_nominal.tolist() == [False, False, True, True, True]
    sd = np.sqrt(0.95 * 0.05 / sims)
    assert np.all(cover[:2] > 0.95 - 0.02 - 4 * sd), cover  # unmarked: near nominal
    assert cover[-1] < 0.9, cover  # marked: the reason for the mark


@pytest.mark.parametrize("hib", [True, False])
def test_blocks_of_k_give_the_all_at_once_numbers_bit_for_bit(rng, monkeypatch, hib):
    # the curve works on a few rows of k at a time so that (k x n) arrays stay small;
    # every row must come out exactly as when all rows are computed in one piece
    from vareval.stats.tuning import selection as module

    n = 3_000
    val = np.round(rng.normal(size=n), 2)  # ties in validation
    tst = val + rng.normal(size=n)
    k = np.r_[1:31, 50, 100, 500, 2_999, 3_000, 5_000]
    whole = module._curve_rows(k, n, module._tie_groups(val, tst, not hib),
                               np.sort(val) if hib else np.sort(val)[::-1])
    monkeypatch.setattr(module, "_BLOCK_CELLS", 4 * n)  # blocks of 4 rows, the last short
    got = selection_curve(val, tst, k, higher_is_better=hib)
    for field, want in zip(["estimate", "v_statistic", "validation", "validation_v", "se"],
                           whole, strict=True):
        np.testing.assert_array_equal(getattr(got, field), want, err_msg=field)
