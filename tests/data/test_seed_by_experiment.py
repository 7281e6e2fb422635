"""The seed x experiment random intercept where experiments share seeds.

``tests/data/lme4/make_seed_by_experiment.py`` made a balanced design (3
experiments x 8 shared seeds x 3 configurations x 2 reruns, seed x experiment
SD 0.008) and the same with 20 % of its rows dropped;
``seed_by_experiment.R`` fitted ``y ~ experiment + (1 | seed) + (1 | config) +
(1 | seed:experiment)`` with lme4 1.1-31, lmerTest 3.1-3 and pbkrtest 0.5.2.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval.cli import main
from vareval.data.variance import variance
from vareval.errors import ArgumentError, VarevalWarning

DATA = Path(__file__).resolve().parents[1] / "data" / "lme4"


@pytest.fixture(scope="module")
def designs():
    d = pd.read_csv(DATA / "seed_by_experiment.csv", dtype={"seed": str})
    return {k: g.drop(columns="design") for k, g in d.groupby("design")}


@pytest.fixture(scope="module")
def ref():
    r = pd.read_csv(DATA / "seed_by_experiment_ref.csv", keep_default_na=False)
    return {(k, q, t): v for k, q, t, v in r.itertuples(index=False)}


@pytest.mark.parametrize("k", [0, 1], ids=["balanced", "unbalanced"])
@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_against_lme4(designs, ref, k, reml):
    tag = "reml" if reml else "ml"
    a = variance(designs[k], metric="y", reml=reml)  # the term is added by default
    assert a.seed_term == "seed:experiment"
    assert a.random == ("seed", "config", "seed:experiment")
    f = a.fit
    assert f.criterion == pytest.approx(ref[k, f"crit_{tag}", ""], abs=1e-6)
    for comp, sd in zip(f.components, f.sd, strict=True):
        assert sd == pytest.approx(ref[k, f"sd_{tag}", comp], rel=1e-4), comp
    for t in a.lrt:
        assert t.statistic == pytest.approx(ref[k, f"lrt_{tag}", t.term], abs=1e-5)
    if not reml:
        return
    sat, kr = (a.f_tests[m][0] for m in ("satterthwaite", "kenward-roger"))
    assert sat.statistic == pytest.approx(ref[k, "sat_F", "experiment"], rel=1e-5)
    assert sat.ddf == pytest.approx(ref[k, "sat_ddf", "experiment"], rel=1e-4)
    assert kr.statistic == pytest.approx(ref[k, "kr_F", "experiment"], rel=1e-5)
    assert kr.ddf == pytest.approx(ref[k, "kr_ddf", "experiment"], rel=1e-4)
    p = a.pairs_frame()
    for row in p.itertuples():
        assert row.estimate == pytest.approx(ref[k, "pair_est", row.contrast], rel=1e-6)
        assert row.se == pytest.approx(ref[k, "pair_se", row.contrast], rel=1e-5)
        assert row.df == pytest.approx(ref[k, "pair_df", row.contrast], rel=1e-4)


def test_balanced_contrast_se_equals_the_paired_se(designs):
    # two experiments, balanced: the mixed model's contrast is the paired
    # analysis of seed means (same estimate, SE, df and p); without the seed x
    # experiment term the SE is far too small
    d = designs[0][designs[0]["experiment"] != "e2"]
    a = vareval.variance(d, metric="y")
    p = vareval.paired(d, metric="y", by="experiment", pair_on="seed")
    row = p.to_frame().iloc[0]
    mixed = a.pairs_frame().iloc[0]
    assert mixed["estimate"] == pytest.approx(row["estimate"], rel=1e-10)
    assert mixed["se"] == pytest.approx(row["se"], rel=1e-6)
    assert mixed["df"] == pytest.approx(row["pairs"] - 1, rel=1e-5)
    assert mixed["ci_low"] == pytest.approx(row["t_ci_low"], rel=1e-5)
    without = vareval.variance(d, metric="y", seed_by_experiment=False)
    assert without.seed_term is None and "seed:experiment" not in without.random
    assert without.pairs_frame()["se"].iloc[0] < 0.5 * row["se"]


def test_the_command_adds_says_and_removes_it(designs, tmp_path):
    path = tmp_path / "d.csv"
    designs[1].to_csv(path, index=False)
    r = CliRunner().invoke(main, ["variance", str(path), "--metric", "y"])
    assert r.exit_code == 0, r.output
    assert "note: seed:experiment added" in r.output
    assert "seed:experiment " in r.output.split("H1/H2")[1]  # its LRT row
    r = CliRunner().invoke(main, ["variance", str(path), "--metric", "y", "--json"])
    out = json.loads(r.stdout)
    api = variance(designs[1], metric="y").pairs_frame()
    assert out["seed_term"] == "seed:experiment"
    assert [p["se"] for p in out["pairwise"]] == pytest.approx(list(api["se"]), rel=1e-12)
    r = CliRunner().invoke(
        main, ["variance", str(path), "--metric", "y", "--no-seed-by-experiment", "--json"]
    )
    assert json.loads(r.stdout)["seed_term"] is None


def test_not_added_where_it_is_no_variance_of_its_own(designs):
    d = designs[0]
    # disjoint seeds: seed x experiment is the seed
    disjoint = d.assign(seed=d["experiment"] + "_" + d["seed"])
    assert variance(disjoint, metric="y").seed_term is None
    # configurations of their own per seed and experiment, one per pair:
    # the configuration already groups the runs by seed and experiment
    one = d[d["config"].str.endswith("_c0")]
    one = one.assign(config=one["experiment"] + "_" + one["config"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        assert variance(one, metric="y").seed_term is None
    # one run per seed and experiment: it is the residual
    single = d[(d["rerun"] == 0) & d["config"].str.endswith("_c0")]
    assert variance(single, metric="y", random=["seed"]).seed_term is None
    # no fixed factor: nothing to interact with
    assert variance(d, metric="y", fixed=[]).seed_term is None


def test_a_named_seed_column(designs):
    d = designs[0].rename(columns={"seed": "random_state"})
    a = variance(d, metric="y", random=["random_state", "config"],
                 seed_by_experiment="random_state")  # fmt: skip
    assert a.seed_term == "random_state:experiment"
    b = variance(designs[0], metric="y")
    assert np.allclose(a.fit.sd, b.fit.sd)
    with pytest.raises(ArgumentError, match="seed_by_experiment"):
        variance(d, metric="y", random=["random_state", "config"], seed_by_experiment="s")


def test_the_report_names_the_terms_its_intervals_account_for(designs, tmp_path):
    path = tmp_path / "d.csv"
    designs[1].to_csv(path, index=False)
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(path), "--metric", "y", "--by", "experiment",
                                  "--random", "seed,config", "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert "seed x experiment added because the experiments share seeds" in html
    assert "every source of variance" not in html
