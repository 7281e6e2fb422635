"""The mixed model's small dense factorisations, without importing ``scipy.linalg``.

A fit calls a few dense LAPACK routines on small matrices (the fixed effects'
cross-product, a dense Schur complement, a rank check): Cholesky factors and
their solves and inverse, triangular solves, a pivoted QR. ``scipy.linalg``
costs ~30-40 ms of CPU to import, about a tenth of a small ``vareval variance``
command, so where the compiled kernel is built (``_superkernel``, which already
holds scipy's LAPACK addresses) these functions make the same LAPACK calls as
scipy.linalg's functions of the same names, with the same arguments, memory
order and copies: their results are scipy's, bit for bit (tested). Without the
kernel (not built, or ``VAREVAL_NO_KERNEL`` set) they are scipy.linalg's,
imported at first use. Errors are scipy's: ``LinAlgError`` (numpy's, which
scipy.linalg raises) for a matrix that is not positive definite or a singular
triangle.
"""

from __future__ import annotations

import numpy as np

from vareval.stats._lazy import linalg
from vareval.stats.variance.supernodal import _kernel


def _square(a, check_finite):
    """``a`` as a float64 square matrix, or None where scipy's own checks should answer."""
    a = np.asarray_chkfinite(a) if check_finite else np.asarray(a)
    ok = a.ndim == 2 and a.shape[0] == a.shape[1] and a.size and a.dtype == np.float64
    return a if ok else None


def _fortran_copy(a):
    """A Fortran-ordered copy, as scipy's wrappers pass an array LAPACK overwrites."""
    return np.array(a, dtype=np.float64, order="F", copy=True)


def _potrf(kernel, a, lower, clean):
    """The factor as scipy's ``_cholesky`` makes it: potrf on a Fortran copy; its errors."""
    c = _fortran_copy(a)
    info = kernel.potrf(c.T, c.shape[0], lower, clean)
    if info > 0:
        raise np.linalg.LinAlgError(
            f"{info}-th leading minor of the array is not positive definite"
        )
    if info < 0:
        raise ValueError(
            f'LAPACK reported an illegal value in {-info}-th argument on entry to "POTRF".'
        )
    return c


def cholesky(a, lower=False, check_finite=True):
    """``scipy.linalg.cholesky``: the triangular factor, the other triangle zero."""
    kernel, a1 = _kernel(), _square(a, check_finite)
    if kernel is None or a1 is None:
        return linalg.cholesky(a, lower=lower, check_finite=check_finite)
    return _potrf(kernel, a1, lower, clean=True)


def cho_factor(a, lower=False, check_finite=True):
    """``scipy.linalg.cho_factor``: ``(c, lower)``, the other triangle of ``c`` as in ``a``."""
    kernel, a1 = _kernel(), _square(a, check_finite)
    if kernel is None or a1 is None:
        return linalg.cho_factor(a, lower=lower, check_finite=check_finite)
    return _potrf(kernel, a1, lower, clean=False), lower


def cho_solve(c_and_lower, b, check_finite=True):
    """``scipy.linalg.cho_solve``: ``A^-1 b`` from ``cho_factor``'s ``(c, lower)``."""
    c, lower = c_and_lower
    kernel, c1 = _kernel(), _square(c, check_finite)
    b1 = np.asarray_chkfinite(b) if check_finite else np.asarray(b)
    usable = c1 is not None and b1.dtype == np.float64 and b1.size and b1.ndim in (1, 2)
    if kernel is None or not usable:
        return linalg.cho_solve(c_and_lower, b, check_finite=check_finite)
    if b1.shape[0] != c1.shape[0]:
        raise ValueError(f"incompatible dimensions ({c1.shape} and {b1.shape})")
    x, c1 = _fortran_copy(b1), np.asfortranarray(c1)
    info = kernel.potrs(c1.T, c1.shape[0], x.T, x.size // c1.shape[0], lower)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal potrs")
    return x


def potri(c, lower=False):
    """``scipy.linalg.lapack.dpotri``: ``(inv, info)``, ``A^-1`` in ``c``'s triangle."""
    kernel, c1 = _kernel(), _square(c, False)
    if kernel is None or c1 is None:
        return linalg.lapack.dpotri(c, lower=lower)
    inv = _fortran_copy(c1)
    return inv, kernel.potri(inv.T, inv.shape[0], lower)


def solve_triangular(a, b, trans=0, lower=False, check_finite=True):
    """``scipy.linalg.solve_triangular``: ``x`` with ``a x = b`` (``a' x = b`` for ``trans=1``)."""
    kernel, a1 = _kernel(), _square(a, check_finite)
    b1 = np.asarray_chkfinite(b) if check_finite else np.asarray(b)
    trans = {"N": 0, "T": 1}.get(trans, trans)
    usable = a1 is not None and b1.dtype == np.float64 and b1.size and b1.ndim in (1, 2)
    if kernel is None or not usable or b1.shape[0] != a1.shape[0] or trans not in (0, 1):
        return linalg.solve_triangular(a, b, trans=trans, lower=lower, check_finite=check_finite)
    if not a1.flags.f_contiguous:  # scipy solves the transposed system: LAPACK wants Fortran
        a1, lower, trans = a1.T, not lower, 1 - trans
    a1, x = np.asfortranarray(a1), _fortran_copy(b1)
    n = a1.shape[0]
    info = kernel.trtrs(a1.T, n, x.T, x.size // n, lower, trans)
    if info > 0:
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    if info < 0:
        raise ValueError(f"illegal value in {-info}-th argument of internal trtrs")
    return x


def qr_pivoted(a, check_finite=True):
    """``scipy.linalg.qr(a, mode="economic", pivoting=True)``'s ``(R, piv)`` (no Q).

    LAPACK's column-pivoted QR (geqp3, every column free); ``piv`` 0-based.
    """
    kernel = _kernel()
    a1 = np.asarray_chkfinite(a) if check_finite else np.asarray(a)
    if kernel is None or a1.ndim != 2 or not a1.size or a1.dtype != np.float64:
        _, R, piv = linalg.qr(a, mode="economic", pivoting=True, check_finite=check_finite)
        return R, piv
    m, n = a1.shape
    qr, jpvt, tau = _fortran_copy(a1), np.zeros(n, np.int32), np.empty(min(m, n))
    info = kernel.geqp3(qr.T, m, n, jpvt, tau)
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal geqp3")
    jpvt -= 1  # LAPACK's pivots are 1-based
    return np.triu(qr if m < n else qr[:n, :]), jpvt
