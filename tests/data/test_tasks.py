import numpy as np
import pandas as pd
import pytest

from vareval.data.tasks import reference_scores, task_scores
from vareval.errors import DataError


def frame(n_runs=3):
    rows = [
        {"method": m, "task": t, "seed": s, "score": 10 * i + j + s / 10}
        for i, m in enumerate(["A", "B"])
        for j, t in enumerate(["t1", "t2", "t3"])
        for s in range(n_runs)
    ]
    return pd.DataFrame(rows)


def test_array_layout_and_labels():
    table = task_scores(frame(), "score", "method", "task")
    assert table.scores.shape == (2, 3, 3)
    assert table.methods == ("A", "B") and table.tasks == ("t1", "t2", "t3")
    assert table.runs is None
    np.testing.assert_allclose(table.scores[1, 2], [12.0, 12.1, 12.2])
    np.testing.assert_allclose(table.to_rliable()["A"][:, 1], [1.0, 1.1, 1.2])


def test_pairing_orders_runs_by_key_not_row_order():
    df = frame().sample(frac=1, random_state=3)
    table = task_scores(df, "score", "method", "task", pair_on="seed")
    order = [table.runs.index(str(s)) for s in range(3)]
    np.testing.assert_allclose(table.method("A")[table.tasks.index("t1"), order], [0, 0.1, 0.2])


def test_task_missing_for_one_method():
    df = frame().query("not (method == 'B' and task == 't2')")
    with pytest.raises(DataError, match="method 'B' has no runs on task 't2'"):
        task_scores(df, "score", "method", "task")


def test_unequal_runs_are_refused():
    df = frame().drop(index=4)
    with pytest.raises(DataError, match="unequal runs per task: method 'A' has 2 run"):
        task_scores(df, "score", "method", "task")
    with pytest.raises(DataError, match="'A' on task 't2' lacks run key\\(s\\) '1'"):
        task_scores(df, "score", "method", "task", pair_on="seed")


def test_duplicate_run_key():
    df = frame()
    df.loc[1, "seed"] = 0
    with pytest.raises(DataError, match="run key '0' appears more than once"):
        task_scores(df, "score", "method", "task", pair_on="seed")


def test_nan_score_names_the_row():
    df = frame()
    df.loc[5, "score"] = np.nan
    with pytest.raises(DataError, match=r"missing .* row\(s\) 6"):
        task_scores(df, "score", "method", "task")


def test_one_task_says_what_cannot_be_estimated():
    df = frame().query("task == 't1'")
    with pytest.raises(DataError, match="1 task.*no between-task variation"):
        task_scores(df, "score", "method", "task")
    assert task_scores(df, "score", "method", "task", min_tasks=1).scores.shape == (2, 1, 3)


def test_reference_table_aligned_and_complete():
    ref = pd.DataFrame({"task": ["t3", "t1", "t2"], "random": [3, 1, 2], "human": [30, 10, 20]})
    low, high = reference_scores(ref, ("t1", "t2", "t3"), task="task", low="random", high="human")
    np.testing.assert_array_equal(low, [1, 2, 3])
    np.testing.assert_array_equal(high, [10, 20, 30])
    with pytest.raises(DataError, match="no row for task\\(s\\) 't2'"):
        reference_scores(ref.iloc[[0, 1]], ("t1", "t2", "t3"), task="task", low="random", high="x")
