"""vareval: honest numbers from noisy machine-learning experiments.

Two levels of API:

- ``vareval.stats``: pure functions on arrays (no pandas needed).
- the functions here: one call on a pandas DataFrame of results, with the
  columns' roles named (``metric=``, ``by=``, ``pair_on=``).

Names are imported on first use, so ``import vareval`` and the command's
``--help`` stay fast.
"""

from __future__ import annotations

import importlib

from vareval import _interrupts  # noqa: F401 - first: the command's signals during imports

# isort: split
from vareval import _moved

__version__ = "0.1.0"

# public name -> "module" that defines it, or "module:attribute" where the name differs
_EXPORTS = {
    "VarevalError": "vareval.errors",
    "read_table": "vareval.data.io",
    "ResultTable": "vareval.data.tables",
    "summarize": "vareval.data.repeated",
    "best_of_k": "vareval.data.repeated",
    "paired": "vareval.data.repeated",
    "plan": "vareval.data.repeated",
    "ranking_stability": "vareval.data.repeated",
    "significance": "vareval.data.significance",
    "metrics": "vareval.data.significance",
    "tuning_curve": "vareval.data.tuning",
    "select": "vareval.data.selection",
    "selection_curves": "vareval.data.selection",
    "variance": "vareval.data.variance",
    "allocation": "vareval.data.allocation",
    "aggregate": "vareval.data.aggregate",
    "reseeding_design": "vareval.experiment.design",
    "simulate_responses": "vareval.experiment.simulate",
    "read_store_table": "vareval.data.store_table",
    "run_experiment": "vareval.experiment.runner:run",
    "aso": "vareval.data.dominance",
    "effect_sizes": "vareval.data.dominance",
    "rank": "vareval.data.ranking",
    "build_report": "vareval.report.builder",
    "write_report": "vareval.report.builder",
    "run_until_settled": "vareval.experiment.sequential",
    "confidence_sequence": "vareval.stats.budget.sequential",
    "eval_scores": "vareval.data.evals",
    "compare_evals": "vareval.data.evals",
    "eval_pass_at_k": "vareval.data.evals",
    "compare_evals_pass_at_k": "vareval.data.evals",
    "plan_evals": "vareval.data.evals",
    "eval_table": "vareval.data.evals",
    "read_eval_log": "vareval.data.importers.evals",
}
_SUBMODULES = {"errors", "stats", "data", "experiment", "datasets", "report"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES])

_moved.install()


def __getattr__(name: str):
    if name in _EXPORTS:
        module, _, attribute = _EXPORTS[name].partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        if _takes_table(value):
            from vareval.data.validate import checks_table

            value = checks_table(value)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"vareval.{name}")
    else:
        raise AttributeError(f"module 'vareval' has no attribute {name!r}")
    globals()[name] = value
    return value


def _takes_table(value) -> bool:
    """Whether ``value`` is a function of a results table first (``df``), checked on export."""
    import inspect

    return inspect.isfunction(value) and next(iter(inspect.signature(value).parameters)) == "df"


def __dir__():
    return __all__
