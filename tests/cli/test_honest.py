"""Honest answers or clear refusals, through the command and the API."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval.cli import main
from vareval.errors import DataError


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _write(tmp_path, name, df):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


# --- small test sets ------------------------------------------------------------


@pytest.fixture
def three_items(tmp_path):
    df = pd.DataFrame(
        {"item": [1, 2, 3], "gold": ["x", "y", "x"], "A": ["x", "y", "x"]}
    ).assign(B=["y", "x", "y"])
    return _write(tmp_path, "three.csv", df), df


def test_three_items_exact_test_not_a_bootstrap(three_items):
    path, df = three_items
    res = _run("significance", path, "--gold", "gold", "--item", "item", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    (row,) = out["results"]
    assert row["test"] == "exact randomization" and row["pvalue"] == 0.25
    assert row["confidence_interval"] == [None, None] and row["ci_note"]
    assert "3 items" in out["test_reason"] and out["seed"] == 0
    text = _run("significance", path, "--gold", "gold", "--item", "item").output
    assert "n/a" in text and "CI n/a" in text and "seed 0" in text
    rep = vareval.significance(df, gold="gold", item="item")
    assert rep.comparison.results[0].pvalue == 0.25


@pytest.mark.parametrize("ci", ["bca", "percentile"])
def test_bootstrap_on_three_items_is_refused(three_items, ci):
    path, df = three_items
    res = _run(
        "significance", path, "--gold", "gold", "--item", "item",
        "--test", "bootstrap", "--ci", ci,
    )  # fmt: skip
    assert res.exit_code == 2 and "at least 10 items" in res.output
    with pytest.raises(vareval.VarevalError, match="at least 10 items"):
        vareval.significance(df, gold="gold", item="item", test="bootstrap", ci=ci)


def test_significance_reproducible_without_seed():
    path = vareval.datasets.path("digits_predictions.csv")
    args = ("significance", path, "--gold", "gold", "--item", "item", "--resamples", 500)
    first, second = _run(*args), _run(*args)
    assert first.exit_code == 0 and first.output == second.output
    assert "seed 0" in first.output


# --- tuning curves --------------------------------------------------------------


@pytest.fixture
def three_searches(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "model": np.repeat(["a", "b", "c"], 20),
            "f1": np.concatenate([rng.uniform(lo, lo + 0.3, 20) for lo in (0.1, 0.4, 0.6)]),
        }
    )
    return _write(tmp_path, "search.csv", df), df


def test_three_models_joint_confidence_is_the_cube(three_searches):
    path, df = three_searches
    res = _run("tuning-curve", path, "--metric", "f1", "--by", "model", "--bounds", "0,1")
    assert res.exit_code == 0, res.output
    assert "all 3 bands hold together" in res.output
    assert f"{0.95**3:.4f}" in res.output and "0.9025" not in res.output
    out = json.loads(
        _run(
            "tuning-curve", path, "--metric", "f1", "--by", "model", "--bounds", "0,1",
            "--confidence", "0.9", "--json",
        ).output
    )  # fmt: skip
    assert out["joint_confidence"] == pytest.approx(0.9**3)
    api = vareval.tuning_curve(df, metric="f1", by="model", bounds=(0, 1))
    assert api.joint_confidence == pytest.approx(0.95**3)


def test_one_iteration_is_refused(tmp_path):
    df = pd.DataFrame({"model": ["a", "b", "b"], "f1": [0.5, 0.6, 0.7]})
    path = _write(tmp_path, "one.csv", df)
    res = _run("tuning-curve", path, "--metric", "f1", "--by", "model", "--bounds", "0,1")
    assert res.exit_code == 2
    assert "'a' has 1 run" in res.output and "whole range" in res.output
    with pytest.raises(DataError, match="whole range"):
        vareval.tuning_curve(df, metric="f1", by="model", bounds=(0, 1))
