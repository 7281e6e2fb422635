"""Which rows are one question: keyed by (task, question, filter, run), never pooled by doc id.

Two tasks sharing doc ids, two filters, two runs of one model and one log given twice,
read through `vareval evals`; and the refusals that name the file, sample and epoch.
"""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data.evals import eval_scores, plan_evals
from vareval.data.importers.evals import read_eval_log
from vareval.errors import DataError

LOGS = Path(__file__).parents[1] / "data" / "importers" / "eval_logs"
A, B = str(LOGS / "mock-a.eval"), str(LOGS / "mock-b.eval")


def evals(*args):
    return CliRunner().invoke(main, ["evals", *map(str, args)])


def _inspect(path, model, run, scores):
    samples = [{"id": i, "epoch": 1, "scores": {"match": {"value": v}},
                "metadata": {"passage": f"p{i // 4}"}} for i, v in enumerate(scores)]
    path.write_text(json.dumps({"eval": {"model": model, "task": "qa", "run_id": run},
                                "samples": samples}))
    return path


def _two_task_folder(tmp_path):
    """The harness' folder with a second task whose doc ids are the first's."""
    folder = tmp_path / "lm"
    shutil.copytree(LOGS / "lm_eval", folder)
    [first] = folder.glob("samples_toyqa_*.jsonl")
    lines = [json.loads(x) for x in first.read_text().splitlines()]
    for rec in lines:
        rec["acc"] = 1.0 - rec["acc"]
    (folder / first.name.replace("toyqa", "toyqb")).write_text(
        "\n".join(json.dumps(r) for r in lines))
    return folder, first


def test_two_tasks_sharing_doc_ids_are_different_questions(tmp_path):
    folder, _ = _two_task_folder(tmp_path)
    df = read_eval_log(folder)
    r = eval_scores(df, metric="acc")
    [row] = r.frame.to_dict("records")
    assert row["questions"] == 40 and row["samples_per_question"] == 1
    assert row["score"] == pytest.approx(0.5)  # each doc right in exactly one task
    out = evals("score", folder, "--metric", "acc", "--task", "toyqa", "--json")
    [m] = json.loads(out.stdout)["models"].values()
    assert m["n_questions"] == 20 and m["estimate"] == pytest.approx(df.loc[
        df["task"] == "toyqa", "acc"].mean())
    assert "--task: no answers of 'nope'" in evals("score", folder, "--metric", "acc",
                                                     "--task", "nope").output


