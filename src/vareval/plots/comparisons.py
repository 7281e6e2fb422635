"""Effect sizes with their confidence intervals, one row per comparison."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import colour, few_ticks, figure, narrow, short_label


def forest_plot(
    labels, estimates, lows, highs, xlabel: str, *, width: float = 7.0, name: str = "forest"
):
    """Point estimates with confidence intervals, one row each, and a zero line."""
    m = len(labels)
    est = np.asarray(estimates, dtype=float)
    lo = np.asarray(lows, dtype=float)
    hi = np.asarray(highs, dtype=float)
    small = narrow(width)
    ticks = [short_label(s, 18 if small else 40) for s in labels]
    lines = max((t.count("\n") + 1 for t in ticks), default=1)
    height = (0.9 if small else 1.0) + (0.2 + 0.13 * lines) * m
    with figure(name, width=width, height=height) as (fig, ax):
        positions = np.arange(m)[::-1]
        ax.errorbar(
            est,
            positions,
            xerr=[est - lo, hi - est],
            fmt="o",
            color=colour(0),
            capsize=3,
            markersize=4 if small else 5,
            linewidth=1.4,
        )
        ax.axvline(0, color="black", linewidth=0.8)
        few_ticks(ax.xaxis, 4 if small else 5)
        ax.set_yticks(positions, ticks)
        ax.set_ylim(-0.7, m - 0.3)
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
    return fig
