import numpy as np
import pandas as pd
import pytest

import vareval
from vareval import datasets, stats
from vareval.errors import ArgumentError, DataError


@pytest.fixture(scope="module")
def runs():
    return datasets.load("sklearn_tasks.csv")


def test_dataframe_api_equals_the_array_api(runs):
    res = vareval.aggregate(runs, metric="accuracy", by="method", task="task", pair_on="seed",
                            n_resamples=100, improvement_resamples=50, rng=3)  # fmt: skip
    table = vareval.data.task_scores(runs, "accuracy", "method", "task", pair_on="seed")
    np.testing.assert_allclose(res["intervals"].estimate, stats.aggregate_scores(table.scores))
    assert res["intervals"].methods == ("logreg", "forest", "knn", "naive_bayes")
    # default: the best method by IQM against each other one, and the output says so
    best = res["intervals"].methods[int(np.argmax(stats.aggregate_scores(table.scores, ["iqm"])))]
    assert [k for k in res if k.startswith("P(")] == [
        f"P({best} > {m})" for m in res["intervals"].methods if m != best
    ]
    assert f"best method by IQM ({best})" in res.notes[0]
    frame = res.to_frame()
    assert frame.loc[("knn", "iqm"), "estimate"] == pytest.approx(
        stats.aggregate_scores(table.method("knn"), "iqm")[0]
    )


def test_pairs_all_and_baseline(runs):
    kw = dict(metric="accuracy", by="method", task="task", n_resamples=20,
              improvement_resamples=30, rng=3)  # fmt: skip
    every = vareval.aggregate(runs, pairs="all", **kw)
    assert len([k for k in every if k.startswith("P(")]) == 6
    assert every.notes[0] == "P(X > Y): every pair of methods"
    assert "simultaneously over 6 pairs" in every.notes[1]
    base = vareval.aggregate(runs, baseline="knn", **kw)
    assert [k for k in base if k.startswith("P(")] == [
        "P(logreg > knn)", "P(forest > knn)", "P(naive_bayes > knn)"
    ]
    # pair p uses stream 3 + p of the seed, as probability_of_improvement alone
    table = vareval.data.task_scores(runs, "accuracy", "method", "task")
    gen = np.random.default_rng(3).spawn(3 + 3)[3 + 1]
    alone = stats.probability_of_improvement(
        table.method("forest"), table.method("knn"), n_resamples=30, rng=gen
    )
    np.testing.assert_array_equal(
        base["P(forest > knn)"].bootstrap_distribution, alone.bootstrap_distribution
    )
    with pytest.raises(ArgumentError, match="not both"):
        vareval.aggregate(runs, pairs="all", baseline="knn", **kw)
    with pytest.raises(DataError, match="baseline 'svm' not found"):
        vareval.aggregate(runs, baseline="svm", **kw)


def test_normalisations(runs):
    mm = vareval.aggregate(runs, metric="accuracy", by="method", task="task", normalize="minmax",
                           n_resamples=50, pairs=[], rng=0)  # fmt: skip
    assert "min-max" in mm.title
    ref = pd.DataFrame({"task": pd.unique(runs.task), "lo": 0.5, "hi": 1.0})
    r = vareval.aggregate(runs, metric="accuracy", by="method", task="task", normalize="reference",
                          reference=ref, reference_low="lo", reference_high="hi",
                          n_resamples=50, pairs=[], rng=0)  # fmt: skip
    raw = vareval.aggregate(runs, metric="accuracy", by="method", task="task", aggregates=["mean"],
                            n_resamples=50, pairs=[], rng=0)  # fmt: skip
    j = r["intervals"].aggregates.index("mean")
    np.testing.assert_allclose(
        r["intervals"].estimate[:, j], (raw["intervals"].estimate[:, 0] - 0.5) / 0.5
    )
    with pytest.raises(ArgumentError, match="`normalize` must be one of"):
        vareval.aggregate(runs, metric="accuracy", by="method", task="task", normalize="zscore")
    with pytest.raises(ArgumentError, match="reference table goes with normalize='reference'"):
        vareval.aggregate(runs, metric="accuracy", by="method", task="task", reference=ref)


def test_pairs_are_checked(runs):
    with pytest.raises(DataError, match="method 'svm' not found"):
        vareval.aggregate(runs, metric="accuracy", by="method", task="task", pairs=[("svm", "knn")])
    with pytest.raises(ArgumentError, match="two different methods"):
        vareval.aggregate(runs, metric="accuracy", by="method", task="task", pairs=[("knn", "knn")])
