"""Sparse Cholesky factorisation on a fixed pattern, and the selected inverse.

The mixed-model fit factors the Schur complement ``S``
(:class:`vareval.stats.variance.sparse.SparseSchur`) hundreds of times with the
same pattern, and the gradient of ``log|S|`` needs ``tr(S^-1 dS)``, i.e.
``S^-1`` on the pattern of ``S`` only. This module does both in numpy/scipy:

- :class:`SparseCholesky` analyses the pattern once: a fill-reducing ordering
  (SuperLU's minimum degree on ``A + A'``) and the structure of every column
  of ``L``, both from SuperLU's LU factorisation of a probe matrix with the
  pattern, the elimination tree, a postorder, and a partition of the columns
  into *supernodes* (contiguous columns treated as one dense block). The partition
  is relaxed (Ashcraft & Grimes 1989): a supernode may hold explicit zeros,
  chosen by dynamic programming over the postorder to minimise a model of the
  time, since the numeric phase pays a fixed Python cost per supernode (tens
  of microseconds) while small dense flops are cheap. On the crossed design's
  Schur complement (7,483 levels) that turns ~3,000 fundamental supernodes,
  most of them single columns, into ~150. Every index map of the numeric
  phase is built here.
- :meth:`SparseCholesky.factor` is multifrontal (Duff & Reid 1983): a loop over
  the supernodes, each a dense front ``[[F11, F12], [F21, F22]]`` into which
  the pattern's values and the children's update matrices are scattered,
  followed by ``F11 = L11 L11'`` (dpotrf), ``L21 = F21 L11^-T`` (dtrsm) and the
  update ``F22 - L21 L21'`` passed to the parent.
- :meth:`CholeskyFactor.inverse_on_pattern` solves the Takahashi equations
  (Takahashi et al. 1973; Erisman & Tinney 1975) from the root down. With
  ``Z = S^-1``, ``Z L = L^-T`` is upper triangular, which for a supernode ``J``
  with the rows ``I`` below it gives ``Z_IJ = -Z_II Y`` and
  ``Z_JJ = (L11 L11')^-1 - Y' Z_IJ`` with ``Y = L21 L11^-1``; ``Z_II`` lies in
  the parent's front (the rows of ``J`` are among the parent's), so ``Z`` is
  only ever formed on the fronts, which cover the pattern of ``L``.
- The inverses of the diagonal blocks ``L11^-1`` are formed once per factor
  (the selected inverse needs them); :meth:`CholeskyFactor.solve` multiplies
  by them rather than calling ``dtrsm`` per supernode, whose wrapper costs more
  than the product at these sizes.

Fronts are stored transposed, ``[F11 | F12]`` as a ``k x (k + m)``
Fortran-ordered block (its upper triangle meaningful) followed by the
``m x m`` block ``F22``, so LAPACK and BLAS work in place on contiguous views;
the numeric phase is a Python loop over the supernodes of a few LAPACK/BLAS
calls and precomputed fancy indexing each, nothing per column or entry.

Where it is built, the compiled kernel ``_superkernel.c`` runs the same three
loops in C, calling the BLAS/LAPACK scipy links, and forms ``L21' = L11^-1 F12``
as a product with the block inverse rather than by ``dtrsm``; it also runs the
analysis's loops: an approximate minimum degree ordering (Amestoy, Davis & Duff
1996) in place of SuperLU's (a quarter of the time on the crossed design, a
hundredth on the banded one, fill within a few per cent either way), the
structure of ``L`` from the ordering, the postorder and the partition's
dynamic program; the analysis then keeps flat arrays, no Python object per
supernode. A supernode costs about a microsecond beyond its flops, so the
partition is tuned for narrower ones. The numpy path (``VAREVAL_NO_KERNEL=1``)
is the reference it is tested equal to, given the same ordering.

References
----------
Amestoy, P. R., Davis, T. A. and Duff, I. S. (1996). An approximate minimum
degree ordering algorithm. *SIAM J. Matrix Anal. Appl.* 17(4), 886-905.
Ashcraft, C. and Grimes, R. (1989). The influence of relaxed supernode
partitions on the multifrontal method. *ACM TOMS* 15(4), 291-309.
Duff, I. S. and Reid, J. K. (1983). The multifrontal solution of indefinite
sparse symmetric linear equations. *ACM TOMS* 9(3), 302-325.
Erisman, A. M. and Tinney, W. F. (1975). On computing certain elements of the
inverse of a sparse matrix. *Communications of the ACM* 18(3), 177-179.
Liu, J. W. H. (1990). The role of elimination trees in sparse factorization.
*SIAM J. Matrix Anal. Appl.* 11(1), 134-172.
Takahashi, K., Fagan, J. and Chen, M.-S. (1973). Formation of a sparse bus
impedance matrix and its application to short circuit study. *8th PICA
Conference Proceedings*, 63-69.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from vareval.stats._compiled import compiled
from vareval.stats._lazy import linalg  # scipy.linalg: the numpy path's BLAS and LAPACK

# The partition's time model, in seconds: a fixed cost per supernode (its
# Python loop bodies in the factorisation, the selected inverse and a solve;
# far less in the compiled kernel, where more, narrower supernodes pay),
# per dense flop of its front, and per entry of its update matrix (scattered
# into the parent, gathered back in the inverse). Measured on the mixed
# model's Schur complements (single-threaded OpenBLAS).
_PER_SUPERNODE = 30e-6
_KERNEL_PER_SUPERNODE = 1e-6  # the compiled kernel's: a few BLAS calls and allocations
_PER_FLOP = 0.2e-9
_PER_ENTRY = 3e-9
# One evaluation of the mixed model (a factorisation, a selected inverse and a
# few solves), in seconds: per supernode and per flop of the factorisation
# (SparseCholesky.seconds; measured on the bench's Schur complements).
_EVAL_PER_SUPERNODE = 1e-4
_EVAL_PER_FLOP = 3.3e-10
_KERNEL_EVAL_PER_SUPERNODE = 5e-6  # the same with the compiled kernel
_KERNEL_EVAL_PER_FLOP = 2.7e-10
_MAX_COLUMNS = 256  # columns of a supernode, at most
_MAP_SHARE = 0.25  # the flat maps' entries, at most this share of the factor's
_SMALL_WINDOW = 8  # the partition's candidate starts it scans in Python, at most
# L's structure is read off SuperLU's factor of a probe with the pattern, an
# M-matrix (off-diagonal -1, diagonal the degree plus a shift): its pivots are
# positive and its entries below the diagonal negative, each a sum of
# same-signed products of earlier ones, so none cancels to zero, and none
# underflows unless a product of two others does, which entries of at least
# _PROBE_SMALLEST rule out. Entries decay geometrically with the shift along
# paths through eliminated columns (to 1e-206 on the crossed design's 50,000
# levels with a shift of 1, 4e-14 with this one), so it is small.
_PROBE_SHIFT = 1e-3
_PROBE_SMALLEST = 1e-100


@functools.cache
def _kernel():
    """The compiled kernel, or None: not built, ``VAREVAL_NO_KERNEL`` set, or out of date.

    A build older than the source's newest function (``geqp3``) would lack
    calls that the fit makes.
    """
    kernel = compiled("vareval.stats.variance._superkernel")
    return kernel if hasattr(kernel, "geqp3") else None


def stable_argsort(key, size):
    """``np.argsort(key, kind="stable")`` for integer keys in ``[0, size)``.

    Below ``2**32`` by two stable sorts of 16-bit halves, which numpy does by
    radix, O(n) rather than a comparison sort's O(n log n); the same order.
    """
    key = np.asarray(key)
    if size > 2**32:
        return np.argsort(key, kind="stable")
    kernel = _kernel()
    if kernel is not None:  # the same radix sort in C, one pass a digit
        return np.frombuffer(kernel.argsort(_int64(key), size), dtype=np.int64)
    order = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    if size > 2**16:
        order = order[np.argsort((key[order] >> 16).astype(np.uint16), kind="stable")]
    return order


def _unique_pairs(row, col, n, ordered=True):
    """The unordered pairs of the pattern and which entry gives each one's value.

    Returns ``(lo, hi, take, where)``: pair ``t`` is ``(lo[t], hi[t])`` with
    ``lo >= hi``, its value is entry ``take[t]``'s (the one with ``row >= col``
    when both triangles are given) and entry ``e`` holds pair ``where[e]``.
    The pairs are sorted by ``(lo, hi)``; unless ``ordered``, a lower triangle
    listed column by column (``col * n + row`` increasing, as
    :class:`~vareval.stats.variance.sparse.SparseSchur` gives it) is taken as
    it is, without a sort.
    """
    row = np.asarray(row, dtype=np.int64).ravel()
    col = np.asarray(col, dtype=np.int64).ravel()
    if row.shape != col.shape:
        raise ValueError("row and col differ in length")
    if row.size and (min(row.min(), col.min()) < 0 or max(row.max(), col.max()) >= n):
        raise ValueError(f"pattern indices outside [0, {n})")
    if row.size < n:
        raise ValueError("the pattern must hold every diagonal entry")
    upper = row < col
    if not ordered and not upper.any():
        key = col * n + row
        if np.all(key[1:] > key[:-1]):  # each entry once
            if np.count_nonzero(row == col) != n:
                raise ValueError("the pattern must hold every diagonal entry")
            every = np.arange(row.size)
            return row, col, every, every
    key = np.maximum(row, col) * n + np.minimum(row, col)
    if upper.any():  # per pair, the lower-triangle entry first
        order = np.argsort(upper, kind="stable")
        order = order[stable_argsort(key[order], n * n)]
    else:
        order = stable_argsort(key, n * n)
    key, upper = key[order], upper[order]
    same = key[1:] == key[:-1]
    if np.any(same & (upper[1:] == upper[:-1])):
        raise ValueError("the pattern lists an entry twice")
    first = np.flatnonzero(np.concatenate([[True], ~same]))
    where = np.empty(row.size, dtype=np.intp)
    where[order] = np.cumsum(np.concatenate([[True], ~same])) - 1
    lo, hi = np.divmod(key[first], n)
    if np.count_nonzero(lo == hi) != n:
        raise ValueError("the pattern must hold every diagonal entry")
    return lo, hi, order[first], where


def _minimum_degree(lo, hi, n, structure=True):
    """SuperLU's multiple minimum degree ordering, and the structure of ``L`` in it.

    ``(lo, hi)`` are the pairs as :func:`_unique_pairs` gives them, sorted.
    Returns ``(perm, ptr, ind)``: position -> index, and the strictly lower
    structure of the Cholesky factor of the permuted pattern as CSC arrays
    (a column's rows in any order), read off SuperLU's factor of a probe
    matrix with the pattern; ``ptr = ind = None`` when that factor may not
    show all of it, or when ``structure`` is False: then SuperLU's incomplete
    factorisation, dropping every entry, gives the same ordering (SuperLU
    orders the columns before either factorisation) at a fraction of the
    time and memory, and the compiled kernel derives the structure.
    """
    off = lo != hi
    r, c = lo[off], hi[off]
    if not r.size:
        return np.arange(n), np.zeros(n + 1, dtype=np.int64), r
    diag = np.arange(n)
    ones = np.full(r.size, -1.0)
    degree = np.bincount(np.concatenate([r, c]), minlength=n)
    # the upper entries, the diagonal, the lower ones: each column's rows come
    # out sorted, so neither scipy nor SuperLU sorts them again
    probe = sp.coo_matrix(
        (
            np.concatenate([ones, degree + _PROBE_SHIFT, ones]),
            (np.concatenate([c, diag, r]), np.concatenate([r, diag, c])),
        ),
        shape=(n, n),
    ).tocsc()
    from scipy.sparse.linalg import spilu, splu  # the fallback's only: ~8 ms to import

    if not structure:
        try:
            lu = spilu(probe, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, relax=1,
                       drop_tol=np.inf, fill_factor=1.0,
                       options={"SymmetricMode": True})  # fmt: skip
            return np.argsort(np.asarray(lu.perm_c, dtype=np.int64)), None, None
        except RuntimeError:  # not expected (the probe's diagonal is positive): the full LU
            pass
    lu = splu(probe, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, relax=1,
              options={"SymmetricMode": True})  # fmt: skip
    perm = np.argsort(np.asarray(lu.perm_c, dtype=np.int64))
    if not np.array_equal(lu.perm_r, lu.perm_c):  # a pivot off the diagonal
        return perm, None, None
    L = lu.L  # of the permuted probe; relax=1: SuperLU pads no supernode with zeros
    ptr = L.indptr.astype(np.int64)
    if not (
        np.array_equal(L.indices[ptr[:-1]], diag)  # each column's diagonal comes first
        and np.count_nonzero(L.data <= -_PROBE_SMALLEST) == L.nnz - n
    ):
        return perm, None, None
    return perm, ptr - np.arange(n + 1), np.delete(L.indices, ptr[:-1])


def _approximate_minimum_degree(kernel, lo, hi, n):
    """The kernel's approximate minimum degree ordering (Amestoy, Davis & Duff 1996).

    ``(lo, hi)`` are the pairs as :func:`_unique_pairs` gives them. Returns
    position -> index. SuperLU's ordering where the kernel reports an
    inconsistency (not expected; the ordering only affects fill, never the
    factor).
    """
    off = lo != hi
    perm = kernel.amd(lo[off], hi[off], n)
    if perm is None:
        return _minimum_degree(lo, hi, n, structure=False)[0]
    return np.frombuffer(perm, dtype=np.int64)


def _elimination(r, c, n):
    """The strictly lower structure of ``L`` as CSC arrays, column by column.

    ``(r, c)`` is the strictly lower pattern (``r > c``). Column ``j`` of ``L``
    holds ``A``'s column ``j`` and its children's columns below ``j``; its
    parent is its first row below the diagonal (Liu 1990). The fallback for
    when SuperLU's factor does not show the structure, and the way to it with
    the compiled kernel (which runs the same loop, O(nnz(L))).
    """
    kernel = _kernel()
    if kernel is not None:  # the same in C (a column's rows in any order, and found so)
        r, c = _int64(r), _int64(c)
        ptr = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=n))])
        ptr, ind = kernel.symbolic(ptr, r[stable_argsort(c, n)])
        return np.frombuffer(ptr, dtype=np.int64), np.frombuffer(ind, dtype=np.int64)
    A = sp.csc_matrix((np.ones(r.size), (r, c)), shape=(n, n))
    A.sum_duplicates()  # sorted rows: a column's first is its parent
    ptr, ind = A.indptr, A.indices.astype(np.int64)
    kids = [[] for _ in range(n)]
    struct = [None] * n
    for j in range(n):
        rows = ind[ptr[j] : ptr[j + 1]]
        if kids[j]:
            rows = np.unique(np.concatenate([rows] + [struct[c][1:] for c in kids[j]]))
        struct[j] = rows
        if rows.size:
            kids[rows[0]].append(j)
    counts = np.array([x.size for x in struct], dtype=np.int64)
    return np.concatenate([[0], np.cumsum(counts)]), np.concatenate(struct)


def _int64(x):
    return np.ascontiguousarray(x, dtype=np.int64)


def _subtree_sizes(parent):
    """Nodes in each node's subtree, by doubling: ``log2(depth)`` passes over the forest.

    After pass ``i``, ``size[v]`` counts the nodes below ``v`` by fewer than
    ``2**i`` edges and ``up[v]`` is ``v``'s ancestor ``2**i`` edges up.
    """
    kernel = _kernel()
    if kernel is not None:  # in C, one pass (children precede their parents)
        return np.frombuffer(kernel.postorder(_int64(parent))[1], dtype=np.int64)
    size = np.ones(parent.size)
    up = parent.copy()
    while True:
        has = np.flatnonzero(up >= 0)
        if not has.size:
            return size.astype(np.int64)
        size += np.bincount(up[has], weights=size[has], minlength=parent.size)
        up[has] = up[up[has]]


def _postorder(parent):
    """A postorder of the forest: position -> node.

    Each node's children are visited largest subtree first (ties and roots
    in index order), so the small subtrees end next to their parent, where a
    supernode can take them in. A subtree's first position is its parent's
    plus the sizes of the siblings visited before it: summed up the tree by
    doubling.
    """
    kernel = _kernel()
    if kernel is not None:  # the same in C
        return np.frombuffer(kernel.postorder(_int64(parent))[0], dtype=np.int64)
    n = parent.size
    size = _subtree_sizes(parent)
    order = np.lexsort((np.where(parent >= 0, -size, 0), parent))  # siblings in visit order
    s = size[order]
    before = np.cumsum(s) - s
    group = np.concatenate([[True], parent[order][1:] != parent[order][:-1]])
    begin = np.empty(n, dtype=np.int64)
    begin[order] = before - np.maximum.accumulate(np.where(group, before, 0))
    up = parent.copy()
    while True:
        has = np.flatnonzero(up >= 0)
        if not has.size:
            break
        begin[has] += begin[up[has]]
        up[has] = up[up[has]]
    post = np.empty(n, dtype=np.int64)
    post[begin + size - 1] = np.arange(n)
    return post


def _partition(parent, below, per_supernode):
    """First column of each supernode: a relaxed partition of the postordered tree.

    A supernode is a range ``[a, b]`` of the postorder whose columns with a
    parent outside it are all children of one column ``P`` (or all roots):
    ``b``'s subtree cut below, or consecutive subtrees of ``P``'s children.
    Its rows below are then among ``P`` and ``P``'s rows, so the supernodes
    need no fill beyond ``L``'s. Its cost is modelled from its width
    ``k = b - a + 1`` and its rows below, ``m`` (``b``'s when ``[a, b]`` lies in
    ``b``'s subtree, else at most ``P`` and ``P``'s rows); the cheapest partition of
    ``[0, b]`` is the cheapest of ``[0, a)`` plus ``[a, b]`` over the ranges
    allowed.

    The model's flops, ``k^3/3 + m k^2 + m^2 k = ((k + m)^3 - m^3) / 3``, depend
    on ``a`` only through ``t - a`` with ``t = b + 1 + m``, and ``t`` stays the
    same along a chain of nested columns (``m`` one less at each): there the
    candidates' costs do not change, so the cheapest start in ``b``'s subtree
    is the previous column's or ``b``, and the window is scanned only where
    ``t`` changes (or the previous cheapest start leaves it).
    """
    n = parent.size
    col = np.arange(n)
    has = parent >= 0
    p = np.where(has, parent, 0)
    first = col - _subtree_sizes(parent) + 1  # each subtree's first column
    low = np.maximum(np.where(has, first[p], 0), col - _MAX_COLUMNS + 1)  # ranges [a, b]: a >= low
    inner = np.maximum(first, low)  # a >= inner: in b's subtree
    m_in, m_out = below.astype(float), np.where(has, below[p] + 1.0, 0.0)  # siblings' merged
    const = [  # the rest of a range's cost, given m
        per_supernode + _PER_ENTRY * m**2 - _PER_FLOP * m**3 / 3 for m in (m_in, m_out)
    ]
    t_in, t_out = (col + 1 + m_in).astype(np.int64), (col + 1 + m_out).astype(np.int64)
    top = _MAX_COLUMNS + int(max(m_in.max(), m_out.max())) + 1  # t - a <= top
    cube = _PER_FLOP / 3 * (top - np.arange(top + 1.0)) ** 3  # PF (t - a)^3 / 3 at top - t + a
    kernel = _kernel()
    if kernel is not None:  # the same program in C
        start = np.empty(n, dtype=np.int64)
        arrays = (t_in, inner, low, t_out, *const, cube)
        first = kernel.partition(*(np.ascontiguousarray(x) for x in arrays), top, start)
        return np.frombuffer(first, dtype=np.int64)
    cubes, costs, best = cube.tolist(), [0.0], np.zeros(n + 1)  # best[b]: of [0, b)

    def cheapest(t, a0, a1):
        """The least ``best[a] + PF (t - a)^3 / 3`` over ``[a0, a1)``, and the first such ``a``."""
        if a1 - a0 == 1:
            return costs[a0] + cubes[top - t + a0], a0
        if a1 - a0 <= _SMALL_WINDOW:  # cheaper in Python than in numpy
            return min((costs[a] + cubes[top - t + a], a) for a in range(a0, a1))
        seg = best[a0:a1] + cube[top - t + a0 : top - t + a1]
        i = int(seg.argmin())
        return float(seg[i]), a0 + i

    start = [0] * n
    t_cur = a_cur = arg = val = 0  # for t_cur, the cheapest start in [a_cur, b - 1]: arg, val
    lists = (
        t_in.tolist(),
        inner.tolist(),
        low.tolist(),
        t_out.tolist(),
        *(c.tolist() for c in const),
    )
    for b, (t, a_in, a_low, t2, c_in, c_out) in enumerate(zip(*lists, strict=True)):
        if t == t_cur and a_in >= a_cur and arg >= a_in:  # the same costs, and b's
            v = costs[b] + cubes[top - t + b]
            if v < val:
                val, arg = v, b
        else:
            (val, arg), t_cur, a_cur = cheapest(t, a_in, b + 1), t, a_in
        cost, a = val + c_in, arg
        if a_low < a_in:  # ranges from earlier siblings' subtrees
            v, i = cheapest(t2, a_low, a_in)
            if v + c_out <= cost:  # the lower start, as argmin over [low, b]
                cost, a = v + c_out, i
        costs.append(cost)
        best[b + 1] = cost
        start[b] = a
    return _starts(start)


def _starts(start):
    """The partition's first columns, from each column's cheapest start (a list)."""
    starts = []
    b = len(start) - 1
    while b >= 0:
        starts.append(start[b])
        b = start[b] - 1
    return np.array(starts[::-1], dtype=np.int64)


class SparseCholesky:
    """The symbolic analysis of a symmetric positive definite pattern, once.

    Parameters
    ----------
    row, col : array_like of int
        The pattern's entries: both triangles or one of them, no entry twice,
        every diagonal entry present. Values given to :meth:`factor` follow
        this order; when both triangles are given, those with ``row >= col``
        are read.
    n : int
        The order of the matrix.
    relax : bool, optional
        Amalgamate supernodes (the default); ``False`` keeps the fundamental
        ones, with no explicit zeros.
    supernode_cost : float, optional
        The time model's fixed cost of a supernode, in seconds: larger values
        make fewer, wider supernodes with more explicit zeros. By default the
        numeric phase's: tens of microseconds in Python, one in the compiled
        kernel.
    perm : array_like of int, optional
        An elimination order to use (position -> index; it is then
        postordered). By default a fill-reducing one: the approximate minimum
        degree ordering where the compiled kernel is built, else SuperLU's
        multiple minimum degree.

    Attributes
    ----------
    perm : ndarray of int
        The elimination order: position -> index of the caller's matrix.
    n_fundamental : int
        Fundamental supernodes (columns with nested structures), before
        amalgamation.
    n_supernodes : int
        Supernodes after amalgamation.
    nnz_l : int
        Entries of ``L`` (the exact fill).
    factor_nnz : int
        Entries the factor stores: ``nnz_l`` and the supernodes' explicit zeros.
    flops : float
        Dense flops of the supernodes' fronts in one factorisation.
    """

    def __init__(self, row, col, n, *, relax=True, supernode_cost=None, perm=None):
        n = int(n)
        if n < 1:
            raise ValueError("n must be positive")
        self._kernel = _kernel()
        # the kernel's analysis takes the pairs in any order; SuperLU's wants them sorted
        lo, hi, take, where = _unique_pairs(row, col, n, ordered=self._kernel is None)
        self.n, self.n_entries = n, where.size
        if perm is not None:
            perm = np.asarray(perm, dtype=np.int64)
            if not np.array_equal(np.sort(perm), np.arange(n)):
                raise ValueError(f"perm must be a permutation of range({n})")
            ptr = ind = None
        elif self._kernel is not None:  # AMD in C; its structure from the kernel too
            perm, ptr, ind = _approximate_minimum_degree(self._kernel, lo, hi, n), None, None
        else:
            perm, ptr, ind = _minimum_degree(lo, hi, n)
        pinv = np.empty(n, dtype=np.int64)
        pinv[perm] = np.arange(n)
        r, c = pinv[lo], pinv[hi]
        r, c = np.maximum(r, c), np.minimum(r, c)
        if ptr is None:
            off = r > c
            ptr, ind = _elimination(r[off], c[off], n)
        parent = np.full(n, -1, dtype=np.int64)
        has = ptr[1:] > ptr[:-1]
        parent[has] = np.minimum.reduceat(ind, ptr[:-1][has])  # the first row below the diagonal
        # renumber in postorder (L's columns stay where they are in ind)
        post = _postorder(parent)
        new = np.empty(n, dtype=np.int64)
        new[post] = np.arange(n)
        parent = np.where(parent[post] >= 0, new[parent[post]], -1)
        self.perm = perm[post]
        r, c = new[r], new[c]
        below = np.diff(ptr)[post]
        self.nnz_l = int(ptr[-1]) + n
        fundamental = _fundamental(parent, below)
        self.n_fundamental = fundamental.size
        if supernode_cost is None:
            supernode_cost = _PER_SUPERNODE if self._kernel is None else _KERNEL_PER_SUPERNODE
        starts = _partition(parent, below, supernode_cost) if relax else fundamental
        self._supernodes(starts, parent, ptr[post], below, new[ind])
        self._maps(r, c, take, where)
        if self._kernel is not None:
            self._plan = self._kernel_plan()

    def _supernodes(self, starts, parent, begin, below, ind):
        """Columns, rows below, parent and children of each supernode, as flat arrays.

        Column ``j``'s rows below the diagonal are ``ind[begin[j] : begin[j] + below[j]]``.
        Supernode ``j``'s rows below are ``rows[rows_ptr[j] : rows_ptr[j + 1]]``
        (increasing), its children ``kids[kids_ptr[j] : kids_ptr[j + 1]]``
        (increasing).
        """
        n = self.n
        ends = np.append(starts[1:], n)
        ns = starts.size
        k = ends - starts
        sup = np.repeat(np.arange(ns), k)  # column -> supernode
        self.n_supernodes = ns
        self._start = starts.tolist()
        # rows below: those of the columns whose parent is outside the supernode
        exits = np.flatnonzero((parent < 0) | (parent >= ends[sup]))
        count = below[exits]
        at = np.repeat(begin[exits] - (np.cumsum(count) - count), count) + np.arange(count.sum())
        key = np.repeat(sup[exits] * n, count) + ind[at]
        key = key[stable_argsort(key, n * n)]
        distinct = np.ones(key.size, dtype=bool)
        distinct[1:] = key[1:] != key[:-1]
        owner, rows = np.divmod(key[distinct], n)
        m = np.bincount(owner, minlength=ns)
        rows_ptr = np.concatenate([[0], np.cumsum(m)])
        sparent = np.full(ns, -1, dtype=np.int64)
        sparent[m > 0] = sup[rows[rows_ptr[:-1][m > 0]]]  # the first row's supernode
        kids = np.flatnonzero(sparent >= 0)
        kids = kids[np.argsort(sparent[kids], kind="stable")]
        kids_ptr = np.searchsorted(sparent[kids], np.arange(ns + 1))
        self._sup = sup
        self._ks, self._ms, self._sparent = k, m, sparent
        self._rows_flat, self._rows_ptr = rows, rows_ptr
        self._kids_flat, self._kids_ptr = kids, kids_ptr
        self.factor_nnz = int(np.sum(k * (k + 1) // 2 + k * m))
        self.flops = float(np.sum(((k + m) ** 3.0 - m**3.0) / 3.0))  # dense flops of the fronts
        # the factor's storage: supernode j's [L11' | L21'] (k x (k + m), Fortran)
        self._offsets = np.concatenate([[0], np.cumsum(k * (k + m))])
        # column i of supernode j: L11's diagonal at offset[j] + (i - start[j]) (k + 1)
        step = np.repeat(k + 1, k)
        self._diag = np.repeat(self._offsets[:-1], k) + (np.arange(n) - np.repeat(starts, k)) * step

    def _lists(self):
        """The numpy path's per-supernode lists, split from the flat arrays."""
        ns, k, m = self.n_supernodes, self._ks, self._ms
        self._end = (self._ks + np.asarray(self._start)).tolist()
        self._k, self._m, self._parent = k.tolist(), m.tolist(), self._sparent.tolist()
        self._offset = self._offsets.tolist()
        self._rows = _split(self._rows_flat, self._rows_ptr[1:-1])
        kids = _split(self._kids_flat, self._kids_ptr[1:-1])
        self._kids = [x.tolist() for x in kids]
        self._bounds = self._bounds_arr.tolist()
        self._assemble = _split(self._assemble_flat, self._bounds_arr[1:-1])
        ends = self._rows_ptr[1:].tolist()
        self._rel = [
            self._rel_flat[e - c : e] if p >= 0 else None
            for e, c, p in zip(ends, self._m, self._parent, strict=True)
        ]
        # q: how many of a child's rows are among its parent's columns
        kp = k[np.maximum(self._sparent, 0)]
        owner = np.repeat(np.arange(ns), m)
        self._q = np.bincount(owner[self._rel_flat < kp[owner]], minlength=ns).tolist()

    def seconds(self):
        """Estimated seconds of one mixed-model evaluation on this pattern.

        A factorisation, the selected inverse and a few solves: a fixed cost
        per supernode (their Python loops, or the compiled kernel's calls) and
        the fronts' dense flops.
        """
        per_supernode, per_flop = (
            (_EVAL_PER_SUPERNODE, _EVAL_PER_FLOP)
            if self._kernel is None
            else (_KERNEL_EVAL_PER_SUPERNODE, _KERNEL_EVAL_PER_FLOP)
        )
        return per_supernode * self.n_supernodes + per_flop * self.flops

    def _maps(self, r, c, take, where):
        """Where each value goes in its front, and each child's rows in its parent's."""
        ns, m = self.n_supernodes, self._ms
        sup = self._sup[c]  # each pair's supernode
        order = stable_argsort(sup, ns)  # pairs grouped by supernode
        self._bounds_arr = np.searchsorted(sup[order], np.arange(ns + 1))
        self._source = take[order]  # sorted position -> entry whose value it takes
        pos = np.empty(order.size, dtype=np.intp)
        pos[order] = np.arange(order.size)
        self._result = pos[where]  # entry -> sorted position (the inverse's output)
        self._assemble_flat, self._rel_flat = self._positions(r[order], c[order], self._kernel)
        if self._kernel is not None:
            return
        self._lists()
        # Most fronts keep flat maps of their m x m update (the lower triangle into
        # the parent's [F11 | F12], mirrored to its upper triangle, and F22; the
        # upper triangle, all zeros, into a last, discarded slot): one take or
        # add.at. The largest, past the maps' budget, are extended-added and
        # gathered by two blocks of flat positions formed from those O(m) indices
        # at each use. int64 m x m maps for every front held 1.4 GB at 10,000
        # banded levels with long-range links.
        self._scatter, self._gather = [None] * ns, [None] * ns
        # the fronts with fewest rows below get maps while their update entries
        # sum to at most _MAP_SHARE times the factor's (two intp maps each, so
        # half the factor's bytes; intp: take and add.at convert others). More
        # maps bought no time on the bench's designs, only memory
        m2 = m.astype(np.int64) ** 2
        by_size = np.argsort(m2, kind="stable")
        mapped = np.zeros(ns, dtype=bool)
        mapped[by_size[np.cumsum(m2[by_size]) <= _MAP_SHARE * self.factor_nnz]] = True
        above = np.tri(int(np.sqrt(m2[mapped].max())) if mapped.any() else 0, k=-1, dtype=bool)
        for j in np.flatnonzero(mapped):
            p, rel = self._parent[j], self._rel[j]
            if p < 0:
                continue
            kp, mj = self._k[p], self._m[j]
            # as [b, a] for row a and column b (Fortran order flattened) of the
            # parent's front, whose positions increase with the rows
            sp_, q = kp + self._m[p], self._q[j]
            mirror = np.add.outer(rel, kp * rel)  # min(a, b) + max(a, b) kp where a >= b
            gather = np.where(above[:mj, :mj], mirror.T, mirror)
            np.add.outer((rel[q:] - kp) * (sp_ - kp), rel[q:] + kp * (sp_ - 1), out=gather[q:, q:])
            self._gather[j] = gather.ravel()
            self._scatter[j] = np.where(above[:mj, :mj], kp * sp_ + (sp_ - kp) ** 2, gather).ravel()
        # the inverse's fronts can go once their last child (lowest index) has read them
        self._last_child = [min(kids) if kids else -1 for kids in self._kids]
        self._flat = {}  # solves' scatter maps, by the right-hand side's width

    def _positions(self, r, c, kernel):
        """Each value's position in its front, each child's rows' in its parent's.

        ``(r, c)``: the pairs grouped by supernode (``_bounds_arr``). Returns
        ``(assemble, rel)`` as flat arrays: value (row ``i >= `` column ``j``) ->
        ``[F11 | F12][j, i]`` (the upper triangle: ``i``'s position in the front
        among the columns, or after them among the rows below), flattened in
        Fortran order; supernode ``j``'s rows below -> positions in its parent's
        front (a front's rows are its columns, then the rows below, increasing).
        By the kernel (one pass with a table) or by ``searchsorted``.
        """
        ns, n = self.n_supernodes, self.n
        k, m, rows, rows_ptr = self._ks, self._ms, self._rows_flat, self._rows_ptr
        if kernel is not None:
            got = kernel.positions(*map(_int64, (k, self._start, rows_ptr, rows,
                                                 self._bounds_arr, r, c, self._kids_ptr,
                                                 self._kids_flat)))  # fmt: skip
            if got is None:
                raise AssertionError("a row is missing from its front")
            return tuple(np.frombuffer(x, dtype=np.int64) for x in got)
        sup = np.repeat(np.arange(ns), np.diff(self._bounds_arr))
        start, kk = np.asarray(self._start)[sup], k[sup]
        at = r - start
        out = np.flatnonzero(at >= kk)
        owner = np.repeat(np.arange(ns), m)
        below = owner * n + rows  # sorted
        key = sup[out] * n + r[out]
        i = np.searchsorted(below, key)
        if not np.array_equal(below.take(i, mode="clip"), key):
            raise AssertionError("a value's row is missing from its front")
        at[out] = kk[out] + i - rows_ptr[sup[out]]
        assemble = c - start + at * kk
        # child -> parent: each child's rows as positions in its parent's front (a
        # front's rows are its columns, then the rows below, increasing): every
        # child's rows looked up at once among all fronts' (supernode, row) keys
        first = np.concatenate([[0], np.cumsum(k + m)])  # each front's first key
        front = np.empty(first[-1], dtype=np.int64)  # its columns, then its rows below
        col = np.arange(n)
        front[first[self._sup] + col - np.asarray(self._start)[self._sup]] = self._sup * n + col
        front[np.repeat(first[:-1] + k - rows_ptr[:-1], m) + np.arange(rows.size)] = below
        p = self._sparent[owner]  # every supernode with rows below has a parent
        key = p * n + rows
        at = np.searchsorted(front, key)
        if not np.array_equal(front.take(at, mode="clip"), key):
            raise AssertionError("a supernode's rows are missing from its parent's front")
        return assemble, at - first[p]

    def _kernel_plan(self):
        """The numeric phase's index arrays, copied once into the compiled kernel."""
        k, m = self._ks.astype(np.int64), self._ms.astype(np.int64)
        kids, kids_ptr = self._kids_flat, self._kids_ptr
        last_child = np.full(self.n_supernodes, -1, dtype=np.int64)  # the lowest-numbered
        has = kids_ptr[1:] > kids_ptr[:-1]
        last_child[has] = kids[kids_ptr[:-1][has]]
        self._kernel_start = np.append(self._start, self.n).astype(np.int64)
        self._kernel_rinv = int(np.sum(k * k))  # R^-1 of each supernode, one after another

        def ints(x):
            return np.ascontiguousarray(x, dtype=np.int64)

        return self._kernel.plan(
            *map(ints, (k, m, self._offsets, self._sparent, self._rows_ptr, self._rows_flat,
                        self._rel_flat, kids_ptr, kids, last_child, self._bounds_arr,
                        self._assemble_flat)),
            ints(np.concatenate([[0], np.cumsum(k * k)])),
        )  # fmt: skip

    def _flat_rows(self, width):
        """The rows below each supernode as flat indices into a C-ordered (n, width) array."""
        if width not in self._flat:
            if len(self._flat) > 4:
                self._flat.clear()
            cols = np.arange(width)
            self._flat[width] = [(x[:, None] * width + cols).ravel() for x in self._rows]
        return self._flat[width]

    def _extend_add(self, front, F22, c, U):
        """Add child ``c``'s update ``U`` (lower triangle; upper 0) to its parent's front."""
        rel, q = self._rel[c], self._q[c]
        k, m = front.shape[0], F22.shape[0]
        if q:  # rows among the parent's columns: [F11 | F12]'s upper triangle
            at = rel[:q, None] + k * rel  # flat (Fortran) positions: one index array is
            front.ravel(order="F")[at] += U[:, :q].T  # a plain take/put, unlike np.ix_
        if q < rel.size:  # the rest: F22's lower triangle
            r2 = rel[q:] - k
            F22.ravel(order="F")[r2[:, None] + m * r2] += U[q:, q:]

    def factor(self, values):
        """The Cholesky factor of the matrix with these values on the pattern.

        Parameters
        ----------
        values : array_like of float
            One value per pattern entry, in the order given to the constructor.

        Returns
        -------
        CholeskyFactor

        Raises
        ------
        numpy.linalg.LinAlgError
            If the matrix is not positive definite.
        """
        if np.iscomplexobj(values):
            raise TypeError("values must be real")
        values = np.asarray(values, dtype=float)
        if values.shape != (self.n_entries,):
            raise ValueError(f"expected {self.n_entries} values, got shape {values.shape}")
        v = values[self._source]
        storage = np.empty(int(self._offsets[-1]))
        if self._kernel is not None:  # with R^-1 of each supernode
            rinv = np.empty(self._kernel_rinv)
            if self._kernel.factor(self._plan, v, storage, rinv):
                raise np.linalg.LinAlgError("the matrix is not positive definite")
            return CholeskyFactor(self, storage, None, rinv)
        views = []
        update = [None] * self.n_supernodes
        bounds, offset, scatter = self._bounds, self._offset, self._scatter
        potrf, trsm, syrk = linalg.lapack.dpotrf, linalg.blas.dtrsm, linalg.blas.dsyrk
        for j, (k, m) in enumerate(zip(self._k, self._m, strict=True)):
            ks = k * (k + m)
            buf = np.zeros(ks + m * m + 1)  # [F11 | F12], F22, the discarded slot
            buf[self._assemble[j]] = v[bounds[j] : bounds[j + 1]]
            front = buf[:ks].reshape((k, k + m), order="F")
            F22 = buf[ks:-1].reshape((m, m), order="F")
            for c in self._kids[j]:  # extend-add
                if scatter[c] is not None:
                    np.add.at(buf, scatter[c], update[c].ravel(order="F"))
                else:
                    self._extend_add(front, F22, c, update[c])
                update[c] = None
            panel = storage[offset[j] : offset[j + 1]].reshape((k, k + m), order="F")
            panel[...] = front
            R = panel[:, :k]  # F11 = R'R, R = L11' upper triangular, in place
            if potrf(R, lower=0, clean=1, overwrite_a=1)[1]:
                raise np.linalg.LinAlgError("the matrix is not positive definite")
            W = panel[:, k:]
            if m:
                trsm(1.0, R, W, lower=0, trans_a=1, overwrite_b=1)  # L21' = R^-T F12
                # lower: F22 - L21 L21' (its upper triangle stays 0)
                update[j] = syrk(-1.0, W, beta=1.0, c=F22, trans=1, lower=1, overwrite_c=1)
            views.append((R, W))
        return CholeskyFactor(self, storage, views)


