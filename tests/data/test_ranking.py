"""vareval.aso, vareval.effect_sizes and vareval.rank on long results tables."""

import numpy as np
import pandas as pd
import pytest

import vareval
from vareval import stats
from vareval.datasets import load
from vareval.errors import DataError


@pytest.fixture
def table():
    df = load("sklearn_tasks.csv")  # scores written with trailing zeros stay text when read
    return df.assign(accuracy=vareval.data.metric_values(df, "accuracy"))


def test_rank_uses_the_task_by_method_means(table):
    r = vareval.rank(table, metric="accuracy", by="method", task="task", pair_on="seed")["ranking"]
    means = table.groupby(["task", "method"], sort=False)["accuracy"].mean().unstack()
    ref = stats.rank_methods(means[list(r.names)].to_numpy(), r.names)
    assert np.allclose(r.mean_ranks, ref.mean_ranks)
    assert r.friedman.statistic == pytest.approx(ref.friedman.statistic)
    loss = table.assign(error=1 - table.accuracy)  # ties survive the rounding of 1 - x
    flipped = vareval.rank(
        loss, metric="error", by="method", task="task", higher_is_better=False
    )["ranking"]
    assert np.allclose(flipped.mean_ranks, r.mean_ranks)


def test_paired_effect_sizes_align_runs_by_key(table):
    iris = table[table.task == "iris"]
    shuffled = iris.sample(frac=1, random_state=0)
    out = vareval.effect_sizes(shuffled, metric="accuracy", by="method", pair_on="seed")
    a = iris[iris.method == "logreg"].sort_values("seed").accuracy.to_numpy()
    b = iris[iris.method == "knn"].sort_values("seed").accuracy.to_numpy()
    expect = stats.cohens_d(a, b, paired=True).estimate
    if "logreg vs knn: cohen_dz" in out.results:
        assert out["logreg vs knn: cohen_dz"].estimate == pytest.approx(expect)
    else:  # methods in order of first appearance in the shuffled table
        assert out["knn vs logreg: cohen_dz"].estimate == pytest.approx(-expect)


def test_aso_lower_is_better_negates(table):
    digits = table[table.task == "digits"]
    up = vareval.aso(digits, metric="accuracy", by="method", rng=1)[""]
    down = vareval.aso(
        digits.assign(err=-digits.accuracy), metric="err", by="method",
        higher_is_better=False, rng=1,
    )[""]
    assert np.allclose(up.violation_ratio, down.violation_ratio, equal_nan=True)
    frame = vareval.aso(digits, metric="accuracy", by="method", rng=1).to_frame()
    assert len(frame) == 12 and frame.index.names == ["method", "versus"]


def test_unmatched_pairing_keys_are_refused(table):
    broken = table.drop(index=table[(table.method == "knn") & (table.seed == 3)].index[:1])
    with pytest.raises(DataError):
        vareval.aso(broken, metric="accuracy", by="method", task="task", pair_on="seed")
    with pytest.raises(DataError, match="task"):
        vareval.rank(
            pd.DataFrame({"m": ["a", "b"], "t": ["x", "x"], "s": [1.0, 2.0]}),
            metric="s", by="m", task="t",
        )
