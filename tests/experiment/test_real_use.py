"""The store under real use, with real processes: readers during a run, kills, orphans.

Each test starts ``vareval run`` as its own process (the local engine, worker
processes) on trials that log ``id pid time`` when they finish, and checks the
store against that log.
"""

import collections
import dataclasses
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
from vareval.experiment import run
from vareval.experiment.store import _pid_alive

HERE = str(Path(__file__).resolve().parent)
LAG = 1.0  # seconds a finished trial may wait for its commit (flush_every is 0.25)
# A finished trial must be visible to a new reader within this many seconds: the
# commit's LAG plus room for a 2-core machine that runs two runners, their four
# workers and the poller at once (there CI once saw a commit later than LAG).
VISIBLE_WITHIN = 3.0


def _experiment(tmp_path, *, seeds, sleep, hang=()):
    toml = tmp_path / "experiment.toml"
    toml.write_text(
        textwrap.dedent(f"""
        [experiment]
        name = "real-use"
        trial = "_trials:ticking"
        path = {HERE!r}
        seeds = {seeds}
        entropy = 7

        [factors]
        model = ["a", "b"]

        [randomness]
        sources = ["init"]

        [params]
        sleep = {sleep}
        hang = {list(hang)}
        log = {str(tmp_path / "log.txt")!r}
        started = {str(tmp_path / "started.txt")!r}
    """)
    )
    return toml


_RUNNERS: list = []


@pytest.fixture(autouse=True)
def _kill_leftover_runners():
    """A failing test must not leave its runners (and their workers) behind."""
    yield
    while _RUNNERS:
        proc = _RUNNERS.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _runner(toml, store, *, workers=2, hold_after=None, **popen):
    """``vareval run``; with ``hold_after``, its trials block once that many are logged."""
    cmd = [sys.executable, "-m", "vareval", "run", str(toml), "--store", str(store)]
    cmd += ["--workers", str(workers), "--no-progress"]
    env = os.environ.copy()
    if hold_after is not None:
        env["VAREVAL_TEST_HOLD_AFTER"] = str(hold_after)
    proc = subprocess.Popen(cmd, env=env, text=True, **popen)
    _RUNNERS.append(proc)
    return proc


def _log(tmp_path):
    """Finished trials as ``[(id, pid, unix time)]``."""
    path = tmp_path / "log.txt"
    if not path.exists():
        return []
    rows = [line.split() for line in path.read_text().splitlines() if line]
    return [(int(i), int(p), float(t)) for i, p, t in rows if len((i, p, t)) == 3]


def _done(store) -> dict:
    """``{id: finished}`` of done trials, read by a new read-only connection."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)
    try:
        return dict(
            con.execute("SELECT id, finished FROM trials WHERE status = 'done'")
        )
    finally:
        con.close()


def _n_done(store) -> int:
    """How many trials are done; 0 while the store is being created."""
    try:
        return len(_done(store)) if store.exists() else 0
    except sqlite3.OperationalError:
        return 0


def _touch_read_write(store) -> None:
    """What pandas or an SQLite browser does: open read-write, read, close."""
    con = sqlite3.connect(store, timeout=10)
    try:
        con.execute("SELECT count(*) FROM trials WHERE status = 'done'").fetchone()
    finally:
        con.close()


def _poll(tmp_path, store, procs, *, until=None, status_once=True):
    """Read the store read-write and read-only, over and over, while ``procs`` run.

    Checks at every read that each trial logged as finished more than
    ``VISIBLE_WITHIN`` seconds earlier is visible as done. Stops when every
    process ended or ``until(number done)`` holds. Returns the number of reads.
    """
    reads, done = 0, {}
    status = None
    while any(p.poll() is None for p in procs):
        if until is not None and until(len(done)):
            break
        if not store.exists():
            time.sleep(0.05)
            continue
        try:
            _touch_read_write(store)
            now = time.time()
            done = _done(store)
        except sqlite3.OperationalError as exc:  # the schema is being created
            assert "no such table" in str(exc)
            continue
        reads += 1
        late = [i for i, _, t in _log(tmp_path) if t < now - VISIBLE_WITHIN and i not in done]
        assert not late, f"finished more than {VISIBLE_WITHIN} s ago but not visible: {late}"
        if status_once and reads == 5:  # `vareval status`, as a user would type it
            status = subprocess.Popen(
                [sys.executable, "-m", "vareval", "status", str(store)],
                env=os.environ.copy(),
                stdout=subprocess.DEVNULL,
            )
        time.sleep(0.02)
    assert status is None or status.wait(timeout=60) == 0
    return reads


def _integrity(store) -> str:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (from /proc)."""
    children = collections.defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children[ppid].append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _wait_for(condition, timeout=120.0):
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.02)


