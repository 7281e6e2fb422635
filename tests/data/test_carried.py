"""The design travels with the data: export, select -o and read_table keep a store's declaration.

The store declares re-drawn splits (``[randomness] split``) and their sizes
(``[params]``); every path the data takes (the store, its CSV and Parquet
export, a selection's output, the report, the Python API) must run the same
corrected test. The corrected test is checked against its formula computed
here with scipy (Nadeau and Bengio 2003: SE = sqrt(1/k + n_test/n_train) x SD).
"""

from __future__ import annotations

import json
import re
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sps

import vareval
from vareval.cli import main
from vareval.data import carried
from vareval.errors import VarevalWarning

HERE = Path(__file__).resolve().parent
PAIR = ("--metric", "accuracy", "--by", "model", "--pair-on", "seed", "--compare",
        "forest,logreg")  # fmt: skip


def cli(*args, code=0) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == code, res.output
    return res.output


def make_store(tmp, params="test_size = 0.25", trial="scored", name="bc", reruns=2) -> Path:
    toml = tmp / f"{name}.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_design_trials:{trial}"
        path = "{HERE}"
        seeds = 5
        configs = 2
        reruns = {reruns}
        entropy = 3
        [factors]
        model = ["logreg", "forest"]
        [space.model.logreg]
        C = {{ distribution = "uniform", low = 0, high = 1 }}
        [space.model.forest]
        depth = {{ distribution = "uniform", low = 0, high = 1 }}
        [randomness]
        sources = ["data_split", "init"]
        split = "data_split"
        [params]
        {params}
    """))
    store = tmp / f"{name}.db"
    CliRunner().invoke(main, ["run", str(toml), "--store", str(store), "--engine", "serial"])
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("carried"))


def corrected(a, b, ratio):
    """The corrected resampled t test by its formula: (estimate, SE, p)."""
    d = np.asarray(a) - np.asarray(b)
    k = d.size
    se = np.sqrt((1 / k + ratio) * d.var(ddof=1))
    return d.mean(), se, 2 * sps.t.sf(abs(d.mean() / se), k - 1)


def test_every_path_runs_the_stores_corrected_test(store, tmp_path):
    """The issue's reproduction: select -o, export and the API ran the naive t test."""
    outs = {"store": json.loads(cli("paired", store, *PAIR, "--json"))["forest - logreg"]}
    for name in ("trials.csv", "trials.parquet", "trials.tsv", "trials.jsonl"):
        cli("export", store, "-o", tmp_path / name)
        outs[name] = json.loads(cli("paired", tmp_path / name, *PAIR, "--json"))[
            "forest - logreg"
        ]
    df = vareval.read_store_table(store)
    means = df.groupby(["model", "seed"])["accuracy"].mean().unstack("model")
    est, se, p = corrected(means["forest"], means["logreg"], 0.25 / 0.75)
    for name, out in outs.items():
        assert out["test"] == "corrected resampled t", name
        assert (out["estimate"], out["se_corrected"], out["pvalue"]) == pytest.approx(
            (est, se, p), rel=1e-9
        ), name
        assert out["design"].startswith("design (run store")
    assert "carried by trials.parquet" in outs["trials.parquet"]["design"]
    naive = sps.ttest_rel(means["forest"], means["logreg"]).pvalue
    assert naive < p  # what the lost design gave: an anti-conservative p


def test_the_selection_output_carries_the_design_to_paired_and_the_report(store, tmp_path):
    sel = ("--validation", "val_accuracy", "--test", "accuracy", "--by", "model")
    out = {}
    for name in ("selected.csv", "selected.parquet"):
        cli("select", store, *sel, "-o", tmp_path / name)
        out[name] = json.loads(cli("paired", tmp_path / name, *PAIR, "--json"))[
            "forest - logreg"
        ]
    chosen = vareval.select(vareval.read_store_table(store), validation="val_accuracy",
                            test="accuracy", by="model")  # fmt: skip
    assert "chosen on 'val_accuracy'" in chosen.design.statement()
    api = vareval.paired(chosen.table, metric="accuracy", by="model", pair_on="seed",
                         a="forest", b="logreg")["forest - logreg"]  # fmt: skip
    wide = chosen.table.pivot(index="seed", columns="model", values="accuracy")
    est, se, p = corrected(wide["forest"], wide["logreg"], 1 / 3)
    for r in (*out.values(), api.to_dict()):
        assert r["test"] == "corrected resampled t"
        assert (r["estimate"], r["se_corrected"], r["pvalue"]) == pytest.approx((est, se, p))
    design = out["selected.csv"]["design"]
    assert "carried by selected.csv" in design and "2 reruns" not in design
    # the report chooses the same rows and reads the store's test share: no --test-fraction
    html = tmp_path / "r.html"
    cli("report", store, "--metric", "accuracy", "--by", "model", "--pair-on", "seed",
        "--baseline", "logreg", "--select-on", "val_accuracy", "-o", html)  # fmt: skip
    from vareval.report.builder import collect
    from vareval.report.sections._base import interval

    cli_pair = out["selected.csv"]
    assert interval((cli_pair["low"], cli_pair["high"])) in html.read_text(encoding="utf-8")

    data, *_ = collect(vareval.read_table(tmp_path / "selected.csv"), metric="accuracy",
                       by="model", pair_on="seed", baseline="logreg")  # fmt: skip
    r = data.facts["paired"]["forest \u2212 logreg"]
    assert (r.estimate, r.pvalue) == pytest.approx((est, p))


