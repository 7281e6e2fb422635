"""One design, one answer: stores made by `vareval run`, read the same way everywhere.

Each store is a small re-seeding experiment (tests/data/_design_trials.py, a
trial with known seed, configuration and rerun effects) run through the CLI
with per-model search spaces, nested or crossed configurations.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sps

import vareval
from vareval.cli import main
from vareval.data.design import design_of, metric_bounds

HERE = Path(__file__).resolve().parent
SPACES = {
    "per-model": """
        [space.model.logreg]
        C = { distribution = "uniform", low = 0, high = 1 }
        [space.model.forest]
        depth = { distribution = "uniform", low = 0, high = 1 }
    """,
    "shared": """
        [space]
        lr = { distribution = "uniform", low = 0, high = 1 }
    """,
}


def cli(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def make_store(tmp, *, space="per-model", nested=True, seeds=3, configs=2, reruns=2,
               entropy=7, randomness='sources = ["data_split", "init"]',
               trial="scored") -> Path:
    toml = tmp / f"exp{entropy}.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_design_trials:{trial}"
        path = "{HERE}"
        seeds = {seeds}
        configs = {configs}
        nested = {str(nested).lower()}
        reruns = {reruns}
        entropy = {entropy}
        [factors]
        model = ["logreg", "forest"]
        {textwrap.dedent(SPACES[space])}
        [randomness]
        {randomness}
        [params]
        test_size = 0.3
    """))
    store = tmp / f"s{entropy}.db"
    cli("run", toml, "--store", store, "--engine", "serial")
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("design"))


def test_the_design_of_a_store_is_read_from_its_declaration(store):
    d = design_of(vareval.read_store_table(store), by="experiment", metric="accuracy")
    assert (d.source, d.unit, d.units, d.configs, d.config_in, d.reruns) == (
        "store", "seed", 3, "nested", ("seed", "model"), 2
    )
    assert d.split == "unknown" and d.bounds == (0.0, 1.0)
    assert d.statement().startswith(
        "design (run store): units: 3 seeds; configurations nested in seed and model; "
        "2 reruns each (same streams)"
    )


def test_a_plain_tables_design_is_inferred_from_its_labels(store):
    df = pd.read_csv(io.StringIO(cli("export", store, "--done-only")))
    d = design_of(df, by="model", metric="accuracy")
    assert (d.source, d.units, d.configs, d.config_in, d.reruns) == (
        "labels", 3, "nested", ("seed", "model"), 2
    )
    crossed = df.assign(config=df["config_index"].astype(str))
    d = design_of(crossed, by="model")
    assert d.configs == "crossed" and "crossed with seed" in d.statement()
    assert design_of(df.drop(columns="seed"), by="model").unit is None


def test_metric_bounds_come_from_the_name_or_the_caller():
    assert metric_bounds("test_accuracy")[0] == (0.0, 1.0)
    assert metric_bounds("macro_f1")[0] == (0.0, 1.0)
    assert metric_bounds("roc_auc")[0] == (0.0, 1.0)
    assert metric_bounds("loss")[0] is None
    assert metric_bounds("loss", (0, 5)) == ((0.0, 5.0), "given")
    with pytest.raises(vareval.errors.ArgumentError, match="low < high"):
        metric_bounds("x", (1, 0))


def test_export_labels_name_one_setting_each(store):
    df = pd.read_csv(io.StringIO(cli("export", store, "--done-only")))
    per_label = df.groupby("config")[["model", "seed"]].nunique()
    assert (per_label == 1).all(axis=None)  # one label, one model, one seed
    assert df["config"].str.startswith(("logreg/", "forest/")).all()
    assert df["config"].nunique() == 2 * 3 * 2


def test_exported_curves_carry_the_trial_tables_labels(tmp_path):
    store = make_store(tmp_path, entropy=11, trial="curved")
    trials = pd.read_csv(io.StringIO(cli("export", store)))
    curves = pd.read_csv(io.StringIO(cli("export", store, "--curves")))
    assert len(curves) == 2 * len(trials) and curves["config"].str.contains("/").all()
    label = dict(zip(trials["trial_id"], trials["config"], strict=True))
    assert (curves["config"] == curves["trial_id"].map(label)).all()
    with vareval.experiment.store.Store(store, readonly=True) as st:  # the API's table
        assert st.curves()["config"].tolist() == curves["config"].tolist()


