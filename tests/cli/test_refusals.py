"""Bad input families: every command and the API answer right or refuse in one line.

Each family is fed to every command it concerns; a refusal is one ``error:``
line with status 2, and no file in the working directory changes.
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import vareval
from vareval.cli import main
from vareval.errors import DataError, VarevalError


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _files(root) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def _refused(res, *words) -> str:
    """The one error line of a refusal, checked for ``words``."""
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: ") and "Traceback" not in res.output, line
    for w in words:
        assert w in line, line
    return line


def _runs(methods=("a", "b"), tasks=("t1", "t2"), seeds=4, configs=2, reruns=1, rng=0):
    rng = np.random.default_rng(rng)
    rows = [
        {"task": t, "method": m, "experiment": m, "seed": s, "config": f"{s}-{c}", "rerun": r,
         "accuracy": round(0.7 + 0.05 * i + rng.normal(0, 0.02), 4)}
        for t in tasks for i, m in enumerate(methods) for s in range(seeds) for c in range(configs)
        for r in range(reruns)
    ]  # fmt: skip
    return pd.DataFrame(rows)


# --- one bounds rule for every command that reads a metric ------------------------

_METRIC = ["--metric", "accuracy"]
_PAIR = ["--by", "method", "--pair-on", "task,seed,config", "--compare", "a,b"]
BOUNDS_COMMANDS = {
    "summarize": ["summarize", *_METRIC, "--by", "method"],
    "summarize --bounds": ["summarize", *_METRIC, "--by", "method", "--bounds", "0,1"],
    "paired": ["paired", *_METRIC, *_PAIR],
    "plan": ["plan", *_METRIC, *_PAIR, "--target-se", "0.01"],
    "sequential": ["sequential", *_METRIC, *_PAIR],
    "best-of-k": ["best-of-k", *_METRIC, "--by", "method", "--resamples", "1000"],
    "aggregate": ["aggregate", *_METRIC, "--by", "method", "--task", "task"],
    "rank": ["rank", *_METRIC, "--by", "method", "--task", "task"],
    "allocate": ["allocate", *_METRIC, "--compare", "a,b", "--budget", "100", "--resamples", "0"],
    "variance": ["variance", *_METRIC, "--fixed", "method", "--random", "seed,config"],
    "tuning-curve": ["tuning-curve", *_METRIC, "--by", "method", "--bounds", "0,1"],
}


@pytest.mark.parametrize("command", list(BOUNDS_COMMANDS))
def test_a_score_outside_the_bounds_is_refused_with_its_row(tmp_path, command):
    df = _runs()
    df.loc[6, "accuracy"] = 1.2  # data row 7
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    before = _files(tmp_path)
    args = BOUNDS_COMMANDS[command]
    line = _refused(_run(args[0], path, *args[1:]), "outside the bounds [0, 1]", "row(s) 7")
    assert "1.2" in line
    assert _files(tmp_path) == before


def test_the_api_holds_the_same_bounds():
    df = _runs()
    df.loc[6, "accuracy"] = 1.2
    common = {"metric": "accuracy", "by": "method"}
    paired = {**common, "pair_on": ["task", "seed", "config"], "a": "a", "b": "b"}
    for call in (
        lambda: vareval.summarize(df, **common),
        lambda: vareval.summarize(df, **common, bounds=(0, 1)),
        lambda: vareval.paired(df, **paired),
        lambda: vareval.plan(df, **paired, target_se=0.01),
        lambda: vareval.aggregate(df, **common, task="task"),
        lambda: vareval.best_of_k(df, **common, n_resamples=100),
    ):
        with pytest.raises(DataError, match=r"outside the bounds \[0, 1\].* row\(s\) 7"):
            call()


def test_given_bounds_replace_the_names_and_a_percentage_is_named():
    df = _runs().assign(accuracy=lambda d: d.accuracy * 100)
    with pytest.raises(DataError, match=r"outside the bounds \[0, 1\]"):
        vareval.summarize(df, metric="accuracy", by="method")
    wide = vareval.summarize(df, metric="accuracy", by="method", bounds=(0, 100))
    named = vareval.summarize(df.rename(columns={"accuracy": "accuracy_pct"}),
                              metric="accuracy_pct", by="method")  # fmt: skip
    assert wide["a"].mean == named["a"].mean == pytest.approx(df.accuracy[df.method == "a"].mean())
    pair = {"metric": "accuracy", "by": "method", "pair_on": ["task", "seed", "config"]}
    r = vareval.paired(df, **pair, a="a", b="b", bounds=(0, 100))
    assert r.results["a - b"].estimate == pytest.approx(
        (df.accuracy[df.method == "a"].to_numpy() - df.accuracy[df.method == "b"].to_numpy()).mean()
    )


# --- labels are text exactly as written, in flags too -------------------------------

LABELS = [" padded ", "padded", "b", "x,y", 'say "hi"', "\ufeffbom"]


@pytest.fixture
def labelled(tmp_path):
    df = _runs(methods=LABELS, tasks=("t1",), reruns=2)
    path = tmp_path / "labels.csv"
    df.to_csv(path, index=False)
    return path, df


def _mean_difference(df, a, b):
    pick = {m: df.loc[df.method == m].sort_values(["seed", "config", "rerun"]).accuracy.to_numpy()
            for m in (a, b)}  # fmt: skip
    return (pick[a] - pick[b]).mean()


@pytest.mark.parametrize(
    ("flag", "a", "b"),
    [(" padded ,b", " padded ", "b"), ("padded,b", "padded", "b"),
     ('"x,y", padded ', "x,y", " padded "), ('"say ""hi""",b', 'say "hi"', "b"),
     ("\ufeffbom,b", "\ufeffbom", "b")],
)  # fmt: skip
def test_compare_names_labels_exactly_as_written(labelled, flag, a, b):
    path, df = labelled
    want = _mean_difference(df, a, b)
    keys = ["seed", "config", "rerun"]
    pair = ["--metric", "accuracy", "--by", "method", "--pair-on", ",".join(keys),
            "--compare", flag]  # fmt: skip
    out = _run("paired", path, *pair, "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)[f"{a} - {b}"]["estimate"] == pytest.approx(want)
    api = vareval.paired(df, metric="accuracy", by="method", pair_on=keys, a=a, b=b)
    assert api.results[f"{a} - {b}"].estimate == pytest.approx(want)
    for command, extra in (("plan", ["--target-se", "0.001"]), ("sequential", [])):
        res = _run(command, path, *pair, *extra)
        assert res.exit_code == 0, res.output
        assert f"{a} - {b}" in res.output
    alloc = _run("allocate", path, "--metric", "accuracy", "--compare", flag, "--budget", "100",
                 "--resamples", "0", "--json")  # fmt: skip
    assert alloc.exit_code == 0, alloc.output
    assert json.loads(alloc.output)["compare"] == [a, b]


@pytest.mark.parametrize(
    ("flag", "words"),
    [("padded, b", "method ' b' not found; did you mean 'b'?"),
     ('"x,y,b', "quote a label holding a comma"),
     ("padded,", "has an empty label"),
     ("b,x,y", "must name two things")],
)  # fmt: skip
def test_a_label_flag_that_names_nothing_is_one_line(labelled, flag, words):
    path, _ = labelled
    before = _files(path.parent)
    for command in ("paired", "plan", "sequential"):
        target = ["--target-se", "0.01"] if command == "plan" else []
        res = _run(command, path, "--metric", "accuracy", "--by", "method", "--pair-on",
                   "seed,config,rerun", "--compare", flag, *target)  # fmt: skip
        _refused(res, words)
    assert _files(path.parent) == before


def test_aggregate_pairs_keep_their_spaces(labelled, tmp_path):
    _, df = labelled
    path = tmp_path / "tasks.csv"
    _runs(methods=LABELS, tasks=("t1", "t2")).to_csv(path, index=False)
    res = _run("aggregate", path, "--metric", "accuracy", "--by", "method", "--task", "task",
               "--pairs", ' padded :b,"x,y:padded"', "--resamples", "200", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert " padded " in res.output and "x,y" in res.output


# --- concatenated files ---------------------------------------------------------------

_HEADER = b"method,seed,accuracy"
_ROWS = b"a,0,0.8\na,1,0.7\n"


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("header.csv", _HEADER + b"\n" + _ROWS + _HEADER + b"\nb,0,0.6\nb,1,0.65\n",
         "repeats its header line at line 4"),
        ("header_crlf.csv", (_HEADER + b"\n" + _ROWS + _HEADER + b"\n").replace(b"\n", b"\r\n"),
         "repeats its header line at line 4"),
        ("last.tsv", (_HEADER + b"\n" + _ROWS + _HEADER).replace(b",", b"\t"),
         "repeats its header line at line 4"),
        ("bom.csv", b"\xef\xbb\xbf" + _HEADER + b"\n" + _ROWS + b"\xef\xbb\xbfb,0,0.6\nb,1,0.65\n",
         "byte-order mark (U+FEFF) at the start of line 4"),
    ],
)  # fmt: skip
def test_concatenated_files_are_refused_with_the_line(tmp_path, name, data, words):
    path = tmp_path / name
    path.write_bytes(data)
    before = _files(tmp_path)
    _refused(_run("summarize", path, "--metric", "accuracy", "--by", "method"), words)
    for command in (["allocate", "--compare", "a,b"], ["paired", "--by", "method",
                                                       "--pair-on", "seed"]):  # fmt: skip
        _refused(_run(command[0], path, "--metric", "accuracy", *command[1:]), words)
    with pytest.raises(DataError, match=re.escape(words)):
        vareval.read_table(path)
    assert _files(tmp_path) == before


