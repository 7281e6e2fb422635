"""Linear mixed models with random intercepts, fitted by REML or ML (lme4's way).

The model is ``y = X beta + Z b + e`` with ``b_j ~ N(0, sigma_j^2 I)`` for each
grouping factor ``j`` (crossed or nested, any number of them) and
``e ~ N(0, sigma^2 I)``. As in lme4 (Bates et al. 2015) the variance
parameters are the *relative* standard deviations ``theta_j = sigma_j / sigma``;
``beta`` and ``sigma`` are profiled out, so the optimiser searches only over
``theta >= 0``.

Speed comes from two facts about random intercepts:

1. Everything the likelihood needs is a function of the cross-products
   ``Z'Z, Z'X, X'X, Z'y, X'y, y'y``, built in one O(n) pass.
2. Each deviance evaluation needs the factor of ``A = Lambda Z'Z Lambda + I``
   (q x q). The block of the grouping factor with the most levels is
   *diagonal* (``Z_b'Z_b`` holds the level counts), so ``A`` is factored by a
   Schur complement onto the other factors: a dense ``r x r`` Cholesky where
   ``r`` is the number of levels of the smaller factors, after a sparse
   product with the ``q_b x r`` contingency table.

References
----------
Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear
mixed-effects models using lme4. *Journal of Statistical Software* 67(1).
Gilmour, A. R., Thompson, R. and Cullis, B. R. (1995). Average information REML:
an efficient algorithm for variance parameter estimation in linear mixed
models. *Biometrics* 51(4), 1440-1450.
Rao, C. R. (1971). Estimation of variance and covariance components - MINQUE
theory. *Journal of Multivariate Analysis* 1(3), 257-275.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings

import numpy as np

from vareval.errors import ArgumentError, FitError, VarevalWarning
from vareval.stats._blas import single_blas_thread
from vareval.stats._result import Result
from vareval.stats.variance import dense
from vareval.stats.variance.sparse import (
    AT_ZERO,
    SparseSchur,
    product,
    row_pairs,
    unique_inverse,
)
from vareval.stats.variance.supernodal import _int64, _kernel

SINGULAR_TOL = 1e-4  # lme4's isSingular() tolerance on theta
ZERO_TOL = 1e-6  # a theta below this is 0 within the optimiser's resolution
FLAT_DEV = 1e-7  # a Newton step gaining less deviance than this: nothing left to gain
_LOG2PI = np.log(2.0 * np.pi)
# The Schur complement on the smaller factors' r levels is dense or sparse
# (stats/variance/sparse.py), whichever one evaluation is estimated to cost
# less: dense ~ r^3 (factor, inverse, products; over the independent blocks'
# sizes when it splits) plus passes over r x r arrays; sparse from its
# symbolic analysis (supernodal.SparseCholesky.seconds). Seconds per unit,
# measured on the bench's designs (single-threaded OpenBLAS).
_DENSE_CUBE = 3e-11
_DENSE_ENTRY = 5e-9
_CHEAP = 2e-3  # a dense evaluation estimated below this: dense, no sparse analysis
# "dense" or "sparse" forces the path (tests that compare the two); None: by cost
FORCE_PATH = None
# levels above which the parametric bootstrap (dense only) refuses the design
SPARSE_LEVELS = 6000
_NOT_PD = (
    "the random-effects system is not positive definite; the grouping factors "
    "are degenerate."
)
_DENSE_LIMIT = 4_000_000  # q_big x r entries below which N_br is kept dense
_PARTS = ("dlogdetA", "dr2", "dlogdetRX2")  # the gradient's parts, kept by point
_KEPT_PARTS = 16


# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
# the Schur complement's factorisation: dense, or by independent blocks


def _independent_blocks(N_rr, N_br):
    """Level indices of the Schur complement's independent blocks, grouped by size.

    The Schur complement on the smaller factors has the sparsity of
    ``N_rr + N_br' N_br``. When those levels split into groups that never meet
    (a factor nested in the largest one, or seeds that share no
    configuration), it is block-diagonal: returns a list of ``(m, s)`` index
    arrays, one per block size ``s``; None when there is a single block.
    """
    label = _components(N_rr, N_br)
    n_comp = int(label.max()) + 1 if label.size else 0
    if n_comp == 1:
        return None
    order = np.argsort(label, kind="stable")
    sizes = np.bincount(label, minlength=n_comp)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    blocks = []
    for size in np.unique(sizes):
        comps = np.flatnonzero(sizes == size)
        idx = order[starts[comps][:, None] + np.arange(size)[None, :]]
        blocks.append(idx)
    return blocks


def _components(N_rr, N_br):
    """Connected components of the levels joined by ``N_rr`` or a shared row of ``N_br``.

    ``N_rr`` and ``N_br`` hold counts (non-negative), dense or sparse.
    Labelled in the order of their lowest level (as scipy's
    ``connected_components`` numbers them). By union-find in the compiled
    kernel over ``N_rr``'s entries and, for each row of ``N_br``, its levels
    joined to its first one; else by scipy on ``N_rr + N_br'N_br``'s pattern.
    """
    import scipy.sparse as sp

    kernel = _kernel()
    Nb = sp.csr_matrix(N_br)
    if not np.all(Nb.data):  # stored zeros join nothing
        Nb = Nb.copy()
        Nb.eliminate_zeros()
    if kernel is None:
        from scipy.sparse.csgraph import connected_components

        pattern = sp.csr_matrix(N_rr != 0) + (Nb.T @ Nb)
        return connected_components(pattern, directed=False)[1]
    if sp.issparse(N_rr):
        rr = sp.coo_matrix(N_rr)
        a, b = rr.row[rr.data != 0], rr.col[rr.data != 0]
    else:
        a, b = np.nonzero(N_rr)
    per_row = np.diff(Nb.indptr)
    has = per_row > 0
    first = np.repeat(Nb.indices[Nb.indptr[:-1][has]], per_row[has])
    a, b = np.concatenate([a, first]), np.concatenate([b, Nb.indices])
    label = kernel.components(_int64(a), _int64(b), N_rr.shape[0])
    return np.frombuffer(label, dtype=np.int64)


def _level_sums(g, inside, Xy, levels):
    """``Z'[X y]``: the sums of ``Xy``'s rows over each level of the codes ``g``.

    A sum per column by ``bincount``, in row order (as a sparse ``Z'`` sums).
    """
    if not inside.all():
        g, Xy = g[inside], Xy[inside]
    out = np.empty((levels, Xy.shape[1]))
    for c in range(Xy.shape[1]):
        out[:, c] = np.bincount(g, weights=Xy[:, c], minlength=levels)
    return out


class _DenseFactor:
    """Cholesky factor of a dense symmetric positive definite S."""

    def __init__(self, S):
        self.cS = dense.cho_factor(S, lower=True, check_finite=False)
        self.logdet = 2.0 * float(np.sum(np.log(np.diag(self.cS[0]))))
        self._inv = self._low = None

    def solve(self, rhs):
        return dense.cho_solve(self.cS, rhs, check_finite=False)

    def lower_inverse(self):
        """``S^-1`` in the lower triangle (LAPACK potri); the upper one is not it."""
        if self._low is None:  # from the factor: a third of a solve's flops
            low, info = dense.potri(self.cS[0], lower=1)
            if info:
                raise np.linalg.LinAlgError("potri failed")
            self._low = low
        return self._low

    def inverse(self):
        if self._inv is None:
            low = self.lower_inverse()
            self._inv = np.tril(low) + np.tril(low, -1).T
        return self._inv

    def rowdot(self, M):
        """Row sums of ``S^-1 * M`` (elementwise): ``sum_m S^-1[l, m] M[l, m]``."""
        return np.sum(self.inverse() * M, axis=1)


class _BlockFactor:
    """Inverse of a block-diagonal S, block by block (batched over equal sizes)."""

    def __init__(self, S, blocks):
        self.blocks = blocks
        self.r = S.shape[0]
        self.inv = []
        logdet = 0.0
        for idx in blocks:
            Sb = S[idx[:, :, None], idx[:, None, :]]
            L = np.linalg.cholesky(Sb)
            logdet += 2.0 * float(np.sum(np.log(np.diagonal(L, axis1=1, axis2=2))))
            self.inv.append(np.linalg.inv(Sb))
        self.logdet = logdet

    def solve(self, rhs):
        out = np.empty_like(rhs)
        for idx, inv in zip(self.blocks, self.inv, strict=True):
            out[idx] = inv @ rhs[idx]
        return out

    def inverse(self):
        out = np.zeros((self.r, self.r))
        for idx, inv in zip(self.blocks, self.inv, strict=True):
            out[idx[:, :, None], idx[:, None, :]] = inv
        return out

    def rowdot(self, M):
        out = np.empty(self.r)
        for idx, inv in zip(self.blocks, self.inv, strict=True):
            out[idx] = np.sum(inv * M[idx[:, :, None], idx[:, None, :]], axis=2)
        return out




# --------------------------------------------------------------------------
# cross-products and the deviance


class _Crossprods:
    """The sufficient statistics of a random-intercept model, and its deviance."""

    def __init__(self, y, X, groups, n_levels, path=None, sums=None):
        import scipy.sparse as sp

        n, p = X.shape
        self.n, self.p = n, p
        self.k = len(groups)
        self.q = [int(m) for m in n_levels]
        Xy = np.column_stack([X, y])
        # sums: those of a model with the same y, X and these factors (a refit's)
        self.XyXy = Xy.T @ Xy if sums is None else sums["XyXy"]
        self.groups = groups
        self.sparse = False
        self.fast_traces = True  # False: the gradient's traces from the full S^-1
        self._last = (None, None)  # the last evaluation, by (theta, reml)
        self._best = {}  # by reml: the evaluation of lowest deviance, by (theta, reml)
        self._parts = {}  # the gradient's parts of the last few, by (theta, reml)
        if self.k == 0:
            self.big = None
            self.rest = []
            self.r = 0
            return
        # the factor with most levels gets the diagonal block
        self.big = int(np.argmax(self.q))
        self.rest = [j for j in range(self.k) if j != self.big]
        # code -1: the observation is outside the factor (its Z row is 0), as
        # for a variance per level of a fixed factor
        inside = [g >= 0 for g in groups]
        if sums is None:
            self.counts, self.ZtXy = [], []
            for j, (g, m) in enumerate(zip(groups, inside, strict=True)):
                self.counts.append(np.bincount(g[m], minlength=self.q[j]).astype(float))
                self.ZtXy.append(_level_sums(g, m, Xy, self.q[j]))
        else:
            self.counts, self.ZtXy = sums["counts"], sums["ZtXy"]
        b = self.big
        self.n_b = self.counts[b]
        self.ZtXy_b = self.ZtXy[b]
        self.r = int(sum(self.q[j] for j in self.rest))
        offs = np.cumsum([0] + [self.q[j] for j in self.rest])
        self.rest_offsets = offs
        self.blocks = None
        self.dense = False
        if self.r:
            both = [inside[b] & inside[j] for j in self.rest]
            rws = np.concatenate([groups[b][m] for m in both])
            cols = np.concatenate(
                [groups[j][both[i]] + offs[i] for i, j in enumerate(self.rest)]
            )
            self.N_br = sp.csr_matrix(
                (np.ones(cols.size), (rws, cols)), shape=(self.q[b], self.r)
            )
            self.N_br.sum_duplicates()
            self.N_brT = self.N_br.T.tocsr()
            self.N_rr = self._rest_table(groups, inside, offs)
            # which rest factor each rest level belongs to
            self.rest_block = np.repeat(
                np.arange(len(self.rest)), [self.q[j] for j in self.rest]
            )
            self.sparse = self._sparse_is_cheaper(path or FORCE_PATH)
            if self.sparse:
                self.mode = "sparse-schur"
            else:
                self.N_rr = self.N_rr.toarray()
                self._dense_setup()
            self.ZtXy_r = np.vstack([self.ZtXy[j] for j in self.rest])

    def sums(self, keep):
        """``X'X`` etc., the level counts and ``Z_j'[X y]`` of the factors ``keep``.

        What a refit with those factors (same ``y`` and ``X``) would compute again.
        """
        return {
            "XyXy": self.XyXy,
            "counts": [self.counts[j] for j in keep],
            "ZtXy": [self.ZtXy[j] for j in keep],
        }

    def _sparse_is_cheaper(self, path):
        """Whether an evaluation costs less with the sparse Schur complement.

        Sets ``self.schur`` (the sparse complement, its symbolic analysis done)
        when it is. ``path`` ("dense" or "sparse") forces the choice.
        """
        if path is not None:
            if path not in ("dense", "sparse"):
                raise ValueError(f"path must be 'dense' or 'sparse', not {path!r}")
            if path == "sparse":
                self.schur = SparseSchur(self)
            return path == "sparse"
        r = self.r
        dense = _DENSE_CUBE * r**3 + _DENSE_ENTRY * r * r
        if dense < _CHEAP:
            return False
        # the dense cost with independent blocks of one level each: finding the
        # blocks (a product N_br'N_br) is worth it only where they could decide
        floor = _DENSE_CUBE * r + _DENSE_ENTRY * r * r
        if floor < _CHEAP:
            dense = self._block_cost(dense)
            if dense < _CHEAP:
                return False
        try:
            schur = SparseSchur(self)
        except FitError:  # the sparse factor would fill in beyond its limit
            if r > SPARSE_LEVELS:
                raise
            return False
        seconds = schur.chol.seconds()
        if seconds >= floor and not hasattr(self, "_blocks"):
            dense = self._block_cost(dense)
        if seconds >= dense:
            return False
        self.schur = schur
        return True

    def _block_cost(self, dense):
        """The dense path's cost by its independent blocks (kept in ``_blocks``)."""
        blocks = self._blocks = _independent_blocks(self.N_rr, self.N_br)
        if blocks is None:  # one block: the cost as it is
            return dense
        cube = sum(idx.shape[0] * idx.shape[1] ** 3 for idx in blocks)
        return _DENSE_CUBE * cube + _DENSE_ENTRY * self.r * self.r

    def _rest_table(self, groups, inside, offs):
        """N_rr: co-occurrence counts of the smaller factors' levels (r x r), sparse."""
        import scipy.sparse as sp

        rows, cols = [], []
        for i, j in enumerate(self.rest):
            for i2, j2 in enumerate(self.rest):
                m = inside[j] & inside[j2]
                if i2 == i:  # a factor's own block is diagonal: its level counts
                    rows.append(groups[j][m] + offs[i])
                    cols.append(groups[j][m] + offs[i])
                else:
                    rows.append(groups[j][m] + offs[i])
                    cols.append(groups[j2][m] + offs[i2])
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        N_rr = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(self.r, self.r))
        N_rr.sum_duplicates()
        return N_rr

    def _dense_setup(self):
        """Choose how N_br' diag(w) N_br is formed; find independent blocks."""
        import scipy.sparse as sp

        b = self.big
        # N_br' diag(w) N_br is needed at every evaluation. When each level of
        # the big factor meets few levels of the others (nesting, sparse
        # crossing), sum over the pairs of non-zeros sharing a row; otherwise
        # use a dense BLAS product while the table is small, else scipy.sparse.
        per_row = np.diff(self.N_br.indptr)
        n_pairs = int(np.sum(per_row.astype(np.int64) ** 2))
        self.mode = "sparse"
        if n_pairs * 8 <= self.q[b] * self.r * self.r and n_pairs <= 20_000_000:
            self.mode = "pairs"
            key, val, row = row_pairs(self.N_br)
            # N_br' diag(w) N_br on its distinct entries is a sparse product
            self.pair_key, inv = unique_inverse(key, self.r * self.r)
            self.pair_mat = sp.csr_matrix(
                (val, (inv, row)), shape=(self.pair_key.size, self.q[b])
            )
            self.pair_mat.sum_duplicates()
            # the fit's weights are functions of the counts n_b (D = theta_b^2 n_b + 1):
            # the columns of levels with equal counts summed once
            self.count_vals, of = np.unique(self.n_b, return_inverse=True)
            G = sp.csr_matrix(
                (np.ones(of.size), (np.arange(of.size), of)),
                shape=(of.size, self.count_vals.size),
            )
            self.pair_cnt = (self.pair_mat @ G).tocsr()
            col, row = np.divmod(self.pair_key, self.r)
            self.pair_lo, self.pair_hi = np.minimum(row, col), np.maximum(row, col)
        elif self.q[b] * self.r <= _DENSE_LIMIT:
            self.mode = "dense"
        if not hasattr(self, "_blocks"):  # found while choosing the path, or now
            self._blocks = _independent_blocks(self.N_rr, self.N_br)
        self.blocks = self._blocks
        self.dense = self.mode == "dense"
        if self.dense:
            self.N_br = self.N_br.toarray()
            self.N_brT = np.ascontiguousarray(self.N_br.T)

    def schur_factor(self, theta, d, lam):
        """The Schur complement's factor at ``theta``, and ``E`` (dense mode only).

        ``S = Lambda_r E Lambda_r + I`` with ``E = N_rr - theta_b^2 N_br' D^-1 N_br``.
        """
        if self.sparse:
            try:
                return self.schur.factor(theta), None
            except np.linalg.LinAlgError:
                raise FitError(_NOT_PD) from None
        tb = theta[self.big]
        if self.mode == "pairs":  # N_br' D^-1 N_br only on its non-zeros
            E = self.N_rr.copy()
            E.ravel()[self.pair_key] -= tb * tb * self._pairs_of_counts(tb, 1)
        else:
            E = self.N_rr - tb * tb * self._ndn(1.0 / d)
        S = np.multiply(lam[:, None], E)
        S *= lam[None, :]
        S[np.diag_indices_from(S)] += 1.0
        return self.factor(S), E

    def factor(self, S):
        """Factor the Schur complement S (dense, or by its independent blocks)."""
        try:
            if self.blocks is None:
                return _DenseFactor(S)
            return _BlockFactor(S, self.blocks)
        except np.linalg.LinAlgError:
            raise FitError(_NOT_PD) from None

    def mm(self, A, B):
        """``A @ B`` for r x r matrices with the Schur complement's block pattern."""
        if self.blocks is None:
            return A @ B
        out = np.zeros((self.r, self.r))
        for idx in self.blocks:
            ix = (idx[:, :, None], idx[:, None, :])
            out[ix] = A[ix] @ B[ix]
        return out

    def _pairs_of_counts(self, tb, power):
        """``N_br' D^-power N_br`` on its non-zeros (pairs mode), ``D = theta_b^2 n_b + 1``."""
        return self.pair_cnt @ (1.0 / (tb * tb * self.count_vals + 1.0) ** power)

    def _ndn(self, w):
        """N_br' diag(w) N_br as a dense r x r matrix."""
        if self.mode == "pairs":
            flat = np.zeros(self.r * self.r)
            flat[self.pair_key] = self.pair_mat @ w
            return flat.reshape(self.r, self.r)
        if self.dense:
            return self.N_brT @ (w[:, None] * self.N_br)
        return (self.N_brT @ self.N_br.multiply(w[:, None]).tocsr()).toarray()

    # -- one evaluation ----------------------------------------------------
    def evaluate(self, theta, reml=True, grad=False, gram=False, information=False):
        """Profiled deviance at ``theta`` and the pieces the fit needs.

        ``gram`` adds the gradient and ``G_j'G_j`` (``"gram"``); ``information``
        the gradient and :meth:`_average_information` (``"information"``).
        The last evaluation is kept, and the lowest deviance so far (by
        criterion): the fit's final evaluation, and the tests' first, repeat
        the optimiser's best point, which a difference Hessian's evaluations
        around it came after. A kept evaluation at ``theta_j = AT_ZERO`` serves
        for ``theta_j = 0`` (:func:`_at_zero`).
        """
        theta = np.asarray(theta, dtype=float)
        reml = bool(reml)
        key = (theta.tobytes(), reml)
        grad = grad or gram or information
        need = [n for n, on in (("grad", grad), ("gram", gram), ("information", information)) if on]
        zero = theta == 0
        near = (np.where(zero, AT_ZERO, theta).tobytes(), reml) if np.any(zero) else None
        for kept_key, kept in (self._last, self._best.get(reml, (None, None))):
            if kept_key is None:
                continue
            if all(n in kept for n in need):
                if kept_key == key:
                    return kept
                if kept_key == near:
                    return _at_zero(kept, zero)
        ev = self._evaluate(theta, reml, grad, information, gram)
        self._last = (key, ev)
        best = self._best.get(reml)
        if best is None or ev["dev"] <= best[1]["dev"]:
            self._best[reml] = (key, ev)
        if grad:
            self._parts.pop(key, None)
            self._parts[key] = {p: ev[p] for p in _PARTS}
            if len(self._parts) > _KEPT_PARTS:
                self._parts.pop(next(iter(self._parts)))
        return ev

    def gradient_parts(self, theta, reml=True):
        """``dlogdetA``, ``dr2``, ``dlogdetRX2`` at ``theta``: those of a recent evaluation.

        A few k-vectors are kept, so the tests' derivatives at points the fit
        already evaluated (the Newton steps' last one) cost no factorisation.
        """
        theta = np.asarray(theta, dtype=float)
        hit = self._parts.get((theta.tobytes(), bool(reml)))
        if hit is None:
            ev = self.evaluate(theta, reml=reml, grad=True)
            hit = {p: ev[p] for p in _PARTS}
        return hit

    def _evaluate(self, theta, reml, grad, information=False, gram=False):
        n, p = self.n, self.p
        out = {}
        if self.k == 0:
            Q = np.zeros((p + 1, p + 1))
            logdetA = 0.0
        else:
            b = self.big
            tb = theta[b]
            d = tb * tb * self.n_b + 1.0
            V_b = tb * self.ZtXy_b
            logdetA = float(np.sum(np.log(d)))
            if self.r:
                lam = np.repeat(theta[self.rest], [self.q[j] for j in self.rest])
                cS, E = self.schur_factor(theta, d, lam)
                logdetA += cS.logdet
                V_r = lam[:, None] * self.ZtXy_r
                W_b, W_r, NW = self._solve_a(cS, V_b, V_r, tb, d, lam, parts=True)
                Q = V_b.T @ W_b + V_r.T @ W_r
            else:
                W_b, NW = V_b / d[:, None], 0.0
                Q = V_b.T @ W_b
        M = self.XyXy - Q
        M = 0.5 * (M + M.T)
        try:
            R = dense.cholesky(M, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            R = None
        if R is None or not np.all(np.diag(R)[:p] > 0):
            raise _ZeroResidual(_ZERO_RESIDUAL + ".")
        RX = R[:p, :p]
        r2 = float(R[p, p] ** 2)
        if r2 <= 0:
            r2 = 1e-300
        RXi = np.linalg.inv(RX)
        beta = RXi @ R[:p, p]
        logdetRX2 = 2.0 * float(np.sum(np.log(np.diag(RX))))
        if reml:
            nn = n - p
            dev = logdetA + logdetRX2 + nn * (1.0 + np.log(2.0 * np.pi * r2 / nn))
        else:
            nn = n
            dev = logdetA + n * (1.0 + np.log(2.0 * np.pi * r2 / n))
        out.update(
            dev=float(dev),
            logdetA=logdetA,
            logdetRX2=logdetRX2,
            r2=r2,
            RX=RX,
            RXi=RXi,
            beta=beta,
        )
        if self.k == 0:
            if grad:
                out["grad"] = np.zeros(0)
            return out
        coef = np.append(-beta, 1.0)  # maps [X y] columns to y - X beta
        u_b = W_b @ coef
        out["u_b"] = u_b
        if self.r:
            u_r = W_r @ coef
            out["u_r"] = u_r
        if not grad:
            return out
        # gradient: d/dtheta_j = dlogdetA_j - c * 2 theta_j |G_j RX^-1|^2
        #           - nn * 2 theta_j |g_j|^2 / r2,
        # with G = Z'V^-1 X and g = Z'V^-1 (y - X beta): the columns of
        # H = Z'V^-1 [X y] and H coef. For the largest factor Z_b'V^-1 =
        # (Z_b' - N_br Lambda_r (A^-1 Lambda Z')_r) / D, from the solve itself
        H_b = (self.ZtXy_b - NW) / d[:, None]
        dA = np.zeros(self.k)
        dRX = np.zeros(self.k)
        dr2 = np.zeros(self.k)
        GG = [None] * self.k

        def _terms(j, H, th):
            G = H[:, :p]
            gv = H @ coef  # Z_j' V^-1 (y - X beta)
            GR = G @ RXi
            dRX[j] = -2.0 * th * float(np.sum(GR * GR))
            dr2[j] = -2.0 * th * float(gv @ gv)
            if gram:
                GG[j] = G.T @ G
            return gv

        dA[b] = 2.0 * tb * float(np.sum(self.n_b / d))
        zr_b = _terms(b, H_b, tb)
        if self.r:
            # Z_r'V^-1 = Z_r' - Z_r'Z Lambda A^-1 Lambda Z'
            NW_r = product(self.N_brT, tb * W_b) + product(self.N_rr, lam[:, None] * W_r)
            H_r = self.ZtXy_r - NW_r
            zr_r = np.empty(self.r)
            rest = [
                (j, slice(self.rest_offsets[i], self.rest_offsets[i + 1]))
                for i, j in enumerate(self.rest)
            ]
            for j, sl in rest:
                zr_r[sl] = _terms(j, H_r[sl], theta[j])
            if self.sparse:
                # S^-1 on the sparse pattern only: log|A|'s derivatives from it
                dA = self.schur.grad_logdet_a(theta, cS)
            else:
                tr_f, rowtr = self._log_det_traces(cS, E, lam, d, tb)
                dA[b] -= 2.0 * tb * tr_f
                for j, sl in rest:
                    dA[j] = 2.0 * float(np.sum(rowtr[sl]))
        g = dA + dr2 * nn / r2
        if reml:
            g = g + dRX
        out.update(dlogdetA=dA, dlogdetRX2=dRX, dr2=dr2)
        if gram:
            out["gram"] = GG
        if information:  # while the factor is at hand (kept in no result)
            others = (lam, cS, zr_r) if self.r else (None, None, None)
            out["information"] = self._average_information(out, tb, d, zr_b, *others, reml)
        out["grad"] = g
        return out

    def _solve_a(self, cS, V_b, V_r, tb, d, lam, parts=False):
        """``A^-1 [V_b; V_r]`` by the Schur complement (``cS`` its factor).

        With ``parts``, also ``N_br Lambda_r W_r`` (the gradient's ``Z_b'V^-1``).
        """
        t = V_b / d[:, None]
        W_r = cS.solve(V_r - lam[:, None] * (tb * product(self.N_brT, t)))
        NW = product(self.N_br, lam[:, None] * W_r)
        W_b = (V_b - tb * NW) / d[:, None]
        return (W_b, W_r, NW) if parts else (W_b, W_r)

    def _average_information(self, ev, tb, d, zr_b, lam, cS, zr_r, reml):
        """The average-information approximation of the deviance's Hessian in ``s = theta^2``.

        From the evaluation ``ev`` at ``theta`` and what it formed: ``tb``,
        ``D`` (``d``), ``Lambda_r`` (``lam``), the Schur complement's factor
        ``cS`` and ``Z_j' V^-1 (y - X beta)`` of the largest factor (``zr_b``)
        and of the others, stacked (``zr_r``). With
        ``P = V^-1 - V^-1 X (X' V^-1 X)^-1 X' V^-1`` (``V`` relative to
        ``sigma^2``), ``r^2 = y'Py``, ``q_j = y'P V_j P y`` and
        ``Q_ij = y'P V_i P V_j P y`` (``V_j = Z_j Z_j'``), the exact Hessian has
        ``-tr(P V_i P V_j)``, whose expectation ``Q_ij (n - p) / r^2`` replaces it
        (Gilmour, Thompson & Cullis 1995): what is left needs only solves,
        ``nn (Q / r^2 - q q' / r^4)`` for REML (``nn = n - p``), positive
        semi-definite. ``P V_j P y`` is ``P w_j`` with ``w_j = Z_j g_j`` and
        ``g_j = Z_j' P y`` from the gradient, so ``Z' w_j``, ``X' w_j`` and
        ``w_i' w_j`` come from the cross-products.
        """
        p, k, b = self.p, self.k, self.big
        Xb = self.ZtXy_b[:, :p]
        G_b = np.zeros((self.q[b], k))  # column j: g_j on factor j's levels
        G_b[:, b] = zr_b
        if self.r:
            G_r = np.zeros((self.r, k))
            for i, j in enumerate(self.rest):
                sl = slice(self.rest_offsets[i], self.rest_offsets[i + 1])
                G_r[sl, j] = zr_r[sl]
            ZW_b = self.n_b[:, None] * G_b + product(self.N_br, G_r)  # Z_b' w_j
            ZW_r = product(self.N_brT, G_b) + product(self.N_rr, G_r)
            V_b, V_r = tb * ZW_b, lam[:, None] * ZW_r
            M_b, M_r = self._solve_a(cS, V_b, V_r, tb, d, lam)
            WW = G_b.T @ ZW_b + G_r.T @ ZW_r - V_b.T @ M_b - V_r.T @ M_r  # w' V^-1 w
            XW = Xb.T @ G_b + self.ZtXy_r[:, :p].T @ G_r  # X' V^-1 w next
            XW -= tb * (Xb.T @ M_b) + (lam[:, None] * self.ZtXy_r[:, :p]).T @ M_r
            q = np.sum(G_b**2, axis=0) + np.sum(G_r**2, axis=0)
        else:
            ZW_b = self.n_b[:, None] * G_b
            M_b = tb * ZW_b / d[:, None]
            WW = G_b.T @ ZW_b - tb * (ZW_b.T @ M_b)
            XW = Xb.T @ G_b - tb * (Xb.T @ M_b)
            q = np.sum(G_b**2, axis=0)
        T = ev["RXi"].T @ XW
        Q = WW - T.T @ T
        r2 = ev["r2"]
        nn = self.n - p if reml else self.n
        # -tr(P V_i P V_j) ~ -Q (n - p) / r^2; the rest is exact
        H = (2 * nn - (self.n - p)) * Q / r2 - nn * np.outer(q, q) / r2**2
        return 0.5 * (H + H.T)

    def _log_det_traces(self, cS, E, lam, d, tb):
        """``tr(S^-1 Lambda F Lambda)``, ``F = N_br' D^-2 N_br``, and ``(S^-1 Lambda E)_ll``.

        The pieces of ``d log|S| / d theta``. In the pairs mode with one dense
        factor and every ``lambda >= 1e-3`` they need only ``S^-1``'s lower
        triangle: the trace on ``F``'s non-zeros, and, from
        ``S^-1 Lambda E Lambda = I - S^-1``, ``(S^-1 Lambda E)_ll =
        (1 - S^-1_ll) / lambda_l``; otherwise the full inverse.
        """
        if self.fast_traces and self.mode == "pairs" and self.blocks is None and (
            np.min(lam) >= 1e-3
        ):
            low = cS.lower_inverse()
            f = self._pairs_of_counts(tb, 2)
            f = f * lam[self.pair_lo] * lam[self.pair_hi]
            return float(f @ low[self.pair_hi, self.pair_lo]), (1.0 - np.diag(low)) / lam
        LFL = lam[:, None] * self._ndn(1.0 / d**2) * lam[None, :]
        return float(np.sum(cS.rowdot(LFL))), cS.rowdot((lam[:, None] * E).T)

    def blups(self, theta, ev):
        """Conditional modes (BLUPs) b_j = theta_j u_j, one array per factor."""
        u = [None] * self.k
        if self.k == 0:
            return u
        u[self.big] = ev["u_b"]
        for i, j in enumerate(self.rest):
            u[j] = ev["u_r"][self.rest_offsets[i] : self.rest_offsets[i + 1]]
        return [theta[j] * u[j] for j in range(self.k)]


def _at_zero(ev, zero):
    """The evaluation ``ev`` at ``theta_j = AT_ZERO`` as the one at ``theta_j = 0`` (``zero``).

    The deviance and everything else depend on ``theta_j^2 = 1e-16`` (they
    move by ``1e-16`` times their derivative in ``s_j``, below rounding on
    any criterion the fit reports); the gradient's components ``j`` carry a
    factor ``theta_j`` and are exactly 0 at 0. The Newton steps' last point
    is evaluated at ``AT_ZERO``, so the fit's final evaluation at 0 costs
    nothing.
    """
    out = dict(ev)
    for part in ("grad",) + _PARTS:
        if part in out:
            out[part] = np.where(zero, 0.0, out[part])
    return out


class _Dropped:
    """The model without factor ``j``, evaluated as the full one at ``theta_j = 0``.

    With ``lambda_j = 0`` factor ``j``'s block of ``A`` is the identity, so the
    deviance, ``beta``, the other factors' conditional modes and every
    derivative in their ``theta`` are the reduced model's. A likelihood-ratio
    refit that drops a small factor of a sparse model evaluates no more than
    the reduced model would, and skips its cross-products and sparse analysis.
    """

    def __init__(self, cp, j):
        self.full = cp
        self.keep = [m for m in range(cp.k) if m != j]
        self.n, self.p, self.k = cp.n, cp.p, cp.k - 1
        self.XyXy = cp.XyXy
        for name in ("q", "groups", "counts", "ZtXy"):  # what the moment start reads
            setattr(self, name, [getattr(cp, name)[m] for m in self.keep])

    @staticmethod
    def worthwhile(cp, j) -> bool:
        """A sparse model whose factor ``j`` is off the diagonal block and small."""
        return bool(
            isinstance(cp, _Crossprods) and cp.sparse and j != cp.big and cp.q[j] <= 0.1 * cp.r
        )

    def _theta(self, theta):
        out = np.zeros(self.full.k)
        out[self.keep] = theta
        return out

    def evaluate(self, theta, reml=True, grad=False, gram=False, information=False):
        ev = self.full.evaluate(self._theta(theta), reml, grad, gram, information)
        if "grad" not in ev:
            return ev
        keep = self.keep
        out = dict(ev)
        if "gram" in ev:
            out["gram"] = [ev["gram"][m] for m in keep]
        for part in ("grad",) + _PARTS:
            out[part] = ev[part][keep]
        if "information" in ev:
            out["information"] = ev["information"][np.ix_(keep, keep)]
        return out

    def blups(self, theta, ev):
        b = self.full.blups(self._theta(theta), ev)
        return [b[m] for m in self.keep]


# --------------------------------------------------------------------------
# the result


@dataclasses.dataclass(frozen=True, repr=False)
class MixedModelFit(Result):
    """A fitted random-intercept linear mixed model.

    Attributes
    ----------
    fixed_names : tuple of str
        Names of the fixed-effect columns of ``X``.
    coef, se : ndarray
        Fixed-effect estimates and their standard errors
        (``sqrt(diag(vcov))``, with ``vcov = sigma^2 (X' V^-1 X)^-1``).
    vcov : ndarray
        Covariance matrix of the fixed-effect estimates.
    components : tuple of str
        The random-effect names followed by ``"Residual"``.
    variance, sd : ndarray
        Estimated variance and standard deviation of each component.
    share : ndarray
        Each component's share of the total variance.
    icc : ndarray
        Intra-class correlation: the correlation of two observations in the same
        level of that factor (including the variance of the factors it is nested
        in); NaN for the residual.
    theta : ndarray
        Relative standard deviations ``sigma_j / sigma`` (lme4's ``theta``).
    sigma : float
        Residual standard deviation.
    reml : bool
        True for REML, False for ML.
    criterion : float
        REML criterion (-2 restricted log-likelihood) or ML deviance.
    loglik, aic, bic : float
        ``-criterion / 2`` and the information criteria with ``p + k + 1``
        parameters.
    n_obs, n_fixed : int
        Number of observations and of fixed effects.
    n_levels : tuple of int
        Levels per grouping factor.
    blups : tuple of ndarray
        Conditional modes (BLUPs) of each factor's random intercepts.
    level_names : tuple of tuple of str
        Names of each factor's levels, aligned with ``blups``.
    fitted, residuals : ndarray
        ``X beta + Z b`` and ``y - fitted``.
    singular : bool
        Some ``theta_j`` is at (or within 1e-4 of) its boundary 0.
    converged : bool
        The optimiser reported convergence.
    n_evaluations : int
        Deviance evaluations used.
    message : str
        What a reader should know, in plain words: a singular fit, or a fit
        that did not converge ("" when neither). The optimiser's own success
        message is not repeated.
    correlations : tuple of (str, str, float)
        Correlations between random effects of the same level (a random
        intercept and slope); empty for random intercepts.
    """

    # The repr leads with the variance decomposition and whether the fit is sound.
    _headline = (
        "components", "variance", "sd", "share", "icc", "converged", "singular", "message",
        "fixed_names", "coef", "se",
    )

    fixed_names: tuple
    coef: np.ndarray
    se: np.ndarray
    vcov: np.ndarray
    components: tuple
    variance: np.ndarray
    sd: np.ndarray
    share: np.ndarray
    icc: np.ndarray
    theta: np.ndarray
    sigma: float
    reml: bool
    criterion: float
    loglik: float
    aic: float
    bic: float
    n_obs: int
    n_fixed: int
    n_levels: tuple
    blups: tuple
    level_names: tuple
    fitted: np.ndarray
    residuals: np.ndarray
    singular: bool
    converged: bool
    n_evaluations: int
    message: str
    correlations: tuple = ()

    @property
    def group_names(self) -> tuple:
        """Names of the grouping factors (the components without ``Residual``)."""
        return self.components[:-1]

    def to_frame(self):
        """One row per fixed effect (``part`` "fixed") and per variance component."""
        import pandas as pd

        fixed = pd.DataFrame(
            {"part": "fixed", "name": list(self.fixed_names), "estimate": self.coef, "se": self.se}
        )
        parts = {"variance": self.variance, "sd": self.sd, "share": self.share, "icc": self.icc}
        comps = pd.DataFrame({"part": "component", "name": list(self.components), **parts})
        return pd.concat([fixed, comps], ignore_index=True)

    def to_dict(self) -> dict:
        """Plain values, without the n-length arrays (fitted, residuals)."""
        out = super().to_dict()
        out.pop("fitted")
        out.pop("residuals")
        return out


# --------------------------------------------------------------------------
# validation, fitting


# X is checked to have full rank before any fit, so X'V^-1 X stops being
# positive definite only as theta grows without bound: sigma -> 0
_ZERO_RESIDUAL = (
    "the residual variance is zero: y is an exact sum of the fixed effects and "
    "the random intercepts, leaving no run-to-run variation to estimate"
)


class _ZeroResidual(FitError):
    """The fit ran into a residual variance of zero."""


def _zero_residual_message(y, X, codes, group_names) -> str:
    """Name the zero residual variance and, when they hold one value each, the cells."""
    keys = np.column_stack([X, *codes]) if codes else X
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    means = np.bincount(inv, weights=y) / np.bincount(inv)
    within = float(np.sum((y - means[inv]) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    names = ", ".join(group_names)
    msg = _ZERO_RESIDUAL.replace("the random intercepts", f"the random intercepts of {names}")
    if within <= 1e-20 * total:
        msg += (
            f" (every combination of the fixed effects and {names} repeats one "
            "value, as identical reruns do); analyse one run per combination "
            "(e.g. one rerun)"
        )
    else:
        msg += "; drop the random factor that absorbs the last variation"
    return msg + "."


def information_criteria(crit: float, npar: int, n: int) -> dict:
    """The criterion with the log-likelihood, AIC and BIC it implies (as lme4 reports them)."""
    return {
        "criterion": float(crit),
        "loglik": float(-crit / 2.0),
        "aic": float(crit + 2 * npar),
        "bic": float(crit + np.log(n) * npar),
    }


def _fit_mixed_iv(y, X, groups, fixed_names, group_names, level_names):
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError("`y` must be numbers.") from None
    if y.ndim != 1 or y.size < 3:
        raise ArgumentError(
            f"`y` must be one-dimensional with at least 3 values; got shape {y.shape}."
        )
    if not np.all(np.isfinite(y)):
        raise ArgumentError(
            "`y` has NaN or infinite values; remove or fix them explicitly."
        )
    n = y.size
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError("`X` must be a numeric matrix.") from None
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] != n or X.shape[1] < 1:
        raise ArgumentError(
            f"`X` must be an n x p matrix with n = {n} rows and p >= 1; "
            f"got shape {X.shape}."
        )
    if not np.all(np.isfinite(X)):
        raise ArgumentError("`X` has NaN or infinite values.")
    p = X.shape[1]
    if fixed_names is None:
        fixed_names = tuple(f"x{i}" for i in range(p))
    fixed_names = tuple(str(s) for s in fixed_names)
    if len(fixed_names) != p:
        raise ArgumentError(
            f"`fixed_names` has {len(fixed_names)} names for {p} columns of X."
        )
    if isinstance(groups, np.ndarray) and groups.ndim == 1:
        groups = [groups]
    groups = list(groups)
    if group_names is None:
        group_names = tuple(f"g{j}" for j in range(len(groups)))
    group_names = tuple(str(s) for s in group_names)
    if len(group_names) != len(groups):
        raise ArgumentError(
            f"`group_names` has {len(group_names)} names for "
            f"{len(groups)} grouping factors."
        )
    if len(set(group_names)) != len(group_names):
        raise ArgumentError(f"`group_names` repeats a name: {list(group_names)}.")
    codes, n_levels = [], []
    for j, g in enumerate(groups):
        g = np.asarray(g)
        if g.ndim != 1 or g.size != n or not np.issubdtype(g.dtype, np.integer):
            raise ArgumentError(
                f"grouping factor {group_names[j]!r} must be {n} integer "
                "codes (0, 1, ...), one per observation."
            )
        if g.min() < -1:
            raise ArgumentError(
                f"grouping factor {group_names[j]!r} has codes below -1; "
                "codes must be 0, 1, ..., levels-1 (-1: outside the factor)."
            )
        m = int(g.max()) + 1
        if level_names is not None:
            m = max(m, len(level_names[j]))
        used = np.unique(g[g >= 0]).size
        if used < 2:
            raise FitError(
                f"grouping factor {group_names[j]!r} has only one level; a "
                "variance needs at least two levels."
            )
        if used == np.count_nonzero(g >= 0):
            raise FitError(
                f"grouping factor {group_names[j]!r} has a separate level for "
                "every observation, so it is confounded with the residual."
            )
        codes.append(g.astype(np.intp))
        n_levels.append(m)
    if level_names is None:
        level_names = [tuple(str(i) for i in range(m)) for m in n_levels]
    level_names = tuple(tuple(map(str, names)) for names in level_names)
    for j, names in enumerate(level_names):
        if len(names) != n_levels[j]:
            raise ArgumentError(
                f"`level_names` for {group_names[j]!r} has {len(names)} "
                f"names for {n_levels[j]} levels."
            )
    if np.ptp(y) == 0:
        raise FitError("all responses are equal; there is no variance to decompose.")
    _check_rank(X, fixed_names)
    _check_confounding(X, codes, n_levels, group_names)
    _check_same_grouping(codes, n_levels, group_names)
    return y, X, codes, n_levels, fixed_names, group_names, level_names


def _check_rank(X, names):
    """Raise FitError naming the columns of X that are linear combinations of others."""
    scale = np.sqrt(np.sum(X * X, axis=0))
    scale[scale == 0] = 1.0
    R, piv = dense.qr_pivoted(X / scale)
    diag = np.abs(np.diag(R))
    tol = max(X.shape) * np.finfo(float).eps * 100 * (diag[0] if diag.size else 1.0)
    rank = int(np.sum(diag > tol))
    if rank < X.shape[1]:
        bad = [names[i] for i in piv[rank:]]
        raise FitError(
            f"fixed effects are rank-deficient: column(s) {', '.join(bad)} "
            "are linear combinations of the others; drop them or merge levels."
        )


def _check_confounding(X, codes, n_levels, group_names):
    """Raise FitError when a grouping factor's indicators lie in the span of X."""
    p = X.shape[1]
    for j, g in enumerate(codes):
        if n_levels[j] > p:
            continue
        Z = np.zeros((g.size, n_levels[j]))
        rows = np.flatnonzero(g >= 0)
        Z[rows, g[rows]] = 1.0
        coef, *_ = np.linalg.lstsq(X, Z, rcond=None)
        if np.max(np.abs(Z - X @ coef)) < 1e-8:
            raise FitError(
                f"grouping factor {group_names[j]!r} is confounded with the "
                "fixed effects (its levels are determined by them); it cannot "
                "be both a fixed and a random effect."
            )


def _check_same_grouping(codes, n_levels, group_names):
    """Raise FitError when two grouping factors split the runs into the same groups.

    Their variances cannot be told apart (the deviance depends on their sum
    only), e.g. a configuration label of its own for every seed.
    """
    for j, m in itertools.combinations(range(len(codes)), 2):
        if not np.array_equal(codes[j] >= 0, codes[m] >= 0):
            continue
        rows = codes[j] >= 0
        a, b = codes[j][rows], codes[m][rows]
        if _determines(a, b, n_levels[j]) and _determines(b, a, n_levels[m]):
            raise FitError(
                f"grouping factors {group_names[j]!r} and {group_names[m]!r} are "
                f"confounded: each level of {group_names[j]!r} goes with one level "
                f"of {group_names[m]!r} and back, so their variances cannot be told "
                "apart; keep one of them."
            )


def _nesting(codes, n_levels):
    """inside[j, k]: factor j is nested in factor k (j's level fixes k's)."""
    k = len(codes)
    inside = np.zeros((k, k), dtype=bool)
    for j in range(k):
        for m in range(k):
            if j == m:
                continue
            rows = (codes[j] >= 0) & (codes[m] >= 0)
            if not np.array_equal(rows, codes[j] >= 0):
                continue  # some of j's observations are outside m
            inside[j, m] = _determines(codes[j][rows], codes[m][rows], n_levels[j])
    return inside


def _determines(a, b, levels_a) -> bool:
    """Whether each level of ``a`` goes with one level of ``b`` (O(n), no sort)."""
    seen = np.full(levels_a, -1, dtype=np.intp)
    seen[a] = b  # one of each level's partners; all of them equal it when nested
    return bool(np.array_equal(seen[a], b))


def _shares(variance, codes, n_levels):
    """Each component's share of the total variance, and each factor's ICC.

    The total is that of an observation the component applies to (averaged
    over them): with a variance per level of a fixed factor, an observation
    carries only its own level's component.
    """
    k = len(codes)
    if k == 0:
        return np.ones(1), np.full(1, np.nan)
    inside = _nesting(codes, n_levels)
    cover = np.array([g >= 0 for g in codes])
    total = variance[-1] + variance[:k] @ cover
    share = np.empty(k + 1)
    icc = np.full(k + 1, np.nan)
    share[k] = variance[k] / float(np.mean(total))
    for j in range(k):
        tot_j = float(np.mean(total[cover[j]]))
        share[j] = variance[j] / tot_j
        icc[j] = (variance[j] + np.sum(variance[:k][inside[j]])) / tot_j
    return share, icc


def _optimise(cp, reml, start=None, polish=True):
    """Minimise the profiled deviance over ``theta >= 0``.

    Projected average-information Newton steps (:func:`_ai_newton`), or
    L-BFGS-B with the bound where they fail, then a probe of each zero
    coordinate, restarting from any improvement; and the Newton polish
    (which a Newton optimum skips with ``polish=False``: its last step was
    below ``1e-7`` relative, and the criterion is all an LRT refit needs).
    """
    k = cp.k
    if k == 0:
        return np.zeros(0), True, "no random effects", 1, None
    counter = [0]

    def fun(th):
        counter[0] += 1
        try:
            ev = cp.evaluate(th, reml=reml, grad=True)
        except _ZeroResidual:  # a trial point so far out the system is singular
            return 1e300, np.zeros_like(th)
        return ev["dev"], ev["grad"]

    # moderate tolerances: the Newton polish below supplies the last digits
    opts = {"ftol": 1e-10, "gtol": 1e-6, "maxiter": 1000, "maxls": 30}

    def local(x0, confirm=True):
        # an LRT refit needs its criterion alone: to ~1e-10 relative, 1e-7 at most
        flat = None if polish or confirm else FLAT_DEV
        found = _ai_newton(cp, reml, x0, counter, confirm=confirm, flat=flat)
        if found is None:
            import scipy.optimize as sopt  # only where L-BFGS-B runs: ~0.15 s CPU to import

            return sopt.minimize(
                fun, x0, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * k, options=opts
            )
        x, ev = found
        return _Optimum(
            x=x, fun=None if ev is None else ev["dev"], jac=None if ev is None else ev["grad"],
            newton=True, message="Newton steps with the average information",
        )  # fmt: skip

    # the last Newton point unevaluated when it is predicted (the polish, or the
    # refit's final evaluation, evaluates it)
    best = local(_moment_start(cp) if start is None else np.asarray(start, float), False)
    # theta_j = 0 is always a stationary point in theta_j (the deviance depends
    # on theta_j^2), so a gradient method in theta can stop there even when it
    # is a maximum. After L-BFGS-B, probe each zero coordinate on a grid and
    # restart from any improvement (lme4's bobyqa, being derivative-free, does
    # not need this). The Newton steps hold a zero only where the gradient in
    # s_j = theta_j^2 is positive: a minimum along s_j, no probe needed.
    for _ in range(3):
        zero = np.flatnonzero(best.x <= 0)
        if zero.size == 0 or best.get("newton"):
            break
        start2, f2 = None, best.fun
        for j in zero:
            for t in (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0, 3.0):
                x1 = best.x.copy()
                x1[j] = t
                counter[0] += 1
                fx = cp.evaluate(x1, reml=reml)["dev"]
                if fx < f2 - 1e-10 * max(1.0, abs(f2)):
                    start2, f2 = x1, fx
        if start2 is None:
            break
        res2 = local(start2)
        if res2.fun < best.fun:
            best = res2
        else:
            break
    if not polish and best.get("newton"):
        return best.x, True, best.message, counter[0], None
    return _finish(cp, reml, best, counter)


def _moment_start(cp):
    """Starting ``theta``: MINQUE(0) variances relative to the residual's, in ``[0.1, 10]``.

    Usually far closer to the REML optimum than ``theta = 1`` (each Newton
    step saved is a factorisation); ones where MINQUE(0) gives no positive
    residual variance.
    """
    try:
        var = _minque0(cp)
    except np.linalg.LinAlgError:
        return np.ones(cp.k)
    if not (np.all(np.isfinite(var)) and var[-1] > 0):
        return np.ones(cp.k)
    return np.sqrt(np.clip(var[:-1] / var[-1], 1e-2, 1e2))


def _minque0(cp):
    """MINQUE(0) estimates of the factors' variances and the residual's (Rao 1971).

    The variances whose expectations match ``|Z_j' e|^2`` and ``|e|^2``, ``e``
    the least-squares residual: ``sum_j tr(M V_i M V_j) sigma_j^2 =
    y'M V_i M y`` with ``M = I - X (X'X)^-1 X'``, ``V_j = Z_j Z_j'`` (``I``
    for the residual). Every trace comes from the cross-products and the
    counts of each pair of factors' level pairs, in O(n p^2). Unbiased, not
    constrained to be positive.
    """
    p, k = cp.p, cp.k
    C = np.linalg.inv(cp.XyXy[:p, :p])  # X has full rank (checked before any fit)
    coef = np.append(-C @ cp.XyXy[:p, p], 1.0)  # [X y] -> the residual e
    A = [cp.ZtXy[j][:, :p] for j in range(k)]  # Z_j'X
    CB = [C @ (a.T @ a) for a in A]
    T = np.empty((k + 1, k + 1))
    u = np.empty(k + 1)
    for i in range(k):
        u[i] = float(np.sum((cp.ZtXy[i] @ coef) ** 2))
        T[i, k] = T[k, i] = float(cp.counts[i].sum()) - np.trace(CB[i])
        for j in range(i, k):
            a, b = cp.groups[i], cp.groups[j]
            rows = (a >= 0) & (b >= 0)
            a, b = a[rows], b[rows]
            if i == j:
                ff = float(np.sum(cp.counts[i] ** 2))  # |Z_i'Z_j|_F^2
            else:
                _, c = np.unique(a.astype(np.int64) * cp.q[j] + b, return_counts=True)
                ff = float(np.sum(c.astype(float) ** 2))
            AN = A[i][a].T @ A[j][b]  # X'Z_i Z_i'Z_j Z_j'X
            T[i, j] = T[j, i] = ff - 2.0 * float(np.sum(C * AN)) + float(np.sum(CB[i] * CB[j].T))
    T[k, k] = cp.n - p
    u[k] = float(coef @ cp.XyXy @ coef)
    return np.linalg.solve(T, u)


class _Optimum(dict):
    """A Newton optimum in the shape of scipy's ``OptimizeResult`` (keys as attributes)."""

    __getattr__ = dict.__getitem__


def _finish(cp, reml, best, counter):
    """The Newton polish and the zero snap after the optimiser's ``best``."""
    f, g = (None, None) if best.fun is None else (float(best.fun), np.asarray(best.jac))
    x, f, g, scaled, jac = _newton_polish(cp, reml, np.asarray(best.x), f, g, counter)
    if f is None:  # no polish ran (tests replace it)
        f = cp.evaluate(x, reml=reml)["dev"]
    x = _snap_zero(cp, reml, x, f)
    msg = str(best.message)
    # L-BFGS-B often ends with an ABNORMAL line search at a flat optimum, and the
    # deviance itself is only accurate to ~1e-12 relative; judge convergence as
    # lme4 does, by the Newton step (gradient scaled by the Hessian) on the free
    # coordinates.
    converged = bool(scaled < 1e-4)
    return x, converged, msg, counter[0], jac


def _ai_newton(cp, reml, x0, counter, tol=1e-7, max_iter=30, confirm=True, flat=None):
    """Newton steps with the average-information Hessian, projected onto ``theta >= 0``.

    ``H_s`` (:meth:`_Crossprods._average_information`), the Hessian in
    ``s = theta^2``, is positive semi-definite and close to the exact one near
    the optimum, so the steps converge in a few evaluations where L-BFGS-B has
    to learn the curvature. Away from the bound the step is taken in
    ``theta``, with ``4 theta theta' * H_s + 2 diag(g_s)`` (``g_s`` the
    gradient in ``s``; its exact second term speeds the first steps), at most
    90 % of the way to 0. Where a coordinate is at the bound, or the Newton
    step in ``s`` would take it there (in ``theta`` a variance whose optimum is
    0 only shrinks geometrically), the step is taken in ``s`` as in Bertsekas
    (1982): a coordinate at the bound whose gradient in ``s`` points outward is
    held there, the others take the Newton step on their own block, and the
    point is projected back onto the bound. A step that raises the deviance is
    halved. A variance at 0 is evaluated at ``theta_j = AT_ZERO``, where the
    gradient over ``2 theta_j`` is the one in ``s_j`` (to ``O(AT_ZERO^2)``) and
    the deviance that at 0 to far below its rounding (no 0 / 0 at the bound,
    where the deviance is flat in ``theta_j``). Returns ``(theta,
    evaluation)``, the held coordinates at exactly 0, once the step on the
    free ones is below ``tol`` relative to ``theta``, or None when the steps
    fail (L-BFGS-B takes over).

    With ``confirm=False`` the last step is not evaluated when its successor
    is predicted below ``tol / 10``: the steps converge linearly (the average
    information is not the exact Hessian), so the next step's size is about
    the last one's squared over the one before (:func:`_converged_next`). The
    point returned is the one the confirming evaluation would have returned,
    with None for its evaluation; whoever needs it evaluates it (the Newton
    polish, a refit's final evaluation). With ``flat`` (a caller that needs
    the deviance alone, to that much) the steps also stop at an evaluated
    point once the Newton step is small (``< 1e-5``) and predicted to lower
    the deviance by less than ``min(flat, 1e-10 |deviance|)``.

    References
    ----------
    Bertsekas, D. P. (1982). Projected Newton methods for optimization
    problems with simple constraints. *SIAM J. Control Optim.* 20(2), 221-246.
    """
    s = np.asarray(x0, dtype=float) ** 2
    if s.size == 0:
        return None
    low = AT_ZERO**2
    s = np.maximum(s, low)
    ev = cp.evaluate(np.sqrt(s), reml=reml, information=True)
    counter[0] += 1
    last = np.inf  # the size of the last step, when taken in full (else inf)
    for _ in range(max_iter):
        x = np.sqrt(s)
        g = ev["grad"] / (2.0 * x)  # the gradient in s
        H = ev["information"]
        held = (s <= low) & (g > 0)
        free = np.flatnonzero(~held)
        step = np.zeros_like(s)
        try:
            step[free] = -np.linalg.solve(H[np.ix_(free, free)], g[free])
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)):
            return None
        if np.all(s > low) and np.all(s + step > low):  # interior: a step in theta
            curv = 4.0 * np.outer(x, x) * H
            Ht = curv + np.diag(2.0 * g)
            if np.any(np.linalg.eigvalsh(Ht) <= 0):
                Ht = curv  # positive definite (H_s is) while theta > 0
            try:
                step = -np.linalg.solve(Ht, ev["grad"])
            except np.linalg.LinAlgError:
                return None
            if not np.all(np.isfinite(step)):
                return None
            size = float(np.max(np.abs(step) / x))
            if size < tol or _flat(flat, size, ev["grad"], step, ev["dev"]):
                return x, ev
            t, down = 1.0, step < 0
            if np.any(down):  # at most 90 % of the way to 0 in one step
                t = min(1.0, 0.9 * float(np.min(x[down] / -step[down])))

            def trial(t, x=x, step=step):
                return (x + t * step) ** 2

            if not confirm and t == 1.0 and _converged_next(size, last, tol):
                return np.sqrt(trial(1.0)), None
        else:
            size = float(np.max(np.abs(step[free]) / (2.0 * s[free]), initial=0.0))
            if size < tol or _flat(flat, size, g[free], step[free], ev["dev"]):
                return np.where(held, 0.0, x), ev  # (theta moves half as much as s)
            t = 1.0

            def trial(t, s=s, step=step):
                return np.maximum(s + t * step, low)

            # the held coordinates stay held: their gradient in s keeps its sign
            shift = H[np.ix_(np.flatnonzero(held), free)] @ step[free]
            if (
                not confirm
                and _converged_next(size, last, tol)
                and np.all(s[free] + step[free] > low)
                and np.all(g[held] > 10.0 * np.abs(shift))
            ):
                return np.where(held, 0.0, np.sqrt(trial(1.0))), None

        f, ev = ev["dev"], None  # its arrays freed before the next evaluation's
        for _ in range(8):
            sn = trial(t)
            counter[0] += 1
            try:
                en = cp.evaluate(np.sqrt(sn), reml=reml, information=True)
            except (_ZeroResidual, FitError):  # a step so long the system is singular
                t /= 2  # (or loses positive definiteness in rounding): shorter
                continue
            if en["dev"] <= f + 1e-10 * max(1.0, abs(f)):
                break
            t /= 2
        else:
            return None
        last = size if t == 1.0 else np.inf
        s, ev = sn, en
    return None


