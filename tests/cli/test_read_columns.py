"""Every results command reads only the columns it uses.

A table with extra columns (free text, labels that are no numbers, cells no
parser would take as numbers) gives the same answer as the table without
them, and the extra columns are never read: the command's table holds the
flags' columns, the design's and those --where names, so a wide file costs
what the used columns cost.
"""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data import io

RUNS = ["--metric", "accuracy", "--by", "method"]
PAIRED = [*RUNS, "--pair-on", "seed"]
TASKS = [*RUNS, "--task", "task", "--pair-on", "seed"]
CHOICE = ["--validation", "validation", "--test", "test", "--by", "method"]
COMMANDS = {  # command: (its flags, the columns of the narrow table)
    "summarize": (RUNS, ["method", "seed", "accuracy"]),
    "paired": ([*PAIRED, "--compare", "a,b"], ["method", "seed", "accuracy"]),
    "plan": ([*PAIRED, "--compare", "a,b", "--effect", "0.01"], ["method", "seed", "accuracy"]),
    "best-of-k": ([*RUNS, "--resamples", "200"], ["method", "seed", "accuracy"]),
    "tuning-curve": ([*RUNS, "--bounds", "0,1"], ["method", "accuracy"]),
    "parametric-curve": ([*RUNS, "--ks", "1,5", "--resamples", "10", "--bounds", "0,1"],
                         ["method", "accuracy"]),
    "sequential": ([*PAIRED, "--compare", "a,b", "--bounds", "0,1"],
                   ["method", "seed", "accuracy"]),
    "aggregate": ([*TASKS, "--resamples", "200"], ["method", "seed", "task", "accuracy"]),
    "rank": ([*TASKS, "--resamples", "200"], ["method", "seed", "task", "accuracy"]),
    "aso": ([*TASKS, "--resamples", "100"], ["method", "seed", "task", "accuracy"]),
    "select": ([*CHOICE, "--unit", "seed", "--config", "config"],
               ["method", "seed", "config", "validation", "test"]),
    "selection-curve": ([*CHOICE, "--ks", "1,2"], ["method", "config", "validation", "test"]),
    "variance": (["--metric", "accuracy", "--fixed", "method", "--random", "seed,config"],
                 ["method", "seed", "config", "accuracy"]),
    "variance --by-group": (["--metric", "accuracy", "--fixed", "method,task", "--random",
                             "seed,config", "--nested", "config:seed", "--by-group",
                             "seed=method", "--pairs-by", "method"],
                            ["method", "task", "seed", "config", "accuracy"]),
}  # fmt: skip


def _table(rng):
    """Three methods x 3 tasks x 8 seeds x 4 configurations, and junk columns."""
    method, task, seed, config = (a.ravel() for a in np.indices((3, 3, 8, 4)))
    n = method.size
    score = 0.7 + 0.02 * method + 0.05 * task + rng.normal(0, 0.02, n)
    return pd.DataFrame({
        "method": np.array(["a", "b", "c"])[method], "task": np.char.add("t", task.astype(str)),
        "seed": seed, "config": config, "accuracy": score.round(4),
        "validation": (score + rng.normal(0, 0.01, n)).round(4), "test": score.round(4),
        "notes": rng.choice(["free text, with a comma", "NA", "", "=1+1", "\u00e9t\u00e9"], n),
        "labels": rng.choice(["1.10", "01", "1e999", "nan", "0x1F"], n),
        "wide": ["x" * 200] * n,
    })  # fmt: skip


def _spy_reads(monkeypatch):
    """The columns of every table ``io.read_table`` returns from now on, in order."""
    seen = []
    original = io.read_table

    def spy(*args, **kwargs):
        df = original(*args, **kwargs)
        seen.append(list(df.columns))
        return df

    monkeypatch.setattr(io, "read_table", spy)
    return seen


