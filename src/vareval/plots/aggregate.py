"""Plots across tasks: interval estimates, performance profiles, P(improvement).

Each function returns a bare matplotlib ``Figure`` in the report's style and
adapts its layout to the width (a single column of a paper, 3.3 in, or a full
page, 7 in).
"""

from __future__ import annotations

import numpy as np

from vareval.plots._style import (
    colour,
    figure,
    hatch,
    linestyle,
    series,
    short_label,
    small_multiples,
)

_TITLES = {"median": "Median", "iqm": "IQM", "mean": "Mean", "optimality_gap": "Optimality gap"}


def interval_plot(
    result, *, width: float = 7.0, xlabel: str = "score", name: str = "aggregate-intervals"
):
    """Interval estimates as rliable draws them: one panel per aggregate, a bar per method.

    Each bar spans the confidence interval and a tick marks the point estimate.
    Panels sit in a row on a wide figure and in a 2 x 2 grid on a narrow one.
    """
    n_agg, n_methods = len(result.aggregates), len(result.methods)
    narrow = width < 5
    cols = 2 if narrow and n_agg > 1 else n_agg
    rows = int(np.ceil(n_agg / cols))
    lines = max(short_label(m, 14).count("\n") + 1 for m in result.methods)
    height = rows * ((0.2 + 0.12 * lines) * n_methods + 0.9)
    with figure(name, width=width, height=height, nrows=rows, ncols=cols, squeeze=False) as (
        fig,
        axes,
    ):
        y = np.arange(n_methods)[::-1]
        for j, agg in enumerate(result.aggregates):
            ax = axes.flat[j]
            for i in range(n_methods):
                lo, hi, est = result.low[i, j], result.high[i, j], result.estimate[i, j]
                (bar,) = ax.barh(y[i], hi - lo, left=lo, height=0.6, color=colour(i), alpha=0.75,
                                 hatch=hatch(i), edgecolor="white", linewidth=0)  # fmt: skip
                series(bar, i)
                ax.plot([est, est], [y[i] - 0.3, y[i] + 0.3], color="black", lw=1.4)
            ax.set_title("Opt. gap" if narrow and agg == "optimality_gap" else _TITLES[agg])
            ax.set_yticks(y)
            ax.set_yticklabels(
                [short_label(m, 14) for m in result.methods] if j % cols == 0 else [],
                fontsize=6.5 if narrow else None,
            )
            ax.grid(axis="y", visible=False)
            ax.xaxis.set_major_locator(_locator(2 if narrow else 3))
        for ax in axes.flat[n_agg:]:
            ax.set_visible(False)
        what = "CI" if narrow else "stratified-bootstrap CI"
        fig.supxlabel(f"{xlabel}, {result.confidence:.0%} {what} ({result.ci})", fontsize=9)
    return fig


def _locator(n: int):
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(n)


def profile_plot(profile, *, width: float = 7.0, name: str = "aggregate-profile"):
    """Performance profiles, one panel per method: its curve with its simultaneous band.

    Shared axes, the other methods' curves thin and grey for reference (their
    overlapping bands would merge into one block on a single panel). The
    pointwise interval is drawn as thin dotted lines, so a reader sees how
    much wider a band that holds for every tau at once must be.
    """
    small = width < 5
    m = len(profile.methods)
    with small_multiples(name, m, width, 1.7 if small else 2.2) as (fig, axes):
        for i, (method, ax) in enumerate(zip(profile.methods, axes, strict=True)):
            c = colour(i)
            for j in range(m):
                if j != i:
                    ax.step(profile.taus, profile.estimate[j], where="post", color="#aaaaaa",
                            lw=0.8)  # fmt: skip
            ax.fill_between(profile.taus, profile.band_low[i], profile.band_high[i],
                            step="post", color=c, alpha=0.22, lw=0)  # fmt: skip
            for edge in (profile.pointwise_low[i], profile.pointwise_high[i]):
                ax.step(profile.taus, edge, where="post", color=c, lw=0.6, ls=":")
            line = ax.step(profile.taus, profile.estimate[i], where="post", color=c,
                           linestyle=linestyle(i))  # fmt: skip
            series(line[0], i)
            ax.set_title(short_label(method, 16 if small else 28), fontsize=7 if small else 9)
        axes[0].set_ylim(-0.02, 1.02)
        what = "runs" if profile.kind == "runs" else "tasks"
        fig.supxlabel("threshold \u03c4")
        fig.supylabel(f"fraction of {what} > \u03c4")
        title = "" if small else "Performance profiles, "
        fig.suptitle(f"{title}{profile.confidence:.0%} simultaneous bands")
    return fig


def improvement_plot(results, *, width: float = 7.0, name: str = "aggregate-improvement"):
    """P(X > Y) for each pair: point estimate and interval, 0.5 marked as no difference."""
    n = len(results)
    lines = max((short_label(f"{r.x} > {r.y}", 16 if width < 5 else 30).count("\n") + 1
                 for r in results), default=1)  # fmt: skip
    height = (0.2 + 0.13 * lines) * n + 1.0
    with figure(name, width=width, height=height) as (fig, ax):
        y = np.arange(n)[::-1]
        for i, r in enumerate(results):
            ax.barh(y[i], r.high - r.low, left=r.low, height=0.55, color=colour(0), alpha=0.6)
            ax.plot([r.estimate] * 2, [y[i] - 0.28, y[i] + 0.28], color="black", lw=1.4)
        ax.axvline(0.5, color="black", lw=0.8, ls="--")
        ax.set_yticks(y)
        chars = 16 if width < 5 else 30
        ax.set_yticklabels([short_label(f"{r.x} > {r.y}", chars) for r in results])
        ax.grid(axis="y", visible=False)
        ax.set_xlim(0, 1)
        pct = f"{results[0].confidence:.0%}" if results else ""
        what = "CI" if width < 5 else "stratified-bootstrap CI"
        ax.set_xlabel(f"P(X > Y), {pct} {what}")
    return fig
