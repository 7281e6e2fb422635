"""Data layer: read results tables, validate them, name the columns' roles."""

from vareval.data.io import read_table
from vareval.data.tasks import TaskScores, reference_scores, task_scores
from vareval.data.validate import groups, labels, metric_values, pairs, require_columns

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
