"""``python -m vareval``: the same as the ``vareval`` command."""

import os
import signal
import sys


def _early_stop(signum, frame):
    """Ctrl-C or SIGTERM while the command is still being imported: one line, nothing to undo."""
    sys.stderr.write("error: aborted\n")
    os._exit(1)


signal.signal(signal.SIGINT, _early_stop)
signal.signal(signal.SIGTERM, _early_stop)
from vareval.cli import main  # noqa: E402 - after the handlers, which cover the import

signal.signal(signal.SIGINT, signal.default_int_handler)  # the command's own handling
main()
