"""Ctrl-C and SIGTERM wait for a running import, and for a held step, then stop the work.

``tests/experiment/test_signals.py`` signals the real command at random
moments; here each rule is met head-on, in this process.
"""

import os
import signal
import sys
import time

import pytest

from vareval._interrupts import as_keyboard_interrupt, held


def _wait_for_interrupt():
    """Run Python code for up to 2 s: a pending handler runs here."""
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        time.sleep(0.001)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_during_an_import_waits_for_the_import(tmp_path, monkeypatch, signum):
    (tmp_path / "_interrupted_module.py").write_text(
        "import os, time\n"
        f"os.kill(os.getpid(), {int(signum)})\n"
        "end = time.monotonic() + 0.2\n"
        "while time.monotonic() < end:  # Python code, where the handler runs\n"
        "    pass\n"
        "DONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with as_keyboard_interrupt(signum), pytest.raises(KeyboardInterrupt):
            import _interrupted_module  # noqa: F401

            _wait_for_interrupt()
        assert sys.modules["_interrupted_module"].DONE
    finally:
        sys.modules.pop("_interrupted_module", None)


def test_outside_an_import_the_interrupt_is_at_once():
    with as_keyboard_interrupt(signal.SIGTERM), pytest.raises(KeyboardInterrupt) as caught:
        os.kill(os.getpid(), signal.SIGTERM)
        _wait_for_interrupt()
    assert str(caught.value) == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_held_step_ends_before_the_interrupt_and_the_handlers_come_back():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a Python handler would have run here
            steps.append("done")
        steps.append("after")
    assert steps == ["done"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
