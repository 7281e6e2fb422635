"""Plots for the other analyses' sections: effect sizes with CIs, variance shares."""

from __future__ import annotations

import numpy as np

from vareval.report.plots._style import NEUTRAL, colour, figure, short_label, to_svg


def forest_plot(labels, estimates, lows, highs, xlabel: str, *, name: str) -> str:
    """Point estimates with confidence intervals, one row each, and a zero line."""
    m = len(labels)
    est = np.asarray(estimates, dtype=float)
    lo = np.asarray(lows, dtype=float)
    hi = np.asarray(highs, dtype=float)
    with figure(name, height=1.0 + 0.4 * m) as (fig, ax):
        positions = np.arange(m)[::-1]
        ax.errorbar(
            est,
            positions,
            xerr=[est - lo, hi - est],
            fmt="o",
            color=colour(0),
            capsize=3,
            markersize=5,
            linewidth=1.4,
        )
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(positions, [short_label(s, 40) for s in labels])
        ax.set_ylim(-0.7, m - 0.3)
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
        return to_svg(fig, name)


def variance_plot(components, sds, shares, metric: str, *, name: str) -> str:
    """Each variance component's SD (bar) with its share of the total variance."""
    m = len(components)
    sds = np.asarray(sds, dtype=float)
    with figure(name, height=1.0 + 0.45 * m) as (fig, ax):
        positions = np.arange(m)[::-1]
        ax.barh(positions, sds, color=[colour(i) for i in range(m)], height=0.6)
        for pos, sd, share in zip(positions, sds, shares, strict=True):
            ax.text(
                sd,
                pos,
                f"  {100 * share:.0f}% of variance",
                va="center",
                fontsize=9,
                color=NEUTRAL,
            )
        ax.set_yticks(positions, [short_label(c) for c in components])
        ax.set_xlim(0, 1.35 * max(float(np.nanmax(sds)), 1e-300))
        ax.set_xlabel(f"standard deviation ({short_label(metric, 30)} units)")
        ax.grid(axis="y", visible=False)
        return to_svg(fig, name)


def tuning_plot(result, metric: str, *, name: str = "tuning") -> str:
    """Each model's median tuning curve with its simultaneous band, against k.

    Parameters
    ----------
    result : vareval.data.tuning.TuningCurves
        Curves with ``cdf_bands`` per method (``vareval.tuning_curve``).
    metric : str
        The score's name, for the axis label.
    """
    k_max = int(np.max(result.k))
    ks = np.linspace(1, k_max, 300) if k_max > 1 else np.array([1.0])
    what = "median" if result.q == 0.5 else f"{result.q:g}-quantile of the"
    best = "lowest" if result.minimize else "best"
    with figure(name, height=3.6) as (fig, ax):
        for i, method in enumerate(result.methods):
            band = result.cdf_bands[method].tuning_curve(
                ks, result.q, minimize=result.minimize
            )
            ax.plot(
                ks,
                band.estimate,
                color=colour(i),
                label=f"{short_label(method)} (n = {band.n})",
            )
            ax.fill_between(
                ks, band.lower, band.upper, color=colour(i), alpha=0.2, linewidth=0
            )
        ax.set_xlim(1, max(k_max, 2))
        ax.set_xlabel("search iterations k")
        ax.set_ylabel(f"{what} {best} {short_label(metric, 20)}\nafter k iterations")
        ax.legend(loc="lower right" if not result.minimize else "upper right")
        return to_svg(fig, name)
