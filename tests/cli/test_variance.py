import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.cli.variance import demo_section

DATA = Path(__file__).resolve().parents[1] / "data" / "lme4" / "decovac_small_unbal.csv"


def _run(*args):
    # the stored references are of the model without the seed x experiment term
    return CliRunner().invoke(main, ["variance", str(DATA), "--no-seed-by-experiment", *args])


def test_table_output():
    r = _run("--metric", "y", "--fixed", "model,optimizer", "--random", "seed,config")
    assert r.exit_code == 0, r.output
    for text in (
        "Variance components",
        "H1/H2",
        "H3",
        "Pairwise differences",
        "kenward-roger",
        "mA_adam - mB_sgd",
        "-> seed",
    ):
        assert text in r.output
    assert "207.1" in r.output  # model F (Satterthwaite 207.0637)


def test_json_output():
    r = _run(
        "--metric",
        "y",
        "--fixed",
        "experiment",
        "--nested",
        "config:seed",
        "--ml",
        "--json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["reml"] is False
    assert [c["component"] for c in out["components"]] == [
        "seed",
        "config:seed",
        "Residual",
    ]
    assert len(out["pairwise"]) == 15


@pytest.mark.parametrize(
    "args, match",
    [
        (["--metric", "nope"], "metric column 'nope' not found"),
        (
            ["--metric", "y", "--fixed", "seed", "--random", "seed"],
            "both fixed and random",
        ),
        (["--metric", "y", "--random", "model"], "rerun"),
    ],
)
def test_user_errors_exit_2_with_one_line(args, match):
    r = _run(*args)
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    if match != "rerun":
        assert match in lines[0]
    assert "Traceback" not in r.output


def test_demo_section():
    text = demo_section()
    assert "SIMULATED" in text and "Variance components" in text


def test_api_warnings_reach_the_command_line(tmp_path):
    """A notice the API raises (here: a dropped, non-estimable column) is printed."""
    import pandas as pd

    d = pd.read_csv(DATA)
    d = d[~((d["model"] == "mC") & (d["optimizer"] == "sgd"))]
    path = tmp_path / "missing.csv"
    d.to_csv(path, index=False)
    res = CliRunner().invoke(
        main,
        ["variance", str(path), "--metric", "y", "--fixed", "model,optimizer"],
    )
    assert res.exit_code == 0, res.output
    assert "warning: fixed-effect column(s) model[mC]:optimizer[sgd]" in res.stderr


def test_by_group_and_slope_options():
    lme4 = DATA.parent
    res = CliRunner().invoke(
        main,
        ["variance", str(lme4 / "by_group_store.csv"), "--metric", "y",
         "--fixed", "model", "--by-group", "config=model"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "config[svc]" in res.output and "config: one variance" in res.output
    res = CliRunner().invoke(
        main,
        ["variance", str(lme4 / "sleepstudy.csv"), "--metric", "Reaction",
         "--fixed", "", "--random", "Subject", "--slope", "Days", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["components"][1]["component"] == "Days|Subject"
    assert out["criterion"] == pytest.approx(1743.628272, abs=1e-5)


def test_intervals_flag_prints_profile_intervals():
    data = Path(__file__).parents[1] / "data" / "lme4" / "decovac_small_unbal.csv"
    res = CliRunner().invoke(
        main,
        [
            "variance",
            str(data),
            "--metric",
            "y",
            "--fixed",
            "model,optimizer",
            "--intervals",
            "profile",
            "--no-seed-by-experiment",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "95% confidence intervals (profile likelihood" in res.output
    # lme4's profile interval for the config SD: [0.01712, 0.0357]
    assert "[0.01712, 0.03570]" in res.output


def test_bootstrap_flags():
    res = _run("--metric", "y", "--intervals", "bootstrap", "--bootstrap-lrt",
               "--resamples", "40",
               "--seed", "1")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "parametric bootstrap percentiles, 40 refits" in res.output
    assert "p (bootstrap, 40)" in res.output


def _never_converge(monkeypatch):
    import numpy as np

    import vareval.stats.variance.fit as mixed

    def no_polish(cp, reml, x, f, g, counter, steps=6):
        return x, f, g, np.inf, None  # as if the Newton step were unusable

    monkeypatch.setattr(mixed, "_newton_polish", no_polish)


def test_no_tests_shown_from_a_fit_that_did_not_converge(monkeypatch):
    from vareval.data.variance import WITHHELD

    _never_converge(monkeypatch)
    args = ("--metric", "y", "--fixed", "model,optimizer", "--random", "seed,config")
    r = _run(*args)
    assert r.exit_code == 0, r.output
    assert f"warning: {WITHHELD}" in r.stderr
    assert r.stderr.count(WITHHELD) == 1
    assert f"\n  {WITHHELD}" in r.stdout
    for text in ("Pairwise differences", "kenward-roger", "mA_adam - mB_sgd", "207.1", "= nan"):
        assert text not in r.stdout
    r = _run(*args, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["converged"] is False and out["withheld"] == WITHHELD
    assert out["f_tests"] and all(
        t["F"] is None and t["ddf"] is None and t["p"] is None for t in out["f_tests"]
    )
    assert len(out["pairwise"]) == 15
    assert all(
        p[k] is None
        for p in out["pairwise"]
        for k in ("estimate", "se", "df", "ci_low", "ci_high", "p", "p_holm")
    )


def test_a_variance_at_zero_gets_the_mixture_p_of_one():
    """config[forest] is fitted at 0: its LRT was 5e-12 with p 0.4999991."""
    import pandas as pd

    from vareval import variance

    store = DATA.parent / "by_group_store.csv"
    r = CliRunner().invoke(main, ["variance", str(store), "--metric", "y", "--fixed", "model",
                                  "--by-group", "config=model", "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    row = {t["term"]: t for t in json.loads(r.output)["lrt"]}["config[forest]"]
    assert row["variance"] == 0 and row["lrt"] == 0 and row["p_boundary"] == 1
    api = variance(pd.read_csv(store), metric="y", fixed=["model"], by_group="config=model")
    lrt = {t.term: t for t in api.lrt}["config[forest]"]
    assert (lrt.statistic, lrt.pvalue) == (0, 1)


def test_uncorrelated_slope_tests_the_intercept_too():
    """lmerTest's ranova of (1 | Subject) + (0 + Days | Subject): LRT 22.85573 for the intercept."""
    sleep = DATA.parent / "sleepstudy.csv"
    args = ["variance", str(sleep), "--metric", "Reaction", "--fixed", "", "--random", "Subject",
            "--slope", "Days", "--uncorrelated"]  # fmt: skip
    text, js = CliRunner().invoke(main, args), CliRunner().invoke(main, [*args, "--json"])
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    rows = {t["term"]: t for t in json.loads(js.stdout)["lrt"]}
    assert rows["Subject"]["lrt"] == pytest.approx(22.85573390, abs=1e-6)
    assert rows["Subject"]["p_naive"] == pytest.approx(1.7463e-06, rel=1e-4)
    assert rows["Days|Subject"]["lrt"] == pytest.approx(42.79579181, abs=1e-6)
    assert "22.856" in text.output and "-> Subject:" in text.output


LME4 = Path(__file__).resolve().parents[1] / "data" / "lme4"


def test_kenward_roger_under_ml_says_it_refits_by_reml():
    r = CliRunner().invoke(
        main, ["variance", str(LME4 / "boundary_ml.csv"), "--metric", "y", "--ml"]
    )
    assert r.exit_code == 0, r.output
    assert "kenward-roger rows come from a REML refit" in r.output
    r = CliRunner().invoke(
        main, ["variance", str(LME4 / "boundary_ml.csv"), "--metric", "y", "--json", "--ml"]
    )
    assert json.loads(r.stdout)["kenward_roger_fit"] == "REML refit"
    r = CliRunner().invoke(main, ["variance", str(LME4 / "boundary_ml.csv"), "--metric", "y"])
    assert "REML refit" not in r.output


@pytest.mark.parametrize("command", ["variance", "report"])
def test_refusals_name_the_cause(tmp_path, command):
    import pandas as pd

    d = pd.read_csv(LME4 / "boundary_ml.csv")
    same = d.assign(config="c" + d["seed"].astype(str))
    dup = d.assign(
        y=d.groupby(["experiment", "config"])["y"].transform("first"),
        config=d["experiment"] + "_" + d["config"],
    )
    for frame, text in ((same, "'seed' and 'config' are confounded"),
                        (dup, "residual variance is zero")):  # fmt: skip
        path = tmp_path / "d.csv"
        frame.to_csv(path, index=False)
        args = [command, str(path), "--metric", "y"]
        if command == "report":
            args += ["--by", "experiment", "--random", "seed,config",
                     "-o", str(tmp_path / "r.html")]  # fmt: skip
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert text in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1, r.output
        assert not (tmp_path / "r.html").exists()
