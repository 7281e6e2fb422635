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
from vareval.stats.mixed import MixedModelFit, fit_mixed
from vareval.stats.mixed_tests import (
    ContrastResult,
    FTestResult,
    RandomEffectLRT,
    contrast,
    f_test,
    pairwise,
    random_effect_lrt,
)
from vareval.stats.paired import PairedDifference, Plan, paired_difference, plan_replications
from vareval.stats.selection import BestOfK, RankingStability, best_of_k, ranking_stability
from vareval.stats.summary import Summary, median_interval, summarize
from vareval.stats.tuning import EmpiricalDistribution

__all__ = [
    "CDFBand",
    "CoverageResult",
    "EmpiricalDistribution",
    "IterationProjection",
    "OrderStatisticBand",
    "ReflectedKDE",
    "TuningComparison",
    "TuningCurveBand",
    "band_coverage",
    "bootstrap_bands",
    "bootstrap_coverage",
    "cdf_band",
    "clopper_pearson",
    "compare_tuning_curves",
    "order_statistic_band",
    "project_iterations",
    "simulated_tuning_curve",
    "simultaneous_coverage",
    "ContrastResult",
    "FTestResult",
    "MixedModelFit",
    "RandomEffectLRT",
    "contrast",
    "f_test",
    "fit_mixed",
    "pairwise",
    "random_effect_lrt",
    "BestOfK",
    "PairedDifference",
    "Plan",
    "RankingStability",
    "Summary",
    "best_of_k",
    "median_interval",
    "paired_difference",
    "plan_replications",
    "ranking_stability",
    "summarize",
]
