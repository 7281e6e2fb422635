"""The supernodal Cholesky factorisation and selected inverse (stats/variance/supernodal.py).

Every result is checked against dense numpy on SPD matrices of several
structures (random sparse, banded, arrow, disconnected blocks, dense,
diagonal, n = 1, hubs with sibling leaves and the crossed design's Schur
complement), each with the fundamental supernodes, as amalgamated by default,
and as wide as allowed: ``log|S|``, solves, ``S^-1`` on the pattern (both
triangles), and the symbolic fill (``nnz(L)``) against a dense Cholesky of
the permuted matrix. The values are not diagonally dominant, so ``S^-1`` is
far from diagonal and a wrong term of the Takahashi equations shows. The
symbolic steps are also checked against simple references: the postorder and
subtree sizes against a recursive walk, and the structure of ``L`` read off
SuperLU's factor against the column-by-column elimination (the fallback).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from vareval.stats.variance import supernodal
from vareval.stats.variance.supernodal import SparseCholesky

ROOT = Path(__file__).resolve().parents[3]
RTOL = 1e-10
PARTITIONS = {  # fundamental supernodes, amalgamated by default, as wide as allowed
    "fundamental": {"relax": False},
    "default": {},
    "widest": {"supernode_cost": 1e-2},
}


def _spd(pattern, rng, floor=0.1):
    """Random values on a symmetric pattern, shifted so the smallest eigenvalue is ``floor``.

    Not diagonally dominant: S^-1 is far from diagonal, so every block of the
    Takahashi equations matters.
    """
    P = sp.coo_matrix(pattern)
    P = ((P + P.T + sp.eye(P.shape[0])) != 0).tocoo()
    lower = P.row >= P.col
    r, c = P.row[lower], P.col[lower]
    B = sp.coo_matrix((rng.normal(size=r.size), (r, c)), shape=P.shape).toarray()
    B = B + np.tril(B, -1).T
    return B + (floor - np.linalg.eigvalsh(B)[0]) * np.eye(B.shape[0])


def _entries(S, rng, lower_only=False):
    """The pattern of dense S as shuffled (row, col, value) triples."""
    r, c = np.nonzero(S)
    if lower_only:
        keep = r >= c
        r, c = r[keep], c[keep]
    o = rng.permutation(r.size)
    return r[o], c[o], S[r[o], c[o]]


def _banded(n, w, rng):
    i, j = np.indices((n, n))
    return _spd(np.abs(i - j) <= w, rng)


def _arrow(n, rng):
    P = np.eye(n, dtype=bool)
    P[0, :] = P[:, 0] = True  # dense first row/column: the ordering puts it last
    P |= np.abs(np.subtract.outer(np.arange(n), np.arange(n))) == 1
    return _spd(P, rng)


def _blocks(rng):
    """Disconnected components: random blocks, isolated levels, a dense block."""
    parts = [
        sp.random(30, 30, density=0.1, random_state=rng).toarray() != 0,
        np.eye(5, dtype=bool),
        np.ones((8, 8), dtype=bool),
        sp.random(40, 40, density=0.05, random_state=rng).toarray() != 0,
    ]
    P = sp.block_diag(parts).toarray() != 0
    p = rng.permutation(P.shape[0])  # interleave the components
    return _spd(P[np.ix_(p, p)], rng)


def _star(rng, hubs=4, leaves=30, top=3):
    """Hubs under a small clique, each with leaves tied to it and to one clique node.

    The leaves of a hub are siblings in the elimination tree, with different
    rows: at small supernode costs consecutive ones share a supernode
    without their parent, whose rows are the union of theirs.
    """
    n = top + hubs * (1 + leaves)
    P = np.eye(n, dtype=bool)
    P[:top, :top] = True
    for h in range(hubs):
        hub = top + h
        P[hub, :top] = P[:top, hub] = True
        for i in range(leaves):
            leaf, t = top + hubs + h * leaves + i, (h + i) % top
            P[leaf, hub] = P[hub, leaf] = P[leaf, t] = P[t, leaf] = True
    p = rng.permutation(n)
    return _spd(P[np.ix_(p, p)], rng)


def _crossed(sweeps):
    """The crossed design's Schur complement on the configurations (as SparseSchur builds it).

    ``S = I + theta_c^2 (N_cc - theta_s^2 N_sc' D^-1 N_sc)``, ``D = theta_s^2 n_s + 1``.
    """
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_mixed import make_crossed
    finally:
        sys.path.pop(0)
    d = make_crossed(sweeps)
    seed = pd.factorize(d.seed)[0]
    cfg = pd.factorize(d.config)[0]
    N = sp.csr_matrix((np.ones(seed.size), (seed, cfg)))
    N.sum_duplicates()
    ts, tc = 1.0, 2.0
    D = ts**2 * np.asarray(N.sum(axis=1)).ravel() + 1.0
    E = sp.diags(np.asarray(N.sum(axis=0)).ravel()) - ts**2 * (N.T @ sp.diags(1 / D) @ N)
    return (sp.eye(N.shape[1]) + tc**2 * E).toarray()


def _matrices():
    rng = np.random.default_rng(20240611)
    return {
        "random": _spd(sp.random(150, 150, density=0.03, random_state=rng).toarray() != 0, rng),
        "random-denser": _spd(
            sp.random(80, 80, density=0.15, random_state=rng).toarray() != 0, rng
        ),
        "banded": _banded(120, 3, rng),
        "arrow": _arrow(60, rng),
        "blocks": _blocks(rng),
        "dense": _spd(np.ones((12, 12), dtype=bool), rng),
        "diagonal": np.diag(rng.uniform(0.5, 2.0, 40)),
        "n=1": np.array([[2.5]]),
        "star": _star(rng),
        "crossed": _crossed(10),
    }


MATRICES = _matrices()


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.max(np.abs(want)))


def _use(engine, kernel_switch):
    """Run the numeric phase in the compiled kernel or in numpy (skip if not built)."""
    if kernel_switch(supernodal._kernel, on=engine == "kernel") is None and engine == "kernel":
        pytest.skip("the compiled supernodal kernel is not built")


@pytest.mark.parametrize("engine", ["numpy-maps", "numpy-blocks", "kernel"])
@pytest.mark.parametrize("partition", list(PARTITIONS))
@pytest.mark.parametrize("name", list(MATRICES))
def test_against_dense(name, partition, engine, monkeypatch, kernel_switch):
    # the numpy path's extend-add and the inverse's gather by flat maps (small
    # fronts) and by blocks of fancy indexing (fronts with many rows below), and
    # the compiled kernel, give one factor
    _use(engine, kernel_switch)
    if engine == "numpy-blocks":
        monkeypatch.setattr(supernodal, "_MAP_SHARE", 0.0)
    S = MATRICES[name]
    rng = np.random.default_rng(len(name))
    row, col, val = _entries(S, rng)
    chol = SparseCholesky(row, col, S.shape[0], **PARTITIONS[partition])
    f = chol.factor(val)
    sign, logdet = np.linalg.slogdet(S)
    assert sign == 1
    assert f.logdet == pytest.approx(logdet, rel=RTOL, abs=RTOL)
    b = rng.normal(size=S.shape[0])
    B = rng.normal(size=(S.shape[0], 7))
    x, X = f.solve(b), f.solve(B)
    assert x.shape == b.shape and X.shape == B.shape
    _close(x, np.linalg.solve(S, b))
    _close(X, np.linalg.solve(S, B))
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])
    # the symbolic fill is the exact fill of a dense Cholesky of the permuted matrix
    L = np.linalg.cholesky(S[np.ix_(chol.perm, chol.perm)])
    assert chol.nnz_l == np.count_nonzero(L)
    assert chol.nnz_l <= chol.factor_nnz
    assert sorted(chol.perm) == list(range(S.shape[0]))


def test_amalgamation_reduces_supernodes():
    S = MATRICES["crossed"]
    row, col, val = _entries(S, np.random.default_rng(1))
    counts = [SparseCholesky(row, col, S.shape[0], **kw).n_supernodes
              for kw in PARTITIONS.values()]  # fmt: skip
    fundamental = SparseCholesky(row, col, S.shape[0]).n_fundamental
    assert fundamental == counts[0] > counts[1] > counts[2]


@pytest.mark.parametrize("cost", [1e-7, 1e-5])
def test_sibling_supernodes(cost):
    S = MATRICES["star"]
    rng = np.random.default_rng(7)
    row, col, val = _entries(S, rng)
    chol = SparseCholesky(row, col, S.shape[0], supernode_cost=cost)
    assert 1 < chol.n_supernodes < chol.n_fundamental
    f = chol.factor(val)
    assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=RTOL)
    B = rng.normal(size=(S.shape[0], 3))
    _close(f.solve(B), np.linalg.solve(S, B))
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])


@pytest.mark.parametrize("cost", [0.0, 1e-7, 1e-5, 1e-2])
def test_partition_ranges_are_valid(cost, rng):
    """Each supernode's columns with a parent outside it share that parent (or are roots)."""
    for _ in range(20):
        n = int(rng.integers(1, 200))
        parent = np.array([rng.integers(j + 1, n + 1) if j < n - 1 else n for j in range(n)])
        parent[rng.random(n) < 0.05] = n  # a forest
        parent[parent == n] = -1
        post = supernodal._postorder(parent)
        new = np.empty(n, dtype=np.int64)
        new[post] = np.arange(n)
        parent = np.where(parent[post] >= 0, new[parent[post]], -1)
        assert np.all((parent > np.arange(n)) | (parent < 0))
        below = rng.integers(0, 50, n)
        starts = supernodal._partition(parent, below, cost)
        ends = np.append(starts[1:], n)
        assert starts[0] == 0 and np.all(ends > starts)
        for a, b in zip(starts, ends, strict=True):
            out = {int(p) for p in parent[a:b] if p < 0 or p >= b}
            assert len(out) == 1, (a, b, out)


def _reference_postorder(parent):
    """Depth first, children largest subtree first (ties by index), roots in index order."""
    n = parent.size
    kids = [[] for _ in range(n)]
    size = np.ones(n, dtype=np.int64)
    for j in range(n):  # parents follow their children
        if parent[j] >= 0:
            kids[parent[j]].append(j)
            size[parent[j]] += size[j]
    out = []

    def visit(v):
        for c in sorted(kids[v], key=lambda x: -size[x]):
            visit(c)
        out.append(v)

    for root in np.flatnonzero(parent < 0):
        visit(root)
    return np.array(out), size


@pytest.mark.parametrize("engine", ["numpy", "kernel"])
def test_postorder_and_subtree_sizes(engine, rng, kernel_switch):
    _use(engine, kernel_switch)
    for _ in range(30):
        n = int(rng.integers(1, 300))
        parent = np.array([rng.integers(j + 1, n + 1) for j in range(n)])
        parent[rng.random(n) < 0.05] = n  # a forest
        if rng.random() < 0.3:  # long chains
            parent = np.where(rng.random(n) < 0.9, np.arange(1, n + 1), parent)
        parent[parent == n] = -1
        post, size = _reference_postorder(parent)
        np.testing.assert_array_equal(supernodal._subtree_sizes(parent), size)
        np.testing.assert_array_equal(supernodal._postorder(parent), post)


def _random_pattern(rng, n, density):
    """The lower triangle (with the diagonal) of a random symmetric pattern."""
    P = sp.random(n, n, density=density, random_state=rng) != 0
    return sp.tril(P + P.T + sp.eye(n, dtype=bool)).nonzero()


@pytest.mark.parametrize("density", [0.005, 0.02, 0.1])
def test_superlu_structure_is_the_exact_fill(density, rng):
    """The structure read off SuperLU's factor is the column-by-column fallback's."""
    for _ in range(5):
        n = int(rng.integers(2, 300))
        lo, hi, _, _ = supernodal._unique_pairs(*_random_pattern(rng, n, density), n)
        perm, ptr, ind = supernodal._minimum_degree(lo, hi, n)
        assert ptr is not None
        pinv = np.argsort(perm)
        r, c = np.maximum(pinv[lo], pinv[hi]), np.minimum(pinv[lo], pinv[hi])
        want_ptr, want_ind = supernodal._elimination(r[r > c], c[r > c], n)
        np.testing.assert_array_equal(ptr, want_ptr)
        cols = np.repeat(np.arange(n), np.diff(ptr))  # rows in any order
        np.testing.assert_array_equal(np.sort(cols * n + ind), np.sort(cols * n + want_ind))


@pytest.mark.parametrize("relax", [True, False])
def test_children_rows_in_parent_fronts(relax, rng):
    """The vectorised look-up of each child's rows in its parent's front is the per-front one."""
    for density in (0.005, 0.02, 0.1):
        n = int(rng.integers(2, 300))
        ch = SparseCholesky(*_random_pattern(rng, n, density), n, relax=relax)
        ch._lists()  # the numpy path's per-supernode lists (the kernel's path has none)
        for j in range(ch.n_supernodes):
            p = ch._parent[j]
            if p < 0:
                assert ch._rel[j] is None and ch._q[j] == 0
                continue
            front = np.concatenate([np.arange(ch._start[p], ch._end[p]), ch._rows[p]])
            np.testing.assert_array_equal(front[ch._rel[j]], ch._rows[j])
            assert ch._q[j] == np.count_nonzero(ch._rel[j] < ch._k[p])


@pytest.mark.parametrize("name", ["random", "blocks", "star", "crossed"])
def test_fallback_structure(name, monkeypatch, kernel_switch):
    """When SuperLU's factor may have lost entries, the fallback gives the same analysis."""
    kernel_switch(supernodal._kernel, on=False)  # SuperLU's ordering and structure
    S = MATRICES[name]
    row, col, val = _entries(S, np.random.default_rng(8))
    want = SparseCholesky(row, col, S.shape[0])
    calls = []
    elimination = supernodal._elimination

    def spy(r, c, n):
        calls.append(n)
        return elimination(r, c, n)

    monkeypatch.setattr(supernodal, "_elimination", spy)
    monkeypatch.setattr(supernodal, "_PROBE_SMALLEST", np.inf)  # every entry suspect
    got = SparseCholesky(row, col, S.shape[0])
    assert calls == [S.shape[0]]
    np.testing.assert_array_equal(got.perm, want.perm)
    for attr in ("nnz_l", "factor_nnz", "n_fundamental", "_start"):
        assert getattr(got, attr) == getattr(want, attr)
    for a, b in zip(got._rows, want._rows, strict=True):
        np.testing.assert_array_equal(a, b)
    assert got.factor(val).logdet == want.factor(val).logdet


def test_lower_triangle_only():
    S = MATRICES["random"]
    rng = np.random.default_rng(2)
    row, col, val = _entries(S, rng, lower_only=True)
    f = SparseCholesky(row, col, S.shape[0]).factor(val)
    assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=RTOL)
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])
    # the upper triangle alone works the same
    f = SparseCholesky(col, row, S.shape[0]).factor(val)
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])


