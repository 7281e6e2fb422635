"""Validating a results table and turning its columns into arrays by role.

Roles: the *metric* column holds the numbers, the *by* column(s) name the
method (or system, model ...), and optional *pairing* columns (seed, fold,
dataset ...) say which runs of different methods belong together. Every
problem is reported with the column and the rows involved; no row is ever
dropped silently.

Labels are text (:func:`label_text`): a cell read as text is its own label;
a number column (from Parquet, a store or a user's DataFrame) is labelled by
the shortest text that gives the number back, and a float column holding
only whole numbers (pandas' integers with gaps) by the integers. Several
label columns make one label per row, its parts joined with ``/``; a part
that contains ``/`` or ``"`` is quoted (``"a/b"/c`` is not ``a/"b/c"``), so
different tuples never share a label.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from vareval.data.design import metric_bounds
from vareval.errors import ArgumentError, DataError


def _rows(mask: np.ndarray) -> str:
    """Name the offending rows 1-based, as a user counts data rows in a file."""
    idx = np.flatnonzero(mask) + 1
    shown = ", ".join(str(i) for i in idx[:8])
    return shown + (f" ... ({idx.size} rows)" if idx.size > 8 else "")


def shown(names, limit: int = 10, width: int = 40) -> str:
    """Labels for a message: each in quotes (spaces show), a long one cut, at most ``limit``."""
    names = [str(n) for n in names]
    cut = [repr(n if len(n) <= width else n[:width] + "...") for n in names[:limit]]
    return ", ".join(cut) + (f" ... ({len(names)} in all)" if len(names) > limit else "")


def checks_table(func):
    """``func(df, ...)`` that refuses a ``df`` that is not a table with rows, naming ``df``.

    The public API's functions on a results table get it on export
    (``vareval.__getattr__``), so a list, dict, array, None or an empty
    DataFrame is one :class:`DataError`, as the command line says it.
    """

    @functools.wraps(func)
    def checked(*args, **kwargs):
        df = args[0] if args else kwargs.get("df")
        if not isinstance(df, pd.DataFrame):
            raise ArgumentError(
                f"{func.__name__}(): `df` must be a pandas DataFrame, one row per run (read a file "
                f"with vareval.read_table); got {type(df).__name__}."
            )
        if df.shape[0] == 0 or df.shape[1] == 0:
            raise DataError(
                f"{func.__name__}(): `df` is empty ({df.shape[0]} rows, {df.shape[1]} columns): "
                "no rows to analyse; expected one row per run."
            )
        return func(*args, **kwargs)

    return checked


def require_columns(df: pd.DataFrame, columns, role: str) -> list[str]:
    """Check that every column in ``columns`` exists; suggest close names if not."""
    columns = [columns] if isinstance(columns, str) else list(columns)
    if not columns:
        raise DataError(f"no {role} column given; name at least one.")
    present = [str(c) for c in df.columns]
    for col in columns:
        if present.count(str(col)) > 1:
            raise DataError(
                f"{role} column {col!r} appears {present.count(str(col))} times in the table; "
                "every column needs its own name."
            )
        if col not in df.columns:
            import difflib  # for a misspelt name only

            close = difflib.get_close_matches(str(col), present, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise DataError(
                f"{role} column {col!r} not found{hint} (columns: {', '.join(present)})"
            )
    return columns


def refuse_booleans(raw: pd.Series, column: str) -> None:
    """Refuse True/False in a metric column: a metric is a number (the runner's rule too)."""
    if raw.dtype.kind in "iuf":
        return
    flags = raw.astype(str).str.lower().isin(["true", "false"]).to_numpy()
    if flags.any():
        raise DataError(
            f"metric column {column!r} holds booleans (data row(s) {_rows(flags)}); a metric "
            "must be a number: write 1/0 if that is what it means."
        )


def metric_values(
    df: pd.DataFrame, column: str, bounds=None, *, named: bool = True
) -> np.ndarray:
    """Return a metric column as floats; refuse text, NaN, infinities and out-of-bounds by row.

    ``bounds`` (low, high) are the metric's given bounds; without them a
    column whose name says it is a proportion (``accuracy``, ``f1`` ...:
    :func:`vareval.data.design.metric_bounds`) is held to [0, 1], unless
    ``named`` is False (a covariate, not a metric). Every command that reads
    a metric reads it here, so one rule refuses a value outside the bounds.
    """
    require_columns(df, [column], "metric")
    raw = df[column]
    refuse_booleans(raw, column)
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    text = np.isnan(values) & raw.notna().to_numpy()
    if text.any():
        example = raw[text].iloc[0]
        raise DataError(
            f"metric column {column!r} has non-numeric values in data row(s) "
            f"{_rows(text)} (e.g. {example!r}); only numbers are accepted."
        )
    missing = ~np.isfinite(values)
    if missing.any():
        raise DataError(
            f"metric column {column!r} has missing or infinite values in data row(s) "
            f"{_rows(missing)}{_unfinished(df, missing)}; fill or remove those rows "
            "explicitly (the command's --dropna drops them and says how many)."
        )
    if bounds is not None or named:
        check_bounds(values, column, *metric_bounds(column if named else None, bounds))
    return values


def check_bounds(values: np.ndarray, column: str, bounds, where: str = "") -> None:
    """Refuse values outside ``bounds`` (low, high), naming the rows; None: no bounds known."""
    if bounds is None:
        return
    low, high = bounds
    outside = (values < low) | (values > high)
    if outside.any():
        why = f" ({where})" if where else ""
        raise DataError(
            f"metric column {column!r} has {int(outside.sum())} value(s) outside the bounds "
            f"[{low:g}, {high:g}]{why} in data row(s) {_rows(outside)} (e.g. "
            f"{values[outside][0]:g}); fix the scores, or give the metric's true bounds "
            "(--bounds LOW,HIGH, or a column name that says so: 'accuracy_pct' is in [0, 100])."
        )


def _unfinished(df: pd.DataFrame, rows: np.ndarray) -> str:
    """' (status failed: runs that did not finish)' when a status column says so."""
    if "status" not in df.columns:
        return ""
    words = sorted({str(w) for w in df["status"].to_numpy()[rows]} - {"done"})
    if not words:
        return ""
    return f" (status {', '.join(words)}: runs that did not finish)"


def numbers_where_possible(df: pd.DataFrame, columns) -> pd.DataFrame:
    """Metric columns as floats when every cell is a number (``nan`` and ``inf`` included).

    A table reader keeps a column as text unless that loses nothing (a metric
    written ``0.970370`` stays text); once a column's role is known to be a
    metric, it can be numbers, so that filters compare numbers. A column with
    any other text, or booleans, is left as it is for :func:`metric_values` to
    refuse by row.
    """
    out = df.copy()
    for column in dict.fromkeys(columns):
        if column not in df.columns or df[column].dtype.kind in "biuf":
            continue
        raw = df[column]
        values = pd.to_numeric(raw, errors="coerce")
        words = raw.astype(str).str.strip().str.lower().str.lstrip("+-")
        if (values.notna() | raw.isna() | words.isin(["nan", "inf", "infinity"])).all():
            out[column] = values.where(~words.isin(["inf", "infinity"]), _signed_inf(raw))
    out.attrs = dict(df.attrs)
    return out


def _signed_inf(raw: pd.Series) -> pd.Series:
    return np.where(raw.astype(str).str.strip().str.startswith("-"), -np.inf, np.inf)


def label_text(series: pd.Series, column: str, role: str) -> pd.Series:
    """Each cell of a label column as text (see the module notes); refuse empty cells."""
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"{role} column {column!r} is empty in data row(s) {_rows(missing)}; "
            "every row needs a value (an empty cell is missing, not a label)."
        )
    values = series.to_numpy()
    if series.dtype.kind == "f" and np.all(np.isfinite(values) & (values == np.round(values))):
        series = series.astype(np.int64)
    if series.dtype.kind in "biuf":
        return series.astype(str).astype(object)
    if pd.api.types.infer_dtype(series, skipna=False) == "string":  # text already
        return series.astype(object)
    return series.map(_cell_text).astype(object)


