"""SIGTERM, Ctrl-C and SIGKILL at random moments of ``vareval run``, start-up included.

Each point starts a real ``python -m vareval run`` and signals it after a
random delay drawn over the whole life of a clean run (so start-up, the
trial-import check, the worker start, the trials and the shutdown are all
hit). Then: SIGTERM/SIGINT end in one line ``error: aborted`` (or the run
had finished, exit 0), never a traceback; 5 s later no process of the run is
alive (found by a tag in their environment, so a process started just before
the signal is not missed); and the same command resumes the store to the
results of a clean run. The default tier sends one Ctrl-C to a tiny run
while its trials run (cheap and sure); the slow tier dozens of signals at
random moments (scaled by ``VAREVAL_SLOW_SCALE``). A signal during Python's own
start-up, before vareval's first line runs, ends as Python decides (see
:func:`_before_vareval`); the test allows only that, and only then.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)


def _experiment(folder: Path, seeds: int, log=None) -> Path:
    toml = folder / "experiment.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        name = "signals"
        trial = "_trials:sleepy"
        path = {HERE!r}
        seeds = {seeds}
        entropy = 11

        [factors]
        model = ["a", "b"]

        [randomness]
        sources = ["init"]

        [params]
        sleep = 0.05
    """) + (f"log = {str(log)!r}\n" if log else ""))
    return toml


def _start(toml, store, tag, **env):
    cmd = [sys.executable, "-m", "vareval", "run", str(toml), "--store", str(store),
           "--workers", "2", "--no-progress"]
    env = {**os.environ, "VAREVAL_TEST_TAG": tag, **env}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _tagged(tag: str) -> set[int]:
    """Processes alive now whose environment carries ``tag`` (zombies are dead)."""
    found = set()
    needle = f"VAREVAL_TEST_TAG={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.add(int(entry.name))
        except OSError:
            continue
    return found


def _results(store) -> list[tuple]:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT id, status, metrics FROM trials ORDER BY id"
        ).fetchall()
    finally:
        con.close()


def _clean(folder: Path, seeds: int):
    """A clean run's results and how long it took, end to end."""
    toml = _experiment(folder, seeds)
    start = time.monotonic()
    proc = _start(toml, folder / "runs.db", uuid.uuid4().hex)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return _results(folder / "runs.db"), time.monotonic() - start


def _one_point(folder: Path, seeds: int, sig, delay: float, clean_results):
    toml = _experiment(folder, seeds)
    tag = uuid.uuid4().hex
    proc = _start(toml, folder / "runs.db", tag)
    time.sleep(delay)
    _signalled(proc, toml, folder / "runs.db", tag, sig, f"after {delay:.3f} s", clean_results)


def _signalled(proc, toml, store, tag, sig, when: str, clean_results):
    """Signal ``proc``, check how it ended and that no process of it is left, then resume."""
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    lines = err.strip().splitlines()
    what = f"{signal.Signals(sig).name} {when}: rc {proc.returncode}, {lines}"
    early = _before_vareval(err, proc.returncode, sig)  # Python's own start-up: see below
    assert early or "Traceback" not in err, what
    if proc.returncode == 0:  # the run had finished
        assert not any(line.startswith("error") for line in lines), what
    elif sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL, what
    elif not early:  # also while the command exits: it keeps its handlers to the end
        assert proc.returncode == 1 and lines == ["error: aborted"], what
    deadline = time.monotonic() + 5.0
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _tagged(tag), f"{what}: processes of the run alive 5 s later: {_tagged(tag)}"
    # the same command resumes to the clean run's results
    again = _start(toml, store, uuid.uuid4().hex)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, f"{what}; resume: {err}"
    assert _results(store) == clean_results, what


def _before_vareval(err: str, rc: int, sig) -> bool:
    """The signal came while Python itself started (runpy, site), before vareval's first line.

    No program can answer a signal there: SIGTERM ends the process silently
    (status -15); Ctrl-C does too (status -2) before the interpreter installs
    its handler, and after that prints Python's own KeyboardInterrupt
    traceback, none of whose frames is vareval's. From the package's first
    import on, both give the one line.
    """
    if rc == -sig and not err.strip():
        return sig in (signal.SIGTERM, signal.SIGINT)
    if sig == signal.SIGINT and "Traceback" in err:
        return err.strip().endswith("KeyboardInterrupt") and "vareval" not in err
    return False


def _points(rng, n, span):
    signals = [signal.SIGTERM, signal.SIGINT, signal.SIGKILL]
    return [(signals[i % 3], float(rng.uniform(0, span))) for i in range(n)]


