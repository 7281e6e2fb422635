"""The supernodal Cholesky's compiled numeric phase (stats/variance/_superkernel.c).

The kernel and the numpy path (``VAREVAL_NO_KERNEL=1``, the reference) run on
the same symbolic analysis (the same supernode partition, given explicitly)
and must agree to 1e-12 relative: the factor's every stored entry, ``log|S|``,
solves with one and several right-hand sides, and ``S^-1`` on the pattern.
On random SPD patterns, the structured matrices of test_supernodal.py, and
the Schur complements of the bench's designs (make_crossed, make_banded with
and without long-range links), too large for a dense reference. The
supernode partition's dynamic program, also in C, picks the same supernodes
(numpy runs on the kernel's ordering). The mixed-model fit itself gives the
same estimates on either path. The kernel's approximate minimum degree
ordering is a permutation whose fill stays near SuperLU's MMD's.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from vareval.stats.variance import supernodal
from vareval.stats.variance.supernodal import SparseCholesky

from .test_supernodal import MATRICES, PARTITIONS, _entries, _spd, _use

ROOT = Path(__file__).resolve().parents[3]
TOL = 1e-12


@pytest.fixture(autouse=True)
def _kernel_built(kernel_switch):
    _use("kernel", kernel_switch)  # skips where it is not built


def _both(row, col, n, values, kernel_switch, **partition):
    """The same factorisation by the kernel and by numpy: their results, side by side."""
    partition = partition or {"supernode_cost": supernodal._KERNEL_PER_SUPERNODE}
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, 5))
    out = []
    for engine in ("kernel", "numpy"):
        _use(engine, kernel_switch)
        # numpy on the kernel's ordering (its own default is SuperLU's)
        perm = out[0][0].perm if out else None
        chol = SparseCholesky(row, col, n, perm=perm, **partition)
        assert (chol._kernel is not None) == (engine == "kernel")
        f = chol.factor(values)
        out.append((chol, f, f.solve(B[:, 0]), f.solve(B), f.inverse_on_pattern()))
    return out


def _agree(kernel, numpy):
    (ck, fk, *rk), (cn, fn, *rn) = kernel, numpy
    # the partition's dynamic program in C chooses the same supernodes
    assert ck._start == cn._start and np.array_equal(ck.perm, cn.perm)
    assert fk.logdet == pytest.approx(fn.logdet, rel=TOL, abs=TOL)
    for got, want in [(fk._storage, fn._storage), *zip(rk, rn, strict=True)]:
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL * np.max(np.abs(want)))


@pytest.mark.parametrize("partition", list(PARTITIONS))
@pytest.mark.parametrize("name", list(MATRICES))
def test_equal_to_numpy_on_structured_matrices(name, partition, kernel_switch):
    S = MATRICES[name]
    row, col, val = _entries(S, np.random.default_rng(len(name)))
    _agree(*_both(row, col, S.shape[0], val, kernel_switch, **PARTITIONS[partition]))


@pytest.mark.parametrize("seed", range(6))
def test_equal_to_numpy_on_random_patterns(seed, kernel_switch):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    density = rng.uniform(0.5, 6.0) / n  # sparse to well filled in
    S = _spd(sp.random(n, n, density=density, random_state=rng).toarray() != 0, rng)
    lower = seed % 2 == 0  # one triangle or both
    row, col, val = _entries(S, rng, lower_only=lower)
    cost = float(10 ** rng.uniform(-9, -3))  # narrow to wide supernodes
    _agree(*_both(row, col, n, val, kernel_switch, supernode_cost=cost))


def _schur(d, theta):
    """The Schur complement on the factors but the first, as the mixed model forms it.

    ``S = I + L (N_rr - N_br' D^-1 N_br) L`` (the first factor eliminated:
    ``D = theta_0^2 n_0 + 1``, ``L`` the other factors' theta per level), as
    sparse (row, col, value) of its lower triangle.
    """
    Z = [sp.csr_matrix((np.ones(len(d)), (np.arange(len(d)), pd.factorize(d[c])[0]))) for c in d]
    Zr = sp.hstack(Z[1:]).tocsr()
    lam = np.concatenate([np.full(z.shape[1], t) for z, t in zip(Z[1:], theta[1:], strict=True)])
    D = theta[0] ** 2 * np.asarray(Z[0].sum(axis=0)).ravel() + 1.0
    Nbr = Z[0].T @ Zr
    E = Zr.T @ Zr - theta[0] ** 2 * (Nbr.T @ sp.diags(1.0 / D) @ Nbr)
    S = sp.tril(sp.eye(Zr.shape[1]) + sp.diags(lam) @ E @ sp.diags(lam)).tocoo()
    return S.row, S.col, S.data, Zr.shape[1]


def _bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_mixed
    finally:
        sys.path.pop(0)
    return bench_mixed


DESIGNS = {
    "make_crossed(60)": lambda b: b.make_crossed(60)[["seed", "config"]],
    "make_crossed(40), seed:experiment": lambda b: b.make_crossed(40).assign(
        se=lambda d: d.seed + ":" + d.experiment
    )[["seed", "config", "se"]],
    "make_banded(2000)": lambda b: b.make_banded(2000)[["seed", "config", "task"]],
    "make_banded(1000, 3% links)": lambda b: b.make_banded(1000, links=0.03)[
        ["seed", "config", "task"]
    ],
}


@pytest.mark.parametrize("design", list(DESIGNS))
def test_equal_to_numpy_on_the_bench_designs(design, kernel_switch):
    d = DESIGNS[design](_bench())
    row, col, val, n = _schur(d, np.array([1.3, 2.0, 0.7])[: d.shape[1]])
    _agree(*_both(row, col, n, val, kernel_switch))


def test_not_positive_definite_frees_and_raises():
    S = MATRICES["crossed"]
    row, col, val = _entries(S, np.random.default_rng(1))
    chol = SparseCholesky(row, col, S.shape[0])
    bad = S - (np.linalg.eigvalsh(S)[0] + 1.0) * np.eye(S.shape[0])
    for _ in range(3):  # the kernel frees its fronts on the way out and can go on
        with pytest.raises(np.linalg.LinAlgError):
            chol.factor(bad[row, col])
        assert chol.factor(val).logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=1e-10)


def test_the_kernel_rejects_arrays_of_the_wrong_size():
    S = MATRICES["random"]
    row, col, val = _entries(S, np.random.default_rng(2))
    chol = SparseCholesky(row, col, S.shape[0])
    kernel, f = chol._kernel, chol.factor(val)
    with pytest.raises(ValueError, match="storage"):
        kernel.factor(chol._plan, val[chol._source], np.empty(3), f._rinv)
    with pytest.raises(ValueError, match="wrong size"):
        kernel.solve(chol._plan, f._storage, f._block_inverses(), chol._kernel_start,
                     np.empty(5), 1)  # fmt: skip
    with pytest.raises(ValueError, match="inconsistent"):
        kernel.positions(*[np.zeros(2, dtype=np.int64)] * 9)
    with pytest.raises(ValueError, match="elimination forest"):
        kernel.postorder(np.array([1, 0], dtype=np.int64))  # a parent below its child


@pytest.mark.filterwarnings("ignore:singular fit")
def test_mixed_model_fit_is_the_same_on_either_path(monkeypatch, kernel_switch):
    import vareval
    from vareval.stats.variance import fit

    monkeypatch.setattr(fit, "FORCE_PATH", "sparse")
    factors = []
    factor = SparseCholesky.factor
    monkeypatch.setattr(
        SparseCholesky, "factor", lambda self, v: factors.append(self) or factor(self, v)
    )
    d = _bench().make_crossed(40)
    frames = []
    for engine in ("kernel", "numpy"):
        _use(engine, kernel_switch)
        factors.clear()
        a = vareval.variance(d, metric="y")
        assert factors and all((c._kernel is not None) == (engine == "kernel") for c in factors)
        frames.append([a.components_frame(), a.lrt_frame(), a.f_frame(), a.fixed_frame()])
    for k, n in zip(*frames, strict=True):
        pd.testing.assert_frame_equal(k, n, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("density", [0.005, 0.02, 0.1])
def test_structure_and_ordering_without_superlus_factor(density, kernel_switch):
    """The kernel's column-by-column structure of L is the numpy loop's, and SuperLU's
    incomplete factorisation gives the ordering of its complete one."""
    rng = np.random.default_rng(int(density * 1000))
    for _ in range(5):
        n = int(rng.integers(2, 300))
        P = sp.random(n, n, density=density, random_state=rng) != 0
        lo, hi, _, _ = supernodal._unique_pairs(*sp.tril(P + P.T + sp.eye(n)).nonzero(), n)
        perm, _, _ = supernodal._minimum_degree(lo, hi, n)
        assert np.array_equal(supernodal._minimum_degree(lo, hi, n, structure=False)[0], perm)
        pinv = np.argsort(perm)
        r, c = np.maximum(pinv[lo], pinv[hi]), np.minimum(pinv[lo], pinv[hi])
        got = supernodal._elimination(r[r > c], c[r > c], n)
        _use("numpy", kernel_switch)
        want = supernodal._elimination(r[r > c], c[r > c], n)
        _use("kernel", kernel_switch)
        np.testing.assert_array_equal(got[0], want[0])
        cols = np.repeat(np.arange(n), np.diff(want[0]))  # the kernel's rows in any order
        np.testing.assert_array_equal(np.sort(cols * n + got[1]), cols * n + want[1])


def _fill(perm, lo, hi, n):
    """nnz(L) of the pattern's Cholesky factor in the order ``perm`` (the numpy loop)."""
    pinv = np.empty(n, dtype=np.int64)
    pinv[perm] = np.arange(n)
    r, c = np.maximum(pinv[lo], pinv[hi]), np.minimum(pinv[lo], pinv[hi])
    ptr, _ = supernodal._elimination(r[r > c], c[r > c], n)
    return int(ptr[-1]) + n


def _orderings(S, kernel_switch):
    """AMD (the kernel's) and SuperLU's MMD orderings of S's pattern, and their fill."""
    n = S.shape[0]
    lo, hi, _, _ = supernodal._unique_pairs(*np.nonzero(np.tril(S)), n)
    off = lo != hi
    raw = supernodal._kernel().amd(lo[off], hi[off], n)
    amd = np.frombuffer(raw, dtype=np.int64)
    mmd = supernodal._minimum_degree(lo, hi, n, structure=False)[0]
    _use("numpy", kernel_switch)
    out = amd, _fill(amd, lo, hi, n), _fill(mmd, lo, hi, n)
    _use("kernel", kernel_switch)
    return out


@pytest.mark.parametrize("name", list(MATRICES))
def test_amd_orders_structured_matrices_as_well_as_mmd(name, kernel_switch):
    """A permutation, with fill within 10 % of SuperLU's MMD (equal or less on most)."""
    S = MATRICES[name]
    perm, amd, mmd = _orderings(S, kernel_switch)
    assert np.array_equal(np.sort(perm), np.arange(S.shape[0]))
    assert amd <= 1.1 * mmd, (amd, mmd)


@pytest.mark.parametrize("seed", range(8))
def test_amd_on_random_patterns(seed, kernel_switch):
    """Random patterns, sparse to well filled in, some with isolated levels and hubs."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 400))
    P = (sp.random(n, n, density=rng.uniform(0.3, 8.0) / n, random_state=rng) != 0).toarray()
    if seed % 3 == 0:  # a few hubs
        P[rng.integers(0, n, 3)] = rng.random((3, n)) < 0.5
    S = np.eye(n) + (P | P.T)
    perm, amd, mmd = _orderings(S, kernel_switch)
    assert np.array_equal(np.sort(perm), np.arange(n))
    natural = _fill(np.arange(n), *supernodal._unique_pairs(*np.nonzero(np.tril(S)), n)[:2], n)
    assert amd <= 1.15 * mmd and amd <= natural, (amd, mmd, natural)


def test_amd_puts_dense_levels_last_and_keeps_the_fill(kernel_switch):
    """Levels adjacent to more than half the others (and 40 sqrt(n)) are ordered last."""
    rng = np.random.default_rng(5)
    n, dense = 2200, [7, 1500]
    i = np.arange(n - 1)
    P = np.zeros((n, n), dtype=bool)
    P[i, i + 1] = True  # a path
    P[dense, :] = rng.random((2, n)) < 0.95  # two levels meeting nearly all others
    S = np.eye(n) + (P | P.T)
    perm, amd, mmd = _orderings(S, kernel_switch)
    assert sorted(perm[-2:]) == dense
    assert amd <= 1.01 * mmd


def test_amd_rejects_bad_pairs_and_falls_back(monkeypatch):
    kernel = supernodal._kernel()
    with pytest.raises(ValueError, match="outside"):
        kernel.amd(np.array([0, 5]), np.array([1, 2]), 4)
    assert np.array_equal(np.frombuffer(kernel.amd(np.zeros(0, np.int64), np.zeros(0, np.int64), 3),
                                        dtype=np.int64), [0, 1, 2])  # fmt: skip

    class Failing:  # an ordering that reports an inconsistency: SuperLU's is used
        def amd(self, *args):
            return None

    S = MATRICES["random"]
    n = S.shape[0]
    lo, hi, _, _ = supernodal._unique_pairs(*np.nonzero(np.tril(S)), n)
    got = supernodal._approximate_minimum_degree(Failing(), lo, hi, n)
    np.testing.assert_array_equal(got, supernodal._minimum_degree(lo, hi, n, structure=False)[0])
    with pytest.raises(ValueError, match="permutation"):
        SparseCholesky(lo, hi, n, perm=np.zeros(n, dtype=np.int64))


@pytest.mark.parametrize("seed", range(4))
def test_front_positions_equal_numpys(seed):
    """The kernel's table look-up of values' and children's rows in the fronts is the
    numpy path's searchsorted, on random patterns and the structured matrices."""
    rng = np.random.default_rng(200 + seed)
    mats = [MATRICES[name] for name in list(MATRICES)[seed::4]]
    n = int(rng.integers(2, 300))
    P = sp.random(n, n, density=rng.uniform(0.5, 5.0) / n, random_state=rng).toarray() != 0
    for S in [*mats, np.eye(n) + (P | P.T)]:
        row, col, _ = _entries(S, rng)
        for cost in (1e-9, 1e-6, 1e-3):
            chol = SparseCholesky(row, col, S.shape[0], supernode_cost=cost)
            lo, hi, _, _ = supernodal._unique_pairs(row, col, S.shape[0])
            pinv = np.empty(S.shape[0], dtype=np.int64)
            pinv[chol.perm] = np.arange(S.shape[0])
            r, c = np.maximum(pinv[lo], pinv[hi]), np.minimum(pinv[lo], pinv[hi])
            order = np.argsort(chol._sup[c], kind="stable")
            got = chol._positions(r[order], c[order], chol._kernel)
            want = chol._positions(r[order], c[order], None)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(got[0], chol._assemble_flat)  # the pairs' order


def _random_tables(rng):
    """A random N_br (CSR, counts) and N_rr (symmetric, with its diagonal) on r levels."""
    qb, r = int(rng.integers(1, 60)), int(rng.integers(1, 40))
    Nb = sp.random(qb, r, density=rng.uniform(0, 0.5), random_state=rng, format="csr")
    Nb.data = rng.integers(1, 4, Nb.nnz).astype(float)
    Nrr = sp.random(r, r, density=rng.uniform(0, 0.3), random_state=rng)
    Nrr = (Nrr + Nrr.T + sp.eye(r)).tocsr()
    return Nb, Nrr


@pytest.mark.parametrize("seed", range(8))
def test_schur_pattern_equals_numpys(seed, kernel_switch):
    # the sparse Schur complement's pattern, where N_rr falls in it and the pair
    # table: the kernel's and numpy's (row_pairs, unique_inverse, scipy) arrays
    from vareval.stats.variance.sparse import _pattern

    rng = np.random.default_rng(seed)
    for _ in range(40):
        Nb, Nrr = _random_tables(rng)
        lo = sp.coo_matrix(Nrr)
        low = lo.col <= lo.row
        args = (Nb, lo.col[low].astype(np.int64), lo.row[low].astype(np.int64), Nrr.shape[0])
        got = []
        for engine in ("kernel", "numpy"):
            _use(engine, kernel_switch)
            # a kernel built before schur_pattern existed would compare numpy with itself
            assert hasattr(supernodal._kernel(), "schur_pattern") == (engine == "kernel")
            got.append(_pattern(*args))
        (kk, kw, kp), (nk, nw, np_) = got
        assert np.array_equal(kk, nk) and np.array_equal(kw, nw)
        assert kp.shape == np_.shape and kp.has_canonical_format
        for part in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(kp, part), getattr(np_, part))


