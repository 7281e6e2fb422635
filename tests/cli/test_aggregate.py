import json

import pytest
from click.testing import CliRunner

from vareval import datasets
from vareval.cli import main

TASKS = str(datasets.path("sklearn_tasks.csv"))
ROLES = ["--metric", "accuracy", "--by", "method", "--task", "task"]


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_aggregate_prints_intervals_profile_and_improvement():
    out = run("aggregate", TASKS, *ROLES, "--pair-on", "seed", "--resamples", "300")
    assert out.exit_code == 0, out.output
    assert "5 tasks x 10 runs" in out.output and "IQM" in out.output
    assert "logreg > forest" in out.output and "simultaneous band" in out.output


def test_default_pairs_are_the_best_by_iqm_and_the_output_says_so():
    base = ["aggregate", TASKS, *ROLES, "--resamples", "100"]
    out = run(*base)
    assert out.exit_code == 0, out.output
    assert "the best method by IQM (logreg) against each other method" in out.output
    assert "forest > knn" not in out.output
    every = json.loads(run(*base, "--pairs", "all", "--json").output)
    assert len(every["improvement"]) == 6
    assert every["improvement_pairs"] == "P(X > Y): every pair of methods"
    vs = json.loads(run(*base, "--baseline", "knn", "--json").output)
    assert list(vs["improvement"]) == ["P(logreg > knn)", "P(forest > knn)", "P(naive_bayes > knn)"]
    bad = run(*base, "--baseline", "knn", "--pairs", "all")
    assert bad.exit_code == 2 and bad.output.startswith("error:") and "not both" in bad.output


def test_json_is_reproducible_with_the_seed():
    args = ["aggregate", TASKS, *ROLES, "--resamples", "200", "--pairs", "logreg:knn", "--json"]
    a, b = json.loads(run(*args).output), json.loads(run(*args).output)
    assert a == b
    assert list(a["improvement"]) == ["P(logreg > knn)"]
    assert len(a["intervals"]["estimate"]) == 4  # methods
    c = json.loads(run(*args, "--seed", "1").output)
    assert c["intervals"]["low"] != a["intervals"]["low"]


def test_reference_normalisation(tmp_path):
    ref = tmp_path / "ref.csv"
    rows = ["task,chance,perfect"] + [
        f"{t},{c},1"
        for t, c in [
            ("iris", 1 / 3),
            ("wine", 1 / 3),
            ("breast_cancer", 0.5),
            ("digits", 0.1),
            ("diabetes_binary", 0.5),
        ]
    ]
    args = ["aggregate", TASKS, *ROLES, "--reference", str(ref), "--reference-low", "chance",
            "--reference-high", "perfect", "--resamples", "100"]  # fmt: skip
    ref.write_text("\n".join(rows) + "\n")
    out = run(*args, "--json")
    assert out.exit_code == 0, out.output
    assert "chance = 0, perfect = 1" in json.loads(out.output)["title"]
    ref.write_text("\n".join(rows[:-1]) + "\n")
    out = run(*args)
    assert out.exit_code == 2
    assert out.output.startswith("error: reference table has no row for task(s) 'diabetes_binary'")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda df: df[~((df.method == "knn") & (df.task == "iris"))], "no runs on task 'iris'"),
        (lambda df: df.drop(index=5), "unequal runs per task"),
        (lambda df: df.assign(accuracy=df.accuracy.where(df.index != 7)), "missing or infinite"),
        (lambda df: df[df.task == "iris"], "no between-task variation"),
    ],
)
def test_bad_tables_are_one_line_and_exit_2(tmp_path, edit, message):
    df = datasets.load("sklearn_tasks.csv")
    path = tmp_path / "bad.csv"
    edit(df).to_csv(path, index=False)
    out = run("aggregate", str(path), *ROLES)
    assert out.exit_code == 2
    assert out.output.startswith("error: ") and message in out.output
    assert out.output.count("\n") == 1


def test_gamma_below_the_scores_is_refused():
    out = run("aggregate", TASKS, *ROLES, "--gamma", "0.1")
    assert out.exit_code == 2 and "--gamma 0.1 is below the scores' range" in out.output


def test_the_header_stands_apart_from_short_method_labels(tmp_path):

    table = datasets.load("sklearn_tasks.csv")
    short = {m: chr(97 + i) for i, m in enumerate(sorted(table["method"].unique()))}
    path = tmp_path / "short.csv"
    table.assign(method=table["method"].map(short)).to_csv(path, index=False)
    out = run("aggregate", str(path), *ROLES, "--resamples", "200")
    assert out.exit_code == 0, out.output
    rows = [line for line in out.output.splitlines() if line.startswith("method")]
    assert len(rows) == 2 and all(line.startswith("method ") for line in rows), rows
    assert not any(line.startswith(("methodmedian", "methodtau")) for line in out.output.split())