def _cell_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def _quoted(text: pd.Series) -> pd.Series:
    """Each part as written, or in double quotes (inner ``"`` doubled) if it has ``/`` or ``"``."""
    needs = text.str.contains("/", regex=False) | text.str.contains('"', regex=False)
    return text.where(~needs, '"' + text.str.replace('"', '""', regex=False) + '"')


def join_label(parts) -> str:
    """One label for a tuple of parts: joined with ``/``, a part with ``/`` or ``"`` quoted."""
    return "/".join(_quoted(pd.Series([str(p) for p in parts], dtype=object)))


def labels(df: pd.DataFrame, columns, role: str) -> pd.Series:
    """Return one text label per row from one or more columns, refusing blanks.

    One column: its cells as text. Several: the tuple of cells as one label
    (:func:`join_label`), so that ``("a/b", "c")`` and ``("a", "b/c")`` stay apart.
    """
    columns = require_columns(df, columns, role)
    texts = [label_text(df[col], col, role) for col in columns]
    if len(texts) == 1:
        return texts[0]
    quoted = [_quoted(t.astype(str)) for t in texts]
    return quoted[0].str.cat(quoted[1:], sep="/").astype(object)


def groups(
    df: pd.DataFrame, metric: str, by, *, min_runs: int = 1, bounds=None
) -> dict[str, np.ndarray]:
    """Split the metric by method, in order of first appearance (``bounds``: the metric's).

    Raises
    ------
    DataError
        If a method has fewer than ``min_runs`` runs.
    """
    values = metric_values(df, metric, bounds)
    names = labels(df, by, "method")
    out = {str(name): values[(names == name).to_numpy()] for name in pd.unique(names)}
    for name, scores in out.items():
        if scores.size < min_runs:
            raise DataError(
                f"method {name!r} has {scores.size} run(s) in column {metric!r}; "
                f"this needs at least {min_runs}."
            )
    return out


