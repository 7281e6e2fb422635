"""Across tasks: aggregates over tasks x runs, with stratified-bootstrap intervals.

Scores come as an array ``scores[method, task, run]`` (or ``[task, run]`` for
one method). Following Agarwal et al. (2021), "Deep reinforcement learning at
the edge of the statistical precipice" (the rliable package):

- :func:`normalize_scores`: per-task min-max, or against reference scores
  (e.g. random = 0 and human = 1);
- :func:`aggregate_scores`: mean, median (of per-task means), interquartile
  mean (IQM: the 25 % trimmed mean of all run x task scores) and optimality
  gap (``gamma - mean(min(score, gamma))``);
- :func:`interval_estimates`: those aggregates with stratified-bootstrap
  intervals (runs resampled within each task, tasks kept; optionally tasks
  resampled too), percentile or BCa;
- :func:`performance_profile`: the fraction of runs (or of per-task mean
  scores) above each threshold tau, with pointwise and simultaneous bands;
- :func:`probability_of_improvement`: ``P(X > Y)`` per task (the
  Mann-Whitney U / nm), averaged over tasks, with its interval;
  :func:`probabilities_of_improvement` for many pairs at once.

Every bootstrap draws one set of run indices per task and resample and
computes every statistic from it; resamples are processed in chunks that
bound memory. No Python loop runs over resamples, tasks or runs.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence, as_positive_int, as_rng, check_size
from vareval.stats._progress import progress_bar
from vareval.stats._result import ConfidenceInterval, Result

AGGREGATES = ("median", "iqm", "mean", "optimality_gap")
_CHUNK = 125_000  # resampled scores drawn at once (another size would draw other runs)
_PART = 65_000  # resampled scores processed at once, so their temporaries stay in cache
_SHORT = 64  # a median over at most this many task means sorts them; a longer one partitions
# the smallest design where the profile band's whole-curve coverage was measured
_BAND_MIN_RUNS = 3
_BAND_MIN_TASKS = 4


# --- input checks ----------------------------------------------------------------


def _as_task_scores(scores, name: str = "scores", *, min_tasks: int = 1) -> np.ndarray:
    """Return ``scores`` as a finite float array ``[method, task, run]``."""
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"`{name}` must be numbers; got non-numeric values.") from None
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise ArgumentError(
            f"`{name}` must be 2-D [task, run] or 3-D [method, task, run]; got {arr.ndim}-D."
        )
    if not np.isfinite(arr).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ArgumentError(
            f"`{name}` has NaN or infinite scores (first at index {where}); "
            "remove or fix them explicitly."
        )
    if arr.shape[1] < min_tasks:
        raise ArgumentError(
            f"`{name}` has {arr.shape[1]} task(s); this needs at least {min_tasks}."
        )
    if arr.shape[2] < 1:
        raise ArgumentError(f"`{name}` has no runs.")
    return arr


def _check_runs_vary(arr: np.ndarray, resample_tasks: bool, name: str = "scores") -> None:
    """Refuse one run per task with tasks fixed: every resample would equal the estimate."""
    if arr.shape[2] < 2 and not resample_tasks:
        raise ArgumentError(
            f"`{name}` has one run per task: with tasks kept fixed every bootstrap resample "
            "equals the estimate, a zero-width interval; give at least 2 runs per task, or "
            "resample tasks (resample_tasks=True, --resample-tasks)."
        )


def _band_note(shape: tuple, resample_tasks: bool) -> str:
    """Empty, or a sentence when the design is outside where the band's coverage was measured."""
    if shape[1] >= _BAND_MIN_TASKS and (resample_tasks or shape[2] >= _BAND_MIN_RUNS):
        return ""
    return (
        f"with {shape[1]} tasks x {shape[2]} runs the band's whole-curve coverage is unknown: "
        f"it reached its level in simulation from {_BAND_MIN_TASKS} tasks and "
        f"{_BAND_MIN_RUNS} runs per task (docs/aggregate.md), not below"
    )


def _as_gamma(gamma, scores: np.ndarray) -> float:
    """The optimality-gap threshold, required above the smallest score.

    At or below every score the gap is identically 0 (usually: scores not
    normalised). Above every score it is ``gamma - mean``, a shortfall from a
    target no run reached, which is allowed.
    """
    if not isinstance(gamma, numbers.Real) or not np.isfinite(gamma):
        raise ArgumentError(f"`gamma` must be a finite number; got {gamma!r}.")
    low, high = float(scores.min()), float(scores.max())
    if gamma <= low:
        raise ArgumentError(
            f"`gamma` {gamma:g} is below the scores' range [{low:.4g}, {high:.4g}]: every run "
            "reaches it, so the optimality gap is 0 with no uncertainty; normalise the scores "
            "or choose a gamma above the smallest score."
        )
    return float(gamma)


def _as_aggregates(aggregates) -> tuple[str, ...]:
    names = (aggregates,) if isinstance(aggregates, str) else tuple(aggregates)
    bad = [a for a in names if a not in AGGREGATES]
    if bad or not names:
        raise ArgumentError(
            f"`aggregates` must name some of {', '.join(AGGREGATES)}; got {bad or names!r}."
        )
    return names


def _as_ci(ci: str) -> str:
    if ci not in ("percentile", "bca"):
        raise ArgumentError(f"`ci` must be 'percentile' or 'bca'; got {ci!r}.")
    return ci


def _labels(labels, n: int) -> tuple[str, ...]:
    if labels is None:
        return tuple(str(i) for i in range(n))
    labels = tuple(str(v) for v in labels)
    if len(labels) != n:
        raise ArgumentError(f"`methods` has {len(labels)} labels for {n} methods.")
    return labels


# --- normalisation and point estimates ---------------------------------------------