def test_lines_ending_in_cr_alone_are_refused_in_one_line(tmp_path):
    """An old Mac export (CR line ends) was a traceback from csv's reader; now one line."""
    path = tmp_path / "mac.csv"
    path.write_bytes((_HEADER + b"\n" + _ROWS).replace(b"\n", b"\r"))
    words = "carriage return inside its header line"
    _refused(_run("summarize", path, "--metric", "accuracy", "--by", "method"), words)
    with pytest.raises(DataError, match=words):
        vareval.read_table(path)


def test_a_leading_bom_and_a_header_word_in_a_cell_are_fine(tmp_path):
    path = tmp_path / "fine.csv"
    path.write_bytes(b"\xef\xbb\xbf" + _HEADER + b"\n" + _ROWS + b"method,1,0.5\n")
    df = vareval.read_table(path)
    assert list(df.columns) == ["method", "seed", "accuracy"] and df.method.iloc[-1] == "method"


# --- the Python API validates like the command -----------------------------------------


@pytest.mark.parametrize("table", [[1, 2], {"accuracy": [0.5]}, np.zeros((2, 2)), None])
@pytest.mark.parametrize("name", ["summarize", "paired", "aggregate", "significance", "rank",
                                  "tuning_curve", "variance", "build_report"])  # fmt: skip
