"""Friedman / Nemenyi / Wilcoxon-Holm and the Bayesian signed-rank test.

Reference values: scipy (Friedman chi-square, Wilcoxon), autorank 1.3.0 and
baycomp 1.0.3 (stored by tests/data/ranking/make_reference.py; live tests
importorskip them), Demsar (2006)'s table of critical values.
"""

import contextlib
import io
import itertools
import json
import pathlib

import numpy as np
import pytest
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats import (
    bayesian_signed_rank,
    critical_difference,
    friedman,
    rank_methods,
    ranks,
)

REF = json.loads((pathlib.Path(__file__).parents[2] / "data/ranking/reference.json").read_text())


class TestFriedman:
    @pytest.mark.parametrize("case", REF["friedman"])
    def test_chi_square_matches_scipy(self, case):
        x = np.array(case["scores"])
        r = friedman(x)
        ref = stats.friedmanchisquare(*x.T)
        assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)

    def test_iman_davenport_by_hand(self):
        # Demsar (2006), section 3.2.2: four methods on 14 data sets, chi2 = 9.28, F = 3.69
        n, k, chi2 = 14, 4, 9.28
        f = (n - 1) * chi2 / (n * (k - 1) - chi2)
        assert f == pytest.approx(3.69, abs=0.01)
        # a matrix with exactly those mean ranks' spread is not needed: check the formula path
        x = np.random.default_rng(0).normal(size=(n, k)) + np.arange(k)
        r = friedman(x)
        expect = (n - 1) * r.statistic / (n * (k - 1) - r.statistic)
        assert r.iman_davenport == pytest.approx(expect)
        assert r.iman_davenport_pvalue == pytest.approx(
            stats.f.sf(expect, k - 1, (k - 1) * (n - 1))
        )
        assert r.df == (k - 1, (k - 1) * (n - 1))

    def test_floating_point_rounding_does_not_break_a_tie(self):
        # ties are judged relative to the data set's largest score
        got = ranks([[0.1 + 0.2, 0.3, 0.1], [1e-20, 0.0, -1.0], [1e-20, 0.0, -1e-20]])
        assert (got == [[1.5, 1.5, 3], [1.5, 1.5, 3], [1, 2, 3]]).all()

    def test_lower_is_better_reverses_ranks(self):
        x = np.random.default_rng(1).normal(size=(6, 3))
        up, down = friedman(x), friedman(x, higher_is_better=False)
        assert np.allclose(up.mean_ranks + down.mean_ranks, 4)
        assert up.statistic == pytest.approx(down.statistic)


class TestCriticalDifference:
    @pytest.mark.parametrize(
        ("k", "q"), [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (10, 3.164)]
    )
    def test_demsar_table(self, k, q):
        # Demsar (2006) Table 5(a): q_0.05 = studentised range / sqrt(2); CD = q sqrt(k(k+1)/(6N))
        n = 7
        assert critical_difference(k, n) == pytest.approx(
            q * np.sqrt(k * (k + 1) / (6 * n)), rel=2e-3
        )

    @pytest.mark.parametrize("case", REF["friedman"])
    def test_autorank_parity(self, case):
        x = np.array(case["scores"])
        names = list(case["meanrank"])
        names = [f"m{i}" for i in range(x.shape[1])]
        r = rank_methods(x, names)
        assert r.friedman.pvalue == pytest.approx(case["pvalue"], rel=1e-9)
        # autorank's q comes from statsmodels' qsturng, an interpolated table
        assert r.critical_difference == pytest.approx(case["cd"], rel=1e-4)
        for name, rank in case["meanrank"].items():
            assert r.mean_ranks[names.index(name)] == pytest.approx(rank)
        assert sorted(sorted(r.names[i] for i in c) for c in r.cliques) == sorted(case["groups"])


