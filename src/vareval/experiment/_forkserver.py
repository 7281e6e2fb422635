"""Imported only in the worker pool's forkserver (``engines._context`` preloads it).

A runner killed while it hands a new worker its start-up data (SIGKILL, the OOM
killer) leaves the forkserver's child reading a closed pipe, and Python's
forkserver prints that EOFError's traceback on the terminal the runner had: no
error of the user's, and nobody left to report it to. That one exception ends
the child quietly; every other is printed as before.
"""

from __future__ import annotations

import os
import sys

_SPAWN = os.path.join("multiprocessing", "spawn.py")
_print = sys.excepthook


def _orphaned(kind, value, tb) -> bool:
    """An EOFError raised while reading the start-up data (``spawn._main``)."""
    if not issubclass(kind, EOFError):
        return False
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_main" and code.co_filename.endswith(_SPAWN):
            return True
        tb = tb.tb_next
    return False


def _excepthook(kind, value, tb) -> None:
    if not _orphaned(kind, value, tb):
        _print(kind, value, tb)


sys.excepthook = _excepthook
