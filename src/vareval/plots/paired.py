"""Paired-difference plots: paired differences with their CIs, and the planning curve."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import (
    NEUTRAL,
    colour,
    few_ticks,
    figure,
    group_marker,
    key,
    linestyle,
    marker,
    narrow,
    plain_log_axis,
    series,
    short_label,
)


def differences_plot(
    results: dict, metric: str, *, width: float = 7.0, name: str = "paired"
):
    """Each comparison's per-pair differences (dots) with mean and CIs.

    Parameters
    ----------
    results : dict of str to PairedDifference
        Keyed by a label such as ``"A − B"``.
    metric : str
        The metric's name, for the axis label.
    width : float, default 7.0
        Width in inches (3.3: one column of a paper).
    """
    labels = list(results)
    m = len(labels)
    jitter = np.random.default_rng(1)
    rasterize = sum(len(r.differences) for r in results.values()) > 4000
    small = narrow(width)
    ticks = [short_label(label, 16 if small else 36) for label in labels]
    lines = max(t.count("\n") + 1 for t in ticks)
    height = (1.4 if small else 1.3) + (0.14 * lines + (0.22 if small else 0.3)) * m
    with figure(name, width=width, height=height) as (fig, ax):
        positions = np.arange(m)[::-1]
        ds = [np.asarray(results[label].differences, dtype=float) for label in labels]
        for i, (pos, d) in enumerate(zip(positions, ds, strict=True)):
            (dots,) = ax.plot(
                d,
                pos + jitter.uniform(-0.25, -0.08, size=d.size),
                linestyle="",
                marker=marker(i),
                markersize=3.5,
                markeredgewidth=0,
                color=colour(i),
                alpha=0.6,
                rasterized=rasterize,
            )
            series(dots, i)
        means = np.array([results[label].estimate for label in labels])
        for ends, offset, fmt, col, style in (
            (("low", "high"), 0.05, "o", "black", "-"),
            (("bootstrap_low", "bootstrap_high"), 0.22, "s", NEUTRAL, "--"),
        ):
            ci = np.array([[getattr(results[label], e) for e in ends] for label in labels])
            shown = np.isfinite(ci).all(axis=1)  # no marker where there is no interval
            if not shown.any():
                continue
            ci = ci[shown]
            bars = ax.errorbar(
                means[shown],
                positions[shown] + offset,
                xerr=[means[shown] - ci[:, 0], ci[:, 1] - means[shown]],
                fmt=fmt,
                color=col,
                markersize=4 if fmt == "o" else 3,
                capsize=3,
                linewidth=1.2 if fmt == "o" else 1.0,
            )
            bars[-1][0].set_linestyle(style)
        ax.axvline(0, color="black", linewidth=0.8)
        few_ticks(ax.xaxis, 4 if small else 5)
        ax.set_yticks(positions, ticks)
        ax.set_ylim(-0.7, m - 0.3)
        ax.set_xlabel(
            f"difference in {short_label(metric, 20 if small else 40)}"
            + ("" if small else " (first minus second)")
        )
        ax.grid(axis="y", visible=False)
        from matplotlib.lines import Line2D

        conf = round(100 * next(iter(results.values())).confidence)
        corrected = any(getattr(r, "test", "paired t") != "paired t" for r in results.values())
        t_name = "corrected t" if corrected else "t"
        handles = [
            group_marker(m, "one pair"),
            Line2D([], [], marker="o", color="black", label=f"{conf}% {t_name} CI"),
        ]
        if any(not r.bootstrap_note for r in results.values()):
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="s",
                    color=NEUTRAL,
                    linestyle="--",
                    label=f"{conf}% bootstrap CI",
                )
            )
        key(fig, handles, width)
    return fig


def planning_plot(
    plans: dict, current_k: dict, metric: str, *, width: float = 7.0, name: str = "planning"
):
    """Standard error of the mean difference against the number of pairs.

    Parameters
    ----------
    plans : dict of str to Plan
        ``vareval.stats.plan_replications`` results, keyed by comparison.
    current_k : dict of str to int
        The number of pairs in hand, marked on each curve.
    """
    small = narrow(width)
    with figure(name, width=width, height=2.8 if small else 3.4) as (fig, ax):
        for i, members in enumerate(_alike(plans)):
            plan = plans[members[0]]
            k = np.asarray(plan.curve_k, dtype=float)
            se = np.asarray(plan.curve_se, dtype=float)
            text = ", ".join(members) if len(members) < 4 else f"{len(members)} comparisons"
            if len(members) > 1:  # one line for curves that would lie on top of each other
                text += " (SDs within 5%)"
            (line,) = ax.plot(k, se, color=colour(i), linestyle=linestyle(i),
                              label=short_label(text, 26 if small else 40))  # fmt: skip
            series(line, i)
            for label in members:
                k0 = current_k.get(label)
                if k0:
                    se0 = plans[label].sd_diff / np.sqrt(k0)
                    ax.plot([k0], [se0], "o", color=colour(i), markersize=6)
                    ax.plot([4 * k0], [se0 / 2], "D", color=colour(i), markersize=5,
                            markerfacecolor="white")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_axis(ax.xaxis)
        plain_log_axis(ax.yaxis)
        ax.set_xlabel("number of pairs k (log scale)")
        ax.set_ylabel(
            "SE of mean difference\n"
            + ("(log scale)" if small else f"({short_label(metric, 30)} units, log scale)")
        )
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        handles += [
            Line2D(
                [], [], marker="o", linestyle="", color=NEUTRAL, label="pairs in hand"
            ),
            Line2D(
                [],
                [],
                marker="D",
                linestyle="",
                color=NEUTRAL,
                markerfacecolor="white",
                label="4x the pairs: SE halved",
            ),
        ]
        key(fig, handles, width, where="lower")
    return fig


def _alike(plans: dict, tol: float = 0.05) -> list[list]:
    """Comparisons grouped by SD of the differences, each group within ``tol`` of its first.

    Every curve is SD / sqrt(k): on log axes, curves whose SDs differ by a few
    percent are one line to the eye, so they are drawn (and keyed) as one.
    """
    order = sorted(plans, key=lambda label: float(plans[label].sd_diff))
    groups: list[list] = []
    for label in order:
        sd = float(plans[label].sd_diff)
        if groups and sd <= (1 + tol) * float(plans[groups[-1][0]].sd_diff):
            groups[-1].append(label)
        else:
            groups.append([label])
    return groups
