"""What happened to every planned run: done, failed, not run, or done with no number.

A summary of the runs that finished is a *survivor* statistic when some runs
failed: a method that crashes on its hard seeds looks better than it is. So
every summary counts, per method, the runs that were

- *planned*: every row of the table (and, for a run store, every trial it
  declared, including those left out for not being done);
- *done*: finished; *failed*: the trial raised or timed out; *pruned*:
  stopped early on purpose by the search (Optuna's pruner; an importer's
  word); *not run*: still pending or running;
- *non-finite*: done, but the metric is empty, NaN or infinite;
- *summarised*: done with a finite metric, the runs the summary covers.

How a table says a run failed: an optional ``status`` column with the run
store's words, ``done``, ``failed``, ``pending`` or ``running`` (a store's
export has it), or ``pruned`` (the importers': one vocabulary for the
runner, the importers and the analyses). Rows that are not ``done`` keep
their place in the count and their metric cell is ignored (it may be
empty). Without a ``status`` column every row counts as done. A run store
read with :func:`read_table` keeps the trials it left out in
``df.attrs["not_done"]``, so they are counted too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vareval.data.validate import _rows, labels, metric_values, require_columns
from vareval.errors import DataError
from vareval.stats._result import Result

STATUS_COLUMN = "status"
STATUSES = ("done", "failed", "pruned", "pending", "running")


@dataclasses.dataclass(frozen=True, repr=False)
class RunCount(Result):
    """The fate of one method's planned runs.

    No figure: counts of runs, read from its fields (the report's run table shows them).

    Attributes
    ----------
    planned, done, failed, not_run, non_finite, summarised : int
        See the module notes; ``planned = done + failed + pruned + not_run``
        and ``summarised = done - non_finite``.
    non_finite_rows : tuple of int
        1-based data rows of the done runs whose metric is not a finite number.
    pruned : int
        Runs the search stopped early (not finished, so not summarised).
    """

    planned: int
    done: int
    failed: int
    not_run: int
    non_finite: int
    summarised: int
    non_finite_rows: tuple = ()
    pruned: int = 0

    @property
    def complete(self) -> bool:
        """Whether the summary covers every planned run."""
        return self.summarised == self.planned

    def facts(self, metric: str) -> str:
        """The runs not summarised and why, in words ("" if none)."""
        parts = []
        if self.failed:
            parts.append(f"{self.failed} of {self.planned} runs failed")
        if self.pruned:
            parts.append(f"{self.pruned} of {self.planned} runs were pruned (stopped early)")
        if self.not_run:
            parts.append(f"{self.not_run} of {self.planned} runs have not run")
        if self.non_finite:
            rows = ", ".join(map(str, self.non_finite_rows[:8]))
            more = " ..." if self.non_finite > 8 else ""
            parts.append(
                f"{self.non_finite} of {self.planned} finished with no finite {metric} "
                f"(data row(s) {rows}{more})"
            )
        return "; ".join(parts)

    def sentence(self, name: str, metric: str) -> str:
        """What happened, in words; "" when every planned run is summarised."""
        if self.complete:
            return ""
        finished = "finished" if not self.non_finite else f"finished with a finite {metric}"
        return (
            f"method {name}: {self.facts(metric)}; its summary covers the "
            f"{self.summarised} that {finished}: a survivor statistic"
        )


def _statuses(df: pd.DataFrame) -> np.ndarray:
    """Each row's status: the ``status`` column's words, or "done" without one."""
    if STATUS_COLUMN not in df.columns:
        return np.full(len(df), "done", dtype=object)
    raw = df[STATUS_COLUMN]
    status = raw.astype(str).to_numpy(dtype=object)
    bad = ~np.isin(status, STATUSES) | raw.isna().to_numpy()
    if bad.any():
        raise DataError(
            f"column {STATUS_COLUMN!r} has {status[bad][0]!r} in data row(s) "
            f"{_rows(bad)}; a run's status is one of {', '.join(STATUSES)}."
        )
    return status


def _finite_metric(df: pd.DataFrame, metric: str, done: np.ndarray) -> np.ndarray:
    """Whether each row's metric is a finite number; refuse text or booleans in a done run."""
    require_columns(df, [metric], "metric")
    raw = df[metric]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, copy=True)
    text = np.isnan(values) & raw.notna().to_numpy()
    if text.any():  # "nan", "inf", "-Infinity" as written in a text file
        cells = raw[text].map({v: _spelled_float(v) for v in pd.unique(raw[text])})
        known = cells.map(lambda v: v is not None).to_numpy(dtype=bool)
        values[np.flatnonzero(text)[known]] = cells[known].to_numpy(dtype=float)
        text[np.flatnonzero(text)[known]] = False
    finite = np.isfinite(values)
    # The validator's verdict on what is left: text or booleans in a finished run.
    skip = ~done | (~text & ~finite)
    metric_values(df.assign(**{metric: raw.mask(skip, 0)}), metric, named=False)
    return finite


