"""Write ``inspect_stderr.json``: inspect_ai's own ``stderr`` metric, clustered and plain.

For each fixture log (``../importers/eval_logs/mock-a.eval``, ``mock-b.eval``)
the samples are read with inspect_ai's ``read_eval_log``, the epochs of each
sample reduced with its ``mean_score`` reducer (``reduce_scores``, as its eval
does when ``epochs > 1``; errored samples have no score and are not scored),
and ``stderr(cluster="passage")`` and ``stderr()`` applied to the reduced
``SampleScore`` list, with the 95 % intervals ``ci(method="t", cluster=...)``
and ``ci_wilson(cluster=...)``. The values inspect_ai's eval stored in the log
(``results.scores[0].metrics``) are written beside them, and must agree.

Three synthetic score lists (partial credit, clusters of unequal sizes, two
clusters) go through the same metrics, one score per sample.

Run with the venv that has inspect-ai (it is not a vareval dependency):
``/work/venv-inspect/bin/python tests/data/evals/_make_inspect_stderr.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from inspect_ai import __version__
from inspect_ai._eval.task.results import reduce_scores
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import SampleScore, Score, ci, ci_wilson, mean_score, stderr

HERE = Path(__file__).parent
LOGS = HERE.parent / "importers" / "eval_logs"


def metrics(scores: list[SampleScore]) -> dict:
    return {
        "stderr_cluster": stderr(cluster="passage")(scores),
        "stderr": stderr()(scores),
        "ci_t_cluster": ci(method="t", cluster="passage")(scores),
        "ci_wilson_cluster": ci_wilson(cluster="passage")(scores),
    }


def from_log(path: Path) -> dict:
    log = read_eval_log(str(path))
    scored = [
        SampleScore(score=s.scores["match"], sample_id=s.id, sample_metadata=s.metadata)
        for s in log.samples
        if s.scores and not s.error
    ]
    reduced = reduce_scores(scored, mean_score())
    stored = log.results.scores[0].metrics
    return {
        **metrics(reduced),
        "in_log": {"stderr_cluster": stored["stderr"].value, "stderr": stored["stderr2"].value},
        "scored_samples": len(reduced),
    }


def synthetic() -> dict:
    rng = np.random.default_rng(24)
    cases = {
        "partial_credit": (rng.random(30).round(3), np.repeat(np.arange(6), 5)),
        "unequal_clusters": ((rng.random(40) < 0.55).astype(float),
                             np.repeat(np.arange(7), [1, 2, 3, 5, 8, 9, 12])),
        "two_clusters": ((rng.random(12) < 0.5).astype(float), np.repeat([0, 1], [5, 7])),
    }  # fmt: skip
    out = {}
    for name, (values, clusters) in cases.items():
        scores = [
            SampleScore(score=Score(value=float(v)), sample_id=i,
                        sample_metadata={"passage": f"c{c}"})
            for i, (v, c) in enumerate(zip(values, clusters, strict=True))
        ]  # fmt: skip
        out[name] = {"values": values.tolist(), "passage": [f"c{c}" for c in clusters],
                     **metrics(scores)}  # fmt: skip
    return out


if __name__ == "__main__":
    ref = {
        "inspect_ai": __version__,
        "logs": {p: from_log(LOGS / p) for p in ("mock-a.eval", "mock-b.eval")},
        "synthetic": synthetic(),
    }
    for name, r in ref["logs"].items():
        for key, value in r["in_log"].items():
            assert value == r[key], (name, key, value, r[key])
    (HERE / "inspect_stderr.json").write_text(json.dumps(ref, indent=1) + "\n")
    print(json.dumps(ref["logs"], indent=1))
