"""Language-model evaluations: per-question scores with clusters and samples.

- :mod:`~vareval.stats.evals.score`: one model's score with an honest interval;
- :mod:`~vareval.stats.evals.compare`: paired comparisons of models, tiers;
- :mod:`~vareval.stats.evals.passk`: pass@k and its comparison;
- :mod:`~vareval.stats.evals.plan`: planning an eval from a pilot.
"""

from vareval.stats.evals.compare import (
    EvalComparison,
    EvalComparisons,
    compare_models,
    compare_two,
)
from vareval.stats.evals.passk import PassAtK, compare_pass_at_k, pass_at_k
from vareval.stats.evals.plan import EvalPlan, plan_eval
from vareval.stats.evals.score import EvalScore, eval_score

__all__ = [
    "EvalComparison",
    "EvalComparisons",
    "EvalPlan",
    "EvalScore",
    "PassAtK",
    "compare_models",
    "compare_pass_at_k",
    "compare_two",
    "eval_score",
    "pass_at_k",
    "plan_eval",
]
