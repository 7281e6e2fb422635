"""The mixed model's Schur complement as a sparse matrix, for many crossed levels.

:class:`vareval.stats.variance.fit._Crossprods` eliminates the grouping factor with
the most levels (its block of ``A = Lambda Z'Z Lambda + I`` is diagonal) and
factors the Schur complement ``S`` on the other factors' ``r`` levels. While
``r`` is moderate ``S`` is dense; beyond ``mixed.SPARSE_LEVELS`` it is kept here
as a sparse matrix with a fixed pattern (that of ``N_rr + N_br'N_br``) and
factored by SuperLU with a fill-reducing ordering computed once and diagonal
pivots only: for a symmetric positive definite matrix that is a Cholesky
factorisation in LU form, whose pivots give ``log|S|``.

Everything else the fit and the tests need is either a solve (the criterion,
``beta``, the BLUPs, Kenward-Roger's ``P_i`` and ``Q_ij``, the gradient's
``r^2`` and ``|R_X|`` terms) or a derivative of ``log|A|``, which dense code
takes from ``S^-1``. Here those derivatives come from log-determinants alone:

- first derivatives by the complex step, ``Im f(x + ih) / h`` (Squire &
  Trapp 1998): ``log|A|`` is analytic in the variance parameters, SuperLU
  factors complex matrices, and the step has no subtraction, so the
  derivative is exact to rounding;
- Kenward-Roger's ``tr(Sigma^-1 G_i Sigma^-1 G_j) = -d^2 log|Sigma| /
  d gamma_i d gamma_j`` by central differences of those exact first
  derivatives (relative error ~1e-8).

References
----------
Squire, W. and Trapp, G. (1998). Using complex variables to estimate
derivatives of real functions. *SIAM Review* 40(1), 110-112.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from vareval.errors import FitError

MAX_FACTOR_NNZ = 60_000_000  # entries of the sparse factor (~1 GB as complex)
_STEP = 1e-20  # complex step: far below rounding, so exact to rounding


def row_pairs(N):
    """Pairs of non-zeros of a CSR matrix sharing a row: ``N' diag(w) N`` as a sum.

    Returns ``(key, value, row)``: ``N' diag(w) N`` is
    ``bincount(key, value * w[row])`` reshaped to (columns, columns).
    """
    per_row = np.diff(N.indptr)
    row_of = np.repeat(np.arange(N.shape[0]), per_row)
    reps = per_row[row_of]
    first = np.repeat(np.arange(row_of.size), reps)
    starts = np.repeat(np.cumsum(reps) - reps, reps)
    partner = N.indptr[row_of[first]] + (np.arange(first.size) - starts)
    cols, vals = N.indices, N.data
    key = cols[first].astype(np.int64) * N.shape[1] + cols[partner]
    return key, vals[first] * vals[partner], row_of[first]


_MARK_LIMIT = 8_000_000  # key range below which unique_inverse marks instead of sorting


def unique_inverse(key, size):
    """``np.unique(key, return_inverse=True)`` for integer keys in ``[0, size)``.

    Below ``_MARK_LIMIT`` by marking the keys present in a table (O(n + size))
    rather than sorting them; the same arrays either way.
    """
    if size > _MARK_LIMIT:
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.ravel()
    present = np.zeros(size, dtype=bool)
    present[key] = True
    uniq = np.flatnonzero(present)
    pos = np.empty(size, dtype=np.int32 if uniq.size < 2**31 else np.int64)
    pos[uniq] = np.arange(uniq.size)
    return uniq.astype(np.asarray(key).dtype), pos[key].astype(np.intp)


_LU_OPTIONS = {"SymmetricMode": True}


class _SparseFactor:
    """SuperLU factor of a sparse symmetric positive definite S (pattern permuted)."""

    def __init__(self, lu, perm):
        self.lu, self.perm = lu, perm
        diag = lu.U.diagonal()
        if np.iscomplexobj(diag):
            self.logdet = complex(np.sum(np.log(diag)))
        else:
            if not np.all(diag > 0):
                raise np.linalg.LinAlgError("not positive definite")
            self.logdet = float(np.sum(np.log(diag)))

    def solve(self, rhs):
        out = np.empty(rhs.shape, dtype=np.result_type(rhs, self.lu.U.dtype))
        out[self.perm] = self.lu.solve(np.ascontiguousarray(rhs[self.perm]))
        return out


class SparseSchur:
    """``S = Lambda_r (N_rr - theta_b^2 N_br' D^-1 N_br) Lambda_r + I`` on a fixed pattern.

    Parameters
    ----------
    cp : _Crossprods
        The cross-products, with ``N_br`` (CSR, ``q_b x r``) and ``N_rr``
        (sparse, ``r x r``) set.
    """

    def __init__(self, cp):
        r = cp.r
        self.cp = cp
        Nrr = sp.coo_matrix(cp.N_rr)
        Nb = sp.csr_matrix(cp.N_br)
        # pairs of non-zeros of N_br sharing a row: N_br' diag(w) N_br = M_pair @ w
        pkey, pval, prow = row_pairs(Nb)  # symmetric: both orders are listed
        keys = np.concatenate(
            [
                Nrr.col.astype(np.int64) * r + Nrr.row,
                pkey,
                np.arange(r, dtype=np.int64) * (r + 1),
            ]
        )
        uniq, inv = np.unique(keys, return_inverse=True)
        n_u = uniq.size
        self.col, self.row = np.divmod(uniq, r)
        self.is_diag = self.row == self.col
        n1, n2 = Nrr.nnz, pkey.size
        self.nrr = np.bincount(inv[:n1], weights=Nrr.data, minlength=n_u)
        self.pairs = sp.csr_matrix(
            (pval, (inv[n1 : n1 + n2], prow)), shape=(n_u, Nb.shape[0])
        )
        self.pairs.sum_duplicates()
        # a fill-reducing ordering, once: SuperLU's minimum degree on S's pattern
        probe = sp.csc_matrix(
            (np.where(self.is_diag, 1.0 + n_u, 1.0), (self.row, self.col)), shape=(r, r)
        )
        lu = splu(probe, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                  options=_LU_OPTIONS)  # fmt: skip
        pinv = np.asarray(lu.perm_c, dtype=np.int64)  # level -> its position
        self.perm = np.argsort(pinv)  # position -> level
        # the permuted pattern in CSC order, and where each entry goes in it
        pkeys = pinv[self.col] * r + pinv[self.row]
        order = np.argsort(pkeys, kind="stable")
        self.slot = np.empty(n_u, dtype=np.int64)
        self.slot[order] = np.arange(n_u)
        pc, pr = np.divmod(pkeys[order], r)
        self.indices = pr.astype(np.int32)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(pc, minlength=r))])
        self.indptr = self.indptr.astype(np.int32)
        self.r = r

    def factor(self, theta):
        """The factor of ``S`` at ``theta`` (real or complex)."""
        cp = self.cp
        tb = theta[cp.big]
        d = tb * tb * cp.n_b + 1.0
        lam = np.repeat(theta[cp.rest], [cp.q[j] for j in cp.rest])
        E = self.nrr - tb * tb * (self.pairs @ (1.0 / d))
        data = lam[self.row] * E * lam[self.col] + self.is_diag
        vals = np.empty_like(data)
        vals[self.slot] = data
        S = sp.csc_matrix((vals, self.indices, self.indptr), shape=(self.r, self.r))
        try:
            lu = splu(S, permc_spec="NATURAL", diag_pivot_thresh=0.0,
                      options=_LU_OPTIONS)  # fmt: skip
        except MemoryError:
            raise FitError(self._too_dense()) from None
        except RuntimeError:  # a zero pivot: S is singular
            raise np.linalg.LinAlgError("singular") from None
        if lu.L.nnz + lu.U.nnz > MAX_FACTOR_NNZ:
            raise FitError(self._too_dense())
        return _SparseFactor(lu, self.perm)

    def _too_dense(self):
        return (
            f"the {self.r} levels of the grouping factors other than the largest "
            f"cross so densely that their sparse factor exceeds {MAX_FACTOR_NNZ:,} "
            "entries; merge levels or drop a factor."
        )

    def logdet_a(self, theta):
        """``log|A|`` at ``theta`` (complex ``theta`` allowed: the complex step)."""
        tb = theta[self.cp.big]
        d = tb * tb * self.cp.n_b + 1.0
        return np.sum(np.log(d)) + self.factor(theta).logdet

    def grad_logdet_a(self, theta):
        """``d log|A| / d theta_j`` for every factor, by the complex step."""
        theta = np.asarray(theta, dtype=float)
        out = np.empty(theta.size)
        for j in range(theta.size):
            t = theta.astype(complex)
            t[j] += 1j * _STEP
            out[j] = self.logdet_a(t).imag / _STEP
        return out

    def _grad_in_s(self, s):
        """``d log|A| / d s_j`` with ``s = theta^2``, by the complex step in ``s``.

        ``log|A|`` depends on ``theta`` only through ``s`` (``|I + Lambda N
        Lambda| = |I + N Lambda^2|``), so ``theta = sqrt(s + ih)`` is a valid
        complex step in ``s``, at ``s_j = 0`` too.
        """
        out = np.empty(s.size)
        for j in range(s.size):
            t = s.astype(complex)
            t[j] += 1j * _STEP
            out[j] = self.logdet_a(np.sqrt(t)).imag / _STEP
        return out

    def traces(self, theta, n, s2):
        """``tr(Sigma^-1 G_i Sigma^-1 G_j)`` for ``G = (Z_1 Z_1', ..., Z_k Z_k', I)``.

        ``Sigma = s2 (sum_j s_j Z_j Z_j' + I)``, ``log|Sigma| = n log s2 + log|A(s)|``;
        the traces are minus its Hessian in the variances ``(s2 s_1, ..., s2)``.
        Central differences of the complex-step gradient in ``s`` (one-sided,
        second order, at ``s_j = 0``).
        """
        s = np.asarray(theta, dtype=float) ** 2
        k = s.size
        g = self._grad_in_s(s)
        H = np.empty((k, k))
        for j in range(k):
            h = 1e-4 * max(s[j], 1e-2)
            e = np.zeros(k)
            e[j] = h
            if s[j] > 2 * h:
                H[:, j] = (self._grad_in_s(s + e) - self._grad_in_s(s - e)) / (2 * h)
            else:
                H[:, j] = (
                    -3 * g + 4 * self._grad_in_s(s + e) - self._grad_in_s(s + 2 * e)
                ) / (2 * h)
        H = 0.5 * (H + H.T)
        out = np.empty((k + 1, k + 1))
        out[:k, :k] = -H
        out[:k, k] = out[k, :k] = g + H @ s
        out[k, k] = n - 2.0 * g @ s - s @ H @ s
        return out / s2**2
