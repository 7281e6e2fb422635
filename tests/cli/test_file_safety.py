"""Nothing a user types destroys a file, and every refusal is one clear line.

The property test walks every command of ``vareval`` and, for each path
argument it finds, passes the bad places a user may type (an input as the
output, a folder, a read-only place, a named pipe, a missing folder). Each
must end with exit status 2, one ``error:`` line, no traceback, and every
file in the folder byte-identical, with none added. Run as root (as CI is),
permissions do not stop a write, so the read-only place is a path under
``/proc``, which the kernel refuses to anyone; a ``chmod 555`` folder is
tried as well where it binds (not as root).
"""

import hashlib
import os
import shutil
import sqlite3
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.cli._paths import OutputPath
from vareval.cli.datasets import bundled

HERE = Path(__file__).resolve().parents[1] / "experiment"

# A command line for every command that takes a path: the test replaces one
# path at a time, so these need only parse (the refusals come before any work).
BASE = {
    "summarize": ["runs.csv", "--metric", "accuracy", "--by", "method"],
    "best-of-k": ["runs.csv", "--metric", "accuracy", "--by", "method"],
    "paired": ["runs.csv", "--metric", "accuracy", "--by", "method", "--pair-on", "seed"],
    "plan": ["runs.csv", "--metric", "accuracy", "--by", "method", "--pair-on", "seed",
             "--target-se", "0.01", "--store", "runs.db"],
    "significance": ["preds.csv", "--gold", "gold", "--system", "logreg"],
    "metrics": ["preds.csv", "--gold", "gold", "--system", "logreg"],
    "tuning-curve": ["runs.csv", "--metric", "accuracy", "--by", "method", "--bounds", "0,1",
                     "--plot", "curve.png"],
    "variance": ["runs.csv", "--metric", "accuracy", "--random", "seed"],
    "aggregate": ["tasks.csv", "--metric", "accuracy", "--by", "method", "--task", "task",
                  "--reference", "ref.csv", "--reference-low", "low",
                  "--reference-high", "high"],
    "aso": ["runs.csv", "--metric", "accuracy", "--by", "method"],
    "rank": ["tasks.csv", "--metric", "accuracy", "--by", "method", "--task", "task",
             "--plot", "cd.png"],
    "run": ["experiment.toml", "--store", "new.db", "--engine", "serial", "--no-progress"],
    "status": ["runs.db"],
    "export": ["runs.db", "-o", "out.csv"],
    "replay": ["runs.db", "1"],
    "report": ["runs.csv", "--metric", "accuracy", "--by", "method", "-o", "report.html",
               "--search", "runs.csv", "--predictions", "preds.csv", "--gold", "gold",
               "--figures", "figures", "--evals", "runs.csv"],
    "import optuna": ["runs.db", "-o", "out.csv"],
    "import mlflow": ["runs.db", "-o", "out.csv"],
    "import wandb": ["runs.csv", "-o", "out.csv"],
    "import tensorboard": ["logs", "-o", "out.csv"],
    "sequential": ["runs.db", "--metric", "x", "--compare", "a,b"],
    "allocate": ["runs.db", "--metric", "x", "--compare", "a,b", "--extend", "more.toml"],
    "datasets copy": ["digits_runs.csv", "copies"],
    "select": ["runs.csv", "--validation", "accuracy", "--test", "accuracy", "--by", "method",
               "-o", "out.csv"],
    "selection-curve": ["runs.csv", "--validation", "accuracy", "--test", "accuracy",
                        "--by", "method"],
    "evals score": ["runs.csv", "--plot", "curve.png"],
    "evals compare": ["runs.csv", "--plot", "cd.png"],
    "evals pass-at-k": ["runs.csv", "-k", "1"],
    "evals plan": ["runs.csv", "--target-se", "0.01"],
    "evals import": ["runs.csv", "-o", "out.csv"],
    "evals table": ["runs.csv", "-o", "out.csv"],
    "parametric-curve": ["runs.csv", "--metric", "accuracy", "--by", "method", "--ks", "1,2",
                         "--plot", "curve.png"],
}

_FILES = {"runs.csv", "tasks.csv", "preds.csv", "ref.csv", "experiment.toml", "runs.db",
          "new.db", "out.csv", "curve.png", "cd.png", "report.html", "figures", "logs",
          "copies", "more.toml"}

