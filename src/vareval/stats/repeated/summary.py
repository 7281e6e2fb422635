"""Repeated runs: what to report from repeated runs.

``summarize`` describes one method's repeated runs: the centre (mean and
median) with a confidence interval for each, the spread (SD, IQR, range),
every individual score, and the best run, labelled *selected* because it
describes a chosen run and not the method's typical performance.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence, as_scores, mean_sd
from vareval.stats._result import (
    ConfidenceInterval,
    Result,
    interval_method,
    renamed_interval,
    t_interval_at,
)


@dataclasses.dataclass(frozen=True, repr=False)
class Summary(Result):
    """Summary of one method's repeated runs.

    Attributes
    ----------
    n, mean, median, sd, se, iqr, range, min, max
        Descriptive statistics; ``sd`` uses ddof=1 and ``se = sd / sqrt(n)``.
    scores : ndarray
        Every individual score, in the order given.
    selected : float
        The best run (maximum, or minimum when lower is better). A *selected*
        statistic: it estimates nothing about typical performance.
    selected_index : int
        Position of the selected run in ``scores``.
    confidence : float
        Level of both intervals.
    mean_low, mean_high : float
        Student-t interval for the mean (formerly ``mean_ci``); it is the
        result's ``confidence_interval()``, recomputed at any level on request.
    median_low, median_high : float
        Distribution-free interval for the median from order statistics
        (formerly ``median_ci``).
    median_ci_coverage : float
        Exact coverage of the median's interval for any continuous distribution. With
        few runs the widest interval, (min, max), may fall short of
        ``confidence``; this field then says by how much.
    higher_is_better : bool
        Direction used to pick the selected run.
    units : int or None
        With ``clusters``: the number of replication units (e.g. seeds) the
        mean's interval is over; ``mean`` is then the mean of the units' means,
        ``se`` the SD of the unit means over sqrt(units), and the median has
        no interval (NaN: order statistics need independent runs). None: the
        runs are the independent units.
    bounds : (float, float) or None
        The metric's range; the mean's interval is intersected with it (a
        parameter inside the bounds is covered exactly as often).
    clipped : bool
        Whether the interval reached past ``bounds`` and was cut to them.
    """

    n: int
    mean: float
    median: float
    sd: float
    se: float
    iqr: float
    range: float
    min: float
    max: float
    scores: np.ndarray
    selected: float
    selected_index: int
    confidence: float
    mean_low: float
    mean_high: float
    median_low: float
    median_high: float
    median_ci_coverage: float
    higher_is_better: bool
    units: int | None = None
    bounds: tuple | None = None
    clipped: bool = False

    _interval = ("mean_low", "mean_high")
    _deprecated = {
        "mean_ci": interval_method(),
        "median_ci": renamed_interval("median_low", "median_high"),
    }

    @property
    def estimate(self) -> float:
        """The mean: the estimate ``confidence_interval()`` is for."""
        return self.mean

    def _interval_at(self, level: float) -> ConfidenceInterval:
        low, high = t_interval_at(self.mean, self.se, (self.units or self.n) - 1, level)
        return ConfidenceInterval(*_clip(low, high, self.bounds)[:2])


def _clip(low: float, high: float, bounds) -> tuple[float, float, bool]:
    """The interval intersected with the metric's bounds, and whether it was cut."""
    if bounds is None:
        return low, high, False
    lo, hi = max(low, bounds[0]), min(high, bounds[1])
    return lo, hi, bool(lo != low or hi != high)


def _cluster_means(x: np.ndarray, clusters) -> np.ndarray:
    """The mean score of each cluster (replication unit), in order of first appearance."""
    labels = np.asarray(clusters)
    if labels.shape != x.shape:
        raise ArgumentError(
            f"`clusters` must give one label per score ({x.size}); got shape {labels.shape}."
        )
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    sums = np.bincount(inverse, weights=x)
    counts = np.bincount(inverse)
    return (sums / counts)[np.argsort(first)]