def test_the_band_has_width_where_resamples_do_not_vary():
    """At taus where every resample gives one fraction the band was 0.800 [0.800, 0.800]
    (a sup-t band has no width there); the band now has one half-width for the curve."""
    import numpy as np
    import pandas as pd

    import vareval

    out = run("aggregate", TASKS, *ROLES, "--resamples", "300")
    assert out.exit_code == 0, out.output
    assert "0.800 [0.800, 0.800]" not in out.output
    js = json.loads(run("aggregate", TASKS, *ROLES, "--resamples", "300", "--json").output)
    table = vareval.aggregate(pd.read_csv(TASKS), metric="accuracy", by="method", task="task",
                              n_resamples=300, rng=0)  # fmt: skip
    p = table["profile"]
    interior = (p.estimate > 0) & (p.estimate < 1)
    flat = (np.ptp(p.bootstrap_distribution, axis=0) == 0) & interior
    assert flat.any() and (p.band_high[flat] - p.band_low[flat] > 0.01).all()
    assert np.allclose(p.band_high, np.minimum(p.estimate + p.band_critical[:, None], 1))
    assert [r["band_high"] for r in js["profile"]] == pytest.approx(p.band_high.ravel().tolist())


def _one_run_table(tmp_path):
    import pandas as pd

    table = pd.read_csv(TASKS)
    path = tmp_path / "one_run.csv"
    table[table["seed"] == table["seed"].min()].to_csv(path, index=False)
    return str(path)


def test_one_run_per_task_is_refused_or_resamples_tasks(tmp_path):
    """One run per task printed `a 0.6100 [0.6100, 0.6100]` and exited 0."""
    import pandas as pd

    import vareval

    path = _one_run_table(tmp_path)
    out = run("aggregate", path, *ROLES, "--resamples", "100")
    assert out.exit_code == 2 and "one run per task" in out.output
    assert "--resample-tasks" in out.output and "Traceback" not in out.output
    with pytest.raises(vareval.errors.ArgumentError, match="one run per task"):
        vareval.aggregate(pd.read_csv(path), metric="accuracy", by="method", task="task")
    ok = run("aggregate", path, *ROLES, "--resamples", "200", "--resample-tasks", "--json")
    assert ok.exit_code == 0, ok.output
    rows = json.loads(ok.output)["intervals"]
    assert all(h > lo for lo, h in zip(rows["low"][0], rows["high"][0], strict=True))


def test_improvement_intervals_say_how_they_are_adjusted():
    """The best method is picked on the data: the intervals hold over every pair (6 here)."""
    import pandas as pd

    import vareval

    out = run("aggregate", TASKS, *ROLES, "--resamples", "100", "--json")
    js = json.loads(out.output)
    assert "simultaneously over 6 pairs" in js["improvement_adjustment"]
    table = vareval.aggregate(pd.read_csv(TASKS), metric="accuracy", by="method", task="task",
                              n_resamples=100, rng=0)  # fmt: skip
    assert table.notes[1] == js["improvement_adjustment"]
    for key, r in js["improvement"].items():
        assert r["family"] == 6 and table[key].low == pytest.approx(r["low"])
    text = run("aggregate", TASKS, *ROLES, "--resamples", "100").output
    assert "best method was picked on these data" in text
    named = json.loads(run("aggregate", TASKS, *ROLES, "--resamples", "100", "--pairs",
                           "logreg:knn", "--json").output)  # fmt: skip
    assert "not adjusted" in named["improvement_adjustment"]
    assert named["improvement"]["P(logreg > knn)"]["family"] == 1


def test_a_design_outside_the_measured_range_prints_the_band_caveat(tmp_path):
    import pandas as pd

    table = pd.read_csv(TASKS)
    path = tmp_path / "three.csv"
    table[table["seed"].isin(sorted(table["seed"].unique())[:2])].to_csv(path, index=False)
    out = run("aggregate", str(path), *ROLES, "--resamples", "100")
    assert out.exit_code == 0, out.output
    assert "Caution: with 5 tasks x 2 runs the band's whole-curve coverage is unknown" in out.output
    assert "Caution" not in run("aggregate", TASKS, *ROLES, "--resamples", "100").output