# Inputs that are folders by design: a folder there is not a mistake.
FOLDER_INPUTS = {("import mlflow", "tracking"), ("import tensorboard", "logdir")}

_EXPERIMENT = textwrap.dedent(f"""
    [experiment]
    name = "safety"
    trial = "_trials:streams"
    path = {str(HERE)!r}
    seeds = 2
    entropy = 7

    [factors]
    model = ["a", "b"]

    [randomness]
    sources = ["init", "data_split"]
""")


def _commands(group=main, prefix=()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), cmd


def _path_params(cmd):
    """``(param, is_output)`` of every path a command takes (typed paths, positional names)."""
    for p in cmd.params:
        if isinstance(p.type, OutputPath):
            yield p, True
        elif isinstance(p.type, click.Path) or (
            isinstance(p, click.Argument) and p.type is click.STRING
        ):
            yield p, False


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder of real inputs: runs, tasks, predictions, an experiment and its store."""
    root = tmp_path_factory.mktemp("safety")
    files = bundled()
    shutil.copyfile(files["digits_runs.csv"], root / "runs.csv")
    shutil.copyfile(files["sklearn_tasks.csv"], root / "tasks.csv")
    shutil.copyfile(files["breast_cancer_predictions.csv"], root / "preds.csv")
    (root / "ref.csv").write_text("task,low,high\n")
    (root / "experiment.toml").write_text(_EXPERIMENT)
    (root / "logs").mkdir()
    (root / "copies").mkdir()
    result = CliRunner().invoke(
        main, ["run", str(root / "experiment.toml"), "--store", str(root / "runs.db"),
               "--engine", "serial", "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    return root


def _snapshot(root: Path) -> dict:
    """sha256 of every file; SQLite's own -wal/-shm files of a store read read-only aside."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name.endswith(("-wal", "-shm")):
            continue
        if p.is_fifo():
            out[str(p)] = "fifo"
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p)] = "dir"
    return out


def _bad_places(root: Path, is_output: bool, first_input: str):
    places = {"folder": str(root / "logs"), "fifo": str(root / "pipe"),
              "missing folder": str(root / "no" / "such" / "file.csv")}
    if is_output:
        places["an input"] = first_input
        places["/proc"] = "/proc/vareval-out.csv"
        if os.geteuid() != 0:
            places["read-only folder"] = str(root / "readonly" / "out.csv")
    return places


def _invoke(args):
    return CliRunner().invoke(main, args, catch_exceptions=True)


def _assert_one_line_refusal(result, what):
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        what, repr(result.exception))
    assert result.exit_code == 2, (what, result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], (what, lines)
    assert "Traceback" not in result.output, what


def _cases():
    for name, cmd in _commands():
        for param, is_output in _path_params(cmd):
            if name == "datasets copy" and param.name == "name":
                continue  # a bundled file's name, not a path
            yield pytest.param(name, param.name, is_output, id=f"{name}:{param.name}")


def test_every_command_with_a_path_has_a_command_line_here():
    named = {name for name, cmd in _commands() if any(_path_params(cmd))} - {"datasets list"}
    assert named <= set(BASE), sorted(named - set(BASE))


@pytest.mark.parametrize(("command", "param_name", "is_output"), list(_cases()))
def test_a_bad_path_is_one_line_and_changes_no_file(folder, command, param_name, is_output):
    cmd = dict(_commands())[command]
    param = next(p for p in cmd.params if p.name == param_name)
    base = [str(folder / a) if a in _FILES else a for a in BASE[command]]
    if isinstance(param, click.Argument):  # the base lines give arguments first
        index = [p for p in cmd.params if isinstance(p, click.Argument)].index(param)
    else:
        index = next(i for i, a in enumerate(BASE[command]) if a in param.opts) + 1
    inputs = [a for a in base if os.path.isfile(a)]
    first_input = inputs[0] if inputs else str(folder / "runs.csv")
    pipe = folder / "pipe"
    if not pipe.exists():
        os.mkfifo(pipe)
    readonly = folder / "readonly"
    readonly.mkdir(exist_ok=True)
    readonly.chmod(0o555)
    try:
        if (command, param_name) in FOLDER_INPUTS:
            places = {k: v for k, v in _bad_places(folder, is_output, first_input).items()
                      if k != "folder"}
        else:
            places = _bad_places(folder, is_output, first_input)
        if isinstance(param.type, OutputPath) and param.type.kind == "folder":
            places["an input"] = first_input  # a file where a folder is written
            places.pop("folder")  # a folder is what it takes
        for what, place in places.items():
            before = _snapshot(folder)
            args = command.split() + base[:index] + [place] + base[index + 1:]
            result = _invoke(args)
            _assert_one_line_refusal(result, f"{command} {param_name} = {what}: {args}")
            assert _snapshot(folder) == before, f"{command} {param_name} = {what} changed files"
            assert not Path("/proc/vareval-out.csv").exists()
    finally:
        readonly.chmod(0o755)


