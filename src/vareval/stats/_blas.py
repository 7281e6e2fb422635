"""One BLAS thread for code made of many small matrix products.

A mixed-model fit or a batch of Bayesian tests is thousands of small
products, for which OpenBLAS's threads only add contention (10-50x slower on
a busy 2-core machine). They run with one BLAS thread through threadpoolctl
(a dependency); should it be unusable on some platform, nothing changes.
"""

from __future__ import annotations

import contextlib
import functools

_CONTROLLER = None


@contextlib.contextmanager
def one_blas_thread():
    """A context in which BLAS uses one thread."""
    global _CONTROLLER
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
