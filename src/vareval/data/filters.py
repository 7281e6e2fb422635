"""Choosing the rows an analysis uses: ``--where`` and ``--dropna``, always said aloud."""

from __future__ import annotations

import warnings

import pandas as pd

from vareval.data.runs import STATUS_COLUMN
from vareval.data.validate import _rows, require_columns
from vareval.errors import ArgumentError, DataError, VarevalWarning


def where(df: pd.DataFrame, expression: str) -> pd.DataFrame:
    """Keep the rows for which ``expression`` (pandas' query syntax) is true.

    Labels are text, so compare them with quoted values (``model == 'svc'``,
    ``seed != '3'``); a column whose name is not an identifier goes in
    backticks (```param.lr` > 0.01``).
    """
    try:
        kept = df.query(expression, engine="python")
    except Exception as exc:  # noqa: BLE001 - pandas raises many types for a bad expression
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ArgumentError(f"--where {expression!r} could not be evaluated: {first}") from None
    if not isinstance(kept, pd.DataFrame):
        raise ArgumentError(f"--where {expression!r} is not a condition on the rows.")
    if kept.empty:
        raise DataError(f"--where {expression!r} keeps no row of {len(df)}.")
    kept.attrs = dict(df.attrs)
    return kept.reset_index(drop=True)


def dropna(df: pd.DataFrame, columns) -> pd.DataFrame:
    """Drop rows with an empty or non-finite value in ``columns``, warning with the count.

    The warning names each column's count and the dropped data rows (1-based),
    so what was left out is on the record. A dropped row whose ``status`` says
    it did not finish (failed, pruned, pending, running) is kept in
    ``attrs["not_done"]``, as a run store's are, so the runs table still counts
    it: dropping a failed run's empty score must not make it vanish.
    """
    columns = require_columns(df, list(dict.fromkeys(columns)), "--dropna")
    empty = pd.DataFrame({c: _empty(df[c]) for c in columns})
    drop = empty.any(axis=1).to_numpy()
    if not drop.any():
        return df
    if drop.all():
        raise DataError(f"--dropna would drop every row: {', '.join(columns)} are empty in all.")
    counts = ", ".join(f"{c!r} {int(n)}" for c, n in empty.sum().items() if n)
    status = df.get(STATUS_COLUMN)
    unfinished = drop & (status.astype(str).ne("done").to_numpy() if status is not None else False)
    still = (f"; {int(unfinished.sum())} of them did not finish (status) and still count"
             if unfinished.any() else "")
    warnings.warn(f"--dropna: dropped {int(drop.sum())} of {len(df)} rows with an empty value "
                  f"({counts}): data rows {_rows(drop)}{still}.", VarevalWarning, stacklevel=2)
    kept = df.loc[~drop].reset_index(drop=True)
    kept.attrs = dict(df.attrs)
    if unfinished.any():  # counted by vareval.data.runs, as a run store's left-out trials
        kept.attrs["not_done"] = [*(df.attrs.get("not_done") or []),
                                  *df.loc[unfinished].to_dict("records")]
    return kept


def _empty(column: pd.Series) -> pd.Series:
    """A number that is NaN or infinite (a diverged run), or a missing or empty label."""
    if pd.api.types.is_numeric_dtype(column):
        return ~column.astype(float).abs().lt(float("inf"))
    return column.isna() | column.astype(str).eq("")
