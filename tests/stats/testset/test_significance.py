import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from vareval.errors import ArgumentError
from vareval.stats.testset import resampling as rs
from vareval.stats.testset.significance import (
    adjust_pvalues,
    compare_systems,
    mcnemar_exact,
    paired_bootstrap,
    paired_randomization,
    paired_t,
    paired_wilcoxon,
)

# The textbook example's test set: n = 10 documents, A right on 7, B on 5.
# Arranged as 5 both right, 2 only A right, 3 both wrong.
GOLD10 = np.ones(10, int)
A10 = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0])
B10 = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0])


def _mc_close(p, exact, b):
    """Within 4.5 Monte Carlo standard errors (plus smoothing's 1/(B+1))."""
    se = np.sqrt(exact * (1 - exact) / b)
    assert abs(p - exact) <= 4.5 * se + 1.0 / (b + 1)


def _skewed_pair(rng, n=200, pa=0.75, pb=0.7, c=3):
    g = rng.integers(0, c, n)
    a = np.where(rng.random(n) < pa, g, (g + rng.integers(1, c, n)) % c)
    b = np.where(rng.random(n) < pb, g, (g + rng.integers(1, c, n)) % c)
    return g, a, b


class TestTextbookExample:
    def test_numbers(self):
        r = paired_bootstrap(
            GOLD10, A10, B10, alternative="greater", n_resamples=10_000, rng=1
        )
        assert (r.score_a, r.score_b) == (0.7, 0.5)
        assert r.statistic == pytest.approx(0.2)
        assert r.n == 10 and r.path == "compressed"
        # The 2-delta rule, read off the resampled distribution itself.
        assert r.hits == np.count_nonzero(r.distribution >= 0.4 - 1e-9)
        assert r.pvalue == (r.hits + 1) / (10_000 + 1)
        # Exact: delta* = (#only-A drawn)/10 with #only-A ~ Binomial(10, 0.2);
        # delta* >= 2 delta = 0.4 iff #only-A >= 4.
        _mc_close(r.pvalue, stats.binom.sf(3, 10, 0.2), 10_000)
        lo, hi = r.confidence_interval()
        assert lo <= 0.2 <= hi

    def test_unsmoothed_flag(self):
        r = paired_bootstrap(
            GOLD10, A10, B10, alternative="greater", rng=1, smooth=False
        )
        assert r.pvalue == r.hits / r.n_resamples and not r.smooth

    def test_two_delta_rule_is_the_plain_loop(self):
        """The textbook's loop, written out, against vareval on a small case."""
        gold = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2])
        a = np.array([0, 1, 2, 0, 1, 2, 0, 1, 0, 2, 1, 2])
        b = np.array([0, 1, 1, 0, 2, 2, 1, 1, 0, 2, 0, 2])
        acc = lambda g, p: float(np.mean(g == p))  # noqa: E731
        n_res, seed = 4000, 12345

        def reference(g, pa, pb):
            rng = np.random.default_rng(seed)
            delta = acc(g, pa) - acc(g, pb)
            hits = 0
            for _ in range(n_res):
                idx = rng.integers(0, g.size, size=g.size)
                if acc(g[idx], pa[idx]) - acc(g[idx], pb[idx]) >= 2 * delta - 1e-9:
                    hits += 1
            return hits

        ref_hits = reference(gold, a, b)
        # The slow callable path draws the same indices: identical count.
        loop = paired_bootstrap(
            gold,
            a,
            b,
            metric=acc,
            n_resamples=n_res,
            alternative="greater",
            rng=seed,
            progress=False,
        )
        assert loop.path == "loop" and loop.hits == ref_hits
        # The compressed path: same p-value within Monte Carlo error.
        fast = paired_bootstrap(
            gold, a, b, n_resamples=n_res, alternative="greater", rng=seed
        )
        assert fast.path == "compressed"
        _mc_close(fast.pvalue, ref_hits / n_res, n_res)


