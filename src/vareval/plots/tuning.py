"""Tuning plots: tuning curves with their simultaneous bands, one panel per model.

Overlaid shaded bands of several models merge into one block where they
overlap, so each model gets its own panel (shared axes; the other models'
curves drawn thin and grey for reference). The view is zoomed to where
the curves differ: the y axis to the curves' range, not the score's bounds,
and k on a log scale, which spreads out the first iterations, where curves
rise and cross, and compresses the long flat tail.
"""

from __future__ import annotations

import numpy as np

from vareval.plots._style import (
    NEUTRAL,
    colour,
    figure,
    key,
    linestyle,
    narrow,
    plain_log_axis,
    series,
    short_label,
    small_multiples,
)

VERDICT_COLOURS = {
    "A better": colour(0), "B better": colour(1), "need more data": "#dddddd",
    "bands coincide at the bound": "#999999",
}  # fmt: skip


def _zoom(curves) -> tuple[float, float]:
    """Y limits around the curves: their range, plus as much band as is informative."""
    est = np.concatenate([c.estimate for c in curves])
    edges = np.concatenate([np.r_[c.lower, c.upper] for c in curves])
    edges = edges[np.isfinite(edges)]
    lo_e, hi_e = float(np.min(est)), float(np.max(est))
    span = max(hi_e - lo_e, 1e-9 * max(1.0, abs(hi_e)))
    lo = max(float(np.min(edges)), lo_e - 0.5 * span)
    hi = min(float(np.max(edges)), hi_e + 0.5 * span)
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad


def _k_axis(ax, k_max: float) -> None:
    """Search iterations on a log axis from 1 (plain numbers) once there are 10 or more."""
    ax.set_xlim(1, max(2.0, float(k_max)))
    if k_max >= 10:
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)


def _ylabel(q: float, higher_is_better: bool, metric: str, small: bool) -> str:
    what = "median" if q == 0.5 else f"{q:g}-quantile of"
    best = "best" if higher_is_better else "lowest"
    return f"{what} {best} {short_label(metric, 14 if small else 24)}\nafter k iterations"


def _band(ax, band, c, label=None, alpha=0.22, series_i=0) -> None:
    ax.fill_between(band.k, band.lower, band.upper, color=c, alpha=alpha, linewidth=0)
    for edge in (band.lower, band.upper):
        ax.plot(band.k, edge, color=c, linewidth=0.6)
    line = ax.plot(band.k, band.estimate, color=c, linestyle=linestyle(series_i), label=label)
    series(line[0], series_i)


def tuning_plot(result, metric: str | None = None, *, width: float = 7.0, name="tuning-curves"):
    """Each model's median tuning curve and simultaneous band, one panel per model.

    Parameters
    ----------
    result : vareval.data.tuning.TuningCurves
        Curves with ``cdf_bands`` per method (:func:`vareval.tuning_curve`).
    metric : str, optional
        The score's name for the axis label (default ``result.metric``).
    width : float, default 7.0
        Width in inches (3.3: one column of a paper).
    """
    metric = metric or result.metric
    small = narrow(width)
    k_max = int(np.max(result.k))
    ks = np.unique(np.r_[np.arange(1.0, min(k_max, 20) + 1), np.geomspace(1, k_max, 300)])
    curves = [
        result.cdf_bands[m].tuning_curve(ks, result.q, higher_is_better=result.higher_is_better)
        for m in result.methods
    ]
    height = 1.9 if small else 2.5
    with small_multiples(name, len(curves), width, height) as (fig, axes):
        for i, (method, band, ax) in enumerate(
            zip(result.methods, curves, axes, strict=True)
        ):
            for j, other in enumerate(curves):
                if j != i:
                    ax.plot(ks, other.estimate, color="#aaaaaa", linewidth=0.8)
            _band(ax, band, colour(i), series_i=i)
            ax.set_title(f"{short_label(method, 14 if small else 18)} (n = {band.n})",
                         fontsize=7 if small else 9)  # fmt: skip
        ax = axes[0]
        _k_axis(ax, k_max)
        ax.set_ylim(*_zoom(curves))
        fig.supxlabel("search iterations k")
        fig.supylabel(_ylabel(result.q, result.higher_is_better, metric, small))
    return fig


def band_plot(band, *, label: str = "", width: float = 7.0, name: str = "tuning-band"):
    """One tuning curve (:class:`~vareval.stats.TuningCurveBand`) with its band."""
    small = narrow(width)
    with figure(name, width=width, height=2.3 if small else 3.0) as (fig, ax):
        _band(ax, band, colour(0))
        ax.set_xlabel("search iterations k")
        ax.set_ylabel(_ylabel(band.q, band.higher_is_better, "score", small))
        ax.set_title(
            f"{label + ': ' if label else ''}{band.confidence:.0%} simultaneous "
            f"{band.method} band (n = {band.n})"
        )
        ax.set_ylim(*_zoom([band]))
        _k_axis(ax, float(np.max(band.k)))
    return fig


