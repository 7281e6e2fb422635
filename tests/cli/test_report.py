import re

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main


@pytest.fixture
def results(tmp_path):
    df = pd.DataFrame(
        {
            "method": ["A"] * 3 + ["B"] * 3,
            "seed": [0, 1, 2] * 2,
            "acc": [0.831, 0.847, 0.822, 0.818, 0.835, 0.809],
        }
    )
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_report_writes_the_page(results, tmp_path):
    out = tmp_path / "r.html"
    res = run(
        "report",
        results,
        "-o",
        out,
        "--metric",
        "acc",
        "--by",
        "method",
        "--pair-on",
        "seed",
        "--title",
        "My <runs>",
        "--test-set-held-out",
        "--test",
        "corrected",
        "--test-fraction",
        "0.2",
        "--search-effort",
        "none",
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"wrote {out}")
    html = out.read_text(encoding="utf-8")
    assert "<title>My &lt;runs&gt;</title>" in html
    assert "stayed outside all modelling decisions" in html
    assert "the whole data-sampling pipeline" in html
    assert 'id="summaries"' in html


def test_test_set_flag_both_ways(results, tmp_path):
    out = tmp_path / "r.html"
    assert (
        run(
            "report",
            results,
            "-o",
            out,
            "--metric",
            "acc",
            "--by",
            "method",
            "--test-set-reused",
        ).exit_code
        == 0
    )
    assert "used in modelling decisions" in out.read_text(encoding="utf-8")
    assert (
        run("report", results, "-o", out, "--metric", "acc", "--by", "method").exit_code
        == 0
    )
    assert "Unknown: vareval cannot tell" in out.read_text(encoding="utf-8")


def test_lower_is_better(results, tmp_path):
    out = tmp_path / "r.html"
    res = run(
        "report",
        results,
        "-o",
        out,
        "--metric",
        "acc",
        "--by",
        "method",
        "--lower-is-better",
    )
    assert res.exit_code == 0
    assert "0.8220 (selected)" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args, match",
    [
        (
            ["--metric", "accuracy", "--by", "method"],
            "metric column 'accuracy' not found",
        ),
        (["--metric", "acc"], "--by is required"),
        (["--metric", "acc", "--by", "method", "--baseline", "C"], "--baseline 'C'"),
        (["--metric", "acc", "--by", "method", "--confidence", "2"], "--confidence"),
        (["--metric", "acc", "--by", "method,"], "empty name"),
        (["--metric", "acc", "--by", "method", "-o", "r.txt"], "must end in .html"),
    ],
)
def test_user_errors_give_one_line_and_status_2(
    results, tmp_path, monkeypatch, args, match
):
    monkeypatch.chdir(tmp_path)
    res = run("report", results, *args)
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0]
    assert "Traceback" not in res.output


def test_unknown_file_type(tmp_path):
    path = tmp_path / "runs.xlsx"
    path.write_text("x")
    res = run("report", path, "--metric", "acc", "--by", "method")
    assert res.exit_code == 2 and "unknown file type" in res.output


def test_store_without_reader_is_a_clear_error(tmp_path, monkeypatch):
    import vareval.cli.report as cli_report

    monkeypatch.setattr(cli_report, "_store_reader", lambda: None)
    path = tmp_path / "runs.db"
    path.write_bytes(b"")
    res = run("report", path, "--metric", "acc")
    assert res.exit_code == 2 and "cannot read stores" in res.output


def test_store_context_from_a_declaration():
    from vareval.cli.report import store_context

    ctx = store_context(
        {
            "sources": ["data_split", "init", "batch_order"],
            "fixed": ["data_split"],
            "split": "data_split",
            "space": {"lr": {}, "hidden": {}},
            "configs": 2,
            "seeds": 3,
            "nested": True,
            "reruns": 2,
            "rerun_mode": "same",
        }
    )
    assert ctx["repeated"] == "training"  # the data split was held fixed
    assert [r["varied"] for r in ctx["randomness"]] == [False, True, True]
    assert "2 configuration(s) sampled per seed" in ctx["search_effort"]
    assert (
        store_context({"sources": ["data_split", "init"], "split": "data_split"})[
            "repeated"
        ]
        == "data-sampling"
    )
    # a source's name is no declaration: the trial may keep one test set
    assert "repeated" not in store_context({"sources": ["data_split", "init"]})
    assert "repeated" not in store_context({"sources": ["init"]})


def test_demo_section_writes_the_report(tmp_path):
    from vareval.cli.report import demo_section

    text = demo_section(tmp_path / "demo")
    path = tmp_path / "demo" / "report.html"
    assert str(path.resolve()) in text
    assert re.search(r"<section id=\"summaries\">", path.read_text(encoding="utf-8"))


def test_demo_command_ends_with_the_report_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert str((tmp_path / "vareval-demo" / "report.html").resolve()) in res.output


