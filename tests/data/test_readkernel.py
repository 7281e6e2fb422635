"""The optional compiled float check of the table reader: sound against repr, equal to numpy.

Skipped where the extension was not built (then the numpy proof runs, and
test_io.py covers it).
"""

import math

import numpy as np
import pandas as pd
import pytest

from vareval.data import io

pa = pytest.importorskip("pyarrow")
kernel = pytest.importorskip("vareval.data._readkernel", reason="the kernel was not built")


@pytest.fixture(autouse=True)
def kernel_on(kernel_switch):
    kernel_switch(io._kernel)


def verdicts(cells, large=False):
    """Each cell checked alone: 'proved' (with its float), 'refuted' or 'unknown'."""
    column = pa.array(cells, pa.large_string() if large else pa.string())
    _, offsets, data = column.buffers()
    out = []
    for i in range(len(cells)):
        value, unknown = np.empty(1), np.empty(1, np.uint8)
        refuted, _ = kernel.repr_floats(offsets, data, i, 1, large, value, unknown)
        out.append(("refuted", None) if refuted == 0 else ("unknown", None) if unknown[0]
                   else ("proved", value[0]))
    return out


def is_repr(text):
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and repr(value) == text


def test_kernel_proves_only_reprs_and_refutes_only_non_reprs():
    """Every verdict is checked against Python's repr: a proved cell is repr(float(cell))
    (the kernel's float bit for bit), a refuted one is not. Magnitudes 1e-30 to 1e45,
    random bit patterns, ties of large floats, and near-miss spellings (one digit more,
    one off, 17 where 16 read back, a trailing or leading zero, exponent forms repr
    would not write)."""
    rng = np.random.default_rng(3)
    n = 1500
    values = np.concatenate([
        rng.random(n), rng.normal(0, 1, n),
        rng.random(n) * 10.0 ** rng.integers(-30, 45, n) * rng.choice([-1, 1], n),
        np.nextafter(10.0 ** rng.integers(-20, 30, n), rng.choice([0, np.inf], n)),
        2.0 ** rng.integers(-70, 120, n) * rng.choice([1, 1.5, 1.25], n),
        np.round(rng.random(n) * 1e4) / 10.0 ** rng.integers(0, 5, n),
        rng.integers(-10**17, 10**17, n).astype(float),
        rng.integers(0, 2**63, n).view(np.float64),
    ])  # fmt: skip
    values = values[np.isfinite(values)].tolist()

    def digit(text, step):  # the last digit moved by step
        return text[:-1] + str((int(text[-1]) + step) % 10) if text[-1].isdigit() else text

    spellings = [repr, "{:.17g}".format, "{:.16g}".format, "{:.6g}".format, str,
                 lambda v: repr(v) + "1", lambda v: repr(v) + "0",
                 lambda v: digit(repr(v), 1), lambda v: digit(repr(v), -1),
                 lambda v: repr(v).replace("e-0", "e-").replace("e+", "e"),
                 lambda v: "0" + repr(v) if v >= 0 else "-0" + repr(-v),
                 lambda v: f"{v:.15e}", lambda v: repr(float(np.nextafter(v, np.inf)))]
    cells = [spell(v) for spell in spellings for v in values]
    cells += ["0.0", "-0.0", "0", "-0", "1.", ".5", "+0.5", "0.5 ", "1E-05", "1e-05",
              "1e5", "1e+05", "1.0e+16", "1e+16", "9007199254740993.0", "9007199254740992.0",
              "1000000000000000.5", "0.00001", "0.0001", "1e-04", "12345678901234567.0",
              "4.070334338702894e+16", "1301395767928599.2", "1301395767928599.3",
              "nan", "inf", "-inf", "1e999", "5e-324", "2.2250738585072014e-308", "--1.5",
              "1.5e+016", "1.5e-7", "0.1000000000000000055511151231257827", ""]
    out = verdicts(cells)
    for text, (verdict, value) in zip(cells, out, strict=True):
        if verdict == "proved":
            assert is_repr(text), text
            assert value == float(text) and math.copysign(1, value) == math.copysign(
                1, float(text)), text
        elif verdict == "refuted":
            assert not is_repr(text), text
    assert verdicts(cells[:50], large=True) == out[:50]  # large_string offsets alike
    # every repr cell of ordinary magnitudes is proved, none left to Python (from 1e13 on,
    # some floats lie halfway between two 17-digit decimals: those ties are left to it)
    plain = [repr(v) for v in values[:3 * n] if 1e-10 < abs(v) < 1e12]
    assert all(v == "proved" for v, _ in verdicts(plain))


