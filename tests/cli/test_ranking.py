"""The aso and rank commands: output, seeded JSON, and one-line errors for bad tables."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.datasets import load


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "tasks.csv"
    load("sklearn_tasks.csv").to_csv(path, index=False)
    return str(path)


def _write(tmp_path, frame):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_rank_reports_friedman_cd_and_pairs(tasks, tmp_path):
    plot = tmp_path / "cd.png"
    args = ["rank", tasks, "--metric", "accuracy", "--by", "method", "--task", "task"]
    out = run(*args, "--pair-on", "seed", "--rope", "0.01", "--plot", str(plot))
    assert out.exit_code == 0, out.output
    assert "Iman-Davenport" in out.output and "critical difference" in out.output
    assert "P(rope)" in out.output and plot.stat().st_size > 1000
    # the numbers are the statistics layer's on the task x method matrix of means
    df = load("sklearn_tasks.csv")
    df["accuracy"] = df["accuracy"].astype(float)  # written with trailing zeros: read as text
    means = df.groupby(["task", "method"], sort=False)["accuracy"].mean().unstack()
    from vareval.stats import rank_methods

    ref = rank_methods(means.to_numpy(), list(means.columns))
    data = json.loads(run(*args, "--json").stdout)
    assert data["ranking"]["friedman"]["pvalue"] == pytest.approx(ref.friedman.pvalue)
    assert data["ranking"]["critical_difference"] == pytest.approx(ref.critical_difference)


def test_rank_json_is_reproducible_with_seed(tasks):
    args = ["rank", tasks, "--metric", "accuracy", "--by", "method", "--task", "task"]
    args += ["--rope", "0.01", "--resamples", "2000", "--json"]
    one, two = run(*args, "--seed", "3"), run(*args, "--seed", "3")
    assert one.exit_code == 0 and one.output == two.output
    assert json.loads(one.stdout)["seed"] == 3


def test_aso_per_task_and_effect_sizes(tasks):
    args = ["aso", tasks, "--metric", "accuracy", "--by", "method", "--task", "task"]
    out = run(*args, "--resamples", "200")
    assert out.exit_code == 0, out.output
    assert "Holm over 60 ordered claims" in out.output
    assert "cohen_d" in out.output and "cliffs_delta" in out.output
    paired = run(*args, "--resamples", "200", "--pair-on", "seed", "--json")
    data = json.loads(paired.stdout)
    assert any(k.endswith("cohen_dz") for k in data["effect_sizes"])
    assert data["aso"]["iris"]["correction"] == "holm"


def test_aso_on_one_table(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "method": ["a"] * 8 + ["b"] * 6,
            "score": np.r_[rng.normal(1, 0.1, 8), rng.normal(0, 0.1, 6)],
        }
    )
    out = run("aso", _write(tmp_path, frame), "--metric", "score", "--by", "method")
    assert out.exit_code == 0, out.output
    assert "a better" in out.output


@pytest.mark.parametrize(
    ("edit", "command", "match"),
    [
        (lambda d: d[~((d.method == "knn") & (d.task == "iris"))], "rank", "has no runs on task"),
        (
            lambda d: d.assign(accuracy=d.accuracy.where(d.index != 5)),
            "rank",
            "missing or infinite",
        ),
        (lambda d: d[d.task == "iris"], "rank", "needs at least 2"),
        (lambda d: d[d.method == "knn"], "rank", "at least 2 methods"),
        (lambda d: d[d.method == "knn"], "aso", "at least two"),
        (lambda d: d.assign(accuracy=d.accuracy.where(d.index != 5)), "aso", "missing or infinite"),
        (lambda d: d[d.seed == 0], "aso", "at least 2 runs"),
    ],
)
def test_bad_tables_give_one_line_and_status_2(tmp_path, edit, command, match):
    path = _write(tmp_path, edit(load("sklearn_tasks.csv")))
    out = run(command, path, "--metric", "accuracy", "--by", "method", "--task", "task")
    assert out.exit_code == 2
    assert out.output.startswith("error: ") and match in out.output
    assert len(out.output.strip().splitlines()) == 1


def test_two_methods_lead_with_wilcoxon_and_infinite_f_says_so(tmp_path):
    """Two methods that agree on every task printed `F = inf, p < 1e-10` as the verdict."""
    import vareval

    rows = [{"task": f"t{t}", "method": m, "score": 0.5 + 0.01 * t + (0.1 if m == "a" else 0)}
            for t in range(6) for m in ("a", "b")]  # fmt: skip
    path = _write(tmp_path, pd.DataFrame(rows))
    out = run("rank", path, "--metric", "score", "--by", "method", "--task", "task")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[1].startswith("two methods: Wilcoxon signed-rank test over the 6 data sets")
    assert "p = 0.0312" in lines[1]  # scipy.stats.wilcoxon on six positive differences: 2/64
    assert "F approximation fails; exact permutation p = 0.0312" in out.output  # 2 / 2^6
    assert "F = inf" not in out.output and "<1e-10" not in out.output
    table = vareval.rank(pd.DataFrame(rows), metric="score", by="method", task="task")
    assert table["ranking"].friedman.exact_pvalue == pytest.approx(2 / 2**6)