def test_ties_count_as_hits_despite_rounding():
    from vareval.stats.testset.significance import _bootstrap_hits, _randomization_hits

    # 0.1 + 0.2 != 0.3 in floating point; both are the threshold 2 * 0.15.
    dist = np.array([0.1 + 0.2, 0.3, 0.29, -0.3])
    assert _bootstrap_hits(dist, 0.15, "greater") == 2
    assert _bootstrap_hits(dist, -0.15, "less") == 1
    assert _bootstrap_hits(dist, 0.15, "two-sided") == 3  # |d - 0.15| >= 0.15
    assert _randomization_hits(dist, 0.3, "two-sided") == 3
    assert _randomization_hits(dist, 0.1 + 0.2, "greater") == 2


class TestPathsAgree:
    @pytest.mark.parametrize("name", ["accuracy", "macro-f1"])
    @pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
    def test_same_pvalue(self, name, test):
        g, a, b = _skewed_pair(np.random.default_rng(11), n=300, pa=0.72, pb=0.66)
        b_res = 20_000
        kw = dict(metric=name, n_resamples=b_res, ci="percentile")
        r1 = test(g, a, b, method="compressed", rng=1, **kw)
        r2 = test(g, a, b, method="index", rng=2, **kw)
        # the index path runs in the compiled kernel where it was built
        assert r1.n_types < 30 and (r1.path, r2.path.removesuffix("-compiled")) == (
            "compressed", "index")
        assert r1.statistic == r2.statistic
        p = (r1.pvalue + r2.pvalue) / 2
        se = np.sqrt(2 * p * (1 - p) / b_res)
        assert abs(r1.pvalue - r2.pvalue) < 4.5 * se + 2 / b_res
        np.testing.assert_allclose(
            r1.confidence_interval(), r2.confidence_interval(), atol=0.01
        )


class TestRandomization:
    def test_accuracy_randomization_is_mcnemar(self):
        g, a, b = _skewed_pair(np.random.default_rng(3), n=150, pa=0.8, pb=0.7)
        exact = mcnemar_exact(g, a, b)
        r = paired_randomization(g, a, b, n_resamples=20_000, rng=5)
        _mc_close(r.pvalue, exact.pvalue, 20_000)
        for alt in ("greater", "less"):
            r = paired_randomization(
                g, a, b, n_resamples=20_000, rng=5, alternative=alt
            )
            _mc_close(r.pvalue, mcnemar_exact(g, a, b, alternative=alt).pvalue, 20_000)

    def test_definitions(self):
        g, a, b = _skewed_pair(np.random.default_rng(4), n=100)
        r = paired_randomization(g, a, b, metric="macro-f1", n_resamples=2000, rng=0)
        d = r.distribution
        assert r.hits == np.count_nonzero(np.abs(d) >= abs(r.statistic) - 1e-9)
        assert r.pvalue == (r.hits + 1) / 2001
        assert abs(d.mean()) < 4 * d.std() / np.sqrt(d.size)  # centred at 0

    def test_identical_systems(self):
        g, a, _ = _skewed_pair(np.random.default_rng(4), n=50)
        r = paired_randomization(g, a, a, n_resamples=100, rng=0)
        assert r.statistic == 0 and r.pvalue == 1.0
        # the default interval for accuracy is Newcombe's: no discordant item
        # in 50 does not make the population difference exactly 0
        lo, hi = r.confidence_interval()
        assert lo < 0 < hi and (lo, hi) == mcnemar_exact(g, a, a).confidence_interval()
        bca = paired_randomization(g, a, a, n_resamples=100, rng=0, ci="bca")
        assert bca.confidence_interval() == (0.0, 0.0)
        assert paired_bootstrap(g, a, a, n_resamples=100, rng=0).pvalue == 1.0


