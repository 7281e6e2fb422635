"""scipy's BLAS and LAPACK function pointers, without importing ``scipy.linalg``.

The compiled kernels call BLAS/LAPACK through the addresses scipy exports
(``scipy.linalg.cython_blas`` / ``cython_lapack``, their ``__pyx_capi__``).
Importing those two modules the usual way first runs ``scipy/linalg/__init__.py``,
which imports all of scipy.linalg: ~30-40 ms of CPU, about a tenth of a small
``vareval variance`` command. The two extension modules import nothing of
scipy.linalg themselves, so they are loaded here from their files. They are
then taken out of ``sys.modules`` again (they put themselves there), so that a
later ``import scipy.linalg`` imports them as usual and binds them as its
attributes: it gets these same module objects back (a Cython module is created
once per process), with the same functions.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys

_MODULES = ("cython_blas", "cython_lapack")


def _from_file(name: str):
    """``scipy.linalg.<name>`` loaded from its file, or None where that is not possible."""
    full = f"scipy.linalg.{name}"
    if full in sys.modules:  # loaded by someone else: leave it as it is
        return sys.modules[full]
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.origin:
        return None
    folder = os.path.join(os.path.dirname(spec.origin), "linalg")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, name + suffix)
        if os.path.isfile(path):
            try:
                spec = importlib.util.spec_from_file_location(full, path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            except Exception:  # an unusual build: the usual import below
                return None
            finally:
                sys.modules.pop(full, None)
            return module
    return None


@functools.cache
def capi() -> tuple[dict, dict]:
    """The ``__pyx_capi__`` dicts of scipy's ``cython_blas`` and ``cython_lapack``.

    Each maps a routine's name to a capsule holding its address (Fortran
    calling convention). Imported the usual way where the files are not found
    or do not load.
    """
    if "scipy.linalg" not in sys.modules:  # else its own modules, imported as usual
        blas, lapack = (_from_file(name) for name in _MODULES)
        if hasattr(blas, "__pyx_capi__") and hasattr(lapack, "__pyx_capi__"):
            return blas.__pyx_capi__, lapack.__pyx_capi__
    blas, lapack = (importlib.import_module(f"scipy.linalg.{name}") for name in _MODULES)
    return blas.__pyx_capi__, lapack.__pyx_capi__
