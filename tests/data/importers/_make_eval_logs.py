"""Write the eval-log fixtures in ``eval_logs/`` with the harnesses' own code, offline.

- inspect_ai (mock model provider, see ``_inspect_logs.py``): ``mock-a.eval``
  (24 questions x 3 epochs, one question errored in every epoch),
  ``mock-b.eval`` (the same questions, no errors) and ``mock-c.json`` (a
  small JSON log: 8 questions x 2 epochs, one errored);
- lm-evaluation-harness (its ``dummy`` model, a local multiple-choice task,
  ``EvaluationTracker`` writing ``results_*.json`` and ``samples_*.jsonl``):
  ``lm_eval/``;
- ``inspect_read.json``: each ``.eval`` log's samples as inspect_ai's own
  ``read_eval_log`` returns them (id, epoch, error, score values, metadata),
  in its order: the reference vareval's zip reader is tested against.

Run: ``PYTHONPATH=src python tests/data/importers/_make_eval_logs.py``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "eval_logs"

TASK_YAML = """task: toyqa
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: ["yes", "no"]
doc_to_target: "{{{{0 if answer == 'yes' else 1}}}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def inspect_logs(out: Path) -> None:
    sys.path.insert(0, str(HERE))
    from _inspect_logs import write_log

    with tempfile.TemporaryDirectory() as tmp:
        a = write_log(tmp, fail=(5,), log_format="eval", model="mock-a", seed=0)
        b = write_log(tmp, fail=(), log_format="eval", model="mock-b", seed=1, p_right=0.7)
        c = write_log(tmp, n=8, epochs=2, fail=(3,), log_format="json", model="mock-c", seed=2)
        shutil.copy(a, out / "mock-a.eval")
        shutil.copy(b, out / "mock-b.eval")
        shutil.copy(c, out / "mock-c.json")


def inspect_reference(out: Path) -> None:
    from inspect_ai.log import read_eval_log

    ref = {}
    for log in sorted(out.glob("*.eval")):
        samples = read_eval_log(str(log)).model_dump(mode="json")["samples"]
        ref[log.name] = [
            {"id": s["id"], "epoch": s["epoch"], "error": (s.get("error") or {}).get("message"),
             "scores": {k: v["value"] for k, v in (s.get("scores") or {}).items()},
             "metadata": s.get("metadata")}
            for s in samples
        ]
    (out / "inspect_read.json").write_text(json.dumps(ref, indent=1, sort_keys=True))


def lm_eval_logs(out: Path) -> None:
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = tmp / "toyqa.jsonl"
        with open(data, "w") as f:
            for i in range(20):
                doc = {"question": f"Is {i} even?", "answer": "yes" if i % 2 == 0 else "no",
                       "passage": f"p{i // 4}"}
                f.write(json.dumps(doc) + "\n")
        (tmp / "toyqa.yaml").write_text(TASK_YAML.format(data=data))
        tracker = EvaluationTracker(output_path=str(tmp / "out"))
        res = lm_eval.simple_evaluate(
            model="dummy", tasks=["toyqa"], task_manager=TaskManager(include_path=str(tmp)),
            log_samples=True, evaluation_tracker=tracker,
        )
        tracker.save_results_aggregated(results=res, samples=res["samples"])
        for task, samples in res["samples"].items():
            tracker.save_results_samples(task_name=task, samples=samples)
        [folder] = (tmp / "out").iterdir()
        target = out / "lm_eval"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(folder, target)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    if "--reference-only" not in sys.argv:
        inspect_logs(OUT)
        lm_eval_logs(OUT)
    inspect_reference(OUT)
    for f in sorted(OUT.rglob("*")):
        if f.is_file():
            print(f.relative_to(HERE), f.stat().st_size)
