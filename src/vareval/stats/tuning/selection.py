"""Choose on validation, report on test: the selected configuration and its tuning curve.

A search tries configurations and records two scores for each: a
*validation* score, used to choose, and a *test* score, reported for the
chosen one and never used to choose. Two questions follow.

- Per replication unit (a seed, or a seed x rerun) which configuration wins
  on validation, and what is its test score? (:func:`choose_on_validation`)
- Over random search, what test score does the configuration chosen on
  validation after ``k`` iterations get, on average? That is the tuning curve
  of the *test* score (:func:`selection_curve`), the quantity Dodge et al.
  (2019) call expected validation performance, but on the held-out metric.
  The validation curve beside it is higher (when maximising) by the
  *optimism of selection*: the best validation score over-states the chosen
  configuration's performance on new data.

Ties in validation are handled explicitly. For the curve, when several of
the ``k`` drawn configurations tie for the best validation score, the test
score reported is the *average over the tied winners* (equivalently, the
expected test score of a winner picked uniformly at random among them). For
the per-unit choice, ``ties="first"`` keeps the first tied configuration in
table order and ``ties="average"`` reports the tied winners' mean test score.

References
----------
Dodge, J., Gururangan, S., Card, D., Schwartz, R. and Smith, N. A. (2019).
    Show your work: improved reporting of experimental results. EMNLP.
Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y. and Lin, J. (2020). Showing your
    work doesn't always work. ACL.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_bool, as_confidence, as_scores
from vareval.stats._result import Result
from vareval.stats.repeated.summary import _as_bounds
from vareval.stats.tuning.curves import _as_k, _u_weights, _v_weights

__all__ = ["Selection", "SelectionCurve", "choose_on_validation", "selection_curve"]

TIES = ("first", "average")


def _pairs(validation, test) -> tuple[np.ndarray, np.ndarray]:
    val = as_scores(validation, "validation")
    tst = as_scores(test, "test")
    if val.shape != tst.shape:
        raise ArgumentError(
            f"`validation` and `test` must have one value per configuration each; got "
            f"{val.size} and {tst.size}."
        )
    return val, tst


@dataclasses.dataclass(frozen=True, repr=False)
class Selection(Result):
    """The configuration chosen on validation in each replication unit, and its test score.

    No figure: one chosen configuration per unit, read from its fields.

    Attributes
    ----------
    unit : ndarray
        The units, in order of first appearance.
    chosen : ndarray of int
        Position (in the input) of the chosen configuration of each unit: the
        best validation score; among tied winners the first in input order.
    n_searched : ndarray of int
        Configurations compared in each unit.
    n_tied : ndarray of int
        Configurations sharing the best validation score (1: no tie).
    validation : ndarray
        The best validation score of each unit.
    test : ndarray
        The chosen configuration's test score; with ``ties="average"`` the
        mean test score of the tied winners.
    higher_is_better : bool
        Whether the largest validation score wins.
    ties : str
        ``"first"`` or ``"average"``.
    """

    unit: np.ndarray
    chosen: np.ndarray
    n_searched: np.ndarray
    n_tied: np.ndarray
    validation: np.ndarray
    test: np.ndarray
    higher_is_better: bool
    ties: str

    _rows = ("unit", "chosen", "n_searched", "n_tied", "validation", "test")

    @property
    def rule(self) -> str:
        """The selection rule in words, to print beside the numbers."""
        best = "highest" if self.higher_is_better else "lowest"
        tie = (
            "ties: the first tied configuration in table order"
            if self.ties == "first"
            else "ties: the mean test score of the tied configurations"
        )
        return f"the {best} validation score in each unit; {tie}"


def choose_on_validation(
    validation, test, units=None, *, higher_is_better: bool = True, ties: str = "first"
) -> Selection:
    """Choose one configuration per unit by its validation score; report its test score.

    Estimand: for each replication unit, the test score of the configuration
    with the best validation score among those searched in that unit. The
    test scores never enter the choice.

    Parameters
    ----------
    validation, test : array_like
        One pair per configuration tried (finite numbers).
    units : array_like, optional
        The replication unit of each configuration (a seed, a seed x rerun
        label, ...); ``None`` makes all one unit.
    higher_is_better : bool, default True
        False when the smallest validation score wins (a loss).
    ties : {"first", "average"}, default "first"
        Among configurations tied for the best validation score, keep the
        first in input order, or report their mean test score.

    Returns
    -------
    Selection
    """
    val, tst = _pairs(validation, test)
    hib = as_bool(higher_is_better, "higher_is_better")
    if ties not in TIES:
        raise ArgumentError(f"`ties` must be 'first' or 'average'; got {ties!r}.")
    units = np.zeros(val.size, int) if units is None else np.asarray(units)
    if units.shape != val.shape:
        raise ArgumentError(
            f"`units` must have one label per configuration ({val.size}); got shape "
            f"{units.shape}."
        )
    uniq, inv = np.unique(units, return_inverse=True)
    inv = inv.ravel()
    pos = np.arange(val.size)
    first = np.full(uniq.size, val.size)
    np.minimum.at(first, inv, pos)
    order = np.argsort(first, kind="stable")  # units in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    g = rank[inv]
    score = val if hib else -val
    best = np.full(uniq.size, -np.inf)
    np.maximum.at(best, g, score)
    won = score == best[g]
    n_tied = np.bincount(g, weights=won, minlength=uniq.size).astype(int)
    chosen = np.full(uniq.size, val.size)
    np.minimum.at(chosen, g[won], pos[won])
    mean_test = np.bincount(g, weights=np.where(won, tst, 0.0), minlength=uniq.size) / n_tied
    return Selection(
        unit=uniq[order],
        chosen=chosen,
        n_searched=np.bincount(g, minlength=uniq.size),
        n_tied=n_tied,
        validation=val[chosen],
        test=tst[chosen] if ties == "first" else mean_test,
        higher_is_better=hib,
        ties=ties,
    )


# -- the tuning curve of the chosen configuration's test score -------------------


def _tie_groups(val: np.ndarray, tst: np.ndarray, minimize: bool):
    """Sort by validation (best last), and describe the runs of tied validation scores.

    Returns the sorted test scores, each position's group, and per group its
    first position, its end (exclusive), its size and its test-score sum.
    """
    key = -val if minimize else val
    order = np.argsort(key, kind="stable")
    key, tst = key[order], tst[order]
    new = np.concatenate([[True], key[1:] != key[:-1]])
    group = np.cumsum(new) - 1
    start = np.flatnonzero(new)
    end = np.concatenate([start[1:], [key.size]])
    sums = np.bincount(group, weights=tst)
    return tst, group, start, end, end - start, sums


_BLOCK_CELLS = 2**21  # k x n weights per block: 16 MB of float64, a few such temporaries


def _curve_rows(k: np.ndarray, n: int, ties, sorted_val):
    """U and V curves of test and validation, and the jackknife se, for the ``k`` given.

    Every row of ``k`` is computed on its own, so blocks of rows give the
    same numbers as all rows at once (tested).
    """
    sorted_test, group, start, end, count, sums = ties
    u_w, v_w = _u_weights(n, k), _v_weights(n, k)
    means = sums / count
    estimate, v_stat = _curve(u_w, group, means), _curve(v_w, group, means)
    val_u, val_v = u_w @ sorted_val, v_w @ sorted_val
    del u_w, v_w
    loo = _jackknife_u(sorted_test, group, start, end, count, sums, np.minimum(k, n - 1))
    se = np.sqrt((n - 1) / n * np.sum((loo - loo.mean(axis=1, keepdims=True)) ** 2, axis=1))
    return estimate, v_stat, val_u, val_v, np.where(k < n, se, np.nan)


def _curve(weights: np.ndarray, group, means) -> np.ndarray:
    """``sum_i w_i * mean test score of i's tie group``, for each row of ``weights``."""
    return weights @ means[group]