def test_a_table_that_is_not_a_dataframe_is_named(table, name):
    with pytest.raises(VarevalError, match=rf"{name}\(\): `df` must be a pandas DataFrame.*got "):
        getattr(vareval, name)(table, metric="accuracy", by="method")


@pytest.mark.parametrize("frame", [pd.DataFrame(), pd.DataFrame(columns=["method", "accuracy"])])
def test_an_empty_dataframe_is_refused(frame):
    for call in (vareval.summarize, vareval.best_of_k, vareval.effect_sizes):
        with pytest.raises(DataError, match=r"`df` is empty \(0 rows"):
            call(frame, metric="accuracy", by="method")


def test_api_arguments_are_checked_up_front():
    runs = _runs()
    with pytest.raises(DataError, match=r"compare methods, and the table has 1 \(.a.\)"):
        vareval.effect_sizes(runs[runs.method == "a"], metric="accuracy", by="method")
    with pytest.raises(DataError, match=r"task 't1' has 1"):
        vareval.effect_sizes(runs[runs.method == "a"], metric="accuracy", by="method", task="task")
    preds = pd.DataFrame({"gold": list("xyxy") * 3, "A": list("xyyy") * 3, "B": list("xxxy") * 3})
    with pytest.raises(VarevalError, match=r"`n_resamples` 10,000,000,000,000 is too large"):
        vareval.significance(preds, gold="gold", systems=["A", "B"], n_resamples=10**13,
                             test="bootstrap")  # fmt: skip
    with pytest.raises(VarevalError, match=r"the design's trials .* is too large"):
        vareval.reseeding_design({"model": ["a", "b"]}, seeds=10**9, configs=10**9)
    assert len(vareval.reseeding_design({"model": ["a", "b"]}, seeds=3, configs=2)) == 12
    with pytest.raises(VarevalError, match=r"`test_fraction` must be a number in \(0, 1\); got 2"):
        vareval.paired(runs, metric="accuracy", by="method", pair_on=["task", "seed", "config"],
                       test_fraction=2)  # fmt: skip
    with pytest.raises(VarevalError, match="`ks` must be a non-empty list of integers"):
        vareval.best_of_k(runs, metric="accuracy", by="method", ks=[1.5])
    mixed = pd.DataFrame({"gold": [1, "a", 1, "a"], "p": [1, "a", "a", "a"]})
    with pytest.raises(DataError, match="gold column 'gold' mixes text and number labels"):
        vareval.metrics(mixed, gold="gold", systems=["p"])
    text = mixed.astype(str)
    assert vareval.metrics(text, gold="gold", systems=["p"]) is not None


