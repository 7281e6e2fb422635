"""Confidence sequences: reference values, the stopping rule, calibration under peeking."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from vareval.errors import ArgumentError
from vareval.stats.budget import sequential
from vareval.stats.budget.sequential import (
    REASONS,
    BettingState,
    SequenceState,
    betting_cs,
    confidence_sequence,
    empirical_bernstein_cs,
    naive_t_intervals,
    normal_mixture_boundary,
    normal_mixture_cs,
    settle,
)

REFERENCE = Path(__file__).parents[2] / "data" / "sequential" / "reference.json"
BETTING = REFERENCE.with_name("betting.json")


def _misses(low, high, mu, first=1):
    """Share of sequences that miss ``mu`` at some n >= first (peeking after every n)."""
    return np.mean(((low > mu) | (high < mu))[:, first - 1 :].any(axis=-1))


def _not_above(misses: float, sims: int, alpha: float) -> bool:
    """Coverage >= nominal within Monte Carlo error: misses not significantly above alpha."""
    return stats.binomtest(round(misses * sims), sims, alpha, alternative="greater").pvalue > 1e-3


class TestReferences:
    @pytest.mark.parametrize("case", json.loads(REFERENCE.read_text()), ids=lambda c: c["name"])
    def test_empirical_bernstein_equals_confseq(self, case):
        low, high = empirical_bernstein_cs(case["x"], (0, 1), confidence=1 - case["alpha"])
        np.testing.assert_allclose(low, case["low"], atol=1e-12)
        np.testing.assert_allclose(high, case["high"], atol=1e-12)

    def test_empirical_bernstein_equals_live_confseq(self, rng):
        predmix = pytest.importorskip("confseq.predmix")
        x = rng.beta(3, 2, 250)
        low, high = predmix.predmix_empbern_cs(x, alpha=0.05)
        ours = empirical_bernstein_cs(x, (0, 1))
        np.testing.assert_allclose(ours[0], np.maximum.accumulate(np.clip(low, 0, 1)))
        np.testing.assert_allclose(ours[1], np.minimum.accumulate(np.clip(high, 0, 1)))

    @pytest.mark.parametrize("case", json.loads(BETTING.read_text()), ids=lambda c: c["name"])
    def test_betting_equals_confseq_on_its_grid_and_refines_inside_it(self, case):
        # confseq: grid of 1,000 breaks, bounds moved one break outward; ours with refine=0
        # is the same computation, and refined it moves in by less than one break
        level = 1 - case["alpha"]
        low, high = betting_cs(case["x"], (0, 1), confidence=level, refine=0)
        np.testing.assert_allclose(low, case["low"], atol=1e-12)
        np.testing.assert_allclose(high, case["high"], atol=1e-12)
        low, high = betting_cs(case["x"], (0, 1), confidence=level)
        assert np.all((low >= np.array(case["low"]) - 1e-12) & (low <= np.array(case["low"])
                                                                + 1e-3 + 1e-12))
        assert np.all((high <= np.array(case["high"]) + 1e-12) & (high >= np.array(case["high"])
                                                                  - 1e-3 - 1e-12))

    def test_betting_equals_live_confseq(self, rng):
        betting = pytest.importorskip("confseq.betting")
        x = rng.beta(3, 2, 120)
        low, high = betting.hedged_cs(x, alpha=0.05)
        ours = betting_cs(x, (0, 1), refine=0)
        np.testing.assert_allclose(ours[0], low, atol=1e-12)
        np.testing.assert_allclose(ours[1], high, atol=1e-12)

    def test_betting_bounds_are_the_exact_set_rounded_outward(self, rng):
        # the exact set at each n by root finding on the hedged capital, one n at a time
        y = rng.beta(2, 3, 60)
        alpha, c = 0.05, 0.5
        t = np.arange(1, 61)
        mu = (0.5 + np.cumsum(y)) / (t + 1)
        var = np.concatenate([[0.25], ((0.25 + np.cumsum((y - mu) ** 2)) / (t + 1))[:-1]])
        lam = np.sqrt(2 * np.log(2 / alpha) / (var * t * np.log1p(t)))

        def log_k(m, n, side):
            cap = c / m if side > 0 else c / (1 - m)
            return np.log1p(side * np.minimum(lam[:n], cap) * (y[:n] - m)).sum() - np.log(
                2 / alpha)

        lows, highs = [], []
        for n in range(1, 61):
            lo_in = log_k(1e-12, n, +1) < 0
            hi_in = log_k(1 - 1e-12, n, -1) < 0
            lows.append(0.0 if lo_in else optimize.brentq(log_k, 1e-12, y[:n].mean(), (n, +1),
                                                          xtol=1e-14))
            highs.append(1.0 if hi_in else optimize.brentq(log_k, y[:n].mean(), 1 - 1e-12,
                                                           (n, -1), xtol=1e-14))
        exact_low, exact_high = np.maximum.accumulate(lows), np.minimum.accumulate(highs)
        for grid, refine in ((1000, 0), (1000, 12), (250, 6)):
            low, high = betting_cs(y, (0, 1), grid=grid, refine=refine)
            resolution = 1 / grid / 2**refine
            assert np.all(low <= exact_low + 1e-12) and np.all(high >= exact_high - 1e-12)
            assert np.all(low >= exact_low - resolution - 1e-12)
            assert np.all(high <= exact_high + resolution + 1e-12)

    @pytest.mark.parametrize(("kwargs", "match"), [
        (dict(max_bet=1.0), "`max_bet` must lie in \\(0, 1\\)"),
        (dict(grid=1), "`grid` must be an integer >= 2"),
        (dict(refine=-1), "`refine` must be an integer >= 0"),
    ])
    def test_betting_bad_settings(self, kwargs, match):
        with pytest.raises(ArgumentError, match=match):
            betting_cs([0.5], (0, 1), **kwargs)

    def test_bounds_rescale(self, rng):
        y = rng.uniform(0, 1, 80)
        low01, high01 = empirical_bernstein_cs(y, (0, 1))
        low, high = empirical_bernstein_cs(2 * y - 1, (-1, 1))
        np.testing.assert_allclose(low, 2 * low01 - 1)
        np.testing.assert_allclose(high, 2 * high01 - 1)

    @pytest.mark.parametrize("v", [0.5, 10.0, 100.0, 2000.0])
    @pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
    def test_normal_mixture_boundary_is_where_the_mixture_martingale_reaches_one_over_alpha(
        self, v, confidence
    ):
        # the martingale exp(l S - l^2 v / 2) mixed over l ~ N(0, 1/r), integrated numerically
        v_opt = 100.0
        two_log = 2 * np.log(1 / (1 - confidence))
        r = v_opt / (two_log + np.log1p(two_log))
        s = float(normal_mixture_boundary(v, confidence=confidence, v_opt=v_opt))
        sd = 1 / np.sqrt(r)

        def density(lam):
            return np.exp(lam * s - lam**2 * v / 2) * stats.norm.pdf(lam, scale=sd)

        peak = s / (v + r)
        mixture, _ = integrate.quad(density, peak - 40 * sd, peak + 40 * sd, points=[peak],
                                    epsabs=0, epsrel=1e-10, limit=200)
        assert mixture == pytest.approx(1 / (1 - confidence), rel=1e-7)

    def test_normal_mixture_cs_per_n(self, rng):
        x = rng.normal(0.3, 2.0, 40)
        low, high = normal_mixture_cs(x, t_opt=40, min_n=3)
        for n in range(1, 41):
            if n < 3:
                assert low[n - 1] == -np.inf and high[n - 1] == np.inf
                continue
            half = np.std(x[:n], ddof=1) * normal_mixture_boundary(n, v_opt=40) / n
            assert low[n - 1] == pytest.approx(x[:n].mean() - half, rel=1e-10)
            assert high[n - 1] == pytest.approx(x[:n].mean() + half, rel=1e-10)

    def test_naive_t_equals_scipy_at_every_n(self, rng):
        x = rng.normal(0, 1, 25)
        low, high = naive_t_intervals(x, confidence=0.9)
        for n in range(2, 26):
            ci = stats.ttest_1samp(x[:n], 0).confidence_interval(0.9)
            assert (low[n - 1], high[n - 1]) == pytest.approx((ci.low, ci.high), rel=1e-10)

    def test_vectorised_over_sequences_equals_one_at_a_time(self, rng):
        x = rng.binomial(1, 0.6, (5, 60)) - rng.binomial(1, 0.5, (5, 60))
        for fn in (lambda a: empirical_bernstein_cs(a, (-1, 1)), normal_mixture_cs,
                   naive_t_intervals, lambda a: betting_cs(a, (-1, 1), refine=3)):
            both = fn(x)
            for i in range(5):
                one = fn(x[i])
                np.testing.assert_allclose(both[0][i], one[0], rtol=0, atol=1e-13)
                np.testing.assert_allclose(both[1][i], one[1], rtol=0, atol=1e-13)


def _betting_by_hand(y, alpha=0.05, c=0.5, grid=1000, refine=12):
    """The betting sequence one n at a time, each log capital summed term by term.

    The O(n^2)-per-look algorithm the running state replaced: the grid's
    exclusion counts, then plain bisection between neighbouring candidates.
    """
    t = np.arange(1, y.size + 1)
    mu = (0.5 + np.cumsum(y)) / (t + 1)
    var = np.concatenate([[0.25], ((0.25 + np.cumsum((y - mu) ** 2)) / (t + 1))[:-1]])
    lam = np.sqrt(2 * np.log(2 / alpha) / (var * t * np.log1p(t)))
    threshold, m = np.log(2 / alpha), np.arange(grid + 1) / grid

    def out(v, n, side):  # is candidate v ruled out by the bettor of this side after n?
        v = np.asarray(v, dtype=float)[..., None]
        with np.errstate(divide="ignore"):
            cap = c / (v if side > 0 else 1 - v)
        return np.log1p(side * np.minimum(lam[:n], cap) * (y[:n] - v)).sum(-1) >= threshold

    lows, highs = [], []
    for n in t:
        bounds = []
        for side in (+1, -1):
            count = int(out(m, n, side).sum())
            edge = m[max(count - 1, 0)] if side > 0 else m[min(grid - count + 1, grid)]
            outside, inside = edge, (edge + side / grid if count else (side < 0) * 1.0)
            for _ in range(refine):
                mid = (outside + inside) / 2
                outside, inside = (mid, inside) if out(mid, n, side) else (outside, mid)
            bounds.append(outside)
        lows.append(bounds[0])
        highs.append(bounds[1])
    return (np.maximum.accumulate(np.clip(lows, 0, 1)),
            np.minimum.accumulate(np.clip(highs, 0, 1)))


_KINDS = {  # on [0, 1]: spread out, two-valued, and tight ones whose bets switch truncation
    "beta(2, 3)": lambda g, n: g.beta(2, 3, n),
    "Bernoulli difference": lambda g, n: (g.binomial(1, 0.7, n) - g.binomial(1, 0.6, n) + 1) / 2,
    "N(0.25, 0.01)": lambda g, n: np.clip(g.normal(0.25, 0.01, n), 0, 1),
    "N(0.35, 0.05)": lambda g, n: np.clip(g.normal(0.35, 0.05, n), 0, 1),
}


class TestRunningBettingState:
    @pytest.mark.parametrize("kind", list(_KINDS))
    @pytest.mark.parametrize("settings", [dict(), dict(grid=250, refine=6), dict(max_bet=0.75),
                                          dict(grid=7, refine=5)], ids=str)
    def test_equals_the_sequence_computed_one_n_at_a_time(self, kind, settings, rng):
        # grid=7: the expansion's rest is too large, so its bounds are summed term by term
        y = _KINDS[kind](rng, 120)
        by_hand = _betting_by_hand(y, c=settings.get("max_bet", 0.5),
                                   grid=settings.get("grid", 1000),
                                   refine=settings.get("refine", 12))
        low, high = betting_cs(y, (0, 1), **settings)
        np.testing.assert_allclose(low, by_hand[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(high, by_hand[1], rtol=0, atol=1e-12)

    @pytest.mark.parametrize("window", [2, 3, 8])
    @pytest.mark.parametrize("kind", ["Bernoulli difference", "N(0.35, 0.05)"])
    def test_window_of_candidates_equals_the_whole_grid_by_hand(self, kind, window, rng,
                                                                 monkeypatch):
        # few candidates carried: the bound leaves its window often and at every grid
        # edge; each move re-sums the window from the stored terms
        monkeypatch.setattr(sequential, "_WINDOW", window)
        monkeypatch.setattr(sequential, "_SPAN", 5)
        y = _KINDS[kind](rng, 400)
        by_hand = _betting_by_hand(y, grid=30, refine=7)
        state = BettingState((0, 1), grid=30, refine=7)
        parts = [state.update(part) for part in np.split(y, [1, 2, 50, 51, 230])]
        for side in (0, 1):
            np.testing.assert_allclose(np.concatenate([p[side] for p in parts]), by_hand[side],
                                       rtol=0, atol=1e-12)

    @pytest.mark.parametrize("kind", ["Bernoulli difference", "N(0.25, 0.01)"])
    def test_refined_bound_lies_in_the_bracket_of_the_whole_grid(self, kind, rng):
        # a long sequence (the windows move late too): each refined bound lies within
        # one grid step inside the unrefined one, whose count carries every candidate
        y = _KINDS[kind](rng, 12_000)
        coarse, fine = betting_cs(y, (0, 1), refine=0), betting_cs(y, (0, 1))
        assert np.all((fine[0] >= coarse[0] - 1e-15) & (fine[0] < coarse[0] + 1e-3))
        assert np.all((fine[1] <= coarse[1] + 1e-15) & (fine[1] > coarse[1] - 1e-3))

    @pytest.mark.parametrize("kind", list(_KINDS))
    def test_updates_at_any_looks_equal_one_pass(self, kind, rng):
        x = 2 * _KINDS[kind](rng, 700) - 1
        whole = betting_cs(x, (-1, 1))
        for cuts in ([1, 2, 3], list(range(10, 700, 10)), sorted(rng.choice(699, 15, False) + 1)):
            state = BettingState((-1, 1))
            parts = [state.update(part) for part in np.split(x, cuts)]
            for side in (0, 1):
                np.testing.assert_allclose(np.concatenate([p[side] for p in parts]),
                                           whole[side], rtol=0, atol=1e-12)

    def test_independent_sequences_update_together(self, rng):
        x = rng.beta(8, 2, (3, 2, 90)) - rng.beta(7, 3, (3, 2, 90))
        state = BettingState((-1, 1), refine=4)
        low = np.concatenate([state.update(x[..., :40])[0], state.update(x[..., 40:])[0]], -1)
        for i in np.ndindex(3, 2):
            np.testing.assert_allclose(low[i], betting_cs(x[i], (-1, 1), refine=4)[0], rtol=0,
                                       atol=1e-12)
        with pytest.raises(ArgumentError, match="leading shape"):
            state.update(x[0])

    @pytest.mark.parametrize("kwargs", [dict(bounds=(-1, 1)), dict(bounds=(-1, 1),
                             method="empirical-bernstein"), dict(t_opt=200)], ids=str)
    def test_sequence_state_equals_confidence_sequence(self, kwargs, rng):
        x = rng.uniform(-0.3, 0.7, 200)
        state = SequenceState(**kwargs)
        for part in np.split(x, [50, 51, 120]):
            state.extend(part)
        rule = dict(margin=0.05, budget=300, looks=[50, 120, 200])
        ours, ref = state.sequence(**rule), confidence_sequence(x, **kwargs, **rule)
        for field in ("low", "high", "estimate"):
            np.testing.assert_allclose(getattr(ours, field), getattr(ref, field), atol=1e-12)
        assert (ours.stop, ours.reason, ours.method) == (ref.stop, ref.reason, ref.method)
        with pytest.raises(ArgumentError, match="observation 202 is nan"):
            state.extend([0.1, np.nan])


class TestRule:
    def test_difference_equivalence_budget_and_not_settled(self):
        low = np.array([[-1, -0.5, 0.1, 0.2], [-1, -0.04, -0.03, -0.01], [-1, -1, -1, -1.0]])
        high = np.array([[1, 0.5, 0.9, 0.8], [1, 0.04, 0.03, 0.01], [1, 1, 1, 1.0]])
        stop, reason = settle(low, high, margin=0.05, budget=4)
        assert stop.tolist() == [3, 2, 4]
        assert [REASONS[r] for r in reason] == ["difference", "equivalent within margin", "budget"]
        stop, reason = settle(low, high, budget=10)
        assert stop.tolist() == [3, 0, 0]
        assert [REASONS[r] for r in reason] == ["difference", "not settled", "not settled"]

    def test_rule_looks_only_at_the_looks(self):
        low, high = np.array([-1, 0.1, 0.2, 0.3]), np.array([1, 0.9, 0.8, 0.7])
        assert settle(low, high, looks=[1, 4])[0] == 4
        every = confidence_sequence([0.5] * 90, bounds=(-1, 1))
        batched = confidence_sequence([0.5] * 90, bounds=(-1, 1), looks=[30, 60, 90])
        assert every.reason == batched.reason == "difference"
        assert batched.stop in (30, 60, 90) and every.stop <= batched.stop < every.stop + 30

    def test_a_large_difference_stops_and_a_zero_one_runs_to_the_budget(self):
        # fixed data: a true-null sequence may rightly stop early about 5 % of the time
        rng = np.random.default_rng(7)
        big = confidence_sequence(rng.normal(1.0, 1.0, 200), budget=200)
        assert big.reason == "difference" and big.stop < 50
        zero = confidence_sequence(rng.normal(0.0, 1.0, 200), budget=200)
        assert zero.reason == "budget" and zero.stop == 200


class TestResult:
    def test_protocol(self, rng):
        cs = confidence_sequence(rng.uniform(-0.2, 0.6, 50), bounds=(-1, 1), margin=0.01,
                                 budget=80)
        frame = cs.to_frame()
        assert list(frame.columns) == ["n", "estimate", "low", "high", "look", "stop"]
        assert len(frame) == 50 and frame["n"].tolist() == list(range(1, 51))
        ci = cs.confidence_interval()
        assert (ci.low, ci.high) == (cs.low[-1], cs.high[-1])
        assert cs.confidence_interval(0.95) == ci
        with pytest.raises(ArgumentError, match="the sequence's own level"):
            cs.confidence_interval(0.9)
        json.dumps(cs.to_dict())
        assert len(repr(cs).splitlines()) < 25
        assert cs.method == "betting" and cs.guarantee == "nonasymptotic"

    def test_method_selects_the_bounded_sequence(self, rng):
        x = rng.uniform(-0.2, 0.6, 40)
        eb = confidence_sequence(x, bounds=(-1, 1), method="empirical-bernstein")
        bet = confidence_sequence(x, bounds=(-1, 1), method="betting")
        assert (eb.method, bet.method) == ("empirical-bernstein", "betting")
        np.testing.assert_array_equal(eb.low, empirical_bernstein_cs(x, (-1, 1))[0])
        np.testing.assert_array_equal(bet.high, betting_cs(x, (-1, 1))[1])

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            (dict(x=[]), "non-empty 1-D"),
            (dict(x=[[0.1]]), "non-empty 1-D"),
            (dict(x=[0.1, np.nan]), "observation 2 is nan"),
            (dict(x=[0.1, 1.5], bounds=(-1, 1)), "observation 2 is 1.5, outside the bounds"),
            (dict(x=[0.1], bounds=(1, -1)), "low < high"),
            (dict(x=[0.1], bounds="ab"), "two numbers"),
            (dict(x=[0.1], confidence=95), "level in \\(0, 1\\)"),
            (dict(x=[0.1], margin=-0.1), "`margin` must be a positive"),
            (dict(x=[0.1], budget=0), "`budget` must be an integer"),
            (dict(x=[0.1, 0.2], looks=[3]), "`looks` must lie in 1 .. 2"),
            (dict(x=[0.1], bounds=(-1, 1), method="hoeffding"), "`method` must be one of"),
            (dict(x=[0.1], method="betting"), "got 'betting' and no bounds"),
        ],
    )
    def test_bad_input(self, kwargs, match):
        x = kwargs.pop("x")
        with pytest.raises(ArgumentError, match=match):
            confidence_sequence(x, **kwargs)


class TestCalibrationFast:
    def test_bounded_sequence_covers_under_peeking_and_the_rechecked_t_interval_does_not(
        self, rng
    ):
        sims, n = 400, 300
        x = rng.binomial(1, 0.7, (sims, n)) - rng.binomial(1, 0.6, (sims, n))
        for low, high in (empirical_bernstein_cs(x, (-1, 1)), betting_cs(x, (-1, 1), refine=0)):
            assert _not_above(_misses(low, high, 0.1), sims, 0.05)
        t_low, t_high = naive_t_intervals(x)
        naive = _misses(t_low, t_high, 0.1, first=2)
        assert stats.binomtest(round(naive * sims), sims, 0.05).pvalue < 1e-6 and naive > 0.2


@pytest.mark.slow
class TestCalibrationSlow:
    """(b): coverage under peeking after every trial, 2,000 sequences, beside the naive t."""

    CASES = {
        "Bernoulli(0.7) - Bernoulli(0.6)": (
            lambda g, s, n: g.binomial(1, 0.7, (s, n)) - g.binomial(1, 0.6, (s, n)), 0.1, (-1, 1)),
        "Beta(8, 2) - Beta(7, 3) accuracies": (
            lambda g, s, n: g.beta(8, 2, (s, n)) - g.beta(7, 3, (s, n)), 0.1, (-1, 1)),
        "Gaussian(0.2, 1), no bounds": (lambda g, s, n: g.normal(0.2, 1, (s, n)), 0.2, None),
    }

    @pytest.mark.parametrize("case", list(CASES))
    def test_coverage_under_continuous_monitoring(self, case, scaled):
        sample, mu, bounds = self.CASES[case]
        sims, n = scaled(2000), 1000
        x = sample(np.random.default_rng(20261201), sims, n)
        if bounds is None:
            sequences = {"normal mixture": normal_mixture_cs(x, t_opt=n)}
            first = 10  # the asymptotic sequence starts at min_n
        else:  # the betting grid alone: rounded outward, so refinement only lowers misses
            sequences = {"betting": betting_cs(x, bounds, refine=0),
                         "empirical Bernstein": empirical_bernstein_cs(x, bounds)}
            first = 1
        misses = {name: _misses(low, high, mu, first) for name, (low, high) in sequences.items()}
        t_low, t_high = naive_t_intervals(x)
        t_miss = _misses(t_low, t_high, mu, first=max(first, 2))
        fixed_miss = np.mean((t_low[:, -1] > mu) | (t_high[:, -1] < mu))
        print(f"\n{case}: {sims} sequences of {n}, peeking after every trial from n = {first}: "
              + "; ".join(f"{name} CS misses {m:.2%}" for name, m in misses.items())
              + f" (nominal <= 5%); re-checked t interval misses {t_miss:.2%}; the t "
              f"interval at n = {n} alone {fixed_miss:.2%}")
        for m in misses.values():
            assert _not_above(m, sims, 0.05)
        assert t_miss > 0.3


def _fixed_n_for_power(power: float, d: float, alpha: float = 0.05) -> int:
    """Smallest n whose two-sided paired t test at level alpha reaches ``power`` (noncentral t)."""
    n = np.arange(2, 20_000)
    q = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = d * np.sqrt(n)
    pw = stats.nct.sf(q, n - 1, nc) + stats.nct.cdf(-q, n - 1, nc)
    return int(n[np.argmax(pw >= power)])


@pytest.mark.slow
def test_expected_trials_to_a_decision_versus_a_fixed_design_of_the_same_power(scaled):
    """(c): E[n] of the sequential design against the fixed n with its power (capped at 0.99)."""
    g = np.random.default_rng(7)
    sims, budget = scaled(2000), 400
    rows = []
    gaussian = [g.normal(d, 1, (sims, budget)) for d in (0.5, 0.3)]
    bernoulli = g.binomial(1, 0.9, (sims, budget)) - g.binomial(1, 0.6, (sims, budget))
    d_bounded = 0.3 / np.sqrt(0.09 + 0.24)
    for label, x, cs, d in (
        ("Gaussian, d = 0.5", gaussian[0], None, 0.5),
        ("Gaussian, d = 0.3", gaussian[1], None, 0.3),
        ("accuracy 0.9 vs 0.6 (bounded), betting", bernoulli,
         lambda a: betting_cs(a, (-1, 1), refine=0), d_bounded),
        ("accuracy 0.9 vs 0.6 (bounded), empirical Bernstein", bernoulli,
         lambda a: empirical_bernstein_cs(a, (-1, 1)), d_bounded),
    ):
        low, high = normal_mixture_cs(x, t_opt=budget) if cs is None else cs(x)
        stop, reason = settle(low, high, budget=budget)
        right = (reason == 0) & (low[np.arange(sims), stop - 1] > 0)
        power = min(right.mean(), 0.99)
        fixed = _fixed_n_for_power(power, d)
        rows.append((label, stop.mean(), right.mean(), fixed))
        print(f"\n{label}: sequential E[n] = {stop.mean():.1f} (budget {budget}, power "
              f"{right.mean():.3f}); fixed-n paired t test with power {power:.3f}: n = {fixed}")
    assert rows[0][1] < rows[0][3]  # a large effect settles before the fixed design's n
    assert rows[1][1] < rows[1][3]
    assert rows[2][1] < rows[2][3]  # betting on a bounded metric settles before the fixed n
    assert rows[2][1] < rows[3][1]  # and sooner than empirical Bernstein
