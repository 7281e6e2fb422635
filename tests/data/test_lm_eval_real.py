"""The lm-evaluation-harness reader on logs the harness itself writes, offline.

lm-evaluation-harness runs its ``dummy`` model on local YAML tasks whose
``dataset_path: json`` points at files in tests/data/importers/lm_eval_tasks: two
multiple-choice tasks sharing doc ids (``toymc_a``, ``toymc_b``: two tasks in one
folder) and a generation task with two filters (``toygen``). The harness lives in its
own environment; ``VAREVAL_LM_EVAL`` is the path of its ``lm_eval`` command (.ci/run
installs it). Without it these tests skip.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data.evals import eval_scores
from vareval.data.importers.evals import from_lm_eval

LM_EVAL = os.environ.get("VAREVAL_LM_EVAL", "")
pytestmark = pytest.mark.skipif(
    not (LM_EVAL and Path(LM_EVAL).exists()),
    reason="lm-evaluation-harness not installed (set VAREVAL_LM_EVAL to its lm_eval command)",
)
DATA = Path(__file__).parent / "importers" / "lm_eval_tasks"
MC = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/mc.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: ["yes", "no"]
doc_to_target: "{{{{0 if answer == 'yes' else 1}}}}"
metric_list:
  - metric: acc
"""
GEN = r"""task: toygen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/gen.jsonl
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\n"]
metric_list:
  - metric: exact_match
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "(\\d+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: take_first
"""