class TestRankMethods:
    def test_pairwise_tests_match_scipy_and_holm(self):
        x = np.random.default_rng(2).normal(size=(15, 4)) + [0, 0.2, 0.5, 1.0]
        r = rank_methods(x, list("abcd"))
        raw = [stats.wilcoxon(x[:, i], x[:, j]).pvalue for i in range(4) for j in range(i + 1, 4)]
        got = [r.wilcoxon_pvalue[i, j] for i in range(4) for j in range(i + 1, 4)]
        assert np.allclose(got, raw)
        order = np.argsort(raw)
        holm = np.minimum(1, np.maximum.accumulate((6 - np.arange(6)) * np.array(raw)[order]))
        expect = np.empty(6)
        expect[order] = holm
        assert np.allclose(
            [r.wilcoxon_pvalue_holm[i, j] for i in range(4) for j in range(i + 1, 4)], expect
        )
        assert np.allclose(r.wilcoxon_pvalue_holm, r.wilcoxon_pvalue_holm.T)

    def test_nemenyi_pvalue_is_alpha_at_the_critical_difference(self):
        n, k = 10, 5
        cd = critical_difference(k, n, 0.05)
        q = cd / np.sqrt(k * (k + 1) / (12 * n))
        assert stats.studentized_range.sf(q, k, np.inf) == pytest.approx(0.05, rel=1e-6)
        x = np.random.default_rng(3).normal(size=(n, k))
        r = rank_methods(x)
        diff = np.abs(r.mean_ranks[:, None] - r.mean_ranks[None, :])
        off = ~np.eye(k, dtype=bool)
        assert ((r.nemenyi_pvalue[off] < 0.05) == (diff[off] > cd)).all()

    def test_cliques_cover_every_nonsignificant_pair(self):
        x = np.random.default_rng(4).normal(size=(10, 6)) + np.linspace(0, 1.5, 6)
        r = rank_methods(x)
        for i in range(6):
            for j in range(6):
                if i != j and abs(r.mean_ranks[i] - r.mean_ranks[j]) <= r.critical_difference:
                    assert any(i in c and j in c for c in r.cliques)

    @pytest.mark.parametrize(
        ("scores", "match"),
        [
            (np.ones((5, 1)), "at least 2 methods"),
            (np.ones((1, 3)), "at least 2 data sets"),
            ([[1.0, np.nan], [2.0, 3.0]], "NaN"),
            (np.ones(4), "two-dimensional"),
        ],
    )
    def test_bad_input(self, scores, match):
        with pytest.raises(ArgumentError, match=match):
            rank_methods(scores)


class TestBayesianSignedRank:
    @pytest.mark.parametrize("case", REF["bayes_signed_rank"])
    def test_baycomp_parity_within_monte_carlo_error(self, case):
        x, y = np.array(case["x"]), np.array(case["y"])
        # baycomp's x is "left": left means x better
        r = bayesian_signed_rank(
            x, y, rope=case["rope"], prior=case["prior"], n_resamples=50_000, rng=0
        )
        for got, ref in zip((r.p_left, r.p_rope, r.p_right), case["probs"], strict=True):
            se = np.sqrt(2 * max(ref * (1 - ref), 1e-4) / case["nsamples"])
            assert abs(got - ref) < 5 * se

    def test_live_baycomp(self):
        baycomp = pytest.importorskip("baycomp")
        rng = np.random.default_rng(5)
        x = rng.normal(0.8, 0.05, 12)
        y = x + rng.normal(0.01, 0.02, 12)
        ref = baycomp.SignedRankTest(x, y, rope=0.01, nsamples=20_000, random_state=1).probs()
        r = bayesian_signed_rank(x, y, rope=0.01, n_resamples=20_000, rng=1)
        for got, p in zip((r.p_left, r.p_rope, r.p_right), ref, strict=True):
            assert abs(got - p) < 5 * np.sqrt(2 * max(p * (1 - p), 1e-4) / 20_000)

    def test_exact_posterior_mean_for_two_points(self):
        # with rope 0 and d = (0, 1, 1) (prior pseudo-point plus two data sets), left has
        # probability 1 - w0^2 - w0 (w1 + w2)... by simulation of the Dirichlet directly:
        a, b = np.array([1.0, 1.0]), np.array([0.0, 0.0])
        r = bayesian_signed_rank(a, b, prior=1.0, n_resamples=200_000, rng=0)
        # sum_ij w_i w_j [d_i + d_j > 0] + ties / 2 = 1 - w0^2 / 2, and E[w0^2] = 1/6
        # under Dir(1, 1, 1)
        assert r.mean_left == pytest.approx(1 - (2 / 12) / 2, abs=3e-3)

    def test_same_rng_same_answer_and_global_seed_ignored(self):
        x, y = np.arange(8.0), np.arange(8.0) + np.linspace(-0.5, 0.6, 8)
        np.random.seed(1)
        r1 = bayesian_signed_rank(x, y, rope=0.1, n_resamples=5000, rng=3)
        np.random.seed(2)
        r2 = bayesian_signed_rank(x, y, rope=0.1, n_resamples=5000, rng=3)
        assert r1 == r2

    def test_bad_input(self):
        with pytest.raises(ArgumentError, match="paired"):
            bayesian_signed_rank([1, 2, 3], [1, 2])
        with pytest.raises(ArgumentError, match="rope"):
            bayesian_signed_rank([1, 2, 3], [1, 2, 4], rope=-1)


