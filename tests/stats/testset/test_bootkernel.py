"""The optional compiled bootstrap kernel: its draws, its sums, and its agreement with numpy.

Skipped where the extension was not built (then the numpy paths run, and
test_resampling.py covers them).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sst

from vareval.stats import paired_bootstrap
from vareval.stats.testset import resampling as rs

kernel = pytest.importorskip(
    "vareval.stats.testset._bootkernel", reason="the compiled kernel was not built"
)


@pytest.fixture(autouse=True)
def kernel_on(kernel_switch):
    kernel_switch(rs._kernel)


class Digits:
    """A digit stream of the kernel, by its definition, on the words of ``bits``.

    Each 64-bit word ``u`` is accepted when ``(u * N) mod 2**64 >= 2**64 mod N``,
    ``N = high**k`` (the largest ``k <= 16`` with ``N <= 2**58``); then the ``k``
    base-``high`` digits of ``floor(u * N / 2**64)``, most significant first.
    Digits left in a word wait for the stream's next draws; several streams
    may share one bit generator, each taking its next word when it needs one.
    """

    def __init__(self, bits, high):
        self.bits, self.high, self.left = bits, high, []
        self.k = 1
        while self.k < 16 and high ** (self.k + 1) <= 1 << 58:
            self.k += 1

    def take(self, count):
        big, out = self.high**self.k, []
        while len(out) < count:
            if not self.left:
                u = int(self.bits.random_raw())
                if (u * big) % (1 << 64) < (1 << 64) % big:
                    continue
                v = (u * big) >> 64
                self.left = [v // self.high ** (self.k - 1 - i) % self.high for i in range(self.k)]
            need = count - len(out)
            out += self.left[:need]
            self.left = self.left[need:]
        return np.array(out, dtype=np.int64)


def copy_of(bits):
    copy = type(bits)()
    copy.state = bits.state
    return copy


def digit_stream(bits, high, count):
    """The kernel's draws from a copy of ``bits``, and that copy after the words they used."""
    copy = copy_of(bits)
    return Digits(copy, high).take(count), copy


@pytest.mark.parametrize("high", [1, 2, 7, 3571, 659_000, (1 << 20) + 7])
def test_draws_and_sums_follow_the_definition(high):
    # 659,000**3 is just below 2**58, so 1.6 % of the words are rejected
    rng = np.random.default_rng(high)
    n_types = min(high, 40) + 2
    lookup = rng.integers(0, n_types, high).astype(np.int32)
    rows = np.where(rng.random((n_types, 9)) < 0.3, rng.integers(-3, 4, (n_types, 9)), 0.0)
    cols, vals = rs.padded_rows(rows)
    given_types = np.array([n_types - 1, 0], dtype=np.int32)
    given = np.array([[0, 0, 0], [4, 1, 3], [0, 2, 1000], [1, 0, 17], [0, 0, 5000]])
    sums = rs.compiled_sums(kernel, rng, lookup, cols, vals, given_types, given, 9)

    ref = np.random.default_rng(high)
    ref.integers(0, n_types, high)
    ref.random((n_types, 9))
    ref.integers(-3, 4, (n_types, 9))
    digits, after = digit_stream(ref.bit_generator, high, int(given[:, -1].sum()))
    counts = np.zeros((5, n_types))
    ends = np.cumsum(given[:, -1])
    for r, drawn in enumerate(np.split(digits, ends[:-1])):
        counts[r] = np.bincount(lookup[drawn], minlength=n_types)
        counts[r, given_types] += given[r, :2]
    np.testing.assert_array_equal(sums, counts @ rows)
    assert rng.bit_generator.state == after.state  # the same words were used, no more


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_digits_are_uniform_and_independent(bits):
    # consecutive draws of a word and across words: pairs uniform on 13 x 13 cells,
    # with any of numpy's bit generators
    rng = np.random.Generator(bits(3))
    high = 13
    lookup = np.arange(high, dtype=np.int32)
    cols = np.zeros((high, 1), dtype=np.int32)
    vals = np.arange(high, dtype=float)[:, None]
    sums = rs.compiled_sums(kernel, rng, lookup, cols, vals, np.zeros(0, np.int32),
                            np.ones((60_000, 1), dtype=np.int64), 1)
    x = sums[:, 0].astype(int)
    assert sst.chisquare(np.bincount(x, minlength=high)).pvalue > 1e-3
    pairs = np.bincount(x[:-1] * high + x[1:], minlength=high * high)
    assert sst.chisquare(pairs).pvalue > 1e-3


def test_padded_rows_hold_each_rows_nonzeros():
    rng = np.random.default_rng(4)
    rows = np.where(rng.random((50, 30)) < 0.1, rng.random((50, 30)), 0.0)
    rows[7] = 0.0
    cols, vals = rs.padded_rows(rows)
    dense = np.zeros_like(rows)
    np.add.at(dense, (np.arange(50)[:, None].repeat(cols.shape[1], 1), cols), vals)
    np.testing.assert_array_equal(dense, rows)
    assert cols.dtype == np.int32 and cols.shape[1] == np.count_nonzero(rows, axis=1).max()


