"""Parametric bootstrap of a mixed model: intervals and the bootstrap LRT.

Responses are simulated from a fitted model and the model is refitted to every
one of them at once. A refit needs only the responses' cross-products
``Z'y, X'y, y'y`` (the design's ``Z'Z, Z'X, X'X`` are shared), so the
simulated responses are reduced to those in chunks, and all refits run as one
batched optimisation: each step evaluates the profiled deviance of every
replicate at its own variance parameters with stacked (batched) Cholesky
factorisations of the fit's Schur complement. Nothing loops over replicates.

- :func:`bootstrap_intervals`: percentile intervals for each variance
  component, SD, share and ICC (lme4's ``confint(method = "boot")``).
- :func:`bootstrap_lrt`: the parametric bootstrap likelihood-ratio test of a
  variance component (pbkrtest's ``PBmodcomp``), for when the chi-bar-square
  reference is doubtful (few levels).

References
----------
Halekoh, U. and Hojsgaard, S. (2014). A Kenward-Roger approximation and
parametric bootstrap methods for tests in linear mixed models - the R package
pbkrtest. *J. Stat. Softw.* 59(9).
Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap Methods and their
Application*. Cambridge University Press, section 2.4.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy import special

from vareval.errors import ArgumentError, FitError
from vareval.stats._blas import single_blas_thread
from vareval.stats._checks import as_confidence
from vareval.stats._progress import progress_bar
from vareval.stats._result import Result
from vareval.stats.variance import fit as _mixed
from vareval.stats.variance.fit import (
    MixedModelFit,
    _Crossprods,
    _state,
)
from vareval.stats.variance.intervals import (
    VarianceIntervals,
    _intercept_state,
    _ratio_specs,
    ratio_value,
)
from vareval.stats.variance.sparse import row_pairs
from vareval.stats.variance.strata import Strata

_CHUNK = 4_000_000  # entries of the n x B block of simulated responses


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _n_resamples(n):
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 19:
        raise ArgumentError(f"`n_resamples` must be an integer >= 19; got {n!r}.")
    return int(n)


# --------------------------------------------------------------------------
# simulated responses, reduced to their cross-products


def _zt(codes, n_levels, n):
    """Sparse Z_j' per factor (code -1: the observation is outside the factor)."""
    rows = np.arange(n)
    out = []
    for g, q in zip(codes, n_levels, strict=True):
        m = g >= 0
        out.append(sp.csr_matrix((np.ones(int(m.sum())), (g[m], rows[m])), shape=(q, n)))
    return out