def comparison_plot(cmp, *, a: str = "A", b: str = "B", width=7.0, name="tuning-comparison"):
    """Two models' tuning curves as outlined bands, with the per-k verdict beneath.

    The bands are drawn as outlines (edges and curve, lightly filled) so
    where they overlap both stay visible; the strip under the axes colours
    each k by the verdict: A better, B better, or need more data.
    """
    small = narrow(width)
    with figure(
        name, width=width, height=2.6 if small else 3.4, nrows=2, sharex=True,
        gridspec_kw={"height_ratios": (8, 1)},
    ) as (fig, (ax, strip)):  # fmt: skip
        for i, (band, label) in enumerate(((cmp.band_a, a), (cmp.band_b, b))):
            # two overlapping bands: outlines carry them, the fill stays faint
            _band(ax, band, colour(i), label=short_label(label, 14 if small else 24), alpha=0.1,
                  series_i=i)  # fmt: skip
        ax.set_ylim(*_zoom([cmp.band_a, cmp.band_b]))
        ax.set_ylabel(_ylabel(cmp.band_a.q, cmp.band_a.higher_is_better, "score", small))
        ax.legend(loc="lower right" if cmp.band_a.higher_is_better else "upper right")
        sides = (("A better", a), ("B better", b))
        names = {v: f"{short_label(x, 12, lines=1)} better" for v, x in sides}
        k = np.asarray(cmp.k, dtype=float)
        step = np.diff(k, append=k[-1] + (k[-1] - k[-2] if k.size > 1 else 1))
        for verdict, c in VERDICT_COLOURS.items():
            hit = np.asarray(cmp.verdict) == verdict
            if hit.any():
                strip.bar(k[hit], 1, width=step[hit], align="edge", color=c, linewidth=0,
                          label=names.get(verdict, verdict))  # fmt: skip
        strip.set_yticks([])
        strip.grid(False)
        strip.set_xlabel("search iterations k")
        fig.legend(*strip.get_legend_handles_labels(), loc="outside lower center",
                   ncol=2 if small else 3)  # fmt: skip
        _k_axis(strip, k[-1] + step[-1])
    return fig


def cdf_band_plot(band, *, width: float = 7.0, name: str = "cdf-band"):
    """The empirical CDF of the search outcomes with its simultaneous band."""
    small = narrow(width)
    with figure(name, width=width, height=2.3 if small else 3.0) as (fig, ax):
        x = band.points
        ax.fill_between(x, band.lower_cdf, band.upper_cdf, step="post", color=colour(0),
                        alpha=0.22, linewidth=0)  # fmt: skip
        ax.step(x, band.estimate_cdf, where="post", color=colour(0), label="empirical CDF")
        for edge in (band.lower_cdf, band.upper_cdf):
            ax.step(x, edge, where="post", color=colour(0), linewidth=0.6)
        ax.set_xlabel("score")
        ax.set_ylabel("P(score \u2264 x)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(
            f"{band.confidence:.0%} simultaneous {band.method} band (n = {band.n})",
            color=NEUTRAL,
        )
    return fig


def parametric_plot(curve, metric: str = "score", *, width: float = 7.0,
                    name: str = "parametric-tuning-curve"):  # fmt: skip
    """A fitted quadratic tuning curve with its bootstrap band; beyond n marked as extrapolation."""
    small = narrow(width)
    k = np.asarray(curve.k, dtype=float)
    with figure(name, width=width, height=2.6 if small else 3.4) as (fig, ax):
        ax.fill_between(k, curve.lower, curve.upper, color=colour(0), alpha=0.22, linewidth=0)
        inside = ~curve.extrapolated
        ax.plot(k[inside], curve.estimate[inside], color=colour(0), label="fitted, within n")
        if curve.extrapolated.any():
            first = max(int(np.argmax(curve.extrapolated)) - 1, 0)
            ax.plot(k[first:], curve.estimate[first:], color=colour(0), linestyle="--",
                    label="model-based extrapolation")  # fmt: skip
            ax.axvspan(curve.n, k[-1], color=NEUTRAL, alpha=0.08, linewidth=0)
            ax.axvline(curve.n, color=NEUTRAL, linewidth=0.8)
            ax.text(curve.n, 0.97, f" beyond n = {curve.n}:\n model-based\n extrapolation",
                    transform=ax.get_xaxis_transform(), color=NEUTRAL, fontsize="small",
                    va="top")  # fmt: skip
        ax.set_ylabel(_ylabel(curve.q, curve.higher_is_better, metric, small))
        ax.set_xlabel("search iterations k")
        ax.legend(loc="upper left" if curve.higher_is_better else "lower left")
        fit = "fits" if curve.goodness_of_fit.fits else "DOES NOT FIT"
        ax.set_title(f"quadratic fit (c = {curve.c}): {fit} the data's band", color=NEUTRAL)
        _k_axis(ax, k[-1])
    return fig


def selection_plot(curves: dict, metric: str = "score", *, width: float = 7.0,
                   name: str = "selection-curve"):  # fmt: skip
    """Per method: the test score of the configuration chosen on validation after k trials.

    ``curves`` maps a method to a :class:`~vareval.stats.SelectionCurve`. The
    test curve is drawn with its pointwise interval, the validation curve it was
    chosen on dashed above it: the gap between them is the optimism of selection.
    """
    names = list(curves)
    with small_multiples(name, len(names), width) as (fig, axes):
        for i, (ax, method) in enumerate(zip(axes, names, strict=True)):
            c = curves[method]
            k = np.asarray(c.k, dtype=float)
            ax.fill_between(k, c.lower, c.upper, color=colour(0), alpha=0.22, linewidth=0)
            ax.plot(k, c.estimate, color=colour(0), marker="o", markersize=3,
                    label="test score of the choice")  # fmt: skip
            ax.plot(k, c.validation, color=NEUTRAL, linestyle="--", marker="s", markersize=3,
                    label="best validation score")  # fmt: skip
            ax.set_title(short_label(method), fontsize="small")
            if i == 0:
                ax.set_ylabel(metric)
            ax.set_xlabel("search iterations k")
        key(fig, axes[0].get_lines(), width)
    return fig