def test_both_triangles_reads_the_lower():
    S = MATRICES["banded"]
    row, col, val = _entries(S, np.random.default_rng(3))
    junk = np.where(row < col, 1e3, val)  # the upper triangle is ignored
    f = SparseCholesky(row, col, S.shape[0]).factor(junk)
    assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=RTOL)


def test_refactor_with_new_values():
    S1 = MATRICES["crossed"]
    rng = np.random.default_rng(4)
    row, col, v1 = _entries(S1, rng)
    S2 = _spd(S1 != 0, rng)
    v2 = S2[row, col]
    chol = SparseCholesky(row, col, S1.shape[0], relax=False)
    f1 = chol.factor(v1)
    f2 = chol.factor(v2)
    b = rng.normal(size=S1.shape[0])
    for f, S in ((f1, S1), (f2, S2)):  # the first factor is untouched by the second
        assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=RTOL)
        _close(f.solve(b), np.linalg.solve(S, b))
        _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])


@pytest.mark.parametrize("partition", ["fundamental", "default"])
def test_not_positive_definite(partition):
    S = MATRICES["crossed"].copy()
    row, col, _ = _entries(S, np.random.default_rng(5))
    chol = SparseCholesky(row, col, S.shape[0], **PARTITIONS[partition])
    lam = np.linalg.eigvalsh(S)
    bad = S - (lam[0] + 1.0) * np.eye(S.shape[0])  # one eigenvalue below zero
    with pytest.raises(np.linalg.LinAlgError):
        chol.factor(bad[row, col])
    S[chol.perm[-1], chol.perm[-1]] = -1.0  # the last pivot negative
    with pytest.raises(np.linalg.LinAlgError):
        chol.factor(S[row, col])
    with pytest.raises(np.linalg.LinAlgError):
        chol.factor(np.full(row.size, np.nan))