# -- the cases of the audit, one by one --------------------------------------------


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_export_onto_its_own_store_is_refused_by_any_path(folder):
    store = folder / "runs.db"
    digest = _sha(store)
    link = folder / "link.db"
    link.symlink_to(store)
    hard = folder / "hard.db"
    os.link(store, hard)
    try:
        for out in (store, link, hard, folder / "." / "runs.db"):
            _assert_one_line_refusal(_invoke(["export", str(store), "-o", str(out)]), str(out))
        _assert_one_line_refusal(_invoke(["export", str(link), "-o", str(store)]), "link")
        assert _sha(store) == digest
    finally:
        link.unlink()
        hard.unlink()


def test_a_table_is_never_written_over_a_database(folder, tmp_path):
    other = tmp_path / "other.db"
    shutil.copyfile(folder / "runs.db", other)
    digest = _sha(other)
    result = _invoke(["export", str(folder / "runs.db"), "-o", str(other)])
    _assert_one_line_refusal(result, "database")
    assert "database" in result.stderr and _sha(other) == digest


def test_report_does_not_create_folders(folder, tmp_path):
    out = tmp_path / "no" / "folder" / "r.html"
    result = _invoke(["report", str(folder / "runs.csv"), "--metric", "accuracy", "--by",
                      "method", "-o", str(out)])
    _assert_one_line_refusal(result, "report")
    assert not (tmp_path / "no").exists()


def test_a_plot_whose_write_fails_fails(folder):
    result = _invoke(["rank", str(folder / "tasks.csv"), "--metric", "accuracy", "--by",
                      "method", "--task", "task", "--plot", "/dev/full"])
    _assert_one_line_refusal(result, "/dev/full")
    assert "No space left" in result.stderr


def test_datasets_copy_into_a_place_the_kernel_refuses(tmp_path):
    _assert_one_line_refusal(_invoke(["datasets", "copy", "digits_runs.csv", "/proc"]), "proc")


@pytest.mark.parametrize("size", ["1000000000000", "100000000000"])
def test_resamples_beyond_the_cap_are_refused_with_the_size(folder, size):
    for args in (
        ["aggregate", str(folder / "tasks.csv"), "--metric", "accuracy", "--by", "method",
         "--task", "task"],
        ["rank", str(folder / "tasks.csv"), "--metric", "accuracy", "--by", "method",
         "--task", "task", "--rope", "0.01"],
        ["paired", str(folder / "runs.csv"), "--metric", "accuracy", "--by", "method",
         "--pair-on", "seed"],
    ):
        result = _invoke([*args, "--resamples", size])
        _assert_one_line_refusal(result, args[0])
        assert "too large" in result.stderr and "B of results" in result.stderr


def test_aggregate_refuses_what_memory_cannot_hold_before_it_starts():
    import numpy as np

    from vareval.errors import ArgumentError
    from vareval.stats.tasks.aggregate import interval_estimates

    scores = np.random.default_rng(0).random((400, 5, 3))  # 400 methods x 4 aggregates
    with pytest.raises(ArgumentError, match="GB of results in memory"):
        interval_estimates(scores, n_resamples=50_000_000)


def _optuna_study(path):
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=f"sqlite:///{path}", study_name="s")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)