# -- a reader during the run, then SIGKILL ------------------------------------


def _reader_during_run_then_kill(tmp_path):
    toml = _experiment(tmp_path, seeds=150, sleep=0.05)
    store = tmp_path / "runs.db"
    proc = _runner(toml, store, hold_after=60, stderr=subprocess.PIPE)
    reads = _poll(tmp_path, store, [proc], until=lambda n: n >= 60)
    assert reads > 10 and proc.poll() is None, "the runner ended before the kill"
    committed = _done(store)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(committed) >= 10
    after = _done(store)
    assert {i: after.get(i) for i in committed} == committed  # nothing lost
    assert _integrity(store) == "ok"
    logged = {i for i, _, _ in _log(tmp_path)}
    assert set(after) <= logged
    # resume: the rest runs once more at most, what was committed never again
    res = _runner(toml, store, workers=4, stdout=subprocess.PIPE)
    assert res.wait(timeout=300) == 0
    assert len(_done(store)) == 300 and _integrity(store) == "ok"
    runs = collections.Counter(i for i, _, _ in _log(tmp_path))
    assert set(runs) == set(range(1, 301))
    assert all(runs[i] == 1 for i in committed)


def test_reader_during_run_then_sigkill(tmp_path):
    _reader_during_run_then_kill(tmp_path)


# -- two runners and a poller ---------------------------------------------------


def _two_runners_and_a_poller(tmp_path, seconds):
    # two runners of one worker each finish 0.1 s trials in about `seconds`
    seeds = max(10, int(seconds * 10))
    toml = _experiment(tmp_path, seeds=seeds, sleep=0.1)
    store = tmp_path / "runs.db"
    procs = [_runner(toml, store, workers=1, stdout=subprocess.PIPE) for _ in range(2)]
    _poll(tmp_path, store, procs, status_once=False)
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert len(_done(store)) == 2 * seeds and _integrity(store) == "ok"
    runs = collections.Counter(i for i, _, _ in _log(tmp_path))
    assert set(runs) == set(range(1, 2 * seeds + 1))  # no loss
    assert max(runs.values()) == 1  # no trial ran twice


# -- one of two runners is killed: the other takes its claims back ---------------


def _kill_one_of_two(tmp_path):
    toml = _experiment(tmp_path, seeds=60, sleep=0.1)
    store = tmp_path / "runs.db"
    # the victim's worker stops in its 4th trial (a claim it holds until killed)
    victim = _runner(toml, store, workers=1, hold_after=3, stderr=subprocess.DEVNULL)
    _wait_for(lambda: len(_log(tmp_path)) >= 3 or victim.poll() is not None)
    assert victim.poll() is None
    victim_workers = {pid for _, pid, _ in _log(tmp_path)}
    survivor = _runner(toml, store, workers=1, stdout=subprocess.PIPE)

    def both_working():  # trials logged by the workers of both runners
        return bool({pid for _, pid, _ in _log(tmp_path)} - victim_workers)

    _wait_for(lambda: both_working() or survivor.poll() is not None)
    assert victim.poll() is None
    os.kill(victim.pid, signal.SIGKILL)
    killed = time.time()
    victim.wait()
    out, _ = survivor.communicate(timeout=300)
    assert survivor.returncode == 0, out
    assert "still running" not in out
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    counts = dict(con.execute("SELECT status, count(*) FROM trials GROUP BY status"))
    con.close()
    assert counts == {"done": 120}, counts  # no trial left under the dead claim
    runs = collections.Counter(i for i, _, _ in _log(tmp_path))
    assert set(runs) == set(range(1, 121))
    # run twice: only trials the victim was running or had finished within
    # LAG seconds of the kill (not yet committed), never a committed one
    first = {}
    for i, pid, t in _log(tmp_path):
        first.setdefault(i, (pid, t))
    again = [i for i, n in runs.items() if n > 1]
    assert all(
        first[i][0] in victim_workers and first[i][1] > killed - LAG for i in again
    ), (again, [first[i] for i in again], killed)


