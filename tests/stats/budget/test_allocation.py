"""The allocation's variance formula, optimiser and targets against exact computation."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats.budget.allocation import (
    allocate,
    best_design,
    cheapest_design,
    design_variance,
    required_se,
)

COMPS = {"seed": 1.0, "config": 2.0, "seed:experiment": 0.3, "config:experiment": 0.5,
         "residual": 0.7}
DECOVAC = {"seed": 0.010**2, "config": 0.020**2, "residual": 0.008**2}  # decovac_sim.md


def _layout(n_s, n_c, n_r, configs):
    """Rows of a two-experiment design: experiment, seed, config, rerun."""
    rows = []
    for e, s, c, r in itertools.product(range(2), range(n_s), range(n_c), range(n_r)):
        rows.append((e, s, (s, c) if configs == "nested" else (0, c), r))
    return rows


def _covariance(rows, comps, crn):
    """V = sum_j sigma_j^2 Z_j Z_j' + residual I, built entry by entry."""
    n = len(rows)
    V = np.diag(np.full(n, comps["residual"]))
    for i, j in itertools.product(range(n), range(n)):
        (ei, si, ci, _), (ej, sj, cj, _) = rows[i], rows[j]
        same_exp = ei == ej
        # without CRN the experiments have their own seeds and configurations
        if si == sj and (crn or same_exp):
            V[i, j] += comps["seed"] + (comps["seed:experiment"] if same_exp else 0)
        if ci == cj and (crn or same_exp):
            V[i, j] += comps["config"] + (comps["config:experiment"] if same_exp else 0)
    return V


@pytest.mark.parametrize("configs", ["nested", "crossed"])
@pytest.mark.parametrize("crn", [True, False])
@pytest.mark.parametrize("size", [(1, 1, 2), (2, 3, 1), (3, 2, 2)])
def test_variance_matches_brute_force_covariance(configs, crn, size):
    rows = _layout(*size, configs)
    V = _covariance(rows, COMPS, crn)
    exp = np.array([r[0] for r in rows])
    N = np.prod(size)
    mean_a = (exp == 0) / N
    diff = mean_a - (exp == 1) / N
    assert design_variance(COMPS, *size, configs=configs, estimand="difference", crn=crn) \
        == pytest.approx(diff @ V @ diff, rel=1e-12)
    assert design_variance(COMPS, *size, configs=configs, estimand="mean", crn=crn) \
        == pytest.approx(mean_a @ V @ mean_a, rel=1e-12)
    # for a balanced design the cell mean is also the GLS estimator
    X = np.column_stack([exp == 0, exp == 1]).astype(float)
    gls = np.linalg.inv(X.T @ np.linalg.solve(V, X))
    c = np.array([1.0, -1.0])
    assert c @ gls @ c == pytest.approx(diff @ V @ diff, rel=1e-9)


@pytest.mark.parametrize("configs,crn", [("nested", True), ("crossed", False)])
def test_variance_matches_simulation(configs, crn, allocation_sim):
    size = (3, 2, 2)
    sim = allocation_sim.simulated_differences
    x = sim(COMPS, size, configs=configs, crn=crn, n_sim=3000, rng=11)
    lo, hi = allocation_sim.variance_interval(x)
    assert lo < design_variance(COMPS, *size, configs=configs, crn=crn) < hi


def test_crn_cancels_the_shared_seed_and_config_variance():
    only_shared = {"seed": 5.0, "config": 3.0, "residual": 1.0}
    for size in [(2, 1, 1), (4, 3, 2)]:
        assert design_variance(only_shared, *size, crn=True) == pytest.approx(2 / np.prod(size))


def _brute_best(comps, B, **kw):
    """The optimum by looping over every integer design (the reference)."""
    best = None
    for ns, nc, nr in itertools.product(range(2, B + 1), range(1, B + 1), range(1, B + 1)):
        if ns * nc * nr <= B:
            v = design_variance(comps, ns, nc, nr, **kw)
            best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("configs", ["nested", "crossed"])
@pytest.mark.parametrize("crn", [True, False])
def test_lattice_optimum_matches_exhaustive_search(configs, crn):
    for B in (7, 24, 30):
        kw = dict(configs=configs, crn=crn)
        n = best_design(COMPS, B, **kw)
        assert np.prod(n) <= B
        assert design_variance(COMPS, *n, **kw) == pytest.approx(_brute_best(COMPS, B, **kw))


def test_cheapest_design_is_the_smallest_budget_reaching_the_target():
    kw = dict(configs="crossed", crn=False)
    for target in (0.8, 0.3):
        ns, nc, nr = (int(x[0]) for x in cheapest_design(COMPS, target, **kw))
        N = ns * nc * nr
        assert design_variance(COMPS, ns, nc, nr, **kw) <= target * (1 + 1e-12)
        # no design with fewer trials reaches it
        assert design_variance(COMPS, *best_design(COMPS, N - 1, **kw), **kw) > target


