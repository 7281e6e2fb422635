"""Statistics layer: pure functions on arrays that return frozen result objects.

Imports numpy and scipy only; no pandas, no I/O, no printing.
"""

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
from vareval.stats.summary import Summary, median_interval, summarize

__all__ = [
    "ContrastResult",
    "FTestResult",
    "MixedModelFit",
    "RandomEffectLRT",
    "Summary",
    "contrast",
    "f_test",
    "fit_mixed",
    "median_interval",
    "pairwise",
    "random_effect_lrt",
    "summarize",
]
