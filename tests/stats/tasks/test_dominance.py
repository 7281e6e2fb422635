"""Almost stochastic order and effect sizes.

References: deepsig 1.2.8 (values stored by tests/data/deepsig/make_reference.py,
compared within deepsig's own Monte Carlo spread; a live test importorskips it),
exact integrals of step quantile functions by hand, scipy (Mann-Whitney U,
Brunner-Munzel, noncentral t) and R's effectsize 0.8.3 (stored by
tests/data/effectsize/make_reference.R).
"""

import json
import pathlib

import numpy as np
import pytest
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats import (
    aso,
    cliffs_delta,
    cohens_d,
    hedges_g,
    multi_aso,
    multi_aso_tasks,
    vargha_delaney_a12,
)

DATA = pathlib.Path(__file__).parents[2] / "data"
DEEPSIG = json.loads((DATA / "deepsig/reference.json").read_text())
EFFECTSIZE = json.loads((DATA / "effectsize/reference.json").read_text())


class TestViolationRatio:
    @pytest.mark.parametrize(
        ("a", "b", "expect"),
        [
            # Q_a = 0 on (0, 1/2], 2 on (1/2, 1); Q_b = 1: violated half 1, W2^2 = 1
            ([0.0, 2.0], [1.0], 0.5),
            # violated (0, 1/2] contributes 1/2, W2^2 = (1 + 4) / 2
            ([0.0, 3.0], [1.0], 0.2),
            # steps at 1/3, 1/2, 2/3: diffs (b - a) = 1, 1, -1, -1 on widths 1/3, 1/6, 1/6, 1/3
            ([0.0, 1.0, 2.0], [1.0, 1.0], 0.5),
            ([5.0, 6.0], [1.0, 2.0, 3.0], 0.0),
            ([1.0, 2.0, 3.0], [5.0, 6.0], 1.0),
        ],
    )
    def test_exact_integral_by_hand(self, a, b, expect):
        assert aso(a, b, n_resamples=10, rng=0).violation_ratio == pytest.approx(expect, abs=1e-12)

    @pytest.mark.parametrize("case", DEEPSIG["cases"], ids=lambda c: c["name"])
    def test_deepsig_grid_is_reproduced_exactly(self, case):
        r = aso(case["a"], case["b"], dt=0.005, n_resamples=10, rng=0)
        assert r.violation_ratio == pytest.approx(case["violation_ratio_dt0.005"], abs=1e-12)

    @pytest.mark.parametrize("case", DEEPSIG["cases"], ids=lambda c: c["name"])
    def test_exact_integral_is_the_limit_of_deepsigs_sum(self, case):
        r = aso(case["a"], case["b"], n_resamples=10, rng=0)
        assert r.violation_ratio == pytest.approx(case["violation_ratio_dt1e-5"], abs=5e-4)

    def test_antisymmetry_and_affine_invariance(self, rng):
        a, b = rng.normal(size=9), rng.normal(0.3, 2, 6)
        ab, ba = aso(a, b, rng=0), aso(b, a, rng=0)
        assert ab.violation_ratio + ba.violation_ratio == pytest.approx(1.0)
        scaled = aso(3 * a - 7, 3 * b - 7, rng=0)
        assert scaled.violation_ratio == pytest.approx(ab.violation_ratio)
        assert scaled.sd == pytest.approx(ab.sd)


