"""Summary plot of repeated runs: every score of every method, with the selected best run marked."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import (
    MAX_POINTS_VECTOR,
    NEUTRAL,
    SELECTED,
    colour,
    figure,
    group_marker,
    key,
    marker,
    narrow,
    series,
    short_label,
)


def strip_plot(summaries: dict, metric: str, *, width: float = 7.0, name: str = "scores"):
    """Strip plot with box: one row per method, every run a dot.

    Each method's runs are drawn as jittered dots over a box (quartiles and
    median); the mean is a black tick with its confidence interval; the best
    run is a vermillion star labelled *selected*.

    Parameters
    ----------
    summaries : dict of str to Summary
        Per-method summaries (``vareval.stats.summarize``), in display order.
    metric : str
        The metric's name, used for the axis label.

    width : float, default 7.0
        Width in inches (3.3: one column of a paper).

    Returns
    -------
    matplotlib.figure.Figure
    """
    names = list(summaries)
    m = len(names)
    total = sum(s.n for s in summaries.values())
    rasterize = total > MAX_POINTS_VECTOR
    level = 100 * next(iter(summaries.values())).confidence
    jitter = np.random.default_rng(0)  # fixed: the picture must not change run to run
    small = narrow(width)
    labels = [short_label(n, 14 if small else 28) for n in names]
    lines = max(label.count("\n") + 1 for label in labels)
    height = (1.3 if small else 1.2) + (0.14 * lines + (0.2 if small else 0.3)) * m
    with figure(name, width=width, height=height) as (fig, ax):
        positions = np.arange(m)[::-1]
        ax.boxplot(
            [summaries[n].scores for n in names],
            positions=positions,
            orientation="horizontal",
            widths=0.55,
            showfliers=False,
            patch_artist=True,
            boxprops={"facecolor": "#f2f2f2", "edgecolor": NEUTRAL, "linewidth": 0.8},
            medianprops={"color": NEUTRAL, "linewidth": 1.2},
            whiskerprops={"color": NEUTRAL, "linewidth": 0.8},
            capprops={"color": NEUTRAL, "linewidth": 0.8},
        )
        # Markers drawn as Line2D markers (Agg stamps them: fast for many runs).
        n_max = max(s.n for s in summaries.values())
        for i, (pos, n) in enumerate(zip(positions, names, strict=True)):
            sc = summaries[n].scores
            (dots,) = ax.plot(
                sc,
                pos + jitter.uniform(-0.22, 0.22, size=sc.size),
                linestyle="",
                marker=marker(i),
                markersize=3 if n_max > 200 else 4,
                markeredgewidth=0,
                color=colour(i),
                alpha=0.55 if n_max > 50 else 0.85,
                zorder=3,
                rasterized=rasterize,
            )
            series(dots, i)
        means = np.array([summaries[n].mean for n in names])
        ci = np.array([summaries[n].confidence_interval() for n in names])
        ax.errorbar(
            means,
            positions + 0.36,
            xerr=[means - ci[:, 0], ci[:, 1] - means],
            fmt="|",
            color="black",
            markersize=9,
            capsize=2.5,
            linewidth=1.0,
            zorder=4,
        )
        ax.scatter(
            [summaries[n].selected for n in names],
            positions,
            marker="*",
            s=70 if small else 130,
            color=SELECTED,
            edgecolors="white",
            linewidths=0.6,
            zorder=5,
        )
        ax.set_yticks(positions, labels)
        ax.set_ylim(-0.7, m - 0.3)
        ax.set_xlabel(
            short_label(metric, 30) if small else f"{short_label(metric, 40)} (one dot per run)"
        )
        ax.grid(axis="y", visible=False)
        from matplotlib.lines import Line2D

        handles = [
            group_marker(m, "one run"),  # the dots' own colours
            Line2D(
                [],
                [],
                marker="|",
                linestyle="-",
                color="black",
                label=f"mean with {level:g}% CI",
            ),
            Line2D(
                [],
                [],
                marker="*",
                linestyle="",
                color=SELECTED,
                markersize=9 if small else 11,
                label="best run (selected)",
            ),
        ]
        key(fig, handles, width)
    return fig
