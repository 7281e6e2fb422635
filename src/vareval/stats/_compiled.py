"""The optional compiled kernels (built by setup.py where a C compiler exists)."""

from __future__ import annotations

import importlib
import os


def compiled(module: str):
    """The compiled ``module``, or None: not built, or ``VAREVAL_NO_KERNEL`` is set.

    Each caller keeps its kernel behind ``functools.cache``; a test clears that
    cache to switch between the kernel and the numpy path.
    """
    if os.environ.get("VAREVAL_NO_KERNEL"):
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