def _flat(flat, size, g, step, dev):
    """Whether a Newton step of relative ``size`` is predicted to gain less than ``flat``.

    The quadratic model's gain ``-g'step / 2``, below ``flat`` and ``1e-10``
    relative to the deviance ``dev``; only for small steps (``< 1e-5``),
    where the model is close.
    """
    if flat is None or size >= 1e-5:
        return False
    gain = -0.5 * float(g @ step)
    return gain < min(flat, 1e-10 * max(1.0, abs(dev)))


def _converged_next(size, last, tol):
    """Whether the Newton step after one of ``size`` is predicted below ``tol / 10``.

    ``last`` is the size of the step before (inf unless taken in full). The
    steps converge linearly near the optimum, at the ratio of their sizes:
    the next is predicted ``size^2 / last``, trusted once the steps are small
    (``size < 1e-5``) and shrinking.
    """
    return size < 1e-5 and size < last and size * size < 0.1 * tol * last


def _snap_zero(cp, reml, x, f):
    """Set a theta_j below the fit's resolution to exactly 0.

    The deviance is flat in theta_j near 0 (it depends on theta_j^2), so an
    optimiser ends at 1e-13 rather than 0; such a variance is 0 within the
    fit's tolerance and is reported as 0.
    """
    tiny = (x > 0) & (x < ZERO_TOL)
    if not np.any(tiny):
        return x
    x0 = np.where(tiny, 0.0, x)
    if cp.evaluate(x0, reml=reml)["dev"] <= f + 1e-10 * max(1.0, abs(f)):
        return x0
    return x


