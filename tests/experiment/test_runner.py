"""Fault and reproducibility tests with real processes (no mocks)."""

import collections
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vareval.errors import ExperimentError
from vareval.experiment import ExperimentSpec, Store, replay, run
from vareval.experiment.store import _pid_alive

HERE = str(Path(__file__).resolve().parent)


def _frame(path):
    with Store(path) as st:
        return st.frame()


def test_serial_run_and_resume(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    rep = run(make_spec(), path, engine="serial", progress=False)
    assert (rep.trials, rep.ran, rep.done, rep.failed, rep.skipped) == (
        24,
        24,
        24,
        0,
        0,
    )
    again = run(make_spec(), path, engine="serial", progress=False)
    assert (again.ran, again.skipped) == (0, 24)
    df = _frame(path)
    assert (df["status"] == "done").all() and (df["attempts"] == 1).all()


def test_local_and_serial_engines_agree(tmp_path, make_spec):
    run(make_spec(), tmp_path / "a.db", engine="serial", progress=False)
    run(make_spec(), tmp_path / "b.db", engine="local", workers=2, progress=False)
    a, b = _frame(tmp_path / "a.db"), _frame(tmp_path / "b.db")
    cols = ["init", "data_split", "lr"]
    assert a[cols].equals(b[cols])


def test_failures_timeouts_and_resume(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    pid_file = tmp_path / "hang.pid"
    spec = make_spec(
        "faulty",
        factors={"model": ["a"]},
        seeds=5,
        configs=1,
        reruns=1,
        space={},
        timeout=1.5,
        params={"pid_file": str(pid_file)},
    )
    rep = run(spec, path, engine="local", workers=2, progress=False)
    assert (rep.ran, rep.done, rep.failed) == (5, 2, 3)
    df = _frame(path).set_index("seed")
    assert df.loc[0, "status"] == "done" and df.loc[4, "status"] == "done"
    assert df.loc[1, "error"] == "ValueError: boom at seed 1"
    assert df.loc[2, "error"] == (
        "ExperimentError: metric 'acc' is str 'high'; expected a real number (int or "
        "float)."
    )
    assert df.loc[3, "error"] == "timed out after 1.5 s; its worker process was killed"
    with Store(path) as st:
        assert "raise ValueError" in st.trial(int(df.loc[1, "trial_id"]))["traceback"]
    hung = int(pid_file.read_text())
    for _ in range(50):
        if not _pid_alive(hung):
            break
        time.sleep(0.1)
    assert not _pid_alive(hung), "the hanging trial's process is still running"
    # resume: failed trials stay failed unless asked
    assert run(spec, path, engine="serial", progress=False).ran == 0
    rep = run(spec, path, engine="serial", progress=False, retry_failed=True)
    assert (rep.ran, rep.failed) == (3, 3)
    df = _frame(path).set_index("seed")
    assert df.loc[3, "error"] == "timed out after 1.5 s"  # the serial engine's alarm
    assert list(df["attempts"]) == [1, 2, 2, 2, 1]


def test_dead_worker_fails_only_its_trial(tmp_path, make_spec):
    spec = make_spec(
        "dies", factors={"model": ["a"]}, seeds=4, configs=1, reruns=1, space={}
    )
    rep = run(spec, tmp_path / "runs.db", engine="local", workers=2, progress=False)
    assert (rep.done, rep.failed) == (3, 1)
    df = _frame(tmp_path / "runs.db")
    assert (
        df.loc[df.seed == 0, "error"]
        .item()
        .startswith("the worker process died (exit code 3)")
    )


def test_bad_metric_outputs(tmp_path, make_spec):
    spec = make_spec(
        "not_a_mapping",
        factors={"model": ["a"]},
        seeds=1,
        configs=1,
        reruns=1,
        space={},
    )
    rep = run(spec, tmp_path / "runs.db", engine="serial", progress=False)
    assert rep.failed == 1
    err = _frame(tmp_path / "runs.db")["error"].item()
    assert err == (
        "ExperimentError: the trial function must return a non-empty mapping of "
        "metric names to numbers; it returned float 0.5."
    )


def test_unknown_function_fails_before_any_trial(tmp_path, make_spec):
    with pytest.raises(ExperimentError, match="has no attribute 'nope'"):
        run(make_spec("nope"), tmp_path / "runs.db", progress=False)
    assert not (tmp_path / "runs.db").exists()


def test_replay_is_bit_identical(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    run(
        make_spec("split", fixed=("data_split",)),
        path,
        engine="local",
        workers=2,
        progress=False,
    )
    for trial_id in (1, 7, 24):
        r = replay(path, trial_id)
        assert r.identical, r
        assert r.replayed == r.stored


def test_changing_only_init_keeps_the_data_split(tmp_path, make_spec):
    fixed = tmp_path / "fixed.db"
    run(
        make_spec("split", fixed=("data_split",)),
        fixed,
        engine="serial",
        progress=False,
    )
    df = _frame(fixed)
    assert df["split_checksum"].nunique() == 1  # the same split at every seed ...
    assert df.groupby("seed")["coef0"].first().nunique() == 3  # ... while init varies
    free = tmp_path / "free.db"
    run(make_spec("split"), free, engine="serial", progress=False)
    assert _frame(free).groupby("seed")["split_checksum"].first().nunique() == 3
    # the init stream is the same whether or not data_split is held fixed
    a = df.sort_values("trial_id")["coef0"].to_numpy()
    b = _frame(free).sort_values("trial_id")["coef0"].to_numpy()
    assert (a != b).any()  # different training data ...
    rec_f = Store(fixed).trial(1)["seeds"]
    rec_n = Store(free).trial(1)["seeds"]
    assert rec_f["init"] == rec_n["init"]  # ... but the identical init stream


_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    from vareval.experiment import ExperimentSpec, run
    spec = ExperimentSpec(
        trial="_trials:sleepy", factors={{"model": ["a", "b"]}}, seeds={seeds},
        configs=1,
        reruns={reruns}, space={{}}, sources=("init",), entropy=5, paths=({here!r},),
        params={{"sleep": {sleep}, "log": {log!r}}},
    )
    rep = run(spec, {store!r}, engine="local", workers={workers}, progress=False)
    print(rep.ran)
""")


def _script(tmp_path, *, seeds, reruns, sleep, workers):
    return _SCRIPT.format(
        here=HERE,
        seeds=seeds,
        reruns=reruns,
        sleep=sleep,
        log=str(tmp_path / "log.txt"),
        store=str(tmp_path / "runs.db"),
        workers=workers,
    )


def _done(path):
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute(
                "SELECT count(*) FROM trials WHERE status = 'done'"
            ).fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _log_counts(tmp_path):
    lines = (tmp_path / "log.txt").read_text().split()
    return collections.Counter(int(x) for x in lines[::2])


def test_sigkill_mid_grid_then_resume(tmp_path):
    store = tmp_path / "runs.db"
    code = _script(tmp_path, seeds=10, reruns=3, sleep=0.05, workers=2)
    # its trials block once 15 are logged (see _trials.hold): killed mid-grid under any load
    env = {**os.environ, "VAREVAL_TEST_HOLD_AFTER": "15"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 60
    while _done(store) < 15 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the runner finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(store) as st:
        before = st.frame()
        assert st.integrity_check() == "ok"
    done_before = before[before.status == "done"].set_index("trial_id")
    assert 15 <= len(done_before) < 60
    time.sleep(0.5)  # the killed runner's workers see their pipe close and exit
    spec = ExperimentSpec(
        trial="_trials:sleepy",
        factors={"model": ["a", "b"]},
        seeds=10,
        configs=1,
        reruns=3,
        space={},
        sources=("init",),
        entropy=5,
        paths=(HERE,),
        params={"sleep": 0.05, "log": str(tmp_path / "log.txt")},
    )
    rep = run(spec, store, engine="local", workers=2, progress=False)
    assert rep.skipped == len(done_before) and rep.failed == 0
    with Store(store) as st:
        after = st.frame()
        assert st.integrity_check() == "ok"
        n_rows = st.con.execute("SELECT count(*) FROM trials").fetchone()[0]
    assert n_rows == 60 and len(after) == 60
    assert (after.status == "done").all()
    assert not after.duplicated(["model", "seed", "config_index", "rerun"]).any()
    # trials finished before the kill were kept as they were and not run again
    kept = after.set_index("trial_id").loc[done_before.index]
    assert kept["finished"].equals(done_before["finished"])
    assert (kept["attempts"] == 1).all()
    counts = _log_counts(tmp_path)
    assert set(counts) == set(range(1, 61))
    assert all(counts[i] == 1 for i in done_before.index)


def test_two_runners_at_once_never_run_a_trial_twice(tmp_path):
    code = _script(tmp_path, seeds=10, reruns=2, sleep=0.02, workers=1)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    ran = [int(o.strip().splitlines()[-1]) for o in outs]
    assert sum(ran) == 40
    counts = _log_counts(tmp_path)
    assert set(counts) == set(range(1, 41))
    assert max(counts.values()) == 1
    with Store(tmp_path / "runs.db") as st:
        assert st.counts()["done"] == 40
        assert st.integrity_check() == "ok"


@pytest.mark.slow
def test_ray_engine_matches_local_on_the_example_grid(tmp_path):
    pytest.importorskip("ray")
    import dataclasses

    from vareval.experiment import load_spec

    example = Path(__file__).resolve().parents[2] / "examples" / "decovac_sklearn"
    spec = load_spec(example / "experiment.toml")
    spec = dataclasses.replace(
        spec, params={"epochs": 2}
    )  # the full grid, short training
    run(spec, tmp_path / "local.db", engine="local", workers=2, progress=False)
    rep = run(spec, tmp_path / "ray.db", engine="ray", workers=2, progress=False)
    assert rep.done == 48 and rep.failed == 0
    keys = ["model", "optimizer", "seed", "config_index", "rerun"]
    a = _frame(tmp_path / "local.db").sort_values(keys).reset_index(drop=True)
    b = _frame(tmp_path / "ray.db").sort_values(keys).reset_index(drop=True)
    cols = [*keys, "learning_rate", "batch_size", "accuracy", "log_loss"]
    assert a[cols].equals(b[cols])


def test_heartbeat_goes_on_during_a_long_serial_trial(tmp_path):
    store, release = tmp_path / "runs.db", tmp_path / "release"
    # the trial runs until the test has seen its heartbeat move (see _trials.sleepy)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {HERE!r})
        from vareval.experiment import ExperimentSpec, run
        spec = ExperimentSpec(
            trial="_trials:sleepy", factors={{"model": ["a"]}}, seeds=1, space={{}},
            sources=("init",), entropy=5, paths=({HERE!r},),
            params={{"until": {str(release)!r}}},
        )
        run(spec, {str(store)!r}, engine="serial", progress=False, heartbeat_every=0.2)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy())

    def beat():
        try:
            con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            try:
                return con.execute(
                    "SELECT heartbeat FROM trials WHERE status = 'running'"
                ).fetchone()
            finally:
                con.close()
        except sqlite3.Error:
            return None

    def wait(check):
        deadline = time.monotonic() + 120
        while not check() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)

    try:
        wait(lambda: beat() is not None)
        first = beat()
        assert first is not None, "the trial never showed as running"
        wait(lambda: (beat() or first)[0] > first[0])
        second = beat()
    finally:
        release.touch()
    assert proc.wait(timeout=120) == 0
    assert second is not None and second[0] > first[0]


def test_interrupted_runner_gives_its_claims_back(tmp_path):
    store = tmp_path / "runs.db"
    code = _script(tmp_path, seeds=10, reruns=3, sleep=0.1, workers=2)
    env = {**os.environ, "VAREVAL_TEST_HOLD_AFTER": "5"}  # see _trials.hold
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _done(store) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) != 0
    with Store(store) as st:
        counts = st.counts()
        assert st.integrity_check() == "ok"
    assert counts["running"] == 0
    assert counts["done"] >= 5 and counts["pending"] > 0


def test_ray_engine_without_ray_is_a_clear_error(monkeypatch):
    from vareval.experiment.engines import make_engine

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ExperimentError, match=r"needs Ray.*'vareval\[ray\]'"):
        make_engine("ray")
    with pytest.raises(ExperimentError, match="unknown engine 'gpu'"):
        make_engine("gpu")