def test_rank_methods_matches_live_autorank():
    autorank = pytest.importorskip("autorank")
    import pandas as pd

    x = np.random.default_rng(6).normal(size=(9, 4)) + [0, 0.4, 0.8, 1.2]
    df = pd.DataFrame(x, columns=list("wxyz"))
    with contextlib.redirect_stdout(io.StringIO()):
        res = autorank.autorank(df, alpha=0.05, force_mode="nonparametric", verbose=False)
    r = rank_methods(x, list("wxyz"))
    assert r.friedman.pvalue == pytest.approx(res.pvalue)
    assert r.critical_difference == pytest.approx(res.cd, rel=1e-4)
    assert dict(zip(r.names, r.mean_ranks, strict=True)) == pytest.approx(
        res.rankdf.meanrank.to_dict()
    )


@pytest.mark.parametrize("n", [6, 12, 13, 14, 20, 30, 50, 51, 60, 100])
def test_pairwise_wilcoxon_equals_one_call_per_pair(n):
    # Ties, zero differences and equal columns mixed in: each group of pairs
    # must get the method scipy chooses for that pair alone.
    from vareval.stats.tasks.ranking import pairwise_wilcoxon_pvalues
    from vareval.stats.testset.significance import paired_wilcoxon

    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 7))
    x[:, 1] = np.round(x[:, 1], 0)
    x[:, 2] = np.round(x[:, 0] + rng.normal(0, 0.3, n), 1)
    x[: n // 2, 3] = x[: n // 2, 0]
    x[:, 4] = x[:, 0]
    x[:, 5] = np.round(x[:, 5], 1)
    pairs = np.triu_indices(7, 1)
    fast = pairwise_wilcoxon_pvalues(x, pairs)
    slow = [paired_wilcoxon(x[:, i], x[:, j]).pvalue for i, j in zip(*pairs, strict=True)]
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_wilcoxon_equals_scipy_on_random_tables(seed):
    # exact (no ties, <= 50 data sets), normal approximation (ties, zeros or > 50)
    # and permutation (<= 13 with ties): every pair against scipy.stats.wilcoxon alone
    from vareval.stats.tasks.ranking import pairwise_wilcoxon_pvalues

    rng = np.random.default_rng(seed)
    n = int(rng.choice([3, 9, 13, 14, 25, 50, 51, 80]))
    x = rng.normal(size=(n, 9))
    x[:, :3] = np.round(x[:, :3] * 2) / 2  # ties, zero differences among the three
    x[: n // 3, 6] = x[: n // 3, 7]
    pairs = np.triu_indices(9, 1)
    fast = pairwise_wilcoxon_pvalues(x, pairs)
    slow = [
        1.0 if np.all(x[:, i] == x[:, j]) else stats.wilcoxon(x[:, i], x[:, j]).pvalue
        for i, j in zip(*pairs, strict=True)
    ]
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


def test_bayesian_signed_ranks_equal_one_call_per_pair():
    from vareval.stats import bayesian_signed_ranks

    rng = np.random.default_rng(4)
    x = np.round(rng.normal(0, 0.02, (12, 5)), 2)
    x[:, 2] = x[:, 1]
    pairs = [(0, 1), (1, 2), (4, 0), (3, 2)]
    for rope in (0.0, 0.01):
        many = bayesian_signed_ranks(x, pairs, rope=rope, n_resamples=3000, rng=7)
        gens = np.random.default_rng(7).spawn(len(pairs))
        for (i, j), got, gen in zip(pairs, many, gens, strict=True):
            one = bayesian_signed_rank(x[:, i], x[:, j], rope=rope, n_resamples=3000, rng=gen)
            assert got.to_dict() == one.to_dict()


@pytest.mark.parametrize("k", [2, 3, 8, 50, 100])
def test_range_distribution_equals_scipys_studentized_range(k):
    from vareval.stats.tasks.ranking import range_isf, range_sf

    q = np.linspace(0.05, 9, 25)
    ref = stats.studentized_range.sf(q, k, np.inf)
    np.testing.assert_allclose(range_sf(q, k), ref, rtol=1e-6, atol=1e-13)
    for alpha in (0.05, 0.1):
        assert range_isf(alpha, k) == pytest.approx(
            stats.studentized_range.ppf(1 - alpha, k, np.inf), rel=1e-7
        )


def _signed_rank_by_matrix(a, b, rope, prior, n, seed):
    # The posterior by the O(n^2) quadratic form w' A w, the same Dirichlet draws
    # (normalised gammas, the differences in sorted order, the prior's in its place).
    d = np.concatenate([[0.0], np.asarray(a) - np.asarray(b)])
    order = np.argsort(d, kind="stable")
    first = int(np.flatnonzero(order == 0)[0])
    d = d[order]
    sums = d[:, None] + d[None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (-sums > 2 * rope) + 0.5 * (-sums == 2 * rope)
    rng = np.random.default_rng(seed)
    g = np.empty((d.size, n))
    g[first] = rng.standard_gamma(prior, n)
    g[np.arange(d.size) != first] = rng.standard_exponential((d.size - 1, n))
    w = (g / g.sum(axis=0)).T
    left, right = ((w @ above) * w).sum(1), ((w @ below) * w).sum(1)
    if rope == 0:
        right = 1 - left
    post = np.column_stack([left, 1 - left - right if rope else 0 * left, right])
    return np.bincount(post.argmax(1), minlength=3) / n, post.mean(0)


def test_signed_rank_suffix_sums_equal_the_quadratic_form():
    rng = np.random.default_rng(8)
    for trial in range(20):
        n = int(rng.integers(2, 40))
        a, b = np.round(rng.normal(0, 1, n), 1), np.round(rng.normal(0.1, 1, n), 1)
        rope, prior = [0.0, 0.05, 0.1, 0.5][trial % 4], [0.5, 1.0][trial % 2]
        r = bayesian_signed_rank(a, b, rope=rope, prior=prior, n_resamples=2000, rng=trial)
        wins, means = _signed_rank_by_matrix(a, b, rope, prior, 2000, trial)
        np.testing.assert_allclose([r.p_left, r.p_rope, r.p_right], wins, atol=1e-12)
        np.testing.assert_allclose([r.mean_left, r.mean_rope, r.mean_right], means, atol=1e-12)


@pytest.mark.parametrize("k", [2, 5, 20, 100, 1000])
def test_range_interpolant_equals_the_quadrature_on_rank_gaps(k):
    # Nemenyi's gaps lie on a lattice of step 1 / (2 N) in mean rank: many values per unit of q
    from vareval.stats.tasks.ranking import _range_sf_many, range_sf

    rng = np.random.default_rng(k)
    for n in (10, 100, 1000):
        step = 0.5 / n / np.sqrt(k * (k + 1) / (12 * n))
        top = min(25.0, 2 * (k - 1) * np.sqrt(12 * n / (k * (k + 1))))
        q = np.unique(rng.integers(0, int(top / step) + 1, 4000)) * step
        ref = range_sf(q, k)
        np.testing.assert_allclose(_range_sf_many(q, k), ref, rtol=1e-11, atol=1e-300)
    q = np.linspace(0.05, 9, 2000)  # and against scipy
    np.testing.assert_allclose(
        _range_sf_many(q, k)[::80], stats.studentized_range.sf(q[::80], k, np.inf),
        rtol=1e-6, atol=1e-13,
    )


def test_range_quantile_by_newton_equals_bracketing():
    from scipy.optimize import brentq

    from vareval.stats.tasks.ranking import range_isf, range_sf

    rng = np.random.default_rng(9)
    for k, alpha in zip(rng.integers(2, 500, 12), 10 ** rng.uniform(-8, -0.1, 12), strict=True):
        ref = brentq(lambda q, k=k, a=alpha: range_sf(q, k) - a, 0.0, 20.0, xtol=1e-13)
        assert range_isf(alpha, int(k)) == pytest.approx(ref, rel=1e-12, abs=2e-13)


def test_fast_signed_ranks_equal_the_exact_path():
    # continuous rows (fast path), ties, zeros, -0.0, the smallest subnormals and
    # |d| differing only in the last bit (the bit the fast key gives to the sign)
    from vareval.stats.tasks.ranking import _signed_ranks, _signed_ranks_exact

    rng = np.random.default_rng(10)
    d = rng.normal(size=(400, 37))
    d[::7, :5] = np.round(d[::7, :5])
    d[1::9, 3] = 0.0
    d[2::9, 4] = -0.0
    d[3::9, :2] = [5e-324, -5e-324]
    d[4::9, 1] = np.nextafter(np.abs(d[4::9, 0]), np.inf)
    d[5::9, 1] = -d[5::9, 0]
    d[6::9, 2] = np.where(d[6::9, 2] < 0, -np.inf, np.inf)  # differences that overflowed
    for fast, exact in zip(_signed_ranks(d), _signed_ranks_exact(d), strict=True):
        np.testing.assert_array_equal(fast, exact)


def test_pairwise_wilcoxon_in_chunks_equals_one_pass():
    # enough pairs for several chunks: every chunk's p equals the exact path's on all at once
    from vareval.stats.tasks import ranking

    rng = np.random.default_rng(11)
    for n in (20, 80):
        x = rng.normal(size=(n, 70))
        x[:, :10] = np.round(x[:, :10], 1)
        pairs = np.triu_indices(70, 1)
        fast = ranking.pairwise_wilcoxon_pvalues(x, pairs)
        r_plus, count, ties = ranking._signed_ranks_exact(x.T[pairs[0]] - x.T[pairs[1]])
        normal = (count == n) & (ties == 0) if n > 50 else np.zeros(count.size, dtype=bool)
        c = count[normal].astype(float)
        se = np.sqrt((c * (c + 1) * (2 * c + 1) - ties[normal] / 2) / 24)
        z = (r_plus[normal] - c * (c + 1) / 4) / se
        np.testing.assert_allclose(fast[normal], 2 * stats.norm.sf(np.abs(z)), rtol=1e-12)
        some = rng.choice(len(pairs[0]), 40, replace=False)
        slow = [stats.wilcoxon(x[:, pairs[0][s]], x[:, pairs[1][s]]).pvalue for s in some]
        np.testing.assert_allclose(fast[some], slow, rtol=1e-12, atol=1e-15)


def test_ranks_equal_scipy_rankdata_on_random_tables():
    rng = np.random.default_rng(12)
    for trial in range(60):
        n, k = int(rng.integers(1, 40)), int(rng.integers(2, 30))
        x = np.round(rng.normal(size=(n, k)), trial % 3)  # ties in most tables
        scale = np.abs(x).max(axis=1, keepdims=True)
        scale[scale == 0] = 1
        for higher in (True, False):
            ref = stats.rankdata(np.round(x / scale, 12) * (-1 if higher else 1), axis=1)
            np.testing.assert_array_equal(ranks(x, higher_is_better=higher), ref)


@pytest.mark.parametrize("k, n, tie", [(2, 5, False), (3, 3, False), (3, 3, True), (4, 2, False)])
def test_infinite_iman_davenport_gives_the_exact_permutation_pvalue(k, n, tie):
    """Every data set ranks the methods alike: F = inf printed `p < 1e-10`. The exact
    p-value is the share of within-data-set permutations with a chi-square at least as large,
    counted here by enumerating every one."""
    row = np.arange(k, 0, -1.0)
    if tie:
        row[-1] = row[-2]
    x = np.tile(row, (n, 1))
    r = friedman(x)
    assert np.isinf(r.iman_davenport) and np.isnan(r.iman_davenport_pvalue)
    perms = np.array(list(itertools.permutations(row)))
    hits = total = 0
    for combo in itertools.product(range(len(perms)), repeat=n):
        total += 1
        hits += friedman(perms[list(combo)]).statistic >= r.statistic - 1e-9
    assert r.exact_pvalue == pytest.approx(hits / total, rel=1e-12)
    assert np.isnan(friedman(x + np.eye(n, k)[::-1] * 10).exact_pvalue)  # a finite F: none


def test_staircase_forms_equal_the_dense_quadratic_forms():
    # Both forms against g' A g with the floating matrix, on sizes where the staircase
    # splits, with ties on the rope's edge (a 0.05 grid), exact zeros, one-signed
    # differences, and a sum that rounds onto the edge: (1 - 2^-53) + 1 == 2 * 1.
    from vareval.stats.tasks.ranking import _StaircaseForm

    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(1, 300))
        d = [rng.normal(0, 1, n), np.round(rng.normal(0, 0.2, n) / 0.05) * 0.05,
             np.zeros(n), np.abs(rng.normal(0, 1, n)), -np.abs(rng.normal(0, 1, n)),
             rng.choice([np.nextafter(1.0, 0.0), 1.0, -1.0, 3.0], n)][trial % 6]  # fmt: skip
        rope = [0.0, 0.05, 0.1, 1.0][trial % 4] if trial % 6 != 5 else 1.0
        d = np.sort(np.concatenate([[0.0], d]))
        sums = d[:, None] + d[None, :]
        forms = [(sums > 2 * rope) + 0.5 * (sums == 2 * rope)]
        if rope:
            forms.append((-sums > 2 * rope) + 0.5 * (-sums == 2 * rope))
        g = rng.standard_exponential((d.size, 5))
        out = np.empty((len(forms), 5))
        total = _StaircaseForm(d, rope).values(g, out)
        for got, form in zip(out, forms, strict=True):
            np.testing.assert_allclose(got, ((form @ g) * g).sum(0), rtol=1e-12)
        np.testing.assert_allclose(total, g.sum(0), rtol=1e-13)