def test_variance_report_and_export_give_one_fit(store, tmp_path):
    args = ("--metric", "accuracy", "--fixed", "model", "--random", "seed,config")
    out = json.loads(cli("variance", store, *args, "--json"))
    assert out["design"].startswith("design (run store): units: 3 seeds")
    (cli_pair,) = out["pairwise"]
    exported = pd.read_csv(io.StringIO(cli("export", store, "--done-only")))
    api = vareval.variance(exported, metric="accuracy", fixed=["model"],
                           random=["seed", "config"])  # fmt: skip
    levels = dict(zip(api.components_frame()["component"],
                      api.components_frame()["levels"], strict=True))  # fmt: skip
    assert levels["config"] == 12  # nested: 2 models x 3 seeds x 2 configurations
    (row,) = api.to_dict()["pairwise"]
    for key in ("estimate", "se", "ci_low", "ci_high", "p"):
        assert row[key] == pytest.approx(cli_pair[key], rel=1e-9), key
    html = tmp_path / "r.html"
    cli("report", store, *args, "-o", html)
    text = html.read_text(encoding="utf-8")
    assert f"{cli_pair['estimate']:.4g}" in text and f"{cli_pair['ci_high']:.4g}" in text
    # the design section: another metric is an outcome, times are times
    assert "val_accuracy</td><td>another metric" in text
    times = r"started</td><td>bookkeeping</td><td[^>]*>\d+</td><td>20\d\d-\d\d-\d\d "
    assert re.search(times, text)


def test_summaries_cluster_by_seed_and_say_so(store):
    df = vareval.read_store_table(store)
    t = vareval.summarize(df, metric="accuracy", by="experiment")
    s = t["logreg"]
    x = df.loc[df.experiment == "logreg"]
    means = x.groupby("seed")["accuracy"].mean().to_numpy()
    half = sps.t.ppf(0.975, 2) * means.std(ddof=1) / np.sqrt(3)
    assert (s.n, s.units) == (6, 3)  # 3 seeds x 2 configurations; reruns nested in each
    assert s.mean == pytest.approx(means.mean())
    assert (s.mean_low, s.mean_high) == pytest.approx((means.mean() - half, means.mean() + half))
    assert s.confidence_interval() == pytest.approx((s.mean_low, s.mean_high))
    assert any("over the seeds' means" in n for n in t.notes)
    text = cli("summarize", store, "--metric", "accuracy", "--by", "experiment")
    assert "design (run store): units: 3 seeds" in text and "seeds" in text.splitlines()[1]
    js = json.loads(cli("summarize", store, "--metric", "accuracy", "--by", "experiment",
                        "--json"))  # fmt: skip
    assert js["logreg"]["mean_low"] == pytest.approx(s.mean_low)


def test_a_table_without_a_seed_gets_a_note():
    df = pd.DataFrame({"m": ["a"] * 4 + ["b"] * 4, "loss": np.arange(8.0)})
    t = vareval.summarize(df, metric="loss", by="m")
    assert t["a"].units is None
    assert any("could not be inferred" in n for n in t.notes)


def test_intervals_respect_the_metrics_bounds():
    df = pd.DataFrame({"m": ["a"] * 3, "seed": [0, 1, 2], "accuracy": [0.99, 0.95, 1.0]})
    t = vareval.summarize(df, metric="accuracy", by="m")
    s = t["a"]
    raw = sps.t.interval(0.95, 2, loc=np.mean(df.accuracy), scale=sps.sem(df.accuracy))
    assert raw[1] > 1 and s.mean_high == 1.0 and s.mean_low == pytest.approx(raw[0])
    assert s.clipped and any("cut to the metric's bounds [0, 1]" in n for n in t.notes)
    assert s.confidence_interval(confidence_level=0.99).high == 1.0
    out = json.loads(
        CliRunner().invoke(main, ["summarize", "-", "--metric", "accuracy", "--by", "m",
                                  "--bounds", "0,0.98", "--json"],
                           input=df.assign(accuracy=[0.97, 0.95, 0.98]).to_csv(index=False)).output
    )  # fmt: skip
    assert out["a"]["mean_high"] == 0.98