def test_rejects_bad_patterns_and_values():
    with pytest.raises(ValueError, match="twice"):
        SparseCholesky([0, 1, 1, 1], [0, 1, 0, 0], 2)
    with pytest.raises(ValueError, match="diagonal"):
        SparseCholesky([0, 1], [0, 0], 2)
    with pytest.raises(ValueError, match="diagonal"):
        SparseCholesky([], [], 3)
    with pytest.raises(ValueError, match="outside"):
        SparseCholesky([0, 2], [0, 2], 2)
    chol = SparseCholesky([0, 1, 1], [0, 1, 0], 2)
    with pytest.raises(ValueError, match="expected 3 values"):
        chol.factor([1.0, 1.0])
    with pytest.raises(TypeError):
        chol.factor(np.array([2.0, 2.0, 1.0]) + 1e-3j)
    f = chol.factor([2.0, 2.0, 1.0])
    with pytest.raises(ValueError):
        f.solve(np.ones(3))
    assert f.solve(np.ones((2, 0))).shape == (2, 0)


@pytest.mark.parametrize("engine", ["numpy", "kernel"])
@pytest.mark.parametrize("size", [1, 300, 2**16, 2**16 + 5, 2**32, 2**40])
def test_stable_argsort_is_numpys(size, engine, kernel_switch):
    """The radix argsort of keys in [0, size) is numpy's stable one, repeated keys included."""
    _use(engine, kernel_switch)
    rng = np.random.default_rng(size % 1000)
    key = rng.integers(0, size, 3000).astype(np.int64)
    key = rng.permutation(np.concatenate([key, key[:1500], [0, size - 1]]))
    want = np.argsort(key, kind="stable")
    np.testing.assert_array_equal(supernodal.stable_argsort(key, size), want)


@pytest.mark.parametrize("name", ["random", "crossed", "star"])
def test_lower_triangle_by_columns(name):
    """A lower triangle listed column by column (as SparseSchur gives it) is taken unsorted."""
    S = MATRICES[name]
    r, c = np.nonzero(np.tril(S).T)  # by columns of the lower triangle
    row, col = c, r
    assert np.all(np.diff(col * S.shape[0] + row) > 0)
    chol = SparseCholesky(row, col, S.shape[0])
    f = chol.factor(S[row, col])
    assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=1e-10)
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[row, col])
    lo, hi, take, where = supernodal._unique_pairs(row, col, S.shape[0], ordered=False)
    assert np.array_equal(lo, row) and np.array_equal(take, np.arange(row.size))