def test_bad_arrays_are_refused_not_read_past():
    rng = np.random.default_rng(0)
    cols, vals = np.zeros((3, 1), np.int32), np.ones((3, 1))
    no_given, one = np.zeros(0, np.int32), np.full((2, 1), 5, np.int64)
    out = np.empty((2, 1))
    with pytest.raises(ValueError, match="out of range"):
        rs.compiled_sums(kernel, rng, np.array([0, 3], np.int32), cols, vals, no_given, one, 1)
    with pytest.raises(ValueError, match="out of range"):
        bad_cols = np.full((3, 1), 1, np.int32)
        rs.compiled_sums(kernel, rng, np.array([0, 1], np.int32), bad_cols, vals, no_given,
                         one, 1)
    with pytest.raises(ValueError, match="out of range"):
        rs.compiled_sums(kernel, rng, np.zeros(0, np.int32), cols, vals, no_given, one, 1)
    with pytest.raises(TypeError, match="lookup"):
        rs.compiled_sums(kernel, rng, np.array([0, 1]), cols, vals, no_given, one, 1)
    with pytest.raises(ValueError, match="sizes"):
        bits = rng.bit_generator
        kernel.resample_sums(bits.capsule, None, np.array([0], np.int32), cols, vals, no_given,
                             one, out[:1])


def _pair(n, c, seed):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, c, n)
    a = np.where(rng.random(n) < 0.8, g, rng.integers(0, c, n))
    b = np.where(rng.random(n) < 0.77, g, rng.integers(0, c, n))
    return g, a, b


@pytest.mark.parametrize(("method", "c", "expect"),
                         [("index", 7, "index"), ("auto", 20, "split"), ("auto", 400, "index")])
def test_bootstrap_equals_brute_force_on_the_kernels_draws(method, c, expect, monkeypatch):
    # each resample's delta, exactly, from the kernel's draws recomputed by
    # definition: the split path's multinomial first, then the item digits
    n, b = 2000, 300
    g, a, p = _pair(n, c, c)
    metric = rs.get_metric("macro-f1")
    types = rs.paired_types(metric, g, a, p)
    monkeypatch.setattr(rs, "KERNEL_ELEMENTS", 1 << 30)  # one kernel call
    got, path = rs.bootstrap_deltas(metric, types, b, np.random.default_rng(9), method)
    assert path == expect + "-compiled"

    ref = np.random.default_rng(9)
    counts = np.zeros((b, types.n_types))
    if types.labels is None:  # the type rows' path
        heavy = (types.counts >= rs.HEAVY_TYPE) & path.startswith("split")
        lookup = types.item_type[~heavy[types.item_type]]
        if heavy.any():
            given = ref.multinomial(n, np.append(types.counts[heavy], lookup.size) / n, size=b)
        else:
            given = np.full((b, 1), n)
        digits, _ = digit_stream(ref.bit_generator, lookup.size, int(given[:, -1].sum()))
        for r, drawn in enumerate(np.split(digits, np.cumsum(given[:, -1])[:-1])):
            counts[r] = np.bincount(lookup[drawn], minlength=types.n_types)
        counts[:, heavy] += given[:, : np.count_nonzero(heavy)]
    else:  # the label counts' path, in one block
        assert c > 10
        counts = _label_reference(types, b, b, ref.bit_generator, path)
    want = metric.combine(counts @ types.stats_a) - metric.combine(counts @ types.stats_b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def _label_reference(types, n_res, step, bits, path):
    """The label path's type counts by definition, on ``bits``: per block of ``step``
    resamples, the multinomial (frequent types, then how many one-, two- and
    three-count items each resample draws), then each resample's draws from
    three digit streams that start afresh at each block."""
    n = types.n
    gl, al, bl = types.labels.T
    wrong = (al != gl).astype(int) + (bl != gl)
    heavy = np.where(wrong == 0, types.counts >= rs.LABEL_HEAVY_ONE,
                     types.counts >= rs.LABEL_HEAVY_TYPE) & path.startswith("split")
    rare = types.item_type[~heavy[types.item_type]]
    lookups = [rare[wrong[rare] == k] for k in range(3)]
    shares = np.append(types.counts[heavy], [len(x) for x in lookups]) / n
    ref = np.random.Generator(bits)
    counts = np.zeros((n_res, types.n_types))
    for pos in range(0, n_res, step):
        size = min(step, n_res - pos)
        given = ref.multinomial(n, shares, size=size)
        streams = [Digits(bits, len(x)) for x in lookups]
        for r in range(size):
            for lookup, stream, k in zip(lookups, streams, given[r, -3:], strict=True):
                counts[pos + r] += np.bincount(lookup[stream.take(k)], minlength=types.n_types)
            counts[pos + r, heavy] += given[r, : np.count_nonzero(heavy)]
    return counts


@pytest.mark.parametrize(("name", "bits", "c", "n", "path"),
                         [("macro-f1", np.random.PCG64, 40, 900, "index"),
                          ("macro-precision", np.random.PCG64, 300, 900, "index"),
                          ("macro-recall", np.random.Philox, 40, 900, "index"),
                          ("weighted-f0.5", np.random.PCG64, 40, 900, "index"),
                          ("micro-f1", np.random.SFC64, 40, 900, "index"),
                          ("macro-f2", np.random.PCG64, 12, 3000, "split"),
                          ("mcc", np.random.PCG64, 40, 900, "index"),
                          ("balanced_accuracy", np.random.SFC64, 12, 3000, "split"),
                          ("adjusted_balanced_accuracy", np.random.PCG64, 300, 900, "index")])
def test_label_bootstrap_in_many_blocks_equals_the_definition(name, bits, c, n, path,
                                                              monkeypatch):
    # one kernel call draws every block (label_deltas) and calls the multinomial
    # between blocks: each resample's delta, exactly, from the definition on
    # the same bit generator's words, and the generator left after the words used
    n_res, step = 60, 7
    g, a, p = _pair(n, c, c + len(name))
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, g, a, p)
    assert types.labels is not None
    monkeypatch.setattr(rs, "KERNEL_ELEMENTS", step * rs.slots_width(c))
    rng = np.random.Generator(bits(17))
    got, drawn = rs.bootstrap_deltas(metric, types, n_res, rng)
    assert drawn == path + "-compiled"  # split: frequent types given by the multinomial too
    ref = bits(17)
    counts = _label_reference(types, n_res, step, ref, path)
    want = metric.combine(counts @ types.stats_a) - metric.combine(counts @ types.stats_b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(rng.bit_generator.random_raw(7), ref.random_raw(7))


def test_the_avx512_combine_gives_the_generic_combines_bits():
    # where the CPU has AVX-512 the macro combine runs in intrinsics (and zeroes
    # the row as it reads it); VAREVAL_NO_AVX512 runs the compiled-for-all code:
    # the same deltas to the last bit, on class counts not a multiple of 4 or 8
    code = (
        "import numpy as np; from vareval.stats import paired_bootstrap\n"
        "rng = np.random.default_rng(3); out = []\n"
        "for c in (13, 46, 301):\n"
        "    g = rng.integers(0, c, 2000)\n"
        "    a = np.where(rng.random(2000) < .7, g, rng.integers(0, c, 2000))\n"
        "    b = np.where(rng.random(2000) < .6, g, rng.integers(0, c, 2000))\n"
        "    for m in ('macro-f1', 'macro-precision', 'macro-recall', 'macro-f0.7'):\n"
        "        r = paired_bootstrap(g, a, b, metric=m, n_resamples=300, rng=c)\n"
        "        assert r.path.endswith('-compiled') and r.distribution.size == 300\n"
        "        out.append(r.distribution)\n"
        "print(np.concatenate(out).tobytes().hex())\n"
    )
    runs = []
    for env in ({}, {"VAREVAL_NO_AVX512": "1"}):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, **env}, check=True, timeout=120)
        runs.append(done.stdout)
    assert runs[0] == runs[1] and len(runs[0]) > 1000


