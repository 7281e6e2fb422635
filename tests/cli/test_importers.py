"""vareval import, standard input, --where and --dropna through the command."""

import io
import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main

RUNS = (
    "method,seed,acc\nA,0,0.831\nA,1,0.847\nA,2,0.822\nA,3,nan\n"
    "B,0,0.818\nB,1,0.835\nB,2,0.809\nB,3,0.9\n"
)


def run(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_stdin_in_every_format():
    df = pd.read_csv(io.StringIO(RUNS)).dropna()
    for text in (df.to_csv(index=False), df.to_csv(index=False, sep="\t"),
                 df.to_json(orient="records", lines=True)):
        out = run("summarize", "-", "--metric", "acc", "--by", "method", "--json", stdin=text)
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["A"]["n"] == 3


def test_nan_is_an_error_unless_dropped_and_the_drop_is_named(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(RUNS)
    roles = ("--metric", "acc", "--by", "method", "--pair-on", "seed")
    out = run("paired", str(path), *roles)
    assert out.exit_code == 2 and "missing or infinite" in out.output
    out = run("summarize", str(path), "--metric", "acc", "--by", "method", "--dropna", "--json")
    assert out.exit_code == 0, out.output
    assert "warning: --dropna: dropped 1 of 8 rows" in out.stderr and "data rows 4" in out.stderr
    assert json.loads(out.stdout)["A"]["n"] == 3 and json.loads(out.stdout)["B"]["n"] == 4


def test_where_filters_rows_and_bad_expressions_are_one_line(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(RUNS)
    out = run("paired", str(path), "--metric", "acc", "--by", "method", "--pair-on", "seed",
              "--where", "acc < 0.89", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["A - B"]["k"] == 3
    for expr, message in (("acc <", "could not be evaluated"), ("acc > 99", "keeps no row")):
        out = run("summarize", str(path), "--metric", "acc", "--by", "method", "--where", expr)
        assert out.exit_code == 2 and out.output.startswith("error: --where")
        assert message in out.output
        assert "Traceback" not in out.output


def test_import_pipes_into_an_analysis(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    for seed in range(3):
        with tbx.SummaryWriter(str(tmp_path / "logs" / f"seed{seed}")) as w:
            for step in range(10):
                w.add_scalar("acc", 0.5 + step / 100 + seed / 1000, step)
    out = run("import", "tensorboard", str(tmp_path / "logs"), "--final")
    assert out.exit_code == 0, out.output
    table = pd.read_csv(io.StringIO(out.output))
    assert table["acc"].round(4).tolist() == [0.59, 0.591, 0.592]
    # the real command in a pipe, as a user types it
    code = ("from vareval.cli import main; import sys; sys.argv = ['vareval'] + sys.argv[1:]; "
            "main()")
    imported = subprocess.run([sys.executable, "-c", code, "import", "tensorboard",
                               str(tmp_path / "logs")], capture_output=True, check=True)
    summary = subprocess.run([sys.executable, "-c", code, "summarize", "-", "--metric", "value",
                              "--by", "run", "--json"], input=imported.stdout,
                             capture_output=True, check=True)
    assert json.loads(summary.stdout)["seed1"]["n"] == 10
    out = run("import", "tensorboard", str(tmp_path / "logs"), "-o", str(tmp_path / "c.parquet"))
    assert out.exit_code == 0 and len(pd.read_parquet(tmp_path / "c.parquet")) == 30


def test_import_errors_are_one_line(tmp_path):
    out = run("import", "mlflow", str(tmp_path / "nothing"))
    assert out.exit_code == 2 and out.output.startswith("error: MLflow store")
    (tmp_path / "logs").mkdir()
    out = run("import", "tensorboard", str(tmp_path / "logs"))
    assert out.exit_code == 2 and "no TensorBoard event files" in out.output
    out = run("import", "optuna", str(tmp_path / "none.db"))
    assert out.exit_code == 2 and out.output.count("\n") == 1


def test_an_optuna_import_feeds_summarize_with_its_pruned_and_failed_trials(tmp_path):
    """The importer's `pruned` is a status every analysis reads, counted like `failed`."""
    import math

    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    study = optuna.create_study(study_name="svc", storage=url,
                                sampler=optuna.samplers.RandomSampler(seed=0))  # fmt: skip

    def objective(trial):
        c = trial.suggest_float("C", 1e-3, 1e3, log=True)
        if trial.number == 7:
            raise RuntimeError("diverged")
        if trial.number == 9:
            raise optuna.TrialPruned()
        return math.log(c)

    study.optimize(objective, n_trials=12, catch=(RuntimeError,))
    imported = run("import", "optuna", str(tmp_path / "optuna.db"), "--study", "svc")
    assert imported.exit_code == 0, imported.output
    args = ["summarize", "-", "--metric", "value", "--by", "experiment"]
    text, js = run(*args, stdin=imported.stdout), run(*args, "--json", stdin=imported.stdout)
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    runs = json.loads(js.stdout)["svc"]["runs"]
    assert (runs["planned"], runs["done"], runs["failed"], runs["pruned"]) == (12, 10, 1, 1)
    assert "1 of 12 runs were pruned (stopped early)" in text.output
    header = next(line for line in text.output.splitlines() if line.startswith("runs:"))
    assert "pruned" in header  # the runs table has the column
    from vareval.data.runs import count_runs

    counts, usable = count_runs(pd.read_csv(io.StringIO(imported.stdout)), "value", "experiment")
    assert counts["svc"].pruned == 1 and counts["svc"].not_run == 0 and usable.sum() == 10


def test_a_failed_run_is_named_as_such(tmp_path):
    """A failed MLflow-style run (status failed, empty metric) in paired's input."""
    from vareval.data.validate import metric_values
    from vareval.errors import DataError

    path = tmp_path / "runs.csv"
    path.write_text("run,status,model,seed,acc\n1,done,A,0,0.8\n2,done,A,1,0.82\n"
                    "3,done,B,0,0.78\n4,failed,B,1,\n5,done,A,2,0.81\n6,done,B,2,0.8\n")
    out = run("paired", str(path), "--metric", "acc", "--by", "model", "--pair-on", "seed",
              "--compare", "A,B")  # fmt: skip
    # paired analyses the finished runs (as a store is read): B's failed seed leaves A's unpaired
    assert out.exit_code == 2
    assert "unmatched pairs: keys only in 'A': 1" in out.output
    with pytest.raises(DataError, match=r"row\(s\) 4 \(status failed"):
        metric_values(pd.read_csv(path), "acc")