def _spelled_float(cell) -> float | None:
    """The float a text cell spells ("nan", "inf" ...), or None for other text."""
    try:
        return float(str(cell).strip())
    except ValueError:
        return None


def count_runs(df: pd.DataFrame, metric: str, by) -> tuple[dict, np.ndarray]:
    """Count each method's runs by fate, and mark the rows a summary may use.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per run, with an optional ``status`` column (see the module
        notes); a run store's left-out trials in ``df.attrs["not_done"]``.
    metric : str
        The metric column.
    by : str or list of str
        The method column(s).

    Returns
    -------
    (dict of str to RunCount, ndarray of bool)
        The counts per method in order of first appearance, and which rows of
        ``df`` are done with a finite metric.
    """
    status = _statuses(df)
    done = status == "done"
    finite = _finite_metric(df, metric, done)
    names = labels(df, by, "method").to_numpy()
    left_out = pd.DataFrame.from_records(df.attrs.get("not_done") or [])
    extra = (
        labels(left_out, by, "method").to_numpy()
        if len(left_out)
        else np.array([], dtype=object)
    )
    extra_status = (
        left_out[STATUS_COLUMN].astype(str).to_numpy() if len(left_out) else extra
    )
    counts = {}
    for name in pd.unique(np.concatenate([names, extra])):
        mine, theirs = names == name, extra_status[extra == name]
        bad = mine & done & ~finite
        failed = int(np.sum(mine & (status == "failed"))) + int(
            np.sum(theirs == "failed")
        )
        pruned = int(np.sum(mine & (status == "pruned"))) + int(np.sum(theirs == "pruned"))
        planned = int(mine.sum()) + theirs.size
        n_done = int(np.sum(mine & done))
        counts[str(name)] = RunCount(
            planned=planned,
            done=n_done,
            failed=failed,
            pruned=pruned,
            not_run=planned - n_done - failed - pruned,
            non_finite=int(bad.sum()),
            summarised=int(np.sum(mine & done & finite)),
            non_finite_rows=tuple(int(i) + 1 for i in np.flatnonzero(bad)),
        )
    return counts, done & finite


def usable_runs(df: pd.DataFrame, metric: str, by, *, min_runs: int = 2):
    """The rows a summary may use and the counts; refuse a method with too few of them.

    Returns
    -------
    (pandas.DataFrame, dict of str to RunCount)
        The done rows with a finite metric (index reset; ``attrs`` kept) and
        the counts per method.

    Raises
    ------
    DataError
        If a finished run has an empty, NaN or infinite metric (as every
        command refuses one; ``--dropna`` leaves such rows out, named), or a
        method has fewer than ``min_runs`` summarisable runs; the message
        says what happened to the others.
    """
    counts, usable = count_runs(df, metric, by)
    # one rule in every command: a finished run without a number is an error, not a gap
    bad = sorted(r for c in counts.values() for r in c.non_finite_rows)
    if bad:
        shown = ", ".join(map(str, bad[:8])) + (" ..." if len(bad) > 8 else "")
        raise DataError(
            f"metric column {metric!r} has missing or infinite values in data row(s) {shown} "
            "of finished runs; fill or remove those rows explicitly (the command's --dropna "
            "leaves them out and names them; a failed run says so in a status column)."
        )
    for name, c in counts.items():
        if c.summarised < min_runs:
            raise DataError(
                f"method {name!r} has {c.summarised} finished run(s) with a finite "
                f"{metric!r}" + (f" ({c.facts(metric)})" if c.facts(metric) else "")
                + f"; a summary needs at least {min_runs}."
            )
    out = df.loc[usable].reset_index(drop=True)
    out.attrs = dict(df.attrs)
    return out, counts
