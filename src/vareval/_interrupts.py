"""How Ctrl-C and SIGTERM stop vareval: at once while the command starts, then as KeyboardInterrupt.

While the ``vareval`` command (``vareval ...`` or ``python -m vareval ...``)
is still importing, nothing is open to clean up, so either signal prints one
line and ends the process (:func:`_stop`, installed when this module, the
package's first, is imported; never in a notebook or a program that imports
vareval: their signals stay theirs). From the command's first line on (and
in :func:`vareval.experiment.run`), they raise KeyboardInterrupt, so the work
is cleaned up (:func:`as_keyboard_interrupt`).

Never halfway through an import, though: there an interrupt can break more
than the import. A pybind11 extension (scipy's HiGHS) turns it into
``ImportError: initialization failed``, a traceback; and when it escapes code
that an extension runs through ``PyRun_String``, Python ends the process with
SIGINT at exit (status -2), whatever the program then does. So
:func:`interrupt` waits until the import is over, and :func:`held` holds
interrupts over a step that must not be cut in two (handing a new process to
Python's forkserver).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

_RETRY = 0.02  # seconds between looks at whether the import is over


def interrupt(signum, frame):
    """A signal handler: raise KeyboardInterrupt, at once or once the running import is over."""
    if _importing(frame):
        timer = threading.Timer(_RETRY, os.kill, (os.getpid(), signum))
        timer.daemon = True
        timer.start()
        return
    raise KeyboardInterrupt("SIGTERM" if signum == signal.SIGTERM else "")


def _importing(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def as_keyboard_interrupt(*signums):
    """Within the block, ``signums`` raise KeyboardInterrupt through :func:`interrupt`.

    Main thread only: elsewhere Python cannot install a handler, and the block
    runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, interrupt) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def held():
    """Hold Ctrl-C and SIGTERM within the block; the first one is raised after it.

    The handlers in place before the block answer it, so a program that
    imports vareval keeps its own. Main thread only (elsewhere the block runs
    unchanged).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: caught.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if caught:
        signal.raise_signal(caught[0])


def _stop(signum, frame):
    sys.stderr.write("error: aborted\n")
    os._exit(1)


def _is_command() -> bool:
    """Whether this process runs the command (``-m`` is argv[0] while ``-m vareval`` loads)."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.basename(first) == "vareval"


COMMAND = _is_command()  # read once: ``-m vareval`` later names __main__.py in argv[0]
if COMMAND:
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
