"""Tests of the ``vareval tuning-curve`` command and its demo section."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.cli.tuning import demo_section


@pytest.fixture
def results(tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "model": ["lstm"] * 25 + ["mlp"] * 25,
            "f1": np.concatenate([rng.beta(2, 3, 25), rng.beta(8, 2, 25)]),
        }
    )
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    return path


def _run(*args):
    return CliRunner().invoke(main, ["tuning-curve", *map(str, args)])


def test_table_output(results):
    out = _run(
        results, "--metric", "f1", "--by", "model", "--bounds", "0,1", "--ks", "1,2,5"
    )
    assert out.exit_code == 0, out.output
    assert "mlp better" in out.output
    assert "exact simultaneous coverage" in out.output
    lines = [
        ln
        for ln in out.output.splitlines()
        if ln.strip().startswith(("1 ", "2 ", "5 "))
    ]
    assert len(lines) == 3


def test_json_plot_and_projection(results, tmp_path):
    plot = tmp_path / "curves.png"
    out = _run(
        results, "--metric", "f1", "--by", "model", "--bounds", "0,1", "--json",
        "--band", "ks", "--confidence", "0.8", "--plot", plot, "--project", "3",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output[: out.output.rindex("}") + 1])
    assert payload["method"] == "ks" and payload["confidence"] == 0.8
    assert payload["comparisons"][0]["verdict"][0] == "mlp better"
    assert "projection" in payload["projection"]["assumption"]
    assert plot.stat().st_size > 1000


def test_minimize_flag(results):
    out = _run(
        results, "--metric", "f1", "--by", "model", "--bounds", "0,1", "--lower-is-better"
    )
    assert out.exit_code == 0
    assert "lower is better" in out.output
    assert "lstm better" in out.output


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--bounds", "1,0"], "a < b"),
        (["--bounds", "0,0.5"], "outside the bounds"),
        (["--bounds", "zero,1"], "--bounds"),
        (["--bounds", "0,1", "--confidence", "1.5"], "confidence"),
        (["--bounds", "0,1", "--confidence", "0"], "confidence"),
        (["--bounds", "0,1", "--ks", "0,1"], "k"),
        (["--bounds", "0,1", "--ks", "1,x"], "--ks"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(results, extra, words):
    out = _run(results, "--metric", "f1", "--by", "model", *extra)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert words in lines[0]
    assert "Traceback" not in out.output


def test_bad_table_rows_exit_2(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"model": ["a", "a", "b"], "f1": [0.1, None, 0.3]}).to_csv(
        path, index=False
    )
    out = _run(path, "--metric", "f1", "--by", "model", "--bounds", "0,1")
    assert out.exit_code == 2
    assert len(out.output.strip().splitlines()) == 1
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    out = _run(empty, "--metric", "f1", "--by", "model", "--bounds", "0,1")
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1


def test_ties_are_warned_on_stderr(tmp_path):
    path = tmp_path / "ties.csv"
    pd.DataFrame({"model": ["a"] * 4, "f1": [0.1, 0.1, 0.3, 0.4]}).to_csv(
        path, index=False
    )
    out = (
        CliRunner(mix_stderr=False).invoke(
            main,
            [
                "tuning-curve",
                str(path),
                "--metric",
                "f1",
                "--by",
                "model",
                "--bounds",
                "0,1",
            ],
        )
        if "mix_stderr" in CliRunner.__init__.__code__.co_varnames
        else CliRunner().invoke(
            main,
            [
                "tuning-curve",
                str(path),
                "--metric",
                "f1",
                "--by",
                "model",
                "--bounds",
                "0,1",
            ],
        )
    )
    assert out.exit_code == 0
    assert "warning: method 'a' has 1 tied value(s)" in (out.stderr or out.output)


def test_demo_section_reproduces_the_case_study():
    text = demo_section()
    assert "V-statistic puts the LSTM ahead from k = 20" in text
    assert "U-statistic from k = 14" in text
    rows = [
        ln.split() for ln in text.splitlines() if ln.split() and ln.split()[0].isdigit()
    ]
    verdicts = {
        int(r[0]): " ".join(r[-2:]) if r[-1] == "better" else " ".join(r[-3:])
        for r in rows
    }
    assert verdicts[1] == "mlp better"
    assert all(v == "need more data" for k, v in verdicts.items() if k >= 2)


def test_verdicts_with_four_models_name_the_compared_models(tmp_path):
    """With 3+ models the text names the pair's own models, as the JSON does."""
    rng = np.random.default_rng(3)
    names = ["A", "B", "C", "D"]
    scores = [rng.beta(2, 5, 30), rng.beta(3, 4, 30), rng.beta(2, 6, 30), rng.beta(9, 1, 30)]
    df = pd.DataFrame({"model": np.repeat(names, 30), "acc": np.concatenate(scores)})
    path = tmp_path / "four.csv"
    df.to_csv(path, index=False)
    args = [path, "--metric", "acc", "--by", "model", "--bounds", "0,1",
            "--ks", "1,5,30", "--confidence", "0.8"]  # fmt: skip
    text, js = _run(*args), _run(*args, "--json")
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    payload = json.loads(js.output[: js.output.rindex("}") + 1])
    lines = {ln.split(":", 1)[0]: ln for ln in text.output.splitlines() if " vs " in ln}
    assert len(lines) == 6
    for cmp in payload["comparisons"]:
        a, b = cmp["a"], cmp["b"]
        want = f"{a} vs {b}: " + "; ".join(
            f"k={k}: {v}" for k, v in zip([1, 5, 30], cmp["verdict"], strict=True)
        )
        assert lines[f"{a} vs {b}"] == want
        assert all(v in (f"{a} better", f"{b} better", "need more data") for v in cmp["verdict"])
    # D (beta(9, 1)) beats C (beta(2, 6)) at k = 1: named D, never a letter outside the pair
    assert lines["C vs D"].startswith("C vs D: k=1: D better")
    from vareval import tuning_curve

    res = tuning_curve(df, metric="acc", by="model", bounds=(0, 1), ks=[1, 5, 30], confidence=0.8)
    assert res.named_verdicts("C", "D") == payload["comparisons"][-1]["verdict"]
