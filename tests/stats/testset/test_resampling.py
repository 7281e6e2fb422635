import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from vareval.errors import ArgumentError
from vareval.stats.testset import resampling as rs


@pytest.fixture(autouse=True, scope="module")
def numpy_paths():
    # These tests pin the numpy paths (their draws and names); the compiled
    # kernel and its agreement with them are tested in test_bootkernel.py.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAREVAL_NO_KERNEL", "1")
        rs._kernel.cache_clear()
        yield
    rs._kernel.cache_clear()

SK = {
    "accuracy": lambda g, p: skm.accuracy_score(g, p),
    "macro-f1": lambda g, p: skm.f1_score(g, p, average="macro", zero_division=0),
    "micro-f1": lambda g, p: skm.f1_score(g, p, average="micro", zero_division=0),
    "weighted-f1": lambda g, p: skm.f1_score(g, p, average="weighted", zero_division=0),
    "macro-precision": lambda g, p: skm.precision_score(
        g, p, average="macro", zero_division=0
    ),
    "macro-recall": lambda g, p: skm.recall_score(
        g, p, average="macro", zero_division=0
    ),
    "weighted-precision": lambda g, p: skm.precision_score(
        g, p, average="weighted", zero_division=0
    ),
    "micro-recall": lambda g, p: skm.recall_score(
        g, p, average="micro", zero_division=0
    ),
    "macro-f0.5": lambda g, p: skm.fbeta_score(
        g, p, beta=0.5, average="macro", zero_division=0
    ),
    "weighted-f2": lambda g, p: skm.fbeta_score(
        g, p, beta=2, average="weighted", zero_division=0
    ),
}

triples = st.integers(min_value=2, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=n),
    )
)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=60, deadline=None)
@given(triples, st.sampled_from(sorted(SK)))
def test_combine_of_sums_equals_sklearn_on_any_subset(data, name):
    """The metric of a resample (a multiset of items) is sklearn's on that resample.

    Predicted label 4 never occurs in the gold labels: allowed and counted.
    """
    gold, a, b, subset = (np.asarray(v) for v in data)
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, gold, a, b)
    counts = np.bincount(types.item_type[subset], minlength=types.n_types)
    got_a = rs.metric_value(metric, types.stats_a, counts)
    got_b = rs.metric_value(metric, types.stats_b, counts)
    assert got_a == pytest.approx(SK[name](gold[subset], a[subset]), abs=1e-12)
    assert got_b == pytest.approx(SK[name](gold[subset], b[subset]), abs=1e-12)


def test_types_are_few_and_counts_sum_to_n(rng):
    n = 5000
    g = rng.integers(0, 3, n)
    a, b = rng.integers(0, 3, n), rng.integers(0, 3, n)
    t = rs.paired_types(rs.get_metric("macro-f1"), g, a, b)
    assert t.n_types <= 27 and t.n == n
    t = rs.paired_types(rs.get_metric("accuracy"), g, a, b)
    assert t.n_types <= 4  # (A right?, B right?)
    # Item types reproduce every item's row.
    rows = rs._prf_stats(*rs.encode_labels(g, a)[0], 3)
    full = rs.paired_types(rs.get_metric("macro-f1"), g, a, b)
    np.testing.assert_array_equal(full.stats_a[full.item_type], rows)


def test_string_labels_encode_jointly():
    (g, a), classes = rs.encode_labels(np.array(["b", "a"]), np.array(["c", "a"]))
    assert list(classes) == ["a", "b", "c"]
    assert g.tolist() == [1, 0] and a.tolist() == [2, 0]
    (g,), classes = rs.encode_labels(np.array([10, 12, 10]))
    assert classes.tolist() == [10, 12] and g.tolist() == [0, 1, 0]
    (g, a), classes = rs.encode_labels(np.array([True, False]), np.array([True, True]))
    assert classes.tolist() == [0, 1] and g.tolist() == [1, 0] and a.tolist() == [1, 1]
    (g,), classes = rs.encode_labels(np.array([-5, 3, 2**40]))
    assert classes.tolist() == [-5, 3, 2**40] and g.tolist() == [0, 1, 2]