def numpy_path(column):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(io, "_kernel", lambda: None)
        return io._arrow_lossless(column)


def test_kernel_reads_every_column_as_the_numpy_path_does():
    """Whole columns, in several chunks and sliced: numbers (the same floats) exactly
    when the numpy path gives numbers; a cell left unknown is decided by Python's repr."""
    rng = np.random.default_rng(4)
    values = rng.random(400) * 10.0 ** rng.integers(-25, 25, 400)
    canonical = [repr(v) for v in values.tolist()]
    odd = ["0.50", "1e-5", "01.5", "3", "nan", "x", "1.5e+016", "2.0", "-0.0"]
    for trial in range(60):
        cells = list(rng.choice(canonical, 300))
        if trial % 3 == 1:
            cells[int(rng.integers(300))] = str(rng.choice(odd))
        if trial % 3 == 2:  # whole numbers only: text, as every whole-number column
            cells = [repr(float(v)) for v in rng.integers(-50, 50, 300)]
        cuts = sorted(rng.integers(0, 300, 2))
        chunks = [cells[:cuts[0]], cells[cuts[0]:cuts[1]], cells[cuts[1]:]]
        kind = pa.large_string() if trial % 2 else pa.string()
        column = pa.chunked_array([pa.array(c, kind) for c in chunks]).slice(trial % 5)
        got, expected = io._arrow_lossless(column), numpy_path(column)
        assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), trial
        if isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, expected)
        else:
            pd.testing.assert_series_equal(pd.Series(got), pd.Series(expected))


def test_read_table_is_the_same_with_and_without_the_kernel(tmp_path, kernel_switch):
    """The file's table, through read_table, whichever path checks the floats."""
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"a": rng.random(3000), "b": rng.normal(0, 1e-7, 3000),
                          "c": rng.integers(0, 9, 3000), "d": np.round(rng.random(3000), 3)})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    with_kernel = io.read_table(path)
    assert with_kernel["a"].dtype == np.float64 and with_kernel["b"].dtype == np.float64
    kernel_switch(io._kernel, on=False)
    assert io._kernel() is None
    pd.testing.assert_frame_equal(with_kernel, io.read_table(path))
    pd.testing.assert_frame_equal(with_kernel, frame)


def test_kernel_reads_int_columns_as_the_numpy_path_does():
    """An int column is numbers exactly when every cell is its int's decimal form (no
    sign but '-', no leading zero, no '-0', within int64), whichever path checks it."""
    rng = np.random.default_rng(9)
    edge = ["0", "-1", "9223372036854775807", "-9223372036854775808"]
    odd = ["01", "+4", "-0", "9223372036854775808", "-9223372036854775809", "1.0", " 1",
           "1 ", "", "-", "1e3", "99999999999999999999", "٣"]
    for trial in range(60):
        cells = [str(v) for v in rng.integers(-10**int(rng.integers(1, 19)), 10**18, 200)]
        cells[int(rng.integers(200))] = str(rng.choice(edge))
        if trial % 2:
            cells[int(rng.integers(200))] = str(rng.choice(odd))
        cuts = sorted(rng.integers(0, 200, 2))
        kind = pa.large_string() if trial % 3 == 0 else pa.string()
        column = pa.chunked_array([pa.array(c, kind) for c in
                                   (cells[:cuts[0]], cells[cuts[0]:cuts[1]], cells[cuts[1]:])])
        column = column.slice(trial % 4)
        got, expected = io._arrow_lossless(column), numpy_path(column)
        assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), trial
        if isinstance(got, np.ndarray):
            assert got.dtype == np.int64 and got.flags.writeable
            np.testing.assert_array_equal(got, expected)
        else:
            pd.testing.assert_series_equal(pd.Series(got), pd.Series(expected))