def test_paired_says_the_naive_test_assumes_fixed_splits(store, tmp_path):
    args = ("--metric", "accuracy", "--by", "model", "--pair-on", "seed,config_index,rerun",
            "--compare", "forest,logreg")  # fmt: skip
    text = cli("paired", store, *args)
    assert "paired t test" in text and "assumes fixed splits" in text
    declared = make_store(tmp_path, entropy=8, randomness='sources = ["data_split", "init"]\n'
                          'split = "data_split"')  # fmt: skip
    out = json.loads(cli("paired", declared, *args, "--json"))["forest - logreg"]
    assert out["test"] == "corrected resampled t"
    assert out["test_train_ratio"] == pytest.approx(3 / 7)
    assert "test_size = 0.3" in out["notes"][0]


def test_paired_on_the_seed_averages_each_methods_runs_to_seed_means(store):
    args = ("--metric", "accuracy", "--by", "model", "--pair-on", "seed",
            "--compare", "forest,logreg")  # fmt: skip
    text = cli("paired", store, *args)
    assert "NOTE paired on seed means: each method's runs within a seed (up to 2" in text
    out = json.loads(cli("paired", store, *args, "--json"))["forest - logreg"]
    df = vareval.read_store_table(store)
    means = df.groupby(["model", "seed"])["accuracy"].mean().unstack("model")
    ref = sps.ttest_rel(means["forest"], means["logreg"])
    assert out["k"] == 3
    assert out["estimate"] == pytest.approx((means["forest"] - means["logreg"]).mean(), rel=1e-12)
    assert out["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    api = vareval.paired(df, metric="accuracy", by="model", pair_on="seed", a="forest",
                         b="logreg", rng=0)  # fmt: skip
    assert (api["forest - logreg"].estimate, api["forest - logreg"].se) == pytest.approx(
        (out["estimate"], out["se"]), rel=1e-12
    )
    assert any("seed means" in n for n in api.notes)
    # plan plans seeds with the SD of those seed-mean differences
    plan = json.loads(cli("plan", store, *args, "--target-se", "0.005", "--json"))
    assert plan["forest - logreg"]["sd_diff"] == pytest.approx(out["sd"], rel=1e-12)
    # an explicit finer pairing still matches the runs one to one; reruns of the same
    # streams are nested in their cell, so a cell is one pair, never each rerun
    fine = json.loads(cli("paired", store, *args[:5], "seed,config_index,rerun",
                          *args[6:], "--json"))["forest - logreg"]  # fmt: skip
    assert fine["k"] == 6


def test_the_reports_paired_section_and_figures_use_the_clis_intervals(store, tmp_path):
    from vareval.report.builder import collect, figures
    from vareval.report.sections._base import interval

    args = ("--metric", "accuracy", "--by", "model")
    pair = ("--pair-on", "seed", "--compare", "forest,logreg")
    out = json.loads(cli("paired", store, *args, *pair, "--json"))["forest - logreg"]
    summ = json.loads(cli("summarize", store, *args, "--json"))
    data, sections, _, _ = collect(vareval.read_store_table(store), metric="accuracy",
                                   by="model", pair_on="seed", baseline="logreg")  # fmt: skip
    r = data.facts["paired"]["forest \u2212 logreg"]
    assert r.k == 3  # seed means, as `vareval paired`
    for key in ("estimate", "se", "low", "high", "pvalue"):
        assert getattr(r, key) == pytest.approx(out[key], rel=1e-12), key
    for m, s in data.facts["summaries"].items():  # what the strip plot draws
        assert s.confidence_interval() == pytest.approx(
            (summ[m]["mean_low"], summ[m]["mean_high"]), rel=1e-12
        )
    names = {f.name for f in figures(sections)}
    assert {"scores", "paired-differences"} <= names
    html = tmp_path / "r.html"
    cli("report", store, *args, "--pair-on", "seed", "--baseline", "logreg", "-o", html)
    text = html.read_text(encoding="utf-8")
    assert "paired on seed means" in text
    assert interval((out["low"], out["high"])) in text  # the CLI's interval, as printed


