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
    args = ("significance", path, "--gold", "gold", "--item", "item", "--system", "A,B")
    res = _run(*args, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    (row,) = out["results"]
    assert row["test"] == "exact randomization" and row["pvalue"] == 0.25
    # accuracy's interval is Newcombe's score interval, defined at any n (the
    # bootstrap's is refused below 10 items: --ci-method bca)
    assert row["ci_method"] == "newcombe" and row["low"] < row["high"]
    assert "3 items" in out["test_reason"] and out["seed"] == 0
    text = _run(*args).output
    assert "95% CI (Newcombe score)" in text and "seed 0" in text
    boot = json.loads(_run(*args, "--ci-method", "bca", "--json").output)["results"][0]
    assert boot["low"] is None and boot["high"] is None and boot["ci_note"]
    assert "CI n/a" in _run(*args, "--ci-method", "bca").output
    rep = vareval.significance(df, gold="gold", item="item", systems=["A", "B"])
    assert rep.comparison.results[0].pvalue == 0.25


@pytest.mark.parametrize("ci", ["bca", "percentile"])
def test_bootstrap_on_three_items_is_refused(three_items, ci):
    path, df = three_items
    res = _run(
        "significance", path, "--gold", "gold", "--item", "item", "--system", "A,B",
        "--test", "bootstrap", "--ci-method", ci,
    )  # fmt: skip
    assert res.exit_code == 2 and "at least 10 items" in res.output
    with pytest.raises(vareval.VarevalError, match="at least 10 items"):
        vareval.significance(
            df, gold="gold", item="item", systems=["A", "B"], test="bootstrap", ci=ci
        )


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
    extras = {"tuning": {"df": df, "metric": "f1", "by": ["model"], "bounds": (0, 1)}}
    html = vareval.build_report(_runs(10), metric="acc", by="method", extras=extras)
    assert "probability at least 85.74%" in html and "95% to the power 3" in html


def test_one_iteration_is_refused(tmp_path):
    df = pd.DataFrame({"model": ["a", "b", "b"], "f1": [0.5, 0.6, 0.7]})
    path = _write(tmp_path, "one.csv", df)
    res = _run("tuning-curve", path, "--metric", "f1", "--by", "model", "--bounds", "0,1")
    assert res.exit_code == 2
    assert "'a' has 1 run" in res.output and "whole range" in res.output
    with pytest.raises(DataError, match="whole range"):
        vareval.tuning_curve(df, metric="f1", by="model", bounds=(0, 1))


# --- paired replications ----------------------------------------------------------


def _runs(k, redraw_note=None):
    rng = np.random.default_rng(1)
    base = rng.normal(0.8, 0.01, k)
    return pd.DataFrame(
        {
            "method": np.repeat(["a", "b"], k),
            "seed": np.tile(np.arange(k), 2),
            "acc": np.concatenate([base + 0.012 + rng.normal(0, 0.0005, k), base]),
        }
    )


def test_three_pairs_show_no_bootstrap_interval(tmp_path):
    df = _runs(3)
    path = _write(tmp_path, "three.csv", df)
    args = ("paired", path, "--metric", "acc", "--by", "method", "--pair-on", "seed")
    res = _run(*args)
    assert res.exit_code == 0, res.output
    assert "bootstrap n/a (3 pairs have only 10 distinct bootstrap resamples" in res.output
    out = json.loads(_run(*args, "--json").output)["a - b"]
    assert out["bootstrap_low"] is None and out["bootstrap_high"] is None
    assert "10 distinct" in out["bootstrap_note"]
    assert out["seed"] == 0
    r = vareval.paired(df, metric="acc", by="method", pair_on="seed", rng=0)["a - b"]
    assert np.isnan([r.bootstrap_low, r.bootstrap_high]).all()
    assert np.isfinite(r.confidence_interval()).all()
    r10 = vareval.paired(_runs(10), metric="acc", by="method", pair_on="seed", rng=0)["a - b"]
    assert r10.bootstrap_note == "" and np.isfinite([r10.bootstrap_low, r10.bootstrap_high]).all()


def test_redrawn_splits_use_the_corrected_test(tmp_path):
    from vareval.stats import corrected_resampled_ttest

    df = _runs(10)
    path = _write(tmp_path, "runs.csv", df)
    args = ("paired", path, "--metric", "acc", "--by", "method", "--pair-on", "seed")
    refused = _run(*args, "--test", "corrected")
    assert refused.exit_code == 2 and "--test-fraction" in refused.output
    assert "anti-conservative" in refused.output
    with pytest.raises(DataError, match="Nadeau and Bengio"):
        vareval.paired(df, metric="acc", by="method", pair_on="seed", repeated="data-sampling")
    out = json.loads(
        _run(*args, "--test", "corrected", "--test-fraction", "0.25", "--json").output
    )["a - b"]
    a = df.acc[df.method == "a"].to_numpy()
    b = df.acc[df.method == "b"].to_numpy()
    ref = corrected_resampled_ttest(a, b, n_train=3, n_test=1)
    assert out["test"] == "corrected resampled t"
    assert out["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert [out["low"], out["high"]] == pytest.approx(list(ref.confidence_interval()), rel=1e-12)
    assert out["bootstrap_low"] is None and out["bootstrap_high"] is None
    assert "share" in out["bootstrap_note"]
    text = _run(*args, "--test", "corrected", "--test-fraction", "0.25").output
    assert "corrected t test" in text and "Nadeau and Bengio" in text
    # A store that declares its split source ([randomness] split) says so itself;
    # a source's name alone says nothing (the trial may keep one test set).
    df.attrs["spec"] = {
        "sources": ["data_split", "init"], "fixed": [], "params": {"test_size": 0.25}
    }
    t = vareval.paired(df, metric="acc", by="method", pair_on="seed")
    assert t["a - b"].test == "paired t" and "assumes fixed splits" in t.notes[0]
    df.attrs["spec"]["split"] = "data_split"
    t = vareval.paired(df, metric="acc", by="method", pair_on="seed")
    r = t["a - b"]
    assert r.test == "corrected resampled t" and r.pvalue == pytest.approx(ref.pvalue)
    assert "split = 'data_split'" in t.notes[0] and "test_size = 0.25" in t.notes[0]
    df.attrs["spec"]["fixed"] = ["data_split"]
    r = vareval.paired(df, metric="acc", by="method", pair_on="seed", rng=0)["a - b"]
    assert r.test == "paired t"


def test_report_refuses_the_naive_test_on_redrawn_splits(tmp_path):
    path = _write(tmp_path, "runs.csv", _runs(10))
    args = (
        "report", path, "-o", tmp_path / "r.html", "--metric", "acc", "--by", "method",
        "--pair-on", "seed", "--test", "corrected",
    )  # fmt: skip
    res = _run(*args)
    assert res.exit_code == 2 and "--test-fraction" in res.output
    res = _run(*args, "--test-fraction", "0.25")
    assert res.exit_code == 0 and "seed 0" in res.output
    html = (tmp_path / "r.html").read_text()
    assert "corrected t CI" in html and "corrected resampled t" in html


# --- hidden failures --------------------------------------------------------------

TRIAL = '''
def train(trial):
    if trial.factors["model"] == "b" and trial.seed < 4:
        raise RuntimeError("diverged")
    shift = 0.05 if trial.factors["model"] == "b" else 0.0
    return {"acc": 0.8 + shift + 0.01 * float(trial.rng("init").normal())}
'''

SPEC = """
[experiment]
name = "failing"
trial = "failing_trial:train"
path = {path!r}
seeds = 20
configs = 1
reruns = 1
entropy = 5

[factors]
model = ["a", "b"]

[randomness]
sources = ["init"]
"""


@pytest.fixture
def failing_store(tmp_path):
    (tmp_path / "failing_trial.py").write_text(TRIAL)
    spec = tmp_path / "experiment.toml"
    spec.write_text(SPEC.format(path=str(tmp_path)))
    store = tmp_path / "runs.db"
    res = _run("run", spec, "--store", store, "--engine", "serial", "--no-progress")
    assert "20 done" not in res.output and "4 failed" in res.output, res.output
    return store


SENTENCE = "method b: 4 of 20 runs failed; its summary covers the 16 that finished"


def test_store_summary_counts_failed_trials(failing_store, tmp_path):
    res = _run("summarize", failing_store, "--metric", "acc", "--by", "model")
    assert res.exit_code == 0, res.output
    assert SENTENCE in res.output and "a survivor statistic" in res.output
    row = next(line for line in res.output.splitlines() if line.startswith("  b "))
    assert row.split()[1:] == ["20", "16", "4", "0", "0", "16"]
    out = json.loads(
        _run("summarize", failing_store, "--metric", "acc", "--by", "model", "--json").stdout
    )
    assert out["b"]["runs"]["failed"] == 4 and out["b"]["n"] == 16
    assert out["a"]["runs"] == {
        "planned": 20, "done": 20, "failed": 0, "not_run": 0, "non_finite": 0,
        "summarised": 20, "non_finite_rows": [], "pruned": 0,
    }  # fmt: skip
    with pytest.warns(vareval.errors.VarevalWarning, match="4 of 40 trials are not done"):
        df = vareval.read_table(failing_store)
    table = vareval.summarize(df, metric="acc", by="model")
    assert table.runs["b"].failed == 4 and table["b"].n == 16
    assert table.notes[0].startswith(SENTENCE)
    report = tmp_path / "r.html"
    res = _run("report", failing_store, "--metric", "acc", "--by", "model", "-o", report)
    assert res.exit_code == 0, res.output
    html = report.read_text()
    first = html[html.index("<section"): html.index("</section>")]
    assert "Method b: 4 of 20 runs failed; its summary covers the 16 that finished" in first
    assert "36 runs (of 40 planned)" in first


def test_table_status_column_and_non_finite_values(tmp_path):
    df = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 5,
            "acc": [0.80, 0.81, 0.82, 0.83, 0.90, None, 0.91, float("nan"), 0.93],
            "status": ["done"] * 5 + ["failed"] + ["done"] * 3,
        }
    )
    path = _write(tmp_path, "runs.csv", df)
    # a finished run without a number is an error in every command (one rule) ...
    res = _run("summarize", path, "--metric", "acc", "--by", "method")
    assert res.exit_code == 2 and "data row(s) 8 of finished runs" in res.output, res.output
    with pytest.raises(vareval.errors.DataError, match="data row\\(s\\) 8 of finished runs"):
        vareval.summarize(df, metric="acc", by="method")
    # ... a failed run (the status column) is counted, and --dropna names what it drops
    res = _run("summarize", path, "--metric", "acc", "--by", "method", "--dropna")
    assert res.exit_code == 0, res.output
    assert "dropped" in res.output and "data rows 6, 8" in res.output
    kept = df.drop(index=7)
    table = vareval.summarize(kept, metric="acc", by="method")
    assert table["b"].n == 3 and table["b"].mean == pytest.approx(np.mean([0.9, 0.91, 0.93]))
    assert (table.runs["b"].failed, table.runs["b"].non_finite) == (1, 0)
    assert table.to_frame().loc["b", ["planned", "failed", "non_finite"]].tolist() == [4, 1, 0]
    bad = _write(tmp_path, "bad.csv", df.assign(status=["done"] * 8 + ["crashed"]))
    res = _run("summarize", bad, "--metric", "acc", "--by", "method")
    assert res.exit_code == 2 and "'crashed'" in res.output and "failed" in res.output
    # The report says it in its first section too.
    html = vareval.build_report(kept, metric="acc", by="method")
    first = html[html.index("<section"): html.index("</section>")]
    assert "Method b: 1 of 4 runs failed" in first and "survivor statistic" in first