def test_kernel_utf8_check_is_pythons_decoder_cell_by_cell():
    """Each cell is UTF-8 exactly when Python decodes it (overlong forms, surrogates, past
    U+10FFFF, cut sequences refused), also where two cells together would decode (a lead
    byte ending one cell, its continuation starting the next)."""
    rng = np.random.default_rng(10)
    tricky = [b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80",
              b"\xe2\x82", b"\x82\xac", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xc3\xa9", b"\xff",
              b"\xdf\xbf", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xe0\xa0\x80", b"plain"]
    for trial in range(300):
        parts = rng.choice(len(tricky), int(rng.integers(1, 4)))
        cell = b"".join(b"ab" * int(rng.integers(0, 6)) + tricky[i] for i in parts)
        cells = [b"x" * 9, cell, b"y"] if trial % 2 else [cell]
        column = pa.Array.from_buffers(  # the bytes as a string array, unchecked
            pa.string(), len(cells), [None, *pa.array(cells, pa.binary()).buffers()[1:]])
        _, offsets, data = column.buffers()
        got = kernel.utf8_cells(offsets, data, 0, len(cells), False)
        decodes = [_decodes(c) for c in cells]
        assert got == (decodes.index(False) if False in decodes else -1), cells
    cut = pa.Array.from_buffers(pa.string(), 2, [None, *pa.array(
        [b"\xe2", b"\x82\xac"], pa.binary()).buffers()[1:]])
    _, offsets, data = cut.buffers()
    assert kernel.utf8_cells(offsets, data, 0, 2, False) == 0


def _decodes(cell: bytes) -> bool:
    try:
        cell.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def every_verdict(cells, exact):
    """Each cell's verdict (0 proved, 1 unknown, 2 refuted) and float, in whole-array calls
    resumed after each refuted cell; `exact` forces the kernel's 128-bit integers."""
    column = pa.array(cells, pa.string())
    _, offsets, data = column.buffers()
    n = len(cells)
    values, unknown = np.full(n, np.nan), np.zeros(n, np.uint8)
    verdict = np.zeros(n, np.uint8)
    at = 0
    while at < n:
        refuted, _ = kernel.repr_floats(offsets, data, at, n - at, False, values[at:],
                                        unknown[at:], exact)
        stop = n if refuted < 0 else at + refuted
        verdict[at:stop] = unknown[at:stop]
        if refuted < 0:
            break
        verdict[stop], values[stop] = 2, np.nan
        at = stop + 1
    values[verdict != 0] = np.nan
    return verdict, values


def spellings(values):
    """Each float's repr and near misses: the last digit one off either way, a digit
    more, the last digit cut, 15 to 17 significant digits."""
    cells = []
    for v in values:
        text = repr(v)
        mantissa, e, exponent = text.partition("e")
        last = int(mantissa[-1])
        cells += [text, f"{mantissa[:-1]}{(last + 1) % 10}{e}{exponent}",
                  f"{mantissa[:-1]}{(last - 1) % 10}{e}{exponent}", f"{mantissa}3{e}{exponent}",
                  f"{mantissa[:-1]}{e}{exponent}", f"{v:.17g}", f"{v:.16g}", f"{v:.15g}"]
    return cells


def check_fast_path_is_the_exact_path(values):
    cells = spellings(values)
    fast, fast_values = every_verdict(cells, exact=False)
    exact, exact_values = every_verdict(cells, exact=True)
    np.testing.assert_array_equal(fast, exact)
    np.testing.assert_array_equal(fast_values, exact_values)  # bit for bit (NaN alike)
    for i in np.flatnonzero(fast != 1).tolist():  # and both against repr itself
        assert is_repr(cells[i]) == (fast[i] == 0), cells[i]
        if fast[i] == 0:
            assert fast_values[i] == float(cells[i]), cells[i]
    return fast


def random_doubles(rng, n):
    """Random bit patterns (finite, normal or not), uniform floats, and magnitudes where
    the 64-bit test's bounds are nearly reached (a step 10**p or quarter ulp near 2**56)."""
    bits = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64)
    values = np.concatenate([
        bits, rng.random(n), rng.random(n) * 10.0 ** rng.integers(-30, 30, n),
        np.round(rng.random(n) * 10.0 ** rng.integers(1, 8, n)) / 10.0 ** rng.integers(0, 9, n),
        np.nextafter(2.0 ** rng.integers(-80, 80, n), rng.choice([0, np.inf], n)),
    ])  # fmt: skip
    return values[np.isfinite(values) & (values != 0)].tolist()