def test_import_optuna_reads_and_never_creates_or_migrates(tmp_path):
    pytest.importorskip("optuna")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    text = tmp_path / "text.db"
    text.write_text("hello\nworld\n")
    journal = tmp_path / "journal.log"
    journal.write_text('{"op_code": \n{not json}\n')
    for arg in (str(empty), str(text), str(journal), f"sqlite:///{tmp_path / 'missing.db'}"):
        digests = {p: _sha(p) for p in (empty, text, journal)}
        _assert_one_line_refusal(_invoke(["import", "optuna", arg]), arg)
        assert {p: _sha(p) for p in digests} == digests
    assert not (tmp_path / "missing.db").exists()
    assert empty.stat().st_size == 0
    real = tmp_path / "real.db"
    _optuna_study(real)
    digest = _sha(real)
    for arg in (str(real), f"sqlite:///{real}"):
        result = _invoke(["import", "optuna", arg])
        assert result.exit_code == 0 and len(result.stdout.splitlines()) == 4, result.output
    assert _sha(real) == digest
    con = sqlite3.connect(f"file:{real}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM trials").fetchone() == (3,)
    con.close()


def test_aggregate_with_one_run_per_task(folder, tmp_path):
    lines = (folder / "tasks.csv").read_text().splitlines()
    one = tmp_path / "one.csv"
    one.write_text("\n".join([lines[0], *[r for r in lines[1:] if r.split(",")[2] == "0"]]))
    args = ["aggregate", str(one), "--metric", "accuracy", "--by", "method", "--task", "task"]
    refused = _invoke(args)  # one run per task: a zero-width interval unless tasks are resampled
    _assert_one_line_refusal(refused, "one run per task")
    assert "--resample-tasks" in refused.stderr
    assert _invoke([*args, "--resample-tasks"]).exit_code == 0
    result = _invoke([*args, "--ci-method", "bca"])
    _assert_one_line_refusal(result, "bca")
    assert "at least 2 runs per task" in result.stderr


def _identical(tmp_path):
    rows = ["task,method,seed,acc"] + [
        f"t{t},{m},{s},0.5" for t in range(3) for m in "ab" for s in range(3)
    ]
    path = tmp_path / "same.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_identical_scores_keep_their_answers(tmp_path):
    path = _identical(tmp_path)
    agg = _invoke(["aggregate", str(path), "--metric", "acc", "--by", "method", "--task", "task"])
    assert agg.exit_code == 0 and "--taus" not in agg.stderr, agg.output
    aso = _invoke(["aso", str(path), "--metric", "acc", "--by", "method"])
    assert aso.exit_code == 0, aso.output
    assert "no order" in aso.stdout and "cliffs_delta" in aso.stdout
    assert "do not overlap" not in aso.stderr and "are all equal" in aso.stderr
    assert "Cohen's d and Hedges' g are left out" in aso.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["tuning-curve", "runs.csv", "--metric", "accuracy", "--by", "method",
          "--bounds", "1,0"], "got 1 and 0."),
        (["tuning-curve", "runs.csv", "--metric", "accuracy", "--by", "method",
          "--bounds", "0,1", "--ks", "0,1"], "--ks must be finite numbers > 0; got 0."),
        (["metrics", "preds.csv", "--gold", "gold", "--item", "item"],
         "name the systems (--system)."),
    ],
)
def test_error_texts_name_what_the_user_typed(folder, args, expected):
    args = [str(folder / a) if a.endswith(".csv") else a for a in args]
    result = _invoke(args)
    _assert_one_line_refusal(result, args)
    assert result.stderr.strip().endswith(expected), result.stderr


def test_python_errors_say_what_is_accepted():
    import numpy as np
    import pandas as pd

    import vareval
    from vareval.errors import ArgumentError, ResultKeyError
    from vareval.stats.tasks.aggregate import normalize_scores

    scores = np.random.default_rng(1).random((2, 4, 3))
    low, high = np.zeros(4), np.ones(4)
    stacked = normalize_scores(scores, np.stack([low, high], 1))
    np.testing.assert_allclose(stacked, normalize_scores(scores, (low, high)))
    with pytest.raises(ArgumentError, match="shape \\(2, 4\\)"):
        normalize_scores(scores, np.zeros((3, 3)))
    df = pd.read_csv(bundled()["sklearn_tasks.csv"], dtype={"seed": str})
    table = vareval.aggregate(df, metric="accuracy", by="method", task="task", n_resamples=200)
    with pytest.raises(ResultKeyError, match="label order; take 1 - table\\['P\\(logreg > knn"):
        table["P(knn > logreg)"]
    with pytest.raises(KeyError, match="the entries are: 'intervals'"):
        table["nope"]