def summarize(
    scores,
    *,
    confidence: float = 0.95,
    higher_is_better: bool = True,
    clusters=None,
    bounds=None,
) -> Summary:
    """Summarise one method's repeated runs.

    Estimands: the mean score (``mean``, ``se``, ``mean_low``, ``mean_high``, a t interval
    that assumes roughly normal run-to-run variation or enough runs) and the
    median score (``median``, ``median_low``, ``median_high``, exact for any continuous
    distribution). ``selected`` is the best run, a best-of-n statistic.

    Parameters
    ----------
    scores : array_like
        One score per run, at least two, all finite.
    confidence : float, default 0.95
        Level of the intervals, in (0, 1).
    higher_is_better : bool, default True
        Whether the best run is the largest (accuracy) or smallest (loss) score.
    clusters : array_like, optional
        One replication-unit label per score (e.g. the seed) when runs within a
        unit are not independent (configurations and reruns of one seed). The
        mean's estimand is then the mean over units of each unit's mean score,
        and its t interval has ``units - 1`` degrees of freedom: valid when
        the units are independent draws, whatever the correlation inside one.
    bounds : (float, float), optional
        The metric's range (``(0, 1)`` for accuracy): the mean's interval is
        intersected with it, which keeps its coverage.

    Returns
    -------
    Summary

    Examples
    --------
    >>> s = summarize([0.831, 0.847, 0.822])
    >>> round(s.mean, 4), s.selected
    (0.8333, 0.847)
    """
    x = as_scores(scores, "scores", min_n=2)
    confidence = as_confidence(confidence)
    n = x.size
    bounds = _as_bounds(bounds)
    mean, sd = mean_sd(x)
    se, units = sd / np.sqrt(n), None
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    best = int(np.argmax(x) if higher_is_better else np.argmin(x))
    lo, hi, coverage = median_interval(x, confidence)
    if clusters is not None:
        means = _cluster_means(x, clusters)
        units = means.size
        if units < 2:
            raise ArgumentError(
                "`clusters` must hold at least two replication units for an interval; "
                f"got {units}."
            )
        mean, unit_sd = mean_sd(means)
        se = unit_sd / np.sqrt(units)
        lo = hi = coverage = float("nan")
    mean_low, mean_high = t_interval(mean, se, (units or n) - 1, confidence)
    mean_low, mean_high, clipped = _clip(mean_low, mean_high, bounds)
    return Summary(
        n=n,
        mean=mean,
        median=float(median),
        sd=sd,
        se=float(se),
        iqr=float(q3 - q1),
        range=float(x.max() - x.min()),
        min=float(x.min()),
        max=float(x.max()),
        scores=x,
        selected=float(x[best]),
        selected_index=best,
        confidence=confidence,
        mean_low=mean_low,
        mean_high=mean_high,
        median_low=lo,
        median_high=hi,
        median_ci_coverage=coverage,
        higher_is_better=bool(higher_is_better),
        units=units,
        bounds=bounds,
        clipped=clipped,
    )


def _as_bounds(bounds):
    """``(low, high)`` floats with low < high, or None."""
    if bounds is None:
        return None
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ArgumentError(f"`bounds` must be (low, high); got {bounds!r}.") from None
    if not low < high:
        raise ArgumentError(f"`bounds` must have low < high; got {bounds!r}.")
    return (low, high)


def median_interval(scores, confidence: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free confidence interval for the median from order statistics.

    The interval is ``[x_(l), x_(n+1-l)]`` with the largest ``l`` whose exact
    coverage ``P(l <= B <= n - l)``, ``B ~ Binomial(n, 1/2)``, is at least
    ``confidence``. That holds for any continuous distribution. When even
    ``[min, max]`` covers less (few runs), that interval is returned with its
    smaller exact coverage.

    Returns
    -------
    (low, high, coverage)
    """
    x = np.sort(as_scores(scores, "scores"))
    n = x.size
    confidence = as_confidence(confidence)
    l_all = np.arange(1, n // 2 + 1)
    # coverage(l) = 1 - 2 P(B <= l - 1); decreasing in l. P(B <= k) = I_0.5(n - k, k + 1):
    # scipy.stats.binom.cdf's value (boost's ibeta), without importing scipy.stats.
    cover = 1 - 2 * special.betainc(n - l_all + 1, l_all, 0.5)
    ok = np.flatnonzero(cover >= confidence - 1e-12)
    i = ok[-1] if ok.size else 0
    if n == 1:
        return float(x[0]), float(x[0]), 0.0
    lo_rank = int(l_all[i])
    return float(x[lo_rank - 1]), float(x[n - lo_rank]), float(cover[i])


def t_interval(mean: float, se: float, df: float, confidence: float) -> tuple[float, float]:
    """Student-t interval ``mean +- t_{(1+c)/2, df} se``."""
    low, high = t_interval_at(mean, se, df, confidence)
    return float(low), float(high)
