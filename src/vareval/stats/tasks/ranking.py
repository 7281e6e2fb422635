"""Across tasks: many methods on many data sets, by ranks (Demsar 2006; Benavoli et al. 2016/2017).

The input is a score matrix with one row per data set (or task) and one
column per method. Methods are ranked within each data set (1 = best,
mid-ranks for ties) and the analysis works on ranks, so the scales of the
data sets do not matter:

- the Friedman test that all methods have the same expected rank, with
  Iman and Davenport's F form, which is less conservative than the
  chi-square;
- the Nemenyi post-hoc test and its critical difference ``CD = q_alpha
  sqrt(k (k + 1) / (12 N))`` with ``q_alpha`` the studentised range quantile
  for k means and infinite df; two methods whose mean ranks differ by more
  than CD differ;
- the Wilcoxon signed-rank test for every pair with Holm's adjustment
  (Benavoli et al. 2016 recommend it over the mean-rank tests, whose
  outcome for a pair depends on the other methods in the comparison);
- the Bayesian signed-rank test (Benavoli et al. 2014, 2017) with a region
  of practical equivalence, posterior probabilities as baycomp computes them.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._blas import one_blas_thread
from vareval.stats._checks import as_positive_int, as_rng, check_size, renamed_keywords
from vareval.stats._lazy import stats
from vareval.stats._result import Result, renamed


@dataclasses.dataclass(frozen=True, repr=False)
class FriedmanResult(Result):
    """Friedman's test of equal expected ranks, with Iman and Davenport's F.

    No figure: one omnibus test; rank_methods draws the mean ranks it tests (a critical-
    difference diagram).

    Attributes
    ----------
    statistic : float
        Friedman's chi-square (tie-corrected, as scipy), df ``k - 1``.
    pvalue : float
        Its chi-square p-value.
    iman_davenport : float
        ``F = (N - 1) chi2 / (N (k - 1) - chi2)`` (Iman and Davenport 1980).
    iman_davenport_pvalue : float
        Upper tail of F with ``(k - 1, (k - 1)(N - 1))`` df; NaN where F is
        infinite (every data set ranks the methods alike), where the F
        approximation fails.
    exact_pvalue : float
        Where F is infinite: the exact permutation p-value of Friedman's
        statistic, ``m ** -(N - 1)`` with ``m`` the distinct arrangements of
        one data set's ranks (``k!`` without ties): the chance that all N
        data sets rank the methods alike. NaN otherwise.
    df : (float, float)
        The F test's degrees of freedom.
    mean_ranks : ndarray
        Mean rank of each method (1 = best).
    n_datasets, n_methods : int
    """

    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    exact_pvalue: float
    df: tuple
    mean_ranks: np.ndarray
    n_datasets: int
    n_methods: int


@dataclasses.dataclass(frozen=True, repr=False)
class Ranking(Result):
    """Friedman, Nemenyi and pairwise Wilcoxon-Holm for k methods on N data sets.

    Attributes
    ----------
    names : list of str
        Methods in input order.
    mean_ranks : ndarray
        Mean rank per method (1 = best).
    order : ndarray
        Indices of ``names`` from best to worst mean rank.
    friedman : FriedmanResult
    critical_difference : float
        Nemenyi's CD at ``alpha``.
    nemenyi_pvalue : ndarray, shape (k, k)
        Nemenyi's p-values for each pair (diagonal 1).
    wilcoxon_pvalue, wilcoxon_pvalue_holm : ndarray, shape (k, k)
        Wilcoxon signed-rank p-values per pair over the data sets, raw and
        Holm-adjusted over the ``k (k - 1) / 2`` pairs (diagonal 1).
    cliques : list of list of int
        Maximal runs of methods, in ``order``, whose mean ranks lie within
        CD of each other: the bars of a CD diagram.
    alpha : float
    higher_is_better : bool
    """

    names: list
    mean_ranks: np.ndarray
    order: np.ndarray
    friedman: FriedmanResult
    critical_difference: float
    nemenyi_pvalue: np.ndarray
    wilcoxon_pvalue: np.ndarray
    wilcoxon_pvalue_holm: np.ndarray
    cliques: list
    alpha: float
    higher_is_better: bool

    def plot(self, *, width: float = 7.0):
        """The critical-difference diagram (a matplotlib Figure)."""
        from vareval.plots.ranking import cd_diagram

        return cd_diagram(self, width=width)

    def omnibus_lines(self, fmt) -> list[str]:
        """Friedman and Iman-Davenport, led by Wilcoxon when two methods are compared.

        With two methods Friedman's test is a sign test; the Wilcoxon signed-rank
        test (autorank's choice) uses the sizes of the differences too. Where F
        is infinite its approximation fails and the exact p-value is given.
        """
        f = self.friedman
        df = f"df = ({f.df[0]:g}, {f.df[1]:g})"
        if f.iman_davenport == f.iman_davenport and f.iman_davenport < float("inf"):
            p = fmt(f.iman_davenport_pvalue)
            iman = f"Iman-Davenport F = {f.iman_davenport:.3f}, {df}, p = {p}"
        else:
            iman = (
                "Iman-Davenport F is infinite (every data set ranks the methods alike), where its "
                f"F approximation fails; exact permutation p = {fmt(f.exact_pvalue)}"
            )
        chi2 = f"Friedman chi2 = {f.statistic:.3f}, df = {f.df[0]:g}, p = {fmt(f.pvalue)}"
        friedman = f"{chi2}; {iman}"
        if f.n_methods != 2:
            return [friedman]
        i, j = self.order
        lead = (
            f"two methods: Wilcoxon signed-rank test over the {f.n_datasets} data sets, "
            f"p = {fmt(self.wilcoxon_pvalue[i, j])} (the test for a pair, as autorank)"
        )
        return [lead, f"  (Friedman with two methods is a sign test: {friedman})"]


@dataclasses.dataclass(frozen=True, repr=False)
class BayesianSignedRank(Result):
    """Posterior of the Bayesian signed-rank test of A against B.

    Attributes
    ----------
    p_left, p_rope, p_right : float
        Share of posterior samples in which "A better by more than the
        rope", "within the rope" and "B better by more than the rope" is the
        most probable of the three (baycomp's ``probs()``).
    mean_left, mean_rope, mean_right : float
        Posterior means of the three probabilities themselves.
    rope : float
        Half-width of the region of practical equivalence.
    prior : float
        Strength of the Dirichlet-process prior's pseudo-observation at 0.
    n_resamples : int
        Posterior samples.
    n : int
        Data sets (paired differences).
    """

    p_left: float
    p_rope: float
    p_right: float
    mean_left: float
    mean_rope: float
    mean_right: float
    rope: float
    prior: float
    n_resamples: int
    n: int

    _deprecated = {"n_samples": renamed("n_resamples")}


def _score_matrix(scores, *, min_rows: int = 2) -> np.ndarray:
    """Validate a data sets x methods matrix of finite scores."""
    try:
        x = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError("`scores` must be numbers (data sets x methods).") from None
    if x.ndim != 2:
        raise ArgumentError(
            f"`scores` must be two-dimensional (data sets x methods); got {x.ndim} dimension(s)."
        )
    if x.shape[1] < 2:
        raise ArgumentError(f"`scores` needs at least 2 methods (columns); got {x.shape[1]}.")
    if x.shape[0] < min_rows:
        raise ArgumentError(
            f"`scores` needs at least {min_rows} data sets (rows) to rank methods across them; "
            f"got {x.shape[0]}."
        )
    bad = ~np.isfinite(x)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ArgumentError(
            f"`scores` has {int(bad.sum())} NaN or infinite value(s), first at data set {row}, "
            f"method {col}; every method needs a score on every data set."
        )
    return x


def ranks(scores, *, higher_is_better: bool = True) -> np.ndarray:
    """Rank the methods within each data set: 1 = best, ties get mid-ranks.

    Scores that agree to 12 significant digits of the data set's largest
    magnitude tie: two means of equally good runs, summed in different
    orders, must not be split by floating-point rounding.
    """
    x = _score_matrix(scores, min_rows=1)
    scale = np.abs(x).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    x = np.round(x / scale, 12)
    x = -x if higher_is_better else x
    order = np.argsort(x, axis=1)  # mid-ranks as scipy.stats.rankdata, every row by one sort
    x = np.take_along_axis(x, order, axis=1)
    sorted_ranks = np.broadcast_to(np.arange(1.0, x.shape[1] + 1), x.shape).copy()
    same = x[:, 1:] == x[:, :-1]
    tied = np.flatnonzero(same.any(axis=1))
    if tied.size:
        first, last = _runs(same[tied])
        sorted_ranks[tied] = 0.5 * (first + last) + 1.0
    out = np.empty(x.shape)
    np.put_along_axis(out, order, sorted_ranks, axis=1)
    return out


def friedman(scores, *, higher_is_better: bool = True) -> FriedmanResult:
    """Friedman's test that k methods have equal expected ranks over N data sets.

    The chi-square ``12 N / (k (k + 1)) sum_j (R_j - (k + 1) / 2)^2`` (tie
    corrected as in scipy) and Iman and Davenport's ``F`` (Demsar 2006,
    eqs. 1-2) test the null that the methods' ranks are exchangeable within
    each data set.
    """
    r = ranks(scores, higher_is_better=higher_is_better)
    n, k = r.shape
    if n < 2:
        raise ArgumentError(f"`scores` needs at least 2 data sets for Friedman's test; got {n}.")
    mean_ranks = r.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * np.sum((mean_ranks - (k + 1) / 2) ** 2)
    # Tie groups of every row at once: mid-ranks are multiples of 1/2.
    keys = (2 * r).astype(np.int64) + 2 * (k + 1) * np.arange(n)[:, None]
    c = np.unique(keys, return_counts=True)[1].astype(float)
    ties = np.sum(c**3 - c)
    correction = 1.0 - ties / (n * k * (k * k - 1))
    chi2 = chi2 / correction if correction > 0 else 0.0
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denom = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denom if denom > 0 else np.inf
    exact = np.nan
    if not np.isfinite(f) and (r == r[0]).all():  # F's approximation fails: count exactly
        ties = np.unique(r[0], return_counts=True)[1]
        log_m = special.gammaln(k + 1) - special.gammaln(ties + 1).sum()
        exact = float(np.exp(-(n - 1) * log_m))
    return FriedmanResult(
        statistic=float(chi2),
        pvalue=float(special.chdtrc(df1, chi2)),  # scipy.stats.chi2.sf, without its overhead
        iman_davenport=float(f),
        iman_davenport_pvalue=float(special.fdtrc(df1, df2, f)) if np.isfinite(f) else np.nan,
        exact_pvalue=exact,
        df=(float(df1), float(df2)),
        mean_ranks=mean_ranks,
        n_datasets=n,
        n_methods=k,
    )


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks for k methods on n data sets.

    ``CD = q_alpha sqrt(k (k + 1) / (12 n))``, with ``q_alpha`` the upper
    ``alpha`` quantile of the studentised range of k means with infinite df
    (Demsar 2006 tabulates ``q_alpha / sqrt 2`` with ``6 n`` instead).
    """
    k = as_positive_int(k, "k", minimum=2)
    n = as_positive_int(n, "n", minimum=1)
    _check_alpha(alpha)
    return float(range_isf(alpha, k) * np.sqrt(k * (k + 1) / (12 * n)))


@functools.cache
def _quadrature():
    """Gauss-Legendre nodes on [-10, 10] for the integral over the normal density.

    ``(z, w phi(z), Phi(z))``, computed at first use: the nodes are a 256 x 256
    eigenproblem, ~6 ms of CPU on one BLAS thread but up to 0.5 s on OpenBLAS's
    threads on a busy machine (the same bits either way).
    """
    with one_blas_thread():
        z, w = (10 * v for v in np.polynomial.legendre.leggauss(256))
    w = w * (np.exp(-(z**2) / 2.0) / np.sqrt(2 * np.pi))  # scipy.stats.norm.pdf, not imported
    return z, w, special.ndtr(z)


def _range_integrals(q, k: int, density: bool = False):
    """``P(R > q)``, with ``density`` also R's density at ``q``: :func:`range_sf`'s quadrature."""
    q = np.asarray(q, dtype=float)
    nodes, node_weight, node_phi = _quadrature()
    weight = node_weight * node_phi ** (k - 1)
    keep = weight > 0  # nodes whose weight underflows add exactly 0: skip them
    z, phi, weight = nodes[keep], node_phi[keep], weight[keep]
    shifted = z - q[..., None]
    log_rest = special.ndtr(shifted)
    log_rest /= -phi
    with np.errstate(divide="ignore"):
        np.log1p(log_rest, out=log_rest)  # log(1 - Phi(z - q) / Phi(z))
    sf = np.clip(-k * np.einsum("...j,j->...", np.expm1((k - 1) * log_rest), weight), 0, 1)
    if not density:
        return sf
    # k (k - 1) int phi(z) phi(z - q) (Phi(z) - Phi(z - q))^(k - 2) dz
    kernel = np.exp(-0.5 * shifted**2) * np.exp(log_rest) ** (k - 2)
    return sf, k * (k - 1) / np.sqrt(2 * np.pi) * np.einsum("...j,j->...", kernel, weight / phi)


def range_sf(q, k: int) -> np.ndarray:
    """``P(R > q)`` for ``R`` the range of ``k`` i.i.d. standard normals.

    The studentized range with infinite df (scipy's
    ``studentized_range.sf(q, k, inf)``, which integrates numerically per
    value), vectorised over ``q``: ``k int phi(z) [Phi(z)^(k-1) - (Phi(z) -
    Phi(z - q))^(k-1)] dz`` by 256-point Gauss-Legendre quadrature, the
    difference of powers as ``-expm1`` so small tails keep their digits.
    """
    return _range_integrals(q, k)


# Chebyshev interpolation of log P(R > q) on unit intervals of q (see _range_sf_many).
_DEGREE = 16
_NODES = np.cos(np.pi * (np.arange(_DEGREE + 1) + 0.5) / (_DEGREE + 1))
_TO_COEFFICIENTS = np.linalg.inv(np.polynomial.chebyshev.chebvander(_NODES, _DEGREE)).T


def _range_sf_many(q: np.ndarray, k: int) -> np.ndarray:
    """:func:`range_sf` at many ``q`` (sorted, distinct), to about 1e-12 relative.

    On each unit interval ``[m, m + 1)`` holding more than ``4 (D + 1)``
    values, ``log P(R > q)`` (analytic) is interpolated at the ``D + 1 = 17``
    Chebyshev points; the interpolant is used when its last two coefficients
    are below 1e-11 (a converged Chebyshev series is accurate to about its
    tail; tests compare it with the quadrature at every value), the
    quadrature elsewhere. Mean-rank gaps at 100 data sets take about 2,700
    distinct values: 17 integrals per interval instead of one per value.
    """
    piece = np.floor(q).astype(np.intp)
    counts = np.bincount(piece)
    dense = np.flatnonzero(counts > 4 * (_DEGREE + 1))
    out = np.empty(q.size)
    use = np.zeros(q.size, dtype=bool)
    if dense.size:
        with np.errstate(divide="ignore"):
            f = np.log(range_sf(dense[:, None] + 0.5 * (_NODES + 1), k))
        coef = f @ _TO_COEFFICIENTS
        good = np.isfinite(f).all(axis=1) & (np.abs(coef[:, -2:]).max(axis=1) < 1e-11)
        row = np.full(counts.size, -1)
        row[dense[good]] = np.arange(good.sum())
        use = row[piece] >= 0
        u = 2 * (q[use] - piece[use]) - 1
        vander = np.polynomial.chebyshev.chebvander(u, _DEGREE)
        out[use] = np.exp(np.einsum("ij,ij->i", vander, coef[good][row[piece[use]]]))
    out[~use] = range_sf(q[~use], k)
    return np.minimum(out, 1.0)


@functools.lru_cache(maxsize=256)
def range_isf(alpha: float, k: int) -> float:
    """The upper ``alpha`` quantile of the range of ``k`` standard normals (:func:`range_sf`).

    Newton's method on ``log P(R > q) = log alpha`` from Bonferroni's bound
    ``q_0`` (``P(R > q_0) <= alpha``: ``q_0`` is right of the root). R's
    density is log-concave (Prekopa: the joint density of the minimum and
    the maximum is), so ``log P(R > q)`` is concave and the steps decrease
    monotonically to the root, the error squaring at each; they stop after
    one that moves ``q`` by less than 1e-8 of it. A constant per ``(alpha, k)``:
    kept once computed, as autorank keeps statsmodels' table.
    """
    q = -np.sqrt(2) * special.ndtri(alpha / (k * (k - 1)))
    for _ in range(100):
        sf, pdf = _range_integrals(q, k, density=True)
        step = (np.log(sf) - np.log(alpha)) * sf / pdf
        q += step
        if abs(step) <= 1e-8 * q:  # quadratic convergence: q is then exact to ~1e-16
            break
    return float(q)


def _check_alpha(alpha):
    if not 0 < alpha < 1:
        raise ArgumentError(f"`alpha` must be strictly between 0 and 1; got {alpha!r}.")


def _nemenyi_pvalues(mean_ranks: np.ndarray, n: int, iu) -> np.ndarray:
    k = mean_ranks.size
    q = np.abs(mean_ranks[:, None] - mean_ranks[None, :]) / np.sqrt(k * (k + 1) / (12 * n))
    p = np.ones((k, k))
    values, where = np.unique(q[iu], return_inverse=True)  # equal rank gaps: one integral
    p[iu] = p.T[iu] = _range_sf_many(values, k)[where]
    return p


def _cliques(sorted_ranks: np.ndarray, cd: float) -> list:
    """Maximal runs i..j of sorted mean ranks with ``R_j - R_i <= cd``, as in autorank."""
    out, reach = [], -1
    ends = np.searchsorted(sorted_ranks, sorted_ranks + cd, side="right") - 1
    for i, j in enumerate(ends.tolist()):
        if j > i and j > reach:
            out.append(list(range(i, j + 1)))
            reach = j
    return out


_LAST_BIT = np.uint64(1)
_ABS_BUT_LAST = np.uint64(0x7FFF_FFFF_FFFF_FFFE)
_INF_BITS = np.float64(np.inf).view(np.uint64)
_CHUNK = 1 << 15  # differences per step of pairwise_wilcoxon_pvalues: temporaries stay in cache


def _signed_ranks(d: np.ndarray):
    """:func:`_signed_ranks_exact`, faster on rows without ties or zeros.

    The sort key is ``|d|`` with its last bit replaced by the sign (1 =
    negative): a non-negative float, so a float sort (faster than an integer
    one). Where no two keys of a row agree but for that bit and none is 0
    (almost every row of continuous scores), the keys order the ``|d|``
    strictly, the ranks are the positions and ``R+ = n (n + 1) / 2 - sum of
    the negative positions``; the other rows (and rows with an infinite
    difference, whose key is a NaN) go to the exact path.
    """
    bits = d.view(np.uint64)
    key = bits & _ABS_BUT_LAST
    key |= bits >> np.uint64(63)
    key.view(float).sort(axis=1)
    rows, n = d.shape
    positions = np.arange(1, n + 1, dtype=np.uint64)
    r_plus = n * (n + 1) / 2 - np.einsum("ij,j->i", key & _LAST_BIT, positions).astype(float)
    # an infinite |d| (a difference that overflowed) is a NaN key, sorted last
    slow = key[:, -1] >= _INF_BITS
    key >>= _LAST_BIT
    slow |= key[:, 0] == 0
    flat = key.ravel()
    slow[np.flatnonzero(flat[1:] == flat[:-1]) // n] = True  # across a row's end: a recheck
    slow = np.flatnonzero(slow)
    count, ties = np.full(rows, n), np.zeros(rows)
    if slow.size:
        r_plus[slow], count[slow], ties[slow] = _signed_ranks_exact(d[slow])
    return r_plus, count, ties


def _runs(same: np.ndarray):
    """Per position of sorted rows: the first and last position of its run of equal values.

    ``same[:, t]`` says whether positions ``t`` and ``t + 1`` are equal.
    """
    n = same.shape[1] + 1
    runs, cols = np.ones((same.shape[0], n), dtype=bool), np.arange(n)  # first of a run
    runs[:, 1:] = ~same
    last_of_run = np.ones(runs.shape, dtype=bool)
    last_of_run[:, :-1] = runs[:, 1:]
    first = np.maximum.accumulate(np.where(runs, cols, 0), axis=1)
    last = np.minimum.accumulate(np.where(last_of_run, cols, n)[:, ::-1], axis=1)[:, ::-1]
    return first, last


def _signed_ranks_exact(d: np.ndarray):
    """Per row of ``d``: ``R+``, the count of nonzero values and the tie term ``sum t^3 - t``.

    As ``scipy.stats.wilcoxon`` (zeros dropped): mid-ranks of the nonzero
    ``|d|`` within each row, every row at once by one sort. The sort key is
    the bits of ``|d|`` (ordered as the floats, being non-negative) shifted
    left, with the sign in the freed bit: one integer sort, no argsort.
    """
    key = np.abs(d).view(np.uint64) << np.uint64(1)
    key |= d > 0
    key.sort(axis=1)
    positive = (key & np.uint64(1)).astype(np.uint8)
    key >>= np.uint64(1)  # the bits of the sorted |d|
    n = d.shape[1]
    zeros = np.count_nonzero(key == 0, axis=1)
    # R+ with rank = position - zeros (1-based) while no |d| ties; einsum, not BLAS,
    # whose threads crawl on a busy machine
    r_plus = np.einsum("ij,j->i", positive, np.arange(1.0, n + 1)) - zeros * positive.sum(axis=1)
    ties = np.zeros(d.shape[0])
    same = key[:, 1:] == key[:, :-1]
    tied = np.flatnonzero(same.any(axis=1))  # rows with a run of equal |d|: mid-ranks
    if tied.size:
        first, last = _runs(same[tied])
        rank = 0.5 * (first + last) + 1.0 - zeros[tied, None]
        r_plus[tied] = (rank * positive[tied]).sum(axis=1)
        size = (last - first + 1).astype(np.int64)
        ties[tied] = np.where(key[tied] > 0, size * size - 1, 0).sum(axis=1)  # runs' t^3 - t
    return r_plus, n - zeros, ties


@functools.lru_cache(maxsize=64)
def _exact_signed_rank_cdf(n: int) -> np.ndarray:
    """``P(R+ <= k)`` for ``k = 0 .. n (n + 1) / 2`` under the null, no ties (exact counts).

    A constant table per ``n`` (at most 50 are used), kept once built and read-only.
    """
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for i in range(1, n + 1):  # subsets of {1..i} by sum: exact integers below 2^53 for n <= 52
        counts[i:] += counts[: counts.size - i].copy()
    cdf = np.cumsum(counts) / 2.0**n
    cdf.flags.writeable = False
    return cdf


def pairwise_wilcoxon_pvalues(x: np.ndarray, pairs) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-values of columns ``i`` vs ``j`` for each pair.

    The p-value ``scipy.stats.wilcoxon`` gives each pair alone (as
    :func:`vareval.stats.testset.significance.paired_wilcoxon`), every pair
    at once: zero differences dropped; the exact null distribution for at
    most 50 data sets without ties or zeros; else the normal approximation
    with the tie correction (no continuity correction, scipy's default); for
    at most 13 data sets with ties or zeros scipy's exact permutation test,
    pair by pair (few data sets, so cheap). A pair whose differences are all
    zero gets p = 1.
    """
    xt = np.ascontiguousarray(x.T)
    first, second = (np.asarray(v, dtype=np.intp) for v in pairs)
    n = xt.shape[1]
    step = max(1, _CHUNK // n)
    chunks = [
        _signed_ranks(xt[first[s : s + step]] - xt[second[s : s + step]])
        for s in range(0, first.size, step)
    ]
    r_plus, count, ties = (np.concatenate(v) for v in zip(*chunks, strict=True))
    exact = (count == n) & (ties == 0) & (n <= 50)
    permutation = ~exact & (count > 0) & (n <= 13)
    normal = ~exact & ~permutation & (count > 0)
    p = np.ones(first.size)
    if exact.any():
        cdf = _exact_signed_rank_cdf(n)
        r = r_plus[exact].astype(np.int64)  # integers: no ties
        upper = 1.0 - np.where(r > 0, cdf[np.maximum(r - 1, 0)], 0.0)  # P(R+ >= r)
        p[exact] = np.clip(2 * np.minimum(upper, cdf[r]), 0, 1)
    if normal.any():
        c = count[normal].astype(float)
        se = np.sqrt((c * (c + 1.0) * (2.0 * c + 1.0) - ties[normal] / 2) / 24)
        z = (r_plus[normal] - c * (c + 1.0) * 0.25) / se
        p[normal] = 2 * special.ndtr(-np.abs(z))
    for row in np.flatnonzero(permutation):
        p[row] = stats.wilcoxon(xt[first[row]] - xt[second[row]]).pvalue
    return p


def rank_methods(
    scores,
    names=None,
    *,
    alpha: float = 0.05,
    higher_is_better: bool = True,
) -> Ranking:
    """Rank k methods over N data sets: Friedman, Nemenyi CD and Wilcoxon-Holm in one call.

    This is what autorank's non-parametric path reports (Demsar 2006), plus
    the pairwise Wilcoxon signed-rank tests with Holm's adjustment
    (Benavoli et al. 2016). The estimands are the methods' expected ranks
    within a data set drawn from the population the data sets represent.

    Parameters
    ----------
    scores : array_like, shape (N, k)
        One row per data set, one column per method (e.g. the mean over
        seeds of each method on each data set), at least 2 of each.
    names : sequence of str, optional
        Method names (default ``"0", "1", ...``).
    alpha : float, default 0.05
        Level of the critical difference and of the pairwise decisions.
    higher_is_better : bool, default True

    Returns
    -------
    Ranking
    """
    from vareval.stats.testset.significance import adjust_pvalues

    x = _score_matrix(scores)
    _check_alpha(alpha)
    n, k = x.shape
    names = [str(i) for i in range(k)] if names is None else [str(v) for v in names]
    if len(names) != k:
        raise ArgumentError(f"`names` has {len(names)} entries for {k} methods.")
    fr = friedman(x, higher_is_better=higher_is_better)
    cd = critical_difference(k, n, alpha)
    order = np.argsort(fr.mean_ranks, kind="stable")
    iu = np.triu_indices(k, 1)
    raw = pairwise_wilcoxon_pvalues(x, iu)
    wil, holm = np.ones((k, k)), np.ones((k, k))
    wil[iu] = wil.T[iu] = raw
    holm[iu] = holm.T[iu] = adjust_pvalues(raw, "holm")
    return Ranking(
        names=names,
        mean_ranks=fr.mean_ranks,
        order=order,
        friedman=fr,
        critical_difference=cd,
        nemenyi_pvalue=_nemenyi_pvalues(fr.mean_ranks, n, iu),
        wilcoxon_pvalue=wil,
        wilcoxon_pvalue_holm=holm,
        cliques=[[int(order[i]) for i in c] for c in _cliques(fr.mean_ranks[order], cd)],
        alpha=float(alpha),
        higher_is_better=higher_is_better,
    )


def _gamma_columns(rng, prior: float, size: int, m: int, first: int) -> np.ndarray:
    """``m`` columns of independent gammas: ``Gamma(prior)`` in row ``first``, ``Exp(1)`` elsewhere.

    Normalised, each column is a draw of ``Dirichlet(prior, 1, ..., 1)`` with the
    prior's weight in row ``first``; rows are data sets, so sums over them add whole rows.
    The exponentials fill the other rows in order, drawn in place into the rows
    before ``first`` and then those after (one stream, so the same numbers).
    """
    g = np.empty((size, m))
    g[first] = rng.standard_gamma(prior, m)
    rng.standard_exponential(out=g[:first])
    rng.standard_exponential(out=g[first + 1 :])
    return g


@renamed_keywords(n_samples="n_resamples")
def bayesian_signed_rank(
    a,
    b,
    *,
    rope: float = 0.0,
    prior: float = 0.5,
    n_resamples: int = 50_000,
    rng=None,
) -> BayesianSignedRank:
    """Bayesian signed-rank test of A against B over data sets, with a ROPE.

    The differences ``d_i = a_i - b_i`` (one per data set) get a Dirichlet
    process posterior with a pseudo-observation at 0 of weight ``prior``
    (Benavoli et al. 2014, 2017). For weights ``w ~ Dirichlet(prior, 1, ...,
    1)`` the probabilities of the three regions are ``sum_ij w_i w_j
    [d_i + d_j > 2 rope]`` (A better; ties count half), the mirror image
    (B better), and the rest (practically equivalent). As baycomp 1.0.3,
    ``p_left`` etc. are the shares of posterior samples in which each region
    is the most probable; the posterior means are reported too.

    Parameters
    ----------
    a, b : array_like
        Paired scores of A and B, one per data set.
    rope : float, default 0
        Half-width of the region of practical equivalence, in score units.
    prior : float, default 0.5
        Weight of the prior pseudo-observation at 0.
    n_resamples : int, default 50000
        Monte Carlo draws from the posterior.
    rng : int, Generator or None
    """
    from vareval.stats._checks import as_scores

    a = as_scores(a, "a", min_n=2)
    b = as_scores(b, "b", min_n=2)
    if a.size != b.size:
        raise ArgumentError(
            f"`a` and `b` must be paired (equal length); got {a.size} and {b.size}."
        )
    _check_rope_prior(rope, prior)
    n_samples = check_size(as_positive_int(n_resamples, "n_resamples"), "`n_resamples`",
                           bytes_each=24)
    post = _signed_rank_posteriors((a - b)[None], [as_rng(rng)], rope, prior, n_samples)[0]
    return _signed_rank_result(post, rope, prior, a.size)


def _signed_rank_result(post, rope, prior, n) -> BayesianSignedRank:
    """``post``: (left, rope, right) draws as rows; winners as ``argmax`` (the first of ties)."""
    left, middle, right = post
    n_samples = left.size
    first = (left >= middle) & (left >= right)
    second = ~first & (middle >= right)
    winners = np.array([first.sum(), second.sum(), n_samples - first.sum() - second.sum()])
    winners = winners / n_samples
    means = post.mean(axis=1)
    return BayesianSignedRank(
        p_left=float(winners[0]),
        p_rope=float(winners[1]),
        p_right=float(winners[2]),
        mean_left=float(means[0]),
        mean_rope=float(means[1]),
        mean_right=float(means[2]),
        rope=float(rope),
        prior=float(prior),
        n_resamples=n_samples,
        n=n,
    )


def _signed_rank_posteriors(diffs, gens, rope, prior, n_samples, progress=False) -> np.ndarray:
    """Posterior draws ``(pairs, 3, n_samples)`` of (left, rope, right), every pair at once.

    ``diffs[p]`` are pair ``p``'s differences and ``gens[p]`` its generator,
    drawn exactly as for that pair alone. With each pair's ``d`` sorted (a
    pseudo-observation 0 among them), the weights ``g`` (unnormalised) are
    drawn in that order and the two quadratic forms ``g' A g / (sum g)^2``,
    ``A_ij = [d_i + d_j > 2 rope] + [d_i + d_j = 2 rope] / 2`` (ties count
    half) and its mirror image, are evaluated by :class:`_StaircaseForm`.
    """
    from vareval.stats._progress import progress_bar

    d = np.concatenate([np.zeros((diffs.shape[0], 1)), diffs], axis=1)
    n_pairs, size = d.shape
    order = np.argsort(d, axis=1, kind="stable")
    first = np.argmax(order == 0, axis=1)  # where the prior's pseudo-observation sorts
    d = np.take_along_axis(d, order, axis=1)
    rows = max(1, (1 << 18) // size)  # draws per chunk (the draws' order on each stream)
    post = np.empty((n_pairs, 3, n_samples))
    bar = progress_bar(n_pairs * n_samples, "Bayesian signed rank", progress)
    with bar as bar, one_blas_thread():
        for pair in range(n_pairs):
            forms = _StaircaseForm(d[pair], rope)
            for start in range(0, n_samples, rows):
                m = min(rows, n_samples - start)
                g = _gamma_columns(gens[pair], prior, size, m, first[pair])
                left, middle, right = post[pair, :, start : start + m]
                sides = post[pair, ::2, start : start + m]  # left, right
                total = forms.values(g, out=sides[: 2 if rope else 1])
                scale = 1.0 / total**2
                left *= scale
                if rope == 0:  # no equivalence region: ties split between the sides
                    middle[:] = 0.0
                    np.subtract(1.0, left, out=right)
                else:
                    right *= scale
                    np.subtract(1.0 - left, right, out=middle)
                bar.update(m)
    return post


_LEAF = 256  # cells of a dense block: splitting smaller ones costs more calls than it saves


def _sum_counts(d: np.ndarray, bound: float):
    """``lo[i]``, ``hi[i]``: how many ``j`` have ``d_i + d_j < bound``, and ``<= bound``.

    ``d`` sorted; the sums are the floating-point ones (rounding is monotone, so
    each row's count is found by bisection, every row at once).
    """
    n = d.size
    counts = []
    for below in (np.less, np.less_equal):
        lo, hi = np.zeros(n, np.intp), np.full(n, n)
        for _ in range(n.bit_length()):
            mid = (lo + hi) // 2
            left = below(d + d[np.minimum(mid, n - 1)], bound)
            active = lo < hi
            lo, hi = np.where(active & left, mid + 1, lo), np.where(active & ~left, mid, hi)
        counts.append(lo)
    return counts


def _staircase_pieces(d: np.ndarray, rope: float):
    """``g' A g`` for ``A_ij = [d_i + d_j > 2 rope] + [d_i + d_j = 2 rope] / 2`` as pieces.

    With ``d`` sorted, ``A`` is symmetric and nondecreasing along rows and columns:
    row ``i`` is 0 before ``lo_i``, 1/2 up to ``hi_i`` and 1 after. With ``a``, ``e``,
    ``b`` the indices where the diagonal is 0, 1/2, 1 (a prefix, a middle, a
    suffix), ``A[a, a] = 0``, ``A[e, e] = 1/2`` and ``A[b, b] = 1``, so
    ``g' A g = G_b^2 - G_e^2 / 2 + 2 g_ae' A[ae, eb] g_eb`` (``G_x`` a sum of ``g``).
    The staircase block ``A[ae, eb]`` is split at its middle row (or column): the
    rows below and columns past that row's step are all ones, the corner above and
    before it all zeros, and the two blocks left straddle the step.

    Returns
    -------
    rects : list of (factor, (r0, r1), (c0, c1))
        Constant blocks: ``factor * G[r0:r1] * G[c0:c1]``.
    dense : list of (factor, (r0, r1), (c0, c1), block)
        ``factor * g[r0:r1]' block g[c0:c1]``, each at most ``_LEAF`` cells.
    """
    size = d.size
    lo, hi = _sum_counts(d, 2 * rope)

    def value(i, j):
        return (j >= hi[i]) + 0.5 * ((j >= lo[i]) & (j < hi[i]))

    diag = value(np.arange(size), np.arange(size))
    na, nb = int(np.count_nonzero(diag == 0)), int(np.count_nonzero(diag == 1))
    ne = size - na - nb
    rects = [(1.0, (na + ne, size), (na + ne, size))] if nb else []
    if ne:
        rects.append((-0.5, (na, na + ne), (na, na + ne)))
    dense = []
    todo = [(0, na + ne, na, size)]
    while todo:
        r0, r1, c0, c1 = todo.pop()
        if r0 >= r1 or c0 >= c1 or value(r1 - 1, c1 - 1) == 0:
            continue
        if value(r0, c0) == value(r1 - 1, c1 - 1):
            rects.append((2 * value(r0, c0), (r0, r1), (c0, c1)))
        elif (r1 - r0) * (c1 - c0) <= _LEAF:
            block = value(np.arange(r0, r1)[:, None], np.arange(c0, c1))
            dense.append((2.0, (r0, r1), (c0, c1), block))
        elif r1 - r0 >= c1 - c0:
            q = (r0 + r1) // 2
            s0, s1 = np.clip((lo[q], hi[q]), c0, c1)
            todo += [(r0, q, s0, c1), (q, r1, c0, s1), (q, r1, s1, c1)]
        else:
            p = (c0 + c1) // 2
            t0 = r0 + int(np.count_nonzero(lo[r0:r1] > p))
            t1 = r0 + int(np.count_nonzero(hi[r0:r1] > p))
            todo += [(t0, r1, c0, p), (r0, t1, p, c1), (t1, r1, p, c1)]
    return rects, dense


class _StaircaseForm:
    """Both quadratic forms of one pair's posterior, ``O(size)`` work a draw plus small blocks.

    ``values(g)`` gives ``g' A g`` (left) and, with a rope, the mirror image's
    ``g' A' g`` (right), ``A'_ij = [-(d_i + d_j) > 2 rope] + ties / 2``: the left
    form of ``-d`` reversed, so its pieces are mapped back to ``d``'s order. The
    sums ``G`` over the pieces' ranges come from prefix sums at their edges.
    """

    def __init__(self, d: np.ndarray, rope: float):
        size = d.size
        forms = [_staircase_pieces(d, rope)]
        if rope:

            def back(r):
                return size - r[1], size - r[0]

            rects, dense = _staircase_pieces(-d[::-1], rope)
            forms.append(([(f, back(r), back(c)) for f, r, c in rects],
                          [(f, back(r), back(c), b[::-1, ::-1]) for f, r, c, b in dense]))
        ranges = [(0, size)] + [r for rects, _ in forms for _, *rc in rects for r in rc]
        self.edges = np.unique(np.ravel(ranges))
        where = {int(e): k for k, e in enumerate(self.edges)}
        ranges = list(dict.fromkeys(ranges))
        self.starts = np.array([where[a] for a, _ in ranges])
        self.stops = np.array([where[b] for _, b in ranges])
        index = {r: k for k, r in enumerate(ranges)}
        terms = [(k, f, index[r], index[c]) for k, (rects, _) in enumerate(forms)
                 for f, r, c in rects]
        self.rows = np.array([t[2] for t in terms], dtype=np.intp)
        self.cols = np.array([t[3] for t in terms], dtype=np.intp)
        self.factors = np.zeros((len(forms), len(terms)))
        self.factors[[t[0] for t in terms], np.arange(len(terms))] = [t[1] for t in terms]
        self.dense = []
        for k, (_, dense) in enumerate(forms):
            for f, r, c, block in dense:
                if r[1] - r[0] > c[1] - c[0]:  # multiply out on the shorter side
                    r, c, block = c, r, block.T
                self.dense.append((k, f, slice(*r), slice(*c), np.ascontiguousarray(block)))

    def values(self, g: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The forms at each column of ``g`` into ``out`` (forms, m); returns the sums of ``g``."""
        edges = self.edges
        prefix = np.zeros((edges.size, g.shape[1]))
        for k in range(edges.size - 1):
            g[edges[k] : edges[k + 1]].sum(axis=0, out=prefix[k + 1])
        np.cumsum(prefix, axis=0, out=prefix)
        sums = prefix[self.stops] - prefix[self.starts]
        np.matmul(self.factors, sums[self.rows] * sums[self.cols], out=out)
        for k, f, rows, cols, block in self.dense:
            out[k] += f * np.einsum("ij,ij->j", g[rows], block @ g[cols])
        return prefix[-1]


def bayesian_signed_ranks(
    scores,
    pairs,
    *,
    rope: float = 0.0,
    prior: float = 0.5,
    n_resamples: int = 50_000,
    rng=None,
    progress=False,
) -> list:
    """:func:`bayesian_signed_rank` of columns ``i`` against ``j`` for many pairs at once.

    Parameters
    ----------
    scores : array_like, shape (N, k)
        One row per data set, one column per method.
    pairs : sequence of (int, int)
        Column indices ``(a, b)``: the test of A against B for each.
    rope, prior, n_resamples
        As :func:`bayesian_signed_rank`.
    rng : None, int, Generator, or a sequence of Generators (one per pair)
        With one seed, every pair gets its own stream spawned from it; each
        pair's result equals :func:`bayesian_signed_rank` on its stream.
    progress : bool or None, default False
        Show a tqdm progress bar (None: on a terminal only).

    Returns
    -------
    list of BayesianSignedRank, in the order of ``pairs``.
    """
    x = _score_matrix(scores)
    index = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    if index.size and not ((index >= 0) & (index < x.shape[1])).all():
        raise ArgumentError(f"`pairs` index methods 0 to {x.shape[1] - 1}.")
    _check_rope_prior(rope, prior)
    n_samples = check_size(as_positive_int(n_resamples, "n_resamples"), "`n_resamples`",
                           bytes_each=24)
    gens = list(rng) if isinstance(rng, (list, tuple)) else as_rng(rng).spawn(len(index))
    if len(gens) != len(index):
        raise ArgumentError(f"`rng` has {len(gens)} generators for {len(index)} pairs.")
    if not len(index):
        return []
    diffs = (x[:, index[:, 0]] - x[:, index[:, 1]]).T
    post = _signed_rank_posteriors(
        diffs, [as_rng(g) for g in gens], rope, prior, n_samples, progress
    )
    return [_signed_rank_result(p, rope, prior, x.shape[0]) for p in post]


def _check_rope_prior(rope, prior):
    if not rope >= 0:
        raise ArgumentError(f"`rope` must be a number >= 0; got {rope!r}.")
    if not prior > 0:
        raise ArgumentError(f"`prior` must be a number > 0; got {prior!r}.")
