"""Statistics layer: pure functions on arrays that return frozen result objects.

Imports numpy and scipy only; no pandas, no I/O, no printing.
"""

from vareval.stats.summary import Summary, median_interval, summarize

__all__ = ["Summary", "median_interval", "summarize"]