@dataclasses.dataclass(frozen=True)
class _Jacobians:
    """Central differences at ``theta`` of the deviance gradient's parts.

    Steps ``1e-4 theta_i``, Satterthwaite's: the Newton polish computes them,
    and Satterthwaite's and (on the sparse path) Kenward-Roger's second
    derivatives reuse them when the fit ends next to ``theta`` (its last
    Newton steps are ~1e-7 relative; lmerTest differentiates at lme4's optimum,
    itself ~1e-6 from the exact one). The columns of a ``theta_i = 0`` are NaN
    until :meth:`fill_zeros`.
    """

    theta: np.ndarray
    logdet_a: np.ndarray  # Jacobian of d log|A| / d theta
    r2: np.ndarray  # of d r^2 / d theta
    rx: np.ndarray  # of d log|R_X|^2 / d theta

    def near(self, theta) -> bool:
        """Within ``1e-6`` relative in every coordinate (the Jacobians move by as much)."""
        theta = np.asarray(theta, dtype=float)
        return theta.shape == self.theta.shape and bool(
            np.all(np.abs(theta - self.theta) <= 1e-6 * self.theta)
        )

    def fill_zeros(self, cp, reml):
        """The columns of each ``theta_i = 0``, from one gradient at ``theta_i = AT_ZERO``.

        Each part's component ``i`` is ``theta_i`` times a function of
        ``theta_i^2`` and the others are functions of ``theta_i^2``, so at 0
        the column is ``e_i`` times that component over ``theta_i`` (to
        ``O(AT_ZERO^2)``); central differences across 0 give the same.
        """
        for i in np.flatnonzero(np.isnan(self.logdet_a[0])):
            th = self.theta.copy()
            th[i] = AT_ZERO
            ev = cp.gradient_parts(th, reml=reml)  # often the Newton steps' last point
            for part, J in (("dlogdetA", self.logdet_a), ("dr2", self.r2), ("dlogdetRX2", self.rx)):
                J[:, i] = 0.0
                J[i, i] = ev[part][i] / AT_ZERO
        return self


