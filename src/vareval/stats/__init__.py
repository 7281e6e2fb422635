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
from vareval.stats.coverage import (
    CoverageResult,
    ReflectedKDE,
    band_coverage,
    bootstrap_bands,
    bootstrap_coverage,
    clopper_pearson,
    simulated_tuning_curve,
)
from vareval.stats.summary import Summary, median_interval, summarize
from vareval.stats.tuning import EmpiricalDistribution

__all__ = ["Summary", "median_interval", "summarize"]
__all__ += [
    "CDFBand",
    "CoverageResult",
    "EmpiricalDistribution",
    "ReflectedKDE",
    "band_coverage",
    "bootstrap_bands",
    "bootstrap_coverage",
    "clopper_pearson",
    "simulated_tuning_curve",
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
