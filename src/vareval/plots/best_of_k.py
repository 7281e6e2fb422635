"""Best-of-k plots: the best-of-k illusion and ranking stability as runs grow."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import NEUTRAL, colour, figure, key, marker, narrow, series, short_label


def best_of_k_plot(results: dict, *, width: float = 7.0, name: str = "best-of-k"):
    """Median (solid) and 90th-percentile (dashed) apparent gap against k.

    Parameters
    ----------
    results : dict of str to BestOfK
        ``vareval.stats.best_of_k`` results keyed by method.
    """
    small = narrow(width)
    with figure(name, width=width, height=2.9 if small else 3.3) as (fig, ax):
        for i, (label, r) in enumerate(results.items()):
            ks = np.asarray(r.ks)
            text = f"{label}: " if len(results) > 1 else ""
            # the 90th percentile as a ring around the median's dot: both stay
            # visible where they coincide
            (p90,) = ax.plot(ks, 100 * np.asarray(r.p90_gap), linestyle="--", color=colour(i),
                             marker=marker(i), markersize=8, markerfacecolor="none",
                             label=f"{text}90th percentile")  # fmt: skip
            (median,) = ax.plot(ks, 100 * np.asarray(r.median_gap), linestyle="-",
                                color=colour(i), marker=marker(i), markersize=4,
                                label=f"{text}median")  # fmt: skip
            series(p90, i)
            series(median, i)
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k: runs per method, best one kept")
        ax.set_ylabel("apparent gap between\nidentical methods (%)")
        ax.set_ylim(bottom=0)
        handles, _ = ax.get_legend_handles_labels()
        if len(results) > 1:  # a key of methods (colour) and of the two lines (style)
            from matplotlib.lines import Line2D

            handles = [
                Line2D([], [], color=colour(i), marker=marker(i), markersize=4,
                       label=short_label(label, 22 if small else 28))
                for i, label in enumerate(results)
            ] + [
                Line2D([], [], color=NEUTRAL, marker="o", markersize=4, label="median"),
                Line2D([], [], color=NEUTRAL, marker="o", markersize=8, linestyle="--",
                       markerfacecolor="none", label="90th percentile"),
            ]  # fmt: skip
        key(fig, handles[1::2] + handles[::2] if len(results) == 1 else handles, width, "lower")
    return fig


def ranking_plot(result, label: str = "", *, width: float = 7.0, name: str = "ranking"):
    """Share of simulated k-run experiments ranking two methods as the full samples."""
    small = narrow(width)
    with figure(name, width=width, height=2.6 if small else 3.1) as (fig, ax):
        ks = np.asarray(result.ks)
        for i, (field, text) in enumerate(
            (
                ("mean_of_k", "mean of k runs"),
                ("median_of_k", "median of k runs"),
                ("best_of_k", "best of k runs (selected)"),
            )
        ):
            (line,) = ax.plot(ks, 100 * np.asarray(getattr(result, field)), "-",
                              marker=marker(5 * i), color=colour(i), label=text,
                              markersize=4)  # fmt: skip
            series(line, i)
        ax.axhline(50, color="black", linewidth=0.8, linestyle=":", label="50%: a coin flip")
        ax.set_ylim(0, 101)
        ax.set_xlabel("k: runs per method")
        ax.set_ylabel("same ranking as the full\nsamples' means (%)")
        if label:
            ax.set_title(short_label(label, 40 if small else 60), loc="left")
        key(fig, ax.get_legend_handles_labels()[0], width, "lower")
    return fig
