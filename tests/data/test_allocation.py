"""allocation() on a pilot table, and the acceptance case on the bundled DECoVaC simulation."""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from vareval.data.allocation import allocation, grown_spec_toml, parse_amount
from vareval.data.io import read_table
from vareval.errors import ArgumentError, DataError
from vareval.experiment.spec import Distribution, ExperimentSpec, loads_spec
from vareval.stats.budget.allocation import allocate, design_variance

DATA = Path(__file__).parents[2] / "src" / "vareval" / "datasets" / "decovac_sim.csv"
KNOWN = {"seed": 0.010**2, "config": 0.020**2, "residual": 0.008**2}  # decovac_sim.md
PAIR = ("protonet_sgd", "matchnet_sgd")




@pytest.fixture(scope="module")
def decovac():
    return read_table(DATA)


def _ses(a):
    return a.to_frame().set_index("design")["se"]


def test_acceptance_formula_on_decovac(decovac):
    """Budget 300: the plan beats 300x1x1 and 10x10x3 by the formula's amounts.

    With crossed configurations and independent seeds per model the optimum is
    interior (n_s ~ sqrt(300 S / C)); the fitted components give the same plan
    as the known ones.
    """
    kw = dict(budget=300, configs="crossed", crn=False, versus=[(300, 1, 1), (10, 10, 3)])
    known = allocate(KNOWN, **kw)
    fitted = allocation(decovac, metric="accuracy", compare=PAIR, n_resamples=0, **kw)
    assert (known.n_seeds, known.n_configs, known.n_reruns) == (9, 33, 1)
    for a, comps in ((known, KNOWN), (fitted, fitted.components)):
        se = _ses(a)
        for name, design in (("300x1x1", (300, 1, 1)), ("10x10x3", (10, 10, 3))):
            predicted = np.sqrt(design_variance(comps, *design, configs="crossed", crn=False))
            assert se[name] == pytest.approx(predicted, rel=1e-12)
            assert se["optimal"] < se[name]
    se = _ses(known)
    assert se["300x1x1"] / se["optimal"] == pytest.approx(4.133, abs=1e-3)
    assert se["10x10x3"] / se["optimal"] == pytest.approx(1.4634, abs=1e-4)
    # the fitted pilot recovers the known components within their sampling error
    assert fitted.components["config"] == pytest.approx(KNOWN["config"], rel=0.5)
    assert fitted.components["residual"] == pytest.approx(KNOWN["residual"], rel=0.2)


def test_acceptance_where_theory_says_no_gain(decovac):
    """Nested configurations, equal costs: all seeds is optimal; CRN: every design ties."""
    nested = allocate(KNOWN, budget=300, configs="nested", crn=False)
    assert (nested.n_seeds, nested.n_configs, nested.n_reruns) == (300, 1, 1)
    crn = allocation(decovac, metric="accuracy", compare=PAIR, budget=300, n_resamples=0)
    assert crn.crn and crn.configs == "nested"  # the pilot's layout
    se = _ses(crn)
    # seed and config variance shared by the models cancels: 2 residual / N (+ tiny interactions)
    assert se["all reruns"] / se["all seeds"] == pytest.approx(1.0, abs=0.2)


@pytest.mark.slow
def test_acceptance_confirmed_by_simulation(scaled, allocation_sim):
    """Simulated SEs of the three designs match the formula; the plan's is smaller."""
    n_sim = scaled(4000, minimum=1000)
    a = allocate(KNOWN, budget=300, configs="crossed", crn=False,
                 versus=[(300, 1, 1), (10, 10, 3)])
    se = _ses(a)
    seeds = np.random.SeedSequence(20261201).spawn(3)
    sims = {}
    for name, design, ss in zip(("optimal", "300x1x1", "10x10x3"),
                                ((a.n_seeds, a.n_configs, a.n_reruns), (300, 1, 1), (10, 10, 3)),
                                seeds, strict=True):
        x = allocation_sim.simulated_differences(KNOWN, design, configs="crossed", crn=False,
                                      n_sim=n_sim, rng=ss)
        lo, hi = allocation_sim.variance_interval(x, level=0.999)
        assert lo < se[name] ** 2 < hi
        sims[name] = x.var(ddof=1)
    for name in ("300x1x1", "10x10x3"):
        # the variance ratio's F interval holds the predicted ratio and excludes 1
        f = stats.f.ppf([0.0005, 0.9995], n_sim - 1, n_sim - 1)
        ratio = sims[name] / sims["optimal"]
        lo, hi = ratio / f[1], ratio / f[0]
        assert lo < (se[name] / se["optimal"]) ** 2 < hi
        assert lo > 1


