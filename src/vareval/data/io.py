"""Reading results tables from files into pandas DataFrames.

One row per run (or per item). The format follows the file's extension:
``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.parquet``/``.pq``.
Nothing is dropped: empty cells stay NaN and the validators in
:mod:`vareval.data.validate` report them by row.
"""

from __future__ import annotations

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
        A ``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet`` file.

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


def _read_csv(path, sep=","):
    try:
        return pd.read_csv(path, sep=sep, keep_default_na=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"file '{path}' is empty; expected a header and one row per run.") from None


def _read_parquet(path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataError(
            f"file '{path}': reading Parquet needs pyarrow; install it with "
            "pip install 'vareval[parquet]'."
        ) from None
    return pd.read_parquet(path)


_READERS = {
    "csv": _read_csv,
    "tsv": lambda p: _read_csv(p, sep="\t"),
    "jsonl": lambda p: pd.read_json(p, lines=True),
    "parquet": _read_parquet,
    "store": read_store_table,
}
