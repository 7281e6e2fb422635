"""The binary metrics and DeLong's test from the command line, on the bundled data."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn import metrics as skm

import vareval
from vareval import datasets
from vareval.cli import main
from vareval.errors import DataError

FILE = "breast_cancer_predictions.csv"


@pytest.fixture
def path():
    return str(datasets.path(FILE))


def _run(args):
    return CliRunner().invoke(main, args)


def test_bundled_file_matches_its_provenance():
    df = datasets.load(FILE)
    assert len(df) == 285 and (df["gold"] == "malignant").sum() == 106
    positive = df["gold"] == "malignant"
    for name, acc, auc in (("logreg", 0.9474, 0.9898), ("tree", 0.9053, 0.9265)):
        assert np.mean(df[name] == df["gold"]) == pytest.approx(acc, abs=5e-5)
        assert skm.roc_auc_score(positive, df[f"{name}_score"]) == pytest.approx(
            auc, abs=5e-5
        )


def test_delong_is_the_default_for_auc(path):
    args = ["significance", path, "--gold", "gold", "--item", "item",
            "--system", "logreg_score,tree_score", "--metric", "auc",
            "--positive", "malignant"]
    res = _run(args)
    assert res.exit_code == 0, res.output
    assert "DeLong test, metric auc (positive class 'malignant'), 285 items" in res.output
    assert "(chosen: DeLong's test" in res.output
    res = _run([*args, "--json", "--test", "delong", "--confidence", "0.9"])
    out = json.loads(res.output)
    assert out["test"] == "delong" and out["positive"] == "malignant"
    (record,) = out["results"]
    df = datasets.load(FILE)
    t = vareval.stats.delong_test(
        df["gold"].astype(str), df["tree_score"], df["logreg_score"], pos_label="malignant"
    )
    assert record["pvalue"] == pytest.approx(t.pvalue)
    assert record["statistic"] == pytest.approx(t.statistic)
    frame = vareval.significance(
        df, gold="gold", item="item", systems=["logreg_score", "tree_score"],
        metric="auc", positive="malignant", confidence=0.9,
    ).to_frame()
    assert (frame["ci_low"].iloc[0], frame["ci_high"].iloc[0]) == pytest.approx(
        t.confidence_interval(0.9)
    )


def test_auc_by_bootstrap_is_available(path):
    res = _run(["significance", path, "--gold", "gold", "--item", "item",
                "--system", "logreg_score,tree_score", "--metric", "auc",
                "--positive", "malignant", "--test", "bootstrap",
                "--resamples", "200"])
    assert res.exit_code == 0, res.output
    assert "paired bootstrap test, metric auc" in res.output


@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        ("mcc", skm.matthews_corrcoef),
        ("balanced_accuracy", skm.balanced_accuracy_score),
        ("sensitivity", lambda g, p: skm.recall_score(g, p, pos_label="malignant")),
        ("specificity", lambda g, p: skm.recall_score(g, p, pos_label="benign")),
    ],
)
def test_label_metrics_in_significance(path, metric, reference):
    res = _run(["significance", path, "--gold", "gold", "--item", "item",
                "--system", "logreg,tree", "--metric", metric,
                "--positive", "malignant", "--resamples", "500", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    df = datasets.load(FILE)
    for name in ("logreg", "tree"):
        assert out["scores"][name] == pytest.approx(reference(df["gold"], df[name]))
    assert out["results"][0]["metric"] == metric


def test_metrics_command_prints_binary_metrics(path):
    res = _run(["metrics", path, "--gold", "gold", "--item", "item",
                "--system", "tree", "--positive", "malignant"])
    assert res.exit_code == 0, res.output
    df = datasets.load(FILE)
    sens = skm.recall_score(df["gold"], df["tree"], pos_label="malignant")
    spec = skm.recall_score(df["gold"], df["tree"], pos_label="benign")
    mcc = skm.matthews_corrcoef(df["gold"], df["tree"])
    assert f"MCC {mcc:.4f}" in res.output
    assert f"sensitivity {sens:.4f}, specificity {spec:.4f}" in res.output
    summary = vareval.metrics(
        df, gold="gold", item="item", systems=["tree"], positive="malignant"
    ).summary_frame()
    assert summary["sensitivity"].iloc[0] == pytest.approx(sens)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--system", "logreg,tree", "--metric", "sensitivity"],
         "needs the positive class (--positive"),
        (["--system", "logreg,tree", "--metric", "sensitivity", "--positive", "yes"],
         "positive class 'yes' occurs in neither"),
        (["--system", "logreg_score,tree_score", "--metric", "auc", "--positive", "1"],
         "does not occur in the gold labels"),
        (["--system", "logreg,tree", "--metric", "mcc", "--test", "delong"],
         "use --metric auc"),
    ],
)
def test_user_errors_exit_2_with_one_line(path, args, match):
    res = _run(["significance", path, "--gold", "gold", "--item", "item", *args])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0]


def test_multiclass_data_refused_for_sensitivity():
    df = vareval.data.significance.load_example()
    res = _run(["significance", str(vareval.data.significance.example_path()),
                "--gold", "gold", "--item", "item", "--metric", "specificity",
                "--positive", "3"])
    assert res.exit_code == 2 and "need two classes" in res.output
    with pytest.raises(DataError, match="given as text"):
        vareval.metrics(df, gold="gold", item="item", positive=3)
    assert isinstance(df, pd.DataFrame)


@pytest.mark.parametrize("keep", ["malignant", "benign"])
def test_delong_with_one_item_of_a_class_is_refused(tmp_path, keep):
    """One positive item printed SE 0.1250, p 0.3173; pROC gives NaN."""
    df = datasets.load(FILE)
    one = df[df["gold"] != keep].iloc[:40]
    df = pd.concat([one, df[df["gold"] == keep].iloc[:1]])
    path = tmp_path / "one.csv"
    df.to_csv(path, index=False)
    args = ["significance", str(path), "--gold", "gold", "--item", "item",
            "--system", "logreg_score,tree_score", "--metric", "auc", "--positive", "malignant"]
    res = _run(args)
    kind = "positive" if keep == "malignant" else "negative"
    assert res.exit_code == 2 and f"needs at least 2 {kind} items; got 1" in res.output
    assert "Traceback" not in res.output
    gold = df["gold"].astype(str)
    for call in (
        lambda: vareval.stats.delong_test(gold, df["logreg_score"], df["tree_score"],
                                          pos_label="malignant"),
        lambda: vareval.stats.compare_aucs(gold, {"a": df["logreg_score"], "b": df["tree_score"]},
                                           pos_label="malignant"),
        lambda: vareval.stats.delong_covariance(gold, [df["logreg_score"]], pos_label="malignant"),
    ):  # fmt: skip
        with pytest.raises(vareval.errors.ArgumentError, match=f"2 {kind} items"):
            call()


def test_compare_aucs_and_delong_covariance_take_one_form():
    df = datasets.load(FILE)
    gold = df["gold"].astype(str)
    named = {"logreg": df["logreg_score"], "tree": df["tree_score"]}
    auc, cov = vareval.stats.delong_covariance(gold, named, pos_label="malignant")
    auc2, cov2 = vareval.stats.delong_covariance(gold, list(named.values()), pos_label="malignant")
    np.testing.assert_array_equal(auc, auc2) and np.testing.assert_array_equal(cov, cov2)
    by_name = vareval.stats.compare_aucs(gold, named, pos_label="malignant")
    by_position = vareval.stats.compare_aucs(gold, list(named.values()), pos_label="malignant")
    assert by_position.systems == ("0", "1") and by_name.systems == ("logreg", "tree")
    assert by_name.results[0].pvalue == by_position.results[0].pvalue
    assert auc[0] == pytest.approx(skm.roc_auc_score(gold == "malignant", named["logreg"]))