@pytest.mark.parametrize(
    "args, match",
    [
        (["--bounds", "0,1"], "--bounds needs --search"),
        (["--search", "SEARCH"], "--search needs --bounds"),
        (["--search", "SEARCH", "--bounds", "0"], "--bounds must be two"),
    ],
)
def test_tuning_flags_are_checked(results, args, match):
    args = [str(results) if a == "SEARCH" else a for a in args]
    res = run("report", results, "--metric", "acc", "--by", "method", *args)
    assert res.exit_code == 2 and match in res.output


def test_predictions_flag_adds_the_significance_section(results, tmp_path):
    pytest.importorskip("vareval.data.significance")
    preds = tmp_path / "preds.csv"
    pd.DataFrame(
        {"gold": [0, 1, 1, 0] * 10, "x": [0, 1, 0, 0] * 10, "y": [0, 1, 1, 1] * 10}
    ).to_csv(preds, index=False)
    out = tmp_path / "r.html"
    res = run(
        "report",
        results,
        "-o",
        out,
        "--metric",
        "acc",
        "--by",
        "method",
        "--predictions",
        preds,
        "--gold",
        "gold",
    )
    assert res.exit_code == 0, res.output
    assert '<section id="significance">' in out.read_text(encoding="utf-8")


def test_report_from_a_run_store(tmp_path):
    pytest.importorskip("vareval.data.store_table")
    runner = pytest.importorskip("vareval.experiment.runner")
    spec_mod = pytest.importorskip("vareval.experiment.spec")
    spec = spec_mod.ExperimentSpec(
        trial="vareval.experiment._demo:logistic_trial",
        factors={"optimizer": ["sgd", "momentum"]},
        seeds=3,
        configs=2,
        reruns=1,
        space={"lr": spec_mod.Distribution("log-uniform", low=0.01, high=0.3)},
        sources=("data_split", "init", "batch_order"),
        fixed=("data_split",),
        split="data_split",
        entropy=2026,
    )
    store = tmp_path / "runs.db"
    runner.run(spec, store, engine="serial", progress=False)
    out = tmp_path / "r.html"
    res = run("report", store, "-o", out, "--metric", "accuracy")
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "source of randomness" in html
    assert "Sources varied: init, batch_order; held fixed: data_split." in html
    assert "training only, on fixed data" in html  # inferred: the split was held fixed
    assert "2 configuration(s) sampled per seed" in html
    assert (
        "optimizer (2) x 3 seed(s) x 2 configuration(s) per seed x 1 rerun(s)" in html
    )
    assert "<td>trial_id</td><td>bookkeeping</td>" in html
    assert "<td>lr</td><td>hyper-parameter</td>" in html


def test_unwritable_output_is_one_line(results, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = run(
        "report", results, "-o", blocker / "r.html", "--metric", "acc", "--by", "method"
    )
    assert res.exit_code == 2 and "cannot be written" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_json_output(results, tmp_path):
    import json

    out = tmp_path / "r.html"
    res = run(
        "report",
        results,
        "-o",
        out,
        "--metric",
        "acc",
        "--by",
        "method",
        "--pair-on",
        "seed",
        "--json",
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert payload["path"] == str(out) and payload["bytes"] == out.stat().st_size
    assert payload["sections"][:2] == ["design", "summaries"]
    assert payload["sections"][-1] == "checklist"
    statuses = {i["topic"]: i["status"] for i in payload["checklist"]}
    assert statuses["Final test set held out"] == "warn"


def test_human_output_names_what_to_state(results, tmp_path):
    out = tmp_path / "r.html"
    res = run("report", results, "-o", out, "--metric", "acc", "--by", "method")
    assert res.exit_code == 0
    assert "to state: final test set held out" in res.output
    assert "to state: repetitions and what was repeated" in res.output


@pytest.mark.parametrize("fmt, magic", [("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_figures_are_written_as_files(results, tmp_path, fmt, magic):
    folder = tmp_path / "figs"
    res = run(
        "report", results, "-o", tmp_path / "r.html", "--metric", "acc", "--by", "method",
        "--pair-on", "seed", "--figures", folder, "--format", fmt, "--width", "3.3",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in folder.iterdir())
    assert f"scores.{fmt}" in names and f"paired-differences.{fmt}" in names
    assert f"wrote {len(names)} figures to {folder} ({fmt}, 3.3 in wide)" in res.output
    assert all((folder / n).read_bytes().startswith(magic) for n in names)


def test_figure_flags_are_checked(results, tmp_path):
    base = ("report", results, "-o", tmp_path / "r.html", "--metric", "acc", "--by", "method")
    res = run(*base, "--figures", tmp_path / "f", "--format", "jpg")
    assert res.exit_code == 2 and "--format" in res.output
    res = run(*base, "--figures", tmp_path / "f", "--width", "0")
    assert res.exit_code == 2 and "--width" in res.output