def _difference_hessian(cp, reml, x, free, counter):
    """The gradient's Jacobian on the free coordinates, and its parts' (:class:`_Jacobians`)."""
    cols = {}
    for i in free:
        h = 1e-4 * abs(x[i])  # as _richardson_jacobian(r=1), so its points coincide
        e = np.zeros_like(x)
        e[i] = h
        ev = [cp.evaluate(x + e, reml=reml, grad=True), cp.evaluate(x - e, reml=reml, grad=True)]
        counter[0] += 2
        cols[i] = {
            part: (ev[0][part] - ev[1][part]) / (2 * h)
            for part in ("grad", "dlogdetA", "dr2", "dlogdetRX2")
        }
    H = np.column_stack([cols[i]["grad"][free] for i in free])
    part = {p: np.full((x.size, x.size), np.nan) for p in ("dlogdetA", "dr2", "dlogdetRX2")}
    for p, J in part.items():
        J[:, free] = np.column_stack([cols[i][p] for i in free])
    jac = _Jacobians(x.copy(), part["dlogdetA"], part["dr2"], part["dlogdetRX2"])
    return 0.5 * (H + H.T), jac


def _newton_polish(cp, reml, x, f, g, counter, steps=6):
    """Newton steps on the free coordinates with a difference Hessian of the gradient.

    ``f`` and ``g`` None: ``x`` is evaluated after the first difference
    Hessian (:func:`_evaluate_last`). Returns the point, its deviance and
    gradient, the size of the last Newton step (max |H^-1 g|; 0 when every
    coordinate is at its bound, or when the step would lower the deviance by
    less than ``FLAT_DEV``: a variance heading to 0 leaves the deviance flat in
    its ``theta_j``, so its Newton step stays large relative to ``theta_j``
    while nothing is left to gain) and the :class:`_Jacobians` of the last
    difference Hessian (or None).
    """
    scaled = 0.0
    H, H_free, jac = None, None, None
    for _ in range(steps):
        free = np.flatnonzero(x > 0)
        if free.size == 0:
            scaled = 0.0
            break
        # the Hessian is kept after a small step (< 1e-4): the last Newton
        # steps, and the convergence check, need only its rough value
        if H is None or not np.array_equal(free, H_free) or scaled >= 1e-4:
            H_free = free
            H, jac = _difference_hessian(cp, reml, x, free, counter)
        if g is None:
            f, g = _evaluate_last(cp, reml, x, counter)
        try:
            if np.any(np.linalg.eigvalsh(H) <= 0):
                scaled = np.inf
                break
            step = -np.linalg.solve(H, g[free])
        except np.linalg.LinAlgError:
            scaled = np.inf
            break
        scaled = float(np.max(np.abs(step)))
        if scaled < 1e-10 or np.all(np.abs(step) < 1e-9 * x[free]):
            break  # a step the results would not show is not worth an evaluation
        xn = x.copy()
        xn[free] = np.maximum(x[free] + step, 0.0)
        ev = cp.evaluate(xn, reml=reml, gram=True)  # with G_j'G_j: it may be the last
        counter[0] += 1
        # take a step that lowers the deviance beyond its rounding, or one that
        # keeps it and lowers the gradient (the last digits of an optimum)
        tol = 1e-10 * max(1.0, abs(f))
        lower = ev["dev"] < f - tol
        flatter = ev["dev"] <= f + tol and (
            np.linalg.norm(ev["grad"][free]) < np.linalg.norm(g[free])
        )
        if not (lower or flatter):
            break
        x, f, g = xn, ev["dev"], ev["grad"]
    if g is None:  # every coordinate at its bound: no difference Hessian
        f, g = _evaluate_last(cp, reml, x, counter)
    free = np.flatnonzero(x > 0)
    if np.isfinite(scaled) and free.size and np.array_equal(free, H_free):
        step = np.linalg.solve(H, g[free])  # at the final point
        if 0.5 * float(g[free] @ step) < FLAT_DEV:
            scaled = 0.0
    return x, f, g, scaled, jac


