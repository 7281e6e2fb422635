"""Multi-task results: a long table turned into a score array ``[method, task, run]``.

Roles: the *metric* column holds the scores, the *by* column(s) name the
method, the *task* column(s) name the task (data set, game, benchmark), and
an optional *pairing* column (seed, fold) names the run. The validator
refuses, in one line each, every table the aggregates would otherwise have to
guess about:

- a task that some method lacks (a method must be scored on every task);
- unequal runs: every (method, task) cell must hold the same number of runs.
  This is rliable's layout (one ``runs x tasks`` array per method) and keeps
  the stratified bootstrap a dense, vectorised draw. Different run counts
  mean some runs were lost or added; drop or complete them explicitly;
- with ``pair_on``: a run key that repeats within a cell or that is missing
  from some cell; runs are then ordered by key, so run ``r`` is the same seed
  in every cell;
- NaN, infinite or non-numeric scores (never dropped);
- fewer tasks than ``min_tasks`` (default 2): with one task there is no
  between-task variation, so nothing can be said about a suite of tasks;
- a reference table (random / human baselines) that lacks a task.

Example
-------
>>> table = task_scores(df, metric="accuracy", by="method", task="dataset", pair_on="seed")
>>> table.scores.shape       # (methods, tasks, runs)
>>> table.methods, table.tasks, table.runs
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vareval.data.tables import FrameResult
from vareval.data.validate import labels, metric_values, require_columns, shown
from vareval.errors import DataError


@dataclasses.dataclass(frozen=True, repr=False)
class TaskScores(FrameResult):
    """Scores of several methods on several tasks, ``scores[method, task, run]``.

    No figure: the input array of scores; its figures are those of interval_estimates,
    performance_profile and rank_methods.

    Attributes
    ----------
    scores : ndarray of float, shape (methods, tasks, runs)
        Every score, finite. ``scores[m, t]`` holds method ``m``'s runs on task ``t``.
    methods, tasks : tuple of str
        Labels in order of first appearance in the table.
    runs : tuple of str or None
        The pairing keys (run axis order, the same in every cell) when ``pair_on``
        was given; ``None`` when runs are in table order and unpaired.
    metric : str
        The metric column's name.
    """

    scores: np.ndarray
    methods: tuple
    tasks: tuple
    runs: tuple | None
    metric: str

    def method(self, name: str) -> np.ndarray:
        """Return one method's ``[task, run]`` scores."""
        if name not in self.methods:
            raise DataError(f"method {name!r} not found (methods: {shown(self.methods)}).")
        return self.scores[self.methods.index(name)]

    def to_frame(self) -> pd.DataFrame:
        """One row per score: ``method``, ``task``, ``run`` (the pairing key or position), score."""
        m, t, r = self.scores.shape
        runs = list(self.runs) if self.runs is not None else list(range(r))
        index = pd.MultiIndex.from_product(
            [list(self.methods), list(self.tasks), runs], names=["method", "task", "run"]
        )
        return pd.DataFrame({self.metric: self.scores.reshape(-1)}, index=index).reset_index()

    def to_rliable(self) -> dict:
        """Return rliable's layout: ``{method: array[run, task]}``."""
        return {m: self.scores[i].T.copy() for i, m in enumerate(self.methods)}

    def __repr__(self) -> str:
        m, t, r = self.scores.shape
        paired = f", paired on {len(self.runs)} keys" if self.runs is not None else ""
        return f"TaskScores({self.metric!r}: {m} methods x {t} tasks x {r} runs{paired})"


def _cell_sizes(method: pd.Series, task: pd.Series) -> pd.DataFrame:
    """Runs per (method, task) cell; 0 where a method lacks a task."""
    counts = pd.crosstab(method, task)
    return counts.loc[pd.unique(method), pd.unique(task)]


def _check_complete(counts: pd.DataFrame) -> None:
    missing = np.argwhere(counts.to_numpy() == 0)
    if missing.size:
        m, t = missing[0]
        raise DataError(
            f"method {counts.index[m]!r} has no runs on task {counts.columns[t]!r} "
            f"({missing.shape[0]} method x task cell(s) empty); "
            "every method must be scored on every task."
        )


def _check_equal_runs(counts: pd.DataFrame) -> int:
    values = counts.to_numpy()
    if (values == values.flat[0]).all():
        return int(values.flat[0])
    low = np.unravel_index(values.argmin(), values.shape)
    high = np.unravel_index(values.argmax(), values.shape)
    raise DataError(
        f"unequal runs per task: method {counts.index[low[0]]!r} has {values[low]} run(s) on task "
        f"{counts.columns[low[1]]!r} but method {counts.index[high[0]]!r} has {values[high]} on "
        f"{counts.columns[high[1]]!r}; every method x task cell needs the same number of runs "
        "(drop or complete runs explicitly)."
    )


