"""Choose on validation, report on test: on a store made by ``vareval run``.

Two scikit-learn models x 3 seeds x 3 configurations (sampled anew per seed)
x 2 independent reruns on the breast-cancer data, each trial recording a
validation and a test accuracy; the chosen configuration per seed and its test
score are checked against a plain pandas computation, and every command that
reads the selected table against the Python API.
"""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval.cli import main

TRIAL = '''
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def train(trial):
    x, y = load_breast_cancer(return_X_y=True)
    split = trial.random_state("data_split")
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.3, random_state=split)
    x_tr, x_va, y_tr, y_va = train_test_split(x_tr, y_tr, test_size=0.3, random_state=split)
    scale = StandardScaler().fit(x_tr)
    x_tr, x_va, x_te = scale.transform(x_tr), scale.transform(x_va), scale.transform(x_te)
    c = trial.config["c"]
    if trial.factors["model"] == "logreg":
        clf = LogisticRegression(C=c, max_iter=200)
    else:
        clf = SGDClassifier(alpha=1 / (c * len(y_tr)), max_iter=5, tol=None,
                            random_state=trial.random_state("init"))
    clf.fit(x_tr, y_tr)
    return {"val_acc": float(clf.score(x_va, y_va)), "test_acc": float(clf.score(x_te, y_te))}
'''