def _simulate_stats(fit, B, rng, cps):
    """Cross-products ``(Z_j'y per factor, X'y, y'y)`` of B responses from ``fit``.

    Returned once per crossprods object in ``cps`` (models on the same X whose
    factors may differ), each as a dict of arrays with a leading B axis.
    """
    st = _state(fit)
    n, X = st.X.shape[0], st.X
    mean = X @ fit.coef
    sim_zt = _zt(st.codes, fit.n_levels, n)
    sds = fit.sd[:-1]
    targets = [_zt(c.groups, c.q, n) for c in cps]
    out = [
        {"zty": [np.empty((B, q)) for q in c.q], "xty": np.empty((B, c.p)),
         "yty": np.empty(B)}
        for c in cps
    ]  # fmt: skip
    step = max(1, _CHUNK // n)
    for b0 in range(0, B, step):
        m = min(B, b0 + step) - b0
        Y = mean[:, None] + fit.sigma * rng.standard_normal((n, m))
        for Zt, sd in zip(sim_zt, sds, strict=True):
            Y += Zt.T @ (sd * rng.standard_normal((Zt.shape[0], m)))
        for o, zts in zip(out, targets, strict=True):
            for j, Zt in enumerate(zts):
                o["zty"][j][b0 : b0 + m] = (Zt @ Y).T
            o["xty"][b0 : b0 + m] = (X.T @ Y).T
            o["yty"][b0 : b0 + m] = np.einsum("ij,ij->j", Y, Y)
    return out


# --------------------------------------------------------------------------
# batched profiled deviance and its batched minimisation


class _Batch:
    """The profiled deviance of one model for B responses at B parameter vectors."""

    def __init__(self, cp: _Crossprods, stats, reml):
        if cp.sparse:
            raise FitError(
                f"the parametric bootstrap refits with dense Schur complements; "
                f"this design has {cp.r} levels outside its largest grouping factor, "
                f"more than the {_mixed.SPARSE_LEVELS} it handles. Use profile intervals."
            )
        self.cp, self.reml = cp, reml
        p = cp.p
        self.B = stats["yty"].size
        # [X y] cross-products per replicate, in the fit's Schur order
        def with_y(ZtXy, zty):
            Zx = np.broadcast_to(ZtXy[None, :, :p], (self.B, ZtXy.shape[0], p))
            return np.concatenate([Zx, zty[:, :, None]], axis=2)

        if cp.k:
            self.V_b = with_y(cp.ZtXy_b, stats["zty"][cp.big])
            if cp.r:
                self.V_r = with_y(
                    cp.ZtXy_r, np.concatenate([stats["zty"][j] for j in cp.rest], 1)
                )
        M = np.empty((self.B, p + 1, p + 1))
        M[:, :p, :p] = cp.XyXy[:p, :p]
        M[:, :p, p] = M[:, p, :p] = stats["xty"]
        M[:, p, p] = stats["yty"]
        self.XyXy = M
        if cp.r:  # N_br' diag(w) N_br for a batch of weights, via its pairs
            key, self.pair_val, self.pair_row = row_pairs(sp.csr_matrix(cp.N_br))
            self.pair_key = key
        # independent blocks of the Schur complement (factors nested in one
        # another): B x blocks small factorisations instead of B dense r x r ones
        self.blocks = None
        if cp.r and cp.blocks is not None and _USE_BLOCKS:
            self.blocks = [
                _BlockPairs(idx, cp, key, self.pair_val, self.pair_row)
                for idx in cp.blocks
            ]

    def _ndn(self, w):
        """(B, r, r): N_br' diag(w_b) N_br for each row w_b of w."""
        r, B = self.cp.r, w.shape[0]
        keys = (np.arange(B)[:, None] * r * r + self.pair_key[None, :]).ravel()
        vals = (self.pair_val[None, :] * w[:, self.pair_row]).ravel()
        return np.bincount(keys, weights=vals, minlength=B * r * r).reshape(B, r, r)

    def deviance(self, gamma, rows=None):
        """Profiled deviance (REML or ML) and sigma^2 at relative variances (m, k).

        ``rows``: the replicates ``gamma``'s rows belong to (all by default).
        """
        cp = self.cp
        n, p = cp.n, cp.p
        rows = slice(None) if rows is None else rows
        theta = np.sqrt(np.maximum(gamma, 0.0))
        XyXy = self.XyXy[rows]
        Q = np.zeros_like(XyXy)
        logdetA = np.zeros(theta.shape[0])
        if cp.k:
            tb = theta[:, cp.big]
            d = tb[:, None] ** 2 * cp.n_b[None, :] + 1.0
            logdetA = np.sum(np.log(d), axis=1)
            V_b = tb[:, None, None] * self.V_b[rows]
            if cp.r:
                lam = np.repeat(theta[:, cp.rest], [cp.q[j] for j in cp.rest], axis=1)
                V_r = lam[:, :, None] * self.V_r[rows]
                t = V_b / d[:, :, None]
                rhs = V_r - lam[:, :, None] * tb[:, None, None] * _left(cp.N_brT, t)
                if self.blocks is None:
                    E = cp.N_rr[None] - tb[:, None, None] ** 2 * self._ndn(1.0 / d)
                    S = lam[:, :, None] * E * lam[:, None, :]
                    S += np.eye(cp.r)[None]
                    L = np.linalg.cholesky(S)
                    logdetA += 2.0 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), 1)
                    W_r = np.linalg.solve(S, rhs)
                else:
                    W_r = np.empty_like(rhs)
                    for blk in self.blocks:
                        logdetA += blk.solve(tb, d, lam, rhs, W_r)
                W_b = V_b - tb[:, None, None] * _left(cp.N_br, lam[:, :, None] * W_r)
                W_b /= d[:, :, None]
                Q = np.swapaxes(V_b, 1, 2) @ W_b + np.swapaxes(V_r, 1, 2) @ W_r
            else:
                Q = np.swapaxes(V_b, 1, 2) @ (V_b / d[:, :, None])
        M = XyXy - Q
        R = np.linalg.cholesky(0.5 * (M + np.swapaxes(M, 1, 2)))
        diag = np.diagonal(R, axis1=1, axis2=2)
        r2 = np.maximum(diag[:, p] ** 2, 1e-300)
        if self.reml:
            m = n - p
            dev = logdetA + 2.0 * np.sum(np.log(diag[:, :p]), 1)
        else:
            m = n
            dev = logdetA.copy()
        dev += m * (1.0 + np.log(2.0 * np.pi * r2 / m))
        return dev, r2 / m

    def fit(self, gamma0, iters=50, bar=None):
        """Minimise every replicate's deviance over gamma >= 0 at once.

        Projected Newton steps in ``gamma = theta^2`` (so a variance at 0 has a
        non-zero derivative and can leave the boundary), with forward-difference
        derivatives, a modified Hessian (absolute eigenvalues) and step halving
        per replicate; replicates leave the batch once converged (``bar``, a
        progress bar, counts them). Returns gamma and sigma^2, each with a
        leading B axis.
        """
        k, B = self.cp.k, self.B
        g = np.array(np.broadcast_to(gamma0, (B, k)), dtype=float)
        f, _ = self.deviance(g)
        if k == 0:
            return g, self.deviance(g)[1]
        eye = np.eye(k)
        active = np.arange(B)
        for _ in range(iters):
            if active.size == 0:
                break
            ga, fa = g[active], f[active]
            step = self._newton_step(ga, fa, active, eye)
            alpha = np.ones(active.size)
            done = np.zeros(active.size, bool)
            g_new, f_new = ga.copy(), fa.copy()
            for _ in range(10):
                todo = np.flatnonzero(~done)
                trial = np.maximum(ga[todo] + alpha[todo, None] * step[todo], 0.0)
                ft, _ = self.deviance(trial, active[todo])
                ok = ft <= fa[todo]
                g_new[todo[ok]], f_new[todo[ok]] = trial[ok], ft[ok]
                done[todo[ok]] = True
                if done.all():
                    break
                alpha[todo[~ok]] /= 2.0
            moved = np.max(np.abs(g_new - ga) / (ga + 1e-2), axis=1)
            g[active], f[active] = g_new, f_new
            active = active[(moved > 1e-8) & (fa - f_new > 1e-11 * np.abs(fa))]
            if bar is not None:
                bar.update(ga.shape[0] - active.size)
        if bar is not None:
            bar.update(active.size)  # stopped at the iteration limit
        return g, self.deviance(g)[1]

    def _newton_step(self, g, f, rows, eye):
        """A projected, modified Newton step from forward differences."""
        k, m = eye.shape[0], g.shape[0]
        # the deviance is O(n) and exact to ~1e-8 at 10^4 rows, so steps of
        # 1e-4 (g + 1e-2) made the second differences of small variances
        # rounding noise and a 9,000-row pilot's refits crawled for 50
        # iterations, stopping up to 5 % from the optimum; 3e-3 converges in ~7
        h = 3e-3 * (g + 1e-2)
        f1 = np.stack([self.deviance(g + h * eye[i], rows)[0] for i in range(k)], 1)
        f2 = np.stack([self.deviance(g + 2 * h * eye[i], rows)[0] for i in range(k)], 1)
        grad = (-3.0 * f[:, None] + 4.0 * f1 - f2) / (2.0 * h)
        H = np.empty((m, k, k))
        for i in range(k):
            H[:, i, i] = (f - 2.0 * f1[:, i] + f2[:, i]) / h[:, i] ** 2
            for j in range(i + 1, k):
                fij = self.deviance(g + h * (eye[i] + eye[j]), rows)[0]
                H[:, i, j] = H[:, j, i] = (fij - f1[:, i] - f1[:, j] + f) / (
                    h[:, i] * h[:, j]
                )
        fixed = (g <= 0) & (grad >= 0)  # at the bound and pushing out of it
        grad = np.where(fixed, 0.0, grad)
        H = np.where(fixed[:, :, None] | fixed[:, None, :], 0.0, H)
        H += fixed[:, :, None] * eye[None]
        w, U = np.linalg.eigh(H)
        scale = np.max(np.abs(w), axis=1, keepdims=True)
        w = np.maximum(np.abs(w), 1e-8 * scale + 1e-12)
        return -np.einsum("bij,bj->bi", U / w[:, None, :], np.einsum("bji,bj->bi", U, grad))