def normalize_scores(scores, reference=None) -> np.ndarray:
    """Normalise scores per task to ``(score - low) / (high - low)``.

    Parameters
    ----------
    scores : array_like, shape (methods, tasks, runs) or (tasks, runs)
    reference : (low, high) of array_like, shape (tasks,), optional
        Reference scores mapped to 0 and 1 (e.g. a random and a human
        baseline). Without it, ``low`` and ``high`` are each task's minimum
        and maximum over every method and run (min-max normalisation; the
        result then depends on which methods are compared).

    Returns
    -------
    ndarray
        Normalised scores, same shape as ``scores``.
    """
    arr = _as_task_scores(scores)
    if reference is None:
        low, high = arr.min(axis=(0, 2)), arr.max(axis=(0, 2))
        what = "its scores are all equal, so min-max normalisation is undefined"
    else:
        low, high = _reference_pair(reference, arr.shape[1])
        if low.size != arr.shape[1] or high.size != arr.shape[1]:
            raise ArgumentError(
                f"`reference` needs one low and one high score per task ({arr.shape[1]}); "
                f"got {low.size} and {high.size}."
            )
        what = "its two reference scores are equal"
    same = np.flatnonzero(~(high != low))
    if same.size:
        raise ArgumentError(f"task {int(same[0])}: {what}.")
    out = (arr - low[:, None]) / (high - low)[:, None]
    return out if np.ndim(scores) == 3 else out[0]


def _reference_pair(reference, n_tasks: int):
    """``(low, high)`` from a pair of arrays, or from an array of shape (tasks, 2) or (2, tasks)."""
    try:
        ref = np.asarray(reference, dtype=float)
    except (TypeError, ValueError):
        ref = None
    if ref is not None and ref.ndim == 2 and ref.shape == (n_tasks, 2) and n_tasks != 2:
        ref = ref.T
    if ref is None or ref.ndim not in (1, 2) or ref.shape[0] != 2:
        raise ArgumentError(
            "`reference` must be (low, high): one low and one high score per task "
            f"({n_tasks}), as two arrays or an array of shape (2, {n_tasks}); got "
            + (f"shape {ref.shape}." if ref is not None else "arrays of unequal length.")
        )
    return ref[0].reshape(-1), ref[1].reshape(-1)


def _row_means(values: np.ndarray, axes: int) -> np.ndarray:
    """Mean over the last ``axes`` axes as one ``einsum`` row sum.

    Far faster than ``mean`` (or a matrix-vector product) over a short
    trailing axis (e.g. ten runs).
    """
    lead = values.shape[: values.ndim - axes]
    flat = values.reshape(math.prod(lead), -1)
    return (np.einsum("ij->i", flat) / flat.shape[1]).reshape(lead)


def _median(values: np.ndarray) -> np.ndarray:
    """Median over the last axis (finite values: no NaN check).

    A short axis is sorted (faster than a partition there); a long one is
    partitioned at its two middle positions, linear in its length.
    """
    n = values.shape[-1]
    middle = (n - 1) // 2, n // 2
    if n <= _SHORT:
        middle_values = np.sort(values, axis=-1)
    else:
        middle_values = np.partition(values, middle, axis=-1)
    return 0.5 * (middle_values[..., middle[0]] + middle_values[..., middle[1]])


