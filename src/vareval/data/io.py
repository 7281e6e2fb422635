"""Reading results tables from files into pandas DataFrames.

One row per run (or per item). The format follows the file's extension:
``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.parquet``/``.pq``.
Nothing is dropped: empty cells stay NaN and the validators in
:mod:`vareval.data.validate` report them by row.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pandas as pd

from vareval.data.store_table import read_store_table
from vareval.errors import DataError

_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".db": "store",
    ".sqlite": "store",
    ".sqlite3": "store",
}
ACCEPTED = ", ".join(sorted(_FORMATS))


def read_table(path) -> pd.DataFrame:
    """Read a results table; the format is chosen by the file's extension.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet`` file, a run store,
        or ``-`` for standard input (its format is told by its first bytes:
        Parquet's magic, a ``{`` for JSON Lines, a tab-separated header, or
        else CSV).

    Returns
    -------
    pandas.DataFrame
        The table as written, with a default integer index (row 0 is the
        first data row).

    Raises
    ------
    DataError
        If the file is missing, empty, of an unknown type or unparsable.
    """
    if str(path) == "-":
        return _read_stdin()
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(
            f"file '{path}': unknown file type '{path.suffix or '(none)'}'; accepted: {ACCEPTED}."
        )
    if not path.is_file():
        raise DataError(f"file '{path}' does not exist or is not a regular file.")
    if path.stat().st_size == 0:
        raise DataError(f"file '{path}' is empty; expected a header and one row per run.")
    try:
        df = _READERS[fmt](path)
    except DataError:
        raise
    except (ValueError, UnicodeDecodeError, OSError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"file '{path}' could not be read as {fmt}: {first}") from None
    if df.shape[1] == 0 or len(df) == 0:
        raise DataError(f"file '{path}' has no data rows; expected one row per run.")
    return df.reset_index(drop=True)


def _read_stdin() -> pd.DataFrame:
    data = sys.stdin.buffer.read()
    if not data.strip():
        raise DataError("standard input is empty; expected a header and one row per run.")
    head = data.lstrip()[:4096]
    fmt = ("parquet" if data[:4] == b"PAR1" else "jsonl" if head.startswith(b"{")
           else "tsv" if b"\t" in head.split(b"\n")[0] and b"," not in head.split(b"\n")[0]
           else "csv")
    try:
        df = _READERS[fmt](io.BytesIO(data))
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"standard input could not be read as {fmt}: {first}") from None
    if df.shape[1] == 0 or len(df) == 0:
        raise DataError("standard input has no data rows; expected one row per run.")
    return df.reset_index(drop=True)


def write_table(df: pd.DataFrame, path=None, fmt: str | None = None) -> str | None:
    """Write ``df`` to ``path`` (format by extension, or ``fmt``); return the text if no path.

    Without a path the table is returned as CSV or JSON Lines text for standard
    output; Parquet, being binary, needs a path.
    """
    fmt = fmt or (_FORMATS.get(Path(path).suffix.lower()) if path else "csv")
    if fmt not in ("csv", "tsv", "jsonl", "parquet"):
        raise DataError(f"output '{path}': unknown table type; accepted: .csv, .tsv, .jsonl, "
                        ".parquet.")
    if fmt == "parquet":
        if path is None:
            raise DataError("a Parquet table needs an output file (-o FILE.parquet).")
        _need_pyarrow(path)
        df.to_parquet(path, index=False)
        return None
    text = (df.to_json(orient="records", lines=True) if fmt == "jsonl"
            else df.to_csv(index=False, sep="\t" if fmt == "tsv" else ","))
    if path is None:
        return text
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DataError(f"output '{path}' could not be written: {exc.strerror}.") from None
    return None


def _read_csv(path, sep=","):
    try:
        return pd.read_csv(path, sep=sep, keep_default_na=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"file '{path}' is empty; expected a header and one row per run.") from None


def _need_pyarrow(path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataError(
            f"file '{path}': Parquet needs pyarrow; install it with pip install 'vareval[parquet]'."
        ) from None


def _read_parquet(path):
    _need_pyarrow(path)
    return pd.read_parquet(path)


_READERS = {
    "csv": _read_csv,
    "tsv": lambda p: _read_csv(p, sep="\t"),
    "jsonl": lambda p: pd.read_json(p, lines=True),
    "parquet": _read_parquet,
    "store": read_store_table,
}
