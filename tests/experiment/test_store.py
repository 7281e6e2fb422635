import json
import os
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

from vareval.data import read_table
from vareval.data.store_table import APPLICATION_ID, SCHEMA_VERSION, read_store_table
from vareval.errors import DataError, ExperimentError, VarevalWarning
from vareval.experiment.store import Store


def test_schema_and_meta(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        spec = st.prepare(make_spec())
        con = st.con
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert st.spec() == spec
        assert st.counts() == {"pending": 24, "running": 0, "done": 0, "failed": 0}
        assert st.integrity_check() == "ok"


def test_prepare_is_idempotent_and_checks_the_design(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(make_spec())
        st.prepare(make_spec(timeout=5.0, name="renamed"))  # not part of the design
        assert sum(st.counts().values()) == 24
        with pytest.raises(
            ExperimentError, match=r"different experiment \(sources differs\)"
        ):
            st.prepare(make_spec(sources=("init",)))
        assert sum(st.counts().values()) == 24


def test_entropy_drawn_once_and_reused(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        spec = st.prepare(make_spec(entropy=None))
        assert spec.entropy is not None
        assert st.prepare(make_spec(entropy=None)).entropy == spec.entropy


def test_grid_matches_the_design_and_is_unique(tmp_path, make_spec):
    with Store(tmp_path / "runs.db", create=True) as st:
        st.prepare(make_spec())
        with pytest.raises(sqlite3.IntegrityError):
            st.con.execute(
                "INSERT INTO trials (factors, experiment, seed, config_index, "
                "config_label, "
                "config, rerun, seeds) SELECT factors, experiment, seed, config_index, "
                "config_label, config, rerun, seeds FROM trials WHERE id = 1"
            )
        df = st.frame()
    assert len(df) == 24
    assert list(df.columns[:7]) == [
        "trial_id",
        "model",
        "experiment",
        "seed",
        "config",
        "config_index",
        "rerun",
    ]
    # reruns share configuration; nested: configs differ across seeds
    g = df.groupby(["model", "seed", "config_index"])["lr"].nunique()
    assert (g == 1).all()
    assert df.loc[df.seed == 0, "lr"].iloc[0] != df.loc[df.seed == 1, "lr"].iloc[0]
    # the same seed gives every model the same configurations
    a = (
        df[df.model == "a"]
        .sort_values(["seed", "config_index", "rerun"])["lr"]
        .to_numpy()
    )
    b = (
        df[df.model == "b"]
        .sort_values(["seed", "config_index", "rerun"])["lr"]
        .to_numpy()
    )
    assert (a == b).all()


def test_claim_complete_release(tmp_path, make_spec):
    with Store(tmp_path / "runs.db", create=True) as st:
        st.prepare(make_spec())
        a = st.claim(5, "A")
        b = st.claim(100, "B")
        assert len(a) == 5 and len(b) == 19
        assert not {t["id"] for t in a} & {t["id"] for t in b}
        assert st.claim(1, "C") == []
        res = [{"id": t["id"], "status": "done", "metrics": {"x": 1.5}} for t in a]
        assert st.complete(res, "B") == 0  # B does not hold A's claims
        assert st.complete(res, "A") == 5
        assert st.complete(res, "A") == 0  # written once only
        assert st.release("B") == 19
        assert st.counts() == {"pending": 19, "running": 0, "done": 5, "failed": 0}
        rec = st.trial(a[0]["id"])
        assert rec["metrics"] == {"x": 1.5} and rec["attempts"] == 1
        with pytest.raises(ExperimentError, match="trial 999 is not in store"):
            st.trial(999)


def test_stale_claims_are_taken_back(tmp_path, make_spec):
    with Store(tmp_path / "runs.db", create=True) as st:
        st.prepare(make_spec())
        st.claim(24, "old")
        st.con.execute("UPDATE trials SET heartbeat = heartbeat - 1000")
        assert st.claimable(stale_after=60) == 24
        again = st.claim(24, "new", stale_after=60)
        assert len(again) == 24
        assert st.trial(1)["attempts"] == 2


def test_claims_of_dead_local_runner_are_released(tmp_path, make_spec):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    with Store(tmp_path / "runs.db", create=True) as st:
        st.prepare(make_spec())
        st.claim(4, "dead")
        st.con.execute(
            "UPDATE trials SET runner_pid = ? WHERE runner = 'dead'", (proc.pid,)
        )
        st.claim(2, "alive")  # this process: alive
        assert st.recover() == 4
        assert st.counts()["running"] == 2


def test_foreign_and_corrupt_files(tmp_path):
    text = tmp_path / "results.db"
    text.write_text("model,score\na,1\n")
    with pytest.raises(
        ExperimentError, match="not a vareval store .not an SQLite database"
    ):
        Store(text)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(ExperimentError, match="SQLite database from another program"):
        Store(other, create=True)
    with pytest.raises(DataError, match="another program"):
        read_table(other)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    with pytest.raises(ExperimentError, match="or its header is corrupt"):
        Store(corrupt)
    with pytest.raises(ExperimentError, match="does not exist"):
        Store(tmp_path / "missing.db")


def test_newer_schema_is_refused(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    Store(path, create=True).close()
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with pytest.raises(
        ExperimentError,
        match=f"schema version {SCHEMA_VERSION + 1}; this vareval reads up to {SCHEMA_VERSION}",
    ):
        Store(path)


def test_read_table_reads_a_store(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(make_spec())
        tasks = st.claim(6, "A")
        st.complete(
            [
                {
                    "id": t["id"],
                    "status": "done",
                    "metrics": {"acc": 0.5 + t["id"] / 100},
                }
                for t in tasks[:5]
            ]
            + [{"id": tasks[5]["id"], "status": "failed", "error": "ValueError: x"}],
            "A",
        )
    with pytest.warns(
        VarevalWarning, match=r"19 of 24 trials are not done \(18 pending, 1 failed"
    ):
        df = read_table(path)
    assert len(df) == 5 and df["acc"].dtype == float
    assert df.attrs["rerun_mode"] == "same"
    full = read_store_table(path, status="all")
    assert len(full) == 24 and full["acc"].isna().sum() == 19
    assert json.dumps(full.attrs["spec"])
    assert isinstance(full, pd.DataFrame)


def _snapshot(folder):
    """Every file in ``folder`` with its bytes (sidecar -wal/-shm files included)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("kind", ["foreign", "empty", "text"])
def test_refused_files_are_left_byte_for_byte(tmp_path, kind):
    folder = tmp_path / "d"
    folder.mkdir()
    path = folder / "x.db"
    if kind == "foreign":  # another program's database, in rollback-journal mode
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (x)")
        con.execute("INSERT INTO t VALUES (1)")
        con.commit()
        con.close()
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"model,score\na,1\n")
    before = _snapshot(folder)
    openers = [
        lambda: Store(path, readonly=True),
        lambda: Store(path),
        lambda: read_store_table(path),
    ]
    if kind != "empty":  # `run` may create a store in an empty file
        openers.append(lambda: Store(path, create=True))
    for open_store in openers:
        with pytest.raises((ExperimentError, DataError)):
            open_store()
        assert _snapshot(folder) == before


def test_readonly_open_changes_nothing(tmp_path, make_spec):
    folder = tmp_path / "d"
    folder.mkdir()
    path = folder / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(make_spec())
    before = _snapshot(folder)
    assert set(before) == {"runs.db"}  # the last connection removed the WAL
    with Store(path, readonly=True) as st:
        assert st.counts()["pending"] == 24
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            st.claim(1, "A")
    read_store_table(path, status="all")
    # the database is unchanged; a reader of a WAL database may leave SQLite's
    # empty -wal and -shm index files beside it
    assert path.read_bytes() == before["runs.db"]
