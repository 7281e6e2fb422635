"""Reading results tables from files into pandas DataFrames.

One row per run (or per item). The format follows the file's extension:
``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.parquet``/``.pq``.

Labels are text, exactly as written. A text file is read cell by cell as
text: only an empty cell (or JSON ``null``) is missing; ``NA``, ``None`` and
``nan`` are text. A column is then turned into numbers only when that loses
nothing: every cell is the canonical spelling of a finite number (``3``,
``0.25``, ``1e-05``: ``str`` of the parsed value gives the cell back), and
not every value is a whole number written as a float (``1.0``). So ``1.1``
and ``1.10``, or ``01`` and ``1``, keep their column as text, and the label
of a numeric cell (:func:`vareval.data.validate.labels`) is what was written.
Metric columns that stay text are parsed, with validation, by role
(:func:`vareval.data.validate.metric_values`). Nothing is dropped: missing
cells are reported by row by the validators. A column name that appears twice
in the header is refused.

CSV and TSV files are parsed by pyarrow when it is installed (the
``parquet`` extra; about 10x faster on large tables), else by pandas; the
two give the same table (tested on random tables of tricky spellings). An
optional compiled kernel (``_readkernel.c``, built at install where a C
compiler is found) parses and checks a column's spellings in one pass; its
numpy fallback gives the same table.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import os
import stat
import sys
import tempfile
from array import array
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from itertools import accumulate
from pathlib import Path

import numpy as np
import pandas as pd

from vareval.data import carried
from vareval.data.store_table import read_store_table
from vareval.errors import DataError
from vareval.stats._compiled import compiled

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


def read_table(path, *, numbers=(), columns=None) -> pd.DataFrame:
    """Read a results table; the format is chosen by the file's extension.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet`` file, a run store,
        or ``-`` for standard input (its format is told by its first bytes:
        Parquet's magic, a ``{`` for JSON Lines, a tab-separated header, or
        else CSV).
    numbers : str or sequence of str
        Columns to read as numbers: the metric columns, e.g. ``"accuracy"``.
        Without it a column becomes numbers only when that loses nothing
        (``0.970370`` stays text, since it may be a label); every cell of a
        column named here must be a number (``nan`` and ``inf`` allowed).
    columns : sequence of str or callable, optional
        Read only these columns (in the file's order); a command passes the
        columns it uses, so a wide file costs what those columns cost. When
        one of them is not in the file, every column is read, so the error
        that follows lists what is there. A callable is given the file's
        column names and the declaration the file carries (``spec``, or
        None) and returns the columns to read (None: every column).
        Default: every column.

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
    df = _read(path, columns if columns is None or callable(columns) else list(columns))
    attrs = dict(df.attrs)  # the design the file carried (vareval.data.carried)
    out = _as_numbers(df, [numbers] if isinstance(numbers, str) else list(numbers))
    out.attrs = attrs
    return out


def _read(path, columns=None) -> pd.DataFrame:
    if str(path) == "-":
        return _read_stdin(columns)
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(
            f"file '{path}': unknown file type '{path.suffix or '(none)'}'; accepted: {ACCEPTED}."
        )
    size = _file_size(path)
    if size is None:
        raise DataError(f"file '{path}' does not exist or is not a regular file.")
    if size == 0:
        raise DataError(f"file '{path}' is empty; expected a header and one row per run.")
    try:
        design = _design(path, fmt)
        if callable(columns) and fmt != "store":  # chosen from the names and the design
            choose, spec = columns, (design or {}).get("spec")
            columns = lambda names: choose(list(names), spec)  # noqa: E731
        df = _READERS[fmt](path, columns)
    except DataError:
        raise
    except (ValueError, UnicodeDecodeError, OSError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"file '{path}' could not be read as {fmt}: {first}") from None
    if df.shape[1] == 0 or len(df) == 0:
        raise DataError(f"file '{path}' has no data rows; expected one row per run.")
    if fmt == "store":  # a file's reader refuses a name repeated in its header
        _refuse_duplicates(f"file '{path}'", [str(c) for c in df.columns])
    if not _default_index(df.index):
        df = df.reset_index(drop=True)
    if fmt != "store":
        carried.restore(df, design, path)
    return df


def _file_size(path) -> int | None:
    """The size of the regular file at ``path``; None where there is none (``os.path.isfile``)."""
    try:
        status = os.stat(path)
    except PermissionError:  # a folder on the way that may not be searched: not "missing"
        raise DataError(f"file '{path}' could not be read: permission denied.") from None
    except (OSError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _default_index(index) -> bool:
    """Whether ``index`` is 0, 1, ..., n - 1 (what the readers give; a store's may not be)."""
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return True  # most tables: no index built to compare
    return index.equals(pd.RangeIndex(len(index)))


def _design(path, fmt) -> dict | None:
    """The design a file carries (:mod:`vareval.data.carried`), read before its data."""
    if fmt in ("csv", "tsv", "jsonl"):
        return carried.read_sidecar(path)
    if fmt == "parquet":
        _need_pyarrow(path)
        import pyarrow.parquet as pq

        return carried.read_parquet_design(pq.read_schema(path).metadata, path)
    return None


def _as_numbers(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The named columns as floats; a cell that is not a number is an error naming its row."""
    if not columns:  # before the import: the validators load scipy.special (0.2 s)
        return df
    from vareval.data.validate import numbers_where_possible, require_columns

    require_columns(df, columns, "numbers")
    out = numbers_where_possible(df, columns)
    for column in columns:
        if out[column].dtype.kind not in "iuf":
            bad = pd.to_numeric(out[column], errors="coerce").isna() & out[column].notna()
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"numbers: column {column!r} has {out[column].iloc[row]!r} in row {row}; "
                "every cell must be a number (nan and inf allowed)."
            )
    return out


def _refuse_duplicates(where: str, names) -> None:
    """Refuse a header naming a column twice (pandas would rename one silently)."""
    if len(set(names)) == len(names):
        return
    counts = Counter(names)
    twice = [name for name, n in counts.items() if n > 1]
    if twice:
        raise DataError(
            f"{where} names column {twice[0]!r} {counts[twice[0]]} times; "
            "every column needs its own name."
        )


def _lossless_numbers(text: pd.Series) -> pd.Series | None:
    """``text`` as numbers if every cell is the canonical spelling of one, else None.

    Canonical: ``str`` of the parsed number gives the cell back (``3``,
    ``0.25``, ``1e-05``; not ``03``, ``0.250``, ``1e-5``), all ints (within
    int64) or all non-whole floats and finite (``1.0``, ``2.0`` stay text).
    """
    if not text.str.fullmatch(r"-?[0-9][0-9.e+-]*").all():
        return None
    values = pd.to_numeric(text, errors="coerce")
    if values.isna().any():
        return None
    if values.dtype.kind in "iu":
        values = values.astype(np.int64) if values.dtype.kind == "i" else None
    elif not np.isfinite(values).all() or (values == np.round(values)).all():
        return None
    if values is None:
        return None
    spelled = np.array(list(map(repr, values.tolist())), dtype=object)  # shortest round trip
    if not (spelled == text.to_numpy(dtype=object)).all():
        return None
    return values


def _numbers_where_lossless(df: pd.DataFrame) -> pd.DataFrame:
    """Turn each all-text column into numbers when doing so keeps what was written."""
    out = {}
    for col in df.columns:
        s = df[col]
        converted = None if s.isna().any() else _lossless_numbers(s.astype(str))
        out[col] = s if converted is None else converted
    return pd.DataFrame(out, index=df.index)


def _read_stdin(columns=None) -> pd.DataFrame:
    """Standard input, spooled to a file so it is read exactly as a file of its format."""
    data = sys.stdin.buffer.read()
    if not data.strip():
        raise DataError("standard input is empty; expected a header and one row per run.")
    head = data.lstrip()[:4096]
    first_line = head.split(b"\n")[0]
    suffix = (".parquet" if data[:4] == b"PAR1" else ".jsonl" if head.startswith(b"{")
              else ".tsv" if b"\t" in first_line and b"," not in first_line else ".csv")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"stdin{suffix}"
        path.write_bytes(data)
        try:
            df = read_table(path, columns=columns)
            if "carried_by" in df.attrs:
                df.attrs["carried_by"] = "standard input"
            return df
        except DataError as exc:
            raise DataError(str(exc).replace(f"file '{path}'", "standard input")) from None


def write_table(df: pd.DataFrame, path=None, fmt: str | None = None) -> str | None:
    """Write ``df`` to ``path`` (format by extension, or ``fmt``); return the text if no path.

    CSV, TSV, JSON Lines (every number written exactly: pandas' ``to_json``
    rounds to 10 digits) or Parquet, which, being binary, needs a path.
    A table from a run store (``df.attrs["spec"]``) carries its design: in a
    Parquet file's schema metadata, else in a sidecar ``FILE.design.json``
    (:mod:`vareval.data.carried`); text returned for standard output has none.
    """
    fmt = fmt or (_FORMATS.get(Path(path).suffix.lower()) if path else "csv")
    if fmt not in ("csv", "tsv", "jsonl", "parquet"):
        raise DataError(
            f"output '{path}': unknown table type; accepted: .csv, .tsv, .jsonl, .parquet."
        )
    design = carried.payload(df)
    df = df.copy()
    df.attrs = {}
    if fmt == "parquet":
        if path is None:
            raise DataError("a Parquet table needs -o FILE (Parquet is binary).")
        _need_pyarrow(path)
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        meta = {**(table.schema.metadata or {}), **carried.parquet_metadata(design)}
        pq.write_table(table.replace_schema_metadata(meta), path)
        return None
    if fmt == "jsonl":
        records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in records)
    else:
        text = df.to_csv(index=False, sep="\t" if fmt == "tsv" else ",")
    if path is None:
        return text
    data = text.encode("utf-8")
    Path(path).write_bytes(data)
    carried.write_sidecar(design, path, data)
    return None


def _read_csv(path, columns=None, sep=","):
    with open(path, "rb") as fh:  # binary: no codec to look up for a small file
        # a small file is read once: its header, the scan and arrow's parse share the bytes
        data = fh.read() if os.fstat(fh.fileno()).st_size < _SMALL else None
        line = fh.readline() if data is None else data[:data.find(b"\n") + 1 or len(data)]
    line = line.removeprefix(_BOM)
    if line.count(b'"') % 2:  # a quoted name runs over lines
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh, delimiter=sep), [])
    elif b"\r" in line.rstrip(b"\r\n"):  # csv's reader would fail on it with a traceback
        raise DataError(
            f"file '{path}' has a carriage return inside its header line, as when lines end "
            "in CR alone (old Mac exports); save it with LF or CRLF line ends."
        )
    else:
        header = next(csv.reader([line.decode("utf-8").rstrip("\r\n")], delimiter=sep), [])
    _refuse_duplicates(f"file '{path}'", header)
    _refuse_concatenated(path, data)
    wanted = _wanted(header, columns)
    fast = _read_csv_arrow(path, sep, header, wanted, data)
    if fast is not None:
        return fast
    try:
        df = pd.read_csv(path if data is None else BytesIO(data), sep=sep, dtype=str,
                         keep_default_na=False, na_values=[""], usecols=wanted)  # the bytes scanned
    except pd.errors.EmptyDataError:
        raise DataError(f"file '{path}' is empty; expected a header and one row per run.") from None
    return _numbers_where_lossless(df)


_BOM = "\ufeff".encode()
# bytes read at a time: a 2 GB table is scanned, never held; one buffer of 1 MB stays in
# cache, where one of 16 MB (or a 10 MB file's size) cost its page faults on every read
_SCAN = 1 << 20


def _refuse_concatenated(path, data: bytes | None = None) -> None:
    """Refuse the marks of files joined with ``cat``: a header line repeated, a BOM mid-file.

    Either would be read as data (a run whose method is the header's word, a
    label starting with an invisible U+FEFF); both are refused with the line.
    The file is read into one buffer a block at a time, each block scanned
    with the end of the one before (a header's length), so a mark across two
    blocks is seen; the BOM is looked for only in a block holding its first
    byte (``memchr``'s speed), and lines are counted only for the message.
    ``data``: the whole file, already read (a small file), scanned from memory.
    """
    with open(path, "rb") if data is None else BytesIO(data) as fh:
        header = fh.readline().removeprefix(_BOM).rstrip(b"\r\n")
        if not header:
            return
        keep = len(header) + 3
        lines = (b"\n" + header + b"\n", b"\n" + header + b"\r\n")
        size = os.fstat(fh.fileno()).st_size if data is None else len(data)
        block = min(_SCAN, max(1, size))  # a small file: its size
        buf = bytearray(1 + keep + block)  # room for a block after what is kept
        buf[0] = ord("\n")  # the header line's newline
        base = fh.tell() - 1  # the file's offset of buf[0]
        view, have = memoryview(buf), 1
        while True:
            got = fh.readinto(view[have:])
            have += got
            found = [buf.find(line, 0, have) for line in lines]
            if not got:  # the last line may end the file without a newline
                tail = max(0, have - keep - 2)
                last = bytes(buf[tail:have]).rstrip(b"\r\n")
                if last.endswith(b"\n" + header):
                    found.append(tail + len(last) - len(header) - 1)
            bom = buf.find(b"\n" + _BOM, 0, have) if buf.find(b"\xef", 0, have) >= 0 else -1
            _refuse_found(path, base, bom, found)
            if not got:
                return
            cut = max(0, have - keep)
            buf[:have - cut] = buf[cut:have]
            base, have = base + cut, have - cut


def _refuse_found(path, base: int, bom: int, found: list[int]) -> None:
    """Refuse a BOM mid-file (at ``bom``) or a repeated header (the first of ``found``).

    Positions are of the newline before the mark, ``base`` bytes into the
    file; -1 where there is none.
    """
    if bom >= 0:
        raise DataError(
            f"file '{path}' has a byte-order mark (U+FEFF) at the start of line "
            f"{_line_after(path, base + bom)}, as when files are joined with "
            "cat; remove it (a label would start with an invisible character)."
        )
    found = [x for x in found if x >= 0]
    if found:
        raise DataError(
            f"file '{path}' repeats its header line at line "
            f"{_line_after(path, base + min(found))}, as when files are joined with "
            "cat; remove the repeated header (it would be read as a run)."
        )


def _line_after(path, offset: int) -> int:
    """The number of the line that starts after the newline at byte ``offset`` of a file."""
    count = 0
    with open(path, "rb") as fh:
        while offset > 0:
            block = fh.read(min(offset, _SCAN))
            count, offset = count + block.count(b"\n"), offset - len(block)
    return count + 2


def _wanted(names: list[str], columns) -> list[str] | None:
    """The file's columns to read, in its order: None (all) unless all of ``columns`` are there."""
    if callable(columns):
        columns = columns(names)
    keep = None if columns is None else set(columns)
    if keep is None or not keep <= set(names):
        return None
    return [c for c in names if c in keep]


def _read_csv_arrow(path, sep, header, wanted=None, data=None) -> pd.DataFrame | None:
    """The same table as the pandas reader, read by pyarrow's (multi-threaded) CSV parser.

    Every cell is read as text (only an empty cell is missing) and columns
    become numbers by the same lossless rule, tested on arrow arrays. None
    when pyarrow is not installed or the file is not a regular table (rows
    of unequal length: the pandas reader then decides, as before). ``data``:
    the file's bytes, when a small file was read whole (arrow opening the
    file again costs more than parsing 10^3 rows from memory).
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    names = header if wanted is None else wanted
    size = os.path.getsize(path) if data is None else len(data)
    # a small file's text as pandas holds it (large_string): no cast when a column stays
    # text (a first cast costs 0.7 ms); a large file's with half the offsets' memory
    text = pa.large_string() if size < _SMALL else pa.string()
    options = pa_csv.ConvertOptions(
        column_types=dict.fromkeys(names, text),
        include_columns=names,
        strings_can_be_null=True,
        null_values=[""],
        quoted_strings_can_be_null=True,
        check_utf8=_kernel() is None,  # else by the kernel where text stays (_as_text, columns)
    )
    try:
        source = path if data is None else pa.BufferReader(data)
        table = pa_csv.read_csv(
            source, read_options=_read_options(pa_csv, size),
            parse_options=pa_csv.ParseOptions(delimiter=sep), convert_options=options
        )
    except pa.ArrowInvalid:
        return None
    if table.column_names != names:
        return None
    strings = table.columns
    del table

    def convert(i):  # drops each text column once converted: memory holds one copy
        column, strings[i] = strings[i], None
        return _arrow_lossless(column)

    # arrow's kernels (and the float check's) release the GIL: the columns' checks run
    # side by side, unless starting the threads would cost more than they save
    threads = size >= _THREADED and len(names) > 1 and sum(c.nbytes for c in strings) >= _THREADED
    kernel = _kernel()
    try:
        if not threads and kernel is not None and all(c.num_chunks == 1 for c in strings):
            columns = _columns_at_once(kernel, strings)
        elif not threads or (workers := min(len(names), os.cpu_count() or 1)) < 2:
            columns = list(map(convert, range(len(names))))
        else:
            with ThreadPoolExecutor(workers) as pool:
                columns = list(pool.map(convert, range(len(names))))
    except pa.ArrowInvalid:  # text that is not UTF-8: the pandas reader says where
        return None
    return _frame(names, columns)


def _columns_at_once(kernel, strings: list) -> list:
    """Each column as :func:`_arrow_lossless` makes it, every column checked in one kernel call.

    A small table's columns are a few thousand cells each: the checks are cheap
    and their Python calls were not (15-50 us a column). The kernel's
    ``columns`` tries each column as ints, then floats (as ``int_cells`` and
    ``repr_floats`` do) and checks the text of those that stay text; a column
    with a float cell it could neither prove nor refute is decided here.
    """
    chunks = [column.chunk(0) for column in strings]
    outs = [np.empty(len(chunk), np.int64) for chunk in chunks]
    verdicts = kernel.columns([(*_text_buffers(c), c.null_count > 0) for c in chunks], outs)
    if b"x" in verdicts:
        import pyarrow as pa

        raise pa.ArrowInvalid("a cell is not UTF-8")
    dtype, columns = _pandas_str(), []
    for verdict, column, out in zip(verdicts.decode(), strings, outs, strict=True):
        columns.append(out if verdict == "i" else out.view(np.float64) if verdict == "f"
                       else _text(column, dtype) if verdict == "t" else _arrow_lossless(column))
    return columns


def _frame(names: list[str], columns: list) -> pd.DataFrame:
    """The table of ``columns`` (numpy arrays, pandas text arrays), one block a column.

    One block per column, not a consolidating copy of every number. From
    pandas 3 the blocks are handed over as they are
    (``pandas.api.internals.create_dataframe_from_blocks``, what arrow's own
    ``to_pandas`` uses there): the same frame as ``pd.DataFrame(..., copy=False)``
    builds (tested), at a third of its cost, which counts in a small file's read.
    """
    index = _names_index(names)
    if index is None:
        return pd.DataFrame(dict(zip(names, columns, strict=True)), copy=False)
    places = np.arange(len(columns))
    blocks = [(c.reshape(1, -1) if isinstance(c, np.ndarray) else c, places[i:i + 1])
              for i, c in enumerate(columns)]
    return _from_blocks(blocks, pd.RangeIndex(len(columns[0]) if columns else 0), index)


try:
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pandas < 3 (no text index either: _frame builds the frame itself)
    _from_blocks = None


def _names_index(names: list[str]):
    """The column index pandas would build for ``names``; None where it holds objects.

    From pandas 3 that index holds arrow text. It is built from buffers here:
    pandas would call ``pa.array``, whose first call imports pyarrow's pandas
    layer (3 ms, more than reading a small file). A header read again (a
    loop over files of one kind) gets a view of the index made for it the
    first time (its own object and name; 1 us, against 14 us to make it).
    """
    if (dtype := _pandas_str()) is None:
        return None
    return _text_index(tuple(names), dtype.storage).view()


@functools.lru_cache(maxsize=16)
def _text_index(names: tuple[str, ...], storage: str):
    """:func:`_names_index`, made (an index is immutable: its views share its text)."""
    import pyarrow as pa

    dtype = pd.StringDtype(storage, na_value=np.nan)
    data = [name.encode() for name in names]
    ends = array("q", accumulate(map(len, data), initial=0))  # arrow's int64 offsets
    text = pa.LargeStringArray.from_buffers(len(data), pa.py_buffer(ends),
                                            pa.py_buffer(b"".join(data)))
    return pd.Index(dtype.__from_arrow__(text), copy=False)


_THREADED = 1 << 22  # bytes of text from which the columns are checked in threads
_POWERS_OF_TEN = 10 ** np.arange(1, 20, dtype=np.uint64)
_BLOCK = 1 << 23  # bytes parsed per block: fewer, longer chunks than arrow's 1 MB
_SMALL = 1 << 20  # bytes below which a file is read whole and its text is large_string


def _read_options(pa_csv, size: int):
    """Arrow's read options for a file of ``size`` bytes.

    A small file is one block of its own size: an 8 MB block's buffer cost
    more on a first read than parsing a file of 10^4 rows does. It is parsed
    in arrow's thread pool all the same: with ``use_threads=False`` arrow
    starts and joins a thread of its own at every read (about 0.1 ms of a
    warm read of 10^3 rows; on a first read the two cost the same).
    """
    return pa_csv.ReadOptions(block_size=max(1 << 16, min(_BLOCK, size + 1)), use_threads=True)


def _arrow_lossless(column):
    """An arrow text column as numbers when :func:`_lossless_numbers` would convert it.

    A cast that fails means "not a number"; the spelling check (an int's
    decimal form, a float's ``repr``) then decides as the pandas path does.
    """
    import pyarrow as pa

    if column.null_count or not len(column):
        return _as_text(column)
    kernel = _kernel()
    if kernel is not None:  # parsed and checked in one pass; a miss tries the floats
        ints = _kernel_ints(kernel, column)
        if ints is not None:
            return ints
    elif (ints := _cast(column, pa.int64())) is not None:
        spelled = all(_spelled_as_int(ints.slice(i, _WINDOW), column.slice(i, _WINDOW))
                      for i in range(0, len(column), _WINDOW))
        return _writable(ints.to_numpy()) if spelled else _as_text(column)
    # Every cell must be canonical: the first cells decide a column of
    # 6-decimal metrics (0.970370) before the whole column is checked.
    if _canonical_floats(column.slice(0, 256)) is None:
        return _as_text(column)
    values = _canonical_floats(column)
    if values is None or _all_whole(values):
        return _as_text(column)
    return _writable(values)


def _as_text(column):
    """The column as pandas text (its array), its cells checked to be UTF-8 (ArrowInvalid if not).

    With the kernel, arrow's reader leaves the check to this: numbers are
    ASCII by their spelling check, so only the columns that stay text need it.
    """
    import pyarrow as pa

    kernel = _kernel()
    for chunk in _chunks(column) if kernel is not None else ():
        if len(chunk) > chunk.null_count and kernel.utf8_cells(*_text_buffers(chunk)) >= 0:
            raise pa.ArrowInvalid("a cell is not UTF-8")
    return _text(column, _pandas_str())


def _text(column, dtype):
    """A checked arrow text column as pandas holds it.

    ``dtype``'s array (pandas 3's text dtype, :func:`_pandas_str`: what
    ``to_pandas`` makes, without its first imports), or ``to_pandas``' (before
    pandas 3, ``dtype`` None).
    """
    return column.to_pandas() if dtype is None else dtype.__from_arrow__(column)


_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _pandas_str():
    """The text dtype of pandas 3, as arrow's ``to_pandas`` makes it (None before 3.0).

    Made at each read: its storage follows ``pd.options.mode.string_storage``.
    """
    return pd.StringDtype(na_value=np.nan) if _PANDAS_3 else None


def _all_whole(values: np.ndarray) -> bool:
    """Whether every value is a whole number; the first values usually answer."""
    head = values[:256]
    return bool((head == np.round(head)).all() and (values == np.round(values)).all())


def _writable(values: np.ndarray) -> np.ndarray:
    """``values``, copied only when arrow lent its own (read-only) buffer: a table is editable."""
    return values if values.flags.writeable else values.copy()


def _canonical_floats(column):
    """``column`` as floats if every cell is a finite float spelled as its ``repr``, else None.

    With the compiled kernel (:func:`_kernel`) the cells are parsed and proved
    in one pass; else arrow parses and :func:`_spelled_as_repr` checks.
    """
    import pyarrow as pa

    kernel = _kernel()
    if kernel is not None:
        return _kernel_floats(kernel, column)
    floats = _cast(column, pa.float64())
    if floats is None:
        return None
    values = floats.to_numpy()
    if not np.isfinite(values).all():
        return None
    spelled = all(_spelled_as_repr(column.slice(i, _WINDOW), values[i:i + _WINDOW])
                  for i in range(0, len(values), _WINDOW))
    return values if spelled else None


@functools.cache
def _kernel():
    """The compiled checks (``_readkernel.c``), or None (not built, or ``VAREVAL_NO_KERNEL``)."""
    return compiled("vareval.data._readkernel")


_kernel()  # loaded with the reader, as pyarrow.csv loads its own: not in a first read's time


def _kernel_floats(kernel, column):
    """:func:`_canonical_floats` by the kernel (``_readkernel.c``): one pass per chunk.

    The kernel proves a cell is its float's ``repr`` and parses it, or
    refutes it (the scan stops), or leaves it unknown (a tie, a magnitude
    past its 128-bit integers); Python decides those, a batch at a time.
    """
    import pyarrow as pa

    values = np.empty(len(column))
    unknown = np.empty(len(column), np.uint8)
    at, left = 0, 0
    for chunk in _chunks(column):
        n = len(chunk)
        refuted, unknowns = kernel.repr_floats(*_text_buffers(chunk), values[at:at + n],
                                               unknown[at:at + n])
        if refuted >= 0:
            return None
        at, left = at + n, left + unknowns
    rest = np.flatnonzero(unknown) if left else np.empty(0, np.intp)
    for start in range(0, rest.size, 256):
        at = rest[start:start + 256]
        for i, text in zip(at.tolist(), column.take(pa.array(at)).to_pylist(), strict=True):
            value = _float_or_none(text)
            if value is None or not math.isfinite(value) or repr(value) != text:
                return None
            values[i] = value
    return values


def _kernel_ints(kernel, column):
    """``column`` as int64 if every cell is an int's decimal form, else None (the kernel)."""
    values = np.empty(len(column), np.int64)
    at = 0
    for chunk in _chunks(column):
        if kernel.int_cells(*_text_buffers(chunk), values[at:at + len(chunk)]) >= 0:
            return None
        at += len(chunk)
    return values


def _chunks(column) -> list:
    """An arrow array's chunks (itself, when it is not chunked)."""
    import pyarrow as pa

    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _text_buffers(chunk) -> tuple:
    """A string array as the kernel takes it: offsets, bytes, offset, length, large."""
    import pyarrow as pa

    _, offsets, data = chunk.buffers()
    return (offsets, b"" if data is None else data, chunk.offset, len(chunk),
            chunk.type == pa.large_string())


def _float_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


_WINDOW = 1 << 13  # rows checked at a time: temporaries of 64 KB, below malloc's mmap threshold


def _spelled_as_int(ints, text) -> bool:
    """Whether each cell (arrow arrays of a window of rows) is its int's decimal form.

    The parse took an optional sign and leading zeros, so the cell is the
    int's decimal form exactly when it has that form's length.
    """
    import pyarrow.compute as pc

    values = ints.to_numpy()
    digits = 1 + np.searchsorted(_POWERS_OF_TEN, np.abs(values).astype(np.uint64), "right")
    return np.array_equal(digits + (values < 0), pc.binary_length(text).to_numpy())


def _cast(column, to):
    """``column`` cast to the arrow type ``to``, or None where a cell does not parse.

    The first cells are tried alone: a text column then fails at once, not
    after the whole column was scanned.
    """
    import pyarrow as pa

    try:
        column.slice(0, 256).cast(to)
        return column.cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _spelled_as_repr(column, values) -> bool:
    """Whether every cell is written as its float's ``repr``, Python's shortest spelling.

    Proved by exact arithmetic where it can be (:func:`_surely_repr`); only
    the other cells are formatted, a batch at a time, until one differs.
    """
    import pyarrow as pa

    rest = np.flatnonzero(~_surely_repr(column, values))
    for start in range(0, rest.size, 256):
        at = rest[start:start + 256]
        text = column.take(pa.array(at)).to_pylist()
        if any(repr(v) != t for v, t in zip(values[at].tolist(), text, strict=True)):
            return False
    return True


_SURE = 1e-9  # margin above the arithmetic's rounding error (< 1e-12 in these units)
_POWERS = 10.0 ** np.arange(23)  # exact in a double up to 10**22
_FIVES = 5.0 ** np.arange(23)  # exact up to 5**22
_TWOS = 2.0 ** np.arange(23)
_HALF_POWERS = _POWERS / 2
_BELOW = np.r_[np.inf, 0.0, _POWERS[1:22]]  # |v| of a number with i integer digits is
_ABOVE = np.r_[-np.inf, _POWERS[1:23]]  # in [_BELOW[i], _ABOVE[i])


def _surely_repr(column, values):
    """The cells proved written as their float's ``repr``, with no cell formatted.

    Where ``repr`` writes fixed notation (1e-4 <= |v| < 1e16, not a whole
    number) a cell ``T`` with ``k`` characters after its point is
    ``repr(v)`` exactly when (a) the point is where ``repr`` puts it (no
    ``+``, no leading zero), (b) no decimal of ``k - 1`` places reads back
    as ``v`` and (c) ``T``'s digits ``M`` are the ``k``-place decimal
    closest to ``v``: ``repr`` is the shortest string that reads back, and
    of those the closest. In units of the last place, ``v``'s rounding
    interval reaches ``reach = ulp(v) 10**k / 2`` either side, ``T`` is
    ``off = M - v 10**k`` from ``v`` (``|off| <= reach``, as ``T`` reads
    back as ``v``), (b) is ``dist(M - off, 10 Z) > reach`` and (c) is
    ``|off| < 1/2``. ``v 10**k`` is formed exactly as a pair of doubles
    (Dekker's product) and ``off`` is read modulo 1,000 from ``M``'s last
    three digits, so ``|v| 10**k < 10**18`` keeps ``reach < 500``. With
    fewer than three places ``reach < 1/2`` and a last digit other than 0
    are enough. A cell written with an exponent is never proved: its
    exponent's characters count in ``k``, so its value lies on the grid
    of ``k - 1`` places (or, for ``X.eD``, the point is misplaced or the
    last digit 0). Cells within ``_SURE`` of a boundary are left unproved.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):  # one buffer: a window, not the column, is copied
        column = column.combine_chunks()
    with np.errstate(all="ignore"):  # cells outside the bounds compute garbage, then masked
        magnitude = np.abs(values)
        dot = pc.find_substring(column, ".").to_numpy(zero_copy_only=False)
        length, last, last3 = _tails(column)
        k = length - dot.astype(np.int64) - 1
        places = np.clip(k, 0, 22)
        ints = np.clip(dot - (values < 0), 0, 22)
        ok = ((magnitude >= np.take(_BELOW, ints)) & (magnitude < np.take(_ABOVE, ints))
              & (k >= 1) & (k <= 22) & (magnitude >= 1e-4))
        hi, lo = _times_ten_to(magnitude, places)
        ok &= hi < 1e18
        whole = np.trunc(hi)
        tail = (hi - whole) + lo  # |v| 10**k = whole + tail
        off = (last3 - np.remainder(whole.astype(np.int64), 1000)) - tail
        off -= 1000 * np.rint(off / 1000)  # M - |v| 10**k
        grid = last - off
        gap = np.abs(grid - 10 * np.rint(grid / 10))  # to the nearest decimal of k - 1 places
        bits = magnitude.view(np.int64) & 0x7FF0000000000000
        ulp = (bits - (52 << 52)).view(np.float64)  # 2**(exponent - 52), for a normal |v|
        reach = ulp * np.take(_HALF_POWERS, places)
        read = (k >= 3) & (last3 < 1000)  # the last three characters are digits
        small = reach < 0.5 - _SURE
        proved = read & (gap > reach + _SURE) & (small | (np.abs(off) < 0.5 - _SURE))
        proved |= (k < 3) & small & (last >= 1) & (last <= 9)
        return ok & proved


def _tails(column):
    """Each cell's length in bytes, last digit and last three digits (>= 1,000: not digits)."""
    import pyarrow as pa

    size = np.int64 if column.type == pa.large_string() else np.int32
    _, offsets, data = column.buffers()
    ends = np.frombuffer(offsets, size, len(column) + 1, column.offset * np.dtype(size).itemsize)
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(1, np.uint8)
    end = ends[1:].astype(np.intp)
    # the last three bytes as digits (a byte below "0" wraps past 9)
    one, ten, hundred = (np.take(data, end - i, mode="clip") - np.uint8(48) for i in (1, 2, 3))
    digits = np.maximum(np.maximum(one, ten), hundred) <= 9
    last3 = one + 10 * ten.astype(np.int32) + 100 * hundred.astype(np.int32)
    # last: 10 when the last byte is no digit
    return np.diff(ends), np.minimum(one, 10), np.where(digits, last3, 1000)


def _times_ten_to(v, k):
    """``v * 10**k`` exactly, as ``hi + lo`` (Dekker's product by ``5**k``, then ``2**k``)."""
    five, f_hi, f_lo = np.take(_FIVES, k), np.take(_FIVE_HIGH, k), np.take(_FIVE_LOW, k)
    hi = v * five
    v_hi, v_lo = _split(v)
    lo = ((v_hi * f_hi - hi) + v_hi * f_lo + v_lo * f_hi) + v_lo * f_lo
    two = np.take(_TWOS, k)
    return hi * two, lo * two


def _split(a):
    """``a`` as two doubles of 26 bits each (Veltkamp), whose products are exact."""
    c = 134217729.0 * a  # 2**27 + 1
    high = c - (c - a)
    return high, a - high


_FIVE_HIGH, _FIVE_LOW = _split(_FIVES)


def _json_cell(value, key, lineno, path):
    """A JSON value as the text it was written as (numbers keep their spelling)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    raise DataError(
        f"file '{path}' line {lineno}: field {key!r} holds a JSON "
        f"{type(value).__name__}; each field must be a single value."
    )


def _read_jsonl(path, columns=None):
    records = []
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                pairs = json.loads(
                    line,
                    parse_float=str,
                    parse_int=str,
                    parse_constant=str,
                    object_pairs_hook=list,
                )
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"file '{path}' could not be read as jsonl: line {lineno}: {exc.msg}."
                ) from None
            if not isinstance(pairs, list) or (pairs and not isinstance(pairs[0], tuple)):
                raise DataError(
                    f"file '{path}' line {lineno} is not a JSON object; "
                    "JSON Lines needs one object per row."
                )
            _refuse_duplicates(f"file '{path}' line {lineno}", [k for k, _ in pairs])
            records.append({k: _json_cell(v, k, lineno, path) for k, v in pairs})
    df = pd.DataFrame.from_records(records).astype(object)
    wanted = _wanted([str(c) for c in df.columns], columns)
    df = df if wanted is None else df[wanted]
    return _numbers_where_lossless(df.where(df.notna(), None))


def _need_pyarrow(path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataError(
            f"file '{path}': Parquet needs pyarrow; install it with pip install 'vareval[parquet]'."
        ) from None


def _read_parquet(path, columns=None):
    _need_pyarrow(path)
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    _refuse_duplicates(f"file '{path}'", schema.names)
    df = pd.read_parquet(path, columns=_wanted(schema.names, columns))
    df.attrs = {}  # only the design vareval wrote, restored by the caller
    return df


_READERS = {
    "csv": _read_csv,
    "tsv": lambda p, columns: _read_csv(p, columns, sep="\t"),
    "jsonl": _read_jsonl,
    "parquet": _read_parquet,
    "store": lambda p, columns: read_store_table(p, columns=columns),  # given its declaration
}
