"""``vareval evals table``: the models x benchmarks table, read back by aggregate and rank."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import vareval
from vareval.cli import main
from vareval.data.io import read_table


def run(*args):
    return CliRunner().invoke(main, list(args))


def _answers(path, seed=0):
    """3 models x 4 tasks x 30 questions (6 passages) x 2 epochs, 0/1 scores."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [["m1", "m2", "m3"], ["arc", "boolq", "gsm", "mmlu"], range(30), [1, 2]],
        names=["model", "task", "q", "epoch"],
    ).to_frame(index=False)
    skill = grid["model"].map({"m1": 0.55, "m2": 0.6, "m3": 0.62})
    grid["question"] = grid["task"] + "-" + grid["q"].astype(str)
    grid["passage"] = grid["task"] + "-p" + (grid["q"] // 5).astype(str)
    grid["correct"] = (rng.random(len(grid)) < skill).astype(float)
    grid.drop(columns="q").to_csv(path, index=False)
    return grid


def test_the_table_holds_each_tasks_scores_and_aggregate_and_rank_read_it(tmp_path):
    answers = _answers(tmp_path / "answers.csv")
    out = tmp_path / "table.csv"
    r = run("evals", "table", str(tmp_path / "answers.csv"), "--metric", "correct",
            "--cluster", "passage", "--sample", "epoch", "-o", str(out))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "wrote 12 rows (3 models x 4 tasks)" in r.stderr
    table = read_table(out)
    assert list(table.columns[:4]) == ["model", "task", "correct", "low"]
    for task, rows in answers.groupby("task"):
        with pytest.warns(vareval.errors.VarevalWarning, match="only 6 clusters"):
            want = vareval.eval_scores(rows, metric="correct", cluster="passage",
                                       sample="epoch").frame  # fmt: skip
        got = table[table["task"] == task].reset_index(drop=True)
        np.testing.assert_allclose(got[["correct", "low", "high", "se"]].astype(float),
                                   want[["score", "low", "high", "se"]], rtol=1e-12)  # fmt: skip
        assert got["clusters"].astype(int).tolist() == [6, 6, 6]

    means = answers.groupby(["task", "model"])["correct"].mean().unstack()  # tasks x models
    ranked = run("rank", str(out), "--metric", "correct", "--by", "model", "--task", "task",
                 "--json")  # fmt: skip
    assert ranked.exit_code == 0, ranked.output
    got = json.loads(ranked.stdout)["ranking"]
    ranks = stats.rankdata(-means.to_numpy(), axis=1).mean(axis=0)  # rank 1 = best
    np.testing.assert_allclose(got["mean_ranks"], ranks, rtol=1e-12)
    friedman = stats.friedmanchisquare(*means.to_numpy().T)
    assert got["friedman"]["statistic"] == pytest.approx(friedman.statistic, rel=1e-12)
    assert got["friedman"]["pvalue"] == pytest.approx(friedman.pvalue, rel=1e-12)

    agg = run("aggregate", str(out), "--metric", "correct", "--by", "model", "--task", "task",
              "--resample-tasks", "--resamples", "200", "--json")  # fmt: skip
    assert agg.exit_code == 0, agg.output
    mean_of = {m: means[m].mean() for m in means.columns}  # equal questions per task
    iv = json.loads(agg.stdout)["intervals"]
    col = iv["aggregates"].index("mean")
    got = {m: row[col] for m, row in zip(iv["methods"], iv["estimate"], strict=True)}
    assert got == pytest.approx(mean_of, rel=1e-12)


def test_a_table_without_a_task_column_is_one_line_naming_it(tmp_path):
    _answers(tmp_path / "answers.csv").drop(columns="task").to_csv(tmp_path / "a.csv")
    r = run("evals", "table", str(tmp_path / "a.csv"), "--metric", "correct")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("error: task column 'task' not found")
