"""`vareval sequential` on a table and a store, and `vareval run --until-settled`."""

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vareval import datasets
from vareval.cli import main
from vareval.stats.budget.sequential import confidence_sequence

TRIALS = str(Path(__file__).resolve().parents[1] / "experiment")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def runs():
    return datasets.path("digits_runs.csv")


def test_table_shows_the_sequence_and_where_the_rule_stops(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "runs.csv"
    lines = ["method,seed,acc"]
    for seed in range(120):
        base = rng.uniform(0.7, 0.8)
        lines += [f"new,{seed},{base + 0.2:.4f}", f"old,{seed},{base:.4f}"]
    path.write_text("\n".join(lines) + "\n")
    res = run("sequential", path, "--metric", "acc", "--compare", "new,old", "--bounds", "0,1")
    assert res.exit_code == 0, res.output
    d = np.full(120, 0.2)
    cs = confidence_sequence(np.round(d, 4), bounds=(-1, 1))
    assert f"stop: n = {cs.stop}, difference (the sequence excludes 0)" in res.output
    assert "<- stop" in res.output and "non-asymptotic" in res.output
    assert res.output.splitlines()[0] == "acc: new - old, paired on seed, 120 pairs"
    assert "betting (hedged-capital) confidence sequence" in res.output
    eb = run("sequential", path, "--metric", "acc", "--compare", "new,old", "--bounds", "0,1",
             "--cs", "empirical-bernstein", "--json")
    payload = json.loads(eb.output)
    expected = confidence_sequence(np.round(d, 4), bounds=(-1, 1), method="empirical-bernstein")
    assert payload["method"] == "empirical-bernstein" and payload["stop"] == expected.stop
    assert expected.stop > cs.stop  # betting decides sooner on this low-variance difference


def test_cs_choices_are_the_bounded_methods():
    from vareval.cli.sequential import cs_option
    from vareval.stats.budget.sequential import BOUNDED_METHODS

    assert tuple(cs_option(lambda: None).__click_params__[0].type.choices) == BOUNDED_METHODS


def test_digits_runs_json_and_batches(runs):
    res = run("sequential", runs, "--metric", "accuracy", "--compare", "mlp,logreg",
              "--by", "method", "--json")
    payload = json.loads(res.output)
    assert payload["method"] == "normal-mixture" and len(payload["n"]) == 10
    assert payload["reason"] == "not settled"
    res = run("sequential", runs, "--metric", "accuracy", "--compare", "mlp,logreg",
              "--by", "method", "--batch", "4", "--margin", "0.5")
    assert res.exit_code == 0, res.output
    assert "stop: n = 10, equivalent within margin" in res.output  # starts at n = 10


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--compare", "mlp"], "--compare must name two things"),
        (["--compare", "mlp,nope"], "method 'nope' not found"),
        (["--compare", "mlp,logreg", "--bounds", "0"], "--bounds must be two numbers"),
        (["--compare", "mlp,logreg", "--bounds", "0.97,0.98"],
         "10 value(s) outside the bounds [0.97, 0.98] (given) in data row(s) 4, 6"),
        (["--compare", "mlp,logreg", "--confidence", "95"], "level in (0, 1)"),
        (["--compare", "mlp,logreg", "--batch", "0"], "--batch must be an integer >= 1"),
        (["--compare", "mlp,logreg", "--cs", "betting"], "--cs must be one of"),
    ],
)
def test_bad_input_is_one_line_and_status_2(runs, args, words):
    res = run("sequential", runs, "--metric", "accuracy", "--by", "method", *args)
    assert res.exit_code == 2
    assert words in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def _toml(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_seq_trials:shifted"
        path = {TRIALS!r}
        seeds = 3
        entropy = 5

        [factors]
        model = ["a", "b"]

        [randomness]
        sources = ["init", "noise_a", "noise_b"]

        [params]
        shift = {{ a = 2.0, b = 0.0 }}
    """))
    return path


def test_run_until_settled_then_the_store_reads_back(tmp_path):
    store = tmp_path / "s.db"
    res = run("run", _toml(tmp_path), "--store", store, "--until-settled", "--compare", "a,b",
              "--metric", "score", "--budget", "40", "--batch", "10", "--engine", "serial",
              "--no-progress")
    assert res.exit_code == 0, res.output
    assert "look at 10 pairs" in res.output
    assert "stopped: difference; the store records the sequence" in res.output
    changed = run("run", _toml(tmp_path), "--store", store, "--until-settled", "--compare",
                  "a,b", "--metric", "score", "--budget", "40", "--engine", "serial",
                  "--bounds", "-10,12", "--cs", "empirical-bernstein")
    assert changed.exit_code == 2 and "other bounds, method" in changed.output
    again = run("sequential", store, "--metric", "score", "--compare", "a,b", "--batch", "10",
                "--budget", "40")
    assert again.exit_code == 0, again.output
    assert "stop: n = 10, difference" in again.output  # the table gives the runner's sequence
    report = run("report", store, "--metric", "score", "-o", tmp_path / "r.html")
    assert report.exit_code == 0, report.output
    html = (tmp_path / "r.html").read_text()
    assert "Runs until settled" in html and 'data-figure="sequential-1"' in html


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--until-settled", "--metric", "score"], "--until-settled needs --compare a,b"),
        (["--compare", "a,b", "--metric", "score"], "belong to --until-settled"),
        (["--until-settled", "--compare", "a,b", "--metric", "score", "--seeds", "9"],
         "manages the seeds itself"),
    ],
)
def test_run_flags(tmp_path, args, words):
    res = run("run", _toml(tmp_path), "--store", tmp_path / "s.db", "--engine", "serial", *args)
    assert res.exit_code == 2 and words in res.output