def pairs(
    df: pd.DataFrame, metric: str, by, pair_on, a: str, b: str, bounds=None
) -> tuple[np.ndarray, np.ndarray, list]:
    """Align methods ``a`` and ``b`` on the pairing key(s); refuse unmatched or duplicate keys.

    Returns
    -------
    (scores_a, scores_b, keys)
        Matched arrays in key order and the keys themselves.
    """
    values = metric_values(df, metric, bounds)
    names = labels(df, by, "method").to_numpy()
    keys = labels(df, pair_on, "pairing")
    for m in (a, b):
        if m not in set(names):
            import difflib

            close = difflib.get_close_matches(m, sorted(set(names)), n=3, cutoff=0.5)
            hint = f"; did you mean {shown(close)}?" if close else ""
            raise DataError(
                f"method {shown([m])} not found{hint} (methods: {shown(sorted(set(names)))})"
            )
    if a == b:
        raise DataError(f"methods to compare must differ; got {a!r} twice.")
    sides = {}
    for m in (a, b):
        sel = names == m
        k = keys[sel]
        dup = k.duplicated(keep=False).to_numpy()
        if dup.any():
            raise DataError(
                f"method {m!r} has duplicate pairing key {k[dup].iloc[0]!r} "
                f"(data rows {_rows(sel & np.isin(keys, k[dup]))}); "
                "each key must appear once per method."
            )
        sides[m] = pd.Series(values[sel], index=k.to_numpy())
    only_a = sides[a].index.difference(sides[b].index)
    only_b = sides[b].index.difference(sides[a].index)
    if len(only_a) or len(only_b):
        parts = []
        if len(only_a):
            parts.append(f"keys only in {a!r}: {', '.join(map(str, only_a[:5]))}")
        if len(only_b):
            parts.append(f"keys only in {b!r}: {', '.join(map(str, only_b[:5]))}")
        raise DataError("unmatched pairs: " + "; ".join(parts) + "; every key needs both methods.")
    order = list(sides[a].index)
    return sides[a].to_numpy(), sides[b].loc[order].to_numpy(), order