@pytest.mark.parametrize("seed", range(4))
def test_components_equal_scipys(seed, kernel_switch):
    # the Schur complement's independent blocks: union-find in the kernel labels
    # them as scipy's connected_components on N_rr + N_br'N_br does
    from scipy.sparse.csgraph import connected_components

    from vareval.stats.variance.fit import _components

    rng = np.random.default_rng(seed)
    for t in range(60):
        Nb, Nrr = _random_tables(rng)
        Nb = Nb[:, :] if t % 3 else sp.csr_matrix(Nb.multiply(rng.random(Nb.shape) < 0.2))
        Nrr = sp.eye(Nrr.shape[0], format="csr") if t % 4 == 0 else Nrr
        pattern = sp.csr_matrix(Nrr != 0) + Nb.T @ Nb
        want = connected_components(pattern, directed=False)[1]
        for rr in (Nrr, Nrr.toarray()):
            _use("kernel", kernel_switch)
            assert hasattr(supernodal._kernel(), "components")
            assert np.array_equal(_components(rr, Nb if t % 2 else Nb.toarray()), want)
            _use("numpy", kernel_switch)
            assert np.array_equal(_components(rr, Nb), want)


def test_schur_pattern_and_components_reject_bad_input():
    kernel = supernodal._kernel()
    if kernel is None:
        pytest.skip("the compiled supernodal kernel is not built")

    def ints(*x):
        return np.array(x, dtype=np.int64)

    with pytest.raises(ValueError, match="schur_pattern"):  # a row's columns not increasing
        kernel.schur_pattern(ints(0, 2), ints(1, 0), np.ones(2), ints(), ints(), 2,
                             ints(), np.empty(3, np.int32), np.empty(3))  # fmt: skip
    with pytest.raises(ValueError, match="schur_pattern"):  # an upper N_rr entry
        kernel.schur_pattern(ints(0), ints(), np.ones(0), ints(1), ints(0), 2,
                             ints(0), np.empty(0, np.int32), np.empty(0))  # fmt: skip
    with pytest.raises(ValueError, match="schur_pattern"):  # outputs of the wrong size
        kernel.schur_pattern(ints(0, 1), ints(1), np.ones(1), ints(), ints(), 2,
                             ints(), np.empty(2, np.int32), np.empty(1))  # fmt: skip
    with pytest.raises(ValueError, match="components"):
        kernel.components(ints(0), ints(3), 3)


