"""Statistics layer: pure functions on arrays that return frozen result objects.

Imports numpy and scipy only; no pandas, no I/O, no printing.
"""

from vareval.stats.classification import (
    ClassificationMetrics,
    ConfusionMatrix,
    accuracy,
    classification_metrics,
    confusion_matrix,
)
from vareval.stats.crossval import (
    CorrectedTTestResult,
    CrossValidation,
    HoldoutEvaluation,
    corrected_resampled_ttest,
    cross_validate,
    holdout_evaluate,
    holdout_split,
    kfold_splits,
    stratified_kfold_splits,
)
from vareval.stats.resampling import CallableMetric, SumMetric, get_metric
from vareval.stats.significance import (
    ExactTestResult,
    PairedTestResult,
    SystemComparison,
    adjust_pvalues,
    compare_systems,
    mcnemar_exact,
    paired_bootstrap,
    paired_randomization,
    paired_t,
    paired_wilcoxon,
)
from vareval.stats.summary import Summary, median_interval, summarize

__all__ = [
    "CallableMetric",
    "ClassificationMetrics",
    "ConfusionMatrix",
    "CorrectedTTestResult",
    "CrossValidation",
    "ExactTestResult",
    "HoldoutEvaluation",
    "PairedTestResult",
    "SumMetric",
    "Summary",
    "SystemComparison",
    "accuracy",
    "adjust_pvalues",
    "classification_metrics",
    "compare_systems",
    "confusion_matrix",
    "corrected_resampled_ttest",
    "cross_validate",
    "get_metric",
    "holdout_evaluate",
    "holdout_split",
    "kfold_splits",
    "mcnemar_exact",
    "median_interval",
    "paired_bootstrap",
    "paired_randomization",
    "paired_t",
    "paired_wilcoxon",
    "stratified_kfold_splits",
    "summarize",
]
