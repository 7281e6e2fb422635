"""SIGTERM, Ctrl-C and SIGKILL at random moments of ``vareval run``, start-up included.

Each point starts a real ``python -m vareval run`` and signals it after a
random delay drawn over the whole life of a clean run (so start-up, the
trial-import check, the worker start, the trials and the shutdown are all
hit). Then: SIGTERM/SIGINT end in one line ``error: aborted`` (or the run
had finished, exit 0), never a traceback; 5 s later no process of the run is
alive (found by a tag in their environment, so a process started just before
the signal is not missed); and the same command resumes the store to the
results of a clean run. The fast tier tries a few points; the slow tier
dozens (scaled by ``VAREVAL_SLOW_SCALE``). A signal during Python's own
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


def _experiment(folder: Path) -> Path:
    toml = folder / "experiment.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        name = "signals"
        trial = "_trials:sleepy"
        path = {HERE!r}
        seeds = 5
        entropy = 11

        [factors]
        model = ["a", "b"]

        [randomness]
        sources = ["init"]

        [params]
        sleep = 0.05
    """))
    return toml


def _start(toml, store, tag):
    cmd = [sys.executable, "-m", "vareval", "run", str(toml), "--store", str(store),
           "--workers", "2", "--no-progress"]
    env = {**os.environ, "VAREVAL_TEST_TAG": tag}
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


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A clean run's results and how long it took, end to end."""
    folder = tmp_path_factory.mktemp("clean")
    toml = _experiment(folder)
    start = time.monotonic()
    proc = _start(toml, folder / "runs.db", uuid.uuid4().hex)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return _results(folder / "runs.db"), time.monotonic() - start


def _one_point(folder: Path, sig, delay: float, clean_results):
    toml = _experiment(folder)
    store = folder / "runs.db"
    tag = uuid.uuid4().hex
    proc = _start(toml, store, tag)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    lines = err.strip().splitlines()
    what = f"{signal.Signals(sig).name} after {delay:.3f} s: rc {proc.returncode}, {lines}"
    early = _before_vareval(err, proc.returncode, sig)  # Python's own start-up: see below
    assert early or "Traceback" not in err, what
    if proc.returncode == 0:  # the run had finished
        assert not any(line.startswith("error") for line in lines), what
    elif sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL, what
    elif not early:
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
    (status -15) and Ctrl-C prints Python's own KeyboardInterrupt traceback,
    none of whose frames is vareval's. From the package's first import on,
    both give the one line.
    """
    if sig == signal.SIGTERM:
        return rc == -signal.SIGTERM and not err.strip()
    if sig == signal.SIGINT and "Traceback" in err:
        return err.strip().endswith("KeyboardInterrupt") and "vareval" not in err
    return False


def _points(rng, n, span):
    signals = [signal.SIGTERM, signal.SIGINT, signal.SIGKILL]
    return [(signals[i % 3], float(rng.uniform(0, span))) for i in range(n)]


def test_a_few_signals_at_random_moments(tmp_path, rng, clean):
    results, seconds = clean
    for k, (sig, delay) in enumerate(_points(rng, 2, 1.2 * seconds)):
        folder = tmp_path / f"p{k}"
        folder.mkdir()
        _one_point(folder, sig, delay, results)


@pytest.mark.slow
def test_dozens_of_signals_at_random_moments(tmp_path, rng, clean, scaled):
    results, seconds = clean
    for k, (sig, delay) in enumerate(_points(rng, scaled(60, minimum=12), 1.2 * seconds)):
        folder = tmp_path / f"p{k}"
        folder.mkdir()
        _one_point(folder, sig, delay, results)