def test_dropna_keeps_failed_and_pruned_runs_in_the_count(tmp_path):
    """--dropna drops empty scores; a failed or pruned run's empty score still counts it."""
    df = pd.DataFrame({
        "method": ["a"] * 4 + ["b"] * 6,
        "acc": [0.80, 0.81, None, 0.83, 0.90, None, 0.91, float("nan"), 0.93, None],
        "status": ["done", "done", "pruned", "done", "done", "failed", "done", "done", "done",
                   "failed"],
    })
    path = _write(tmp_path, "runs.csv", df)
    res = _run("summarize", path, "--metric", "acc", "--by", "method", "--dropna")
    assert res.exit_code == 0, res.output
    assert "data rows 3, 6, 8, 10; 3 of them did not finish" in res.output
    lines = res.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("runs:"))
    header = lines[at].replace("not run", "not_run").split()[1:]
    runs = {cells[0]: dict(zip(header, map(int, cells[1:]), strict=True))
            for cells in (line.split() for line in lines[at + 1: at + 3])}
    # the NaN of a finished run (row 8) is what --dropna leaves out, named in the warning;
    # the failed and pruned runs stay in the count, so the survivor note is still there
    assert runs["a"] == {"planned": 4, "done": 3, "failed": 0, "pruned": 1, "not_run": 0,
                         "non-finite": 0, "summarised": 3}, res.output
    assert (runs["b"]["planned"], runs["b"]["failed"], runs["b"]["summarised"]) == (5, 2, 3)
    assert "method a: 1 of 4 runs were pruned" in res.output