def test_messages_say_who_declared_the_split(tmp_path):
    undeclared = make_store(tmp_path, params="", name="nosize")
    res = CliRunner().invoke(main, ["report", str(undeclared), "--metric", "accuracy", "--by",
                                    "model", "--pair-on", "seed", "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 2
    assert "the store's [randomness] split = 'data_split'" in res.output
    assert "you said" not in res.output and "--test-fraction" in res.output
    flag = cli("paired", undeclared, *PAIR, "--test", "corrected", "--test-fraction", "0.2")
    assert "given by the caller: --test corrected" in flag
    assert "test share 0.2 (given by the caller: --test-fraction)" in flag


@pytest.mark.parametrize(
    ("params", "flags", "ratio", "said"),
    [
        ("test_size = 0.25", (), 1 / 3, "assumed 1 - test share"),
        ("train_size = 0.5\ntest_size = 0.25", (), 0.5, "[params] train_size = 0.5"),
        ("val_size = 0.25\ntest_size = 0.25", (), 0.5, "1 - test - validation"),
        ("train_size = 300\ntest_size = 150", (), 0.5, "[params] train_size = 300"),
        ("test_size = 0.25", ("--train-fraction", "0.5"), 0.5, "--train-fraction"),
    ],
)
def test_the_training_share_is_declared_not_assumed(tmp_path, params, flags, ratio, said):
    """A 50/25/25 split uses n_test/n_train = 0.5, not the 0.333 of train = 1 - test."""
    store = make_store(tmp_path, params=params, name="sizes")
    out = json.loads(cli("paired", store, *PAIR, *flags, "--json"))["forest - logreg"]
    assert out["test_train_ratio"] == pytest.approx(ratio)
    assert any(said in n for n in out["notes"]), out["notes"]
    assert f"n_test/n_train = {ratio:.3g}" in out["notes"][-1]
    assert f"= {ratio:.3g})" in out["design"]  # the design line says which ratio
    df = vareval.read_table(store)
    means = df.groupby(["model", "seed"])["accuracy"].mean().unstack("model")
    assert out["se_corrected"] == pytest.approx(corrected(means["forest"], means["logreg"],
                                                          ratio)[1])  # fmt: skip
    train = float(flags[1]) if flags else None
    api = vareval.paired(df, metric="accuracy", by="model", pair_on="seed", a="forest",
                         b="logreg", train_fraction=train)["forest - logreg"]  # fmt: skip
    assert api.test_train_ratio == pytest.approx(ratio)
    plan = json.loads(cli("plan", store, *PAIR, *flags, "--target-se", "0.01", "--json"))
    assert plan["forest - logreg"]["test_train_ratio"] == pytest.approx(ratio)


def test_inconsistent_shares_are_refused_naming_who_said_them(tmp_path):
    store = make_store(tmp_path, params="test_size = 0.25", name="bad")
    out = cli("paired", store, *PAIR, "--train-fraction", "0.9", code=2)
    assert "add up to more than 1" in out and "--train-fraction" in out
    assert "[params] test_size = 0.25" in out


def test_a_changed_table_drops_its_stale_sidecar_with_a_warning(store, tmp_path):
    path = tmp_path / "t.csv"
    cli("export", store, "--done-only", "-o", path)
    assert vareval.read_table(path).attrs["spec"]["split"] == "data_split"
    path.write_text(path.read_text() + path.read_text().splitlines()[1] + "\n")
    with pytest.warns(VarevalWarning, match="changed after vareval wrote it"):
        assert "spec" not in vareval.read_table(path).attrs
    # a plain table written over it removes the sidecar: it described another table
    vareval.data.io.write_table(pd.DataFrame({"a": [1, 2]}), path)
    assert not carried.sidecar(path).exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vareval.read_table(path).attrs == {}


def test_a_parquet_file_on_standard_input_keeps_its_design(store, tmp_path):
    path = tmp_path / "t.parquet"
    cli("export", store, "--format", "parquet", "-o", path)
    res = CliRunner().invoke(main, ["paired", "-", *PAIR, "--json"], input=path.read_bytes())
    out = json.loads(res.output)["forest - logreg"]
    assert out["test"] == "corrected resampled t"
    assert "carried by standard input" in out["design"]


def test_paired_frame_puts_the_corrected_se_beside_the_corrected_interval(store):
    t = vareval.paired(vareval.read_table(store), metric="accuracy", by="model",
                       pair_on="seed", a="forest", b="logreg")  # fmt: skip
    row = t.to_frame().iloc[0]
    half = sps.t.ppf(0.975, row["pairs"] - 1) * row["se_corrected"]
    assert (row["t_ci_low"], row["t_ci_high"]) == pytest.approx(
        (row["estimate"] - half, row["estimate"] + half)
    )
    assert row["se_corrected"] > row["se"] and row["test_train_ratio"] == pytest.approx(1 / 3)


def _holm(p):
    """Holm's step-down adjustment, written out: sorted p times (m - i), running max, cap 1."""
    order = np.argsort(p)
    m = len(p)
    stepped = np.maximum.accumulate([(m - i) * p[j] for i, j in enumerate(order)])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1)
    return out


@pytest.mark.parametrize("family", [{"baseline": "logreg"}, {"all_pairs": True}])
def test_the_python_paired_compares_a_family_as_the_command_does(family):
    df = vareval.datasets.load("digits_runs.csv")
    flag = ["--baseline", "logreg"] if "baseline" in family else ["--all-pairs"]
    args = ("--metric", "accuracy", "--by", "method", "--pair-on", "seed", "--seed", "4")
    res = CliRunner().invoke(main, ["paired", "-", *args, *flag, "--json"],
                             input=df.to_csv(index=False))  # fmt: skip
    got = json.loads(res.output)
    t = vareval.paired(df, metric="accuracy", by="method", pair_on="seed", rng=4, **family)
    frame = t.to_frame()
    assert list(frame.index) == list(got)
    assert frame["pvalue_holm"].to_numpy() == pytest.approx(_holm(frame["pvalue"].to_numpy()))
    for key, r in got.items():
        assert r["pvalue_holm"] == pytest.approx(frame.loc[key, "pvalue_holm"], rel=1e-12)
        for field in ("estimate", "se", "low", "high", "pvalue", "bootstrap_low"):
            assert r[field] == pytest.approx(getattr(t[key], field), rel=1e-12), field
    with pytest.raises(vareval.errors.ArgumentError, match="is not a method"):
        vareval.paired(df, metric="accuracy", by="method", pair_on="seed", baseline="svm")


def test_a_tie_of_best_runs_prints_zero():
    # seed means 0.2 and 0.2 computed in a different order differ by 5.6e-17
    df = pd.DataFrame({
        "m": ["a"] * 6 + ["b"] * 6, "seed": [0, 0, 0, 1, 1, 1] * 2,
        "config": ["x", "y", "z"] * 4,
        "acc": [0.1, 0.2, 0.3, 0.05, 0.1, 0.15, 0.3, 0.2, 0.1, 0.1, 0.05, 0.3],
    })  # fmt: skip
    best = df.groupby(["m", "seed"])["acc"].mean().groupby("m").max()
    assert best["a"] != best["b"] and abs(best["a"] - best["b"]) < 1e-15  # the premise
    t = vareval.paired(df, metric="acc", by="m", pair_on="seed", a="a", b="b")
    assert t["a - b"].selected_gap == 0.0
    res = CliRunner().invoke(main, ["paired", "-", "--metric", "acc", "--by", "m", "--pair-on",
                                    "seed"], input=df.to_csv(index=False))  # fmt: skip
    line = next(x for x in res.output.splitlines() if "best A - best B" in x)
    assert re.search(r"best B = \+0\.0+ ", line) and "e-17" not in line


def test_plan_does_not_call_the_smallest_detectable_effect_an_se(store):
    df = vareval.read_table(store)
    means = df.groupby(["model", "seed"])["accuracy"].mean().unstack("model")
    sd = (means["forest"] - means["logreg"]).std(ddof=1)
    out = cli("plan", store, *PAIR, "--effect", sd * 0.5, code=2)
    assert "smallest effect the corrected test detects with power 0.8" in out
    assert "test's SE stays" not in out and "its SE never falls below" in out
