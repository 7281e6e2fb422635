import json

import pandas as pd
import pytest

from vareval.data import read_table
from vareval.errors import DataError

FRAME = pd.DataFrame({"method": ["A", "A", "B"], "seed": [0, 1, 0], "acc": [0.8, 0.81, 0.79]})


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_every_format_round_trips(tmp_path, suffix):
    path = tmp_path / f"runs{suffix}"
    if suffix == ".csv":
        FRAME.to_csv(path, index=False)
    elif suffix == ".tsv":
        FRAME.to_csv(path, sep="\t", index=False)
    elif suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in FRAME.to_dict("records")))
    else:
        FRAME.to_parquet(path)
    pd.testing.assert_frame_equal(read_table(path), FRAME, check_dtype=False)


def test_empty_cells_are_kept_not_dropped(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("method,acc\nA,0.8\nA,\nB,0.7\n")
    df = read_table(path)
    assert len(df) == 3 and df["acc"].isna().sum() == 1


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("runs.xlsx", "x", "unknown file type"),
        ("runs", "x", "unknown file type"),
        ("runs.csv", "", "is empty"),
        ("runs.csv", "method,acc\n", "no data rows"),
        ("runs.jsonl", "{not json", "could not be read"),
        ("runs.parquet", "not parquet", "could not be read"),
    ],
)
def test_bad_files(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=match):
        read_table(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "nope.csv")


def test_a_path_that_may_not_be_searched_says_permission_denied(tmp_path, monkeypatch):
    """Not "does not exist": stat's PermissionError (as root, faked) is named as such."""
    import os

    path = tmp_path / "runs.csv"
    path.write_text("method,accuracy\na,0.9\n")

    def denied(p, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(p))

    monkeypatch.setattr(os, "stat", denied)
    with pytest.raises(DataError, match="could not be read: permission denied"):
        read_table(path)