def test_plan_uses_the_variance_the_test_uses(tmp_path):
    store = make_store(tmp_path, entropy=9, randomness='sources = ["data_split", "init"]\n'
                       'split = "data_split"')  # fmt: skip
    args = ("--metric", "accuracy", "--by", "model", "--pair-on", "seed,config_index,rerun",
            "--compare", "forest,logreg")  # fmt: skip
    r = json.loads(cli("paired", store, *args, "--json"))["forest - logreg"]
    # the plan's SE at the pilot's size is the corrected SE the test used
    p = json.loads(cli("plan", store, *args, "--target-se", r["se_corrected"] * 1.01,
                       "--json"))["forest - logreg"]  # fmt: skip
    assert p["test_train_ratio"] == pytest.approx(r["test_train_ratio"])
    assert p["k_required"] <= r["k"]
    curve = dict(zip(p["curve_k"], p["curve_se"], strict=True))
    if r["k"] in curve:
        assert curve[r["k"]] == pytest.approx(r["se_corrected"])
    res = CliRunner().invoke(main, ["plan", str(store), *args, "--target-se",
                                    str(r["sd"] * 0.5)])  # fmt: skip
    assert res.exit_code == 2 and "stays above" in res.output
    naive = json.loads(cli("plan", store, *args, "--target-se", r["se_corrected"],
                           "--test", "t", "--json"))["forest - logreg"]  # fmt: skip
    assert naive["test_train_ratio"] == 0


@pytest.mark.parametrize("case", range(3))
def test_every_path_gives_one_answer_on_random_designs(case, tmp_path):
    """Random designs: the CLI, the API, the report and the export agree."""
    g = np.random.default_rng(case)
    store = make_store(
        tmp_path, space=["per-model", "shared"][g.integers(2)], nested=bool(g.integers(2)),
        seeds=int(g.integers(3, 5)), configs=int(g.integers(2, 4)),
        reruns=2, entropy=100 + case,
    )  # fmt: skip
    df = vareval.read_store_table(store)
    exported = pd.read_csv(io.StringIO(cli("export", store, "--done-only")))
    # summaries: CLI, API on the store and API on the export
    api = vareval.summarize(df, metric="accuracy", by="model")
    js = json.loads(cli("summarize", store, "--metric", "accuracy", "--by", "model", "--json"))
    back = vareval.summarize(exported, metric="accuracy", by="model")
    for m in ("logreg", "forest"):
        for key in ("mean", "se", "mean_low", "mean_high"):
            assert js[m][key] == pytest.approx(getattr(api[m], key), rel=1e-12)
            assert getattr(back[m], key) == pytest.approx(getattr(api[m], key), rel=1e-12)
    # the mixed model: CLI on the store == API on the export == the report
    args = ("--metric", "accuracy", "--fixed", "model", "--random", "seed,config")
    (pair,) = json.loads(cli("variance", store, *args, "--json"))["pairwise"]
    (row,) = vareval.variance(exported, metric="accuracy", fixed=["model"],
                              random=["seed", "config"]).to_dict()["pairwise"]  # fmt: skip
    for key in ("estimate", "se", "ci_low", "ci_high"):
        assert row[key] == pytest.approx(pair[key], rel=1e-7, abs=1e-12), key
    html = tmp_path / "r.html"
    cli("report", store, *args, "-o", html)
    assert f"{pair['estimate']:.4g}" in html.read_text(encoding="utf-8")
    # paired and plan: one SE
    pargs = ("--metric", "accuracy", "--by", "model", "--pair-on", "seed,config_index,rerun",
             "--compare", "forest,logreg")  # fmt: skip
    r = json.loads(cli("paired", store, *pargs, "--json"))["forest - logreg"]
    a = vareval.paired(df, metric="accuracy", by="model", pair_on=["seed", "config_index", "rerun"],
                       a="forest", b="logreg", rng=0)["forest - logreg"]  # fmt: skip
    assert (r["estimate"], r["se"], r["low"], r["high"]) == pytest.approx(
        (a.estimate, a.se, a.low, a.high), rel=1e-12
    )
    p = json.loads(cli("plan", store, *pargs, "--target-se", r["se"], "--json"))
    assert p["forest - logreg"]["sd_diff"] == pytest.approx(r["sd"], rel=1e-12)
    assert p["forest - logreg"]["k_required"] <= r["k"]