def test_pilot_uncertainty_from_the_bootstrap(decovac):
    a = allocation(decovac, metric="accuracy", compare=PAIR[:1], target_se=0.004,
                   n_resamples=40, rng=1)
    assert a.estimand == "mean" and a.draws.shape == (40,)
    assert all(a.upper[k] >= 0 for k in a.upper)
    again = allocation(decovac, metric="accuracy", compare=PAIR[:1], target_se=0.004,
                       n_resamples=40, rng=1)
    np.testing.assert_array_equal(a.draws, again.draws)


def test_costs_from_durations_and_given(decovac):
    df = decovac.copy()
    df["duration"] = np.where(df["experiment"] == PAIR[0], 60.0, 180.0)
    a = allocation(df, metric="accuracy", compare=PAIR, budget="10h", n_resamples=0,
                   configs="crossed", crn=False)
    assert a.unit == "seconds" and a.cost_per_trial == 240.0
    assert a.n_trials == a.n_seeds * a.n_configs * a.n_reruns <= 36000 / 240
    b = allocation(decovac, metric="accuracy", compare=PAIR, budget="10h", cost="2m",
                   n_resamples=0, configs="crossed", crn=False)
    assert b.cost_per_trial == 240.0 and b.n_trials == a.n_trials


@pytest.mark.parametrize(
    "text,expected",
    [("300", (300.0, "trials")), ("200h", (720000.0, "seconds")), ("1.5m", (90.0, "seconds")),
     ("90s", (90.0, "seconds")), ("2d", (172800.0, "seconds"))],
)
def test_parse_amount(text, expected):
    assert parse_amount(text, "--budget") == expected


@pytest.mark.parametrize("text", ["-3", "0", "3 weeks", "h", ""])
def test_parse_amount_refuses(text):
    with pytest.raises(ArgumentError, match="--budget"):
        parse_amount(text, "--budget")


def test_bad_input(decovac):
    with pytest.raises(DataError, match="no 'nosuch'"):
        allocation(decovac, metric="accuracy", compare=("nosuch", PAIR[1]), budget=300)
    with pytest.raises(ArgumentError, match="one experiment"):
        allocation(decovac, metric="accuracy", compare=(PAIR[0], PAIR[0]), budget=300)
    with pytest.raises(ArgumentError, match="duration"):
        allocation(decovac, metric="accuracy", compare=PAIR, budget="3h")
    apart = decovac.copy()
    apart["seed"] = apart["seed"].astype(str) + apart["experiment"]
    with pytest.raises(DataError, match="share no seed"):
        allocation(apart, metric="accuracy", compare=PAIR, budget=300, crn=True)


def test_grown_spec_toml_round_trips():
    spec = ExperimentSpec(trial="trial:train", factors={"model": ["a", "b"]}, seeds=3,
                          configs=2, reruns=2, nested=False, entropy=7,
                          params={"epochs": 3, "name": "x\"y"},
                          space={"lr": Distribution("log-uniform", low=1e-3, high=0.1)})
    a = allocate(KNOWN, budget=300, configs="crossed", crn=False)
    text, note = grown_spec_toml(spec, a)
    back = loads_spec(text)
    assert (back.seeds, back.configs, back.reruns) == (9, 33, 2)  # reruns never shrink
    assert back.entropy == 7 and back.params == spec.params and not back.nested
    assert back.space == spec.space and back.factors == spec.factors
    assert "only grows" in note
    with pytest.raises(ArgumentError, match="nested"):
        grown_spec_toml(ExperimentSpec(trial="t:f", factors={"m": ["a"]}, seeds=2), a)


def test_a_table_without_the_design_columns_is_refused_by_name(decovac):
    with pytest.raises(DataError, match="needs the design columns experiment, seed, config"
                       r".*missing: config"):
        allocation(decovac.drop(columns="config"), metric="accuracy", compare=PAIR, budget=300,
                   n_resamples=0)