def _raw_csr(rng, index_dtype):
    """A random CSR matrix as scipy keeps it uncanonical: empty rows, duplicates, unsorted.

    Values spread over sixteen orders of magnitude with both signs, so a sum
    taken in another order than storage's would round differently.
    """
    m, n = int(rng.integers(0, 40)), int(rng.integers(1, 30))
    per_row = rng.integers(0, 9, m) * (rng.random(m) < 0.8)  # ~20 % empty rows
    ptr = np.concatenate([[0], np.cumsum(per_row)]).astype(index_dtype)
    ind = rng.integers(0, n, ptr[-1]).astype(index_dtype)  # repeats: duplicates
    val = rng.normal(size=ptr[-1]) * 10.0 ** rng.uniform(-8, 8, ptr[-1])
    A = sp.csr_matrix((val, ind, ptr), shape=(m, n))
    A.indptr, A.indices = ptr, ind  # scipy casts small int64 indices down: as given
    return A


def _same_bits(a, b):
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(a.view(np.int64), b.view(np.int64))
    )


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(3))
def test_csr_product_equals_scipys_bit_for_bit(seed, index_dtype, kernel_switch):
    # the evaluation's products A @ x without scipy's dispatch: every bit of
    # scipy's csr_matvec (one column) and csr_matvecs (several; each width the
    # kernel unrolls, and wider), on uncanonical matrices
    from vareval.stats.variance.sparse import product

    _use("kernel", kernel_switch)
    assert hasattr(supernodal._kernel(), "csr_product")
    rng = np.random.default_rng(seed)
    reordered = 0
    for _ in range(60):
        A = _raw_csr(rng, index_dtype)
        for width in (None, 1, 2, 3, 4, 5, 8, 9, 13):
            shape = (A.shape[1],) if width is None else (A.shape[1], width)
            x = rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, shape)
            for xx in (x, np.asfortranarray(x)):
                assert _same_bits(product(A, xx), A @ xx)
            if width is None:  # the test can fail: the reverse order rounds otherwise
                rev = A.copy()
                for i in range(A.shape[0]):
                    sl = slice(A.indptr[i], A.indptr[i + 1])
                    rev.indices[sl], rev.data[sl] = A.indices[sl][::-1], A.data[sl][::-1]
                reordered += not _same_bits(rev @ x, A @ x)
    assert reordered > 10


