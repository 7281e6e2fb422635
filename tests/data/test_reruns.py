"""Reruns are read as the design says, by every command, the report and the API.

Stores made by `vareval run` with a cheap trial (tests/data/_rerun_trials.py):
identical same-stream reruns are one observation, so a store with two of them
gives every answer the store with one rerun gives; same-stream reruns that
differ are nested in their (seed, configuration) cell; independent reruns are
replications.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval.cli import main
from vareval.data.design import analysed_rows, design_of, reruns_of

HERE = Path(__file__).resolve().parent


def cli(*args, code=0) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == code, res.output
    return res.stdout


def make_store(tmp, *, reruns, trial="deterministic", mode="same", seeds=3, configs=2) -> Path:
    toml = tmp / f"{trial}-{mode}-{reruns}.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_rerun_trials:{trial}"
        path = "{HERE}"
        seeds = {seeds}
        configs = {configs}
        nested = true
        reruns = {reruns}
        rerun_mode = "{mode}"
        entropy = 11
        [factors]
        model = ["logreg", "forest"]
        [space]
        lr = {{ distribution = "uniform", low = 0, high = 1 }}
        [randomness]
        sources = ["data_split", "init"]
    """))
    store = tmp / f"{trial}-{mode}-{reruns}.db"
    out = cli("run", toml, "--store", store, "--engine", "serial")
    return store, out


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reruns")
    two, ran = make_store(tmp, reruns=2)
    one, _ = make_store(tmp, reruns=1)
    return two, one, ran


def _same_rows(two, one):
    a = vareval.read_store_table(two)
    b = vareval.read_store_table(one)
    a0 = a[a["rerun"] == 0].reset_index(drop=True)
    pd.testing.assert_series_equal(a0["accuracy"], b["accuracy"])  # the premise
    assert (a.groupby(["experiment", "seed", "config"])["accuracy"].nunique() == 1).all()
    return a, b


def test_identical_reruns_are_read_once_and_said_so(stores):
    two, _, ran = stores
    df = vareval.read_store_table(two)
    r = reruns_of(df, "accuracy", "model")
    assert (r.read_as, r.cells, r.differ, r.counts) == ("once", 12, 0, (2, 2.0, 2))
    line = design_of(df, by="model", metric="accuracy").statement()
    assert "2 reruns each (same streams), identical: nondeterminism 0; analysed once" in line
    assert len(analysed_rows(df, "accuracy", "model")) == 12
    assert "reruns: accuracy identical in 12 of 12 cells, differing in 0" in ran
    status = cli("status", two)
    assert "accuracy identical in 12 of 12 cells" in status
    payload = json.loads(cli("status", two, "--json"))
    assert payload["reruns_read"]["accuracy"]["identical"] == 12


def _numbers(payload):
    """Every number of a JSON answer, in order (the design line and run counts aside)."""
    drop = {"design", "runs", "planned", "done", "summarised", "not_run", "failed",
            "non_finite", "procedure", "selection", "rows_per_config"}
    out = []

    def walk(v, key=None):
        if key in drop:
            return
        if isinstance(v, dict):
            for k, w in v.items():
                walk(w, k)
        elif isinstance(v, list):
            for w in v:
                walk(w)
        elif isinstance(v, bool | int | float) and v is not None:
            out.append(float(v))
        elif isinstance(v, str):
            out.append(float(v) if v in ("inf", "-inf", "nan") else v)
    walk(payload)
    return out


