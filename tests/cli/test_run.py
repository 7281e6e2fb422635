import json
import sqlite3
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main

TRIALS = str(Path(__file__).resolve().parents[1] / "experiment")

TOML = textwrap.dedent(f"""
    [experiment]
    name = "cli-toy"
    trial = "_trials:streams"
    path = {TRIALS!r}
    seeds = 2
    configs = 2
    reruns = 2
    entropy = 11

    [factors]
    model = ["a", "b"]

    [space]
    lr = {{ distribution = "log-uniform", low = 1e-4, high = 1e-1 }}

    [randomness]
    sources = ["data_split", "init"]
    fixed = ["data_split"]
""")


@pytest.fixture
def experiment(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text(TOML)
    return path


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _run(experiment, store, *extra):
    return _invoke(
        "run",
        experiment,
        "--store",
        store,
        "--engine",
        "serial",
        "--no-progress",
        *extra,
    )


def test_run_status_export_replay(experiment, tmp_path):
    store = tmp_path / "runs.db"
    res = _run(experiment, store)
    assert res.exit_code == 0, res.output
    assert "ran 16 trials (16 done, 0 failed)" in res.output
    res = _run(experiment, store)
    assert "ran 0 trials" in res.output and "16 already done" in res.output

    res = _invoke("status", store)
    assert res.exit_code == 0
    assert "trials       16: 16 done, 0 failed, 0 pending, 0 running" in res.output
    assert "fixed: data_split; entropy 11" in res.output
    payload = json.loads(_invoke("status", store, "--json").output)
    assert payload["counts"]["done"] == 16 and payload["experiments"]["a"]["done"] == 8

    res = _invoke("export", store, "--format", "csv")
    df = pd.read_csv(pd.io.common.StringIO(res.output))
    assert len(df) == 16
    assert {
        "model",
        "seed",
        "config",
        "rerun",
        "lr",
        "init",
        "data_split",
        "status",
    } <= set(df.columns)
    out = tmp_path / "runs.jsonl"
    assert _invoke("export", store, "--format", "jsonl", "-o", out).exit_code == 0
    assert len(pd.read_json(out, lines=True)) == 16
    pq = tmp_path / "runs.parquet"
    assert _invoke("export", store, "--format", "parquet", "-o", pq).exit_code == 0
    assert pd.read_parquet(pq)["init"].equals(df["init"])

    res = _invoke("replay", store, 3)
    assert res.exit_code == 0 and "bit-identical" in res.output

    # every analysis reads the store in place of a results table
    res = _invoke("summarize", store, "--metric", "init", "--by", "model", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["a"]["n"] == 8


def _error(res):
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert "Traceback" not in res.output
    return lines[0]


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        (
            "seeds = 2",
            "seeds = = 2",
            "TOML syntax error: Invalid value (at line 6, column 9)",
        ),
        (
            '"_trials:streams"',
            '"_trials:nope"',
            "module '_trials' has no attribute 'nope'",
        ),
        ('"_trials:streams"', '"no_such_pkg.mod:f"', "module 'no_such_pkg' not found"),
        ("low = 1e-4", "low = 0.0", "log-uniform needs 0 < low < high; got low = 0.0"),
        (
            'lr = {{ distribution = "log-uniform", low = 1e-4, high = 1e-1 }}',
            "",
            "search space [space] is empty",
        ),
    ],
)
def test_bad_experiment_files(experiment, tmp_path, old, new, match):
    text = TOML.replace(old.replace("{{", "{").replace("}}", "}"), new)
    assert text != TOML
    experiment.write_text(text)
    line = _error(_run(experiment, tmp_path / "runs.db"))
    assert match in line


def test_failed_trials_exit_2(experiment, tmp_path):
    experiment.write_text(
        TOML.replace('"_trials:streams"', '"_trials:faulty"').replace(
            "seeds = 2", "seeds = 3"
        )
    )
    store = tmp_path / "runs.db"
    res = _run(experiment, store)
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert "ran 24 trials (8 done, 16 failed)" in lines[0]
    assert [ln for ln in lines if ln.startswith("error: ")] == [lines[-1]]
    assert lines[-1].startswith(
        "error: 16 of 24 trials failed; first: trial 5 (a, seed 1, s1_c0, rerun 0): "
        "ValueError: boom at seed 1; see `vareval status"
    )
    res = _invoke("status", store)
    assert "metric 'acc' is str 'high'; expected a real number" in res.output


def test_store_from_another_program(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    for args in (
        ("status", other),
        ("export", other),
        ("replay", other, 1),
        ("summarize", other, "--metric", "x", "--by", "y"),
    ):
        assert "another program" in _error(_invoke(*args))
    text = tmp_path / "notes.db"
    text.write_text("hello")
    assert "not an SQLite database" in _error(_invoke("status", text))


def test_other_usage_errors(experiment, tmp_path):
    store = tmp_path / "runs.db"
    assert "does not exist" in _error(_invoke("status", store))
    assert _run(experiment, store).exit_code == 0
    assert "needs -o FILE" in _error(_invoke("export", store, "--format", "parquet"))
    assert "trial 99 is not in store" in _error(_invoke("replay", store, 99))
    assert "applies to the ray engine only" in _error(
        _invoke("run", experiment, "--store", store, "--address", "auto")
    )
    experiment.write_text(TOML.replace("entropy = 11", "entropy = 12"))
    assert "holds a different experiment (entropy differs)" in _error(
        _run(experiment, store)
    )


def test_help_does_not_import_the_experiment_layer():
    import subprocess

    code = (
        "import sys; from vareval.cli import main; "
        "print(any(m.startswith('vareval.experiment') for m in sys.modules), "
        "'sqlite3' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "False"


def test_demo_section():
    from vareval.cli.run import demo_section

    text = demo_section()
    assert "trials       24: 24 done, 0 failed" in text