def test_nested_all_seeds_is_optimal_for_equal_costs():
    # each seed brings its own configurations, so the first level is the one to replicate
    assert best_design(COMPS, 120, configs="nested", crn=False) == (120, 1, 1)


def test_crossed_optimum_follows_the_continuous_square_root_rule():
    # min S/n_s + C/n_c subject to n_s n_c = B: n_s = sqrt(B S / C), n_c = sqrt(B C / S)
    comps = {"seed": 1.0, "config": 4.0, "residual": 1e-9}
    ns, nc, nr = best_design(comps, 2000, configs="crossed", crn=False)
    assert nr == 1
    assert ns == pytest.approx(np.sqrt(2000 / 4), rel=0.1)
    assert nc == pytest.approx(np.sqrt(2000 * 4), rel=0.1)


def test_required_se_for_each_target():
    assert required_se("se", 0.1) == 0.1
    assert required_se("halfwidth", 1.96, confidence=0.95) == pytest.approx(1.0, rel=1e-3)
    se = required_se("power", 0.5, power=0.8, alpha=0.05)
    z = 0.5 / se - stats.norm.ppf(0.975)
    assert stats.norm.cdf(z) == pytest.approx(0.8)


def test_allocation_result_protocol_and_alternatives():
    a = allocate(DECOVAC, budget=300, configs="crossed", crn=False, versus=[(10, 10, 3)])
    frame = a.to_frame()
    assert list(frame["design"]) == ["optimal", "all seeds", "all configs", "all reruns",
                                     "10x10x3"]
    assert a.estimate == a.se == frame["se"].iloc[0]
    assert (frame["se_ratio"] >= 1 - 1e-12).all()
    assert a.to_dict()["n_trials"] == a.n_seeds * a.n_configs * a.n_reruns <= 300
    assert "Allocation(" in repr(a) and len(repr(a).splitlines()) < 25


def test_pilot_uncertainty_upper_limits_and_draws():
    rng = np.random.default_rng(3)
    draws = {k: v * rng.chisquare(8, 400) / 8 for k, v in DECOVAC.items()}
    a = allocate(DECOVAC, target_se=0.006, configs="crossed", crn=False, draws=draws)
    for k in DECOVAC:
        assert a.upper[k] == pytest.approx(np.quantile(draws[k], 0.95))
    up = a.to_frame().set_index("design").loc["optimal at upper 95% limits"]
    assert up["trials"] >= a.n_trials  # larger components need a larger budget
    assert a.draws.shape == (400,)
    lo, hi = a.confidence_interval()
    assert lo <= a.estimate <= hi
    # the budget per draw is that draw's own cheapest design
    i = 7
    one = {k: v[i] for k, v in draws.items()}
    ref = allocate(one, target_se=0.006, configs="crossed", crn=False)
    assert a.draws[i] == ref.cost


def test_budget_in_time_units():
    a = allocate(DECOVAC, budget=300 * 120.0, cost_per_trial=120.0, configs="crossed",
                 crn=False)
    b = allocate(DECOVAC, budget=300, configs="crossed", crn=False)
    assert (a.n_seeds, a.n_configs, a.n_reruns) == (b.n_seeds, b.n_configs, b.n_reruns)
    assert a.cost == b.cost * 120.0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(), "exactly one"),
        (dict(budget=10, target_se=0.1), "exactly one"),
        (dict(budget=-1), "> 0"),
        (dict(effect=0.0), "other than 0"),
        (dict(effect=0.1, power=1.5), "power"),
        (dict(budget=10, configs="both"), "nested"),
        (dict(budget=10, estimand="ratio"), "difference"),
        (dict(budget=1), "at least 2"),
        (dict(target_se=1e-9, max_trials=1000), "no design"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        allocate(DECOVAC, **kwargs)


def test_bad_components():
    with pytest.raises(ArgumentError, match="unknown name"):
        design_variance({"sed": 1.0}, 2, 2, 2)
    with pytest.raises(ArgumentError, match=">= 0"):
        design_variance({"seed": -1.0}, 2, 2, 2)


def test_simulation_helper_is_deterministic_given_rng(allocation_sim):
    sim = allocation_sim.simulated_differences
    a = sim(COMPS, (2, 2, 1), configs="nested", crn=True, n_sim=10, rng=5)
    b = sim(COMPS, (2, 2, 1), configs="nested", crn=True, n_sim=10, rng=5)
    np.testing.assert_array_equal(a, b)
    assert isinstance(pd.Series(a).sum(), float)