# --- files: an existing figure or demo page is not replaced without --force ----------------


def test_report_figures_do_not_replace_a_file(tmp_path):
    from vareval import datasets

    runs = tmp_path / "runs.csv"
    runs.write_bytes(datasets.path("digits_runs.csv").read_bytes())
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "best-of-k.pdf").write_bytes(b"the user's own figure")
    before = _files(tmp_path)
    args = ["report", runs, "--metric", "accuracy", "--by", "method", "-o", tmp_path / "r.html",
            "--figures", figs]  # fmt: skip
    _refused(_run(*args), "'best-of-k.pdf'", "already exist", "--force")
    assert _files(tmp_path) == before  # neither the page nor any figure written
    res = _run(*args, "--force")
    assert res.exit_code == 0, res.output
    assert (figs / "best-of-k.pdf").read_bytes().startswith(b"%PDF")


def test_demo_does_not_replace_its_page(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "vareval-demo" / "report.html"
    page.parent.mkdir()
    page.write_text("my notes")
    _refused(_run("demo"), "vareval-demo/report.html' exists", "--force")
    assert page.read_text() == "my notes" and _files(tmp_path) == {page: _files(tmp_path)[page]}


# --- a flag that does nothing is refused -------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["report", "--metric", "accuracy", "--by", "method", "--gold", "gold"],
         "--gold does nothing without --predictions FILE"),
        (["report", "--metric", "accuracy", "--by", "method", "--format", "svg"],
         "--format does nothing without --figures DIR"),
        (["report", "--metric", "accuracy", "--by", "method", "--force", "--width", "3.3"],
         "--width, --force do nothing without --figures DIR"),
        (["variance", "--metric", "accuracy", "--fixed", "method", "--random", "seed",
          "--uncorrelated"], "--uncorrelated does nothing without --slope COLUMN"),
    ],
)  # fmt: skip
def test_a_flag_that_does_nothing_is_refused(tmp_path, args, words):
    path = tmp_path / "runs.csv"
    _runs().to_csv(path, index=False)
    before = _files(tmp_path)
    _refused(_run(args[0], path, *args[1:], *([] if args[0] != "report" else
                                               ["-o", tmp_path / "r.html"])), words)  # fmt: skip
    assert _files(tmp_path) == before


# --- messages that say what the user can do -----------------------------------------------