GROUPS = """group: toymc
task:
  - toymc_a
  - toymc_b
aggregate_metric_list:
  - metric: acc
    aggregation: mean
    weight_by_size: true
"""
SUITE = """group: toysuite
task:
  - toymc
  - toygen
"""


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """lm_eval --model dummy --log_samples on the three tasks in two nested groups: its
    --output_path folder."""
    tmp = tmp_path_factory.mktemp("lm_eval")
    for name in ("toymc_a", "toymc_b"):
        (tmp / f"{name}.yaml").write_text(MC.format(name=name, data=DATA))
    (tmp / "toygen.yaml").write_text(GEN.format(data=DATA))
    (tmp / "toymc.yaml").write_text(GROUPS)  # groups: real group_subtasks, one nested
    (tmp / "toysuite.yaml").write_text(SUITE)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_HOME": str(tmp / "hf")}
    env.pop("PYTHONPATH", None)  # the harness' own environment, not vareval's
    run = subprocess.run(
        [LM_EVAL, "--model", "dummy", "--tasks", "toysuite", "--include_path",
         str(tmp), "--output_path", str(tmp / "out"), "--log_samples", "--seed", "0"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return tmp / "out"


def _results(out, field="results"):
    [file] = out.glob("*/results_*.json")
    return json.loads(file.read_text())[field]


def evals(*args):
    return CliRunner().invoke(main, ["evals", *map(str, args)])


def test_every_task_and_filter_scores_as_lm_eval_reports_it(output):
    df = from_lm_eval(output)  # the --output_path folder: samples one level down
    assert set(df["task"]) == {"toymc_a", "toymc_b", "toygen"}
    results = _results(output)
    for (task, filt), rows in df.groupby(["task", "filter"]):
        metric = "acc" if task.startswith("toymc") else "exact_match"
        assert rows[metric].mean() == pytest.approx(results[task][f"{metric},{filt}"], abs=1e-12)
        assert rows["question"].is_unique and rows["run"].nunique() == 1
    assert {f for f in df.loc[df["task"] == "toygen", "filter"]} == {"strict-match",
                                                                      "flexible-extract"}


def test_two_filters_are_two_scores_not_samples(output):
    """One score per filter, each on its own answers: the numbers lm-eval reports."""
    results = _results(output)["toygen"]
    r = evals("score", output, "--metric", "exact_match", "--json")
    assert r.exit_code == 0, r.output
    by_filter = json.loads(r.stdout)["filters"]
    api = eval_scores(from_lm_eval(output), metric="exact_match")
    assert list(by_filter) == ["strict-match", "flexible-extract"]
    for filt in ("strict-match", "flexible-extract"):
        [(model, m)] = by_filter[filt].items()
        assert m["estimate"] == pytest.approx(results[f"exact_match,{filt}"], abs=1e-12)
        assert m["n_questions"] == 10 and m["samples_per_question"] == 1
        assert (api[model, filt].low, api[model, filt].high) == (m["low"], m["high"])
        chosen = evals("score", output, "--metric", "exact_match", "--filter", filt, "--json")
        [one] = json.loads(chosen.stdout)["models"].values()
        assert (one["estimate"], one["low"], one["high"]) == (m["estimate"], m["low"], m["high"])
    text = evals("score", output, "--metric", "exact_match")
    assert text.exit_code == 0 and "strict-match" in text.output and "flexible-extract" in (
        text.output)
    r = evals("compare", output, "--metric", "exact_match")  # compare still asks which
    assert r.exit_code == 2 and "2 lm-evaluation-harness filters" in r.output


def test_two_tasks_sharing_doc_ids_are_different_questions(output):
    r = evals("score", output, "--metric", "acc", "--json")
    assert r.exit_code == 0, r.output
    assert "task(s) without acc, left out: toygen" in r.stderr
    [m] = json.loads(r.stdout)["models"].values()
    assert m["n_questions"] == 24 and m["samples_per_question"] == 1
    table = evals("table", output, "--metric", "acc")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert [line.split(",")[1] for line in lines[1:]] == ["toymc_a", "toymc_b"]


def test_a_log_given_twice_is_refused_and_a_subject_breakdown(output):
    [file] = output.glob("*/samples_toymc_a_*.jsonl")
    r = evals("score", file, file, "--metric", "acc")
    assert r.exit_code == 2 and "one answer logged twice" in r.output
    r = evals("table", output, "--metric", "acc", "--task", "toymc_a", "--by", "subject")
    assert r.exit_code == 0, r.output
    df = from_lm_eval(file)
    want = df.groupby("subject")["acc"].mean()
    got = {line.split(",")[1]: float(line.split(",")[2]) for line in r.stdout.splitlines()[1:]}
    assert got == pytest.approx(want.to_dict(), abs=1e-12)


def test_groups_are_read_and_scored_as_lm_eval_reports_them(output):
    """group_subtasks as the harness writes them: each task's group, each group's score."""
    subtasks = _results(output, "group_subtasks")
    assert subtasks == {"toysuite": ["toymc", "toygen"], "toymc": ["toymc_a", "toymc_b"]}
    df = from_lm_eval(output)
    assert df.attrs["groups"] == {"toysuite": ["toymc_a", "toymc_b", "toygen"],
                                  "toymc": ["toymc_a", "toymc_b"]}
    assert dict(zip(df["task"], df["group"], strict=True)) == {
        "toymc_a": "toymc", "toymc_b": "toymc", "toygen": "toysuite"}
    r = evals("score", output, "--metric", "acc", "--groups", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["groups"]
    lm = _results(output, "groups")["toymc"]["acc,none"]
    [(model, m)] = got["toymc"]["models"].items()
    assert m["estimate"] == pytest.approx(lm, abs=1e-12) and m["n_questions"] == 24
    assert got["toymc"]["tasks"] == ["toymc_a", "toymc_b"]
    # toysuite's acc pools toymc's questions (toygen has no acc; lm-eval gives it no acc)
    assert got["toysuite"]["models"][model]["estimate"] == pytest.approx(lm, abs=1e-12)
    api = eval_scores(df, metric="acc", groups=True)
    assert (api["toymc", model].low, api["toymc", model].high) == (m["low"], m["high"])
    text = evals("score", output, "--metric", "acc", "--groups")
    assert "per group (2 group(s)" in text.output and "toymc" in text.output
    # exact_match: toymc has none and is left out aloud; toysuite scores per filter
    r = evals("score", output, "--metric", "exact_match", "--groups", "--json")
    assert r.exit_code == 0, r.output
    assert "group(s) without exact_match, left out: toymc" in r.stderr
    suite = json.loads(r.stdout)["groups"]["toysuite"]["filters"]
    for filt in ("strict-match", "flexible-extract"):
        [s] = suite[filt].values()
        assert s["estimate"] == pytest.approx(
            _results(output)["toygen"][f"exact_match,{filt}"], abs=1e-12)