def test_killed_runner_claims_are_taken_back_by_the_other(tmp_path):
    _kill_one_of_two(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario",
    [
        _reader_during_run_then_kill,
        lambda folder: _two_runners_and_a_poller(folder, seconds=30),
        _kill_one_of_two,
    ],
    ids=["reader-then-sigkill", "two-runners-and-a-poller-30s", "kill-one-of-two"],
)
def test_20_runs_in_a_row(tmp_path, scaled, scenario):
    for k in range(scaled(20, minimum=3)):
        folder = tmp_path / f"run{k}"
        folder.mkdir()
        scenario(folder)


# -- no orphans -------------------------------------------------------------------


def _started(tmp_path, n):
    path = tmp_path / "started.txt"
    return path.exists() and len(path.read_text().splitlines()) >= n


def test_no_process_survives_sigkill_of_a_runner_with_hanging_trials(tmp_path):
    toml = _experiment(tmp_path, seeds=2, sleep=0.0, hang=(0, 1))
    proc = _runner(toml, tmp_path / "runs.db", stderr=subprocess.DEVNULL)
    _wait_for(lambda: _started(tmp_path, 2))  # both workers stuck in a trial
    family = _descendants(proc.pid)
    hanging = {int(line.split()[2]) for line in (tmp_path / "started.txt").open()}
    assert hanging <= family and len(family) >= 3  # forkserver and two workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(5.0)
    alive = {pid for pid in family if _pid_alive(pid)}
    assert not alive, f"processes of the run still alive 5 s after SIGKILL: {alive}"


def test_sigterm_stops_like_ctrl_c(tmp_path):
    toml = _experiment(tmp_path, seeds=40, sleep=0.1)
    store = tmp_path / "runs.db"
    proc = _runner(toml, store, hold_after=5, stderr=subprocess.PIPE)
    _wait_for(lambda: _n_done(store) >= 5 or proc.poll() is not None)
    family = _descendants(proc.pid)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and err.strip().splitlines()[-1] == "error: aborted"
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    counts = dict(con.execute("SELECT status, count(*) FROM trials GROUP BY status"))
    con.close()
    assert "running" not in counts  # claims released
    assert counts["done"] >= 5 and counts["pending"] > 0
    # the results that reached the runner are written; at most the trials the
    # two workers were finishing when the signal came are lost (and pending)
    done, logged = set(_done(store)), {i for i, _, _ in _log(tmp_path)}
    assert done <= logged and len(logged - done) <= 4
    _wait_for(lambda: not any(_pid_alive(p) for p in family), timeout=5)


# -- a runner never takes back its own live claims ----------------------------


def test_stale_after_shorter_than_a_trial(tmp_path, make_spec):
    log = tmp_path / "log.txt"
    spec = make_spec(
        "ticking",
        factors={"model": ["a"]},
        seeds=4,
        configs=1,
        reruns=1,
        space={},
        params={"sleep": 1.2, "log": str(log)},
    )
    rep = run(
        spec, tmp_path / "runs.db", engine="local", workers=2, progress=False,
        stale_after=0.3,
    )  # fmt: skip
    assert (rep.done, rep.not_written, rep.held_elsewhere) == (4, 0, [])
    runs = collections.Counter(int(line.split()[0]) for line in log.open())
    assert runs == {1: 1, 2: 1, 3: 1, 4: 1}


def test_trial_module_that_hangs_at_import_meets_the_timeout(tmp_path, make_spec):
    (tmp_path / "slowmod.py").write_text(
        "import time\ntime.sleep(60)\n\ndef trial(t):\n    return {'x': 1.0}\n"
    )
    spec = make_spec("trivial", timeout=1.0, paths=(str(tmp_path),))
    spec = dataclasses.replace(spec, trial="slowmod:trial")
    t0 = time.monotonic()
    with pytest.raises(ExperimentError, match=r"took longer than the trial timeout \(1 s\)"):
        run(spec, tmp_path / "runs.db", progress=False)
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "runs.db").exists()