def _jackknife_u(tst, group, start, end, count, sums, k: np.ndarray) -> np.ndarray:
    """Leave-one-out U estimates of the test curve, shape ``(len(k), n)``.

    Leaving out the configuration at sorted position ``r`` shifts the ones
    above it down by one; a tie group's total weight is then a difference of
    the cumulative ``n - 1`` weights at its (shifted) ends, and ``r``'s own
    group loses one member from its mean. Prefix and suffix sums over the
    groups give all ``n`` estimates in ``O(n)`` per ``k``.
    """
    n = tst.size
    cw = np.concatenate(
        [np.zeros((k.size, 1)), np.cumsum(_u_weights(n - 1, k), axis=-1)], axis=-1
    )
    means = sums / count
    # groups wholly below r keep their positions (the top group is never below r)
    below = (cw[:, np.minimum(end, n - 1)] - cw[:, start]) * means
    above = (cw[:, end - 1] - cw[:, np.maximum(start - 1, 0)]) * means  # shift down by one
    before = np.concatenate([np.zeros((k.size, 1)), np.cumsum(below, axis=-1)], axis=-1)
    after = np.cumsum(above[:, ::-1], axis=-1)[:, ::-1]
    after = np.concatenate([after[:, 1:], np.zeros((k.size, 1))], axis=-1)
    own_w = cw[:, end[group] - 1] - cw[:, start[group]]
    with np.errstate(invalid="ignore", divide="ignore"):
        own_mean = np.where(count[group] > 1, (sums[group] - tst) / (count[group] - 1), 0.0)
    return before[:, group] + after[:, group] + own_w * own_mean