def test_kernel_64_bit_test_decides_as_the_128_bit_one():
    """The 64-bit fast test (T - V modulo 2**64) gives every cell the verdict and float of
    the exact 128-bit test: reprs, near misses and other spellings of random doubles."""
    verdict = check_fast_path_is_the_exact_path(random_doubles(np.random.default_rng(11), 12_000))
    assert (verdict == 0).sum() > 12_000 and (verdict == 2).sum() > 12_000  # both kinds met


@pytest.mark.slow
def test_kernel_64_bit_test_decides_as_the_128_bit_one_at_scale(scaled):
    """As above on 10**6 random doubles (scaled) and their near misses."""
    n = scaled(200_000, 20_000)
    check_fast_path_is_the_exact_path(random_doubles(np.random.default_rng(12), n))


def test_kernel_reads_a_tables_columns_in_one_call_as_one_at_a_time():
    """A small table's columns checked in one call (``columns``) come out as the reader
    makes each alone (``_arrow_lossless``): the same kind, dtype and values bit for bit;
    missing cells, whole floats, 6-decimal metrics, labels like 1.10, 01 and NA, cells
    the proof leaves to Python (1.5e-300, subnormals), and a cell that is not UTF-8."""
    rng = np.random.default_rng(9)
    pools = {
        "ints": ["0", "-7", "123", "9223372036854775807", "-9223372036854775808"],
        "floats": [repr(v) for v in rng.normal(0, 1e3, 50).tolist()] + ["1e-05", "2.5e+20"],
        "whole": ["1.0", "-2.0", "0.0", "3.0"],
        "decimals": ["0.970370", "0.123456", "0.5", "12.000001"],
        "labels": ["1.10", "01", "NA", "None", "nan", "cat", "é", "-0", "+4", "1e5"],
        "left": ["1.5e-300", "5e-324", "2.5e-310"] + [repr(v) for v in rng.random(5).tolist()],
        "missing": [None, "1", "2"],
        "bytes": [b"caf\xe9", b"x"],
    }
    kinds = list(pools)
    seen = set()
    for trial in range(300):
        n = int(rng.integers(1, 40))
        columns = []
        for kind in rng.choice(kinds, int(rng.integers(1, 8))):
            pool = pools[str(kind)]
            cells = [pool[i] for i in rng.integers(0, len(pool), n)]
            if rng.random() < 0.2:  # one odd cell anywhere
                other = pools[str(rng.choice(kinds[:-1]))]
                cells[int(rng.integers(n))] = other[int(rng.integers(len(other)))]
            if any(isinstance(c, bytes) for c in cells):
                cells = [c if isinstance(c, bytes) else (c or "").encode() for c in cells]
                array = pa.array(cells, pa.large_binary()).view(pa.large_string())
            else:
                array = pa.array(cells, pa.large_string() if trial % 2 else pa.string())
            columns.append(pa.chunked_array([array]))
        outs = [np.empty(n, np.int64) for _ in columns]
        cells = [(*io._text_buffers(c.chunks[0]), c.null_count > 0) for c in columns]
        seen.update(kernel.columns(cells, outs).decode())  # the kernel's verdicts
        try:
            one = [io._arrow_lossless(column) for column in columns]
        except pa.ArrowInvalid:
            with pytest.raises(pa.ArrowInvalid):
                io._columns_at_once(kernel, columns)
            continue
        got = io._columns_at_once(kernel, columns)
        for a, b in zip(got, one, strict=True):
            assert isinstance(a, np.ndarray) == isinstance(b, np.ndarray)
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype and a.flags.writeable
                np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
            else:
                pd.testing.assert_series_equal(pd.Series(a), pd.Series(b))
    assert seen == set("iftux")  # ints, floats, text, left to Python, not UTF-8