class _Sorted:
    """Each method's scores sorted once, so a resample's IQM needs no sort.

    A resample is a draw of scores ``values[..., task, run]``; the mean, the
    median of task means and the optimality gap are read from them directly.
    The IQM is read from the draw's *multiplicities*: how many times it drew
    each score, counted over the scores' sorted order (``np.bincount``). Their
    cumulative sum places every drawn copy in the sorted sample, so the
    middle half is a weighted sum over the sorted scores (see :meth:`_iqm`):
    linear in the draw, where sorting it was not.
    """

    def __init__(self, scores: np.ndarray):
        n_methods, n_tasks, n_runs = scores.shape
        flat = scores.reshape(n_methods, -1)
        order = np.argsort(flat, axis=1, kind="stable")
        self.values = np.take_along_axis(flat, order, axis=1)  # [method, position]
        self.task = order // n_runs  # task and run of each sorted position
        self.run = order % n_runs
        position = np.empty_like(order)
        np.put_along_axis(position, order, np.arange(flat.shape[1])[None, :], axis=1)
        # flat index into ``values`` of every (method, task, run) cell, in the
        # smallest integer type that holds it (less to gather)
        key = position + flat.shape[1] * np.arange(n_methods)[:, None]
        small = np.int32 if key.size <= np.iinfo(np.int32).max else np.intp
        self.key = key.ravel().astype(small)
        self.scores = scores

    def counts(self, cells: np.ndarray) -> np.ndarray:
        """Multiplicities ``[b, method, position]`` of the sorted scores in a draw.

        ``cells[b, method, task, run]`` indexes ``scores.ravel()`` (see
        :func:`_draw_cells`).
        """
        b, size = cells.shape[0], self.values.size
        keys = self.key.take(cells).reshape(b, -1)
        if b > 1:  # one histogram for the whole block: resample i counts in [i size, (i+1) size)
            keys = keys + size * np.arange(b, dtype=np.intp)[:, None]
        return np.bincount(keys.ravel(), minlength=b * size).reshape(b, *self.values.shape)

    def aggregate(self, values, counts, names, gamma: float) -> np.ndarray:
        """Every named aggregate of ``values[..., method, task, run]``.

        ``counts[..., method, position]`` holds the same draw's multiplicities
        of the sorted scores (needed by the IQM only).
        """
        task_means = _row_means(values, 1)
        out = []
        for name in names:
            if name == "mean":
                out.append(_row_means(task_means, 1))
            elif name == "median":
                out.append(_median(task_means))
            elif name == "iqm":
                out.append(self._iqm(counts))
            else:  # optimality gap
                out.append(gamma - _row_means(np.minimum(values, gamma), 2))
        return np.stack(out, axis=-1)

    def _iqm(self, counts):
        """Mean of positions ``[cut, n - cut)`` of the sorted sample, as scipy's trim_mean.

        The copies of sorted score ``i`` fill sample positions ``[upto_i -
        counts_i, upto_i)``, ``upto`` the cumulative counts. The scores ``a``
        and ``b`` where the kept range starts and ends count in part, those
        between them wholly: one segment sum (``reduceat``) per row.
        """
        lead, size, width = counts.shape[:-2], self.values.size, self.values.shape[1]
        counts = counts.reshape(-1)  # rows of sorted positions, the methods in turn
        n = int(counts[:width].sum())  # draws of a method: every row alike
        cut = n // 4  # as scipy.stats.trim_mean: int(0.25 * n)
        upto = np.cumsum(counts)  # across rows too: row r starts at r n
        first = n * np.arange(counts.size // width)
        low, high = first + cut, first + n - cut
        a = np.searchsorted(upto, low, side="right")  # the first score reaching past low
        b = np.searchsorted(upto, high, side="left")  # the first score reaching high
        values = self.values.ravel()  # the value at flat position g is values[g % size]
        total = (np.minimum(upto[a], high) - low) * values[a % size]
        total += np.where(b > a, high - upto[b - 1], 0) * values[b % size]
        weighted = (counts.reshape(-1, size) * values).ravel()
        edges = np.minimum(np.stack([a + 1, b], axis=-1).ravel(), weighted.size - 1)
        total += np.where(b > a + 1, np.add.reduceat(weighted, edges)[::2], 0.0)
        return total.reshape(*lead, -1) / (n - 2 * cut)

    def estimate(self, names, gamma: float) -> np.ndarray:
        return self.aggregate(self.scores, np.ones(self.values.shape, np.intp), names, gamma)

    def jackknife(self, names, gamma: float, over_tasks: bool) -> np.ndarray:
        """Leave-one-run-out (or leave-one-task-out) aggregates, ``[unit, method, name]``."""
        unit = self.task if over_tasks else self.run
        n_units = self.scores.shape[1 if over_tasks else 2]
        counts = (unit[None] != np.arange(n_units)[:, None, None]).astype(np.intp)
        values = _leave_one_out(self.scores, 1 if over_tasks else 2)
        return self.aggregate(values, counts, names, gamma)


def aggregate_scores(scores, aggregates=AGGREGATES, *, gamma: float = 1.0) -> np.ndarray:
    """Point estimates of aggregate performance across tasks and runs.

    Parameters
    ----------
    scores : array_like, shape (methods, tasks, runs) or (tasks, runs)
        (Normalised) scores.
    aggregates : sequence of str
        Any of ``"median"`` (median over tasks of the per-task mean score),
        ``"iqm"`` (mean of the middle 50 % of all run x task scores),
        ``"mean"`` (mean of all scores) and ``"optimality_gap"``
        (``gamma - mean(min(score, gamma))``: how far runs fall short of gamma).
    gamma : float, default 1
        The optimality-gap threshold; must exceed the smallest score.

    Returns
    -------
    ndarray, shape (methods, aggregates) or (aggregates,)
        The same numbers as rliable's ``aggregate_*`` functions.
    """
    arr = _as_task_scores(scores)
    names = _as_aggregates(aggregates)
    if "optimality_gap" in names:
        gamma = _as_gamma(gamma, arr)
    out = _Sorted(arr).estimate(names, gamma)
    return out if np.ndim(scores) == 3 else out[0]


# --- the stratified bootstrap --------------------------------------------------------


def _chunks(total: int, per_resample: int):
    width = max(1, _CHUNK // max(per_resample, 1))
    for start in range(0, total, width):
        yield min(width, total - start)


def _draw_cells(rng, b: int, shape: tuple[int, int, int], resample_tasks: bool) -> np.ndarray:
    """Indices of ``b`` stratified resamples into ``scores.ravel()``.

    Shape ``[b, method, task, run]``: runs drawn with replacement within each
    (method, task) cell, independently per method; with ``resample_tasks`` the
    tasks of each method are drawn with replacement first.
    """
    runs, first = _draw(rng, b, shape, resample_tasks)
    return first + runs  # intp: what ``take`` indexes with


def _draw(rng, b: int, shape: tuple[int, int, int], resample_tasks: bool):
    """The two parts of :func:`_draw_cells`: run indices and the first index of their task.

    Their sum is the draw; both can be cut into parts along the resample
    axis. Kept tasks come as a broadcast view of one full ``[method, task,
    run]`` array, the shape whose sum with the runs is fastest.
    """
    n_methods, n_tasks, n_runs = shape
    runs = _draw_runs(rng, (b, *shape))
    if resample_tasks:
        tasks = rng.integers(0, n_tasks, size=(b, n_methods, n_tasks, 1))
    else:
        tasks = np.broadcast_to(np.arange(n_tasks)[:, None], shape)
    first = (n_tasks * np.arange(n_methods)[:, None, None] + tasks) * n_runs
    return runs, np.broadcast_to(first, runs.shape)


def _percentile_interval(dist: np.ndarray, confidence: float):
    alpha = (1 - confidence) / 2
    return tuple(np.percentile(dist, [100 * alpha, 100 * (1 - alpha)], axis=0))


def _bca_interval(dist, estimate, jackknife, confidence: float):
    """BCa intervals (Efron 1987) along axis 0 of ``dist``, one per trailing element.

    ``jackknife`` holds the leave-one-unit-out statistics along its axis 0.
    """
    b = dist.shape[0]
    # ties count one half; a resample within float noise of the estimate is a tie (a
    # resampled IQM of lattice scores, k / 40, equals it exactly in exact arithmetic)
    tied = np.isclose(dist, estimate, rtol=1e-9, atol=1e-12)
    below = ((dist < estimate) & ~tied).sum(axis=0) + 0.5 * tied.sum(axis=0)
    z0 = special.ndtri(np.clip(below / b, 0.5 / b, 1 - 0.5 / b))
    dev = jackknife.mean(axis=0) - jackknife
    den = 6.0 * (dev**2).sum(axis=0) ** 1.5
    accel = np.divide((dev**3).sum(axis=0), den, out=np.zeros_like(den), where=den > 0)
    alpha = (1 - confidence) / 2
    bounds = []
    for z in special.ndtri([alpha, 1 - alpha]):
        prob = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        flat = np.quantile(dist.reshape(b, -1), prob.reshape(-1), axis=0)  # all columns
        bounds.append(np.diagonal(flat).reshape(prob.shape))
    return tuple(bounds)


def _leave_one_out(values: np.ndarray, axis: int) -> np.ndarray:
    """Every leave-one-out copy of ``values`` along ``axis``, stacked first."""
    n = values.shape[axis]
    keep = np.arange(n)[None, :] != np.arange(n)[:, None]
    idx = np.nonzero(keep)[1].reshape(n, n - 1)
    return np.moveaxis(np.take(values, idx, axis=axis), axis, 0)


@dataclasses.dataclass(frozen=True, repr=False)
class IntervalEstimates(Result):
    """Aggregates of each method with stratified-bootstrap confidence intervals.

    Attributes
    ----------
    methods, aggregates : tuple of str
        Row and column labels of the arrays below.
    estimate : ndarray, shape (methods, aggregates)
        Point estimates (:func:`aggregate_scores`).
    low, high : ndarray, shape (methods, aggregates)
        Interval bounds at ``confidence``.
    confidence : float
    ci : {"percentile", "bca"}
    n_resamples, n_tasks, n_runs : int
    resample_tasks : bool
        Whether tasks were resampled too (a claim about a population of tasks)
        or kept fixed (a claim about these tasks; rliable's default).
    gamma : float
        Optimality-gap threshold.
    bootstrap_distribution : ndarray, shape (n_resamples, methods, aggregates)
    jackknife : ndarray or None
        Leave-one-unit-out aggregates used by BCa (runs, or tasks when tasks are
        resampled), shape (units, methods, aggregates); None with a single unit.
    """

    methods: tuple
    aggregates: tuple
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence: float
    ci: str
    n_resamples: int
    n_tasks: int
    n_runs: int
    resample_tasks: bool
    gamma: float
    bootstrap_distribution: np.ndarray
    jackknife: np.ndarray | None

    _interval = ("low", "high")

    def confidence_interval(
        self, confidence_level: float | None = None, ci: str | None = None
    ) -> ConfidenceInterval:
        """Return ``(low, high)`` arrays at another level or method, from the stored resamples."""
        level = self.confidence if confidence_level is None else as_confidence(confidence_level)
        ci = self.ci if ci is None else _as_ci(ci)
        if ci == "percentile":
            return ConfidenceInterval(*_percentile_interval(self.bootstrap_distribution, level))
        dist, jack = self.bootstrap_distribution, self.jackknife
        if jack is None:
            raise ArgumentError(
                "`ci` 'bca' needs at least 2 runs per task (2 tasks with `resample_tasks`) "
                "for its jackknife; use 'percentile'."
            )
        return ConfidenceInterval(*_bca_interval(dist, self.estimate, jack, level))

    def to_dict(self) -> dict:
        """Fields as plain values, without the resample arrays."""
        out = super().to_dict()
        del out["bootstrap_distribution"], out["jackknife"]
        return out

    def records(self) -> list[dict]:
        """One row per method and aggregate: tidy, for a table or JSON."""
        return [
            {
                "method": m,
                "aggregate": a,
                "estimate": float(self.estimate[i, j]),
                "ci_low": float(self.low[i, j]),
                "ci_high": float(self.high[i, j]),
            }
            for i, m in enumerate(self.methods)
            for j, a in enumerate(self.aggregates)
        ]


def interval_estimates(
    scores,
    aggregates=AGGREGATES,
    *,
    methods=None,
    gamma: float = 1.0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    ci: str = "percentile",
    resample_tasks: bool = False,
    rng=None,
    progress=False,
) -> IntervalEstimates:
    """Aggregate scores with stratified-bootstrap confidence intervals.

    The estimand of each aggregate is its value under the distribution of
    runs on each of these tasks (tasks fixed, rliable's stratified scheme), or
    under a population of tasks as well when ``resample_tasks`` is true.

    Algorithm: for each chunk of resamples, draw run indices with replacement
    independently within every (method, task) cell (and, with
    ``resample_tasks``, task indices with replacement), gather the scores once
    and compute every aggregate from that draw. Methods are resampled
    independently, as in rliable.

    Parameters
    ----------
    scores : array_like, shape (methods, tasks, runs) or (tasks, runs)
    aggregates : sequence of str
        See :func:`aggregate_scores`.
    methods : sequence of str, optional
        Labels of the methods (default ``"0"``, ``"1"``, ...).
    gamma : float, default 1
        Optimality-gap threshold, above the smallest score.
    n_resamples : int, default 2000
    confidence : float, default 0.95
    ci : {"percentile", "bca"}, default "percentile"
        BCa takes its acceleration from a delete-one jackknife over runs (over
        tasks when tasks are resampled).
    resample_tasks : bool, default False
    rng : None, int or numpy.random.Generator
    progress : bool or None, default False
        Show a tqdm progress bar over the resamples (None: on a terminal only).

    Returns
    -------
    IntervalEstimates

    References
    ----------
    Agarwal, Schwarzer, Castro, Courville and Bellemare (2021). Deep
    reinforcement learning at the edge of the statistical precipice. NeurIPS.
    """
    arr = _as_task_scores(scores, min_tasks=2 if resample_tasks else 1)
    _check_runs_vary(arr, resample_tasks)
    names = _as_aggregates(aggregates)
    gamma = _as_gamma(gamma, arr) if "optimality_gap" in names else float(gamma)
    n_resamples = as_positive_int(n_resamples, "n_resamples", minimum=2)
    check_size(n_resamples, "`n_resamples`", bytes_each=8 * arr.shape[0] * len(names))
    confidence = as_confidence(confidence)
    ci = _as_ci(ci)
    gen = as_rng(rng)
    if ci == "bca" and arr.shape[2] < 2 and not resample_tasks:
        raise ArgumentError("`ci` 'bca' needs at least 2 runs per task for its jackknife.")
    data = _Sorted(arr)
    estimate = data.estimate(names, gamma)
    dist = np.empty((n_resamples, arr.shape[0], len(names)))
    start, flat = 0, arr.reshape(-1)
    with progress_bar(n_resamples, "intervals", progress) as bar:
        for b in _chunks(n_resamples, arr.size):
            runs, first = _draw(gen, b, arr.shape, resample_tasks)
            width = -(-b // -(-runs.size // _PART))  # even parts of at most _PART scores
            for i in range(0, b, width):  # parts whose temporaries stay in cache
                cells = first[i : i + width] + runs[i : i + width]
                counts = data.counts(cells) if "iqm" in names else None
                dist[start : start + len(cells)] = data.aggregate(
                    flat.take(cells), counts, names, gamma
                )
                start += len(cells)
            bar.update(b)
    # BCa's jackknife needs two units to leave one out; percentile intervals need none
    units = arr.shape[1] if resample_tasks else arr.shape[2]
    jack = data.jackknife(names, gamma, over_tasks=resample_tasks) if units > 1 else None
    result = IntervalEstimates(
        methods=_labels(methods, arr.shape[0]),
        aggregates=names,
        estimate=estimate,
        low=estimate,
        high=estimate,
        confidence=confidence,
        ci=ci,
        n_resamples=n_resamples,
        n_tasks=arr.shape[1],
        n_runs=arr.shape[2],
        resample_tasks=bool(resample_tasks),
        gamma=gamma,
        bootstrap_distribution=dist,
        jackknife=jack,
    )
    low, high = result.confidence_interval()
    return dataclasses.replace(result, low=low, high=high)


# --- performance profiles ----------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class PerformanceProfile(Result):
    """Score distributions: the fraction of scores above each threshold tau.

    Attributes
    ----------
    methods : tuple of str
    taus : ndarray, shape (taus,)
    kind : {"runs", "mean"}
        ``"runs"``: fraction of all run x task scores above tau (the run-score
        distribution); ``"mean"``: fraction of tasks whose mean score is above
        tau (the average-score distribution).
    estimate : ndarray, shape (methods, taus)
    pointwise_low, pointwise_high : ndarray, shape (methods, taus)
        Percentile-bootstrap intervals, each valid at one tau (rliable's;
        zero-width where every resample gives the same fraction).
    band_low, band_high : ndarray, shape (methods, taus)
        Simultaneous band: meant to cover the whole profile at once with
        probability ``confidence``: ``estimate +- band_critical``, clipped to
        [0, 1] (bootstrap of the largest deviation over taus). NaN for a
        method whose resamples never vary.
    band_critical : ndarray, shape (methods,)
        Half-width of each method's band.
    band_note : str
        Empty, or a sentence saying the design (fewer than 3 runs per task
        with tasks fixed, or fewer than 4 tasks) lies outside the range where
        the band's whole-curve coverage was measured to reach its level.
    confidence : float
    n_resamples : int
    resample_tasks : bool
    bootstrap_distribution : ndarray, shape (n_resamples, methods, taus)
    """

    methods: tuple
    taus: np.ndarray
    kind: str
    estimate: np.ndarray
    pointwise_low: np.ndarray
    pointwise_high: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    band_critical: np.ndarray
    band_note: str
    confidence: float
    n_resamples: int
    resample_tasks: bool
    bootstrap_distribution: np.ndarray

    _interval = ("band_low", "band_high")  # the simultaneous band

    def to_dict(self) -> dict:
        """Fields as plain values, without the resamples."""
        out = super().to_dict()
        del out["bootstrap_distribution"]
        return out

    def records(self) -> list[dict]:
        """One row per method and tau."""
        return [
            {
                "method": m,
                "tau": float(t),
                "fraction_above": float(self.estimate[i, j]),
                "pointwise_low": float(self.pointwise_low[i, j]),
                "pointwise_high": float(self.pointwise_high[i, j]),
                "band_low": float(self.band_low[i, j]),
                "band_high": float(self.band_high[i, j]),
            }
            for i, m in enumerate(self.methods)
            for j, t in enumerate(self.taus)
        ]


def _fraction_above(codes: np.ndarray, n_taus: int) -> np.ndarray:
    """Fraction above each tau from ``codes[..., unit]`` = number of taus below each score."""
    lead = codes.shape[:-1]
    flat = (
        codes.reshape(-1, codes.shape[-1]) + (n_taus + 1) * np.arange(int(np.prod(lead)))[:, None]
    )
    hist = np.bincount(flat.ravel(), minlength=flat.shape[0] * (n_taus + 1))
    hist = hist.reshape(*lead, n_taus + 1)
    # a score with code k lies above taus 0 .. k-1
    above = hist[..., ::-1].cumsum(axis=-1)[..., ::-1][..., 1:]
    return above / codes.shape[-1]


def _max_deviation_band(dist: np.ndarray, estimate: np.ndarray, confidence: float, n: int):
    """Simultaneous band ``estimate +- c``, c the quantile of the largest deviation over taus.

    The bootstrap distribution of ``max_tau |F*(tau) - F(tau)|`` (a
    Kolmogorov-Smirnov-type statistic) sets one half-width for the whole
    curve, times ``n / (n - 1)``: resampling ``n`` units shrinks a fraction's
    variance by ``(n - 1) / n``, and with few runs the bootstrap's maximum of
    a discrete curve falls short further: the square root (the variance
    alone) left the whole-curve coverage at 88-92 % with 3 to 5 runs per task
    where the full factor reaches 95 % (docs/aggregate.md). An equal width, unlike a sup-t
    band, stays open where the sample has no spread (at and beyond the
    sample's extremes every resample gives 0 or 1, while the true curve does
    not). With no spread anywhere (one run per task, tasks fixed) the
    bootstrap cannot size a band: NaN.
    """
    crit = np.quantile(np.abs(dist - estimate).max(axis=-1), confidence, axis=0)
    crit = crit * (n / (n - 1) if n > 1 else 1.0)
    crit = np.where(crit > 0, crit, np.nan)
    half = crit[:, None]
    return np.clip(estimate - half, 0, 1), np.clip(estimate + half, 0, 1), crit


def performance_profile(
    scores,
    taus=None,
    *,
    methods=None,
    kind: str = "runs",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    resample_tasks: bool = False,
    rng=None,
    progress=False,
) -> PerformanceProfile:
    """Performance profile (score distribution) with pointwise and simultaneous bands.

    Estimand: for ``kind="runs"``, ``F(tau) = (1/T) sum_t P(X_t > tau)``, the
    chance that a run on a task picked at random scores above tau; for
    ``kind="mean"``, the fraction of tasks whose expected-over-runs mean
    score (as estimated by the mean of the runs) exceeds tau.

    Algorithm: every score is coded once by the number of taus below it
    (``searchsorted``); a resample gathers codes, and a histogram of codes
    with a reversed cumulative sum gives the whole profile, so the cost is
    linear in runs x tasks and independent of the number of taus. The
    simultaneous band has one half-width for the whole curve: the quantile
    over resamples of the largest deviation across taus, inflated by
    ``n / (n - 1)`` for the bootstrap's shrinkage (``n`` runs per task,
    or tasks when they are resampled). Its whole-curve coverage, measured in
    docs/aggregate.md, reaches the level from 3 runs on 4 tasks; outside
    the measured range the result's ``band_note`` says so.

    Parameters
    ----------
    scores : array_like, shape (methods, tasks, runs) or (tasks, runs)
    taus : array_like, optional
        Increasing thresholds; default 101 points from the smallest to the
        largest score (around the score when all scores are equal).
    methods : sequence of str, optional
    kind : {"runs", "mean"}, default "runs"
    n_resamples : int, default 2000
    confidence : float, default 0.95
    resample_tasks : bool, default False
    rng : None, int or numpy.random.Generator
    progress : bool or None, default False
        Show a tqdm progress bar over the resamples (None: on a terminal only).

    Returns
    -------
    PerformanceProfile
    """
    arr = _as_task_scores(scores, min_tasks=2 if resample_tasks else 1)
    _check_runs_vary(arr, resample_tasks)
    if kind not in ("runs", "mean"):
        raise ArgumentError(f"`kind` must be 'runs' or 'mean'; got {kind!r}.")
    if taus is None:  # identical scores: a span around them, where the profile steps
        low, high = arr.min(), arr.max()
        pad = 0.0 if high > low else max(abs(low) * 1e-3, 1e-3)
        taus = np.linspace(low - pad, high + pad, 101)
    taus = np.asarray(taus, dtype=float).reshape(-1)
    if taus.size < 1 or not np.isfinite(taus).all() or (np.diff(taus) <= 0).any():
        raise ArgumentError("`taus` must be finite and strictly increasing.")
    n_resamples = as_positive_int(n_resamples, "n_resamples", minimum=2)
    check_size(n_resamples, "`n_resamples`", bytes_each=8 * arr.shape[0] * taus.size)
    confidence = as_confidence(confidence)
    gen = as_rng(rng)

    flat = arr.reshape(-1)
    if kind == "runs":  # code every score once by the number of taus below it
        flat = np.searchsorted(taus, flat, side="left").astype(np.int32)

    def profile(values):  # values[..., task, run]: codes, or scores when kind is "mean"
        if kind == "mean":
            codes = np.searchsorted(taus, values.mean(axis=-1), side="left")
        else:
            codes = values.reshape(*values.shape[:-2], -1)
        return _fraction_above(codes, taus.size)

    estimate = profile(flat.reshape(arr.shape))
    dist = np.empty((n_resamples, arr.shape[0], taus.size))
    per_resample = arr.size + arr.shape[0] * taus.size
    start = 0
    with progress_bar(n_resamples, f"profile ({kind})", progress) as bar:
        for b in _chunks(n_resamples, per_resample):
            cells = _draw_cells(gen, b, arr.shape, resample_tasks)
            dist[start : start + b] = profile(flat.take(cells))
            start += b
            bar.update(b)
    low, high = _percentile_interval(dist, confidence)
    units = arr.shape[1] if resample_tasks else arr.shape[2]
    band_low, band_high, crit = _max_deviation_band(dist, estimate, confidence, units)
    return PerformanceProfile(
        methods=_labels(methods, arr.shape[0]),
        taus=taus,
        kind=kind,
        estimate=estimate,
        pointwise_low=low,
        pointwise_high=high,
        band_low=band_low,
        band_high=band_high,
        band_critical=crit,
        band_note=_band_note(arr.shape, resample_tasks),
        confidence=confidence,
        n_resamples=n_resamples,
        resample_tasks=bool(resample_tasks),
        bootstrap_distribution=dist,
    )


# --- probability of improvement --------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class ProbabilityOfImprovement(Result):
    """``P(X > Y)`` averaged over tasks, with a stratified-bootstrap interval.

    Attributes
    ----------
    x, y : str
        Labels of the two methods.
    estimate : float
        ``(1/T) sum_t P(X_t > Y_t)``, ties counting one half: the chance that a run
        of X beats a run of Y on a task picked at random.
    per_task : ndarray, shape (tasks,)
        ``U_t / (n m)``, the Mann-Whitney statistic of each task over its pairs.
    low, high : float
        Interval at ``confidence``: the percentile-bootstrap interval when
        ``family`` is 1; otherwise one of ``family`` simultaneous intervals
        (Bonferroni: ``estimate +- z(1 - alpha / (2 family)) SE``, clipped to
        [0, 1]), so that all of them cover at once with probability at least
        ``confidence``. SE is the bootstrap SD times ``sqrt(u / (u - 1))``,
        ``u`` the resampled units (the fewer runs of the two, or the tasks when
        they are resampled): the bootstrap's shrinkage of a variance.
    confidence : float
    n_resamples : int
    resample_tasks : bool
    family : int
        Number of pairs the interval is adjusted for (1: not adjusted).
    bootstrap_distribution : ndarray, shape (n_resamples,)
    units : int
        Resampled units ``u`` (see ``low, high``).
    """

    x: str
    y: str
    estimate: float
    per_task: np.ndarray
    low: float
    high: float
    confidence: float
    n_resamples: int
    resample_tasks: bool
    family: int
    bootstrap_distribution: np.ndarray
    units: int = 0

    _interval = ("low", "high")

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Return ``(low, high)`` at another level, from the stored resamples."""
        level = self.confidence if confidence_level is None else as_confidence(confidence_level)
        dist = self.bootstrap_distribution
        if self.family == 1:
            low, high = _percentile_interval(dist, level)
        else:
            u = self.units
            se = dist.std(ddof=1) * (np.sqrt(u / (u - 1)) if u > 1 else 1.0)
            half = special.ndtri(1 - (1 - level) / (2 * self.family)) * se
            low, high = max(self.estimate - half, 0.0), min(self.estimate + half, 1.0)
        return ConfidenceInterval(float(low), float(high))

    def to_dict(self) -> dict:
        """Fields as plain values, without the resamples."""
        out = super().to_dict()
        del out["bootstrap_distribution"]
        return out


def _draw_runs(rng, shape: tuple[int, ...]) -> np.ndarray:
    """Run indices drawn with replacement from ``shape[-1]`` runs (uint8 when they fit)."""
    small = np.uint8 if shape[-1] <= 256 else np.intp  # fewer random bytes, same law
    return rng.integers(0, shape[-1], size=shape, dtype=small)


def _improvements(xs, ys, gens, n_resamples: int, resample_tasks: bool, progress=None):
    """Estimates ``(pairs, tasks)`` and bootstrap distributions ``(pairs, resamples)`` of P(X > Y).

    ``xs[p], ys[p]`` (tasks x runs) are pair ``p``'s scores and ``gens[p]``
    its generator, drawn exactly as for that pair alone (the same chunks, in
    the same order). A resample's Mann-Whitney U on a task is ``sum_a
    L(x_a)`` over the drawn runs of X, ``L(x)`` the number of drawn runs of
    Y below ``x`` (ties half): a cumulative count of Y's draws over its
    sorted runs, read at the positions of X's runs. No pairs of runs are
    formed; every pair of methods of a batch at once.
    """
    n_pairs, n_tasks, n = xs.shape
    m = ys.shape[2]
    order = np.argsort(ys, axis=-1, kind="stable")
    rank_y = np.argsort(order, axis=-1).ravel() + 1  # 1 + position of each run of Y, sorted
    ys_sorted = np.take_along_axis(ys, order, axis=-1)
    # twice the positions of X's runs among Y's sorted runs: below + not above
    at = (ys_sorted[..., None, :] < xs[..., :, None]).sum(axis=-1)
    at2 = (ys_sorted[..., None, :] <= xs[..., :, None]).sum(axis=-1)
    estimate = (at + at2).sum(axis=-1) / (2 * n * m)
    at, at2 = at.ravel(), at2.ravel()
    dist = np.empty((n_pairs, n_resamples))
    chunks = list(_chunks(n_resamples, n_tasks * (n + m)))
    batch = max(1, _CHUNK * 4 // (chunks[0] * n_tasks * (n + m)))
    slots = np.arange(n_tasks)
    with progress_bar(n_pairs * n_resamples, "P(X > Y)", progress) as bar:
        for lo in range(0, n_pairs, batch):
            part = np.arange(lo, min(lo + batch, n_pairs))
            start = 0
            for b in chunks:
                rx, ry, tasks = [], [], []
                for gen in gens[lo : lo + part.size]:  # each pair's own stream, as alone
                    t = gen.integers(0, n_tasks, size=(b, n_tasks)) if resample_tasks else slots
                    tasks.append(np.broadcast_to(t, (b, n_tasks)))
                    rx.append(_draw_runs(gen, (b, n_tasks, n)))
                    ry.append(_draw_runs(gen, (b, n_tasks, m)))
                task = part[:, None, None] * n_tasks + np.stack(tasks)  # (batch, b, slot)
                rows = task.size
                row = np.arange(rows).reshape(task.shape)[..., None]
                # Y's draws counted over its sorted runs, cumulated: cum[k] = draws below k
                y_at = rank_y.take(task[..., None] * m + np.stack(ry)) + (m + 1) * row
                cum = np.bincount(y_at.ravel(), minlength=rows * (m + 1))
                cum = cum.reshape(rows, m + 1).cumsum(axis=1).ravel()
                x_run = task[..., None] * n + np.stack(rx)  # flat index of each drawn run of X
                base = (m + 1) * row
                wins = cum.take(at.take(x_run) + base) + cum.take(at2.take(x_run) + base)
                u = np.einsum("ij->i", wins.reshape(rows, n)).reshape(task.shape) / 2
                dist[lo : lo + part.size, start : start + b] = (u / (n * m)).mean(axis=-1)
                start += b
                bar.update(part.size * b)
    return estimate, dist


def _improvement_result(labels, per_task, dist, confidence, resample_tasks, units, family=1):
    result = ProbabilityOfImprovement(
        x=str(labels[0]),
        y=str(labels[1]),
        estimate=float(per_task.mean()),
        per_task=per_task,
        low=np.nan,
        high=np.nan,
        confidence=confidence,
        n_resamples=dist.size,
        resample_tasks=bool(resample_tasks),
        family=int(family),
        bootstrap_distribution=dist,
        units=int(units),
    )
    low, high = result.confidence_interval()
    return dataclasses.replace(result, low=low, high=high)


def _improvement_args(n_resamples, confidence):
    n_resamples = as_positive_int(n_resamples, "n_resamples", minimum=2)
    check_size(n_resamples, "`n_resamples`")
    return n_resamples, as_confidence(confidence)


def probability_of_improvement(
    x,
    y,
    *,
    labels=("x", "y"),
    n_resamples: int = 1000,
    confidence: float = 0.95,
    resample_tasks: bool = False,
    rng=None,
) -> ProbabilityOfImprovement:
    """Probability that a run of X beats a run of Y, averaged over tasks, with its CI.

    Estimand: ``(1/T) sum_t P(X_t > Y_t) + P(X_t = Y_t) / 2`` for independent
    runs ``X_t``, ``Y_t`` on task ``t``. Each task's estimate is the
    Mann-Whitney ``U / (n m)`` (as rliable, without its pairwise loop). The
    interval resamples the runs of X and of Y independently within each task
    (and tasks, if asked), percentile method.

    Parameters
    ----------
    x, y : array_like, shape (tasks, runs)
        Scores of the two methods on the same tasks; run counts may differ.
    labels : (str, str)
    n_resamples : int, default 1000
    confidence : float, default 0.95
    resample_tasks : bool, default False
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ProbabilityOfImprovement
    """
    x = _as_task_scores(x, "x", min_tasks=2 if resample_tasks else 1)[0]
    y = _as_task_scores(y, "y", min_tasks=2 if resample_tasks else 1)[0]
    if x.shape[0] != y.shape[0]:
        raise ArgumentError(
            f"`x` and `y` must cover the same tasks; got {x.shape[0]} and {y.shape[0]} tasks."
        )
    if x.shape[1] < 2 and y.shape[1] < 2:
        _check_runs_vary(x[None], resample_tasks, "x` and `y")
    n_resamples, confidence = _improvement_args(n_resamples, confidence)
    per_task, dist = _improvements(
        x[None], y[None], [as_rng(rng)], n_resamples, resample_tasks, progress=False
    )
    units = x.shape[0] if resample_tasks else min(x.shape[1], y.shape[1])
    return _improvement_result(labels, per_task[0], dist[0], confidence, resample_tasks, units)


def probabilities_of_improvement(
    scores,
    pairs,
    *,
    methods=None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    resample_tasks: bool = False,
    family: int | None = None,
    rng=None,
    progress=False,
) -> list:
    """:func:`probability_of_improvement` for many pairs of methods at once.

    Parameters
    ----------
    scores : array_like, shape (methods, tasks, runs)
    pairs : sequence of (int, int)
        Indices ``(x, y)`` of the methods compared, ``P(X > Y)`` each.
    methods : sequence of str, optional
        Labels of the methods (default ``"0"``, ``"1"``, ...).
    n_resamples, confidence, resample_tasks
        As :func:`probability_of_improvement`.
    family : int, optional
        Make the intervals simultaneous over this many pairs (Bonferroni,
        see :class:`ProbabilityOfImprovement`); default: the number of
        ``pairs``. Pairs chosen after looking at the data (e.g. the best
        method against each other) need the family they were chosen from:
        every pair, ``k (k - 1) / 2``. 1 gives unadjusted percentile intervals.
    rng : None, int, Generator, or a sequence of Generators (one per pair)
        With one seed, every pair gets its own stream spawned from it; each
        pair's result equals :func:`probability_of_improvement` on its stream.
    progress : bool or None, default False
        Show a tqdm progress bar (None: on a terminal only).

    Returns
    -------
    list of ProbabilityOfImprovement, in the order of ``pairs``.
    """
    arr = _as_task_scores(scores, min_tasks=2 if resample_tasks else 1)
    _check_runs_vary(arr, resample_tasks)
    names = _labels(methods, arr.shape[0])
    try:
        index = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    except (TypeError, ValueError):
        raise ArgumentError("`pairs` must be pairs of method indices.") from None
    if index.size and not ((index >= 0) & (index < arr.shape[0])).all():
        raise ArgumentError(f"`pairs` index methods 0 to {arr.shape[0] - 1}.")
    n_resamples, confidence = _improvement_args(n_resamples, confidence)
    family = max(len(index), 1) if family is None else as_positive_int(family, "family")
    if isinstance(rng, (list, tuple)):
        if len(rng) != len(index):
            raise ArgumentError(f"`rng` has {len(rng)} generators for {len(index)} pairs.")
        gens = [as_rng(g) for g in rng]
    else:
        gens = as_rng(rng).spawn(len(index))
    if not len(index):
        return []
    per_task, dist = _improvements(
        arr[index[:, 0]], arr[index[:, 1]], gens, n_resamples, resample_tasks, progress
    )
    return [
        _improvement_result(
            (names[i], names[j]), per_task[p], dist[p], confidence, resample_tasks,
            arr.shape[1] if resample_tasks else arr.shape[2], family,
        )
        for p, (i, j) in enumerate(index)
    ]