@dataclasses.dataclass(frozen=True, repr=False)
class SelectionCurve(Result):
    """The tuning curve of the test score of the configuration chosen on validation.

    Attributes
    ----------
    k : ndarray
        Numbers of search iterations.
    estimate : ndarray
        U-statistic estimate (unbiased for ``k <= n``) of the expected test
        score of the configuration with the best validation score among ``k``
        drawn at random, ties in validation averaged over the tied winners.
    v_statistic : ndarray
        The V-statistic estimate of the same (draws with replacement).
    validation, validation_v : ndarray
        U and V estimates of the expected best *validation* score after ``k``.
    optimism : ndarray
        ``validation - estimate`` (``estimate - validation`` when minimising):
        how much the best validation score over-states the chosen
        configuration's test score.
    se : ndarray
        Jackknife standard error of ``estimate`` (NaN for ``k >= n``).
    lower, upper : ndarray
        Pointwise interval ``estimate +- t se`` (``t`` the Student quantile
        with ``n - 1`` degrees of freedom) at ``confidence``, cut to
        ``bounds``; NaN for ``k >= n`` and where ``se`` is 0 (no spread: a
        zero-width interval would claim certainty). Not simultaneous over ``k``.
    below_nominal : ndarray of bool
        ``k > n / 10``: rows whose simulated coverage fell below the level
        (0.83-0.93 at 95 %; down to 0.83 near ``k = n``).
    confidence : float
    n : int
        Configurations (validation, test pairs) observed.
    n_tie_groups : int
        Distinct validation scores among them (``n`` when there are no ties).
    higher_is_better : bool
    bounds : (float, float) or None
        The test metric's bounds, if known.
    """

    k: np.ndarray
    estimate: np.ndarray
    v_statistic: np.ndarray
    validation: np.ndarray
    validation_v: np.ndarray
    optimism: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    below_nominal: np.ndarray
    confidence: float
    n: int
    n_tie_groups: int
    higher_is_better: bool
    bounds: tuple | None = None

    _interval = ("lower", "upper")
    _rows = (
        "k", "estimate", "lower", "upper", "below_nominal", "se", "v_statistic", "validation",
        "validation_v", "optimism",
    )  # fmt: skip

    def _interval_at(self, level: float):
        return _t_interval(self.estimate, self.se, self.n, level, self.bounds)


def _t_interval(estimate, se, n: int, level: float, bounds):
    """``estimate +- t se`` cut to ``bounds``; NaN where ``se`` is 0 or undefined."""
    z = special.stdtrit(n - 1, 0.5 + level / 2)
    se = np.where(se > 0, se, np.nan)
    low, high = estimate - z * se, estimate + z * se
    if bounds is not None:
        low, high = np.maximum(low, bounds[0]), np.minimum(high, bounds[1])
    return low, high


