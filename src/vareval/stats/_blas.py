"""One BLAS thread for code made of many small matrix products.

A mixed-model fit or a batch of Bayesian tests is thousands of small
products, for which OpenBLAS's threads only add contention (10-50x slower on
a busy 2-core machine). They run with one BLAS thread through threadpoolctl
(a dependency); should it be unusable on some platform, nothing changes.
Where the environment started numpy's and scipy's OpenBLAS with one thread
(``OPENBLAS_NUM_THREADS=1``, read when the library loads), there is nothing to
limit, and threadpoolctl's scan of the loaded libraries (~10 ms) is skipped.
"""

from __future__ import annotations

import contextlib
import functools
import os

_CONTROLLER = None


def _started_with_one_thread() -> bool:
    """Whether numpy's and scipy's BLAS are OpenBLAS, started with one thread by the environment.

    OpenBLAS takes its thread count from ``OPENBLAS_NUM_THREADS``, else
    ``GOTO_NUM_THREADS``, else ``OMP_NUM_THREADS`` (the first set and positive).
    """
    try:
        import numpy
        import scipy

        blas = [m.__config__.CONFIG["Build Dependencies"]["blas"]["name"] for m in (numpy, scipy)]
    except Exception:  # a build without this record: ask threadpoolctl
        return False
    if not all("openblas" in str(name).lower() for name in blas):
        return False
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value) == 1
    return False


@contextlib.contextmanager
def one_blas_thread():
    """A context in which BLAS uses one thread."""
    global _CONTROLLER
    if _CONTROLLER is None and _started_with_one_thread():
        _CONTROLLER = False
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER = ThreadpoolController()
        except Exception:  # not installed or unusable: leave BLAS alone
            _CONTROLLER = False
    if _CONTROLLER is False:
        yield
        return
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield


def single_blas_thread(func):
    """Run ``func`` with one BLAS thread (see :func:`one_blas_thread`)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return func(*args, **kwargs)

    return wrapper
