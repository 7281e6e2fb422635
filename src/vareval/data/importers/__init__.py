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
"""

from vareval.data.importers.mlflow import from_mlflow
from vareval.data.importers.optuna import from_optuna
from vareval.data.importers.tensorboard import from_tensorboard
from vareval.data.importers.wandb import from_wandb

__all__ = ["from_mlflow", "from_optuna", "from_tensorboard", "from_wandb"]