def test_label_deltas_refuse_bad_draws():
    # the counts the multinomial callback returns are checked before any draw
    rng = np.random.default_rng(0)
    bits = rng.bit_generator
    one, two, three = np.zeros(3, np.int32), np.zeros((2, 2), np.int32), np.zeros((3, 3), np.int32)
    no_given, out = np.zeros((0, 3), np.int32), np.empty(5)

    def call(draw, c=2, pcg=None, n_res=out.size):
        kernel.label_deltas(bits.capsule, pcg, one, two, three, no_given, draw, n_res, 2, c,
                            0, 2, 1.0, out)

    with pytest.raises(ValueError, match="sizes"):
        call(lambda size: np.ones((size, 4), np.int64))
    with pytest.raises(ValueError, match="sizes"):  # a block's rows
        call(lambda size: np.ones((size + 1, 3), np.int64))
    with pytest.raises(ValueError, match="out of range"):
        call(lambda size: np.full((size, 3), -1, np.int64))
    with pytest.raises(ValueError, match="out of range"):  # a count past int32
        call(lambda size: np.full((size, 3), 2**30, np.int64))
    with pytest.raises(TypeError, match="given"):
        call(lambda size: np.ones((size, 3)))
    with pytest.raises(ZeroDivisionError):  # the callback's own error
        call(lambda size: 1 / 0)
    with pytest.raises(ValueError, match="out of range"):  # a slot past the row of 2 classes
        kernel.label_deltas(bits.capsule, None, np.full(3, 28, np.int32), two, three, no_given,
                            lambda size: np.ones((size, 3), np.int64), 5, 2, 2, 0, 2, 1.0, out)
    with pytest.raises(ValueError, match="inconsistent"):
        call(lambda size: np.ones((size, 3), np.int64), n_res=6)
    with pytest.raises(ValueError, match="inconsistent"):
        call(lambda size: np.ones((size, 3), np.int64), c=0)
    # a call whose draws fail leaves numpy's PCG64 where its words ended
    state = bits.state
    with pytest.raises(ValueError, match="out of range"):
        with bits.lock:
            call(lambda size: np.full((size, 3), -1, np.int64), pcg=rs.pcg64_state(bits))
    assert bits.state == state