def _evaluate_last(cp, reml, x, counter):
    """Deviance and gradient at the Newton steps' last point ``x``.

    Evaluated after the difference Hessian around it, so its factor is the
    one kept.

    A ``theta_j = 0`` is evaluated at ``AT_ZERO``, as the Newton steps do: the
    gradient there is the one Satterthwaite's and Kenward-Roger's column of
    that variance need, and :meth:`_Crossprods.evaluate` serves the evaluation
    at 0 from it.
    """
    ev = cp.evaluate(np.where(x > 0, x, AT_ZERO), reml=reml, gram=True)  # Satterthwaite's
    counter[0] += 1
    return ev["dev"], np.where(x > 0, ev["grad"], 0.0)


@single_blas_thread
def fit_mixed(
    y,
    X,
    groups,
    *,
    fixed_names=None,
    group_names=None,
    level_names=None,
    reml: bool = True,
) -> MixedModelFit:
    """Fit a linear mixed model with random intercepts by REML or ML.

    Estimands: the fixed effects ``beta`` and the variance components
    ``sigma_j^2`` (one per grouping factor) and ``sigma^2`` of the model
    ``y = X beta + sum_j Z_j b_j + e``, ``b_j ~ N(0, sigma_j^2 I)``,
    ``e ~ N(0, sigma^2 I)``, as lme4's ``lmer(y ~ X + (1|g1) + (1|g2) ...)``.

    Parameters
    ----------
    y : array_like, shape (n,)
        Responses.
    X : array_like, shape (n, p)
        Fixed-effects design matrix, full column rank (include the intercept).
    groups : sequence of array_like of int
        One integer-coded grouping factor per random intercept (codes
        ``0 .. levels-1``). Crossed and nested factors are both allowed; for
        nesting give the inner factor its own codes per outer level. Code -1
        puts an observation outside a factor: a factor per level of a fixed
        factor, each with its own variance (lme4's ``(0 + model || config)``,
        written ``(0 + dummy(model, "a") | config) + ...``).
    fixed_names, group_names : sequence of str, optional
        Names of the columns of ``X`` and of the grouping factors.
    level_names : sequence of sequence of str, optional
        Names of each factor's levels.
    reml : bool, default True
        REML (lme4's default) or maximum likelihood.

    Returns
    -------
    MixedModelFit

    Warns
    -----
    VarevalWarning
        When the fit is singular (some variance estimated as 0) or the
        optimiser did not converge; the result's ``singular`` and
        ``converged`` fields say the same.

    Notes
    -----
    The profiled deviance (Bates et al. 2015, eqs. 34 and 41) is

    ``ML:   log|L|^2 + n (1 + log(2 pi r^2 / n))``
    ``REML: log|L|^2 + log|R_X|^2 + (n-p) (1 + log(2 pi r^2 / (n-p)))``

    with ``L L' = Lambda Z'Z Lambda + I``, ``R_X' R_X = X'V^-1 X`` and
    ``r^2`` the penalised residual sum of squares. It is minimised over
    ``theta >= 0`` by L-BFGS-B with its analytic gradient.

    References
    ----------
    Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting
    linear mixed-effects models using lme4. *J. Stat. Softw.* 67(1).
    """
    y, X, codes, n_levels, fixed_names, group_names, level_names = _fit_mixed_iv(
        y, X, groups, fixed_names, group_names, level_names
    )
    cp = _Crossprods(y, X, codes, n_levels)
    try:
        return _fit_from_crossprods(
            cp, y, X, codes, fixed_names, group_names, level_names, reml
        )
    except FitError as e:  # theta ran off to infinity: is the residual 0?
        msg = _zero_residual_message(y, X, codes, group_names)
        if isinstance(e, _ZeroResidual) or "repeats one value" in msg:
            raise FitError(msg) from None
        raise