class TestConfidenceIntervals:
    def test_bca_matches_scipy_for_a_mean_difference(self):
        rng = np.random.default_rng(8)
        x = rng.gamma(2.0, 1.0, 80)
        y = x + rng.exponential(0.5, 80) - 0.3
        ref = stats.bootstrap(
            (x, y),
            lambda u, v, axis: u.mean(axis) - v.mean(axis),
            paired=True,
            vectorized=True,
            n_resamples=40_000,
            method="BCa",
            rng=1,
        ).confidence_interval
        got = paired_bootstrap(None, x, y, metric="mean", n_resamples=40_000, rng=2)
        np.testing.assert_allclose(
            got.confidence_interval(), (ref.low, ref.high), atol=0.02
        )
        per = paired_bootstrap(
            None, x, y, metric="mean", n_resamples=40_000, rng=2, ci="percentile"
        )
        ref = stats.bootstrap(
            (x, y),
            lambda u, v, axis: u.mean(axis) - v.mean(axis),
            paired=True,
            vectorized=True,
            n_resamples=40_000,
            method="percentile",
            rng=1,
        ).confidence_interval
        np.testing.assert_allclose(
            per.confidence_interval(), (ref.low, ref.high), atol=0.02
        )


class TestExactTests:
    def test_mcnemar_matches_statsmodels(self):
        for seed in range(5):
            g, a, b = _skewed_pair(np.random.default_rng(seed), n=60, pa=0.8, pb=0.65)
            r = mcnemar_exact(g, a, b)
            ra, rb = a == g, b == g
            table = [
                [np.sum(ra & rb), np.sum(ra & ~rb)],
                [np.sum(~ra & rb), np.sum(~ra & ~rb)],
            ]
            assert r.pvalue == pytest.approx(
                mcnemar(table, exact=True).pvalue, rel=1e-10
            )
            assert r.estimate == pytest.approx(np.mean(ra) - np.mean(rb))

    def test_t_and_wilcoxon_match_scipy(self):
        rng = np.random.default_rng(1)
        a, b = rng.random(30), rng.random(30)
        for alt in ("two-sided", "greater", "less"):
            assert paired_t(a, b, alternative=alt).pvalue == pytest.approx(
                stats.ttest_rel(a, b, alternative=alt).pvalue
            )
            assert paired_wilcoxon(a, b, alternative=alt).pvalue == pytest.approx(
                stats.wilcoxon(a, b, alternative=alt).pvalue
            )
        t = paired_t(a, b)
        ci = stats.ttest_rel(a, b).confidence_interval()
        assert t.confidence_interval() == pytest.approx((ci.low, ci.high))


class TestMultipleComparisons:
    @settings(max_examples=100, deadline=None)
    @given(
        st.lists(st.floats(0, 1), min_size=1, max_size=12),
        st.sampled_from(["holm", "bonferroni"]),
    )
    def test_adjust_matches_statsmodels(self, p, method):
        ref = multipletests(p, method=method)[1]
        got = adjust_pvalues(p, method)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(got[order]) >= -1e-15)  # monotone in sorted order

    def test_compare_systems_against_baseline_and_all_pairs(self):
        rng = np.random.default_rng(2)
        g, a, b = _skewed_pair(rng, n=400, pa=0.8, pb=0.7)
        _, c, _ = _skewed_pair(rng, n=400, pa=0.72)
        c = np.where(rng.random(400) < 0.72, g, (g + 1) % 3)
        preds = {"new": a, "base": b, "other": c}
        res = compare_systems(
            g, preds, baseline="base", metric="macro-f1", n_resamples=2000, rng=0
        )
        assert res.pairs == (("new", "base"), ("other", "base"))
        np.testing.assert_allclose(
            res.adjusted_pvalues,
            multipletests([r.pvalue for r in res.results], method="holm")[1],
        )
        assert res.scores["base"] == res.results[0].score_b
        allp = compare_systems(
            g,
            preds,
            all_pairs=True,
            test="randomization",
            correction="bonferroni",
            n_resamples=500,
            rng=0,
        )
        assert len(allp.pairs) == 3 and allp.baseline is None
        assert len(allp.records()) == 3
        first = compare_systems(g, preds, n_resamples=200, rng=0)
        assert first.baseline == "new"

    def test_compare_bad_inputs(self):
        g = np.zeros(5, int)
        with pytest.raises(ArgumentError, match="lengths differ"):
            compare_systems(g, {"a": g, "b": g[:4]})
        with pytest.raises(ArgumentError, match="baseline"):
            compare_systems(g, {"a": g, "b": g}, baseline="c")
        with pytest.raises(ArgumentError, match="at least two"):
            compare_systems(g, {"a": g})
        with pytest.raises(ArgumentError, match="correction"):
            compare_systems(g, {"a": g, "b": g}, correction="fdr")