def _moments_agree(x, y, rtol=0.05):
    # Mean and SD of two independent samples from the same distribution.
    se = np.sqrt(x.var() / x.size + y.var() / y.size)
    assert abs(x.mean() - y.mean()) < 5 * se
    assert x.std() == pytest.approx(y.std(), rel=rtol)


@pytest.mark.parametrize("name", ["accuracy", "macro-f1"])
def test_compressed_and_index_draws_have_the_same_distribution(name):
    rng = np.random.default_rng(7)
    n = 300
    g = rng.integers(0, 3, n)
    a = np.where(rng.random(n) < 0.7, g, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.6, g, rng.integers(0, 3, n))
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, g, a, b)
    for draw in (rs.bootstrap_deltas, rs.randomization_deltas):
        x, p1 = draw(metric, types, 20000, np.random.default_rng(1), "compressed")
        y, p2 = draw(metric, types, 20000, np.random.default_rng(2), "index")
        assert (p1, p2) == ("compressed", "index")
        _moments_agree(x, y)


def test_chunking_bounds_memory_and_keeps_results(monkeypatch):
    rng = np.random.default_rng(3)
    n = 200
    g = rng.integers(0, 3, n)
    a, b = rng.integers(0, 3, n), rng.integers(0, 3, n)
    metric = rs.get_metric("macro-f1")
    types = rs.paired_types(metric, g, a, b)
    whole, _ = rs.bootstrap_deltas(
        metric, types, 1000, np.random.default_rng(5), "compressed"
    )
    monkeypatch.setattr(rs, "CHUNK_ELEMENTS", 64)
    sizes = list(rs._chunks(1000, 27))
    assert max(sizes) == 2 and sum(sizes) == 1000
    chunked, _ = rs.bootstrap_deltas(
        metric, types, 1000, np.random.default_rng(5), "compressed"
    )
    np.testing.assert_allclose(np.sort(whole), np.sort(chunked))
    idx, _ = rs.bootstrap_deltas(metric, types, 50, np.random.default_rng(5), "index")
    assert idx.shape == (50,)


def test_auto_path_choice():
    rng = np.random.default_rng(0)
    g = rng.integers(0, 2, 1000)
    t = rs.paired_types(rs.get_metric("accuracy"), g, g, 1 - g)
    assert rs.choose_path(t) == "compressed"
    s = rs.paired_types(rs.get_metric("mean"), None, rng.random(100), rng.random(100))
    assert s.n_types == 100 and rs.choose_path(s) == "index"
    with pytest.raises(ArgumentError, match="method"):
        rs.choose_path(t, "fast")


def test_jackknife_equals_leave_one_out():
    rng = np.random.default_rng(4)
    n = 40
    g = rng.integers(0, 3, n)
    a, b = rng.integers(0, 3, n), rng.integers(0, 3, n)
    metric = rs.get_metric("macro-f1")
    types = rs.paired_types(metric, g, a, b)
    jack = rs.jackknife_deltas(metric, types)[types.item_type]
    f = SK["macro-f1"]
    keep = np.ones(n, bool)
    for i in range(n):
        keep[i] = False
        ref = f(g[keep], a[keep]) - f(g[keep], b[keep])
        keep[i] = True
        assert jack[i] == pytest.approx(ref, abs=1e-12)


def test_unknown_metric_and_bad_user_metrics():
    with pytest.raises(ArgumentError, match="unknown; accepted"):
        rs.get_metric("bleu")
    with pytest.raises(ArgumentError, match="metric"):
        rs.get_metric(3)
    bad_stats = rs.SumMetric("bad", stats=lambda g, p: p, combine=lambda s: s[..., 0])
    with pytest.raises(ArgumentError, match="shape"):
        rs.paired_types(bad_stats, np.zeros(3), np.zeros(3), np.ones(3))


