"""The mixed model's dense LAPACK calls through the compiled kernel (stats/variance/dense.py).

Each must be scipy.linalg's function of the same name bit for bit (the fit's
printed results must not move when scipy.linalg is no longer imported):
the factor with the other triangle as scipy leaves it, the solves, the
inverse, the pivoted QR's R and pivots, on random inputs of several sizes in
C and Fortran order; and raise as scipy does on a matrix that is not positive
definite or a singular triangle. scipy's Cython API, loaded without
scipy.linalg's ``__init__``, must leave a later ``import scipy.linalg`` as usual.
"""

import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg as sla

from vareval.stats.variance import dense, supernodal

SIZES = [1, 2, 7, 40, 200]


@pytest.fixture
def kernel(kernel_switch):
    k = kernel_switch(supernodal._kernel, on=True)
    if k is None or not hasattr(k, "potrf"):
        pytest.skip("the compiled kernel is not built")
    return k


def _spd(n, rng, order):
    A = rng.normal(size=(n, n + 3))
    S = A @ A.T / n + np.diag(rng.uniform(0.1, 1.0, n))
    S[np.triu_indices(n, 1)] += rng.normal(size=n * (n - 1) // 2) * 1e-3  # not symmetric:
    return np.asarray(S, order=order)  # each triangle is read alone, the other one kept


def _same(mine, scipys):
    assert type(mine) is type(scipys)
    if isinstance(mine, tuple):
        for a, b in zip(mine, scipys, strict=True):
            _same(a, b)
    elif isinstance(mine, np.ndarray):
        assert mine.dtype == scipys.dtype and mine.shape == scipys.shape
        assert np.array_equal(mine, scipys)
        assert mine.flags.f_contiguous == scipys.flags.f_contiguous  # later products alike
    else:
        assert mine == scipys


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_factor_solve_and_inverse_are_scipys(n, order, lower, rng, kernel):
    S = _spd(n, rng, order)
    _same(dense.cholesky(S, lower=lower), sla.cholesky(S, lower=lower))
    _same(dense.cholesky(S, lower=lower, check_finite=False),
          sla.cholesky(S, lower=lower, check_finite=False))
    c = dense.cho_factor(S, lower=lower, check_finite=False)
    _same(c, sla.cho_factor(S, lower=lower, check_finite=False))
    for b in (rng.normal(size=n), rng.normal(size=(n, 3)), rng.normal(size=(n, 5)).T.T.copy("F")):
        _same(dense.cho_solve(c, b, check_finite=False), sla.cho_solve(c, b, check_finite=False))
    _same(dense.potri(c[0], lower=lower), sla.lapack.dpotri(c[0], lower=lower))
    _same(dense.potri(np.ascontiguousarray(c[0]), lower=lower),
          sla.lapack.dpotri(np.ascontiguousarray(c[0]), lower=lower))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("trans", [0, 1])
def test_triangular_solves_are_scipys(n, lower, trans, rng, kernel):
    R = sla.cholesky(_spd(n + 1, rng, "C"), lower=lower)  # Fortran
    tri = {"F": R[:n, :n].copy(order="F"), "C": R[:n, :n].copy(order="C"),
           "view": R[:n, :n]}  # the fit's RX = R[:p, :p]: neither order, scipy copies
    for a in tri.values():
        for b in (rng.normal(size=n), np.eye(n), rng.normal(size=(n, 2)).copy(order="F")):
            _same(dense.solve_triangular(a, b, trans=trans, lower=lower),
                  sla.solve_triangular(a, b, trans=trans, lower=lower))
            _same(dense.solve_triangular(a, b, lower=lower, check_finite=False),
                  sla.solve_triangular(a, b, lower=lower, check_finite=False))


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (3, 5), (60, 7), (200, 200), (2000, 12)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_pivoted_qr_is_scipys(shape, order, rng, kernel):
    X = rng.normal(size=shape)
    if shape[1] > 2:
        X[:, 1] = X[:, 0] - 2 * X[:, 2]  # rank-deficient, as _check_rank looks for
    X = np.asarray(X, order=order)
    _, R, piv = sla.qr(X, mode="economic", pivoting=True)
    _same(dense.qr_pivoted(X), (R, piv))


def test_errors_are_scipys(rng, kernel):
    S = _spd(6, rng, "C")
    S[3, 3] = -1.0  # the 4th leading minor is not positive definite
    for f in (sla.cholesky, sla.cho_factor):
        with pytest.raises(np.linalg.LinAlgError) as theirs:
            f(S, lower=True, check_finite=False)
        with pytest.raises(np.linalg.LinAlgError) as ours:
            getattr(dense, f.__name__)(S, lower=True, check_finite=False)
        assert str(ours.value) == str(theirs.value)
    T = np.triu(rng.normal(size=(4, 4))) + 3 * np.eye(4)
    T[2, 2] = 0.0
    with pytest.raises(np.linalg.LinAlgError) as theirs:
        sla.solve_triangular(T, np.ones(4))
    with pytest.raises(np.linalg.LinAlgError) as ours:
        dense.solve_triangular(T, np.ones(4))
    assert str(ours.value) == str(theirs.value)
    S[3, 3] = np.nan  # checked by default, as scipy does
    with pytest.raises(ValueError, match="infs or NaNs"):
        dense.cholesky(S)
    with pytest.raises(ValueError, match="infs or NaNs"):
        dense.solve_triangular(S, np.ones(6))


def test_without_the_kernel_the_functions_are_scipys(rng, kernel_switch):
    kernel_switch(supernodal._kernel, on=False)
    S = _spd(9, rng, "C")
    c = dense.cho_factor(S, lower=True)
    _same(c, sla.cho_factor(S, lower=True))
    _same(dense.cho_solve(c, np.ones(9)), sla.cho_solve(c, np.ones(9)))
    _same(dense.qr_pivoted(S), sla.qr(S, mode="economic", pivoting=True)[1:])


_LATER_IMPORT = """
import sys
from vareval.stats._lapack_api import capi
from vareval.stats.variance import dense
blas, lapack = capi()
print("scipy.linalg" in sys.modules)
import numpy as np
L = dense.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)
import scipy.linalg
from scipy.linalg import cython_lapack
print(scipy.linalg.cython_blas.__pyx_capi__ is blas, cython_lapack.__pyx_capi__ is lapack)
print(np.array_equal(scipy.linalg.cholesky([[4.0, 2.0], [2.0, 5.0]], lower=True), L))
"""


def test_a_later_import_of_scipy_linalg_is_as_usual():
    """The Cython API loaded from its files: scipy.linalg imports afterwards, binding the same
    modules (and functions) as its attributes."""
    out = subprocess.run([sys.executable, "-c", _LATER_IMPORT], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "True", "True"]


def test_where_the_files_are_not_found_the_api_is_imported_as_usual():
    code = ("import importlib.machinery, sys; importlib.machinery.EXTENSION_SUFFIXES[:] = []\n"
            "from vareval.stats._lapack_api import capi\n"
            "blas, lapack = capi()\n"
            "import scipy.linalg.cython_blas as b\n"
            "print('scipy.linalg' in sys.modules, b.__pyx_capi__ is blas, 'dgeqp3' in lapack)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True", "True"]