class TestDeterminism:
    @pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
    def test_same_rng_same_answer_global_seed_ignored(self, test):
        g, a, b = _skewed_pair(np.random.default_rng(0), n=80)
        np.random.seed(1)  # noqa: NPY002
        r1 = test(g, a, b, metric="macro-f1", n_resamples=300, rng=42)
        np.random.seed(2)  # noqa: NPY002
        r2 = test(g, a, b, metric="macro-f1", n_resamples=300, rng=42)
        r3 = test(
            g, a, b, metric="macro-f1", n_resamples=300, rng=np.random.default_rng(42)
        )
        assert r1.to_dict() == r2.to_dict() == r3.to_dict()
        np.testing.assert_array_equal(r1.distribution, r2.distribution)
        assert "distribution" not in r1.to_dict()


class TestUserMetrics:
    def test_bleu_like_sum_metric(self):
        # Per item: matched unigrams, hypothesis length, reference length.
        def stats_fn(gold, pred):
            return np.column_stack(
                [
                    [
                        len(set(h.split()) & set(r.split()))
                        for h, r in zip(pred, gold, strict=True)
                    ],
                    [len(h.split()) for h in pred],
                    [len(r.split()) for r in gold],
                ]
            )

        def combine(s):
            precision = s[..., 0] / s[..., 1]
            bp = np.exp(np.minimum(0.0, 1 - s[..., 2] / s[..., 1]))
            return bp * precision

        metric = rs.SumMetric("unigram-bleu", stats_fn, combine)
        gold = np.array(["the cat sat", "a dog ran home", "hello world"] * 20)
        a = np.array(["the cat sat", "a dog ran", "hello world"] * 20)
        b = np.array(["a cat", "the dog ran home", "hello"] * 20)
        r = paired_bootstrap(gold, a, b, metric=metric, n_resamples=500, rng=0)
        assert r.n_types == 3 and r.statistic > 0 and r.pvalue < 0.01

    def test_callable_path_agrees_with_sum_metric(self):
        from sklearn.metrics import f1_score

        g, a, b = _skewed_pair(np.random.default_rng(9), n=120, pa=0.8, pb=0.7)
        f = lambda y, p: f1_score(y, p, average="macro", zero_division=0)  # noqa: E731
        slow = paired_bootstrap(
            g, a, b, metric=f, n_resamples=400, rng=0, progress=False, ci="percentile"
        )
        fast = paired_bootstrap(g, a, b, metric="macro-f1", n_resamples=400, rng=0)
        assert slow.statistic == pytest.approx(fast.statistic)
        assert slow.path == "loop" and slow.n_types == 120
        se = np.sqrt(2 * 0.25 / 400)
        assert abs(slow.pvalue - fast.pvalue) < 4.5 * se

    @pytest.mark.filterwarnings("ignore::RuntimeWarning")
    def test_combine_nan_on_some_resamples_is_refused(self):
        # Precision of class 1 alone: 0/0 on resamples that never predict 1.
        metric = rs.SumMetric(
            "p1",
            stats=lambda g, p: np.c_[(p == 1) & (g == 1), p == 1],
            combine=lambda s: s[..., 0] / s[..., 1],
        )
        g = np.array([1] + [0] * 11)
        with pytest.raises(ArgumentError, match="NaN or infinite delta"):
            paired_bootstrap(
                g,
                [1] + [0] * 11,
                [1, 1] + [0] * 10,
                metric=metric,
                n_resamples=200,
                rng=0,
            )

    def test_combine_with_wrong_shape(self):
        metric = rs.SumMetric(
            "broken",
            stats=lambda g, p: np.c_[p == g, np.ones(len(p))],
            combine=lambda s: s,
        )
        with pytest.raises(ArgumentError, match="combine"):
            paired_bootstrap([0, 1], [0, 1], [1, 1], metric=metric)