def test_messages_name_what_the_user_gave(tmp_path):
    from vareval import datasets

    runs = tmp_path / "runs.csv"
    datasets.load("digits_runs.csv").assign(
        accuracy=lambda d: d.accuracy.where(d.index != 0, 0.0)
    ).to_csv(runs, index=False)
    preds = tmp_path / "preds.csv"
    preds.write_bytes(datasets.path("digits_predictions.csv").read_bytes())
    before = _files(tmp_path)
    line = _refused(_run("best-of-k", runs, "--metric", "accuracy"), "--absolute")
    assert "relative=False in Python" in line
    pair = ["--metric", "accuracy", "--by", "method", "--pair-on", "seed",
            "--compare", "mlp,logreg"]  # fmt: skip
    _refused(_run("plan", runs, *pair, "--effect", "inf"),
             "--effect must be a finite number other than 0; got inf")  # fmt: skip
    res = _run("plan", runs, *pair, "--effect", "-0.01")  # a difference of either sign
    assert res.exit_code == 0, res.output
    _refused(_run("metrics", preds, "--gold", "gold", "--item", "itm"),
             "item column 'itm' not found; did you mean 'item'?")  # fmt: skip
    with pytest.raises(VarevalError, match="`effect` must be a finite number other than 0"):
        vareval.stats.plan_replications(0.1, effect=float("inf"))
    assert _files(tmp_path) == before


def test_numerical_warnings_do_not_bury_a_refusal(tmp_path):
    big = tmp_path / "big.csv"
    scores = [1e308, 1.5e308, 1.7e308, 1e308, 1e308, 1.2e308]
    pd.DataFrame({"method": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2, "score": scores}).to_csv(
        big
    )
    res = _run("plan", big, "--metric", "score", "--by", "method", "--pair-on", "seed",
               "--target-se", "1")  # fmt: skip
    _refused(res, "overflow", "rescale the metric")
    answered = _run("paired", big, "--metric", "score", "--by", "method", "--pair-on", "seed")
    assert answered.exit_code == 0, answered.output
    tail = answered.stderr.strip().splitlines()
    assert tail and all(t.startswith("warning: overflow") for t in tail), tail
    assert "RuntimeWarning" not in answered.stderr


# --- select: one column per role; no unit is one choice per method ----------------------


def test_select_roles(tmp_path):
    from vareval import datasets

    path = tmp_path / "search.csv"
    path.write_bytes(datasets.path("digits_search.csv").read_bytes())
    df = vareval.read_table(path, numbers=["val_accuracy", "test_accuracy"])
    args = ["select", path, "--validation", "val_accuracy", "--test", "test_accuracy", "--by",
            "model"]  # fmt: skip
    before = _files(tmp_path)
    _refused(_run(*args, "--unit", "model"), "column 'model' is both the method (by) and the unit")
    _refused(_run(*args, "--config", "seed"), "column 'seed' is both the unit and the config")
    assert _files(tmp_path) == before
    one = _run(*args, "--unit", "", "--json")
    assert one.exit_code == 0, one.output
    api = vareval.select(df, validation="val_accuracy", test="test_accuracy", by="model", unit=[])
    table = api.table
    assert len(table) == df.model.nunique()
    # the choice per method: the best mean validation score over its configurations
    means = df.groupby(["model", "config"], sort=False)[["val_accuracy", "test_accuracy"]].mean()
    for _, row in table.iterrows():
        best = means.loc[row.model].val_accuracy.max()
        assert row.val_accuracy == pytest.approx(best)
    assert json.dumps(sorted(table.model)) in json.dumps(sorted(set(df.model)))
    with pytest.raises(VarevalError, match="both the method"):
        vareval.select(df, validation="val_accuracy", test="test_accuracy", by="model",
                       unit="model")  # fmt: skip


# --- memory: estimated before allocating, refused with the figure ------------------------


def test_memory_is_estimated_before_allocating(tmp_path, monkeypatch):
    from vareval.stats import _checks

    monkeypatch.setattr(_checks, "_memory_bytes", lambda: 2e9)  # a 2 GB machine
    n = 20_000  # 20,000 classes: a 6.4 GB confusion matrix, 19.2 GB of item-type rows
    df = pd.DataFrame({"item": np.arange(n), "gold": np.arange(n), "A": np.arange(n),
                       "B": np.roll(np.arange(n), 1)})  # fmt: skip
    path = tmp_path / "many.csv"
    df.to_csv(path, index=False)
    before = _files(tmp_path)
    _refused(_run("metrics", path, "--gold", "gold", "--item", "item", "--system", "A"),
             "the confusion matrix of 20,000 classes", "would need 6.4 GB", "2 GB")  # fmt: skip
    # the randomization test needs the item types' rows (the bootstrap's compiled
    # path counts the labels without them)
    _refused(_run("significance", path, "--gold", "gold", "--item", "item", "--system", "A,B",
                  "--metric", "macro-f1", "--resamples", "100", "--test", "randomization"),
             "the rows of 20,000 item types x 60,000 statistics", "19.2 GB")  # fmt: skip
    with pytest.raises(VarevalError, match="confusion matrix of 20,000 classes"):
        vareval.metrics(df, gold="gold", item="item", systems=["A"])
    long = pd.DataFrame({"item": [1, 2, 3], "gold": ["a", "b", "x" * 300_000],
                         "A": ["a", "b", "b"]})  # fmt: skip
    monkeypatch.setattr(_checks, "_memory_bytes", lambda: 1e6)  # labels of 300 kB on 1 MB
    with pytest.raises(VarevalError, match=r"gold column 'gold' as text \(3 labels, longest "
                                           r"300,000 characters\) would need 3.6 MB"):
        vareval.metrics(long, gold="gold", item="item", systems=["A"])
    assert _files(tmp_path) == before


