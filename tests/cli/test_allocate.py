"""vareval allocate: the plan, the alternatives, --extend on a real store."""

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.experiment.spec import load_spec

DATA = Path(__file__).parents[2] / "src" / "vareval" / "datasets" / "decovac_sim.csv"
TRIALS = str(Path(__file__).resolve().parents[1] / "experiment")
TOML = textwrap.dedent(f"""
    [experiment]
    name = "alloc-toy"
    trial = "_trials:streams"
    path = {TRIALS!r}
    seeds = 4
    configs = 2
    reruns = 2
    rerun_mode = "independent"
    entropy = 5

    [factors]
    model = ["a", "b"]

    [space]
    lr = {{ distribution = "log-uniform", low = 1e-4, high = 1e-1 }}
""")


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_plan_and_alternatives_on_decovac():
    r = _invoke("allocate", DATA, "--metric", "accuracy", "--compare",
                "protonet_sgd,matchnet_sgd", "--budget", "300", "--configs", "crossed",
                "--no-crn", "--versus", "10x10x3", "--versus", "300x1x1", "--resamples", "0")
    assert r.exit_code == 0, r.output
    assert "plan 9 seeds x 33 configs x 1 reruns" in r.output
    lines = {ln.split()[0]: ln.split() for ln in r.output.splitlines() if ln.strip()}
    assert lines["10x10x3"][-1] == "1.463" and lines["300x1x1"][-1] == "4.131"
    assert "seed 0" in r.output


def test_json_and_time_budget():
    r = _invoke("allocate", DATA, "--metric", "accuracy", "--compare", "tadam_sgd",
                "--budget", "1h", "--cost", "1m", "--resamples", "0", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["estimand"] == "mean" and out["unit"] == "seconds"
    assert out["n_trials"] == 60 and out["cost"] == 3600.0  # one experiment, 1 min a trial


@pytest.mark.parametrize(
    "args,match",
    [
        (["--budget", "300", "--target-se", "0.01"], "exactly one of --budget"),
        (["--budget", "300", "--versus", "10x10"], "--versus"),
        (["--budget", "3 weeks"], "--budget"),
        (["--budget", "1h"], "--cost"),
        (["--budget", "300", "--resamples", "5"], "--resamples"),
        (["--budget", "300", "--extend", "out.toml"], "--extend needs a run store"),
    ],
)
def test_errors_are_one_line(args, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _invoke("allocate", DATA, "--metric", "accuracy", "--compare",
                "protonet_sgd,matchnet_sgd", "--resamples", "0", *args)
    assert r.exit_code == 2
    assert r.output.startswith("error: ") and match in r.output
    assert "Traceback" not in r.output


def test_extend_grows_a_store_to_the_plan(tmp_path):
    experiment, store, grown = tmp_path / "e.toml", tmp_path / "s.db", tmp_path / "grown.toml"
    experiment.write_text(TOML)
    r = _invoke("run", experiment, "--store", store, "--engine", "serial", "--no-progress")
    assert r.exit_code == 0, r.output
    r = _invoke("allocate", store, "--metric", "init", "--compare", "a,b", "--budget", "12",
                "--resamples", "20", "--extend", grown)
    assert r.exit_code == 0, r.output
    assert "pilot uncertainty (20 bootstrap draws)" in r.output
    spec = load_spec(grown)
    plan = [ln for ln in r.output.splitlines() if ln.startswith("budget")][0]
    seeds = int(plan.split("plan ")[1].split()[0])
    assert spec.seeds == max(4, seeds) and spec.entropy == 5
    # the written TOML is accepted by the store and grows it
    r = _invoke("run", grown, "--store", store, "--engine", "serial", "--no-progress")
    assert r.exit_code == 0, r.output
    r = _invoke("allocate", store, "--metric", "init", "--compare", "a,b", "--budget", "12",
                "--resamples", "0", "--json")
    assert json.loads(r.output)["n_trials"] <= 12
