"""The report's evals section: its numbers are `vareval evals score|compare --json`'s."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vareval import datasets
from vareval.cli import main
from vareval.report.builder import collect
from vareval.report.sections._base import interval, num
from vareval.report.sections.significance import pvalue

LOGS = Path(__file__).parents[1] / "data" / "importers" / "eval_logs"
FILES = [str(LOGS / "mock-a.eval"), str(LOGS / "mock-b.eval")]


def _cli(*args, cluster="passage"):
    flags = ["--errors", "incorrect"] + (["--cluster", cluster] if cluster else [])
    r = CliRunner().invoke(main, ["evals", *args, *FILES, *flags, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _section(seed=0, cluster="passage", n_resamples=10_000):
    from vareval.cli.report import _evals_spec

    spec = _evals_spec(FILES, None, cluster, "incorrect")
    data, sections, _, _ = collect(
        datasets.load("digits_runs.csv"), metric="accuracy", by="method", seed=seed,
        n_resamples=n_resamples, best_of_k_resamples=200, extras={"evals": spec},
    )  # fmt: skip
    [section] = [s for s in sections if s.id == "evals"]
    return section, data.facts["evals"]


@pytest.mark.parametrize(("seed", "cluster"), [(0, "passage"), (3, None)])
def test_the_sections_numbers_are_evals_compare_and_score_json(seed, cluster):
    """The section shows what `evals score` and `evals compare` print, to the last bit."""
    section, facts = _section(seed, cluster)
    scores, pairs = [b for b in section.blocks if b.kind == "table"]
    want = _cli("score", cluster=cluster)["models"]
    assert [r[0] for r in scores.rows] == list(want)
    for row, r in zip(scores.rows, want.values(), strict=True):
        assert row[1:7] == [num(r["estimate"]), interval((r["low"], r["high"])), num(r["se"]),
                            r["interval"], str(r["n_questions"]), str(r["n_clusters"])]  # fmt: skip
    comp = _cli("compare", "--seed", str(seed), cluster=cluster)
    assert comp["n_resamples"] == 0 and comp["test"] == "newcombe"  # the interval's own test
    expect = [
        [a, b, num(e), interval((lo, hi)), num(se), pvalue(p), pvalue(q)]
        for a, b, e, lo, hi, se, p, q in zip(
            comp["a"], comp["b"], comp["estimate"], comp["low"], comp["high"], comp["se"],
            comp["pvalue"], comp["pvalue_adjusted"], strict=True,
        )
    ]  # fmt: skip
    assert pairs.rows == expect
    got = facts["comparison"].to_dict()
    comp.pop("seed")
    assert {k: got[k] for k in comp} == comp  # the same numbers, to the last bit
    unit = "clusters (passage)" if cluster else "questions, each independent"
    assert f"{comp['n_clusters']} {unit}" in pairs.caption
    assert f"by {comp['correction']}" in pairs.caption
    tiers = next(b.text for b in section.blocks if b.kind == "paragraph" and "Tied" in b.text)
    groups = re.findall(r"\{(.*?)\}", tiers)
    by_tier = {}
    for m, t in zip(comp["models"], comp["tier"], strict=True):
        by_tier.setdefault(t, []).append(m)
    assert groups == [", ".join(by_tier[t]) for t in sorted(by_tier)]
    assert any(b.kind == "figure" and b.name == "eval-differences" for b in section.blocks)


def test_the_report_command_takes_eval_logs_and_says_the_unit(tmp_path):
    datasets.load("digits_runs.csv").to_csv(tmp_path / "runs.csv", index=False)
    out = tmp_path / "report.html"
    args = ["report", str(tmp_path / "runs.csv"), "--metric", "accuracy", "--by", "method",
            "-o", str(out), "--evals", FILES[0], "--evals", FILES[1], "--evals-cluster",
            "passage", "--evals-errors", "incorrect", "--json"]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "evals" in json.loads(r.stdout)["sections"]
    html = out.read_text()
    assert "Independent unit: 6 clusters (passage)" in html
    assert 'data-figure="eval-differences"' in html
    item = next(i for i in json.loads(r.stdout)["checklist"] if i["topic"].startswith("Eval"))
    assert "over 6 independent units (wilson)" in item["text"]
    assert "2 tied groups of 2 models" in item["text"]
    assert "State the 3 errored answers" in item["text"]


def test_one_line_errors_for_the_evals_options(tmp_path):
    datasets.load("digits_runs.csv").to_csv(tmp_path / "runs.csv", index=False)
    base = ["report", str(tmp_path / "runs.csv"), "--metric", "accuracy", "--by", "method",
            "-o", str(tmp_path / "r.html")]  # fmt: skip
    r = CliRunner().invoke(main, [*base, "--evals-cluster", "passage"])
    assert r.exit_code == 2 and r.output == "error: --evals-metric and --evals-cluster need " \
        "--evals FILE.\n"
    r = CliRunner().invoke(main, [*base, "--evals", FILES[0]])  # errored answers, refused
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("error: the evals section cannot be built")
    assert "3 errored" in r.output


@pytest.mark.parametrize("via", ["eval", "import"])
def test_the_report_of_an_eval_is_the_evals_analysis(tmp_path, via):
    """An .eval log (or the `evals import` table) as INPUT: the evals section alone, the
    same numbers as `evals compare`, no per-method intervals over answers."""
    if via == "eval":
        first = FILES[0]
    else:
        first = str(tmp_path / "answers.csv")
        assert CliRunner().invoke(main, ["evals", "import", *FILES, "-o", first]).exit_code == 0
    more = ["--evals", FILES[1]] if via == "eval" else []
    args = ["report", first, "--metric", "match", *more, "--evals-cluster", "passage",
            "--evals-errors", "incorrect", "-o", str(tmp_path / "r.html"), "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["sections"] == ["evals", "checklist"]
    assert [i["topic"] for i in out["checklist"]] == ["Eval scores and their unit"]
    html = (tmp_path / "r.html").read_text()
    assert "(selected)" not in html and "Interval and test are one procedure" in html
    comp = _cli("compare", "--seed", "0", cluster="passage")
    for e in comp["estimate"]:
        assert num(e) in html


def test_two_filters_are_two_rows_of_the_report_as_in_evals_score(tmp_path):
    import shutil

    folder = tmp_path / "lm"
    shutil.copytree(LOGS / "lm_eval", folder)
    [file] = folder.glob("samples_*.jsonl")
    lines = [json.loads(x) for x in file.read_text().splitlines()]
    file.write_text("\n".join(json.dumps(r) for r in lines + [
        {**r, "filter": "strict-match", "acc": 0.0} for r in lines]))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(file), "--metric", "acc", "-o", str(out)])
    assert r.exit_code == 0, r.output
    scores = CliRunner().invoke(main, ["evals", "score", str(file), "--metric", "acc", "--json"])
    html = out.read_text()
    for filt, models in json.loads(scores.stdout)["filters"].items():
        [(model, m)] = models.items()
        assert f"{model} ({filt})" in html
        assert interval((m["low"], m["high"])) in html
