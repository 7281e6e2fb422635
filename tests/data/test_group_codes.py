"""The design's counts by factorized codes equal pandas' groupby, and the mixed model's
coding by counting tables equals ``pd.factorize(sort=True)`` (random tables with
missing keys, ties, signed zeros, text and numbers)."""

import numpy as np
import pandas as pd
import pytest

from vareval.data import design
from vareval.data import variance as dv
from vareval.errors import DataError


def _tables(count=60):
    rng = np.random.default_rng(11)
    for trial in range(count):
        n = int(rng.integers(1, 80))
        df = pd.DataFrame({
            "seed": rng.integers(0, int(rng.integers(1, 8)), n).astype(float),
            "config": rng.choice(["a", "b", "c", "d", "e"], n),
            "method": rng.choice(["x", "y", "z"], n),
            "acc": rng.choice([0.5, 0.6, 0.0, -0.0, np.nan], n),
            "loss": rng.integers(0, 3, n),
        })  # fmt: skip
        if trial % 3 == 0:
            df.loc[rng.random(n) < 0.2, "seed"] = np.nan
        if trial % 4 == 0:
            df.loc[rng.random(n) < 0.2, "config"] = None
        if trial % 5 == 0:
            df["config"] = df["config"].astype("string")
        yield df


@pytest.mark.parametrize("cols", [["seed"], ["config"], ["method", "seed", "config"],
                                  ["seed", "config"]])
def test_group_counts_are_pandas_groupby(cols):
    for df in _tables():
        sizes = df.groupby(cols).size().to_numpy()
        ours = design._group_sizes(df, cols)
        np.testing.assert_array_equal(np.sort(ours), np.sort(sizes))
        if sizes.size:
            assert design._most_rows(df, cols) == sizes.max()
        spread = df.groupby(cols, sort=False)[["acc", "loss"]].nunique()
        assert design._cells_that_differ(df, cols, ["acc", "loss"]) == int(
            (spread > 1).any(axis=1).sum()
        )
        for outer in (["seed"], ["method"], ["seed", "method"]):
            expected = df.groupby(cols[0], sort=False)[outer].nunique().le(1).all(axis=None)
            assert design._nested_in(df, cols[0], outer) == bool(expected)


def test_sorted_codes_are_pd_factorize_sorted():
    rng = np.random.default_rng(12)
    for size in (1, 7, 300, 10**6):
        key = rng.integers(0, size, int(rng.integers(1, 500)))
        codes, uniq = dv._sorted_codes(key, size)
        ref_codes, ref_uniq = pd.factorize(key, sort=True)
        np.testing.assert_array_equal(codes, ref_codes)
        np.testing.assert_array_equal(uniq, ref_uniq)


def test_same_partition_is_the_unique_count_rule():
    rng = np.random.default_rng(13)
    for _ in range(500):
        n = int(rng.integers(1, 40))
        codes = pd.factorize(rng.integers(0, 6, n))[0]
        k = codes.max() + 1
        kind = rng.integers(0, 3)
        if kind == 0:  # a relabelling of codes
            g = rng.permutation(k)[codes]
        elif kind == 1:  # coarser or finer
            g = pd.factorize(rng.integers(0, 4, n))[0]
        else:
            g = rng.permutation(k)[codes]
            g[rng.random(n) < 0.2] = -1
        pairs = np.unique(g.astype(np.int64) * k + codes).size
        expected = bool(np.all(g >= 0) and pairs == k == np.unique(g).size)
        assert dv._same_partition(g, codes, k) == expected


@pytest.mark.parametrize("dtype", ["str", "string", "string[pyarrow]", "string[python]"])
def test_text_factor_is_pd_factorize_sorted(dtype):
    # a text factor coded in order of appearance and its levels sorted by
    # Python gives pandas' sorted coding (random labels: case, digits, accents,
    # non-BMP characters, prefixes of one another)
    rng = np.random.default_rng(13)
    alphabet = list("aAbB09_- .éÉzZ") + ["\U0001f600", "\u00df", "\u4e2d"]
    for _ in range(40):
        pool = ["".join(rng.choice(alphabet, int(rng.integers(0, 5)))) for _ in range(30)]
        s = pd.Series(rng.choice(pool, int(rng.integers(1, 200))), dtype=dtype)
        codes, levels = dv._factor(pd.DataFrame({"c": s}), "c", "random")
        ref_codes, ref_levels = pd.factorize(s, sort=True)
        np.testing.assert_array_equal(codes, ref_codes)
        assert levels == list(ref_levels)


@pytest.mark.parametrize("dtype", ["str", "string", object])
def test_missing_text_factor_names_its_rows(dtype):
    s = pd.Series(["a", None, "b", np.nan, "a"], dtype=dtype)
    rows = r"random column 'c' has missing values in data row\(s\) 2, 4;"
    with pytest.raises(DataError, match=rows):
        dv._factor(pd.DataFrame({"c": s}), "c", "random")
