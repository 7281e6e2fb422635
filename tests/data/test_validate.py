import numpy as np
import pandas as pd
import pytest

from vareval.data import groups, metric_values, pairs, require_columns
from vareval.errors import DataError


def frame():
    return pd.DataFrame(
        {
            "method": ["A", "A", "A", "B", "B", "B"],
            "seed": [0, 1, 2, 0, 1, 2],
            "acc": [0.831, 0.847, 0.822, 0.818, 0.835, 0.809],
        }
    )


def test_missing_column_suggests_close_names():
    with pytest.raises(DataError, match="did you mean 'acc'"):
        require_columns(frame(), ["accc"], "metric")


def test_text_and_nan_metric_name_the_rows():
    df = frame().astype({"acc": object})
    df.loc[4, "acc"] = "oops"
    with pytest.raises(DataError, match=r"non-numeric .* row\(s\) 5 .*'oops'"):
        metric_values(df, "acc")
    df.loc[4, "acc"] = np.nan
    with pytest.raises(DataError, match=r"missing .* row\(s\) 5"):
        metric_values(df, "acc")


def test_groups_keep_every_row_in_order():
    g = groups(frame(), "acc", ["method"])
    assert list(g) == ["A", "B"]
    np.testing.assert_array_equal(g["A"], [0.831, 0.847, 0.822])


def test_groups_refuse_too_few_runs():
    with pytest.raises(DataError, match="'B' has 1 run"):
        groups(frame().iloc[:4], "acc", "method", min_runs=2)


def test_pairs_align_on_the_key_not_the_order():
    df = frame().iloc[[0, 1, 2, 5, 3, 4]]
    a, b, keys = pairs(df, "acc", "method", "seed", "A", "B")
    np.testing.assert_array_equal(b, [0.818, 0.835, 0.809])
    assert keys == ["0", "1", "2"]


def test_unmatched_and_duplicate_keys():
    with pytest.raises(DataError, match="keys only in 'A': 2"):
        pairs(frame().iloc[:5], "acc", "method", "seed", "A", "B")
    df = frame()
    df.loc[5, "seed"] = 1
    with pytest.raises(DataError, match="duplicate pairing key '1'"):
        pairs(df, "acc", "method", "seed", "A", "B")


def test_unknown_method_and_empty_labels():
    with pytest.raises(DataError, match="method 'C' not found"):
        pairs(frame(), "acc", "method", "seed", "A", "C")
    df = frame()
    df.loc[2, "method"] = None
    with pytest.raises(DataError, match=r"method column 'method' is empty in data row\(s\) 3"):
        groups(df, "acc", "method")