def _answer(path, command, flags, monkeypatch):
    seen = _spy_reads(monkeypatch)
    result = CliRunner().invoke(main, [command, str(path), *flags, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), seen[0]


@pytest.mark.parametrize("command", [
    pytest.param(c, marks=pytest.mark.slow) if c == "parametric-curve" else c for c in COMMANDS
])  # fmt: skip
def test_extra_columns_are_not_read_and_change_nothing(tmp_path, monkeypatch, command):
    flags, narrow_columns = COMMANDS[command]
    table = _table(np.random.default_rng(3))
    if command.startswith("variance"):  # every configuration: a random factor
        table = table[table.task != "t2"] if " " in command else table[table.task == "t0"]
    command = command.split()[0]
    if command in ("summarize", "paired", "plan", "best-of-k", "sequential"):
        table = table[(table.task == "t0") & (table.config == 0)]
    elif command in ("tuning-curve", "parametric-curve", "aggregate", "rank", "aso"):
        table = table[table.config == 0] if command != "tuning-curve" else table
    narrow, wide = tmp_path / "narrow.csv", tmp_path / "wide.csv"
    design = [c for c in ("seed", "config") if c not in narrow_columns]  # read by every command
    table[[*narrow_columns, *design]].to_csv(narrow, index=False)
    table.to_csv(wide, index=False)
    expected, _ = _answer(narrow, command, flags, monkeypatch)
    got, read = _answer(wide, command, flags, monkeypatch)
    assert got == expected
    assert not {"notes", "labels", "wide"} & set(read), read
    assert set(read) <= set(table.columns) - {"notes", "labels", "wide"}


def test_where_reads_the_columns_it_names(tmp_path, monkeypatch):
    """--where may name any column: the ones it names are read, the others are not."""
    table = _table(np.random.default_rng(4))
    table = table[(table.task == "t0") & (table.config == 0)]
    path = tmp_path / "wide.csv"
    table.to_csv(path, index=False)
    flags = [*RUNS, "--where", "labels != '01'"]
    got, read = _answer(path, "summarize", flags, monkeypatch)
    assert "labels" in read and "notes" not in read and "wide" not in read
    kept = table[table["labels"].astype(str) != "01"]
    path2 = tmp_path / "kept.csv"
    kept[["method", "seed", "accuracy"]].to_csv(path2, index=False)
    expected, _ = _answer(path2, "summarize", RUNS, monkeypatch)
    assert got == expected


@pytest.mark.parametrize("args", [["summarize", "--metric", "acc", "--by", "method"],
                                  ["variance", "--metric", "accuracy", "--fixed", "method",
                                   "--random", "seed,config", "--nested", "config:acc"]])
def test_a_flag_column_missing_reads_everything_so_the_error_lists_the_columns(tmp_path, args):
    table = _table(np.random.default_rng(5))
    path = tmp_path / "wide.csv"
    table.to_csv(path, index=False)
    result = CliRunner().invoke(main, [args[0], str(path), *args[1:]])
    assert result.exit_code == 2
    assert "acc" in result.output and "notes" in result.output


def test_allocate_reads_the_design_and_the_metric_only(tmp_path, monkeypatch):
    """allocate's pilot: the store's design columns, the metric and the trials' duration
    (for a budget in time); the same plan as from the table without the extra columns."""
    rng = np.random.default_rng(6)
    exp, seed, config, rerun = (a.ravel() for a in np.indices((2, 8, 3, 2)))
    n = exp.size
    table = pd.DataFrame({
        "trial_id": np.arange(n), "experiment": np.array(["a", "b"])[exp], "seed": seed,
        "config": [f"s{s}_c{c}" for s, c in zip(seed, config, strict=True)],
        "config_index": config, "rerun": rerun,
        "accuracy": (0.8 + 0.01 * exp + rng.normal(0, 0.01, 8)[seed]
                     + rng.normal(0, 0.02, n)).round(4),
        "duration": rng.uniform(50, 70, n).round(2),
        "notes": rng.choice(["free text, with a comma", "NA", "", "=1+1"], n),
        "labels": rng.choice(["1.10", "01", "1e999", "nan", "0x1F"], n),
    })  # fmt: skip
    narrow, wide = tmp_path / "narrow.csv", tmp_path / "wide.csv"
    table.drop(columns=["notes", "labels"]).to_csv(narrow, index=False)
    table.to_csv(wide, index=False)
    flags = ["--metric", "accuracy", "--compare", "a,b", "--budget", "2h", "--resamples", "0"]
    expected, _ = _answer(narrow, "allocate", flags, monkeypatch)
    got, read = _answer(wide, "allocate", flags, monkeypatch)
    assert got == expected
    assert "duration" in read and not {"notes", "labels"} & set(read), read
    table.drop(columns="experiment").to_csv(wide, index=False)  # not a store's table
    result = CliRunner().invoke(main, ["allocate", str(wide), *flags])
    assert result.exit_code == 2 and "missing: experiment" in result.output
    assert "notes" in result.output  # every column read, so the error lists them all


REPORTS = {  # the report's flags: (those of INPUT's columns, those of the run)
    "runs": (["--metric", "accuracy", "--by", "method", "--pair-on", "seed", "--task", "task",
              "--random", "seed", "--fixed", "method"], ["--test", "t"]),
    "selection": (["--metric", "test", "--by", "method", "--select-on", "validation",
                   "--pair-on", "seed"], []),
    "search": (["--metric", "accuracy", "--by", "method"], ["--search", "SELF", "--bounds",
                                                            "0,1"]),
}  # fmt: skip


def _report(path, flags, monkeypatch):
    """The page ``vareval report`` writes for ``path`` and the columns it read."""
    seen = _spy_reads(monkeypatch)
    out = path.with_suffix(".html")
    flags = [str(path) if f == "SELF" else f for f in flags]  # --search: the same file
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8"), seen


@pytest.mark.parametrize("case", REPORTS)
def test_report_reads_only_the_columns_it_uses(tmp_path, monkeypatch, case):
    """The report decides from the header which columns it needs and reads those only.

    The page of the wide file is the page of the narrow one (the columns read), but
    for one sentence naming the columns left unread (a selection's table drops them).
    """
    flags, more = REPORTS[case]
    table = _table(np.random.default_rng(7))
    table = table[table.task.isin(["t0", "t1"]) & (table.config < (2 if case == "runs" else 4))]
    (tmp_path / "wide").mkdir()
    (tmp_path / "narrow").mkdir()
    wide, narrow = tmp_path / "wide" / "runs.csv", tmp_path / "narrow" / "runs.csv"
    table.to_csv(wide, index=False)
    page, reads = _report(wide, [*flags, *more], monkeypatch)
    used = {"selection": ["method", "task", "seed", "config", "validation", "test"]}.get(
        case, ["method", "task", "seed", "config", "accuracy"])
    assert reads[0] == used, reads  # task and config: design columns, read when present
    if case == "search":  # read as `vareval tuning-curve` reads it
        assert reads[1] == ["method", "seed", "config", "accuracy"], reads
    table[used].to_csv(narrow, index=False)
    expected, _ = _report(narrow, [*flags, *more], monkeypatch)
    unread = [c for c in table.columns if c not in used]
    sentence = ("<p>Not read from the file (no option and no design role names them): "
                + ", ".join(f"&#39;{c}&#39;" for c in unread) + ".</p>\n\n\n")  # and blank lines
    if case != "selection":
        assert sentence in page
        page = page.replace(sentence, "", 1)
    assert page == expected


TRIAL = '''
def train(trial):
    if trial.factors["model"] == "b" and trial.seed == 0:
        raise RuntimeError("diverged")
    b = trial.factors["model"] == "b"
    shift, (noise, own) = 0.03 * b, trial.rng("init").normal(size=2)
    lr = trial.config["lr"]
    return {"acc": 0.8 + shift + 0.01 * noise + 0.01 * lr + 0.02 * b * own * (1 + lr),
            "val_acc": 0.79 + shift + 0.01 * noise, "loss": 0.3 - shift}
'''

EXPERIMENT = """
[experiment]
name = "columns"
trial = "columns_trial:train"
path = {path!r}
seeds = 6
configs = 2
reruns = 1
entropy = 11

[factors]
model = ["a", "b"]

[space]
lr = {{ distribution = "log-uniform", low = 0.01, high = 1.0 }}

[randomness]
sources = ["init"]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store made by `vareval run`: 2 models x 6 seeds x 2 configurations, 2 trials failed."""
    folder = tmp_path_factory.mktemp("store")
    (folder / "columns_trial.py").write_text(TRIAL)
    (folder / "experiment.toml").write_text(EXPERIMENT.format(path=str(folder)))
    path = folder / "runs.db"
    result = CliRunner().invoke(main, ["run", str(folder / "experiment.toml"), "--store",
                                       str(path), "--engine", "serial", "--no-progress"])
    assert "2 failed" in result.output, result.output
    return path


STORE_COMMANDS = {  # the store's columns each command builds, beside the design's and status
    "summarize": (["--metric", "acc", "--by", "model"], []),
    "paired": (["--metric", "acc", "--by", "model", "--pair-on", "seed,config", "--compare",
                "a,b", "--where", "seed > 0"], []),
    "variance": (["--metric", "acc", "--fixed", "model", "--random", "seed,config"], []),
    "select": (["--validation", "val_acc", "--test", "acc", "--by", "model"], ["val_acc"]),
}  # fmt: skip
DESIGN = ["trial_id", "model", "experiment", "seed", "config", "config_index", "rerun", "acc",
          "status"]


@pytest.mark.parametrize("command", STORE_COMMANDS)
def test_a_store_builds_only_the_columns_a_command_uses(store, monkeypatch, command):
    """From a run store a command builds its columns only; the answer is the full table's."""
    from vareval.data import store_table

    flags, more = STORE_COMMANDS[command]
    got, read = _answer(store, command, flags, monkeypatch)
    assert read == [c for c in store_table.read_store_table(store, status="all").columns
                    if c in {*DESIGN, *more}], read
    everything = store_table.read_store_table

    def full(path, *, status="done", columns=None):  # the table as built before: every column
        return everything(path, status=status)

    monkeypatch.setattr(io, "read_store_table", full)
    expected, read_all = _answer(store, command, flags, monkeypatch)
    assert {"lr", "loss", "host", "started"} <= set(read_all)
    assert got == expected


def test_a_store_table_of_some_columns_is_the_full_tables(store):
    """read_store_table(columns=...) is the full table's columns, values, dtypes and attrs."""
    from vareval.data.store_table import read_store_table, tidy_frame

    rng = np.random.default_rng(8)
    for status in ("done", "all"):
        with pytest.warns(vareval_warning()) if status == "done" else _nothing():
            full = read_store_table(store, status=status)
        for _ in range(12):
            chosen = list(rng.choice(full.columns, rng.integers(1, full.shape[1] + 1),
                                     replace=False))
            with pytest.warns(vareval_warning()) if status == "done" else _nothing():
                part = read_store_table(store, status=status, columns=chosen)
            want = [c for c in full.columns if c in chosen]
            pd.testing.assert_frame_equal(part, full[want], check_exact=True)
            assert part.attrs["metrics"] == full.attrs["metrics"] == ["acc", "val_acc", "loss"]
            assert part.attrs["spec"] == full.attrs["spec"]
            assert len(part.attrs.get("not_done", [])) == len(full.attrs.get("not_done", []))
        missing = read_store_table(store, status="all", columns=["acc", "nope"])
        assert list(missing.columns) == list(read_store_table(store, status="all").columns)
    # the trial loop it replaces: one row per trial, every JSON field decoded on its own
    import json
    import sqlite3

    from vareval.data.store_table import store_rows

    con = sqlite3.connect(store)
    rows = store_rows(con)
    con.close()
    table = tidy_frame(rows, ["model"], ["lr"])
    for row, (_, got) in zip(rows, table.iterrows(), strict=True):
        metrics = json.loads(row[8]) if row[8] else {}
        assert got["model"] == json.loads(row[1])["model"]
        assert got["lr"] == json.loads(row[7])["lr"]
        for name in ("acc", "val_acc", "loss"):  # a failed trial's: NaN
            assert got[name] == metrics[name] if name in metrics else np.isnan(got[name])


def vareval_warning():
    from vareval.errors import VarevalWarning

    return VarevalWarning


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def test_report_reads_the_predictions_columns_it_uses(tmp_path, monkeypatch):
    """--predictions with --system: gold, item and the systems named, as `significance` reads."""
    rng = np.random.default_rng(9)
    gold = rng.integers(0, 3, 300)
    preds = pd.DataFrame({
        "item": np.arange(300), "gold": gold,
        "x": np.where(rng.random(300) < 0.8, gold, (gold + 1) % 3),
        "y": np.where(rng.random(300) < 0.7, gold, (gold + 2) % 3),
        "z": rng.integers(0, 3, 300), "notes": rng.choice(["free, text", "NA", ""], 300),
    })  # fmt: skip
    runs = _table(np.random.default_rng(10))
    runs = runs[(runs.task == "t0") & (runs.config == 0)][["method", "seed", "accuracy"]]
    pages = {}
    for kind, columns in (("wide", list(preds.columns)), ("narrow", ["item", "gold", "x", "y"])):
        (tmp_path / kind).mkdir()
        runs.to_csv(tmp_path / kind / "runs.csv", index=False)
        preds[columns].to_csv(tmp_path / kind / "preds.csv", index=False)
        flags = ["--metric", "accuracy", "--by", "method", "--predictions",
                 str(tmp_path / kind / "preds.csv"), "--gold", "gold", "--item", "item",
                 "--system", "x,y"]
        pages[kind], reads = _report(tmp_path / kind / "runs.csv", flags, monkeypatch)
        assert reads[1] == ["item", "gold", "x", "y"], reads
    assert pages["wide"] == pages["narrow"]
    assert '<section id="significance">' in pages["wide"]


def test_a_store_whose_trials_record_different_metrics(store, tmp_path):
    """Trials that record other metrics, or fewer: columns in order of first appearance, NaN
    where a trial lacks one, and a chosen column is the full table's."""
    import json
    import shutil
    import sqlite3

    from vareval.data.store_table import read_store_table

    path = tmp_path / "mixed.db"
    shutil.copy(store, path)
    rng = np.random.default_rng(12)
    con = sqlite3.connect(path)
    rows = con.execute("SELECT id, metrics FROM trials ORDER BY id").fetchall()
    written = {}
    for tid, raw in rows:
        metrics = json.loads(raw) if raw else {}
        for name in ("loss", "val_acc"):
            if metrics and rng.random() < 0.3:
                del metrics[name]
        if metrics and rng.random() < 0.3:
            metrics[f"extra_{rng.integers(3)}"] = float(rng.normal())
        written[tid] = metrics
        con.execute("UPDATE trials SET metrics = ? WHERE id = ?",
                    (json.dumps(metrics) if raw else raw, tid))
    con.commit()
    con.close()
    full = read_store_table(path, status="all")
    order = list(dict.fromkeys(k for tid, _ in rows for k in written[tid]))
    assert full.attrs["metrics"] == order and len(order) > 3
    assert list(full.columns[full.columns.get_loc("lr") + 1:][:len(order)]) == order
    for name in order:
        expected = [written[tid].get(name, np.nan) for tid, _ in rows]
        np.testing.assert_array_equal(full[name].to_numpy(), np.array(expected, dtype=float))
        part = read_store_table(path, status="all", columns=["trial_id", name, "status"])
        pd.testing.assert_frame_equal(part, full[["trial_id", name, "status"]], check_exact=True)
