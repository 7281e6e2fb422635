"""Statistics layer: pure functions on arrays that return frozen result objects.

Imports numpy and scipy only; no pandas, no I/O, no printing.
"""

from vareval.stats.bands import (
    CDFBand,
    IterationProjection,
    OrderStatisticBand,
    TuningComparison,
    TuningCurveBand,
    cdf_band,
    compare_tuning_curves,
    order_statistic_band,
    project_iterations,
    simultaneous_coverage,
)
from vareval.stats.summary import Summary, median_interval, summarize
from vareval.stats.tuning import EmpiricalDistribution

__all__ = ["Summary", "median_interval", "summarize"]
__all__ += [
    "CDFBand",
    "EmpiricalDistribution",
    "IterationProjection",
    "OrderStatisticBand",
    "TuningComparison",
    "TuningCurveBand",
    "cdf_band",
    "compare_tuning_curves",
    "order_statistic_band",
    "project_iterations",
    "simultaneous_coverage",
]