def test_score_of_one_system_matches_sklearn():
    g = np.array(["a", "b", "c", "a", "b"])
    p = np.array(["a", "c", "c", "a", "z"])
    for name in ("accuracy", "macro-f1", "weighted-recall", "micro-f1"):
        assert rs.score(name, g, p) == pytest.approx(
            SK.get(name, _weighted_recall)(g, p)
        )
    assert rs.score("mean", None, [1.0, 2.0, 4.0]) == pytest.approx(7 / 3)
    assert rs.score(lambda y, q: 0.5, g, p) == 0.5


def _weighted_recall(g, p):
    return skm.recall_score(g, p, average="weighted", zero_division=0)


def test_unique_rows_by_hash_equals_numpy_unique():
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 2, (40, 30)).astype(float)[rng.integers(0, 40, 500)]
    uniq, inv = rs._unique_rows(rows)
    ref, ref_inv = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(uniq, ref)
    np.testing.assert_array_equal(inv, ref_inv.reshape(-1))


def test_sparse_row_sums_equal_the_dense_product():
    rng = np.random.default_rng(12)
    both = np.where(rng.random((300, 120)) < 0.02, rng.random((300, 120)), 0.0)
    counts = rng.integers(0, 5, (50, 300))
    np.testing.assert_allclose(rs._summer(both)(counts.T), counts @ both, rtol=1e-12)


@pytest.mark.parametrize("draw", [rs.bootstrap_deltas, rs.randomization_deltas])
def test_many_classes_fast_path_keeps_draws_and_distribution(draw, monkeypatch):
    # 40 classes: many types, frequent and rare, so the bootstrap splits
    # them (multinomial and item indices) and both tests sum sparsely; the
    # same draws with the dense product give the same deltas, and the plain
    # multinomial and index paths give the same distribution.
    rng = np.random.default_rng(13)
    n, c = 4000, 40
    g = rng.integers(0, c, n)
    a = np.where(rng.random(n) < 0.7, g, rng.integers(0, c, n))
    b = np.where(rng.random(n) < 0.6, g, rng.integers(0, c, n))
    metric = rs.get_metric("macro-f1")
    types = rs.paired_types(metric, g, a, b)
    assert types.n_types > 256
    fast, path = draw(metric, types, 3000, np.random.default_rng(1))
    assert path == ("split" if draw is rs.bootstrap_deltas else "compressed")
    with monkeypatch.context() as m:
        m.setattr(rs, "_summer", lambda both: lambda counts: counts.T @ both)
        dense, _ = draw(metric, types, 3000, np.random.default_rng(1))
    np.testing.assert_allclose(fast, dense, atol=1e-12)
    for i, method in enumerate(("compressed", "index")):
        other, _ = draw(metric, types, 3000, np.random.default_rng(2 + i), method)
        _moments_agree(fast, other, rtol=0.08)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_short_text_labels_encode_as_by_sorting(width):
    rng = np.random.default_rng(width)
    alphabet = np.array(list("ab0Z9-é") + ["", "\U0001f600"])
    texts = ["".join(rng.choice(alphabet, size=int(rng.integers(0, width + 1))))
             for _ in range(300)]
    arrays = [np.array(texts[:100]), np.array(texts[100:250]), np.array(texts[250:])]
    codes, classes = rs.encode_labels(*arrays)
    ref, inverse = np.unique(np.concatenate(arrays), return_inverse=True)
    np.testing.assert_array_equal(classes, ref)
    np.testing.assert_array_equal(np.concatenate(codes), inverse.reshape(-1))


