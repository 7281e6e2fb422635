"""Every text table shows small and huge numbers; ids are not systems; SD-0 t tests."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval._format import formatter, number
from vareval.cli import main
from vareval.errors import DataError

LME4 = Path(__file__).resolve().parents[1] / "data" / "lme4" / "decovac_small_unbal.csv"
ZEROS = re.compile(r"(?<![\d.e])[+-]?0\.0000(?![\d])")  # a number rounded to nothing


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _runs(tmp_path, scale):
    rng = np.random.default_rng(3)
    base = np.linspace(1.0, 1.4, 8)
    df = pd.DataFrame(
        {
            "method": ["a"] * 8 + ["b"] * 8,
            "seed": list(range(8)) * 2,
            "score": np.concatenate([base, base + 0.05 + rng.normal(0, 0.02, 8)]) * scale,
        }
    )
    path = tmp_path / f"runs_{scale:g}.csv"
    df.to_csv(path, index=False)
    return path


def _clean(out: str, exponent: str) -> None:
    assert not ZEROS.search(out), out
    assert "inf" not in out and "nan" not in out, out
    assert exponent in out, out


def test_number_rule():
    assert number(1.2e-5) == "1.200e-05" and number(1.4e308) == "1.400e+308"
    assert number(0.97222, 0.97) == "0.9722" and number(1.0, 1.0) == "1.0000"
    assert number(0.00582, 0.97) == "0.0058" and number(3e-7, 0.97) == "3.0e-07"
    assert number(12.345, 12) == "12.35" and number(-0.5, 1, signed=True) == "-0.5000"
    assert formatter([1e-5, 2e-5])(1.5e-5) == "1.500e-05"
    assert number(float("inf"), signed=True) == "+inf"


def test_summary_near_the_largest_float(tmp_path):
    res = _cli("summarize", _runs(tmp_path, 1e307), "--metric", "score", "--by", "method")
    assert res.exit_code == 0, res.output
    _clean(res.output, "e+307")


@pytest.mark.parametrize(("scale", "exponent"), [(1e-5, "e-0"), (1e150, "e+14")])
def test_repeated_run_tables(tmp_path, scale, exponent):
    path = _runs(tmp_path, scale)
    common = ["--metric", "score", "--by", "method"]
    pair = [*common, "--pair-on", "seed", "--compare", "b,a"]
    for args in (
        ["summarize", path, *common],
        ["paired", path, *pair],
        ["plan", path, *pair, "--target-se", 1e-3 * scale],
        ["best-of-k", path, *common, "--absolute", "--resamples", 1000],
    ):
        res = _cli(*args)
        assert res.exit_code == 0, res.output
        _clean(res.output, exponent)
    summary = vareval.summarize(vareval.read_table(path), metric="score", by="method")
    assert np.isfinite(summary["a"].mean) and np.isfinite(summary["a"].sd)
    assert "e" in repr(summary)


def test_tuning_and_variance_tables(tmp_path):
    path = _runs(tmp_path, 1e-5)
    res = _cli(
        "tuning-curve", path, "--metric", "score", "--by", "method", "--bounds", "0,0.0001",
        "--ks", "1,2",
    )
    assert res.exit_code == 0, res.output
    _clean(res.output.split("exact simultaneous")[0], "e-05")
    df = pd.read_csv(LME4)
    df["y"] = df["y"] * 1e-6
    small = tmp_path / "lme4_small.csv"
    df.to_csv(small, index=False)
    res = _cli("variance", small, "--metric", "y", "--fixed", "model,optimizer", "--random",
               "seed,config")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert not ZEROS.search(res.output.split("Pairwise")[0]) and "e-1" in res.output


def test_significance_and_metrics_tables(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame(
        {
            "item": np.arange(n),
            "a": rng.normal(1e-5, 1e-6, n),
            "b": rng.normal(1.1e-5, 1e-6, n),
        }
    )
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    res = _cli("significance", path, "--metric", "mean", "--item", "item", "--system", "a,b")
    assert res.exit_code == 0, res.output
    _clean(res.output, "e-0")
    preds = vareval.datasets.path("digits_predictions.csv")
    res = _cli("metrics", preds, "--gold", "gold", "--item", "item", "--system", "knn")
    assert res.exit_code == 0 and "accuracy 0.9733" in res.output


def test_report_shows_small_numbers(tmp_path):
    path = _runs(tmp_path, 1e-5)
    out = tmp_path / "r.html"
    res = _cli("report", path, "--metric", "score", "--by", "method", "-o", out)
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert not ZEROS.search(html) and "\u00d710\u207b\u2075" in html


def test_id_column_is_not_a_system(tmp_path):
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, 40)
    df = pd.DataFrame({"item": np.arange(40), "gold": gold, "sys": gold, "other": gold[::-1]})
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    res = _cli("significance", path, "--gold", "gold")
    assert res.exit_code == 2
    assert "column 'item' has a different value in every row" in res.output
    assert "--item" in res.output
    with pytest.raises(DataError, match="looks like an item id"):
        vareval.significance(vareval.read_table(path), gold="gold", rng=0)
    ok = _cli("significance", path, "--gold", "gold", "--item", "item")
    assert ok.exit_code == 0, ok.output
    # a code column that never equals gold is refused too
    df2 = df.drop(columns="item").assign(code=["x"] * 40)
    path2 = tmp_path / "q.csv"
    df2.to_csv(path2, index=False)
    res = _cli("significance", path2, "--gold", "gold")
    assert res.exit_code == 2 and "never equals the gold column" in res.output
    named = _cli("significance", path2, "--gold", "gold", "--system", "sys,other,code")
    assert named.exit_code == 0, named.output  # named systems are taken as given


def test_paired_command_with_constant_differences(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("method,seed,acc\na,0,0.5\na,1,0.6\na,2,0.7\nb,0,0.4\nb,1,0.5\nb,2,0.6\n")
    res = _cli("paired", path, "--metric", "acc", "--by", "method", "--pair-on", "seed",
               "--compare", "a,b")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "undefined: every difference is +0.10000 (SD 0), so no p-value" in res.output
    assert "t = inf" not in res.output.split("paired t test")[1]