def test_an_error_line_is_cut(tmp_path, capsys):
    label = "y" * 100_000
    path = tmp_path / "sc.csv"
    pd.DataFrame({"model": [label, "a", "a"], "val": [0.1, 0.2, 0.3],
                  "test": [0.1, 0.2, 0.3]}).to_csv(path, index=False)  # fmt: skip
    line = _refused(_run("selection-curve", path, "--validation", "val", "--test", "test",
                         "--by", "model"), "has 1 search iteration(s)")  # fmt: skip
    assert len(line) < 300
    from vareval.cli import _fail

    with pytest.raises(SystemExit):
        _fail("z" * 10_000)
    assert capsys.readouterr().err.strip().endswith("(8,000 more characters cut)")


# --- a clean store where its -shm index cannot be made (a read-only mount) -----------------


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory):
    import textwrap
    from pathlib import Path

    from vareval.experiment import run

    folder = tmp_path_factory.mktemp("store")
    toml = folder / "experiment.toml"
    trials = Path(__file__).resolve().parents[1] / "experiment"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        name = "clean"
        trial = "_trials:sleepy"
        path = {str(trials)!r}
        seeds = 3
        entropy = 5

        [factors]
        model = ["a", "b"]

        [randomness]
        sources = ["init"]

        [params]
        sleep = 0.0
    """))
    run(toml, folder / "runs.db", engine="serial", progress=False)
    return folder / "runs.db"


def _no_shm_here(tmp_path, store, wal: bytes = b""):
    """The store's file alone, where SQLite cannot make its -shm (a dangling link, as a
    read-only mount does without privileges)."""
    path = tmp_path / "runs.db"
    path.write_bytes(store.read_bytes())
    (tmp_path / "runs.db-shm").symlink_to(tmp_path / "no-such-folder" / "shm")
    if wal:
        (tmp_path / "runs.db-wal").write_bytes(wal)
    return path


def test_a_clean_store_reads_without_its_shm(tmp_path, clean_store):
    path = _no_shm_here(tmp_path, clean_store)
    before = _files(tmp_path)
    want = vareval.read_store_table(clean_store)
    got = vareval.read_store_table(path)
    pd.testing.assert_frame_equal(got, want)
    res = _run("summarize", path, "--metric", "x", "--by", "experiment", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["a"]["n"] == 3
    after = _files(tmp_path)
    # SQLite's read-only first attempt leaves an empty -wal where the folder is writable
    # (as any read of a WAL store does); on a read-only mount nothing can appear
    wal = tmp_path / "runs.db-wal"
    assert after.pop(wal, None) in (None, hashlib.sha256(b"").hexdigest()) and after == before


def test_a_store_with_pending_results_says_what_is_missing(tmp_path, clean_store):
    path = _no_shm_here(tmp_path, clean_store, wal=b"\x37\x7f\x06\x82" + bytes(60))
    before = _files(tmp_path)
    _refused(_run("summarize", path, "--metric", "x", "--by", "experiment"),
             "folder is read-only", "'runs.db-wal' holds 64 bytes")  # fmt: skip
    with pytest.raises(VarevalError, match="copy the store with its -wal file"):
        vareval.read_store_table(path)
    assert _files(tmp_path) == before