def _signal_points(folder: Path, rng, n: int, seeds: int):
    results, seconds = _clean(folder, seeds)
    for k, (sig, delay) in enumerate(_points(rng, n, 1.2 * seconds)):
        point = folder / f"p{k}"
        point.mkdir()
        _one_point(point, seeds, sig, delay, results)


def test_ctrl_c_while_trials_run(tmp_path):
    """The default tier: one Ctrl-C on a tiny run, while a worker holds a trial.

    Its trials block once one is logged (see ``_trials.hold``), so the signal
    comes mid-run under any load; random moments are the slow tier's.
    """
    from vareval.experiment import run

    log = tmp_path / "log.txt"
    toml = _experiment(tmp_path, 2, log=log)
    run(toml, tmp_path / "clean.db", engine="serial", progress=False)
    clean = _results(tmp_path / "clean.db")
    log.unlink()
    tag = uuid.uuid4().hex
    proc = _start(toml, tmp_path / "runs.db", tag, VAREVAL_TEST_HOLD_AFTER="1")
    deadline = time.monotonic() + 120
    while not log.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None and log.exists()
    _signalled(proc, toml, tmp_path / "runs.db", tag, signal.SIGINT, "mid-run", clean)
    assert proc.returncode == 1


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_after_the_last_line_is_aborted_not_a_death(tmp_path, sig):
    """The command's last second (Python frees numpy, scipy ...) keeps its handlers.

    A signal 0.1 s after the final ``store ...`` line ends in ``error: aborted``
    (status 1), or finds the command already gone (status 0); never status
    -15 or -2, which Python's own exit would give.
    """
    toml = _experiment(tmp_path, 2)
    proc = _start(toml, tmp_path / "runs.db", uuid.uuid4().hex)
    for line in proc.stdout:
        if line.startswith("store "):
            break
    time.sleep(0.1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 1), (proc.returncode, err)
    assert err.strip() == ("error: aborted" if proc.returncode else ""), err
    assert len(_results(tmp_path / "runs.db")) == 4


@pytest.mark.slow
def test_dozens_of_signals_at_random_moments(tmp_path, rng, scaled):
    _signal_points(tmp_path, rng, scaled(60, minimum=12), seeds=5)


_ORPHAN = textwrap.dedent("""
    import os, sys
    import multiprocessing.spawn as spawn
    if sys.argv[1] == "preloaded":
        import vareval.experiment._forkserver
    read, write = os.pipe()
    os.close(write)  # the runner died before it sent the worker's start-up data
    try:
        spawn._main(read, None)
    except Exception:  # what the forkserver's child does (multiprocessing/forkserver.py)
        sys.excepthook(*sys.exc_info())
    try:
        raise ValueError("any other error")
    except Exception:
        sys.excepthook(*sys.exc_info())
""")


@pytest.mark.parametrize("preloaded", [True, False])
def test_a_worker_whose_runner_died_mid_start_prints_no_traceback(preloaded):
    # A runner SIGKILLed while handing a new worker its start-up data: the forkserver's
    # child reads a closed pipe. With the pool's preload it ends quietly; other errors
    # are printed as ever (and without it, Python prints the EOFError: the case exists).
    arg = "preloaded" if preloaded else "plain"
    err = subprocess.run([sys.executable, "-c", _ORPHAN, arg], capture_output=True,
                         text=True, timeout=60).stderr
    assert ("EOFError" in err) is not preloaded, err
    assert "ValueError: any other error" in err, err


_HANDOVER = """
import atexit, contextlib, multiprocessing as mp, os, sys, time
from vareval.experiment import engines

starts = [0]

@contextlib.contextmanager
def held():  # the interrupt held over the k-th worker's hand-over, raised after it
    yield
    starts[0] += 1
    if starts[0] == int(sys.argv[1]):
        raise KeyboardInterrupt

if __name__ == "__main__":
    engines.held = held
    try:
        engines.LocalEngine(workers=2)
    except KeyboardInterrupt:  # the command's exit, inside the handler as vareval's CLI does
        print(len(mp.active_children()), flush=True)
        atexit._run_exitfuncs()
        os._exit(1)
"""


@pytest.mark.parametrize("k", [1, 2])
def test_interrupt_at_a_workers_hand_over_ends_the_command(tmp_path, k):
    """A Ctrl-C or SIGTERM held over the k-th worker's start, raised once it is started.

    That worker is not yet the engine's, and the pool is not yet built: both
    are stopped there, so no worker is left that Python's exit would wait for
    (it did wait forever: the workers ignore SIGTERM and end when their
    lifeline closes).
    """
    script = tmp_path / "handover.py"
    script.write_text(_HANDOVER)
    out = subprocess.run([sys.executable, str(script), str(k)], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert out.stdout.split() == ["0"], out.stderr