@pytest.mark.parametrize("high", [1, 7, 3571, 3 << 30])
def test_uniform_integers_are_uniform(high):
    # Lemire's multiply-shift with rejection (3 << 30 rejects a quarter of the
    # draws, so the redraws are exercised): uniform on [0, high), by a
    # chi-square test against scipy, and MT19937 falls back to rng.integers
    from scipy import stats as sst

    for bits in (np.random.PCG64(5), np.random.MT19937(5)):
        x = rs.uniform_integers(np.random.Generator(bits), high, 60_000)
        assert x.dtype == np.int64 and x.shape == (60_000,)
        assert x.min() >= 0 and x.max() < high
        if high > 1:
            cells = min(high, 16)
            observed = np.bincount(x * cells // high, minlength=cells)
            assert sst.chisquare(observed).pvalue > 1e-3


def test_uniform_integers_repeat_with_the_same_generator_state():
    # the same seed gives the same draws (rejections included); another seed others
    draw = lambda seed: rs.uniform_integers(np.random.default_rng(seed), 3 << 30, 5_000)  # noqa: E731
    np.testing.assert_array_equal(draw(11), draw(11))
    assert not np.array_equal(draw(11), draw(12))
    assert rs.uniform_integers(np.random.default_rng(0), 3571, 0).shape == (0,)


@pytest.mark.parametrize("seed", range(4))
def test_wide_rows_group_and_order_as_numpy_unique(seed):
    # Wide sparse rows (many classes) with duplicates, negatives and
    # fractions: grouped and ordered exactly as np.unique(axis=0) does it,
    # by the nonzeros' keys instead of a sort over every column.
    rng = np.random.default_rng(seed)
    distinct = np.where(rng.random((40, 150)) < 0.03,
                        rng.choice([-2.0, -1.0, 0.5, 1.0, 2.0], (40, 150)), 0.0)
    rows = distinct[rng.integers(0, 40, 400)]
    uniq, inv = rs._unique_rows(rows)
    ref, ref_inv = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(uniq, ref)
    np.testing.assert_array_equal(inv, ref_inv.reshape(-1))
    np.testing.assert_array_equal(rs._lexicographic_order(ref[::-1]),
                                  np.arange(ref.shape[0])[::-1])


@pytest.mark.parametrize("name", ["macro-f1", "accuracy", "mean"])
def test_index_path_equals_brute_force_on_the_same_draws(name):
    # The index path draws what rng.integers(0, n, (b, n)) draws (Lemire's
    # 32-bit method, as numpy's, with no rejection at this n and seed) and
    # must give each resample's delta exactly as summing its items' rows.
    rng = np.random.default_rng(21)
    n, b = 300, 2000
    g = rng.integers(0, 7, n)
    a = np.where(rng.random(n) < 0.7, g, rng.integers(0, 7, n))
    p = np.where(rng.random(n) < 0.6, g, rng.integers(0, 7, n))
    if name == "mean":
        g, a, p = None, rng.random(n), rng.random(n)
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, g, a, p)
    got, path = rs.bootstrap_deltas(metric, types, b, np.random.default_rng(4), "index")
    idx = np.random.default_rng(4).integers(0, n, (b, n))
    counts = np.stack([np.bincount(types.item_type[i], minlength=types.n_types) for i in idx])
    want = metric.combine(counts @ types.stats_a) - metric.combine(counts @ types.stats_b)
    assert path == "index"
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_both_rows_side_by_side_with_or_without_a_copy():
    rng = np.random.default_rng(8)
    g = rng.integers(0, 30, 2000)
    types = rs.paired_types(rs.get_metric("macro-f1"), g, rng.integers(0, 30, 2000), g)
    want = np.hstack([types.stats_a, types.stats_b])
    np.testing.assert_array_equal(types.both(), want)
    swapped = rs.PairedTypes(types.stats_b, types.stats_a, types.counts, types.item_type)
    np.testing.assert_array_equal(swapped.both(), np.hstack([types.stats_b, types.stats_a]))
