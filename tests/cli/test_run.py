import json
import os
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
    # 2 seeds x 2 configurations x 2 reruns of the same streams, identical: read once
    assert json.loads(res.output)["a"]["n"] == 4


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


# -- every malformed input is one line and exit status 2 ---------------------


def _bytes_of(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir())}


def test_foreign_files_are_refused_unchanged(experiment, tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    other = folder / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (42)")
    con.commit()
    con.close()
    empty = folder / "empty.db"
    empty.write_bytes(b"")
    before = _bytes_of(folder)
    for args in (
        ("status", other),
        ("export", other),
        ("replay", other, 1),
        ("summarize", other, "--metric", "x", "--by", "y"),
        ("run", experiment, "--store", other, "--engine", "serial"),
        ("status", empty),
        ("export", empty),
        ("replay", empty, 1),
    ):
        line = _error(_invoke(*args))
        assert "another program" in line or "empty SQLite database" in line
        assert _bytes_of(folder) == before, args


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("[randomness]", "[other]", "unknown table or key 'other'"),
        ('[randomness]\nsources = ["data_split", "init"]\nfixed = ["data_split"]', "",
         "`randomness` must be a table"),
        ("[factors]\nmodel = [\"a\", \"b\"]", "", "`factors` must be a table"),
        ("path = ", "path = 5 #", "`path` must be a folder or a list of folders"),
        ("path = ", "path = [1, 2] #", "got [1, 2]"),
        ('sources = ["data_split", "init"]', "sources = 5", "`sources` must be a list"),
        ("entropy = 11", "entropy = 11\ntimeout = inf", "`timeout` must be a finite"),
        ("seeds = 2", "seeds = 100_000_000", "the design has 800,000,000 trials"),
    ],
)
def test_malformed_declarations(experiment, tmp_path, old, new, match):
    assert old in TOML
    text = TOML.replace(old, new, 1)
    for table in ("randomness", "factors"):  # a top-level key instead of the table
        if f"`{table}` must be a table" in match:
            text = f"{table} = 5\n" + text
    experiment.write_text(text)
    assert match in _error(_run(experiment, tmp_path / "runs.db"))
    assert not (tmp_path / "runs.db").exists()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (TOML.encode().replace(b"cli-toy", b"\xff\xfe"), "is not UTF-8 text (byte 0xff"),
        (b"\x00\x01\x02PNG\x00", "TOML syntax error"),
    ],
)
def test_binary_declarations(experiment, tmp_path, content, match):
    experiment.write_bytes(content)
    assert match in _error(_run(experiment, tmp_path / "runs.db"))


def test_seeds_too_many_says_what_it_would_need(experiment, tmp_path):
    experiment.write_text(TOML.replace("seeds = 2", "seeds = 100_000_000"))
    line = _error(_run(experiment, tmp_path / "runs.db"))
    assert "store would need about 400 GB" in line
    assert "at most 10,000,000 trials per store" in line


def _store_with_rows(experiment, tmp_path):
    store = tmp_path / "runs.db"
    assert _run(experiment, store).exit_code == 0
    return store


def _corrupt_pages(store):
    """Overwrite every page but the first (the schema) with garbage."""
    con = sqlite3.connect(store)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    data = bytearray(store.read_bytes())
    assert len(data) > 2 * page
    data[page:] = bytes(range(256)) * ((len(data) - page) // 256) + bytes(
        (len(data) - page) % 256
    )
    store.write_bytes(bytes(data))


def test_corrupt_store_page(experiment, tmp_path):
    store = _store_with_rows(experiment, tmp_path)
    _corrupt_pages(store)
    for args in (("status", store), ("export", store), ("replay", store, 1)):
        line = _error(_invoke(*args))
        assert "is corrupt" in line and "malformed" in line, args
    line = _error(_run(experiment, store))
    assert "is corrupt" in line or "not a vareval store" in line


def test_malformed_json_in_store_rows(experiment, tmp_path):
    store = _store_with_rows(experiment, tmp_path)
    con = sqlite3.connect(store)
    con.execute("UPDATE trials SET metrics = '{\"init\": 0.5,' WHERE id = 2")
    con.execute("UPDATE trials SET config = '[oops' WHERE id = 3")
    con.commit()
    con.close()
    line = _error(_invoke("export", store))
    assert "trial 2's `metrics` holds malformed JSON" in line
    line = _error(_invoke("replay", store, 3))
    assert "trial 3's `config` holds malformed JSON" in line
    con = sqlite3.connect(store)
    con.execute("UPDATE meta SET value = '{not json' WHERE key = 'spec'")
    con.commit()
    con.close()
    line = _error(_invoke("status", store))
    assert "the experiment's declaration (meta `spec`) holds malformed JSON" in line
    line = _error(_invoke("summarize", store, "--metric", "init", "--by", "model"))
    assert "holds malformed JSON" in line