def test_numbers_reads_metric_columns_as_floats(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("method,accuracy,loss\n1.10,0.970370,nan\n01,0.95,inf\n")
    df = read_table(path, numbers=["accuracy", "loss"])
    assert df["accuracy"].tolist() == [0.97037, 0.95]
    assert df["loss"].isna().iloc[0] and df["loss"].iloc[1] == float("inf")
    assert df["method"].tolist() == ["1.10", "01"]  # labels stay text
    assert read_table(path)["accuracy"].tolist() == ["0.970370", "0.95"]  # not asked: as written
    assert read_table(path, numbers="accuracy")["accuracy"].dtype.kind == "f"


@pytest.mark.parametrize(
    ("numbers", "match"),
    [(["accuracy"], r"'accuracy' has 'x' in row 1"), (["acc"], "did you mean 'accuracy'")],
)
def test_numbers_refuses_text_and_unknown_columns(tmp_path, numbers, match):
    path = tmp_path / "runs.csv"
    path.write_text("method,accuracy\na,0.9\nb,x\n")
    with pytest.raises(DataError, match=match):
        read_table(path, numbers=numbers)


CELLS = {
    "ints": ["0", "3", "-7", "12", "100000"],
    "spelled ints": ["01", "-0", "3", "+4", "1e5", "9223372036854775808"],
    "floats": ["0.25", "1e-05", "-2.5", "0.1", "3.75"],
    "spelled floats": ["1.10", "0.250", "1.0", "2.5", ".5", "1E-5", "nan", "inf"],
    "text": ["NA", "None", "a", "b c", '"x,y"', "1.1", "01"],
    "missing": ["", "1", "2", "a"],
    "6 decimals": ["0.970370", "0.123456", "0.5", "0.250000", "12.000001"],
    "canonical 6 decimals": ["0.970371", "0.123456", "0.5", "0.000123", "12.000001"],
}


def _tricky_table(rng, sep):
    """A header and rows of random tricky spellings; sometimes long, so a column's
    first cells (which the reader checks first) can disagree with a later one."""
    kinds = rng.choice(list(CELLS), size=rng.integers(1, 6))
    rows = int(rng.choice([rng.integers(1, 30), rng.integers(250, 700)]))
    columns = [rng.choice(CELLS[k], size=rows).astype(object) for k in kinds]
    for col in columns:
        if rng.random() < 0.3:  # one odd cell late in the column
            col[int(rng.integers(rows))] = rng.choice(CELLS[str(rng.choice(list(CELLS)))])
    lines = [sep.join(f"c{i}" for i in range(len(kinds)))]
    lines += [sep.join(col[r] for col in columns) for r in range(rows)]
    return "\n".join(lines).replace('"x,y"', '"x,y"' if sep == "," else "x,y")


@pytest.mark.parametrize("sep, suffix", [(",", ".csv"), ("\t", ".tsv")])
def test_arrow_reader_gives_the_pandas_readers_table(tmp_path, sep, suffix, monkeypatch):
    pytest.importorskip("pyarrow")
    import numpy as np

    from vareval.data import io

    rng = np.random.default_rng(5)
    for trial in range(40):
        path = tmp_path / f"t{trial}{suffix}"
        path.write_text(_tricky_table(rng, sep))
        fast = read_table(path)
        for column in fast.columns[fast.dtypes.map(lambda d: d.kind in "iuf")]:
            fast.loc[0, column] = fast.loc[0, column]  # an editable table, as pandas gives
        with monkeypatch.context() as m:
            m.setattr(io, "_read_csv_arrow", lambda *a: None)
            slow = read_table(path)
        pd.testing.assert_frame_equal(fast, slow)
        names = [c for c in fast.columns if rng.random() < 0.5] or [fast.columns[-1]]
        some = read_table(path, columns=names[::-1])  # the file's order, whatever is asked
        pd.testing.assert_frame_equal(some, slow[names])


def test_small_and_large_files_are_read_alike(tmp_path, monkeypatch):
    """A small file is read whole, as one block with its text as large_string; a large one
    in blocks, its columns checked in threads, as string. The same tables, index and dtypes."""
    pytest.importorskip("pyarrow")
    import numpy as np

    from vareval.data import io

    rng = np.random.default_rng(11)
    for trial in range(30):
        path = tmp_path / f"t{trial}.csv"
        path.write_text(_tricky_table(rng, ","))
        small = read_table(path)
        with monkeypatch.context() as m:  # every file "large": the big files' path
            m.setattr(io, "_SMALL", 0)
            m.setattr(io, "_THREADED", 0)
            large = read_table(path)
        pd.testing.assert_frame_equal(small, large)
        pd.testing.assert_index_equal(small.columns, large.columns, exact=True)


@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_text_columns_are_what_arrows_to_pandas_makes(tmp_path, storage):
    """Text columns and the column names, made from arrow's buffers, equal arrow's
    ``to_pandas`` (pandas 3: its ``str`` dtype, stored as pandas' option says)."""
    pa_csv = pytest.importorskip("pyarrow.csv")
    import pyarrow as pa

    path = tmp_path / "t.csv"
    path.write_text("item,gold,model\nq1,1.10,NA\nq2,01,\nq3,é,cat\n")
    with pd.option_context("mode.string_storage", storage):
        got = read_table(path)
        table = pa_csv.read_csv(path, convert_options=pa_csv.ConvertOptions(
            column_types=dict.fromkeys(["item", "gold", "model"], pa.string()),
            strings_can_be_null=True, null_values=[""]))
        expected = pd.DataFrame({n: table.column(n).to_pandas() for n in table.column_names})
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_index_equal(got.columns, expected.columns, exact=True)


def test_a_read_loads_neither_the_validators_nor_pyarrows_pandas_layer(tmp_path):
    """Reading a table without numbers= imports no scipy (the validators import
    scipy.special: 0.2 s) and, from pandas 3, not pyarrow's pandas layer either (its first
    import costs 3 ms, more than reading a small file): the text columns and the column
    names are built from arrow's buffers, as to_pandas would build them."""
    pytest.importorskip("pyarrow")
    import subprocess
    import sys

    path = tmp_path / "t.csv"
    path.write_text("item,gold,model,score\nq1,1.10,NA,0.25\nq2,01,cat,0.5\n")
    from vareval.stats._compiled import compiled

    unwanted = ["scipy", "vareval.data.validate"]  # the child has this environment
    if int(pd.__version__.split(".")[0]) >= 3 and compiled("vareval.data._readkernel"):
        unwanted.append("pyarrow.pandas_compat")  # (the numpy path's arrow calls load it)
    code = ("import sys, pandas, pyarrow.csv; from vareval.data import read_table; "
            "df = read_table(sys.argv[1]); "
            f"loaded = ','.join(m for m in {unwanted!r} if m in sys.modules); "
            "print([str(d) for d in df.dtypes]); print(loaded)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    text = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"
    assert out[0] == str([text, text, text, "float64"])
    assert out[1] == ""


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_columns_reads_those_columns_as_the_whole_table_has_them(tmp_path, suffix):
    """Every format: columns= gives the full read's columns, cell for cell; a name
    not in the file reads everything, so the command's error can list what is there."""
    import numpy as np

    rng = np.random.default_rng(8)
    text = _tricky_table(rng, ",")
    frame = pd.read_csv(pd.io.common.StringIO(text), dtype=str, keep_default_na=False)
    path = tmp_path / f"t{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    elif suffix == ".parquet":
        frame.to_parquet(path)
    else:
        path.write_text(text if suffix == ".csv" else frame.to_csv(sep="\t", index=False))
    full = read_table(path)
    for names in ([full.columns[0]], list(full.columns[::-1]), list(full.columns[1::2])):
        if names:
            pd.testing.assert_frame_equal(read_table(path, columns=names),
                                          full[[c for c in full.columns if c in names]])
    pd.testing.assert_frame_equal(read_table(path, columns=["c0", "nope"]), full)


def test_arrow_spelling_check_is_pythons_repr_rule_on_every_magnitude(monkeypatch):
    """The vectorised float check (arrow's spelling where both write fixed notation,
    Python's repr elsewhere) decides each cell as the pandas path's repr rule does."""
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from vareval.data import io

    rng = np.random.default_rng(11)
    values = rng.random(200) * 10.0 ** rng.integers(-12, 21, 200)
    values *= rng.choice([-1, 1], 200)
    spellings = [repr, str, "{:.6g}".format, "{:.17g}".format, "{:.4f}".format,
                 lambda v: f"{v:.15e}", lambda v: repr(v) + "0",
                 lambda v: pa.array([v]).cast(pa.string())[0].as_py()]
    cells = [spell(v) for v in values.tolist() for spell in spellings]
    cells += ["0.1", "0.30000000000000004", "1e-05", "0.00001", "123456789.5",
              "1234567890.5", "1.0000000000000005e+15", "1000000000000000.5", "-0.5"]
    for cell in cells:
        column = pa.chunked_array([pa.array([cell])])
        expected = io._lossless_numbers(pd.Series([cell])) is not None
        assert isinstance(io._arrow_lossless(column), np.ndarray) == expected, cell
    canonical = [c for c in cells if io._lossless_numbers(pd.Series([c])) is not None]
    monkeypatch.setattr(io, "_WINDOW", 37)  # rows are checked a window at a time
    ints = ["0", "3", "-7", "12", "100000", "01", "+4"]
    for trial in range(30):  # whole columns: numbers only when every cell is canonical
        column = list(rng.choice(canonical if trial < 20 else ints[:5], 500))
        if trial % 2:
            column[int(rng.integers(500))] = str(rng.choice(cells if trial < 20 else ints))
        cuts = sorted(rng.integers(0, 500, 2))  # several chunks, checked one at a time
        chunks = [column[:cuts[0]], column[cuts[0]:cuts[1]], column[cuts[1]:]]
        got = io._arrow_lossless(pa.chunked_array([pa.array(c, pa.string()) for c in chunks]))
        expected = io._lossless_numbers(pd.Series(column))
        assert isinstance(got, np.ndarray) == (expected is not None)
        if expected is not None:
            np.testing.assert_array_equal(got, expected.to_numpy())


def _kernel_proved(column, floats):
    """The compiled kernel's verdict on each cell alone: proved, with ``floats``' value."""
    import numpy as np
    import pyarrow as pa

    from vareval.data import io

    kernel = io._kernel()
    column = column.combine_chunks()
    _, offsets, data = column.buffers()
    proved = np.zeros(len(column), bool)
    for i in range(len(column)):
        value, unknown = np.empty(1), np.empty(1, np.uint8)
        refuted, _ = kernel.repr_floats(offsets, data, column.offset + i, 1,
                                        column.type == pa.large_string(), value, unknown)
        proved[i] = refuted < 0 and not unknown[0]
        if proved[i]:  # the kernel's own parse is the float, sign and all
            assert value[0] == floats[i] and np.signbit(value[0]) == np.signbit(floats[i])
    return proved


@pytest.mark.parametrize("prover", ["numpy", "kernel"])
def test_float_spelling_proof_never_passes_a_cell_repr_would_not_write(prover):
    """The arithmetic proof that a cell is its float's repr (no cell formatted) is sound
    against repr itself on every magnitude and near-miss spelling (17 digits where 16
    read back, one place too many, a trailing 0, a leading 0, an exponent, a last digit
    off by one), and proves almost every repr-written cell of ordinary metrics: the
    numpy proof and the compiled kernel's alike."""
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from vareval.data import io

    if prover == "kernel":
        pytest.importorskip("vareval.data._readkernel", reason="the kernel was not built")
        io._kernel.cache_clear()
        if io._kernel() is None:
            pytest.skip("VAREVAL_NO_KERNEL is set")
    surely = io._surely_repr if prover == "numpy" else _kernel_proved

    rng = np.random.default_rng(12)
    n = 4000
    sets = {
        "unit": rng.random(n), "normal": rng.normal(0, 1, n), "near one": 1 + rng.random(n) / 1e3,
        "wide": rng.random(n) * 10.0 ** rng.integers(-6, 18, n) * rng.choice([-1, 1], n),
        "near powers of ten": np.nextafter(10.0 ** rng.integers(-5, 17, n),
                                           rng.choice([0, np.inf], n)),
        "powers of two": 2.0 ** rng.integers(-14, 54, n) * rng.choice([1, 1.5, 1.25], n),
        "rounded": np.round(rng.random(n) * 10.0 ** (d := rng.integers(1, 5, n))) / 10.0**d,
    }  # fmt: skip

    def plain(v):
        return "e" not in repr(v)

    spellings = [repr, "{:.17g}".format, "{:.16g}".format, lambda v: repr(v) + "1",
                 lambda v: repr(v) + "0", lambda v: repr(v)[:-1] + "9",
                 lambda v: repr(v) + ("e0" if plain(v) else ""),
                 lambda v: repr(v) + ("e000" if plain(v) else ""),
                 lambda v: ("-0" + repr(-v)) if v < 0 else "0" + repr(v)]
    for name, values in sets.items():
        for spell in spellings:
            cells = [spell(v) for v in values.tolist()]
            parsed = pa.array(cells).cast(pa.float64()).to_numpy()
            column = pa.chunked_array([pa.array(cells[:999]), pa.array(cells[999:])]).slice(3)
            floats, text = parsed[3:], cells[3:]
            proved = surely(column, floats)
            pairs = zip(text, floats.tolist(), proved, strict=True)
            wrong = [t for t, v, p in pairs if p and repr(v) != t]
            assert not wrong, (name, wrong[:5])
            if spell is repr and name in ("unit", "normal", "near one"):
                assert proved.mean() > 0.99, name


@pytest.mark.parametrize("scan", [1, 3, 7, 1 << 24])
def test_concatenated_files_are_found_across_scan_blocks(tmp_path, monkeypatch, scan):
    """The repeated header or mid-file BOM is named by its line whatever the block size."""
    from vareval.data import io

    monkeypatch.setattr(io, "_SCAN", scan)
    cases = {b"a,b\n1,2\n3,4\na,b\n5,6\n": "line 4", b"a,b\r\n1,2\r\na,b\r\n": "line 3",
             b"a,b\n1,2\n3,4\na,b": "line 4", b"a,b\n1,2\n\xef\xbb\xbfx,3\n": "line 3",
             b"a,b\n" + b"1,2\n" * 300 + b"a,b\n": "line 302"}  # fmt: skip
    for i, (data, line) in enumerate(cases.items()):
        path = tmp_path / f"c{i}.csv"
        path.write_bytes(data)
        with pytest.raises(DataError, match=line + r"\b"):
            io.read_table(path)
    (tmp_path / "ok.csv").write_bytes(b"\xef\xbb\xbfa,b\n1,2\n3,4\n")
    assert io.read_table(tmp_path / "ok.csv").shape == (2, 2)


def test_text_that_is_not_utf8_is_refused_in_any_column(tmp_path):
    """Arrow's UTF-8 check runs only on the columns that stay text (numbers are ASCII by
    their spelling check): a stray Latin-1 byte in a label is still refused, in one line."""
    for i, body in enumerate([b"1.5,caf\xe9\n2.5,x\n", b"caf\xe9,1\nx,2\n", b"1,2\n3,\xff\n"]):
        path = tmp_path / f"t{i}.csv"
        path.write_bytes(b"a,b\n" + body)
        with pytest.raises(DataError, match="could not be read as csv: 'utf-8' codec"):
            read_table(path)


def test_frame_is_the_public_constructors_frame():
    """The reader hands its columns to pandas as blocks (pandas >= 3:
    ``pandas.api.internals.create_dataframe_from_blocks``); the frame is the one
    ``pd.DataFrame(..., copy=False)`` builds: values, dtypes, column names and their
    index type, the row index, one block a column holding the reader's own arrays."""
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    from vareval.data import io

    rng = np.random.default_rng(12)
    words = ["1.10", "01", "NA", "", "é", "a b", "0"]
    for _ in range(40):
        k, n = int(rng.integers(1, 12)), int(rng.integers(1, 40))
        names = [f"{rng.choice(words)}{j}" for j in range(k)]
        kinds = rng.choice(["int", "float", "text"], k)
        columns = [rng.integers(-5, 5, n) if kind == "int" else rng.random(n) if kind == "float"
                   else io._as_text(pa.array(rng.choice(words, n).tolist(), pa.large_string()))
                   for kind in kinds]
        got = io._frame(names, columns)
        expected = pd.DataFrame(dict(zip(names, columns, strict=True)), copy=False)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        pd.testing.assert_index_equal(got.columns, expected.columns, exact=True)
        assert isinstance(got.index, pd.RangeIndex) and got.index.equals(pd.RangeIndex(n))
        assert len(got._mgr.blocks) == k
        for name, column in zip(names, columns, strict=True):
            if isinstance(column, np.ndarray):  # the reader's array, not a copy
                assert np.shares_memory(got[name].to_numpy(), column)


def test_a_small_files_bytes_are_scanned_as_the_blocks_are(tmp_path):
    """A small file is read once and scanned whole for the marks of concatenation: the
    same verdict and line as the scan a block at a time, on random files with a header
    repeated anywhere (with or without its newline, CRLF, trailing CRs) and BOMs."""
    import numpy as np

    from vareval.data import io

    rng = np.random.default_rng(13)
    pieces = [b"1,2", b"a,b", b"a,bc", b"\xef\xbb\xbfx,3", b"\xef\xbb\xbfa,b", b"", b"\xc3\xa9,1"]
    outcomes = set()
    edges = [b"a,b\n1,2\na,b\r\r", b"a,b\n1,2\na,b\r\r\r", b"a,b\r\n1,2\r\na,b\r\r\r\r"]
    for trial in range(400):
        ends = [b"\n", b"\r\n", b"\r", b"\r\r\r"]
        lines = [b"a,b", *rng.choice(pieces, int(rng.integers(0, 8)))]
        data = b"".join(line + ends[int(rng.integers(0, 4)) if rng.random() < 0.3 else 0]
                        for line in lines)
        data = data[:-int(rng.integers(0, 3))] if rng.random() < 0.3 else data
        data = edges[trial] if trial < len(edges) else data  # the last line's window
        path = tmp_path / f"c{trial}.csv"
        path.write_bytes(data)
        verdicts = []
        for whole in (None, data):
            try:
                io._refuse_concatenated(path, whole)
                verdicts.append("ok")
            except DataError as exc:
                verdicts.append(str(exc))
        assert verdicts[0] == verdicts[1], data
        outcomes.add("BOM" if "byte-order" in verdicts[0] else "repeats" if "repeats" in verdicts[0]
                     else verdicts[0])
    assert len(outcomes) == 3  # none, a repeated header and a BOM, each found


def test_a_header_read_again_gives_a_column_index_of_its_own(tmp_path):
    """The column index of a header read before is a copy of the one made then: naming
    one table's columns leaves the next table's alone, and the text storage follows
    pandas' option at each read."""
    import numpy as np

    if int(pd.__version__.split(".")[0]) < 3:
        pytest.skip("before pandas 3 the column names are objects, made at each read")
    path = tmp_path / "t.csv"
    path.write_text("item,gold,1.10\nq1,a,b\n")
    first = read_table(path)
    first.columns.name = "named"
    second = read_table(path)
    assert second.columns.name is None and second.columns is not first.columns
    pd.testing.assert_index_equal(second.columns, pd.Index(["item", "gold", "1.10"]),
                                  exact=True)
    for storage in ("python", "pyarrow"):
        with pd.option_context("mode.string_storage", storage):
            assert read_table(path).columns.dtype == pd.StringDtype(storage, na_value=np.nan)
