"""Errors from the Python layers name the command-line flag, not the parameter."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from vareval import datasets
from vareval.cli import main
from vareval.cli._common import name_flags

RUNS = ["--metric", "accuracy", "--by", "method", "--pair-on", "seed",
        "--compare", "mlp,logreg"]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "args", "flag", "parameter"),
    [
        ("digits_runs.csv", ["paired", *RUNS, "--test", "corrected"], "--test-fraction",
         "test_fraction"),
        ("digits_runs.csv", ["paired", *RUNS, "--test", "corrected", "--test-fraction", "1.5"],
         "--test-fraction", "test_fraction"),
        ("digits_runs.csv", ["paired", "--metric", "accuracy", "--by", "method", "--pair-on",
                             "seed"], "--compare a,b", "(a and b)"),
        ("digits_runs.csv", ["best-of-k", "--metric", "accuracy", "--quantiles", "2"],
         "--quantiles", "`quantiles`"),
        ("sklearn_tasks.csv", ["rank", "--metric", "accuracy", "--by", "method", "--task", "task",
                               "--alpha", "2"], "--alpha", "`alpha`"),
        ("sklearn_tasks.csv", ["aggregate", "--metric", "accuracy", "--by", "method", "--task",
                               "task", "--confidence", "3"], "--confidence", "confidence_level"),
        ("digits_predictions.csv", ["significance", "--gold", "gold", "--item", "item",
                                    "--resamples", "-3"], "--resamples", "n_resamples"),
        ("digits_runs.csv", ["plan", *RUNS, "--effect", "inf"], "--effect", "`power`"),
        ("digits_runs.csv", ["plan", *RUNS, "--target-se", "-1"], "--target-se", "`se`"),
        ("digits_search.csv", ["select", "--validation", "val_accuracy", "--test",
                               "test_accuracy", "--by", "model", "--unit", "model"],
         "method (by)", "cannot insert"),
    ],
)  # fmt: skip
def test_a_bad_invocation_names_the_flag(data, args, flag, parameter, tmp_path):
    path = tmp_path / data
    path.write_bytes(datasets.path(data).read_bytes())
    r = CliRunner().invoke(main, [args[0], str(path), *args[1:]])
    assert r.exit_code == 2
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: ") and flag in line and parameter not in line


def test_only_parameter_names_are_translated():
    assert name_flags("`n_resamples` must be >= 1") == "--resamples must be >= 1"
    assert name_flags("give test_fraction= for the test") == "give --test-fraction for the test"
    assert name_flags("(test_fraction=, --test-fraction)") == "(--test-fraction)"
    # a plain word is prose, not a parameter
    assert name_flags("the confidence of a band") == "the confidence of a band"


def _required_options():
    for name, command in main.commands.items():
        for sub in getattr(command, "commands", {name: command}).values():
            for param in sub.params:
                if isinstance(param, click.Option) and param.required:
                    yield f"{name} {param.opts[0]}", param


@pytest.mark.parametrize(("where", "param"), list(_required_options()))
def test_a_required_option_is_required(where, param):
    # click counts an explicit default of None as given, which would skip its check
    assert param.default is not None, where


def test_a_missing_required_option_is_one_line(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_bytes(datasets.path("digits_runs.csv").read_bytes())
    r = CliRunner().invoke(main, ["paired", str(path), "--metric", "accuracy", "--baseline", "x"])
    assert r.exit_code == 2 and "Missing option '--by'" in r.stderr