class TestBadInputs:
    @pytest.mark.parametrize(
        "args, kwargs, match",
        [
            (([0, 1, 1], [0, 1, 1], [0, 1]), {}, "one output per item"),
            (([0, 1], [0, 1], [1, 1]), {"metric": "bleu"}, "unknown"),
            (([0, 1], [0, 1], [1, 1]), {"n_resamples": 0}, "n_resamples"),
            (([0, 1], [0, 1], [1, 1]), {"alternative": "bigger"}, "alternative"),
            (([0, 1], [0, 1], [1, 1]), {"ci": "basic"}, "ci"),
            (([0, 1], [0, 1], [1, 1]), {"confidence": 95}, "confidence"),
            ((None, [0, 1], [1, 1]), {}, "gold"),
            (([0, 1, 1], [0, 1], [1, 1]), {}, "gold"),
            ((None, [0.1, np.nan], [0.2, 0.3]), {"metric": "mean"}, "NaN"),
            (([0.0, np.nan], [0, 1], [1, 1]), {}, "NaN"),
        ],
    )
    @pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
    def test_table(self, test, args, kwargs, match):
        with pytest.raises(ArgumentError, match=match):
            test(*args, **kwargs)

    def test_labels_only_in_predictions_are_counted(self):
        from sklearn.metrics import f1_score

        g = np.tile([0, 1, 2, 0, 1, 2], 2)
        a = np.tile([0, 1, 2, 0, 1, 7], 2)  # label 7 never in gold
        b = np.tile([0, 1, 1, 0, 2, 2], 2)
        r = paired_bootstrap(g, a, b, metric="macro-f1", n_resamples=50, rng=0)
        assert r.score_a == pytest.approx(f1_score(g, a, average="macro"))
        assert r.score_b == pytest.approx(f1_score(g, b, average="macro"))


# --- calibration (slow tier) -----------------------------------------------------


def _null_rejections(test, metric, n_items, sims, alternative, rng):
    rej = 0
    for _ in range(sims):
        g, a, b = _skewed_pair(rng, n=n_items, pa=0.7, pb=0.7)
        r = test(
            g,
            a,
            b,
            metric=metric,
            n_resamples=499,
            alternative=alternative,
            ci="percentile",
            rng=rng,
        )
        rej += r.pvalue <= 0.05
    return rej


@pytest.mark.slow
@pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
@pytest.mark.parametrize("metric", ["accuracy", "macro-f1"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_level_under_exchangeable_systems(test, metric, alternative, scaled, rng):
    sims = scaled(2000)
    rej = _null_rejections(test, metric, 150, sims, alternative, rng)
    print(f"{test.__name__} {metric} {alternative}: {rej}/{sims} = {rej / sims:.4f}")
    # At most alpha plus Monte Carlo error: refuse only if above the 99.9% point.
    assert rej <= stats.binom.ppf(0.999, sims, 0.05), (rej, sims)


@pytest.mark.slow
@pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
def test_power_grows_with_n(test, scaled, rng):
    sims = scaled(600)
    rates = []
    for n_items in (100, 400, 1600):
        rej = 0
        for _ in range(sims):
            g, a, b = _skewed_pair(rng, n=n_items, pa=0.75, pb=0.7)
            rej += (
                test(
                    g,
                    a,
                    b,
                    metric="macro-f1",
                    n_resamples=299,
                    ci="percentile",
                    rng=rng,
                ).pvalue
                <= 0.05
            )
        rates.append(rej / sims)
    print(f"{test.__name__} power at n = 100, 400, 1600: {rates}")
    assert rates[0] < rates[1] < rates[2], rates
    assert rates[2] > 0.75, rates