_USE_BLOCKS = True  # False: the dense r x r path for every design (benchmark anchor)
_USE_STRATA = True  # False: orthogonal designs take the Schur path too (the old path)


class _StrataBatch(_Batch):
    """:class:`_Batch` for an orthogonal design: the deviance from the strata's sums of squares.

    The same function of ``gamma`` as the Schur complement's (see
    :mod:`vareval.stats.variance.strata`), at O(strata) per replicate.
    """

    def __init__(self, strata, cp, stats, reml):
        self.cp, self.reml, self.strata = cp, reml, strata
        self.B = stats["yty"].size
        self.ss = strata.sums_of_squares(stats["zty"], stats["xty"], stats["yty"])

    def deviance(self, gamma, rows=None):
        ss = self.ss if rows is None else self.ss[rows]
        return self.strata.deviance(gamma, ss, self.reml)


class _MissingRowsBatch(_Batch):
    """:class:`_Batch` for an orthogonal design with a few rows missing, exactly.

    The observed rows O are the orthogonal design ``C`` (every cell of
    (fixed row, grouping levels) repeated as often as the fullest) less the rows
    M. Filling the responses at M with 0 and giving each an indicator column as
    a fixed effect leaves the likelihood of O unchanged: with ``W = V_C^-1``,
    ``|V_O| = |V_C| |W_MM|`` and ``[X y]_O' V_O^-1 [X y]_O`` is the Schur
    complement of ``W_MM`` in ``[X y M]' W [X y M]``. ``W = sum_F Q_F / lambda_F``
    over the strata of ``C`` (:mod:`~vareval.stats.variance.strata`), so a deviance
    costs O(strata |M|^2 + |M|^3) per replicate instead of the Schur complement's
    factorisation over every level; the responses' cross-products are ``C``'s
    already (the filled rows add 0).
    """

    def __init__(self, strata, cp, stats, reml, n_missing):
        self.cp, self.reml, self.strata = cp, reml, strata
        self.B = stats["yty"].size
        n, s = strata.n, n_missing
        used = strata.dim > 0.5
        mu = strata.mu[used]  # strata x partitions: Q_F = sum_G mu[F, G] P_G
        self.dim = strata.dim[used]
        self.A = np.array([[strata.le[2 + j, a] * strata.sizes[2 + j]
                            for j in range(strata.k)] for a in np.flatnonzero(used)])
        sizes = strata.sizes
        at = [g[n - s :] for g in strata.parts]  # each partition's level at the missing rows
        # X's totals per level of each partition (the rows' partition: X itself)
        xtot = [np.asarray(sp.csr_matrix((np.ones(n), (g, np.arange(n)))) @ strata.X)
                for g in strata.parts]  # fmt: skip
        ytot = [None, *strata.totals(stats["zty"], stats["xty"])[1:]]
        pmm, pmx, xpx, xpy, pmy = [], [], [], [], []  # P_G's blocks, then Q_F's by Mobius
        for g, z, xt, yt in zip(at, sizes, xtot, ytot, strict=True):
            pmm.append((g[:, None] == g[None, :]) / z)
            pmx.append(xt[g] / z)
            xpx.append(xt.T @ xt / z)
            xpy.append(stats["xty"] if yt is None else yt @ xt / z)
            pmy.append(np.zeros((self.B, s)) if yt is None else yt[:, g] / z)  # y_M = 0
        self.C = np.einsum("fg,gij->fij", mu, np.stack(pmm))
        self.D = np.einsum("fg,gip->fip", mu, np.stack(pmx))
        self.XQX = np.einsum("fg,gpq->fpq", mu, np.stack(xpx))
        self.XQy = np.einsum("fg,bgp->bfp", mu, np.stack(xpy, 1))
        self.yQm = np.einsum("fg,bgi->bfi", mu, np.stack(pmy, 1))
        every = strata.sums_of_squares(stats["zty"], stats["xty"], stats["yty"], every=True)
        self.yQy = every[:, used]
        self.n_obs = n - s

    def deviance(self, gamma, rows=None):
        """Profiled deviance (REML or ML) and sigma^2 of the observed rows.

        One Cholesky factorisation of ``[E X y]' W [E X y]`` (``E``: the missing
        rows' indicators) per replicate: its first ``|M|`` pivots give ``|W_MM|``,
        the next ``p`` the observed rows' ``|X' V^-1 X|``, the last the residual.
        """
        rows = slice(None) if rows is None else rows
        s, p = self.C.shape[1], self.cp.p
        w = 1.0 / (1.0 + gamma @ self.A.T)  # (B, strata): 1 / lambda_F
        K = np.empty((w.shape[0], s + p + 1, s + p + 1))
        K[:, :s, :s] = (w @ self.C.reshape(len(w.T), -1)).reshape(-1, s, s)
        K[:, :s, s : s + p] = (w @ self.D.reshape(len(w.T), -1)).reshape(-1, s, p)
        K[:, :s, -1] = np.einsum("bf,bfi->bi", w, self.yQm[rows])
        K[:, s : s + p, s : s + p] = (w @ self.XQX.reshape(len(w.T), -1)).reshape(-1, p, p)
        K[:, s : s + p, -1] = np.einsum("bf,bfp->bp", w, self.XQy[rows])
        K[:, -1, -1] = np.einsum("bf,bf->b", w, self.yQy[rows])
        K[:, s:, :s] = np.swapaxes(K[:, :s, s:], 1, 2)
        K[:, -1, s : s + p] = K[:, s : s + p, -1]
        L = np.linalg.cholesky(K)
        diag = np.diagonal(L, axis1=1, axis2=2)
        r2 = np.maximum(diag[:, -1] ** 2, 1e-300)
        logdet = -np.log(w) @ self.dim + 2.0 * np.log(diag[:, :s]).sum(1)
        if self.reml:
            m = self.n_obs - p
            logdet += 2.0 * np.log(diag[:, s : s + p]).sum(1)
        else:
            m = self.n_obs
        return logdet + m * (1.0 + np.log(2.0 * np.pi * r2 / m)), r2 / m


