import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, precision_recall_fscore_support
from statsmodels.stats.multitest import multipletests

import vareval
from vareval.data.significance import load_example, read_predictions
from vareval.errors import ArgumentError, DataError


@pytest.fixture
def example():
    return load_example()


def test_example_is_bundled_and_consistent(example):
    assert list(example.columns) == [
        "item",
        "gold",
        "logreg",
        "knn",
        "random_forest",
        "naive_bayes",
    ]
    assert len(example) == 899 and example["item"].is_unique
    assert set(example["gold"]) == set(range(10))


def test_significance_wide(example):
    rep = vareval.significance(
        example, gold="gold", item="item", metric="macro-f1", n_resamples=2000, rng=0
    )
    frame = rep.to_frame()
    assert frame["versus"].tolist() == ["logreg"] * 3
    assert frame["system"].tolist() == ["knn", "random_forest", "naive_bayes"]
    for _, row in frame.iterrows():
        ref = f1_score(example["gold"], example[row["system"]], average="macro")
        assert row["score"] == pytest.approx(ref)
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    np.testing.assert_allclose(
        frame["adjusted_pvalue"], multipletests(frame["pvalue"], method="holm")[1]
    )
    assert rep.scores_frame()["system"].tolist() == [
        "logreg",
        "knn",
        "random_forest",
        "naive_bayes",
    ]
    d = rep.to_dict()
    assert d["n_items"] == 899 and d["seed"] == 0 and len(d["results"]) == 3


def test_long_format_equals_wide(example):
    long = example.melt(id_vars=["item", "gold"], var_name="model", value_name="pred")
    long = long.sample(frac=1.0, random_state=0)  # row order must not matter
    kw = dict(gold="gold", item="item", metric="accuracy", n_resamples=500, rng=3)
    a = vareval.significance(
        long, system_column="model", prediction="pred", systems=["logreg", "knn"], **kw
    ).to_frame()
    b = vareval.significance(example, systems=["logreg", "knn"], **kw).to_frame()
    pd.testing.assert_frame_equal(a, b)


def test_metrics_frame_matches_sklearn(example):
    rep = vareval.metrics(
        example, gold="gold", item="item", systems=["knn", "naive_bayes"]
    )
    frame = rep.to_frame()
    nb = frame[frame["system"] == "naive_bayes"].iloc[:10]
    p, r, f, s = precision_recall_fscore_support(
        example["gold"], example["naive_bayes"]
    )
    np.testing.assert_allclose(
        nb[["precision", "recall", "fbeta"]].to_numpy(), np.c_[p, r, f]
    )
    np.testing.assert_array_equal(nb["support"], s)
    cm = rep.confusion_frame("knn")
    assert cm.to_numpy().sum() == 899 and cm.index.name == "gold"


def test_string_labels_and_label_only_in_predictions():
    df = pd.DataFrame(
        {
            "gold": ["cat", "dog", "cat", "bird", "dog", "cat"],
            "a": ["cat", "dog", "cat", "bird", "cat", "cat"],
            "b": ["cat", "fish", "dog", "bird", "dog", "fish"],  # 'fish' never in gold
        }
    )
    rep = vareval.metrics(df, gold="gold")
    assert "fish" in rep.systems["b"].labels
    fish = rep.systems["b"].labels.tolist().index("fish")
    assert rep.systems["b"].support[fish] == 0 and rep.systems["b"].predicted[fish] == 2
    sig = vareval.significance(
        df, gold="gold", metric="macro-f1", n_resamples=200, rng=0
    )
    assert sig.comparison.scores["b"] == pytest.approx(
        f1_score(df["gold"], df["b"], average="macro")
    )


def test_mean_of_scores_needs_no_gold():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"sys1": rng.random(50), "sys2": rng.random(50)})
    rep = vareval.significance(df, gold=None, metric="mean", n_resamples=300, rng=0)
    assert rep.to_frame()["estimate"].iloc[0] == pytest.approx(
        df.sys2.mean() - df.sys1.mean()
    )


@pytest.mark.parametrize(
    "kwargs, change, match",
    [
        ({"gold": "gold"}, lambda d: d.assign(a=[0, None, 1, 1]), "empty in data row"),
        (
            {"gold": "gold"},
            lambda d: d.assign(gold=[0, None, 1, 1]),
            "gold column 'gold'",
        ),
        ({"gold": "gould"}, None, "did you mean"),
        ({"gold": "gold", "systems": ["a", "c"]}, None, "system column 'c'"),
        ({"gold": "gold", "systems": ["a"]}, None, "at least two"),
        ({"gold": None}, None, "needs a gold column"),
        ({"gold": "gold", "metric": "f3x"}, None, "unknown"),
        ({"gold": "gold", "systems": ["a", "gold"]}, None, "gold column"),
        (
            {"gold": None, "metric": "mean"},
            lambda d: d.assign(a=[0.1, np.nan, 0.2, 0.3]),
            "missing or infinite",
        ),
        ({"gold": "gold", "item": "id", "system_column": "s"}, None, "all three"),
    ],
)
def test_bad_tables(kwargs, change, match):
    df = pd.DataFrame({"gold": [0, 1, 1, 0], "a": [0, 1, 0, 0], "b": [1, 1, 1, 0]})
    if change is not None:
        df = change(df)
    with pytest.raises((DataError, ArgumentError), match=match):
        vareval.significance(df, n_resamples=10, **kwargs)


def test_bad_long_tables():
    long = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3],
            "sys": ["a", "b", "a", "b", "a"],
            "pred": [0, 1, 1, 1, 0],
            "gold": [0, 0, 1, 1, 0],
        }
    )
    kw = dict(gold="gold", item="item", system_column="sys", prediction="pred")
    with pytest.raises(DataError, match="item '3' has no prediction from system"):
        read_predictions(long, **kw)
    dup = pd.concat([long, long.iloc[:1]], ignore_index=True)
    with pytest.raises(DataError, match="repeat"):
        read_predictions(dup, **kw)
    clash = long.iloc[:4].assign(gold=[0, 1, 1, 1])
    with pytest.raises(DataError, match="different labels for item '1'"):
        read_predictions(clash, **kw)
    with pytest.raises(DataError, match="system 'c' not found"):
        read_predictions(long.iloc[:4], systems=["a", "c"], **kw)
    wide = pd.DataFrame({"item": [1, 1], "gold": [0, 1], "a": [0, 1], "b": [1, 1]})
    with pytest.raises(DataError, match="repeats ids"):
        read_predictions(wide, gold="gold", item="item")


def test_int_label_columns_read_as_label_text():
    import numpy as np
    import pandas as pd

    from vareval.data.significance import _label_array
    from vareval.data.validate import label_text

    rng = np.random.default_rng(2)
    for dtype in ("int64", "int32", "uint8"):
        s = pd.Series(rng.integers(0, 120, 500).astype(dtype))
        if dtype == "int64":
            s.iloc[:3] = [-5, 2**62, 0]
        slow = label_text(s, "gold", "gold").to_numpy(dtype=object).astype(str)
        np.testing.assert_array_equal(_label_array(s, "gold", "gold"), slow)