@pytest.mark.parametrize("c", [3, 5, 20, 100, 1000])
def test_kernel_and_numpy_paths_agree_within_monte_carlo_error(c, kernel_switch):
    # The same data through the kernel and through numpy (different draws of
    # the same distribution): p-values within 4.5 standard errors, interval
    # ends within a fifth of the deltas' SD (4 standard errors), the same point estimate.
    g, a, b = _pair(3000, c, 100 + c)
    n_res = 6000
    kw = dict(metric="macro-f1", n_resamples=n_res, ci="percentile")
    fast = paired_bootstrap(g, a, b, rng=1, **kw)
    kernel_switch(rs._kernel, on=False)
    slow = paired_bootstrap(g, a, b, rng=2, **kw)
    if c == 3:  # 3 classes keep the compressed path, with or without the kernel
        assert fast.path == slow.path == "compressed"
    else:  # from 4 classes on the kernel draws items (numpy compresses up to 256 types)
        assert fast.path == (slow.path if c > 5 else "split") + "-compiled"
    assert fast.estimate == slow.estimate
    p = (fast.pvalue + slow.pvalue) / 2
    assert abs(fast.pvalue - slow.pvalue) < 4.5 * np.sqrt(2 * p * (1 - p) / n_res) + 2 / n_res
    sd = np.std(slow.distribution)
    np.testing.assert_allclose(fast.confidence_interval(), slow.confidence_interval(),
                               atol=0.2 * sd)
    assert abs(np.std(fast.distribution) / sd - 1) < 0.06


@pytest.mark.parametrize("c", [8, 20, 400])  # type rows (split); label counts (split, index)
def test_same_rng_same_answer_on_the_compiled_paths(c):
    # the kernel's words come from the rng's own bit generator: one seed, one answer
    g, a, b = _pair(1500, c, c)
    kw = dict(metric="macro-f1", n_resamples=500, ci="percentile")
    first, again = (paired_bootstrap(g, a, b, rng=5, **kw) for _ in range(2))
    assert first.path.endswith("-compiled")
    np.testing.assert_array_equal(first.distribution, again.distribution)
    assert first.pvalue == again.pvalue
    other = paired_bootstrap(g, a, b, rng=6, **kw)
    assert not np.array_equal(first.distribution, other.distribution)


def test_a_generator_with_a_plain_lock_is_not_deadlocked():
    """The kernel calls the multinomial between blocks while the caller holds the bit
    generator's lock, which the multinomial takes too: an RLock from numpy 2.4, a plain
    lock before. A PCG64 whose lock is a plain one finishes (in a thread, so that a
    deadlock fails the test instead of hanging it) with the plain PCG64's answer."""
    import threading

    class PlainLocked(np.random.PCG64):
        def __init__(self, seed):
            super().__init__(seed)
            self._plain = threading.Lock()

        lock = property(lambda self: self._plain)

    g, a, b = _pair(1500, 400, 400)
    kw = dict(metric="macro-f1", n_resamples=500, ci="percentile")
    bits = PlainLocked(5)
    assert isinstance(bits.lock, type(threading.Lock()))
    got = []
    worker = threading.Thread(target=lambda: got.append(
        paired_bootstrap(g, a, b, rng=np.random.Generator(bits), **kw)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert got, "the bootstrap did not finish: the generator's lock was taken twice"
    expected = paired_bootstrap(g, a, b, rng=np.random.Generator(np.random.PCG64(5)), **kw)
    assert got[0].path == expected.path and got[0].path.endswith("-compiled")
    np.testing.assert_array_equal(got[0].distribution, expected.distribution)


# --- the label counts' path: counts at each draw, precision/recall/F in C ---------


@pytest.mark.parametrize(("bits", "width"), [(np.random.PCG64, 40), (np.random.Philox, 1024),
                                             (np.random.PCG64, 5000), (np.random.SFC64, 1 << 21),
                                             (np.random.PCG64, 1 << 16),
                                             (np.random.PCG64, (1 << 16) + 1)])
def test_label_counts_follow_the_definition(bits, width):
    # each drawn item adds 1 at each of its one, two or three columns; the given
    # types add their counts at their three slots; three digit streams of the
    # same words, a resample's one-count draws first (the kernel packs the
    # three-count table below 2**21 columns, and narrows the one- and two-count
    # tables to 16-bit columns up to 2**16 columns)
    rng = np.random.Generator(bits(11))
    tables = [rng.integers(0, width, (m, k)).astype(np.int32)
              for m, k in ((3571, 1), (7, 2), (659_000, 3))]
    tables[0] = tables[0].ravel()
    given_slots = rng.integers(0, width, (3, 3)).astype(np.int32)
    given = np.array([[0, 0, 0, 0, 0, 0], [4, 1, 0, 3, 5, 2], [0, 2, 7, 1000, 0, 301],
                      [1, 0, 0, 17, 1, 0], [0, 0, 0, 0, 0, 9]])
    out = np.full((5, width), -1, np.int32)
    state = rng.bit_generator.state
    with rng.bit_generator.lock:
        kernel.label_counts(rng.bit_generator.capsule, rs.pcg64_state(rng.bit_generator),
                            *tables, given_slots, given, out)

    ref = copy_of(rng.bit_generator)
    ref.state = state
    streams = [Digits(ref, len(t)) for t in tables]
    want = np.zeros((5, width), np.int64)
    for r in range(5):
        for table, stream, k in zip(tables, streams, given[r, 3:], strict=True):
            for d in stream.take(k):
                np.add.at(want[r], table[d], 1)
        for h in range(3):
            np.add.at(want[r], given_slots[h], given[r, h])
    np.testing.assert_array_equal(out, want)
    # the same words were used, no more: both generators go on alike
    np.testing.assert_array_equal(rng.bit_generator.random_raw(9), ref.random_raw(9))


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.Philox])
def test_words_counted_from_registers_follow_the_definition(bits):
    # streams of 4 (and the three-count stream's 6) digits a word are counted
    # word by word (the digits never stored): the same draws as the definition, the
    # streams interleaved, across a word's leftover digits, whole words,
    # rejected words (1.5 % of them at 23,081 items) and a last partial word
    rng = np.random.Generator(bits(5))
    width, m = 700, 23_081
    one = rng.integers(0, width, m).astype(np.int32)
    two = rng.integers(0, width, (3200, 2)).astype(np.int32)
    three = rng.integers(0, width, (440, 3)).astype(np.int32)
    given = np.array([[1, 0, 0], [4, 3, 1], [7, 0, 0], [4001, 2005, 602], [3, 2, 9], [0, 1, 0],
                      [2002, 11, 7], [6, 1, 1]])
    given = np.column_stack([np.zeros(len(given), np.int64), given])
    out = np.empty((len(given), width), np.int32)
    state = rng.bit_generator.state
    with rng.bit_generator.lock:
        kernel.label_counts(rng.bit_generator.capsule, rs.pcg64_state(rng.bit_generator), one,
                            two, three, np.zeros((1, 3), np.int32), given, out)
    ref = copy_of(rng.bit_generator)
    ref.state = state
    streams = [Digits(ref, len(t)) for t in (one, two, three)]
    assert [s.k for s in streams] == [4, 4, 6]
    want = np.zeros_like(out, dtype=np.int64)
    for r in range(len(given)):
        for table, stream, k in zip((one, two, three), streams, given[r, 1:], strict=True):
            np.add.at(want[r], table[stream.take(k)], 1)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(rng.bit_generator.random_raw(9), ref.random_raw(9))


