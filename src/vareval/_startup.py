"""Ctrl-C or SIGTERM while the ``vareval`` command is still importing: one line, exit 1.

Imported first by the package, it acts only when this process is the command
(``vareval ...`` or ``python -m vareval ...``), never in a notebook or a
program that imports vareval: their signals stay theirs. Nothing is open yet
to clean up, so the process ends at once; the command installs its own
handling (:mod:`vareval.cli`) before it does any work.
"""

import os
import signal
import sys


def _stop(signum, frame):
    sys.stderr.write("error: aborted\n")
    os._exit(1)


def is_command() -> bool:
    """Whether this process runs the command (``-m`` is argv[0] while ``-m vareval`` loads)."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.basename(first) == "vareval"


if is_command():
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
