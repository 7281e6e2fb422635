"""Runs until settled: the scikit-learn example, the store's record, resuming after a kill."""

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from vareval.data.store_table import SCHEMA_VERSION
from vareval.errors import ExperimentError, VarevalError
from vareval.experiment import Store
from vareval.experiment.sequential import (
    paired_seed_differences,
    run_until_settled,
    stored_sequence,
)
from vareval.stats.budget.sequential import confidence_sequence

HERE = str(Path(__file__).resolve().parent)
EXAMPLE = Path(__file__).parents[2] / "examples" / "sequential_sklearn" / "experiment.toml"


def _toml(tmp_path, *, shift, sleep=0.0, seeds=5, log=None):
    path = tmp_path / "experiment.toml"
    path.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_seq_trials:shifted"
        path = {HERE!r}
        seeds = {seeds}
        entropy = 11

        [factors]
        model = ["a", "b", "c"]

        [randomness]
        sources = ["init", "noise_a", "noise_b", "noise_c"]

        [params]
        sleep = {sleep}
        shift = {{ a = {shift}, b = 0.0, c = 0.0 }}
    """) + (f"log = {str(log)!r}\n" if log else ""))
    return path


def _trials(store):
    with Store(store, readonly=True) as st:
        return st.counts(), st.con.execute(
            "SELECT DISTINCT experiment FROM trials ORDER BY experiment"
        ).fetchall()


def test_sklearn_large_difference_stops_before_the_budget(tmp_path):
    store = tmp_path / "large.db"
    r = run_until_settled(EXAMPLE, store, compare=("logreg", "naive_bayes"), metric="accuracy",
                          budget=40, batch=10, engine="serial", progress=False)
    assert r.reason == "difference" and r.pairs == 10 and r.seeds == 10 < r.budget
    assert r.sequence.low[-1] > 0.05  # logistic regression is clearly better
    counts, experiments = _trials(store)
    assert counts == {"done": 20, "failed": 0, "pending": 0, "running": 0}
    assert experiments == [("logreg",), ("naive_bayes",)]  # only the compared pair ran
    (rec,) = Store(store, readonly=True).sequences()
    assert (rec["status"], rec["reason"], rec["stop"]) == ("stopped", "difference", 10)
    assert rec["sequence"]["looks"] == [10] and len(rec["sequence"]["n"]) == 10
    np.testing.assert_array_equal(stored_sequence(rec).high, r.sequence.high)


def test_sklearn_identical_pair_runs_to_the_budget_on_the_local_engine(tmp_path):
    store = tmp_path / "same.db"
    r = run_until_settled(EXAMPLE, store, compare=("logreg", "logreg_again"), metric="accuracy",
                          budget=12, batch=6, engine="local", workers=2, progress=False)
    assert r.reason == "budget" and r.pairs == r.seeds == 12
    assert r.sequence.low[-1] < 0 < r.sequence.high[-1]
    assert _trials(store)[0]["done"] == 24
    (rec,) = Store(store, readonly=True).sequences()
    assert (rec["reason"], rec["stop"], rec["sequence"]["looks"]) == ("budget", 12, [6, 12])


def test_the_recorded_sequence_is_the_one_the_store_s_trials_give(tmp_path):
    store = tmp_path / "s.db"
    r = run_until_settled(_toml(tmp_path, shift=0.0), store, compare=("a", "b"), metric="score",
                          bounds=None, budget=25, batch=10, engine="serial", progress=False)
    assert r.reason == "budget" and r.sequence.looks.tolist() == [10, 20, 25]
    d, seeds, incomplete = paired_seed_differences(store, "score", "a", "b")
    assert seeds.tolist() == list(range(25)) and incomplete == []
    again = confidence_sequence(d, looks=[10, 20, 25], t_opt=25)
    np.testing.assert_array_equal(again.low, r.sequence.low)
    np.testing.assert_array_equal(again.estimate, r.sequence.estimate)


def test_a_look_reads_the_new_seeds_and_restarts_when_an_earlier_seed_completes(tmp_path):
    from vareval.experiment.sequential import _sequence

    store = tmp_path / "s.db"
    run_until_settled(_toml(tmp_path, shift=0.0), store, compare=("a", "b"), metric="score",
                      bounds=[-10, 10], budget=25, batch=25, engine="serial", progress=False)
    d, _, _ = paired_seed_differences(store, "score", "a", "b")
    settings = {"bounds": [-10, 10], "method": "betting", "confidence": 0.95, "t_opt": 25,
                "margin": None}

    def status(value):
        with sqlite3.connect(store) as con:
            con.execute("UPDATE trials SET status = ? WHERE seed = 3 AND experiment = 'a'",
                        (value,))

    status("failed")
    known = {}
    state, incomplete = _sequence(store, "score", "a", "b", settings, 25, None, known)
    assert incomplete == [3] and list(known) == [0, 1, 2] and state.x.size == 24
    status("done")  # retried: seed 3 now lies inside the sequence, which starts over
    state, incomplete = _sequence(store, "score", "a", "b", settings, 25, state, known)
    assert incomplete == [] and list(known) == list(range(25))
    ref = confidence_sequence(d, bounds=(-20, 20))
    np.testing.assert_array_equal(state.x, d)
    np.testing.assert_allclose(state.sequence().low, ref.low, rtol=0, atol=1e-12)


def test_a_stopped_sequence_stays_stopped_and_a_larger_budget_continues_it(tmp_path):
    toml, store = _toml(tmp_path, shift=0.0), tmp_path / "s.db"
    kw = dict(compare=("a", "b"), metric="score", batch=10, engine="serial", progress=False)
    first = run_until_settled(toml, store, budget=20, **kw)
    assert first.reason == "budget" and first.trials_run == 40
    again = run_until_settled(toml, store, budget=20, **kw)
    assert again.trials_run == 0 and again.reason == "budget"
    np.testing.assert_array_equal(again.sequence.high, first.sequence.high)
    more = run_until_settled(toml, store, budget=30, **kw)
    assert more.trials_run == 20 and more.pairs == 30
    assert more.sequence.looks.tolist() == [10, 20, 30]


def test_the_rule_cannot_change_mid_sequence(tmp_path):
    toml, store = _toml(tmp_path, shift=0.0), tmp_path / "s.db"
    kw = dict(compare=("a", "b"), metric="score", budget=10, batch=10, engine="serial",
              progress=False)
    run_until_settled(toml, store, **kw)
    with pytest.raises(ExperimentError, match="other margin .* cannot change mid-sequence"):
        run_until_settled(toml, store, margin=0.1, **{**kw, "budget": 20})


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(compare=("a", "z")), "'z' is not an experiment of the design; its experiments: a, b"),
        (dict(compare=("a", "a")), "two different experiments"),
        (dict(compare="abc"), "--compare must name two experiments"),
        (dict(budget=0), "--budget must be an integer >= 1"),
        (dict(bounds=(1, 0)), "--bounds must be finite with low < high"),
        (dict(bounds=(0, 1)), "--bounds 0,1: trial .* has score = .*, outside them"),
        (dict(metric="nope"), "--metric 'nope': trial 1 .* returned no such metric; it has: score"),
    ],
)
def test_bad_requests(tmp_path, kw, match):
    base = dict(compare=("a", "b"), metric="score", budget=5, batch=5, engine="serial",
                progress=False)
    with pytest.raises(VarevalError, match=match):
        run_until_settled(_toml(tmp_path, shift=0.0), tmp_path / "s.db", **{**base, **kw})


def test_a_version_2_store_is_read_as_it_is_and_migrated_by_a_run(tmp_path):
    toml, store = _toml(tmp_path, shift=0.0), tmp_path / "v2.db"
    with Store(store, create=True):
        pass
    con = sqlite3.connect(store)
    con.execute("DROP TABLE sequences")
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.close()
    with Store(store, readonly=True) as st:
        assert st.sequences() == []
        assert st.con.execute("PRAGMA user_version").fetchone()[0] == 2
    run_until_settled(toml, store, compare=("a", "b"), metric="score", budget=5, batch=5,
                      engine="serial", progress=False)
    with Store(store, readonly=True) as st:
        assert st.con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        assert len(st.sequences()) == 1


def test_a_crash_inside_a_batch_resumes_the_same_sequence(tmp_path):
    """A crash after a batch was added and partly run: the next call finishes it and goes on."""
    toml = _toml(tmp_path, shift=0.0)
    kw = dict(compare=("a", "b"), metric="score", budget=15, batch=5, engine="serial",
              progress=False)
    whole = run_until_settled(toml, tmp_path / "whole.db", **kw)
    store = tmp_path / "crashed.db"

    def crash(cs):
        if cs.n[-1] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_until_settled(toml, store, on_look=crash, **kw)
    with Store(store) as st:  # the next batch was added, some of it ran, one trial in flight
        st.prepare(dataclasses.replace(st.spec(), seeds=10, factors={"model": ("a", "b")}))
        tasks = st.claim(4, "dead-runner")
        st.complete([{"id": t["id"], "status": "done", "metrics": {"score": 0.0}}
                     for t in tasks[:3]], "dead-runner")
        st.con.execute("UPDATE trials SET runner_pid = 2147483646 WHERE status = 'running'")
        st.con.commit()
    r = run_until_settled(toml, store, **kw)
    assert r.sequence.looks.tolist() == [5, 10, 15]
    d, _, _ = paired_seed_differences(store, "score", "a", "b")
    np.testing.assert_array_equal(r.sequence.estimate, np.cumsum(d) / np.arange(1, 16))
    # the three results written before the crash are kept, not run again
    assert not np.array_equal(r.sequence.estimate, whole.sequence.estimate)
    with Store(store, readonly=True) as st:
        assert st.counts()["done"] == 30
        attempts = dict(st.con.execute("SELECT attempts, count(*) FROM trials GROUP BY 1"))
    assert attempts == {1: 29, 2: 1}  # the trial in flight ran again


def _looks(store) -> list:
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        try:
            return [n for (n,) in con.execute(
                "SELECT n FROM sequence_points WHERE look = 1 ORDER BY n")]
        finally:
            con.close()
    except sqlite3.Error:
        return []


@pytest.mark.slow
def test_a_killed_sequential_run_resumes_the_same_sequence(tmp_path):
    """kill -9 of a real `vareval run --until-settled` process, then the same command again."""
    log = tmp_path / "log.txt"
    toml = _toml(tmp_path, shift=0.0, log=log)
    args = ["--until-settled", "--compare", "a,b", "--metric", "score", "--budget", "20",
            "--batch", "4", "--engine", "serial", "--no-progress"]
    whole = tmp_path / "whole.db"
    subprocess.run([sys.executable, "-m", "vareval", "run", str(toml), "--store", str(whole),
                    *args], check=True, capture_output=True, env=os.environ.copy())
    log.unlink()
    store = tmp_path / "killed.db"
    cmd = [sys.executable, "-m", "vareval", "run", str(toml), "--store", str(store), *args]
    # a look is 4 pairs (8 trials); the 4th trial of the third look blocks (see _trials.hold)
    env = {**os.environ, "VAREVAL_TEST_HOLD_AFTER": str(2 * 8 + 3)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    def logged():
        return len(log.read_text().splitlines()) if log.exists() else 0

    try:
        deadline = time.monotonic() + 120
        while logged() < 2 * 8 + 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    before = _looks(store)
    assert len(before) == 2  # killed within the third batch
    subprocess.run(cmd, check=True, capture_output=True, env=os.environ.copy())
    (rec,) = Store(store, readonly=True).sequences()
    (ref,) = Store(whole, readonly=True).sequences()
    assert rec["sequence"]["looks"][: len(before)] == before
    assert rec["sequence"] == ref["sequence"] and rec["reason"] == ref["reason"] == "budget"
    with Store(store, readonly=True) as st:
        assert st.counts()["done"] == 2 * 20


def test_the_bounded_method_is_recorded_and_kept(tmp_path):
    toml, store = _toml(tmp_path, shift=0.0), tmp_path / "s.db"
    kw = dict(compare=("a", "b"), metric="score", bounds=(-10, 12), budget=10, batch=10,
              engine="serial", progress=False)
    first = run_until_settled(toml, store, **kw)
    assert first.sequence.method == "betting"
    (rec,) = Store(store, readonly=True).sequences()
    assert rec["settings"]["method"] == "betting" and rec["sequence"]["method"] == "betting"
    with pytest.raises(ExperimentError, match="other method \\(--cs 'betting'\\).* cannot change"):
        run_until_settled(toml, store, method="empirical-bernstein", **{**kw, "budget": 20})
    assert run_until_settled(toml, store, **{**kw, "budget": 20}).sequence.method == "betting"


def test_a_store_recorded_before_the_choice_keeps_empirical_bernstein(tmp_path):
    toml, store = _toml(tmp_path, shift=0.0), tmp_path / "s.db"
    kw = dict(compare=("a", "b"), metric="score", bounds=(-10, 12), batch=10, engine="serial",
              progress=False)
    run_until_settled(toml, store, method="empirical-bernstein", budget=10, **kw)
    with Store(store) as st:  # as an older vareval wrote it: no method among the settings
        (rec,) = st.sequences()
        del rec["settings"]["method"]
        st.record_sequence("score", "a", "b", {k: rec[k] for k in
                                              ("settings", "status", "reason", "stop", "sequence")})
    more = run_until_settled(toml, store, budget=20, **kw)
    assert more.sequence.method == "empirical-bernstein" and more.pairs == 20
    d, _, _ = paired_seed_differences(store, "score", "a", "b")
    again = confidence_sequence(d, bounds=(-22, 22), looks=[10, 20],
                                method="empirical-bernstein")
    np.testing.assert_array_equal(again.low, more.sequence.low)
    with pytest.raises(ExperimentError, match="--cs 'empirical-bernstein'"):
        run_until_settled(toml, store, method="betting", budget=30, **kw)


def test_cs_needs_bounds(tmp_path):
    with pytest.raises(ExperimentError, match="--cs must be one of .* and no --bounds"):
        run_until_settled(_toml(tmp_path, shift=0.0), tmp_path / "s.db", compare=("a", "b"),
                          metric="score", method="betting", budget=5, batch=5, engine="serial",
                          progress=False)


def _interrupted_at(*pairs):
    def look(cs):
        if cs.n[-1] in pairs:
            raise KeyboardInterrupt

    return look


@pytest.mark.parametrize("bounds, method", [((-10, 12), "betting"),
                                            ((-10, 12), "empirical-bernstein"),
                                            (None, None)])
def test_looks_append_their_rows_and_a_resumed_run_gives_the_uninterrupted_sequence(
        tmp_path, monkeypatch, bounds, method):
    toml = _toml(tmp_path, shift=0.0)
    kw = dict(compare=("a", "b"), metric="score", bounds=bounds, method=method, budget=30,
              batch=10, engine="serial", progress=False)
    writes = []
    real = Store.record_sequence

    def spy(self, metric, a, b, record, points=None, start=0):
        writes.append((start, len(points[0])))
        return real(self, metric, a, b, record, points, start)

    monkeypatch.setattr(Store, "record_sequence", spy)
    whole = run_until_settled(toml, tmp_path / "whole.db", **kw)
    assert whole.reason == "budget" and writes == [(0, 10), (10, 10), (20, 10)]
    store = tmp_path / "resumed.db"
    for at in (10, 20):
        with pytest.raises(KeyboardInterrupt):
            run_until_settled(toml, store, on_look=_interrupted_at(at), **kw)
    writes.clear()
    r = run_until_settled(toml, store, **kw)
    assert writes == [(0, 20), (20, 10)]  # a new call rewrites once, then appends
    for field in ("n", "estimate", "low", "high", "looks"):
        np.testing.assert_array_equal(getattr(r.sequence, field), getattr(whole.sequence, field))
    (rec,) = Store(store, readonly=True).sequences()
    (ref,) = Store(tmp_path / "whole.db", readonly=True).sequences()
    assert rec["sequence"] == ref["sequence"] and rec["sequence"]["looks"] == [10, 20, 30]
    np.testing.assert_array_equal(stored_sequence(rec).low, whole.sequence.low)


def test_a_version_4_store_with_the_sequence_as_json_is_read_and_resumed(tmp_path):
    """The whole sequence in the record's JSON, as version 4 wrote it at every look."""
    import json

    toml = _toml(tmp_path, shift=0.0)
    kw = dict(compare=("a", "b"), metric="score", bounds=(-10, 12), budget=20, batch=10,
              engine="serial", progress=False)
    whole = run_until_settled(toml, tmp_path / "whole.db", **kw)
    store = tmp_path / "v4.db"
    with pytest.raises(KeyboardInterrupt):
        run_until_settled(toml, store, on_look=_interrupted_at(10), **kw)
    with Store(store, readonly=True) as st:
        (before,) = st.sequences()
    con = sqlite3.connect(store)
    con.execute("DROP TABLE sequence_points")
    con.execute("UPDATE sequences SET sequence = ?", (json.dumps(before["sequence"]),))
    con.execute("PRAGMA user_version = 4")
    con.commit()
    con.close()
    with Store(store, readonly=True) as st:
        (old,) = st.sequences()
        assert old["sequence"] == before["sequence"] and len(old["sequence"]["n"]) == 10
    r = run_until_settled(toml, store, **kw)
    np.testing.assert_array_equal(r.sequence.low, whole.sequence.low)
    assert r.sequence.looks.tolist() == [10, 20]
    with Store(store, readonly=True) as st:
        assert st.con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        raw = json.loads(st.con.execute("SELECT sequence FROM sequences").fetchone()[0])
        assert "n" not in raw  # moved into rows
        (rec,) = st.sequences()
    (ref,) = Store(tmp_path / "whole.db", readonly=True).sequences()
    assert rec["sequence"] == ref["sequence"]