def _split(a, cuts):
    """``np.split(a, cuts)`` by plain slices (np.split costs ~10 us a piece)."""
    edges = [0, *np.asarray(cuts).tolist(), len(a)]
    return [a[i:j] for i, j in zip(edges[:-1], edges[1:], strict=True)]


def _fundamental(parent, below):
    """First columns of the fundamental supernodes: chains of only children, nested rows."""
    n = parent.size
    kids = np.bincount(parent[parent >= 0], minlength=n)
    j = np.arange(n - 1)
    chained = (parent[j] == j + 1) & (kids[j + 1] == 1) & (below[j] == below[j + 1] + 1)
    return np.flatnonzero(np.concatenate([[True], ~chained]))


class CholeskyFactor:
    """``S[perm][:, perm] = L L'``, stored by the supernodes of a :class:`SparseCholesky`.

    Attributes
    ----------
    logdet : float
        ``log|S|``.
    """

    def __init__(self, symbolic, storage, views, rinv=None):
        self._sym, self._storage, self._views = symbolic, storage, views
        self._rinv = rinv
        self.logdet = 2.0 * float(np.sum(np.log(storage[symbolic._diag])))
        if not np.isfinite(self.logdet):
            raise np.linalg.LinAlgError("the matrix is not positive definite")

    def solve(self, rhs):
        """``S^-1 rhs`` for ``rhs`` of shape ``(n,)`` or ``(n, m)``."""
        sym = self._sym
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim not in (1, 2) or rhs.shape[0] != sym.n:
            raise ValueError(f"rhs must be of shape ({sym.n},) or ({sym.n}, m)")
        x = np.ascontiguousarray(rhs[sym.perm].reshape(sym.n, -1))
        if x.size == 0:
            return x.reshape(rhs.shape)
        if sym._kernel is not None:
            rinv = self._block_inverses()
            sym._kernel.solve(sym._plan, self._storage, rinv, sym._kernel_start, x, x.shape[1])
            out = np.empty_like(x)
            out[sym.perm] = x
            return out.reshape(rhs.shape)
        start, end, below = sym._start, sym._end, sym._rows
        flat, xf = sym._flat_rows(x.shape[1]), x.reshape(-1)
        rinv = self._block_inverses()
        for j, (_, W) in enumerate(self._views):  # L y = b
            xj = x[start[j] : end[j]]
            xj[...] = rinv[j].T @ xj  # y_J = L11^-1 b_J
            if W.shape[1]:
                np.subtract.at(xf, flat[j], (W.T @ xj).ravel())  # b_I -= L21 y_J
        for j in range(sym.n_supernodes - 1, -1, -1):  # L' x = y
            W = self._views[j][1]
            xj = x[start[j] : end[j]]
            if W.shape[1]:
                xj -= W @ x.take(below[j], axis=0)
            xj[...] = rinv[j] @ xj
        out = np.empty_like(x)
        out[sym.perm] = x
        return out.reshape(rhs.shape)

    def _block_inverses(self):
        """``R^-1 = L11^-T`` of each supernode, once: a product is cheaper than a solve.

        Each is a small triangular inverse of a block of a positive definite
        factor, so the products lose no more than ``dtrsm`` would.
        """
        if self._rinv is None:  # the kernel's factor comes with them
            trtri = linalg.lapack.dtrtri
            self._rinv = [trtri(R, lower=0)[0] for R, _ in self._views]
        return self._rinv

    def inverse_on_pattern(self):
        """The entries of ``S^-1`` on the pattern, one per entry given to the constructor.

        From the root down, with ``Ri = L11^-T`` and ``V = Ri L21' = Y'``:
        ``Z_IJ' = -V Z_II`` and ``Z_JJ = Ri Ri' + V Z_II V'``, computed as
        ``G [Ri | Z_IJ']'`` with ``G = [Ri | -V]``.
        """
        sym = self._sym
        out = np.empty(sym._source.size)
        if sym._kernel is not None:
            sym._kernel.inverse(sym._plan, self._storage, self._block_inverses(), out)
            return out[sym._result]
        fronts = [None] * sym.n_supernodes
        trmm, rinv = linalg.blas.dtrmm, self._block_inverses()
        for j in range(sym.n_supernodes - 1, -1, -1):
            W = self._views[j][1]
            k, m = W.shape
            ks = k * (k + m)
            buf = np.empty(ks + m * m)  # [Z_JJ | Z_IJ'] (k x s, Fortran), Z_II
            Z = buf[:ks].reshape((k, k + m), order="F")
            G = np.empty((k, k + m), order="F")
            Ri = G[:, :k]
            Ri[...] = rinv[j]
            if m:
                p = sym._parent[j]
                Zii = buf[ks:].reshape((m, m), order="F")
                if sym._gather[j] is not None:
                    np.take(fronts[p], sym._gather[j], out=buf[ks:])  # from the parent's front
                else:
                    self._gather(fronts[p], p, j, Zii)
                G[:, k:] = trmm(-1.0, Ri, W, lower=0)
                Z[:, :k] = Ri
                np.matmul(G[:, k:], Zii, out=Z[:, k:])
                Z[:, :k] = G @ Z.T
                if sym._last_child[p] == j:
                    fronts[p] = None
            else:
                np.matmul(Ri, Ri.T, out=Z)
            if sym._kids[j]:
                fronts[j] = buf
            out[sym._bounds[j] : sym._bounds[j + 1]] = buf[sym._assemble[j]]
        return out[sym._result]

    def _gather(self, front, p, j, Zii):
        """``Z_II`` of supernode ``j`` (both triangles) from its parent ``p``'s front."""
        sym = self._sym
        kp, mp = sym._k[p], sym._m[p]
        ksp = kp * (kp + mp)
        # front: [Z_JJ | Z_IJ'] (kp x (kp + mp), Fortran, both triangles), then Z_II
        rel, q = sym._rel[j], sym._q[j]
        if q:
            Zii[:q] = front[rel[:q, None] + kp * rel]  # P[rel[:q]][:, rel], flat positions
            Zii[q:, :q] = Zii[:q, q:].T
        if q < rel.size:
            r2 = rel[q:] - kp
            Zii[q:, q:] = front[ksp + r2[:, None] + mp * r2]