@pytest.mark.parametrize("width", [40, (1 << 21) + 3])
def test_pcg64_stepped_in_the_kernel_gives_its_own_words(width):
    # numpy's PCG64 stepped inline gives the words next_uint64 gives, and leaves
    # the generator where they end; a state that does not match falls back to calls
    one, two = np.arange(5, dtype=np.int32), np.array([[3, 4], [7, 7]], np.int32)
    three = np.column_stack([np.arange(7), np.arange(7) + 9, np.full(7, width - 1)])
    three = three.astype(np.int32)
    given = np.array([[2, 4, 3, 8], [0, 13, 0, 5], [1, 0, 1, 0]])
    runs = []
    for pcg in ("state", None, "wrong"):
        rng = np.random.default_rng(21)
        bits = rng.bit_generator
        arg = rs.pcg64_state(bits)
        arg = None if pcg is None else arg if pcg == "state" else arg[::-1]
        out = np.empty((3, width), np.int32)
        with bits.lock:
            kernel.label_counts(bits.capsule, arg, one, two, three,
                                np.array([[1, 2, 3]], np.int32), given, out)
        runs.append((out, bits.state, rng.random()))
    for out, state, after in runs[1:]:
        np.testing.assert_array_equal(out, runs[0][0])
        assert state == runs[0][1] and after == runs[0][2]
    assert rs.pcg64_state(np.random.Philox(1)) is None


