"""The mixed model's Schur complement as a sparse matrix, for many crossed levels.

:class:`vareval.stats.variance.fit._Crossprods` eliminates the grouping factor with
the most levels (its block of ``A = Lambda Z'Z Lambda + I`` is diagonal) and
factors the Schur complement ``S`` on the other factors' ``r`` levels. ``S`` is
dense while an evaluation is estimated to cost less so
(``fit._Crossprods._sparse_is_cheaper``); otherwise it is kept here as a sparse
matrix with a fixed pattern (that of ``N_rr + N_br'N_br``) and factored by a
supernodal Cholesky (:mod:`vareval.stats.variance.supernodal`)
whose ordering and structure are computed once.

Everything else the fit and the tests need is either a solve (the criterion,
``beta``, the BLUPs, Kenward-Roger's ``P_i`` and ``Q_ij``, the gradient's
``r^2`` and ``|R_X|`` terms) or a derivative of ``log|A|``. Dense code takes
those from ``S^-1``; here they come from ``S^-1`` on ``S``'s own pattern (the
selected inverse, as cheap as the factorisation), since every derivative of
``S`` has that pattern:

- first derivatives exactly, ``d log|S| = tr(S^-1 dS)`` summed over the pattern;
- Kenward-Roger's ``tr(Sigma^-1 G_i Sigma^-1 G_j) = -d^2 log|Sigma| /
  d gamma_i d gamma_j`` by central differences of those exact first
  derivatives (relative error ~1e-8).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from vareval.errors import FitError
from vareval.stats.variance.diagonal import DiagonalCholesky
from vareval.stats.variance.supernodal import SparseCholesky, _int64, _kernel, stable_argsort

MAX_FACTOR_NNZ = 60_000_000  # entries of the sparse factor (~0.5 GB)
_KEPT = 8  # gradients kept by theta
# the theta standing in for a variance at 0 where a gradient in s = theta^2 is needed
AT_ZERO = 1e-8


def product(A, x):
    """``A @ x`` for a sparse ``A`` and a dense ``x``, every bit as scipy computes it.

    A float64 CSR matrix times a float64 array (1-D or 2-D) goes to the
    compiled kernel: scipy's ``csr_matvec(s)`` loop (each entry 0 plus its
    row's products in storage order) without scipy's dispatch, which costs
    more than the products themselves on the small ones an evaluation makes.
    Anything else, or no kernel, is ``A @ x``.
    """
    kernel = _kernel()
    if (
        kernel is None
        or getattr(A, "format", None) != "csr"
        or type(x) is not np.ndarray
        or x.dtype != np.float64
        or A.dtype != np.float64
        or A.ndim != 2
        or not 1 <= x.ndim <= 2
        or x.shape[0] != A.shape[1]
        or x.size == 0
        or A.indices.dtype != A.indptr.dtype
    ):
        return A @ x
    y = np.empty((A.shape[0],) + x.shape[1:])
    width = 1 if x.ndim == 1 else x.shape[1]
    kernel.csr_product(A.indptr, A.indices, A.data, np.ascontiguousarray(x), y, width)
    return y


def row_pairs(N, upper=False):
    """Pairs of non-zeros of a CSR matrix sharing a row: ``N' diag(w) N`` as a sum.

    Returns ``(key, value, row)``: ``N' diag(w) N`` is
    ``bincount(key, value * w[row])`` reshaped to (columns, columns). Rows
    with the same number of non-zeros ``c`` give their ``c x c`` pairs as one
    broadcast, so no temporary is larger than the result (fresh memory is
    what such a setup pays for most). With ``upper``, only the pairs of
    columns ``a <= b`` (``key // columns <= key % columns``): its upper
    triangle, half the pairs.
    """
    N = sp.csr_matrix(N)
    N.sort_indices()
    per_row = np.diff(N.indptr).astype(np.int64)
    n_pairs = int(np.sum(per_row * (per_row + 1) // 2 if upper else per_row**2))
    key = np.empty(n_pairs, dtype=np.int64)
    value = np.empty(n_pairs)
    row = np.empty(n_pairs, dtype=np.int64)
    at = 0
    for c in np.unique(per_row[per_row > 0]):
        rows = np.flatnonzero(per_row == c)
        take = N.indptr[rows][:, None] + np.arange(c)  # (rows, c) entry indices
        cols, vals = N.indices[take].astype(np.int64), N.data[take]
        if upper:  # the row's columns are sorted: positions a <= b
            a, b = np.triu_indices(c)
            cc = a.size
            end = at + rows.size * cc
            np.add(cols[:, a] * N.shape[1], cols[:, b], out=key[at:end].reshape(-1, cc))
            np.multiply(vals[:, a], vals[:, b], out=value[at:end].reshape(-1, cc))
        else:
            cc = c * c
            end = at + rows.size * cc
            key[at:end].reshape(-1, c, c)[...] = cols[:, :, None] * N.shape[1] + cols[:, None, :]
            np.multiply(vals[:, :, None], vals[:, None, :], out=value[at:end].reshape(-1, c, c))
        row[at:end].reshape(-1, cc)[...] = rows[:, None]
        at = end
    return key, value, row


_MARK_LIMIT = 8_000_000  # key range below which unique_inverse marks instead of sorting


def unique_inverse(key, size):
    """``np.unique(key, return_inverse=True)`` for integer keys in ``[0, size)``.

    Below ``_MARK_LIMIT`` by marking the keys present in a table (O(n + size))
    rather than sorting them; below ``2**32`` by a radix sort
    (:func:`~vareval.stats.variance.supernodal.stable_argsort`); the same
    arrays either way.
    """
    key = np.asarray(key)
    if size > 2**32 or key.size == 0:
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.ravel()
    if size > _MARK_LIMIT:
        order = stable_argsort(key, size)
        ordered = key[order]
        new = np.empty(key.size, dtype=bool)
        new[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        inv = np.empty(key.size, dtype=np.intp)
        inv[order] = np.cumsum(new) - 1
        return ordered[new], inv
    present = np.zeros(size, dtype=bool)
    present[key] = True
    uniq = np.flatnonzero(present)
    pos = np.empty(size, dtype=np.int32 if uniq.size < 2**31 else np.int64)
    pos[uniq] = np.arange(uniq.size)
    return uniq.astype(key.dtype), pos[key].astype(np.intp)


def _pattern(Nb, lo_col, lo_row, r):
    """``S``'s lower pattern, where ``N_rr``'s entries fall in it, and the pair table.

    The pattern is the union of ``N_rr``'s lower entries ``(lo_col <= lo_row)``,
    the pairs of non-zeros of ``Nb`` (``N_br``, CSR with sorted indices) sharing
    a row, and the diagonal, as keys ``col * r + row`` in increasing order. The
    pair table is CSR (pattern x rows of ``Nb``): ``N_br' diag(w) N_br`` on the
    pattern is ``pairs @ w``. Returns ``(keys, where, pairs)``, ``where`` the
    index in ``keys`` of each ``N_rr`` entry. By the compiled kernel (O(pairs +
    r) memory) where built, else by :func:`row_pairs` and :func:`unique_inverse`;
    the same arrays either way.
    """
    kernel = _kernel()
    c = np.diff(Nb.indptr).astype(np.int64)
    n2 = int(np.sum(c * (c + 1) // 2))
    if kernel is not None and n2 + lo_col.size + r < 2**31:
        where, ind, val = np.empty(lo_col.size, np.int64), np.empty(n2, np.int32), np.empty(n2)
        keys, ptr = kernel.schur_pattern(
            _int64(Nb.indptr), _int64(Nb.indices), np.ascontiguousarray(Nb.data, dtype=float),
            lo_col, lo_row, r, where, ind, val,
        )  # fmt: skip
        keys, ptr = np.frombuffer(keys, dtype=np.int64), np.frombuffer(ptr, dtype=np.int32)
        pairs = sp.csr_matrix((val, ind, ptr), shape=(keys.size, Nb.shape[0]), copy=False)
        pairs.has_sorted_indices = pairs.has_canonical_format = True
        return keys, where, pairs
    pkey, pval, prow = row_pairs(Nb, upper=True)  # (col, row) pairs, col <= row
    keys = np.concatenate([lo_col * r + lo_row, pkey, np.arange(r, dtype=np.int64) * (r + 1)])
    uniq, inv = unique_inverse(keys, r * r)
    n1, n2 = lo_col.size, pkey.size
    pairs = sp.csr_matrix((pval, (inv[n1 : n1 + n2], prow)), shape=(uniq.size, Nb.shape[0]))
    pairs.sum_duplicates()
    return uniq, inv[:n1], pairs


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
        Nb.sort_indices()
        # S is symmetric, so only its lower triangle (row >= col) is kept
        rlow = Nrr.col <= Nrr.row
        lo_col, lo_row = Nrr.col[rlow].astype(np.int64), Nrr.row[rlow].astype(np.int64)
        uniq, where, self.pairs = _pattern(Nb, lo_col, lo_row, r)
        self.col, self.row = np.divmod(uniq, r)
        self.is_diag = self.row == self.col
        self.weight = np.where(self.is_diag, 1.0, 2.0)  # tr(Z M) = sum weight * Z * M
        self.nrr = np.bincount(where, weights=Nrr.data[rlow], minlength=uniq.size)
        self.block = cp.rest_block[self.row]  # the factor of each entry's row
        self.block_col = cp.rest_block[self.col]  # and column
        # a diagonal S (a factor nested in the largest one, alone): nothing to analyse
        analysis = DiagonalCholesky if self.is_diag.all() else SparseCholesky
        self.chol = analysis(self.row, self.col, r)
        if self.chol.factor_nnz > MAX_FACTOR_NNZ:
            raise FitError(
                f"the {r} levels of the grouping factors other than the largest "
                f"cross so densely that their sparse factor would hold "
                f"{self.chol.factor_nnz:,} entries (limit {MAX_FACTOR_NNZ:,}); "
                "merge levels or drop a factor."
            )
        self.r = r
        self._grads = {}
        self._last = (None, None)
        self._last_entries = (None, None)

    def _entries(self, theta):
        """``E`` on the pattern, ``lambda`` per level, ``D`` and ``dE / d theta_b`` at ``theta``.

        Kept for the last ``theta``: the factor and the gradient both need them.
        """
        key = np.asarray(theta, dtype=float).tobytes()
        if self._last_entries[0] != key:
            cp = self.cp
            tb = theta[cp.big]
            d = tb * tb * cp.n_b + 1.0
            lam = np.repeat(theta[cp.rest], [cp.q[j] for j in cp.rest])
            # N_br' D^-1 N_br and its derivative's part (d(tb^2 / D)/d tb = 2 tb / D^2)
            # on the pattern, in one pass over the pairs: the gradient follows the factor
            pw = product(self.pairs, np.column_stack([1.0 / d, -2.0 * tb / d**2]))
            self._last_entries = (key, (self.nrr - tb * tb * pw[:, 0], lam, d, pw[:, 1]))
        return self._last_entries[1]

    def factor(self, theta):
        """The Cholesky factor of ``S`` at ``theta``.

        The last one is kept: the fit's final evaluation and the tests'
        first one repeat the optimiser's last point. One kept at ``theta_j =
        AT_ZERO`` serves for ``theta_j = 0`` (``S`` moves by ``AT_ZERO^2``).
        """
        theta = np.asarray(theta, dtype=float)
        key = theta.tobytes()
        near = np.where(theta == 0, AT_ZERO, theta).tobytes()
        if self._last[0] not in (key, near):
            E, lam, _, _ = self._entries(theta)
            values = lam[self.row] * E * lam[self.col] + self.is_diag
            self._last = (key, self.chol.factor(values))
        return self._last[1]

    def grad_logdet_a(self, theta, factor=None):
        """``d log|A| / d theta_j`` for every factor: ``tr(S^-1 dS)`` on the pattern.

        ``factor`` is ``S``'s factor at ``theta`` when the caller has it.
        Kept for the last few ``theta``: Satterthwaite's and Kenward-Roger's
        differences evaluate it at the same points.
        """
        theta = np.asarray(theta, dtype=float)
        key = theta.tobytes()
        if key not in self._grads:
            if len(self._grads) >= _KEPT:
                self._grads.pop(next(iter(self._grads)))
            factor = self.factor(theta) if factor is None else factor
            self._grads[key] = self._gradient(theta, factor)
        return self._grads[key].copy()

    def _gradient(self, theta, factor):
        cp = self.cp
        E, lam, d, dE_b = self._entries(theta)
        # S^-1 on the lower pattern: tr(S^-1 M) = sum weight * Z * M for symmetric M
        Z = factor.inverse_on_pattern() * self.weight
        tb = theta[cp.big]
        out = np.empty(theta.size)
        # S = lam lam' E + I with E = N_rr - tb^2 N_br' D^-1 N_br, dE/d tb = dE_b
        out[cp.big] = 2.0 * tb * np.sum(cp.n_b / d) + Z @ (lam[self.row] * lam[self.col] * dE_b)
        # a rest factor scales its rows and its columns
        ZE, m = Z * E, len(cp.rest)
        out[cp.rest] = np.bincount(self.block, ZE * lam[self.col], minlength=m) + np.bincount(
            self.block_col, ZE * lam[self.row], minlength=m
        )
        return out

    def _grad_in_s(self, s):
        """``d log|A| / d s_j`` with ``s = theta^2``: the gradient in ``theta`` over ``2 theta``.

        At ``s_j = 0`` (where that is 0 / 0) it is taken at ``theta_j =
        AT_ZERO``: every term of the gradient carries a factor ``theta_j``, so
        the quotient is the derivative at 0 to ``O(AT_ZERO^2)`` (relative, times
        the curvature), without cancellation.
        """
        return self._grad_at(np.sqrt(np.asarray(s, dtype=float)))

    def _grad_at(self, theta):
        """:meth:`_grad_in_s` at ``s = theta^2``, from ``theta`` itself.

        ``theta`` is the kept gradients' key: Satterthwaite's column of a zero
        was taken at this point.
        """
        theta = np.array(theta, dtype=float)
        theta[theta == 0] = AT_ZERO
        return self.grad_logdet_a(theta) / (2.0 * theta)

    def traces(self, theta, n, s2, hess_theta=None):
        """``tr(Sigma^-1 G_i Sigma^-1 G_j)`` for ``G = (Z_1 Z_1', ..., Z_k Z_k', I)``.

        ``Sigma = s2 (sum_j s_j Z_j Z_j' + I)``, ``log|Sigma| = n log s2 + log|A(s)|``;
        the traces are minus its Hessian in the variances ``(s2 s_1, ..., s2)``.
        Its block of the ``theta_j > 0`` comes from ``hess_theta``, the Jacobian
        of :meth:`grad_logdet_a` in ``theta`` (``s = theta^2``), when given;
        everything else from differences of the gradient in ``s`` (one-sided,
        second order, at ``s_j = 0``).
        """
        theta = np.asarray(theta, dtype=float)
        s = theta**2
        k = s.size
        g, H = self._hessian_in_s(s, hess_theta, self._grad_at(theta))
        H = 0.5 * (H + H.T)
        out = np.empty((k + 1, k + 1))
        out[:k, :k] = -H
        out[:k, k] = out[k, :k] = g + H @ s
        out[k, k] = n - 2.0 * g @ s - s @ H @ s
        return out / s2**2

    def _hessian_in_s(self, s, hess_theta=None, g=None):
        """Gradient (``g`` when given) and Hessian of ``log|A|`` in ``s``.

        Columns of the ``s_j > 0`` from ``hess_theta`` when given
        (``d/dtheta = 2 theta d/ds``, ``d2/dtheta2 = 4 theta theta' d2/ds2 +
        2 diag(d/ds)``), the others by differences in ``s``.
        """
        k = s.size
        g = self._grad_in_s(s) if g is None else g
        H = np.empty((k, k))
        known = np.zeros(k, dtype=bool)
        if hess_theta is not None:
            known = s > 0
            f, theta = np.flatnonzero(known), np.sqrt(s[known])
            H[np.ix_(f, f)] = (hess_theta[np.ix_(f, f)] - np.diag(2.0 * g[f])) / (
                4.0 * np.outer(theta, theta)
            )
        for j in np.flatnonzero(~known):
            h = 1e-4 * max(s[j], 1e-2)
            e = np.zeros(k)
            e[j] = h
            if s[j] > 2 * h:
                H[:, j] = (self._grad_in_s(s + e) - self._grad_in_s(s - e)) / (2 * h)
            else:
                H[:, j] = (
                    -3 * g + 4 * self._grad_in_s(s + e) - self._grad_in_s(s + 2 * e)
                ) / (2 * h)
            H[j, known] = H[known, j]  # the known block's rows come from these columns
        return g, H
