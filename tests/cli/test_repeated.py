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
    out = run(
        "best-of-k", results, "--metric", "acc", "--ks", "1,3", "--resamples", "1000", "--json"
    )
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


def test_demo_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the demo writes vareval-demo/report.html here
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
    ("r.csv", RUNS, ["best-of-k", "--metric", "acc", "--resamples", "0"], "--resamples"),
    (
        "r.csv",
        RUNS,
        ["summarize", "--metric", "acc", "--by", "method", "--confidence", "1.5"],
        "--confidence",
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
            "--compare", "A,C",
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
            "--compare", "A,A",
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


def _digits(tmp_path):
    from vareval import datasets

    path = tmp_path / "digits_runs.csv"
    path.write_bytes(datasets.path("digits_runs.csv").read_bytes())
    return str(path)


PAIRED = ["--metric", "accuracy", "--by", "method", "--pair-on", "seed", "--resamples", "500"]


@pytest.mark.parametrize("family", [["--all-pairs"], ["--baseline", "logreg"]])
def test_paired_families_are_holm_adjusted_as_statsmodels_does(family, tmp_path):
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    path = _digits(tmp_path)
    out = run("paired", path, *PAIRED, *family, "--test", "corrected", "--test-fraction", "0.3",
              "--json")  # fmt: skip
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    expected = (
        ["logreg - mlp", "logreg - forest", "mlp - forest"]
        if family == ["--all-pairs"]
        else ["mlp - logreg", "forest - logreg"]
    )
    assert list(got) == expected
    p = [got[k]["pvalue"] for k in expected]
    holm = multipletests(p, method="holm")[1]
    assert [got[k]["pvalue_holm"] for k in expected] == pytest.approx(holm, rel=1e-12)
    # each comparison is the two-method comparison of the same pair
    a, b = expected[0].split(" - ")
    one = run("paired", path, *PAIRED, "--compare", f"{a},{b}", "--test", "corrected",
              "--test-fraction", "0.3", "--json")  # fmt: skip
    assert json.loads(one.stdout)[expected[0]]["pvalue"] == pytest.approx(p[0], rel=1e-12)
    text = run("paired", path, *PAIRED, *family, "--test", "corrected", "--test-fraction",
               "0.3").stdout  # fmt: skip
    assert "p-values Holm-adjusted within this metric" in text


def test_paired_refuses_two_ways_of_choosing_the_pairs(tmp_path):
    path = _digits(tmp_path)
    out = run("paired", path, *PAIRED, "--baseline", "logreg", "--all-pairs")
    assert out.exit_code == 2 and "give one of --compare, --baseline or --all-pairs" in out.stderr
    out = run("paired", path, *PAIRED, "--baseline", "svm")
    assert out.exit_code == 2 and "--baseline 'svm' is not a method" in out.stderr


def test_summarize_several_metrics_and_no_runs(tmp_path):
    import pandas as pd

    path = _digits(tmp_path)
    df = pd.read_csv(path).assign(error=lambda d: 1 - d["accuracy"])
    df.to_csv(path, index=False)
    both = run("summarize", path, "--metric", "accuracy,error", "--by", "method", "--json")
    got = json.loads(both.stdout)
    assert list(got) == ["accuracy", "error"]
    alone = run("summarize", path, "--metric", "error", "--by", "method", "--json")
    assert got["error"] == json.loads(alone.stdout)
    text = run("summarize", path, "--metric", "accuracy,error", "--by", "method").stdout
    assert text.count("every run:") == 2 and text.startswith("accuracy: ")
    assert "\n\nerror: " in text
    hidden = run("summarize", path, "--metric", "accuracy", "--by", "method", "--no-runs").stdout
    assert "every run:" not in hidden and "selected" in hidden


def test_summarize_caps_the_runs_it_prints(tmp_path):
    import numpy as np
    import pandas as pd

    from vareval.cli.repeated import RUNS_SHOWN

    path = tmp_path / "many.csv"
    scores = np.random.default_rng(0).random(RUNS_SHOWN + 7)
    pd.DataFrame({"method": "a", "score": scores}).to_csv(path, index=False)
    out = CliRunner().invoke(main, ["summarize", str(path), "--metric", "score", "--by", "method"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    line = lines[lines.index("every run:") + 1]
    assert len(line.split()) == 1 + RUNS_SHOWN + 6 and "7 more (--runs shows all)" in line
    full = CliRunner().invoke(
        main, ["summarize", str(path), "--metric", "score", "--by", "method", "--runs"]
    )
    lines = full.output.splitlines()
    line = lines[lines.index("every run:") + 1]
    assert len(line.split()) == 1 + RUNS_SHOWN + 7 and "more" not in line
    none = CliRunner().invoke(
        main, ["summarize", str(path), "--metric", "score", "--by", "method", "--no-runs"]
    )
    assert "every run" not in none.output