@pytest.mark.parametrize("seed", range(6))
def test_pcg64_stepped_in_the_kernel_follows_numpys_stream_across_calls(seed):
    # the kernel holds numpy's PCG64 one step ahead and steps it back when a call
    # ends: over many seeds and call lengths (no word, one, a word's digits less
    # or more one, a rejected word's worth, thousands), each call's draws are the
    # definition's on numpy's own words (random_raw), each call starts where the
    # last one left the generator, and the generator is left after the words used
    rng = np.random.default_rng(seed)
    ref = copy_of(rng.bit_generator)
    sizes = np.random.default_rng(100 + seed)
    for high in (2, 700, 3105, 23_170, 659_000, 100_003):
        k = Digits(ref, high).k
        lookup = (np.arange(high) % 97).astype(np.int32)
        cols, vals = rs.padded_rows(np.eye(97))
        for draws in (0, 1, k - 1, k, k + 1, 3 * k + 2, int(sizes.integers(1, 5000))):
            given = np.array([[draws // 3], [0], [draws - draws // 3]])  # resamples of a call
            got = rs.compiled_sums(kernel, rng, lookup, cols, vals, np.zeros(0, np.int32),
                                   given, 97)
            stream = Digits(ref, high)  # a call's left-over digits are dropped
            want = [np.bincount(lookup[stream.take(int(m))], minlength=97) for m in given[:, 0]]
            np.testing.assert_array_equal(got, want)
            assert rng.bit_generator.state == ref.state
    np.testing.assert_array_equal(rng.bit_generator.random_raw(5), ref.random_raw(5))


def _macro_in_order(t, p, f, which, b2):
    """A macro average summed as the kernel documents it, in Python floats.

    Class i's value num / den (0 where den = 0) goes to partial sum i mod 4
    (the last c mod 4 classes to the first), and the result is
    ((s0 + s1) + (s2 + s3)) / (the classes present, summed alike).
    """
    s, m, whole = [0.0] * 4, [0.0] * 4, len(t) - len(t) % 4
    for i, (ti, pi, fi) in enumerate(zip(t.tolist(), p.tolist(), f.tolist(), strict=True)):
        num = ti * (1 + b2) if which == 2 else ti
        den = ti + pi if which == 0 else ti + fi if which == 1 else num + pi + b2 * fi
        q = i % 4 if i < whole else 0
        s[q] += num / den if den > 0 else 0.0
        m[q] += float(den > 0) if which == 2 else float(ti + pi + fi > 0)
    return ((s[0] + s[1]) + (s[2] + s[3])) / ((m[0] + m[1]) + (m[2] + m[3]))


@pytest.mark.parametrize("c", [7, 60, 1001])
def test_macro_combine_is_bit_exact_in_its_documented_order(c):
    # whichever variant of the combine the CPU runs (it is also compiled for AVX2
    # and AVX-512), precision, recall and F-beta (beta**2 inexact, so a fused
    # multiply-add would show) are the same bits as the plain sum in its order
    rng = np.random.default_rng(c)
    rows = 20
    counts = rng.integers(0, 300, (rows, 6 * c)).astype(np.int32)
    counts[:, rng.random(6 * c) < 0.2] = 0  # absent classes
    both, only_a, only_b, neither, fp_a, fp_b = counts.reshape(rows, 6, c).transpose(1, 0, 2)
    for which, b2 in ((0, 1.0), (1, 1.0), (2, 1.0), (2, 1.3**2), (2, 0.5**2)):
        out = np.empty(rows)
        kernel.prf_deltas(counts, c, 0, which, b2, out)
        for r in range(rows):
            a = _macro_in_order(both[r] + only_a[r], fp_a[r], only_b[r] + neither[r], which, b2)
            b = _macro_in_order(both[r] + only_b[r], fp_b[r], only_a[r] + neither[r], which, b2)
            assert out[r] == a - b


def test_label_counts_and_prf_deltas_refuse_bad_arrays():
    rng = np.random.default_rng(0)
    cap = rng.bit_generator.capsule
    one, two, three = np.zeros(3, np.int32), np.zeros((2, 2), np.int32), np.zeros((3, 3), np.int32)
    no_given, draws = np.zeros((0, 3), np.int32), np.full((2, 3), 5, np.int64)
    out = np.empty((2, 4), np.int32)

    def call(one=one, two=two, three=three, given_slots=no_given, given=draws, out=out, pcg=None):
        kernel.label_counts(cap, pcg, one, two, three, given_slots, given, out)

    with pytest.raises(ValueError, match="out of range"):
        call(one=np.full(3, 4, np.int32))
    with pytest.raises(ValueError, match="out of range"):
        call(two=np.full((2, 2), 9, np.int32))
    with pytest.raises(ValueError, match="out of range"):
        call(three=np.full((3, 3), -1, np.int32))
    with pytest.raises(ValueError, match="out of range"):  # draws from no items
        call(three=np.zeros((0, 3), np.int32))
    with pytest.raises(ValueError, match="out of range"):  # a count past int32
        call(given_slots=np.zeros((1, 3), np.int32), given=np.array([[2**31 - 1, 5, 0, 0]] * 2))
    with pytest.raises(ValueError, match="sizes"):
        call(given=draws[:1])
    with pytest.raises(ValueError, match="sizes"):  # three columns an item
        call(three=np.zeros((3, 2), np.int32))
    with pytest.raises(ValueError, match="sizes"):
        call(two=np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="out"):
        call(out=out.astype(float))
    with pytest.raises(TypeError):  # the expected PCG64 state is bytes or None
        call(pcg="state")
    with pytest.raises(ValueError, match="inconsistent"):  # 6 C columns needed
        kernel.prf_deltas(np.zeros((2, 11), np.int32), 2, 0, 2, 1.0, np.empty(2))
    with pytest.raises(ValueError, match="inconsistent"):
        kernel.prf_deltas(np.zeros((2, 12), np.int32), 2, 5, 2, 1.0, np.empty(2))


def _per_class(gold, pred, classes):
    """TP, FP and FN of each class, by a loop over the items."""
    tp, fp, fn = (dict.fromkeys(classes, 0) for _ in range(3))
    for g, p in zip(gold, pred, strict=True):
        if g == p:
            tp[g] += 1
        else:
            fp[p] += 1
            fn[g] += 1
    return [np.array([x[k] for k in classes]) for x in (tp, fp, fn)]


@pytest.mark.parametrize("size", [1, 2, 37, 400])
def test_label_counts_give_each_systems_tp_fp_fn(size):
    # the label counts of a multiset of items (some classes absent from the gold
    # labels or the predictions) turn into each system's per-class TP, FP, FN
    rng = np.random.default_rng(size)
    c = 30
    labels = np.column_stack([rng.integers(0, c // 2, 500), rng.integers(0, c, 500),
                              rng.integers(3, c, 500)])
    labels[:100, 2] = labels[:100, 0]  # B right, ties of A and B
    labels[100:200, 1] = labels[100:200, 0]
    pick = rng.integers(0, 500, size)
    slots = rs.label_slots(labels, c)
    counts = np.bincount(slots[pick].reshape(-1), minlength=rs.slots_width(c))
    sums_a, sums_b = rs.prf_counts(counts, c)
    g, a, b = labels[pick].T
    np.testing.assert_array_equal(sums_a, np.concatenate(_per_class(g, a, range(c))))
    np.testing.assert_array_equal(sums_b, np.concatenate(_per_class(g, b, range(c))))


PRF = [f"{avg}-{which}" for avg in ("macro", "micro", "weighted")
       for which in ("precision", "recall", "f1", "f0.5", "f2")]


COUNT_METRICS = ["mcc", "balanced_accuracy", "adjusted_balanced_accuracy"]


def _sklearn_score(name, gold, pred):
    from sklearn import metrics as skm

    if name == "mcc":
        return skm.matthews_corrcoef(gold, pred)
    if name.endswith("balanced_accuracy"):
        return skm.balanced_accuracy_score(gold, pred, adjusted=name.startswith("adjusted"))
    average, which = name.split("-")
    if which.startswith("f"):
        return skm.fbeta_score(gold, pred, beta=float(which[1:]), average=average,
                               zero_division=0)
    fn = skm.precision_score if which == "precision" else skm.recall_score
    return fn(gold, pred, average=average, zero_division=0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
@pytest.mark.parametrize("name", PRF + COUNT_METRICS)
def test_prf_deltas_equal_sklearn_on_any_multiset(name):
    # the compiled combine on label counts equals scikit-learn's score of the
    # resampled items (classes inferred from the gold and predicted labels,
    # zero_division=0), with many classes, absent ones, 1 item and A == B
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(len(name))
    c = 60
    labels = np.column_stack([rng.integers(0, 40, 800), rng.integers(10, c, 800),
                              rng.integers(0, c, 800)])
    labels[::3, 1] = labels[::3, 0]
    labels[::4, 2] = labels[::4, 0]
    slots = rs.label_slots(labels, c)
    picks = [rng.integers(0, 800, k) for k in (1, 1, 2, 5, 50, 800)] + [np.arange(800)]
    picks.append(np.flatnonzero(labels[:, 1] == labels[:, 2]))  # A and B agree: delta 0
    counts = np.array([np.bincount(slots[p].reshape(-1), minlength=rs.slots_width(c))
                       for p in picks], dtype=np.int32)
    metric = rs.get_metric(name)
    got = rs.count_deltas(kernel, metric, counts, c, 800)
    want = [_sklearn_score(name, labels[p, 0], labels[p, 1])
            - _sklearn_score(name, labels[p, 0], labels[p, 2]) for p in picks]
    if name.startswith("adjusted"):  # one gold class: no chance level to rescale by (NaN)
        one = np.array([np.unique(labels[p, 0]).size == 1 for p in picks])
        assert one[:2].all() and not one[-2:].any() and np.isnan(got[one]).all()
        got, want, counts = got[~one], np.array(want)[~one], counts[~one]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[-1] == 0.0
    # and the numpy combine of the same counts (no kernel) agrees
    numpy_path = rs.count_deltas(None, metric, counts, c, 800)
    np.testing.assert_allclose(numpy_path, got, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's, on tables of no gold items
@pytest.mark.parametrize("c", [3, 8, 20, 129, 1000, 3000])
def test_mcc_and_balanced_accuracy_combines_give_numpys_bits(c):
    # MCC's integer sums and balanced accuracy's pairwise sum of recalls in the
    # kernel: each delta the numpy combine's to the last bit, on any table of
    # counts (absent classes, one gold class, systems that agree, large counts)
    rng = np.random.default_rng(c)
    rows = max(8, 24_000 // c)
    counts = rng.integers(0, rng.integers(1, 3000, (rows, 1)), (rows, 6 * c)).astype(np.int32)
    counts[:, rng.random(6 * c) < 0.2] = 0  # absent classes
    counts[rows // 3 : rows // 2, : 4 * c] *= rng.random(4 * c) < 0.5
    gold_one = np.zeros((2, 6, c), np.int32)
    gold_one[:, :4, c // 2] = rng.integers(1, 40, (2, 4))  # one gold class, FP elsewhere
    gold_one[:, 4:, :] = rng.integers(0, 3, (2, 2, c))
    counts[:2] = gold_one.reshape(2, 6 * c)
    counts[2, c : 3 * c] = 0  # A and B agree: delta 0
    counts[2, 4 * c : 5 * c] = counts[2, 5 * c : 6 * c]
    n_items = int(counts[:, : 4 * c].sum(1).max())
    for name in COUNT_METRICS:
        metric = rs.get_metric(name)
        got = rs.count_deltas(kernel, metric, counts, c, n_items)
        want = rs.count_deltas(None, metric, counts, c, n_items)
        np.testing.assert_array_equal(got, want)
        assert got[2] == 0.0
    # the same code reached from the rows' own combine
    np.testing.assert_array_equal(rs._delta(rs.get_metric("mcc"), *rs.prf_counts(counts, c)),
                                  rs.count_deltas(kernel, rs.get_metric("mcc"), counts, c, 10))


@pytest.mark.parametrize(("c", "method"), [(4, "auto"), (20, "auto"), (20, "index"),
                                           (100, "auto"), (1000, "auto"), (3000, "index")])
def test_mcc_and_balanced_accuracy_bootstraps_equal_the_numpy_combine(c, method, monkeypatch):
    # the whole bootstrap (one label_deltas call) and its BCa jackknife, against
    # the blocks of label_counts combined in numpy (the path before, kept past
    # MCC_EXACT_ITEMS): the same draws, so the same bits, p-value and interval
    g, a, b = _pair(2500, c, c)
    b[:500] = a[:500]
    for name in COUNT_METRICS:
        kw = dict(metric=name, n_resamples=400, ci="bca", method=method, rng=c)
        fast = paired_bootstrap(g, a, b, **kw)
        with monkeypatch.context() as m:
            m.setattr(rs, "_compiled_combine", lambda metric, n_items: None)
            slow = paired_bootstrap(g, a, b, **kw)
        assert fast.path == slow.path and fast.path.endswith("-compiled")
        np.testing.assert_array_equal(fast.distribution, slow.distribution)
        assert (fast.pvalue, fast.low, fast.high) == (slow.pvalue, slow.low, slow.high)


def test_mcc_keeps_numpys_sums_past_exact_integers():
    # past MCC_EXACT_ITEMS items numpy's float sums may round: its combine is kept
    mcc, f1 = rs.get_metric("mcc"), rs.get_metric("macro-f1")
    assert rs._compiled_combine(mcc, rs.MCC_EXACT_ITEMS) == (3, 0, 0.0)
    assert rs.MCC_EXACT_ITEMS**2 < 2**53 <= (rs.MCC_EXACT_ITEMS + 1) ** 2
    assert rs._compiled_combine(mcc, rs.MCC_EXACT_ITEMS + 1) is None
    assert rs._compiled_combine(f1, 2**40) is not None


@pytest.mark.parametrize("name", ["macro-f1", "weighted-precision", "micro-recall", "mcc",
                                  "balanced_accuracy"])
def test_label_jackknife_equals_the_rows_jackknife(name, kernel_switch):
    # leave-one-out deltas from the label counts (kernel or numpy) equal those
    # from the dense (types x 3 C) rows
    g, a, b = _pair(1500, 40, 3)
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, g, a, b)
    assert types.labels is not None
    got = rs.jackknife_deltas(metric, types)
    dense = rs.PairedTypes(types.stats_a, types.stats_b, types.counts, types.item_type)
    want = rs.jackknife_deltas(metric, dense)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    kernel_switch(rs._kernel, on=False)
    np.testing.assert_allclose(rs.jackknife_deltas(metric, types), want, rtol=0, atol=1e-12)
    ta, tb = types.totals()
    np.testing.assert_allclose(np.concatenate([ta, tb]), np.concatenate(dense.totals()))


@pytest.mark.parametrize("name", ["weighted-recall", "micro-f1", "mcc", "macro-precision"])
def test_label_path_agrees_with_numpy_for_other_metrics(name, kernel_switch):
    # as the macro-F1 test above, for metrics combined in C and in numpy
    g, a, b = _pair(3000, 100, 7)
    n_res = 4000
    kw = dict(metric=name, n_resamples=n_res, ci="percentile")
    fast = paired_bootstrap(g, a, b, rng=1, **kw)
    kernel_switch(rs._kernel, on=False)
    slow = paired_bootstrap(g, a, b, rng=2, **kw)
    assert fast.path == slow.path + "-compiled" and fast.estimate == slow.estimate
    p = (fast.pvalue + slow.pvalue) / 2
    assert abs(fast.pvalue - slow.pvalue) < 4.5 * np.sqrt(2 * p * (1 - p) / n_res) + 2 / n_res
    sd = np.std(slow.distribution)
    np.testing.assert_allclose(fast.confidence_interval(), slow.confidence_interval(),
                               atol=0.2 * sd)
    assert abs(np.std(fast.distribution) / sd - 1) < 0.08


def test_label_path_never_builds_the_type_rows(monkeypatch):
    # the bootstrap and its BCa jackknife run from the label counts: no
    # (types x 3 C) rows at 1,000 classes
    g, a, b = _pair(2000, 1000, 5)

    def refuse(*args):
        raise AssertionError("the type rows were built")

    monkeypatch.setattr(rs, "_label_rows", refuse)
    r = paired_bootstrap(g, a, b, metric="macro-f1", n_resamples=300, rng=0)
    assert r.path == "index-compiled" and r.ci_method == "bca"
    assert np.isfinite([r.low, r.high]).all() and r.low < r.estimate < r.high