_MAX_MISSING = 256  # rows missing from an orthogonal design that the exact correction takes


def _completed(X, groups):
    """The orthogonal design a few rows short of ``(X, groups)``, or None.

    Every cell (distinct row of X and grouping levels) is filled up to the
    largest cell's count by repeating its first row; the added rows come last.
    Returns ``(X, groups, rows added)``.
    """
    cells = np.column_stack([X, *groups])
    _, first, counts = np.unique(cells, axis=0, return_index=True, return_counts=True)
    extra = np.repeat(first, counts.max() - counts)
    if not 0 < extra.size <= min(_MAX_MISSING, X.shape[0] // 10):
        return None
    return np.vstack([X, X[extra]]), [np.concatenate([g, g[extra]]) for g in groups], extra.size


def _make_batch(st, stats, reml):
    """The batched deviance of the model of state ``st``: by strata when orthogonal.

    A design that is orthogonal but for a few missing rows gets the strata with
    an exact correction for those rows (:class:`_MissingRowsBatch`).
    """
    strata = Strata.of(st.X, st.cp.groups) if _USE_STRATA else None
    if strata is not None:
        return _StrataBatch(strata, st.cp, stats, reml)
    full = _completed(st.X, st.cp.groups) if _USE_STRATA else None
    strata = Strata.of(*full[:2]) if full is not None else None
    if strata is None:
        cp = st.cp
        if cp.sparse and cp.r <= _mixed.SPARSE_LEVELS:  # the batch is dense
            cp = _mixed._Crossprods(st.y, st.X, cp.groups, cp.q, path="dense")
        return _Batch(cp, stats, reml)
    return _MissingRowsBatch(strata, st.cp, stats, reml, full[2])


class _BlockPairs:
    """One size of independent Schur blocks: their ``N_rr`` and ``N_br'N_br`` pairs.

    ``idx`` (m, s): the rest levels of each of m blocks of size s. The pairs of
    non-zeros of ``N_br`` sharing a row always fall in one block, so
    ``N_br' diag(w) N_br`` restricted to the blocks is ``w @ M`` with a sparse
    ``M`` (big-factor levels x block entries).
    """

    def __init__(self, idx, cp, pair_key, pair_val, pair_row):
        self.idx = idx
        m, s = idx.shape
        self.shape = (m, s, s)
        block = np.full(cp.r, -1)
        block[idx.ravel()] = np.repeat(np.arange(m), s)
        local = np.empty(cp.r, dtype=np.int64)
        local[idx.ravel()] = np.tile(np.arange(s), m)
        c1, c2 = np.divmod(pair_key, cp.r)
        mine = block[c1] >= 0
        pos = block[c1[mine]] * s * s + local[c1[mine]] * s + local[c2[mine]]
        self.M = sp.csr_matrix(
            (pair_val[mine], (pair_row[mine], pos)), shape=(cp.q[cp.big], m * s * s)
        )
        self.N_rr = cp.N_rr[idx[:, :, None], idx[:, None, :]]

    def solve(self, tb, d, lam, rhs, out):
        """``log|S|`` of these blocks per replicate; their ``S^-1 rhs`` into ``out``."""
        ndn = np.asarray(self.M.T @ (1.0 / d).T).T.reshape(d.shape[0], *self.shape)
        E = self.N_rr[None] - (tb * tb)[:, None, None, None] * ndn
        lb = lam[:, self.idx]
        S = lb[..., :, None] * E * lb[..., None, :]
        S += np.eye(self.shape[1])
        logdet, out[:, self.idx] = _cho_solve_small(S, rhs[:, self.idx])
        return np.sum(logdet, axis=1)


def _cho_solve_small(S, rhs):
    """``log|S|`` and ``S^-1 rhs`` for stacks of small SPD matrices (..., s, s).

    A Cholesky factorisation vectorised across the stack, one column at a time:
    numpy's batched LAPACK calls cost a few microseconds per matrix, which for
    many tiny blocks is most of the work.
    """
    s = S.shape[-1]
    if s > 16:
        L = np.linalg.cholesky(S)
        logdet = 2.0 * np.sum(np.log(np.diagonal(L, axis1=-2, axis2=-1)), -1)
        return logdet, np.linalg.solve(S, rhs)
    L = np.zeros_like(S)
    for j in range(s):
        v = S[..., j:, j] - np.einsum("...ik,...k->...i", L[..., j:, :j], L[..., j, :j])
        L[..., j, j] = np.sqrt(v[..., 0])
        L[..., j + 1 :, j] = v[..., 1:] / L[..., j, j, None]
    diag = np.diagonal(L, axis1=-2, axis2=-1)
    x = np.empty_like(rhs)
    for j in range(s):  # L y = rhs
        x[..., j, :] = (
            rhs[..., j, :] - np.einsum("...k,...kc->...c", L[..., j, :j], x[..., :j, :])
        ) / diag[..., j, None]
    for j in reversed(range(s)):  # L' x = y
        x[..., j, :] = (
            x[..., j, :]
            - np.einsum("...k,...kc->...c", L[..., j + 1 :, j], x[..., j + 1 :, :])
        ) / diag[..., j, None]
    return 2.0 * np.sum(np.log(diag), -1), x


def _left(A, X):
    """``A @ X[b]`` for every b: a sparse (or dense) A and X of shape (B, n, m)."""
    B, n, m = X.shape
    Y = A @ np.moveaxis(X, 0, 1).reshape(n, B * m)
    return np.moveaxis(np.asarray(Y).reshape(-1, B, m), 1, 0)


def _refit_batch(st, stats, reml, gamma0, bar=None):
    """Variances (B, k + 1) of the model of state ``st`` refitted to simulated responses."""
    batch = _make_batch(st, stats, reml)
    gamma, s2 = batch.fit(gamma0, bar=bar)
    return gamma, s2, batch


# --------------------------------------------------------------------------
# percentile intervals


@single_blas_thread
def bootstrap_intervals(
    fit: MixedModelFit,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    rng=None,
    progress=False,
) -> VarianceIntervals:
    """Parametric-bootstrap percentile intervals for the variance components.

    Estimands: as :func:`vareval.stats.profile_intervals` (each component's SD
    and variance, its share of the total and its ICC). Responses are simulated
    from the fitted model (``beta``, the variance components), the model is
    refitted by the same criterion (REML or ML) and the intervals are the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    refitted values, as lme4's ``confint(method = "boot")`` (type "perc").

    Parameters
    ----------
    fit : MixedModelFit
    n_resamples : int, default 1000
        Simulated responses.
    confidence : float, default 0.95
    rng : int or numpy.random.Generator, optional
        Seed or generator for the simulation.
    progress : bool or None, default False
        Show a tqdm bar of the refitted draws, all refitted at once (None: on
        a terminal only).

    Returns
    -------
    VarianceIntervals
        ``method="bootstrap"``.

    Notes
    -----
    Each refit costs O(r^3) (r: levels of the factors other than the largest),
    batched over the replicates; large crossed designs are better served by
    :func:`vareval.stats.profile_intervals`.
    """
    confidence = as_confidence(confidence)
    B = _n_resamples(n_resamples)
    st = _intercept_state(fit)
    gamma, s2 = _component_draws(fit, st, B, rng, progress)
    variance = np.column_stack([gamma * s2[:, None], s2])
    shares, iccs, residual = _ratio_specs(st.codes, st.cp.q)
    share = np.column_stack(
        [ratio_value(sp_, gamma) for sp_ in shares] + [ratio_value(residual, gamma)]
    )
    icc = np.column_stack(
        [ratio_value(sp_, gamma) for sp_ in iccs] + [np.full(B, np.nan)]
    )
    q = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
    v_lo, v_hi = np.quantile(variance, q, axis=0)
    s_lo, s_hi = np.quantile(share, q, axis=0)
    i_lo, i_hi = np.quantile(icc, q, axis=0)
    return VarianceIntervals(
        components=fit.components,
        sd=fit.sd,
        sd_low=np.sqrt(v_lo),
        sd_high=np.sqrt(v_hi),
        variance_low=v_lo,
        variance_high=v_hi,
        share=fit.share,
        share_low=s_lo,
        share_high=s_hi,
        icc=fit.icc,
        icc_low=i_lo,
        icc_high=i_hi,
        confidence=confidence,
        method="bootstrap",
        n_resamples=B,
    )


def _component_draws(fit, st, B, rng, progress=False):
    if not fit.group_names:
        raise ArgumentError("`fit` has no random effects to give intervals for.")
    (stats,) = _simulate_stats(fit, B, _rng(rng), [st.cp])
    with progress_bar(B, "bootstrap refits", progress) as bar:
        gamma, s2, _ = _refit_batch(st, stats, fit.reml, fit.theta**2, bar)
    return gamma, s2


def bootstrap_components(fit: MixedModelFit, *, n_resamples: int = 1000, rng=None,
                         progress=False):
    """Parametric-bootstrap draws of the variance components.

    Estimand: the sampling distribution of the fitted variances (each random
    effect's and the residual's), as :func:`bootstrap_intervals` uses it:
    responses simulated from the fit and refitted by the same criterion.
    ``progress`` (None: on a terminal only) shows a tqdm bar of the refitted
    draws, all refitted at once.

    Returns
    -------
    ndarray
        ``(n_resamples, len(fit.components))`` variances, columns in the order
        of ``fit.components``.
    """
    gamma, s2 = _component_draws(fit, _intercept_state(fit), _n_resamples(n_resamples), rng,
                                 progress)
    return np.column_stack([gamma * s2[:, None], s2])


# --------------------------------------------------------------------------
# the parametric bootstrap LRT


@dataclasses.dataclass(frozen=True, repr=False)
class BootstrapLRT(Result):
    """Parametric bootstrap likelihood-ratio test of one variance being zero.

    Attributes
    ----------
    term : str
        The grouping factor dropped.
    statistic : float
        ``criterion(reduced) - criterion(full)`` (REML criteria for REML fits,
        deviances for ML fits), clipped at 0.
    pvalue : float
        ``(1 + #{T* >= statistic}) / (1 + n_resamples)`` over the statistics
        ``T*`` of responses simulated from the reduced model (pbkrtest's
        ``PBmodcomp``).
    pvalue_chibar : float
        The 50:50 chi-bar-square p-value, for comparison.
    n_resamples : int
        Simulated responses.
    null_statistics : ndarray
        The simulated ``T*``.
    """

    term: str
    statistic: float
    pvalue: float
    pvalue_chibar: float
    n_resamples: int
    null_statistics: np.ndarray

    def to_dict(self) -> dict:
        """Plain values, without the simulated statistics."""
        out = super().to_dict()
        out.pop("null_statistics")
        return out


@single_blas_thread
def bootstrap_lrt(
    fit: MixedModelFit, term: str, *, n_resamples: int = 1000, rng=None, progress=False
) -> BootstrapLRT:
    """Test a variance component by a parametric bootstrap of the LRT.

    Estimand: whether the variance ``sigma_j^2`` of grouping factor ``term``
    is zero. The reference distribution of the likelihood-ratio statistic is
    simulated from the reduced model (without ``term``) fitted to the data,
    refitting both models to every simulated response, as pbkrtest's
    ``PBmodcomp`` does; it replaces the chi-bar-square approximation when that
    is doubtful (few levels).

    Parameters
    ----------
    fit : MixedModelFit
        The full model (REML or ML; both models are fitted the same way).
    term : str
        The grouping factor to test.
    n_resamples : int, default 1000
    rng : int or numpy.random.Generator, optional
    progress : bool or None, default False
        Show a tqdm bar of the refitted draws (three batches: the full model
        from two starts, the reduced one; None: on a terminal only).

    Returns
    -------
    BootstrapLRT
    """
    from vareval.stats.variance.tests import _lrt_statistic, _refit

    _intercept_state(fit)
    B = _n_resamples(n_resamples)
    names = list(fit.group_names)
    if term not in names:
        raise ArgumentError(
            f"`term` must be a grouping factor of the fit ({', '.join(names)}); "
            f"got {term!r}."
        )
    j = names.index(term)
    keep = [m for m in range(len(names)) if m != j]
    reduced = _refit(fit, keep, start=fit.theta[keep] if keep else None)
    stat = _lrt_statistic(fit, reduced, float(fit.variance[j]))
    full, red = _state(fit), _state(reduced)
    s_full, s_red = _simulate_stats(reduced, B, _rng(rng), [full.cp, red.cp])
    # start the full model's refits both at the null (the simulated truth) and
    # at the observed fit, and keep the better of the two
    g0 = np.insert(reduced.theta**2, j, 0.0)
    with progress_bar(3 * B, f"bootstrap LRT ({term})", progress) as bar:
        b_full = _make_batch(full, s_full, fit.reml)
        ga, _ = b_full.fit(g0, bar=bar)
        gb, _ = b_full.fit(np.maximum(fit.theta**2, 1e-2), bar=bar)
        dev_full = np.minimum(b_full.deviance(ga)[0], b_full.deviance(gb)[0])
        b_red = _make_batch(red, s_red, fit.reml)
        g_red, _ = b_red.fit(reduced.theta**2, bar=bar)
    null = np.maximum(b_red.deviance(g_red)[0] - dev_full, 0.0)
    naive = float(special.chdtrc(1, stat))
    return BootstrapLRT(
        term=term,
        statistic=float(stat),
        pvalue=float((1 + np.sum(null >= stat - 1e-10)) / (1 + B)),
        pvalue_chibar=0.5 * naive if stat > 0 else 1.0,
        n_resamples=B,
        null_statistics=null,
    )


__all__ = ["BootstrapLRT", "bootstrap_intervals", "bootstrap_lrt"]