COMMANDS = {
    "summarize": ["summarize", "{s}", "--metric", "accuracy", "--by", "model"],
    "paired": ["paired", "{s}", "--metric", "accuracy", "--by", "model", "--pair-on", "seed"],
    "plan": ["plan", "{s}", "--metric", "accuracy", "--by", "model", "--pair-on", "seed",
             "--target-se", "0.002"],
    "variance": ["variance", "{s}", "--metric", "accuracy", "--fixed", "model",
                 "--random", "seed,config"],
    "tuning-curve": ["tuning-curve", "{s}", "--metric", "accuracy", "--by", "model",
                     "--bounds", "0,1"],
    "selection-curve": ["selection-curve", "{s}", "--validation", "val_accuracy",
                        "--test", "accuracy", "--by", "model"],
    "select": ["select", "{s}", "--validation", "val_accuracy", "--test", "accuracy",
               "--by", "model"],
    "sequential": ["sequential", "{s}", "--metric", "accuracy", "--compare", "forest,logreg",
                   "--by", "model", "--pair-on", "seed,config", "--bounds", "0,1"],
    "best-of-k": ["best-of-k", "{s}", "--metric", "accuracy", "--by", "model",
                  "--resamples", "2000", "--seed", "1"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_answers_as_on_one_rerun(stores, command):
    two, one, _ = stores
    _same_rows(two, one)
    answers = [
        json.loads(cli(*[a.format(s=s) for a in COMMANDS[command]], "--json"))
        for s in (two, one)
    ]
    a, b = (_numbers(x) for x in answers)
    assert len(a) == len(b) and a, command
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            assert x == pytest.approx(y, rel=1e-9, abs=1e-12, nan_ok=True), command
        else:
            assert x == y, command


def test_the_api_answers_as_on_one_rerun(stores):
    two, one, _ = stores
    a, b = _same_rows(two, one)
    for f, kw in [
        (vareval.summarize, dict(metric="accuracy", by="model")),
        (vareval.paired, dict(metric="accuracy", by="model", pair_on="seed")),
        (vareval.tuning_curve, dict(metric="accuracy", by="model", bounds=(0, 1))),
        (vareval.selection_curves, dict(validation="val_accuracy", test="accuracy", by="model")),
        (vareval.select, dict(validation="val_accuracy", test="accuracy", by="model")),
    ]:
        fa, fb = f(a, **kw).to_frame(), f(b, **kw).to_frame()
        cols = [c for c in fa.columns if c not in ("planned", "selection")]
        num = fa[cols].select_dtypes("number").columns
        pd.testing.assert_frame_equal(fa[num], fb[num], check_exact=False, rtol=1e-9)
    va = vareval.variance(a, metric="accuracy", fixed=["model"], random=["seed", "config"])
    vb = vareval.variance(b, metric="accuracy", fixed=["model"], random=["seed", "config"])
    assert va.fit.variance == pytest.approx(vb.fit.variance, rel=1e-6, abs=1e-12)
    pd.testing.assert_frame_equal(va.pairs_frame(), vb.pairs_frame(), rtol=1e-6)
    # tuning curves count search results, one per (seed, configuration) cell
    t = vareval.tuning_curve(a, metric="accuracy", by="model", bounds=(0, 1))
    assert t.cdf_bands["logreg"].n == 6


@pytest.mark.slow  # two reports, each with its profile intervals: about 20 s apiece
def test_the_report_answers_as_on_one_rerun(stores, tmp_path):
    two, one, _ = stores
    pages = []
    for s in (two, one):
        out = tmp_path / f"{s.stem}.html"
        said = cli("report", s, "--metric", "accuracy", "--by", "model", "--pair-on", "seed",
                   "-o", out)
        pages.append((said, out.read_text()))
    (said_two, two_page), (said_one, one_page) = pages
    assert "left out" not in said_two  # the variance and allocation sections are built
    assert "Reruns: 2 reruns each (same streams), identical: nondeterminism 0" in two_page
    # one rerun cannot tell nondeterminism from the configurations; identical reruns can
    assert "'allocation' was left out" in said_one
    for section in ("summaries", "paired", "variance", "best-of-k"):
        assert _numbers_of(two_page, section) == _numbers_of(one_page, section), section
        assert _numbers_of(two_page, section), section


def _numbers_of(page: str, section: str) -> list[str]:
    """The numbers a report's section shows (figures aside)."""
    start = page.index(f'id="{section}"')
    end = page.find("<section", start)
    body = re.sub(r"<svg.*?</svg>", "", page[start:end], flags=re.S)
    return re.findall(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?", re.sub(r"<[^>]+>", " ", body))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("noisy")
    same, ran = make_store(tmp, reruns=2, trial="noisy")
    fresh, ran_fresh = make_store(tmp, reruns=2, trial="noisy", mode="independent")
    return same, fresh, (ran, ran_fresh)


def test_same_stream_reruns_that_differ_are_nested_in_their_cell(noisy):
    same, _, (ran, _) = noisy
    df = vareval.read_store_table(same)
    r = reruns_of(df, "accuracy", "model")
    assert (r.read_as, r.cells, r.differ) == ("nested", 12, 12)
    assert "accuracy identical in 0 of 12 cells, differing in 12" in ran
    # summaries, paired differences and curves take each cell's mean ...
    cells = df.groupby(["model", "seed", "config"], sort=False, as_index=False)["accuracy"].mean()
    s = vareval.summarize(df, metric="accuracy", by="model")
    ref = vareval.summarize(cells.assign(rerun=0), metric="accuracy", by="model")
    cols = ["n", "mean", "se", "mean_ci_low", "mean_ci_high", "median", "sd"]
    pd.testing.assert_frame_equal(s.frame[cols], ref.frame[cols])
    assert s.frame.loc["logreg", "n"] == 6
    assert "nested in each method's (seed, config) cell; each cell analysed as its mean" in str(s)
    t = vareval.tuning_curve(df, metric="accuracy", by="model", bounds=(0, 1))
    ref_t = vareval.tuning_curve(cells, metric="accuracy", by="model", bounds=(0, 1))
    assert t.cdf_bands["forest"].n == 6
    np.testing.assert_allclose(t.v_statistic["forest"], ref_t.v_statistic["forest"])
    # ... the mixed model keeps the reruns as the level within the cell (the residual)
    v = vareval.variance(df, metric="accuracy", fixed=["model"], random=["seed", "config"])
    assert v.fit.n_obs == 24
    out = cli("variance", same, "--metric", "accuracy", "--fixed", "model",
              "--random", "seed,config")
    assert "kept as the rerun level within the cell" in out.splitlines()[0]


def test_independent_reruns_are_replications(noisy):
    _, fresh, (_, ran) = noisy
    df = vareval.read_store_table(fresh)
    r = reruns_of(df, "accuracy", "model")
    assert (r.read_as, r.mode) == ("replications", "independent")
    assert "replications" in ran
    assert len(analysed_rows(df, "accuracy", "model")) == 24
    s = vareval.summarize(df, metric="accuracy", by="model")
    assert s.frame.loc["logreg", "n"] == 12
    assert "2 reruns each (fresh streams): replications" in str(s)


def test_a_table_with_a_rerun_column_has_same_stream_reruns():
    # some cells identical, some not: the reruns still measure nondeterminism
    df = pd.DataFrame({
        "model": ["a"] * 6 + ["b"] * 6,
        "seed": [0, 0, 1, 1, 2, 2] * 2,
        "config": ["c0"] * 12,
        "rerun": [0, 1] * 6,
        "acc": [0.8, 0.8, 0.7, 0.7, 0.9, 0.9, 0.6, 0.62, 0.5, 0.5, 0.7, 0.7],
    })
    r = reruns_of(df, "acc", "model")
    assert (r.read_as, r.cells, r.differ, r.mode) == ("nested", 6, 1, "same")
    rows = analysed_rows(df, "acc", "model")
    assert rows["acc"].tolist() == pytest.approx([0.8, 0.7, 0.9, 0.61, 0.5, 0.7])
    # identical everywhere: once, the lowest rerun's row
    df.loc[7, "acc"] = 0.6
    assert reruns_of(df, "acc", "model").read_as == "once"
    assert analysed_rows(df, "acc", "model")["rerun"].tolist() == [0] * 6
    # without a rerun column, repeated rows are taken as given
    assert reruns_of(df.drop(columns="rerun"), "acc", "model").read_as == "rows"


def test_the_design_line_states_what_is_there():
    # 1-3 reruns per cell, most cells one: not "3 reruns each"
    rows = [("a", s, f"c{c}", r, 0.5 + 0.01 * s + 0.001 * r)
            for s in range(4) for c in range(4) for r in range(3 if (s, c) == (0, 0) else 1)]
    rows += [("a", 0, "c1", 1, 0.51)]
    df = pd.DataFrame(rows, columns=["model", "seed", "config", "rerun", "acc"])
    line = design_of(df, by="model", metric="acc").statement()
    assert "1-3 reruns, median 1 (same streams), differing in 2 of 2 cells" in line
    assert "3 reruns each" not in line


def test_allocation_learns_from_identical_reruns_that_nondeterminism_is_zero(stores):
    # one rerun cannot separate the configuration from the residual; identical reruns
    # show the residual (nondeterminism) is zero, so what is left is the configuration's
    two, one, _ = stores
    a = vareval.read_store_table(two)
    plan = vareval.allocation(a, metric="accuracy", compare=("logreg",), budget=24,
                              n_resamples=0)  # fmt: skip
    logreg = vareval.read_store_table(one).query("model == 'logreg'")
    ref = vareval.variance(logreg, metric="accuracy", fixed=[], random=["seed"]).fit
    assert plan.components["residual"] == 0
    assert (plan.components["seed"], plan.components["config"]) == pytest.approx(
        tuple(ref.variance), rel=1e-6
    )
    with pytest.raises(vareval.VarevalError, match="confounded with the residual"):
        vareval.allocation(vareval.read_store_table(one), metric="accuracy",
                           compare=("logreg",), budget=24, n_resamples=0)  # fmt: skip