class TestASO:
    @pytest.mark.parametrize("case", DEEPSIG["cases"], ids=lambda c: c["name"])
    def test_epsilon_min_matches_deepsig_within_monte_carlo_error(self, case):
        ref = np.array(case["epsilon_min"])
        mine = np.array(
            [
                aso(case["a"], case["b"], dt=0.005, n_resamples=1000, rng=s).epsilon_min
                for s in range(20)
            ]
        )
        # the spread of one run (deepsig's or ours) is the Monte Carlo error of epsilon_min
        spread = max(ref.std(ddof=1), mine.std(ddof=1), 1e-3)
        se = np.sqrt(spread**2 / ref.size + spread**2 / mine.size)
        assert abs(mine.mean() - ref.mean()) < 4 * se + 1e-9

    @pytest.mark.parametrize("seed", [2, 4])
    def test_upper_bound_and_pvalue(self, seed):
        # fixed data with 0 < p < 1: at p = 0 the crossing confidence would be 1, which is refused
        gen = np.random.default_rng(seed)
        a, b = gen.normal(0.5, 1, 12), gen.normal(0, 1, 12)
        r = aso(a, b, rng=1)
        assert 0 < r.pvalue < 1
        z = stats.norm.ppf(0.95)
        assert r.epsilon_min == pytest.approx(np.clip(r.violation_ratio + z * r.sd, 0, 1))
        # the p-value is the 1 - confidence at which epsilon_min crosses the threshold
        at_p = aso(a, b, rng=1, confidence=1 - r.pvalue)
        assert at_p.epsilon_min == pytest.approx(r.threshold, abs=1e-9) or at_p.epsilon_min == 0
        assert r.a_better == (r.pvalue < 0.05)

    def test_clear_dominance(self):
        r = aso(np.arange(10.0) + 20, np.arange(10.0), rng=0)
        assert r.violation_ratio == 0 and r.epsilon_min == 0 and r.a_better

    def test_same_rng_same_answer_and_global_seed_ignored(self):
        a, b = np.arange(6.0), np.arange(6.0)[::-1] + 0.5
        np.random.seed(0)
        r1 = aso(a, b, rng=42)
        np.random.seed(1)
        r2 = aso(a, b, rng=42)
        assert r1 == r2
        assert aso(a, b, rng=np.random.default_rng(42)) == r1

    def test_live_deepsig(self):
        deepsig = pytest.importorskip("deepsig")
        a, b = [0.71, 0.74, 0.69, 0.75, 0.73], [0.70, 0.68, 0.72, 0.69, 0.70]
        ref = deepsig.aso(a, b, seed=3, show_progress=False, num_bootstrap_iterations=300)
        mine = np.array(
            [aso(a, b, dt=0.005, n_resamples=300, rng=s).epsilon_min for s in range(10)]
        )
        assert abs(ref - mine.mean()) < 5 * max(mine.std(ddof=1), 1e-3)

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"a": [1.0, np.nan], "b": [1.0]}, "NaN"),
            ({"a": [], "b": [1.0]}, "at least 1"),
            ({"a": [1.0], "b": [2.0], "threshold": 0.7}, "threshold"),
            ({"a": [1.0], "b": [2.0], "confidence": 1.5}, "confidence"),
            ({"a": [1.0], "b": [2.0], "n_resamples": 1}, "n_resamples"),
        ],
    )
    def test_bad_input(self, kwargs, match):
        with pytest.raises(ArgumentError, match=match):
            aso(**kwargs)


class TestMultiASO:
    def test_matches_deepsig_unadjusted_and_documents_its_bonferroni(self):
        multi = DEEPSIG["multi"]
        scores = multi["scores"]
        runs = [multi_aso(scores, correction="none", dt=0.005, rng=s) for s in range(10)]
        off = ~np.eye(3, dtype=bool)
        for key, level in [("unadjusted", 0.95), ("bonferroni", 0.95 + 0.05 / 3)]:
            ref = np.array(multi[key])
            # deepsig's "Bonferroni" level conf + (1 - conf) / m, from our ratios and SDs
            at_level = np.array(
                [np.clip(r.violation_ratio + stats.norm.ppf(level) * r.sd, 0, 1) for r in runs]
            )
            spread = np.maximum(
                np.maximum(ref.std(axis=0, ddof=1), at_level.std(axis=0, ddof=1)), 1e-3
            )
            gap = np.abs(at_level.mean(axis=0) - ref.mean(axis=0))
            assert (gap[off] < 4 * spread[off]).all(), key

    def test_correction_counts_ordered_pairs(self):
        scores = {"x": [3.0, 4, 5, 6], "y": [1.0, 2, 3, 4], "z": [0.0, 1, 2, 2.5]}
        r = multi_aso(scores, correction="bonferroni", rng=0)
        assert r.adjusted_confidence == pytest.approx(1 - 0.05 / 6)
        off = ~np.eye(3, dtype=bool)
        assert np.allclose(r.pvalue_adjusted[off], np.minimum(1, 6 * r.pvalue[off]))
        assert np.allclose((r.violation_ratio + r.violation_ratio.T)[off], 1)
        assert (r.better == (np.nan_to_num(r.pvalue_adjusted, nan=1) < 0.05)).all()
        single = aso(scores["x"], scores["z"], rng=0)
        assert r.violation_ratio[0, 2] == pytest.approx(single.violation_ratio)

    def test_tasks_share_one_family(self):
        tasks = {
            "t1": {"x": [3.0, 4, 5, 6], "y": [1.0, 2, 3, 4]},
            "t2": {"x": [1.0, 2, 2, 3], "y": [1.5, 2, 2.5, 3], "z": [0.0, 0.5, 1, 1]},
        }
        out = multi_aso_tasks(tasks, correction="bonferroni", rng=0)
        assert set(out) == {"t1", "t2"}
        assert out["t1"].adjusted_confidence == pytest.approx(1 - 0.05 / (2 + 6))
        holm = multi_aso_tasks(tasks, correction="holm", rng=0)
        assert (holm["t1"].pvalue_adjusted <= out["t1"].pvalue_adjusted + 1e-12)[
            ~np.eye(2, dtype=bool)
        ].all()

    def test_bad_input(self):
        with pytest.raises(ArgumentError, match="at least two"):
            multi_aso({"x": [1.0, 2.0]})
        with pytest.raises(ArgumentError, match="correction"):
            multi_aso({"x": [1.0], "y": [2.0]}, correction="sidak")
        with pytest.raises(ArgumentError, match="at least one task"):
            multi_aso_tasks({})


