"""Data layer: read results tables, validate them, name the columns' roles."""

from vareval.data.io import read_table
from vareval.data.validate import groups, labels, metric_values, pairs, require_columns

__all__ = ["groups", "labels", "metric_values", "pairs", "read_table", "require_columns"]
