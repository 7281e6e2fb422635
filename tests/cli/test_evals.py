"""vareval evals through the command, on logs written by inspect_ai and lm-evaluation-harness.

The fixtures in tests/data/importers/eval_logs were written by the harnesses' own
code, offline (tests/data/importers/_make_eval_logs.py).
"""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data.importers.evals import from_inspect, from_lm_eval, read_eval_log

LOGS = Path(__file__).parents[1] / "data" / "importers" / "eval_logs"
A, B, C = (str(LOGS / f) for f in ("mock-a.eval", "mock-b.eval", "mock-c.json"))


def run(*args):
    return CliRunner().invoke(main, ["evals", *args])


def test_inspect_eval_log_keeps_every_epoch_and_errored_sample():
    df = from_inspect(A)
    assert len(df) == 24 * 3 and sorted(df["epoch"].unique()) == [1, 2, 3]
    failed = df[df["status"] == "failed"]
    assert len(failed) == 3 and set(failed["question"]) == {"q5"}
    assert failed["match"].isna().all() and (failed["error"] != "").all()
    assert df.attrs["scores"] == ["match"] and df["passage"].nunique() == 6


@pytest.mark.parametrize("name", ["mock-a.eval", "mock-b.eval"])
def test_eval_zip_read_as_inspect_ai_reads_it(name):
    """The zstd zip is read without inspect_ai: same samples, order, errors and scores
    as inspect_ai's read_eval_log (its output stored by _make_eval_logs.py)."""
    ref = json.loads((LOGS / "inspect_read.json").read_text())[name]
    df = from_inspect(LOGS / name)
    values = {"C": 1.0, "I": 0.0}
    pairs = list(zip(df["question"], df["epoch"], strict=True))
    assert pairs == [(r["id"], r["epoch"]) for r in ref]
    assert df["error"].tolist() == [r["error"] or "" for r in ref]
    expected = [values[r["scores"]["match"]] if r["scores"] else np.nan for r in ref]
    np.testing.assert_array_equal(df["match"], expected)
    assert df["passage"].tolist() == [r["metadata"]["passage"] for r in ref]


def test_unreadable_eval_archive_is_one_line(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(Path(A).read_bytes()[:5000])
    out = run("score", str(bad))
    assert out.exit_code == 2 and out.output.count("\n") == 1
    assert out.output.startswith(f"error: {bad}: not a readable inspect_ai .eval log")


def test_corrupt_zstd_member_is_one_line(tmp_path):
    import zipfile

    data = bytearray(Path(B).read_bytes())
    info = next(i for i in zipfile.ZipFile(B).infolist() if i.filename.startswith("samples/"))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 8:start + 40] = bytes(b ^ 0xFF for b in data[start + 8:start + 40])
    bad = tmp_path / "corrupt.eval"
    bad.write_bytes(bytes(data))
    out = run("score", str(bad))
    assert out.exit_code == 2 and out.output.count("\n") == 1
    assert out.output.startswith(f"error: {bad}: not a readable inspect_ai .eval log")


def test_inspect_json_log_is_read_without_inspect_ai():
    df = read_eval_log(C)
    assert len(df) == 8 * 2 and int((df["status"] == "failed").sum()) == 2
    assert set(df.loc[df["status"] == "done", "match"]) <= {0.0, 1.0}


def test_lm_eval_samples_beside_results():
    df = from_lm_eval(LOGS / "lm_eval")
    assert len(df) == 20 and df["task"].unique().tolist() == ["toyqa"]
    assert "acc" in df.attrs["scores"] and df["passage"].nunique() == 5
    raw = [json.loads(line) for f in (LOGS / "lm_eval").glob("samples_*.jsonl")
           for line in f.read_text().splitlines() if line.strip()]
    assert df["acc"].mean() == pytest.approx(np.mean([r["acc"] for r in raw]))


def test_errored_answers_refused_by_default_one_line_exit_2():
    out = run("score", A, B)
    assert out.exit_code == 2
    assert out.output.startswith("error: 3 errored answer(s)") and out.output.count("\n") == 1


def test_score_json_matches_the_log_and_counts_errors():
    out = run("score", A, B, "--cluster", "passage", "--errors", "exclude", "--json")
    assert out.exit_code == 0, out.output
    models = json.loads(out.output[out.output.index("{"):])["models"]
    df = read_eval_log(A)
    done = df[df["status"] == "done"]
    assert models["mockllm/mock-a"]["estimate"] == pytest.approx(
        done.groupby("question")["match"].mean().mean())
    assert models["mockllm/mock-a"]["n_questions"] == 23
    assert models["mockllm/mock-b"]["n_clusters"] == 6


def test_score_text_names_clusters_and_errors():
    out = run("score", A, B, "--cluster", "passage", "--errors", "incorrect")
    assert out.exit_code == 0, out.output
    assert "errored answers scored 0: 3 (mockllm/mock-a: 3)" in out.output
    assert "independent units: 6 clusters (passage)" in out.output


def test_compare_text_and_json_agree():
    args = ("compare", A, B, "--cluster", "passage", "--errors", "incorrect", "--seed", "3")
    text, js = run(*args), run(*args, "--json")
    assert text.exit_code == 0 and js.exit_code == 0, text.output
    r = json.loads(js.output[js.output.index("{"):])
    df = read_eval_log(A).fillna({"match": 0.0})
    b = read_eval_log(B)
    diff = b["match"].mean() - df["match"].mean()
    assert abs(np.ravel(r["estimate"])[0]) == pytest.approx(abs(diff))
    assert "tiers (adjusted p >= alpha 0.05: the data cannot separate" in text.output
    assert f"{abs(diff):.4f}" in text.output


def test_pass_at_k_equals_brute_force_over_subsets():
    from itertools import combinations

    out = run("pass-at-k", B, "-k", "2", "--json")
    assert out.exit_code == 0, out.output
    est = json.loads(out.output)["models"]["mockllm/mock-b"]["estimate"]
    df = read_eval_log(B)
    per_q = [
        np.mean([max(s) for s in combinations(g["match"].tolist(), 2)])
        for _, g in df.groupby("question")
    ]
    assert est == pytest.approx(np.mean(per_q), rel=1e-12)


def test_plan_and_import():
    out = run("plan", str(LOGS / "lm_eval"), "--cluster", "passage", "--target-se", "0.02")
    assert out.exit_code == 0, out.output
    assert "pilot: 20 questions" in out.output and "questions for SE 0.02" in out.output
    imp = run("import", C)
    assert imp.exit_code == 0 and imp.output.count("\n") == 1 + 16


def test_bad_arguments_one_line():
    out = run("score", str(LOGS / "lm_eval"), "--cluster", "nope")
    assert out.exit_code == 2 and out.output.startswith("error:") and "nope" in out.output
    assert out.output.count("\n") == 1
