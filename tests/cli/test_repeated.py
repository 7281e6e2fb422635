import json

import pytest
from click.testing import CliRunner

from vareval.cli import main

RUNS = "method,seed,acc\nA,0,0.831\nA,1,0.847\nA,2,0.822\nB,0,0.818\nB,1,0.835\nB,2,0.809\n"


@pytest.fixture
def results(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(RUNS)
    return str(path)


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_summarize_prints_a_table_and_labels_the_best_run_selected(results):
    out = run("summarize", results, "--metric", "acc", "--by", "method")
    assert out.exit_code == 0, out.output
    assert "selected" in out.output and "0.8470" in out.output and "0.8333" in out.output


def test_paired_worked_example(results):
    out = run("paired", results, "--metric", "acc", "--by", "method", "--pair-on", "seed")
    assert out.exit_code == 0, out.output
    assert "+0.01267" in out.output and "+0.01200 (a selected statistic" in out.output
    data = json.loads(
        run(
            "paired", results, "--metric", "acc", "--by", "method", "--pair-on", "seed", "--json"
        ).output
    )
    assert data["A - B"]["estimate"] == pytest.approx(0.0126667, abs=1e-7)
    assert data["A - B"]["selected_gap"] == pytest.approx(0.012)


def test_best_of_k_and_plan_json(results):
    out = run("best-of-k", results, "--metric", "acc", "--ks", "1,3", "--n-sim", "1000", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["all runs"]["ks"] == [1, 3]
    out = run(
        "plan",
        results,
        "--metric",
        "acc",
        "--by",
        "method",
        "--pair-on",
        "seed",
        "--target-se",
        "0.0001",
    )
    assert out.exit_code == 0 and "pairs" in out.output


def test_demo_runs():
    out = run("demo")
    assert out.exit_code == 0, out.output
    assert "selected" in out.output and "paired over 10 replications" in out.output


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BAD = [
    # (file name, content, arguments after the file, words the message must hold)
    ("empty.csv", "", ["summarize", "--metric", "acc", "--by", "method"], "empty"),
    ("h.csv", "method,acc\n", ["summarize", "--metric", "acc", "--by", "method"], "no data rows"),
    ("r.csv", RUNS, ["summarize", "--metric", "accuracy", "--by", "method"], "did you mean 'acc'"),
    ("r.csv", RUNS, ["summarize", "--metric", "acc", "--by", "model"], "'model' not found"),
    (
        "r.csv",
        RUNS.replace("0.847", ""),
        ["paired", "--metric", "acc", "--by", "method", "--pair-on", "seed"],
        "missing",
    ),
    (
        "r.csv",
        RUNS.replace("0.847", "n/a!"),
        ["summarize", "--metric", "acc", "--by", "method"],
        "non-numeric",
    ),
    (
        "r.csv",
        "method,acc\nA,0.8\nB,0.7\nB,0.71\n",
        ["summarize", "--metric", "acc", "--by", "method"],
        "'A' has 1 finished run",
    ),
    (
        "r.csv",
        RUNS.replace("B,2,0.809\n", ""),
        ["paired", "--metric", "acc", "--by", "method", "--pair-on", "seed"],
        "unmatched pairs",
    ),
    (
        "r.csv",
        RUNS.replace("A,2,", "A,1,"),
        ["paired", "--metric", "acc", "--by", "method", "--pair-on", "seed"],
        "duplicate pairing key",
    ),
    ("r.csv", RUNS, ["best-of-k", "--metric", "acc", "--ks", "-1,3"], "ks"),
    ("r.csv", RUNS, ["best-of-k", "--metric", "acc", "--ks", "one"], "--ks"),
    ("r.csv", RUNS, ["best-of-k", "--metric", "acc", "--n-sim", "0"], "n_sim"),
    (
        "r.csv",
        RUNS,
        ["summarize", "--metric", "acc", "--by", "method", "--confidence", "1.5"],
        "confidence",
    ),
    ("r.xlsx", RUNS, ["summarize", "--metric", "acc", "--by", "method"], "unknown file type"),
    ("r.jsonl", "{broken", ["summarize", "--metric", "acc", "--by", "method"], "could not be read"),
    (
        "r.csv",
        RUNS,
        [
            "paired",
            "--metric",
            "acc",
            "--by",
            "method",
            "--pair-on",
            "seed",
            "--a",
            "A",
            "--b",
            "C",
        ],
        "'C' not found",
    ),
    (
        "r.csv",
        RUNS,
        [
            "paired",
            "--metric",
            "acc",
            "--by",
            "method",
            "--pair-on",
            "seed",
            "--a",
            "A",
            "--b",
            "A",
        ],
        "must differ",
    ),
    (
        "r.csv",
        RUNS,
        ["plan", "--metric", "acc", "--by", "method", "--pair-on", "seed"],
        "exactly one",
    ),
    (
        "r.csv",
        RUNS,
        ["plan", "--metric", "acc", "--by", "method", "--pair-on", "seed", "--target-se", "-0.1"],
        "positive",
    ),
    ("r.csv", RUNS, ["summarize", "--metric", "acc", "--by", "method,"], "empty name"),
    ("r.csv", RUNS, ["summarize", "--by", "method"], "Missing option '--metric'"),
    (
        "r.csv",
        RUNS.replace("A,0", ",0"),
        ["summarize", "--metric", "acc", "--by", "method"],
        "is empty in data row",
    ),
]


@pytest.mark.parametrize("name, content, args, words", BAD)
def test_bad_input_gives_one_line_and_status_2(tmp_path, name, content, args, words):
    path = write(tmp_path, name, content)
    out = CliRunner().invoke(main, [args[0], path, *args[1:]])
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.output
    assert words in lines[0]
    assert "Traceback" not in out.output


def test_missing_file_is_one_line(tmp_path):
    out = run("summarize", str(tmp_path / "none.csv"), "--metric", "acc", "--by", "method")
    assert (
        out.exit_code == 2 and out.output.startswith("error: ") and "does not exist" in out.output
    )