def test_trial_id_beyond_sqlite_integers(experiment, tmp_path):
    store = _store_with_rows(experiment, tmp_path)
    for big in (2**63, -(2**63) - 1, 10**30):
        line = _error(_invoke("replay", "--", store, big))
        assert f"trial {big} is not in store" in line


def test_unwritable_outputs(experiment, tmp_path):
    store = _store_with_rows(experiment, tmp_path)
    line = _error(_invoke("export", store, "-o", tmp_path / "missing" / "x.csv"))
    assert "folder" in line and "does not exist" in line
    if Path("/dev/full").exists():  # writes fail with ENOSPC: a full disk
        line = _error(_invoke("export", store, "-o", "/dev/full"))
        assert "-o '/dev/full' could not be written: No space left on device" in line
    table = tmp_path / "tuning.csv"
    table.write_text(
        "model,f1\n" + "".join(f"{m},{x / 20}\n" for m in "ab" for x in range(1, 16))
    )
    base = ["tuning-curve", table, "--metric", "f1", "--by", "model", "--bounds", "0,1"]
    line = _error(_invoke(*base, "--plot", tmp_path / "missing" / "c.png"))
    assert "--plot" in line and "does not exist" in line
    line = _error(_invoke(*base, "--plot", tmp_path / "c.xyz"))
    assert "unknown image format 'xyz'; accepted:" in line and "png" in line


def test_plot_on_a_full_disk(tmp_path, monkeypatch):
    import errno

    from matplotlib.figure import Figure

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", full)
    table = tmp_path / "tuning.csv"
    table.write_text(
        "model,f1\n" + "".join(f"{m},{x / 20}\n" for m in "ab" for x in range(1, 16))
    )
    args = ["tuning-curve", table, "--metric", "f1", "--by", "model", "--bounds", "0,1"]
    line = _error(_invoke(*args, "--plot", tmp_path / "c.png"))
    assert "could not be written: No space left on device" in line


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["best-of-k", "--metric", "acc", "--resamples", "1000000000000"], "--resamples"),
        (
            ["paired", "--metric", "acc", "--by", "m", "--pair-on", "seed", "--resamples",
             "1000000000000"],
            "--resamples",
        ),  # fmt: skip
        (
            ["significance", "--gold", "gold", "--system", "a,b", "--resamples",
             "1000000000000"],
            "--resamples",
        ),  # fmt: skip
    ],
)
def test_oversized_resampling_is_refused_up_front(tmp_path, args, option):
    table = tmp_path / "t.csv"
    table.write_text("m,seed,acc,gold,a,b\nx,0,0.5,1,1,0\ny,0,0.6,0,1,0\n")
    line = _error(_invoke(args[0], table, *args[1:]))
    assert line.startswith(f"error: {option} 1,000,000,000,000 is too large")
    assert "8 TB of results in memory" in line and "at most 100,000,000" in line


def _module(tmp_path, body):
    (tmp_path / "badmod.py").write_text(body + "\ndef trial(t):\n    return {'x': 1.0}\n")
    text = TOML.replace('"_trials:streams"', '"badmod:trial"')
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("import sys\nsys.exit(5)", "importing it raised SystemExit(5)"),
        ("import os\nos._exit(9)", "importing it ended the process (exit code 9)"),
        ("raise RuntimeError('no GPU')", "raised RuntimeError: no GPU"),
    ],
)
@pytest.mark.parametrize("engine", ["serial", "local"])
def test_trial_module_that_exits_at_import(tmp_path, body, match, engine):
    path = _module(tmp_path, body)
    res = _invoke(
        "run", path, "--store", tmp_path / "r.db", "--engine", engine, "--no-progress"
    )
    assert match in _error(res)
    assert not (tmp_path / "r.db").exists()


def test_disk_full_mid_run(experiment, tmp_path, monkeypatch):
    from vareval.experiment.store import Store

    store = tmp_path / "runs.db"
    real = Store.complete

    def fill_up(self, results, token):  # five results fit, then the disk is full
        real(self, results[:5], token)
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "complete", fill_up)
    line = _error(_run(experiment, store))
    assert "the disk is full" in line
    assert "the results committed so far are safe" in line
    monkeypatch.setattr(Store, "complete", real)
    with Store(store, readonly=True) as st:
        counts = st.counts()
    assert counts == {"pending": 11, "running": 0, "done": 5, "failed": 0}
    res = _run(experiment, store)  # space freed: resume
    assert res.exit_code == 0 and "ran 11 trials" in res.output
