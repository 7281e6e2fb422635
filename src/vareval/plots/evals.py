"""Evals plots: paired differences between models on the same questions, with their intervals."""

from __future__ import annotations

from vareval.plots.comparisons import forest_plot


def differences_plot(labels, estimates, lows, highs, metric: str = "score", *,
                     width: float = 7.0, name: str = "eval-differences"):  # fmt: skip
    """Each pair ``a - b`` of models: the paired difference in mean score with its interval."""
    return forest_plot(labels, estimates, lows, highs, f"difference in {metric} (a \u2212 b)",
                       width=width, name=name)  # fmt: skip
