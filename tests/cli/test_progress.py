"""Progress bars of long commands: drawn on a terminal's stderr, never in a pipe, results unchanged.

Each command runs as its own process twice: with stderr on a pseudo-terminal
(the bar is drawn) and with stderr in a pipe (nothing but the output).
``VAREVAL_PROGRESS`` forces the bar on in a pipe or off on a terminal.
"""

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.stats._progress import drawn, progress_bar


def _on_terminal(args, env=None):
    """Run ``vareval ARGS`` with stderr on a pseudo-terminal: (stdout, what the terminal got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    proc = subprocess.Popen([sys.executable, "-m", "vareval", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})
    os.close(slave)
    seen, out = b"", b""
    while True:
        ready, _, _ = select.select([master, proc.stdout], [], [], 1.0)
        if master in ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the child closed its end (Linux)
                chunk = b""
            seen += chunk
            if not chunk:
                break
        if proc.stdout in ready:
            out += proc.stdout.read1(1 << 16)
        if proc.poll() is not None and not ready:
            break
    out += proc.stdout.read()
    proc.wait()
    os.close(master)
    assert proc.returncode == 0, seen.decode(errors="replace")
    return out.decode(), seen.decode(errors="replace")


def _in_pipe(args, env=None):
    proc = subprocess.run([sys.executable, "-m", "vareval", *map(str, args)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def _search(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "search.csv"
    pd.DataFrame({"method": np.repeat(["a", "b"], 300),
                  "acc": np.r_[rng.beta(8, 2, 300), rng.beta(7, 2, 300)]}).to_csv(path,
                                                                                 index=False)
    return path


DATA = Path(__file__).parents[2] / "src" / "vareval" / "datasets"
LOGS = Path(__file__).parents[1] / "data" / "importers" / "eval_logs"
# command: (its arguments given a temporary directory, the bar's text)
COMMANDS = {
    "tuning-curve": (lambda tmp: ["tuning-curve", _search(tmp), "--metric", "acc", "--by",
                                  "method", "--bounds", "0,1"], "band coverage"),
    "variance": (lambda tmp: ["variance", DATA / "decovac_sim.csv", "--metric", "accuracy",
                              "--fixed", "model,optimizer", "--random", "seed,config"],
                 "LRT refits"),
    "allocate": (lambda tmp: ["allocate", DATA / "decovac_sim.csv", "--metric", "accuracy",
                              "--compare", "protonet_sgd,matchnet_sgd", "--budget", "300",
                              "--resamples", "50"], "bootstrap refits"),
    "evals compare": (lambda tmp: ["evals", "compare", LOGS / "mock-a.eval",
                                   LOGS / "mock-b.eval", "--cluster", "passage", "--errors",
                                   "incorrect", "--test", "bootstrap", "--seed", "3"],
                      "bootstrap"),
    "paired": (lambda tmp: ["paired", DATA / "digits_runs.csv", "--metric", "accuracy",
                            "--by", "method", "--pair-on", "seed", "--all-pairs"],
               "comparisons"),
    "best-of-k": (lambda tmp: ["best-of-k", DATA / "digits_runs.csv", "--metric", "accuracy",
                               "--by", "method"], "methods"),
    "selection-curve": (lambda tmp: ["selection-curve", DATA / "digits_search.csv",
                                     "--validation", "val_accuracy", "--test", "test_accuracy",
                                     "--by", "model"], "methods"),
    "aggregate": (lambda tmp: ["aggregate", DATA / "sklearn_tasks.csv", "--metric", "accuracy",
                               "--by", "method", "--task", "task"], "intervals"),
}


def _check_bar(name, tmp_path):
    args, bar = COMMANDS[name][0](tmp_path), COMMANDS[name][1]
    out_tty, seen = _on_terminal(args)
    out_pipe, err = _in_pipe(args)
    assert bar in seen and "\r" in seen
    assert bar not in err and "\r" not in err and "%|" not in err
    assert "%|" not in out_tty and "%|" not in out_pipe
    assert out_tty == out_pipe  # the numbers do not depend on the bar


def test_a_bar_is_drawn_on_a_terminal_and_never_in_a_pipe(tmp_path):
    _check_bar("tuning-curve", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(COMMANDS) - {"tuning-curve"}))
def test_every_long_command_draws_its_bar_on_a_terminal_only(name, tmp_path):
    _check_bar(name, tmp_path)


def test_the_environment_forces_the_bar_on_or_off(tmp_path):
    args, bar = COMMANDS["tuning-curve"][0](tmp_path), COMMANDS["tuning-curve"][1]
    assert bar in _in_pipe(args, {"VAREVAL_PROGRESS": "1"})[1]
    assert bar not in _on_terminal(args, {"VAREVAL_PROGRESS": "0"})[1]


def test_the_helper_resolves_show(monkeypatch):
    monkeypatch.delenv("VAREVAL_PROGRESS", raising=False)
    assert drawn(True) and not drawn(False)
    assert not drawn(None)  # pytest captures stderr: not a terminal
    for value, expected in (("1", True), ("always", True), ("0", False), ("never", False)):
        monkeypatch.setenv("VAREVAL_PROGRESS", value)
        assert drawn(None) is expected and drawn(False) is False
    with progress_bar(3, "x", False) as bar:
        bar.update(3)  # a hidden bar still counts


def test_a_hidden_bar_takes_every_call_a_drawn_one_does(monkeypatch):
    """Not drawn, the bar is a stand-in (no tqdm import) with the tqdm methods the work calls."""
    monkeypatch.setenv("VAREVAL_PROGRESS", "0")
    with progress_bar(10, "x") as bar:
        bar.update(3)
        bar.reset(total=4)
        bar.set_description("y", refresh=False)
        bar.set_postfix(done=1)
    bar.close()
    assert type(bar).__name__ == "_Hidden"
