"""Orthogonal designs: the profiled deviance from the strata's sums of squares.

When every grouping factor is balanced (equal rows per level) and every two
factors are orthogonal (within each level of their join, each pair of levels
shares the same number of rows), as in a balanced nested or crossed pilot of
seeds, configurations and reruns, the averaging projections ``P_F`` of the
factors commute and the covariance ``sigma^2 (I + sum_j gamma_j Z_j Z_j')``
has the same eigenspaces, the *strata*, for every ``gamma`` (Tjur 1984).
The stratum of ``F`` is ``W_F = V_F minus the V_G of the factors G coarser
than F``; on it the relative covariance is ``lambda_F = 1 + sum gamma_j n_j``
over the random factors ``j`` that refine ``F`` (``n_j`` rows per level).
With the fixed effects spanning the strata of one partition (the distinct
rows of X, e.g. intercept + experiment), the REML criterion is

    sum_F df_F log lambda_F + log|X'X| + (n - p) (1 + log(2 pi s / (n - p)))

over the other strata, ``s = sum_F SS_F / lambda_F``, with ``SS_F`` each
stratum's sum of squares (ML: ``log|V|`` over all strata and ``n``). A
deviance costs O(strata), not O(levels^3): the ``SS_F`` are computed once per
response from its per-level totals (Mobius inversion of ``||P_G y||^2`` over
the factors' lattice).

Reference: Tjur, T. (1984). Analysis of variance models in orthogonal designs.
*International Statistical Review* 52(1), 33-65.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

_MAX_PARTITIONS = 64


def _canon(codes):
    """Codes relabelled by first appearance (equal partitions get equal arrays)."""
    _, first, inv = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inv].astype(np.int64)


def _join(a, b):
    """The finest partition coarser than both: connected levels of a and b."""
    ma, mb = a.max() + 1, b.max() + 1
    g = sp.csr_matrix((np.ones(a.size), (a, b + ma)), shape=(ma + mb, ma + mb))
    _, lab = connected_components(g, directed=False)
    return _canon(lab[a])


def _balanced(c):
    n = np.bincount(c)
    return n.min() > 0 and n.min() == n.max()


class Strata:
    """The strata of an orthogonal design, or ``None`` from :meth:`of` otherwise.

    Attributes: ``df`` (random strata's dimensions), ``A`` (strata x factors:
    ``n_j`` where factor j refines the stratum's partition), ``fixed_df`` and
    ``A_fixed`` (the same for the strata the fixed effects span).
    """

    @classmethod
    def of(cls, X, groups):
        """The strata of the model (X, groups), or None when the design is not orthogonal."""
        n, p = X.shape
        if p == 0 or not groups or any(np.any(g < 0) for g in groups):
            return None
        rows, e = np.unique(X, axis=0, return_inverse=True)
        if rows.shape[0] != p:  # X is not saturated in its distinct rows
            return None
        # rows (I), X's distinct rows (E), random factors; then their joins (U, ...)
        parts = [np.arange(n)]
        perm = {}  # canonical level -> the level of the given codes (Z'y's columns)
        for g in [e.ravel(), *groups]:
            c = _canon(g)
            if not _balanced(c) or any(np.array_equal(c, h) for h in parts):
                return None
            perm[len(parts)] = np.zeros(c.max() + 1, np.int64)
            perm[len(parts)][c] = g
            parts.append(c)
        k = len(groups)
        if not any(x.max() == 0 for x in parts):
            parts.append(np.zeros(n, np.int64))
        # close under joins, checking orthogonality of every pair
        J = {}
        i = 0
        while i < len(parts):
            for j in range(i):
                h = _join(parts[i], parts[j])
                if not _orthogonal(parts[i], parts[j], h) or not _balanced(h):
                    return None
                idx = next((m for m, x in enumerate(parts) if np.array_equal(x, h)), None)
                if idx is None:
                    if len(parts) >= _MAX_PARTITIONS:
                        return None
                    idx = len(parts)
                    parts.append(h)
                J[i, j] = J[j, i] = idx
            J[i, i] = i
            i += 1
        m = len(parts)
        le = np.array([[J[a, b] == b for b in range(m)] for a in range(m)])  # a refines b
        if np.any(le[1, 2 : 2 + k]):  # a random factor constant within X's rows: confounded
            return None
        levels = np.array([x.max() + 1 for x in parts])
        mu = _mobius(le, levels)
        dim = mu @ levels
        if np.any(dim < -0.5) or round(dim.sum()) != n:  # not expected when orthogonal
            return None
        return cls(parts, le, perm, mu, dim, X, rows, k)

    def __init__(self, parts, le, perm, mu, dim, X, rows, k):
        m, n = len(parts), X.shape[0]
        levels = np.array([x.max() + 1 for x in parts])
        self.mu, self.levels, self.parts, self.le, self.dim = mu, levels, parts, le, dim
        self.X = X
        self.sizes = n / levels  # rows per level
        # factor j (parts[2 + j]) refines the stratum's partition: its variance is there
        A = np.array([[le[2 + j, a] * self.sizes[2 + j] for j in range(k)]
                      for a in range(m)])
        fixed = le[1]  # strata spanned by X: partitions coarser than X's rows
        keep = ~fixed & (dim > 0.5)
        self.fixed, self.keep = fixed, keep
        self.df, self.A = dim[keep], A[keep]
        self.fixed_df, self.A_fixed = dim[fixed], A[fixed]
        self.logdet_xtx = np.linalg.slogdet(X.T @ X)[1]
        self.n, self.p, self.k = n, X.shape[1], k
        # per-level totals of each partition from a source it coarsens: a random
        # factor (Z_j'y) or the fixed partition (Z_E'y = X_u^-T X'y)
        self.x_inv = np.linalg.inv(rows)
        self.source = []
        for a in range(m):
            if a == 0:
                self.source.append(None)
                continue
            cands = [s for s in range(1, 2 + k) if le[s, a]]
            s = min(cands, key=lambda s: levels[s])
            src, dst = parts[s], parts[a]
            lev = np.zeros(levels[s], np.int64)
            lev[src] = dst
            agg = sp.csr_matrix((np.ones(levels[s]), (np.arange(levels[s]), lev)),
                                shape=(levels[s], levels[a]))
            self.source.append((s, agg))
        self.perm = perm

    def totals(self, zty, xty):
        """Per-level totals (B, levels) of B responses for every partition but the rows'."""
        given = {1: (xty @ self.x_inv)[:, self.perm[1]]}
        for j in range(self.k):
            given[2 + j] = zty[j][:, self.perm[2 + j]]
        out = [None]
        for a, src in enumerate(self.source[1:], 1):
            t = given[src[0]] @ src[1] if src[0] != a else given[a]
            out.append(np.asarray(t))
        return out

    def sums_of_squares(self, zty, xty, yty, every=False):
        """(B, random strata) sums of squares of B responses from their cross-products.

        ``every``: the sums of squares of every partition's stratum, fixed ones too.
        """
        norms = np.empty((yty.size, len(self.parts)))
        norms[:, 0] = yty
        for a, t in enumerate(self.totals(zty, xty)[1:], 1):
            norms[:, a] = np.sum(t * t, axis=1) / self.sizes[a]
        return norms @ self.mu.T[:, slice(None) if every else self.keep]

    def deviance(self, gamma, ss, reml):
        """Profiled deviance and sigma^2 at relative variances ``gamma`` (B, k)."""
        lam = 1.0 + gamma @ self.A.T
        s = np.sum(ss / lam, axis=1)
        dev = np.log(lam) @ self.df
        if reml:
            m = self.n - self.p
            dev += self.logdet_xtx
        else:
            m = self.n
            dev += np.log(1.0 + gamma @ self.A_fixed.T) @ self.fixed_df
        s = np.maximum(s, 1e-300)
        return dev + m * (1.0 + np.log(2.0 * np.pi * s / m)), s / m


def _mobius(le, levels):
    """Mobius function of the order "a refines b" (``le[a, b]``), finest partitions first."""
    m = len(levels)
    order = np.argsort(-levels, kind="stable")
    mu = np.eye(m)
    for a in range(m):
        for b in order:
            if b != a and le[a, b]:
                between = le[a] & le[:, b]
                between[b] = False
                mu[a, b] = -mu[a, between].sum()
    return mu


def _orthogonal(a, b, h):
    """Within each level of the join h, every (a, b) pair of levels shares n_a n_b / n_h rows."""
    na, nb, nh = (np.bincount(x) for x in (a, b, h))
    if not (na.min() == na.max() and nb.min() == nb.max()):
        return False
    _, counts = np.unique(a * (b.max() + 1) + b, return_counts=True)
    want = na[0] * nb[0] / nh
    return np.all(counts == want[0]) and want.min() == want.max()