TOML = """
[experiment]
name = "select-on-validation"
trial = "sel_trial:train"
path = {path!r}
seeds = 3
configs = 3
nested = true
reruns = 2
rerun_mode = "independent"
entropy = 2026

[factors]
model = ["logreg", "sgd"]

[space]
c = {{ distribution = "log-uniform", low = 1e-3, high = 1e2 }}

[randomness]
sources = ["data_split", "init"]
fixed = ["data_split"]
"""


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("select")
    (d / "sel_trial.py").write_text(TRIAL)
    (d / "experiment.toml").write_text(textwrap.dedent(TOML.format(path=str(d))))
    db = d / "runs.db"
    res = _invoke("run", d / "experiment.toml", "--store", db, "--engine", "serial",
                  "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    return db


def _by_hand(df, unit, ties="first"):
    """The plain pandas computation: mean over a configuration's rows, then the best."""
    keys = ["model", *unit, "config"]
    per = df.groupby(keys, sort=False)[["val_acc", "test_acc"]].mean().reset_index()
    rows = []
    for _, g in per.groupby(["model", *unit], sort=False):
        best = g["val_acc"].max()
        won = g[g["val_acc"] == best]
        row = won.iloc[0].copy()
        if ties == "average":
            row["test_acc"] = won["test_acc"].mean()
        row["n_searched"], row["n_tied"] = len(g), len(won)
        rows.append(row)
    return pd.DataFrame(rows).reset_index(drop=True)


@pytest.mark.parametrize("unit", [["seed"], ["seed", "rerun"]])
@pytest.mark.parametrize("ties", ["first", "average"])
def test_chosen_configuration_and_test_score_match_pandas(store, unit, ties):
    df = vareval.read_store_table(store)
    assert len(df) == 2 * 3 * 3 * 2
    res = vareval.select(df, validation="val_acc", test="test_acc", by="model", unit=unit,
                         ties=ties)  # fmt: skip
    want = _by_hand(df, unit, ties)
    got = res.table
    assert list(got["config"]) == list(want["config"].astype(str))
    assert list(got["model"]) == list(want["model"])
    np.testing.assert_array_equal(got["seed"].astype(int), want["seed"].astype(int))
    np.testing.assert_allclose(got["test_acc"], want["test_acc"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["val_acc"], want["val_acc"], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(got["n_searched"], want["n_searched"])
    np.testing.assert_array_equal(got["n_tied"], want["n_tied"])
    assert (got["n_searched"] == 3).all()
    assert res.rows_per_config == (1 if "rerun" in unit else 2)
    assert "'val_acc'" in res.procedure and "no part in the choice" in res.procedure
    assert (got["selection"] == res.procedure).all()


def test_cli_select_writes_the_table_the_other_commands_read(store, tmp_path):
    out = tmp_path / "selected.csv"
    res = _invoke("select", store, "--validation", "val_acc", "--test", "test_acc",
                  "--by", "model", "-o", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "selection: chosen on 'val_acc' (highest wins) among 3 'config' values per seed" in (
        res.output
    )
    api = vareval.select(vareval.read_store_table(store), validation="val_acc",
                         test="test_acc", by="model")  # fmt: skip
    table = pd.read_csv(out)
    np.testing.assert_array_equal(table["test_acc"], api.table["test_acc"])
    assert list(table.columns[-4:]) == ["n_searched", "n_tied", "selected_on", "selection"]
    # summarize reads it: the same means as the API's summary of the chosen test scores
    summ = _invoke("summarize", out, "--metric", "test_acc", "--by", "model", "--json")
    assert summ.exit_code == 0, summ.output
    summaries = json.loads(summ.output)
    for model, g in api.table.groupby("model"):
        assert summaries[model]["scores"] == g["test_acc"].tolist()
        assert summaries[model]["mean"] == pytest.approx(g["test_acc"].mean(), abs=1e-15)
    # paired differences between models over seeds read it too
    pair = _invoke("paired", out, "--metric", "test_acc", "--by", "model", "--pair-on", "seed",
                   "--json")  # fmt: skip
    assert pair.exit_code == 0, pair.output
    api_pair = vareval.paired(api.table, metric="test_acc", by="model", pair_on="seed")
    cli_pair = json.loads(pair.output)["logreg - sgd"]
    by_seed = api.table.pivot(index="seed", columns="model", values="test_acc")
    np.testing.assert_allclose(cli_pair["differences"], by_seed["logreg"] - by_seed["sgd"],
                               rtol=0, atol=1e-15)  # fmt: skip
    assert cli_pair["estimate"] == pytest.approx(api_pair["logreg - sgd"].estimate, abs=1e-15)
    # -o - pipes the same table
    piped = _invoke("select", store, "--validation", "val_acc", "--test", "test_acc",
                    "--by", "model", "-o", "-")  # fmt: skip
    assert piped.output == out.read_text()


def test_select_refuses_choosing_on_the_reported_metric(store):
    res = _invoke("select", store, "--validation", "test_acc", "--test", "test_acc",
                  "--by", "model")  # fmt: skip
    assert res.exit_code == 2
    assert res.output.startswith("error:") and "optimistic" in res.output


def test_report_checklist_states_the_selection(store, tmp_path):
    out = tmp_path / "selected.csv"
    _invoke("select", store, "--validation", "val_acc", "--test", "test_acc", "--by", "model",
            "-o", out)  # fmt: skip
    import html

    from vareval.report.builder import build_report

    page = html.unescape(build_report(pd.read_csv(out), metric="test_acc", by="model"))
    assert "Selection on validation, report on test" in page
    assert "chosen on 'val_acc' (highest wins) among 3 'config' values per seed" in page
    assert "The reported 'test_acc' took no part in any choice" in page
    wrong = html.unescape(build_report(pd.read_csv(out), metric="val_acc", by="model"))
    assert "is the validation metric the configurations were chosen on" in wrong


def test_selection_curve_on_the_store(store):
    df = vareval.read_store_table(store)
    res = _invoke("selection-curve", store, "--validation", "val_acc", "--test", "test_acc",
                  "--by", "model", "--ks", "1,2,5", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    api = vareval.selection_curves(df, validation="val_acc", test="test_acc", by="model",
                                   ks=[1, 2, 5])  # fmt: skip
    for model in ("logreg", "sgd"):
        np.testing.assert_allclose(payload["curves"][model]["estimate"],
                                   api.curves[model].estimate, rtol=0, atol=0)  # fmt: skip
    text = _invoke("selection-curve", store, "--validation", "val_acc", "--test", "test_acc",
                   "--by", "model", "--ks", "1,2,5")  # fmt: skip
    assert "optimism" in text.output and "logreg (n=18" in text.output


def _section_rows(page: str, section: str) -> list[list[str]]:
    """The body cells of the first table of one section of a report page."""
    import html
    import re

    body = page.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
    tbody = body.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", tbody)]  # fmt: skip


@pytest.mark.parametrize(
    "options, select_options",
    [([], []),
     (["--select-unit", "seed,rerun", "--select-ties", "average"],
      ["--unit", "seed,rerun", "--ties", "average"])],
)  # fmt: skip
def test_report_select_on_shows_the_numbers_of_vareval_select(store, tmp_path, options,
                                                             select_options):  # fmt: skip
    from vareval.report.builder import collect
    from vareval.report.sections._base import num

    sel = _invoke("select", store, "--validation", "val_acc", "--test", "test_acc", "--by",
                  "model", *select_options, "--json")  # fmt: skip
    assert sel.exit_code == 0, sel.output
    want = json.loads(sel.output)
    chosen = pd.DataFrame(want["chosen"])
    out = tmp_path / "report.html"
    res = _invoke("report", store, "--metric", "test_acc", "--by", "model", "--pair-on",
                  "seed", "--select-on", "val_acc", *options, "-o", out, "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert payload["sections"][:3] == ["design", "selection", "summaries"]
    items = {i["topic"]: i for i in payload["checklist"]}
    item = items["Selection on validation, report on test"]
    assert item["status"] == "ok" and want["procedure"] in item["text"]
    assert "'test_acc' took no part in any choice" in item["text"]
    effort = items["Search effort, apart from final runs"]
    assert effort["status"] == "ok" and "3 configuration(s) sampled per seed" in effort["text"]
    # the page's table is select's: chosen configuration and both scores per unit
    page = out.read_text(encoding="utf-8")
    rows = _section_rows(page, "selection")
    import html

    page = html.unescape(page)
    keys = ["model", *want["unit"], "config"]
    assert [r[: len(keys)] for r in rows] == chosen[keys].astype(str).values.tolist()
    k = len(keys)
    assert [r[k: k + 2] for r in rows] == [[num(v), num(t)] for v, t in
                                           zip(chosen["val_acc"], chosen["test_acc"], strict=True)]
    assert [r[k + 2:] for r in rows] == chosen[["n_searched", "n_tied"]].astype(str).values.tolist()
    assert "The test metric 'test_acc' was not used in any choice" in page
    assert f"Procedure: {want['procedure']}." in page
    # every section reads exactly the chosen configurations' test scores
    unit = want["unit"]
    extras = {"selection": {"validation": "val_acc", "unit": unit, "ties": want["ties"]}}
    data, *_ = collect(vareval.read_store_table(store), metric="test_acc", by="model",
                       pair_on="seed", extras=extras)  # fmt: skip
    np.testing.assert_array_equal(data.df["test_acc"], chosen["test_acc"])
    per = " x ".join(unit)
    assert data.facts["search_effort"].startswith(f"3 'config' values searched per {per}")
    assert list(data.df["config"]) == list(chosen["config"])
    for model, g in chosen.groupby("model"):
        np.testing.assert_array_equal(data.groups[model], g["test_acc"])
        assert data.facts["summaries"][model].mean == pytest.approx(g["test_acc"].mean(),
                                                                   rel=0, abs=1e-15)  # fmt: skip
    if unit == ["seed"]:
        by_seed = chosen.pivot(index="seed", columns="model", values="test_acc")
        diff = data.facts["paired"]["sgd \u2212 logreg"]
        assert diff.estimate == pytest.approx((by_seed["sgd"] - by_seed["logreg"]).mean(),
                                              rel=0, abs=1e-15)  # fmt: skip


def test_report_of_a_search_store_without_selection_says_so(store, tmp_path):
    res = _invoke("report", store, "--metric", "test_acc", "--by", "model", "-o",
                  tmp_path / "r.html", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = {i["topic"]: i for i in json.loads(res.output)["checklist"]}
    item = items["Selection on validation, report on test"]
    assert item["status"] == "info"
    assert item["text"].startswith("The configurations were not chosen on validation")
    assert "--select-on val_acc" in item["text"]
    assert "selection" not in json.loads(res.output)["sections"]


@pytest.mark.parametrize(
    "args, words",
    [(["--select-on", "test_acc"], "optimistic"),
     (["--select-ties", "average"], "need --select-on"),
     (["--select-on", "val_ac"], "val_ac")],
)  # fmt: skip
def test_report_select_on_refusals(store, tmp_path, args, words):
    res = _invoke("report", store, "--metric", "test_acc", "--by", "model", "-o",
                  tmp_path / "r.html", *args)  # fmt: skip
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error:") and words in res.output
    assert len(res.output.strip().splitlines()) == 1


def _accuracy_search(tmp_path):
    """Five configurations whose test accuracies reach the bound: the case that printed
    ``1  0.9160  [0.7100, 1.1220]`` and ``4  1.0000  [1.0000, 1.0000]``."""
    df = pd.DataFrame({
        "method": ["m"] * 5,
        "val_accuracy": [0.70, 0.80, 0.90, 0.95, 0.99],
        "test_accuracy": [0.71, 0.87, 1.00, 1.00, 1.00],
    })  # fmt: skip
    path = tmp_path / "search.csv"
    df.to_csv(path, index=False)
    return df, str(path)


def test_selection_curve_respects_bounds_and_never_prints_a_zero_width_interval(tmp_path):
    df, path = _accuracy_search(tmp_path)
    args = ["selection-curve", path, "--validation", "val_accuracy", "--test", "test_accuracy",
            "--by", "method", "--ks", "1,2,4"]  # fmt: skip
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    assert "[1.0000, 1.0000]" not in out.output
    assert "Intervals cut to [0, 1] ('test_accuracy' is a proportion" in out.output
    assert "n/a: no spread" in out.output and "* coverage below nominal" in out.output
    js = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    cur = js["curves"]["m"]
    api = vareval.selection_curves(df, validation="val_accuracy", test="test_accuracy",
                                   by="method", ks=[1, 2, 4]).curves["m"]  # fmt: skip
    assert cur["upper"][0] == pytest.approx(1.0) and api.upper[0] == 1.0
    assert cur["lower"][0] == pytest.approx(api.lower[0])
    assert np.isnan(api.lower[2]) and cur["lower"][2] is None  # se 0: no interval
    assert api.below_nominal.tolist() == [True, True, True]  # k > n / 10 with n = 5
    wider = CliRunner().invoke(main, [*args, "--bounds", "0,2"])
    assert "Intervals cut to [0, 2] (given)" in wider.output
    unbounded = json.loads(CliRunner().invoke(main, [*args, "--bounds", "0,2", "--json"]).output)
    assert unbounded["curves"]["m"]["upper"][0] > 1  # what accuracy's bounds cut


def test_selection_curve_bounds_are_checked(tmp_path):
    _, path = _accuracy_search(tmp_path)
    out = CliRunner().invoke(main, ["selection-curve", path, "--validation", "val_accuracy",
                                    "--test", "test_accuracy", "--by", "method",
                                    "--bounds", "1"])  # fmt: skip
    assert out.exit_code == 2 and "--bounds takes LOW,HIGH" in out.output
