"""Repeated runs: the best-of-k illusion and how stable a ranking is as runs grow.

Two identical methods, each keeping its best of k runs, still produce an
observed "winner". The signed difference of their best runs has expectation
zero, but its magnitude, the apparent gap, does not. These functions
simulate that from one empirical sample of runs.

The best of k draws with replacement from a sample ``x_(1) <= ... <= x_(n)``
has the law ``P(max <= x_(j)) = (j/n)^k``, so it is drawn exactly by inverse
transform, ``x_(ceil(n U^(1/k)))``: the cost does not grow with k.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._checks import (
    as_int_array,
    as_positive_int,
    as_rng,
    as_scores,
    renamed_keywords,
)
from vareval.stats._result import Result, renamed


@dataclasses.dataclass(frozen=True, repr=False)
class BestOfK(Result):
    """Apparent winner-versus-loser gaps between two identical methods.

    Attributes
    ----------
    ks : ndarray
        Numbers of runs each method selects its best from.
    quantiles : ndarray
        Quantile levels reported in ``gap_quantiles``.
    gap_quantiles : ndarray, shape (len(ks), len(quantiles))
        Quantiles of the apparent gap ``|best_A - best_B|``, relative to
        ``|winner|`` when ``relative`` is true.
    median_gap, p90_gap : ndarray
        The 0.5 and 0.9 quantiles of the gap, per k.
    mean_signed_difference : ndarray
        Mean of ``best_A - best_B`` per k: zero in expectation.
    mean_signed_difference_se : ndarray
        Its Monte Carlo standard error.
    n_resamples : int
        Simulated comparisons per k.
    relative : bool
        Whether gaps are relative to the winner's score.
    higher_is_better : bool
        Whether "best" is the largest score.
    """

    ks: np.ndarray
    quantiles: np.ndarray
    gap_quantiles: np.ndarray
    median_gap: np.ndarray
    p90_gap: np.ndarray
    mean_signed_difference: np.ndarray
    mean_signed_difference_se: np.ndarray
    n_resamples: int
    relative: bool
    higher_is_better: bool

    _deprecated = {"n_sim": renamed("n_resamples")}

    _rows = ("ks", "median_gap", "p90_gap", "mean_signed_difference", "mean_signed_difference_se")


@renamed_keywords(n_sim="n_resamples")
def best_of_k(
    scores,
    ks=(1, 3, 5, 10),
    *,
    n_resamples: int = 100_000,
    higher_is_better: bool = True,
    quantiles=(0.5, 0.9),
    relative: bool = True,
    rng=None,
) -> BestOfK:
    """Simulate the best-of-k illusion between two identical methods.

    Both methods draw k runs with replacement from the same empirical sample
    and keep their best; the better of the two is the observed winner. The
    estimand is the distribution of the apparent gap between winner and
    loser (its quantiles) for each k, together with the signed difference,
    whose expectation is zero. As in the note "Three runs, three answers" (after
    Dodge et al. 2019 on reporting expected best-of-k), the gap is relative to
    the winner's score: ``|best_A - best_B| / |winner|``.

    Parameters
    ----------
    scores : array_like
        The pooled runs of one method (at least two).
    ks : sequence of int, default (1, 3, 5, 10)
        Numbers of runs each method selects from.
    n_resamples : int, default 100_000
        Simulated comparisons per k.
    higher_is_better : bool, default True
        Whether the best run is the largest (accuracy) or smallest (loss).
    quantiles : sequence of float, default (0.5, 0.9)
        Quantiles of the gap to report, in [0, 1]; 0.5 and 0.9 are always
        also given as ``median_gap`` and ``p90_gap``.
    relative : bool, default True
        Report gaps relative to the winner's score; needs non-zero scores.
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).

    Returns
    -------
    BestOfK
    """
    x, ks, n_sim, q = _best_of_k_iv(scores, ks, n_resamples, quantiles, relative)
    rng = as_rng(rng)
    levels = np.union1d(q, [0.5, 0.9])
    table = np.empty((ks.size, levels.size))
    mean_diff = np.empty(ks.size)
    mean_diff_se = np.empty(ks.size)
    for i, k in enumerate(ks):  # a handful of k values; each step is vectorised
        a = draw_best(x, k, (2, n_sim), higher_is_better, rng)
        diff = a[0] - a[1]
        gap = np.abs(diff)
        if relative:
            winner = np.maximum(a[0], a[1]) if higher_is_better else np.minimum(a[0], a[1])
            gap = gap / np.abs(winner)
        table[i] = np.quantile(gap, levels)
        mean_diff[i] = diff.mean()
        mean_diff_se[i] = diff.std(ddof=1) / np.sqrt(n_sim)
    pick = np.searchsorted(levels, q)
    return BestOfK(
        ks=ks,
        quantiles=q,
        gap_quantiles=table[:, pick],
        median_gap=table[:, np.searchsorted(levels, 0.5)],
        p90_gap=table[:, np.searchsorted(levels, 0.9)],
        mean_signed_difference=mean_diff,
        mean_signed_difference_se=mean_diff_se,
        n_resamples=n_sim,
        relative=relative,
        higher_is_better=bool(higher_is_better),
    )


def _best_of_k_iv(scores, ks, n_sim, quantiles, relative):
    x = as_scores(scores, "scores", min_n=2)
    ks = as_int_array(ks, "ks", minimum=1)
    n_sim = as_positive_int(n_sim, "n_resamples", minimum=2)
    q = np.atleast_1d(np.asarray(quantiles, dtype=float))
    if q.ndim != 1 or q.size == 0 or not np.all((q >= 0) & (q <= 1)):
        raise ArgumentError(f"`quantiles` must be numbers in [0, 1]; got {quantiles!r}.")
    if relative and np.any(x == 0):
        raise ArgumentError(
            "`scores` contains 0, so a gap relative to the winner is undefined; "
            "ask for absolute gaps instead (the command's --absolute; relative=False in Python)."
        )
    return x, ks, n_sim, np.unique(q)


def draw_best(x, k: int, size, higher_is_better: bool, rng) -> np.ndarray:
    """Draw the best of ``k`` runs sampled with replacement from ``x``, exactly.

    ``P(max <= x_(j)) = (j/n)^k`` for the sorted sample, so the best is
    ``x_(ceil(n U^(1/k)))`` for a uniform U (and the mirror image for the
    minimum). One uniform per draw, whatever k is.
    """
    xs = np.sort(x)
    n = xs.size
    u = rng.random(size)
    j = np.ceil(n * u ** (1.0 / k)).astype(np.int64)
    j = np.clip(j, 1, n) - 1
    return xs[j] if higher_is_better else xs[n - 1 - j]


@dataclasses.dataclass(frozen=True, repr=False)
class RankingStability(Result):
    """How often k runs rank two methods as their full samples' means do.

    Attributes
    ----------
    ks : ndarray
        1 ... max_k.
    best_of_k, mean_of_k, median_of_k : ndarray
        Share of simulations in which the summary of k runs per method
        orders the methods as the full-sample means do (ties count half).
    reference : str
        "a" or "b": the method with the better full-sample mean.
    n_resamples : int
        Simulated experiments per k.
    """

    ks: np.ndarray
    best_of_k: np.ndarray
    mean_of_k: np.ndarray
    median_of_k: np.ndarray
    reference: str
    n_resamples: int

    _deprecated = {"n_sim": renamed("n_resamples")}

    _rows = ("ks", "best_of_k", "mean_of_k", "median_of_k")


@renamed_keywords(n_sim="n_resamples")
def ranking_stability(
    a, b, *, max_k: int = 10, n_resamples: int = 10_000, higher_is_better: bool = True, rng=None
) -> RankingStability:
    """Agreement of best-of-k, mean-of-k and median-of-k rankings with the full means.

    For each k, both methods' k runs are drawn with replacement from their
    observed samples; each summary (best, mean, median of the k runs) names a
    winner, compared with the winner by full-sample means. The curve shows
    how many runs a stable ranking takes with each summary. It is a ranking
    frequency, not the power of a test.

    Parameters
    ----------
    a, b : array_like
        The two methods' runs (at least two each); their means must differ.
    max_k : int, default 10
        Largest number of runs per method.
    n_resamples : int, default 10_000
        Simulated experiments per k.
    higher_is_better : bool, default True
        Direction of "better" for every summary.
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).

    Returns
    -------
    RankingStability
    """
    a = as_scores(a, "a", min_n=2)
    b = as_scores(b, "b", min_n=2)
    max_k = as_positive_int(max_k, "max_k")
    n_sim = as_positive_int(n_resamples, "n_resamples")
    rng = as_rng(rng)
    sign = 1.0 if higher_is_better else -1.0
    truth = np.sign(sign * (a.mean() - b.mean()))
    if truth == 0:
        raise ArgumentError("`a` and `b` have equal means, so there is no reference ranking.")
    ks = np.arange(1, max_k + 1)
    out = {name: np.empty(max_k) for name in ("best", "mean", "median")}
    for i, k in enumerate(ks):  # one vectorised step per k
        da = rng.choice(a, size=(n_sim, k))
        db = rng.choice(b, size=(n_sim, k))
        for name, f in (
            ("best", np.max if higher_is_better else np.min),
            ("mean", np.mean),
            ("median", np.median),
        ):
            s = np.sign(sign * (f(da, axis=1) - f(db, axis=1)))
            out[name][i] = np.mean((s == truth) + 0.5 * (s == 0))
    return RankingStability(
        ks=ks,
        best_of_k=out["best"],
        mean_of_k=out["mean"],
        median_of_k=out["median"],
        reference="a" if truth > 0 else "b",
        n_resamples=n_sim,
    )