def _check_keys(method, task, keys, counts: pd.DataFrame) -> tuple:
    """Refuse repeated or missing run keys; return the keys in order of first appearance."""
    frame = pd.DataFrame({"m": method.to_numpy(), "t": task.to_numpy(), "k": keys.to_numpy()})
    dup = frame.duplicated(keep=False).to_numpy()
    if dup.any():
        row = frame[dup].iloc[0]
        raise DataError(
            f"run key {row.k!r} appears more than once for method {row.m!r} on task {row.t!r} "
            f"(data rows {', '.join(str(i + 1) for i in np.flatnonzero(dup)[:6])}); "
            "each pairing key must appear once per method and task."
        )
    all_keys = tuple(pd.unique(frame.k))
    short = np.argwhere(counts.to_numpy() < len(all_keys))
    if short.size:  # no key repeats, so a cell with fewer runs lacks some key
        m, t = counts.index[short[0][0]], counts.columns[short[0][1]]
        have = set(frame.k[(frame.m == m) & (frame.t == t)])
        absent = [k for k in all_keys if k not in have]
        raise DataError(
            f"method {m!r} on task {t!r} lacks run key(s) {', '.join(map(repr, absent[:5]))} "
            "that other cells have; every method x task cell must hold the same pairing keys."
        )
    return all_keys


def task_scores(
    df: pd.DataFrame,
    metric: str,
    by,
    task,
    *,
    pair_on=None,
    min_tasks: int = 2,
) -> TaskScores:
    """Validate a long table and return its scores as ``[method, task, run]``.

    Parameters
    ----------
    df : DataFrame
        One row per run: a method, a task, optionally a run key, and a score.
    metric : str
        The score column.
    by, task : str or list of str
        Column(s) naming the method and the task (several are joined with '/').
    pair_on : str or list of str, optional
        Column(s) naming the run (e.g. ``seed``). Then every cell must hold the same
        keys once each, and the run axis is ordered by key. Without it, runs keep
        table order and no pairing across methods is implied.
    min_tasks : int, default 2
        Fewest tasks accepted.

    Returns
    -------
    TaskScores

    Raises
    ------
    DataError
        One line naming the column, task or method at fault (see the module notes).
    """
    values = metric_values(df, metric)
    method = labels(df, by, "method")
    task_ = labels(df, task, "task")
    tasks = pd.unique(task_)
    if tasks.size < min_tasks:
        shown = ", ".join(repr(t) for t in tasks)
        raise DataError(
            f"task column {task!r} has {tasks.size} task(s) ({shown}); aggregating across tasks "
            f"needs at least {min_tasks}: with one task there is no between-task variation, so "
            "no claim about a suite of tasks can be estimated (use `vareval summarize` for one "
            "data set)."
        )
    counts = _cell_sizes(method, task_)
    _check_complete(counts)
    runs = None
    if pair_on is not None:
        require_columns(df, pair_on, "pairing")
        runs = _check_keys(method, task_, labels(df, pair_on, "pairing"), counts)
    n_runs = _check_equal_runs(counts)
    methods, tasks = list(counts.index), list(counts.columns)
    m_idx = pd.Index(methods).get_indexer(method)
    t_idx = pd.Index(tasks).get_indexer(task_)
    if runs is None:  # table order within each cell
        cell = m_idx * len(tasks) + t_idx
        r_idx = pd.Series(cell).groupby(cell).cumcount().to_numpy()
    else:
        r_idx = pd.Index(runs).get_indexer(labels(df, pair_on, "pairing"))
    scores = np.empty((len(methods), len(tasks), n_runs))
    scores[m_idx, t_idx, r_idx] = values
    return TaskScores(
        scores=scores,
        methods=tuple(str(m) for m in methods),
        tasks=tuple(str(t) for t in tasks),
        runs=runs,
        metric=str(metric),
    )


def reference_scores(ref: pd.DataFrame, tasks, *, task, low: str, high: str):
    """Per-task reference scores (e.g. random and human) aligned to ``tasks``.

    Parameters
    ----------
    ref : DataFrame
        One row per task with the task column and two score columns.
    tasks : sequence of str
        The tasks to align to (``TaskScores.tasks``).
    task : str or list of str
        The task column(s) in ``ref``.
    low, high : str
        Columns whose scores map to 0 and 1 after normalisation.

    Returns
    -------
    (low, high) : tuple of ndarray, shape (tasks,)

    Raises
    ------
    DataError
        A task missing from ``ref`` or listed twice, or a non-numeric reference.
    """
    names = labels(ref, task, "reference task")
    dup = names.duplicated(keep=False).to_numpy()
    if dup.any():
        raise DataError(
            f"reference table lists task {names[dup].iloc[0]!r} more than once; "
            "give one row per task."
        )
    missing = [t for t in tasks if t not in set(names)]
    if missing:
        raise DataError(
            f"reference table has no row for task(s) {', '.join(map(repr, missing[:5]))}"
            f"{' ...' if len(missing) > 5 else ''}; it needs one row for every task scored."
        )
    order = pd.Index(names).get_indexer(list(tasks))
    return metric_values(ref, low)[order], metric_values(ref, high)[order]