def _fit_from_crossprods(
    cp, y, X, codes, fixed_names, group_names, level_names, reml, start=None, warn=True,
    polish=True,
):
    theta, converged, msg, nev, jacobians = _optimise(cp, reml, start, polish)
    # with its gradient for a full fit: Satterthwaite's first evaluation is this one
    ev = cp.evaluate(theta, reml=reml, gram=polish)
    n, p, k = cp.n, cp.p, cp.k
    nn = n - p if reml else n
    sigma2 = ev["r2"] / nn
    RXinv = dense.solve_triangular(ev["RX"], np.eye(p), lower=False)
    vcov = sigma2 * (RXinv @ RXinv.T)
    beta = ev["beta"]
    b = cp.blups(theta, ev)
    fitted = X @ beta
    for j in range(k):
        m = codes[j] >= 0
        fitted[m] = fitted[m] + b[j][codes[j][m]]
    variance = np.append(theta**2 * sigma2, sigma2)
    share, icc = _shares(variance, codes, cp.q)
    singular = bool(np.any(theta < SINGULAR_TOL))
    notes = []
    if singular:
        zero = [group_names[j] for j in range(k) if theta[j] < SINGULAR_TOL]
        note = (
            f"singular fit: the variance of {', '.join(zero)} is estimated at "
            "(or next to) zero"
        )
        notes.append(note)
        if warn:
            warnings.warn(note + ".", VarevalWarning, stacklevel=4)
    if not converged:
        note = (
            "the fit did not converge: the variance estimates may not maximise the "
            "likelihood; simplify the random effects or collect more levels "
            f"(optimiser: {msg.lower()})"
        )
        notes.append(note)
        if warn:
            warnings.warn(note, VarevalWarning, stacklevel=4)
    npar = p + k + 1
    crit = ev["dev"]
    fit = MixedModelFit(
        fixed_names=tuple(fixed_names),
        coef=beta,
        se=np.sqrt(np.diag(vcov)),
        vcov=vcov,
        components=tuple(group_names) + ("Residual",),
        variance=variance,
        sd=np.sqrt(variance),
        share=share,
        icc=icc,
        theta=theta,
        sigma=float(np.sqrt(sigma2)),
        reml=bool(reml),
        **information_criteria(crit, npar, n),
        n_obs=n,
        n_fixed=p,
        n_levels=tuple(cp.q),
        blups=tuple(b),
        level_names=tuple(level_names),
        fitted=fitted,
        residuals=y - fitted,
        singular=singular,
        converged=converged,
        n_evaluations=nev,
        message="; ".join(notes),
    )
    object.__setattr__(fit, "_state", _State(cp, y, X, codes, level_names, jacobians))
    return fit


def _refit_as(fit: MixedModelFit, reml: bool) -> MixedModelFit:
    """The same model fitted by REML or ML, warm-started at the fit's theta."""
    if fit.reml == reml:
        return fit
    st = _state(fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return _fit_from_crossprods(
            st.cp, st.y, st.X, st.codes, fit.fixed_names, fit.group_names,
            st.level_names, reml, start=fit.theta, warn=False,
        )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _State:
    """What the tests need to refit or re-evaluate a model (not part of the result)."""

    cp: _Crossprods
    y: np.ndarray
    X: np.ndarray
    codes: list
    level_names: tuple
    jacobians: _Jacobians | None = None  # from the fit's Newton polish


def _state(fit: MixedModelFit) -> _State:
    try:
        return fit._state
    except AttributeError:
        raise ArgumentError("`fit` must come from vareval.stats.fit_mixed.") from None