def test_two_filters_are_two_scores_and_differing_filters_are_refused(tmp_path):
    folder, first = _two_task_folder(tmp_path)
    lines = [json.loads(x) for x in first.read_text().splitlines()]
    other = [{**r, "filter": "strict-match", "acc": 0.0} for r in lines]
    first.write_text("\n".join(json.dumps(r) for r in lines + other))
    r = evals("score", folder, "--metric", "acc")  # toyqb has no strict-match rows
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert ("the tasks hold different lm-evaluation-harness filters (toyqa: none, "
            "strict-match; toyqb: none)") in r.output and "--task" in r.output
    # one task: one score per filter, each on its own answers, never pooled
    df = read_eval_log(folder)
    toyqa = df[df["task"] == "toyqa"]
    r = evals("score", folder, "--metric", "acc", "--task", "toyqa", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["filters"]
    api = eval_scores(toyqa, metric="acc")
    for filt in ("none", "strict-match"):
        [m] = got[filt].values()
        want = toyqa.loc[toyqa["filter"] == filt, "acc"].mean()
        assert m["estimate"] == pytest.approx(want, abs=1e-12) and m["n_questions"] == 20
        assert m["samples_per_question"] == 1
        [(model, _)] = [k for k in api.results if k[1] == filt]
        same = api[model, filt]  # the API: the same numbers
        assert (same.estimate, same.low, same.high) == (m["estimate"], m["low"], m["high"])
    text = evals("score", folder, "--metric", "acc", "--task", "toyqa")
    assert "per lm-evaluation-harness filter (2, each on its own answers)" in text.output
    r = evals("score", folder, "--metric", "acc", "--filter", "strict-match", "--json")
    [m] = json.loads(r.stdout)["models"].values()
    assert m["estimate"] == 0.0 and m["n_questions"] == 20  # toyqb has no strict-match rows
    r = evals("compare", folder, "--metric", "acc", "--task", "toyqa")  # compare still asks
    assert r.exit_code == 2 and "holds 2 lm-evaluation-harness filters" in r.output
    r = evals("table", folder, "--metric", "acc", "--task", "toyqa")
    assert r.exit_code == 2 and "one score per model and task: choose one" in r.output


def test_the_same_log_twice_and_two_runs_of_one_model(tmp_path):
    r = evals("score", A, A, "--errors", "incorrect")
    assert r.exit_code == 2 and "one answer logged twice (the same log given twice?)" in r.output
    assert "mock-a.eval sample q1 epoch 1" in r.output
    one = _inspect(tmp_path / "zero-shot.json", "m", "run-0shot", [1, 0, 1, 1, 0, 1, 1, 1])
    two = _inspect(tmp_path / "five-shot.json", "m", "run-5shot", [1, 1, 1, 1, 0, 1, 1, 1])
    r = evals("score", one, two)
    assert r.exit_code == 2 and "model 'm' holds 2 runs ('run-0shot', 'run-5shot')" in r.output
    assert "--model run" in r.output
    r = evals("compare", one, two, "--model", "run", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["models"] == ["run-5shot", "run-0shot"] and out["estimate"] == [0.125]
    r = evals("score", one, two, "--where", "run == 'run-0shot'", "--json")
    assert json.loads(r.stdout)["models"]["m"]["estimate"] == 0.75


def test_errors_are_named_by_file_sample_and_epoch_and_nan_needs_no_dropna(tmp_path):
    r = evals("score", A)
    assert r.exit_code == 2
    assert ("(status 'failed': mock-a.eval sample q5 epoch 1, mock-a.eval sample q5 epoch 2, "
            "mock-a.eval sample q5 epoch 3)") in r.output
    df = read_eval_log(B)
    df.loc[3, "match"] = float("nan")
    with pytest.raises(DataError, match="mock-b.eval sample") as err:
        eval_scores(df, metric="match")
    assert "--dropna" not in str(err.value)


def test_plan_refuses_a_model_against_itself_and_takes_errors_exclude(tmp_path):
    r = evals("plan", A, B, "--errors", "incorrect", "--of", "mockllm/mock-a", "--baseline",
              "mockllm/mock-a")
    assert r.exit_code == 2 and "--of and --baseline both name 'mockllm/mock-a'" in r.output
    df = pd.concat([read_eval_log(A), read_eval_log(B)], ignore_index=True)
    keep = ~((df["question"] == "q5") & (df["epoch"] == 1) & (df["status"] == "failed"))
    df.loc[~keep, "status"] = "done"  # q5 of mock-a now errored in epochs 2 and 3 only
    df.loc[~keep, "match"] = 1.0
    with pytest.warns(UserWarning, match="1 question"):
        p = plan_evals(df, metric="match", sample="epoch", of="mockllm/mock-b",
                       baseline="mockllm/mock-a", errors="exclude")
    assert p.pilot_questions == 23
    r = evals("compare", A, B, "--errors", "exclude")
    assert r.exit_code == 0, r.output
    r = evals("plan", A, B, "--errors", "exclude", "--of", "mockllm/mock-b", "--baseline",
              "mockllm/mock-a")
    assert r.exit_code == 0, r.output


def test_table_with_tasks_scoring_different_metrics(tmp_path):
    folder, _ = _two_task_folder(tmp_path)
    [second] = folder.glob("samples_toyqb_*.jsonl")
    lines = [json.loads(x) for x in second.read_text().splitlines()]
    for rec in lines:
        rec["metrics"], rec["exact_match"] = ["exact_match"], rec.pop("acc")
    second.write_text("\n".join(json.dumps(r) for r in lines))
    r = evals("table", folder, "--metric", "acc")
    assert r.exit_code == 0, r.output
    assert "task(s) without acc, left out: toyqb" in r.stderr
    assert [x.split(",")[1] for x in r.stdout.splitlines()[1:]] == ["toyqa"]
    r = evals("table", folder, "--metric", "exact_match")
    assert [x.split(",")[1] for x in r.stdout.splitlines()[1:]] == ["toyqb"]


def test_groups_from_group_subtasks_and_their_refusals(tmp_path):
    folder, _ = _two_task_folder(tmp_path)
    [results] = folder.glob("results_*.json")
    data = json.loads(results.read_text())
    data["group_subtasks"] = {"toyall": ["toyq"], "toyq": ["toyqa", "toyqb"]}
    results.write_text(json.dumps(data))
    df = read_eval_log(folder)
    assert set(df["group"]) == {"toyq"}
    assert df.attrs["groups"] == {"toyall": ["toyqa", "toyqb"], "toyq": ["toyqa", "toyqb"]}
    r = evals("score", folder, "--metric", "acc", "--groups", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["groups"]
    [m] = got["toyq"]["models"].values()
    assert m["estimate"] == pytest.approx(df["acc"].mean()) and m["n_questions"] == 40
    by_task = eval_scores(df, metric="acc", groups={"a": ["toyqa"]})
    [(key, one)] = by_task.results.items()
    assert key[0] == "a" and one.estimate == pytest.approx(df.loc[df["task"] == "toyqa",
                                                                  "acc"].mean())
    with pytest.raises(DataError, match="group 'b' names task"):
        eval_scores(df, metric="acc", groups={"b": ["nope"]})
    r = evals("score", A, B, "--errors", "incorrect", "--groups")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "name no lm-evaluation-harness groups" in r.output
    data["group_subtasks"] = {"toyq": "toyqa"}
    results.write_text(json.dumps(data))
    r = evals("score", folder, "--metric", "acc")
    assert r.exit_code == 2 and "group_subtasks" in r.output and "a list of task names" in (
        r.output)


def test_groups_of_different_sizes_name_every_count_of_independent_units(tmp_path):
    folder, _ = _two_task_folder(tmp_path)
    [results] = folder.glob("results_*.json")
    data = json.loads(results.read_text())
    data["group_subtasks"] = {"both": ["toyqa", "toyqb"], "one": ["toyqa"]}
    results.write_text(json.dumps(data))
    r = evals("score", folder, "--metric", "acc", "--groups")
    assert r.exit_code == 0, r.output
    df = read_eval_log(folder)
    n_one = df.loc[df["task"] == "toyqa", "question"].nunique()
    assert f"independent units: {n_one} to 40 questions (no --cluster), per row" in r.output
