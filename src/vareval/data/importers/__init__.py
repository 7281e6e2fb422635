"""Importers: results already logged by other tools, as vareval's tidy tables.

Each importer returns one pandas DataFrame with the roles filled where the
source says them:

- ``run``: the source's run id (text), ``run_name`` where it has one;
- ``status``: ``done``, ``failed``, ``running`` or ``pruned`` (the source's
  own word is kept in ``source_status``), so failed runs stay visible; these
  are words of :data:`vareval.data.runs.STATUSES`, the vocabulary every
  analysis reads, so an import feeds ``summarize`` and the rest directly;
- one column per hyper-parameter, named ``param.NAME`` and kept as the text
  the source logged, plus ``config``: the id of the run's distinct
  hyper-parameter combination (``seed`` excluded), the configuration role of
  ``vareval variance``;
- ``seed`` when the source logged one (a parameter or attribute named
  ``seed``, ``random_seed`` or ``random_state``);
- one numeric column per metric, under the metric's own name.

Nothing is dropped: unfinished and failed runs are rows with empty metrics.

Each importer is imported on first use, so reading an eval log
(``vareval.data.importers.evals``) does not load the others (mlflow's sqlite3).
"""

from __future__ import annotations

import importlib

_EXPORTS = {"from_mlflow": "mlflow", "from_optuna": "optuna",
            "from_tensorboard": "tensorboard", "from_wandb": "wandb"}  # fmt: skip

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_EXPORTS})