def test_report_option_that_cannot_be_used_is_an_error(tmp_path):
    runs = _write(tmp_path, "runs.csv", _runs(10))
    search = _write(tmp_path, "search.csv", pd.DataFrame({"model": ["a", "b"], "f1": [0.5, 0.6]}))
    res = _run(
        "report", runs, "-o", tmp_path / "r.html", "--metric", "acc", "--by", "method",
        "--search", search, "--bounds", "0,1",
    )  # fmt: skip
    assert res.exit_code == 2 and "tuning section cannot be built" in res.output
    assert not (tmp_path / "r.html").exists()


# --- mixed-model messages ---------------------------------------------------------


def test_singular_fit_is_not_an_optimiser_warning(tmp_path):
    from vareval.stats import fit_mixed

    y = np.array([1.0, 2, 3, 1, 2, 3, 1, 2, 3])
    g = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    with pytest.warns(vareval.errors.VarevalWarning, match="singular"):
        fit = fit_mixed(y, np.ones((9, 1)), [g])
    assert fit.converged and fit.singular
    assert "PGTOL" not in fit.message and "CONVERGENCE" not in fit.message
    df = pd.DataFrame({"seed": g, "score": y, "model": np.tile(["m", "n", "m"], 3)})
    path = _write(tmp_path, "v.csv", df)
    res = _run("variance", path, "--metric", "score", "--fixed", "model", "--random", "seed")
    assert res.exit_code == 0, res.output
    assert "note: singular fit" in res.output
    assert "WARNING" not in res.output and "PGTOL" not in res.output


# --- seeds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("best-of-k", "--metric", "accuracy", "--by", "method", "--resamples", "2000"),
        ("paired", "--metric", "accuracy", "--by", "method", "--pair-on", "seed",
         "--compare", "mlp,logreg", "--resamples", "2000"),
    ],  # fmt: skip
)
def test_randomised_commands_seed_with_zero_and_say_so(args):
    path = vareval.datasets.path("digits_runs.csv")
    first, second = _run(args[0], path, *args[1:]), _run(args[0], path, *args[1:])
    assert first.exit_code == 0 and first.output == second.output
    assert "seed 0" in first.output
    out = json.loads(_run(args[0], path, *args[1:], "--json").stdout)
    assert all(v["seed"] == 0 for v in out.values())