class TestEffectSizes:
    @pytest.mark.parametrize("case", EFFECTSIZE["cases"], ids=lambda c: c["name"])
    def test_against_r_effectsize(self, case):
        a, b, paired = case["a"], case["b"], case["paired"]
        for fn, key in [(cohens_d, "d"), (hedges_g, "g")]:
            r = fn(a, b, paired=paired)
            assert r.estimate == pytest.approx(case[key][0], rel=1e-6)
            assert r.confidence_interval() == pytest.approx(case[key][1:], rel=1e-4)
        if not paired:
            assert vargha_delaney_a12(a, b).estimate == pytest.approx(case["vd_a"])
            assert cliffs_delta(a, b).estimate == pytest.approx(case["cliffs_delta"])

    def test_a12_is_mann_whitney_and_its_interval_inverts_brunner_munzel(self, rng):
        a = np.round(rng.normal(0.4, 1, 14), 1)
        b = np.round(rng.normal(0, 1.5, 11), 1)
        r = vargha_delaney_a12(a, b)
        assert r.estimate == pytest.approx(stats.mannwhitneyu(a, b).statistic / (14 * 11))
        # at confidence 1 - p of scipy's Brunner-Munzel test, one end of the interval is 1/2
        p = stats.brunnermunzel(b, a).pvalue
        low, high = vargha_delaney_a12(a, b, confidence=1 - p).confidence_interval()
        assert min(abs(low - 0.5), abs(high - 0.5)) < 1e-8

    def test_cliffs_delta_is_the_pairwise_sign_mean(self, rng):
        a, b = rng.integers(0, 5, 9).astype(float), rng.integers(0, 5, 7).astype(float)
        expect = np.sign(a[:, None] - b[None, :]).mean()
        r = cliffs_delta(a, b)
        assert r.estimate == pytest.approx(expect)
        a12 = vargha_delaney_a12(a, b)
        assert r.confidence_interval() == pytest.approx(
            tuple(2 * v - 1 for v in a12.confidence_interval())
        )

    def test_d_interval_inverts_the_noncentral_t(self, rng):
        a, b = rng.normal(0.5, 1, 8), rng.normal(0, 1, 10)
        r = cohens_d(a, b)
        scale = np.sqrt(8 * 10 / 18)
        t = r.estimate * scale
        low, high = r.confidence_interval()
        assert stats.nct.cdf(t, 16, low * scale) == pytest.approx(0.975, abs=1e-8)
        assert stats.nct.cdf(t, 16, high * scale) == pytest.approx(0.025, abs=1e-8)
        # large samples: close to the normal approximation of Hedges and Olkin
        a, b = rng.normal(0.5, 1, 4000), rng.normal(0, 1, 4000)
        r = cohens_d(a, b)
        se = np.sqrt(2 / 4000 + r.estimate**2 / 16000)
        assert r.confidence_interval() == pytest.approx(
            (r.estimate - 1.96 * se, r.estimate + 1.96 * se), abs=2e-3
        )

    def test_hedges_correction(self):
        a, b = [1.0, 2.0, 4.0, 3.0], [0.0, 1.5, 1.0]
        d, g = cohens_d(a, b).estimate, hedges_g(a, b).estimate
        assert g / d == pytest.approx(1 - 3 / (4 * 5 - 1), rel=5e-3)  # Hedges' approximation

    def test_bad_input(self):
        with pytest.raises(ArgumentError, match="equal length"):
            cohens_d([1.0, 2.0, 3.0], [1.0, 2.0], paired=True)
        with pytest.raises(ArgumentError, match="SD 0"):
            cohens_d([1.0, 1.0], [1.0, 1.0])
        with pytest.raises(ArgumentError, match="at least 2"):
            hedges_g([1.0], [1.0, 2.0])


def test_resamples_drawn_in_blocks_are_the_draws_of_one_call(monkeypatch):
    """ASO's resamples, drawn a block of rows at a time (so 10^3 resamples of 5 x 10^5 runs
    are never held at once), are those of one (n_resamples, n) draw, and the stream moves on
    as after it: results are unchanged by the blocking."""
    import vareval.stats.tasks.dominance as d

    monkeypatch.setattr(d, "_CHUNK_ELEMENTS", 70)  # blocks of a few rows
    x = np.random.default_rng(1).normal(size=23)
    rng, whole = np.random.default_rng(2), np.random.default_rng(2)
    lazy = d._Resamples(x, 11, rng)
    once = np.sort(x[whole.integers(0, x.size, size=(11, x.size))], axis=1)
    for rows in (1, 3, 11):
        np.testing.assert_array_equal(np.concatenate(list(lazy.blocks(rows))), once)
    assert rng.random() == whole.random()
