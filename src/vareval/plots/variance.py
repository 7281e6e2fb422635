"""Variance plots: where the variance comes from, as shares of the total."""

from __future__ import annotations

import numpy as np

from vareval._format import number
from vareval.plots._style import (
    SELECTED,
    colour,
    figure,
    hatch,
    key,
    linestyle,
    narrow,
    series,
    short_label,
)


def variance_plot(
    components, variances, sds, metric: str, *, width: float = 7.0, name: str = "variance"
):
    """Variance components stacked as shares of the total variance.

    One bar of length 100 %: each component's segment is as long as its
    share of the total variance (variances add up; SDs do not), and its
    label gives the share and the component's SD in the metric's units.

    Parameters
    ----------
    components : sequence of str
        Component names (grouping factors and the residual).
    variances, sds : array_like
        Each component's variance and standard deviation.
    metric : str
        The metric's name, for the SD's units.
    """
    variances = np.asarray(variances, dtype=float)
    shares = variances / np.sum(variances)
    small = narrow(width)
    rows = int(np.ceil(len(components) / (1 if small else 2)))
    with figure(name, width=width, height=0.95 + 0.2 * rows) as (fig, ax):
        left = 0.0
        for i, (comp, share, sd) in enumerate(zip(components, shares, sds, strict=True)):
            bar = ax.barh(
                0,
                100 * share,
                left=100 * left,
                height=0.7,
                color=colour(i),
                hatch=hatch(i),
                edgecolor="white",
                linewidth=1,
                label=f"{short_label(comp, 16 if small else 28)}: {100 * share:.1f}%"
                f" (SD {number(sd, digits=3)})",
            )
            series(bar.patches[0], i)
            if share >= (0.14 if small else 0.08):  # room for the number inside
                ax.text(
                    100 * (left + share / 2),
                    0,
                    f"{100 * share:.0f}%",
                    ha="center",
                    va="center",
                    color="white",
                    fontweight="bold",
                    fontsize=7 if small else 9,
                )
            left += share
        ax.set_xlim(0, 100)
        ax.set_ylim(-0.5, 0.5)
        ax.set_yticks([])
        ax.grid(axis="y", visible=False)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel(
            "share of the total variance (%)"
            + ("" if small else f"; SD in {short_label(metric, 30, lines=1)} units")
        )
        key(fig, ax.get_legend_handles_labels()[0], width, "lower")
    return fig


def variance_intervals_plot(intervals, *, width: float = 7.0, name: str = "variance-intervals"):
    """Each component's share of the total variance with its confidence interval.

    Parameters
    ----------
    intervals : vareval.stats.VarianceIntervals
    """
    comps = list(intervals.components)
    m = len(comps)
    small = narrow(width)
    share = 100 * np.asarray(intervals.share, dtype=float)
    lo = 100 * np.asarray(intervals.share_low, dtype=float)
    hi = 100 * np.asarray(intervals.share_high, dtype=float)
    with figure(name, width=width, height=0.9 + 0.36 * m) as (fig, ax):
        y = np.arange(m)[::-1]
        for i in range(m):
            (line,) = ax.plot([lo[i], hi[i]], [y[i], y[i]], color=colour(i), lw=2.5,
                              linestyle=linestyle(i), solid_capstyle="butt")  # fmt: skip
            series(line, i)
            ax.plot([share[i]], [y[i]], "o", color="black", markersize=4)
            ax.annotate(
                f"SD {number(intervals.sd[i], digits=3)}",
                (max(hi[i], share[i]) if np.isfinite(hi[i]) else share[i], y[i]),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=7 if small else 8,
                color="#555555",
            )
        ax.set_yticks(y, [short_label(c, 14 if small else 28) for c in comps])
        ax.set_ylim(-0.6, m - 0.4)
        ax.set_xlim(0, 118)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(
            f"share of the total variance (%), {intervals.confidence:.0%} "
            + ("CI" if small else f"{intervals.method} interval")
        )
    return fig


def null_plot(result, *, width: float = 7.0, name: str = "bootstrap-lrt"):
    """The parametric bootstrap's null distribution of the LRT with the observed statistic.

    Parameters
    ----------
    result : vareval.stats.BootstrapLRT
        Its ``null_statistics`` (LRTs of data simulated without the effect)
        are the histogram; the vertical line is the observed ``statistic``; the
        p-value is the share of the null at or beyond it.
    """
    small = narrow(width)
    null = np.asarray(result.null_statistics, dtype=float)
    null = null[np.isfinite(null)]
    with figure(name, width=width, height=2.4 if small else 2.9) as (fig, ax):
        ax.hist(null, bins=min(50, max(10, null.size // 20)), color=colour(4),
                edgecolor="white", linewidth=0.3)  # fmt: skip
        ax.axvline(result.statistic, color=SELECTED, linewidth=1.6)
        ax.set_xlabel("likelihood-ratio statistic" + ("" if small else " (bootstrap null)"))
        ax.set_ylabel("resamples")
        ax.set_title(
            f"{short_label(result.term, 24, lines=1)}: LRT {number(result.statistic)}, "
            f"bootstrap p = {number(result.pvalue)}",
            loc="left",
        )
    return fig