def test_csr_product_falls_back_to_scipy(kernel_switch):
    # what the kernel does not take goes to A @ x, the same result either way
    from vareval.stats.variance.sparse import product

    rng = np.random.default_rng(5)
    A = _raw_csr(np.random.default_rng(7), np.int32)
    x = rng.normal(size=(A.shape[1], 2))
    for engine in ("kernel", "numpy"):
        _use(engine, kernel_switch)
        for a, xx in [
            (A, x), (A.tocsc(), x), (A.toarray(), x), (A, x.astype(np.float32)),
            (A.astype(np.float32), x), (A, np.ones((A.shape[1], 0))), (A, x.astype(int)),
        ]:  # fmt: skip
            assert _same_bits(np.asarray(product(a, xx)), np.asarray(a @ xx))
        with pytest.raises(ValueError):  # a mismatch raises as scipy does
            product(A, np.ones(A.shape[1] + 1))


def test_csr_product_rejects_bad_input():
    kernel = supernodal._kernel()
    if kernel is None or not hasattr(kernel, "csr_product"):
        pytest.skip("the compiled supernodal kernel is not built")

    def ints(*v):
        return np.array(v, dtype=np.int32)

    x, y = np.ones(3), np.empty(2)
    with pytest.raises(ValueError, match="outside x"):
        kernel.csr_product(ints(0, 1, 2), ints(0, 3), np.ones(2), x, y, 1)
    with pytest.raises(ValueError, match="outside x"):
        kernel.csr_product(ints(0, 1, 2), ints(0, -1), np.ones(2), x, y, 1)
    with pytest.raises(ValueError, match="inconsistent"):  # rows' bounds decreasing
        kernel.csr_product(ints(0, 2, 1), ints(0, 1), np.ones(2), x, y, 1)
    with pytest.raises(ValueError, match="inconsistent"):  # y of the wrong size
        kernel.csr_product(ints(0, 1, 2), ints(0, 1), np.ones(2), x, np.empty(3), 1)
    with pytest.raises(ValueError, match="inconsistent"):  # mixed index widths
        kernel.csr_product(ints(0, 1, 2), np.array([0, 1]), np.ones(2), x, y, 1)