def selection_curve(
    validation, test, k, *, higher_is_better: bool = True, confidence: float = 0.95, bounds=None
) -> SelectionCurve:
    r"""Estimate the test score of the configuration chosen on validation after ``k`` trials.

    Estimand: :math:`E[T_{J}]` where ``k`` configurations are drawn at random
    from the search distribution, each with a validation score ``V`` and a
    test score ``T``, and ``J`` is the one with the best ``V`` (ties: the
    average of ``T`` over the tied winners). Sorting the ``n`` observed pairs
    by ``V``, the U-statistic (all ``k``-subsets, unbiased for ``k <= n``)
    and the V-statistic (``k`` draws with replacement) are
    :math:`\sum_i w_i \bar T_{g(i)}` with the usual best-of-``k`` weights
    ``w_i`` of position ``i`` (Tang et al. 2020; Dodge et al. 2019) and
    :math:`\bar T_{g(i)}` the mean test score of ``i``'s group of tied
    validation scores. Without ties this is :math:`\sum_i w_i T_{(i)}`.

    The interval is ``U +- t se``, with the jackknife standard error (leave
    one configuration out) and the Student quantile on ``n - 1`` degrees of
    freedom, pointwise in ``k`` and for ``k < n`` only. The slow tier checks
    its coverage by simulation. With ``n = 40`` Gaussian pairs at 95 % it is
    0.95 for ``k <= 3`` and 0.93 for ``k = 5 .. 8``, and it under-covers as
    ``k`` grows towards ``n`` (0.91 at ``k = n / 4``, 0.87 at ``k = n / 2``),
    where the estimate rests on the few best configurations. Measured over
    2,000 searches each (docs/tuning.md): coverage is within 0.02 of 95 % up
    to ``k = n / 10`` and falls to 0.83 at ``k = n - 1`` for every ``n`` from
    10 to 80; ``below_nominal`` marks ``k > n / 10``.

    Parameters
    ----------
    validation, test : array_like
        One pair per configuration of a random search.
    k : int or array_like of int
        Numbers of search iterations, whole numbers >= 1.
    higher_is_better : bool, default True
        False when the smallest validation (and test) score is best.
    confidence : float, default 0.95
        Level of the pointwise interval.
    bounds : (float, float), optional
        The test metric's range (e.g. (0, 1) for accuracy): the interval is
        cut to it.

    Returns
    -------
    SelectionCurve
    """
    val, tst = _pairs(validation, test)
    hib = as_bool(higher_is_better, "higher_is_better")
    confidence = as_confidence(confidence)
    k = np.atleast_1d(_as_k(k, integer=True))
    if k.ndim != 1:
        raise ArgumentError("`k` must be a flat list of search iterations.")
    n = val.size
    if n < 2:
        raise ArgumentError(f"`validation` needs at least 2 configurations; got {n}.")
    ties = _tie_groups(val, tst, not hib)
    sorted_val = np.sort(val)[::-1] if not hib else np.sort(val)
    rows = max(1, _BLOCK_CELLS // n)  # rows of k at a time: each (k, n) array stays small
    parts = [_curve_rows(k[i : i + rows], n, ties, sorted_val) for i in range(0, k.size, rows)]
    estimate, v_stat, val_u, val_v, se = (np.concatenate(p) for p in zip(*parts, strict=True))
    bounds = _as_bounds(bounds)
    lower, upper = _t_interval(estimate, se, n, confidence, bounds)
    return SelectionCurve(
        k=k,
        estimate=estimate,
        v_statistic=v_stat,
        validation=val_u,
        validation_v=val_v,
        optimism=(val_u - estimate) if hib else (estimate - val_u),
        se=se,
        lower=lower,
        upper=upper,
        below_nominal=k > n / 10,
        confidence=confidence,
        n=n,
        n_tie_groups=int(ties[2].size),
        higher_is_better=hib,
        bounds=bounds,
    )
