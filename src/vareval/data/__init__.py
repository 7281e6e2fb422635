"""Data layer: read results tables, validate them, name the columns' roles.

Names are imported on first use (as ``vareval.stats``'s): importing one module
of the layer (``vareval.data.variance``) does not load every other one first.
"""

from __future__ import annotations

import importlib
import importlib.util

# module -> the public names it defines
_MODULES = {
    "vareval.data.io": ("read_table",),
    "vareval.data.tasks": ("TaskScores", "reference_scores", "task_scores"),
    "vareval.data.validate": ("groups", "labels", "metric_values", "pairs", "require_columns"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "TaskScores",
    "groups",
    "labels",
    "metric_values",
    "pairs",
    "read_table",
    "reference_scores",
    "require_columns",
    "task_scores",
]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a module of the layer
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_EXPORTS})