def test_sparse_schur_entries_in_one_pass_equal_two_products(kernel_switch):
    # the Schur complement's entries and dE/dtheta_b from one pass over the pair
    # table (kernel, or two columns through scipy) equal two separate products
    from vareval.stats.variance.fit import _Crossprods

    g = np.random.default_rng(3)
    n = 1500
    groups = [g.integers(0, 200, n), g.integers(0, 80, n), g.integers(0, 30, n)]
    y = g.normal(size=200)[groups[0]] + g.normal(size=n)
    for engine in ("kernel", "numpy"):
        _use(engine, kernel_switch)
        schur = _Crossprods(y, np.ones((n, 1)), groups, [200, 80, 30], path="sparse").schur
        theta = np.array([1.3, 0.4, 2.2])
        E, lam, d, dE_b = schur._entries(theta)
        tb = theta[schur.cp.big]
        assert _same_bits(E, schur.nrr - tb * tb * (schur.pairs @ (1.0 / d)))
        assert _same_bits(np.ascontiguousarray(dE_b), schur.pairs @ (-2.0 * tb / d**2))


def test_a_kernel_built_before_its_newest_function_is_not_used(monkeypatch):
    """A build older than the source (no ``geqp3``, its newest function) would lack calls
    the fit makes: it is not used, the numpy and scipy paths are."""
    import types

    monkeypatch.setattr(supernodal, "compiled", lambda name: types.SimpleNamespace(factor=None))
    supernodal._kernel.cache_clear()
    try:
        assert supernodal._kernel() is None
    finally:
        supernodal._kernel.cache_clear()
