"""Significance plot: the resampled distribution of delta behind a paired test."""

from __future__ import annotations

import numpy as np

from vareval._format import number
from vareval.plots._style import SELECTED, colour, figure, key, narrow, short_label

MAX_BINS = 60  # histogram bins at most; a lattice is merged into whole cells
MIN_DISTINCT = 600  # a distribution with fewer distinct values off any lattice: ECDF
MAX_STEMS = 25  # up to this many distinct values: one stem per value (a discrete law)


def lattice_step(values, n: int) -> float | None:
    """The lattice spacing of ``values`` if they lie on multiples of ``1/n``, else None.

    A difference of two accuracies on ``n`` items moves in steps of ``1/n``
    (under random swaps in steps of ``2/n``: a swap moves both systems);
    bins that ignore this hold two lattice points or one by turns (aliasing:
    a comb that is not in the data). The spacing is ``g/n`` with ``g`` the
    greatest common divisor of the values' distances in units of ``1/n``.
    """
    if not n or n < 1:
        return None
    scaled = np.asarray(values, dtype=float) * n
    units = np.round(scaled)
    if np.any(np.abs(scaled - units) > 1e-6 * max(1.0, float(np.max(np.abs(scaled))))):
        return None
    g = int(np.gcd.reduce(np.abs(units - units.min()).astype(np.int64)))
    return max(g, 1) / n


def lattice_bins(values, step: float, max_bins: int = MAX_BINS) -> np.ndarray:
    """Bin edges centred on the lattice: each bin holds the same whole number of points."""
    values = np.asarray(values, dtype=float)
    origin = values.min()
    idx = np.round((values - origin) / step)
    per_bin = max(1, int(np.ceil((idx.max() + 1) / max_bins)))
    edges = np.arange(0, idx.max() + per_bin + 1, per_bin) - 0.5
    return origin + edges * step


def delta_distribution(result, *, width: float = 7.0, title: str | None = None, name="resampling"):
    """The resampled deltas of a paired test, with the observed delta, its CI and threshold.

    For a paired bootstrap the distribution is centred near the observed
    delta; on a one-sided test the dashed line at ``2 delta`` is the
    textbook's threshold (resamples beyond it are the p-value's hits), and it
    is drawn only there. For approximate randomization the distribution is
    the null around 0 and the lines mark the observed delta (and its mirror
    for a two-sided test).

    Values on a lattice (a difference of accuracies on ``n`` items moves in
    steps of 1/n) get bins centred on the lattice, each holding the same
    number of lattice points, so the histogram shows no comb that is not in
    the data; values off any lattice with few distinct values are drawn as an
    empirical CDF instead, and a distribution of at most ``MAX_STEMS``
    distinct values (an exact test with one or two discordant items) as one
    stem per value: a discrete law, not a histogram's continuum.

    Parameters
    ----------
    result : PairedTestResult
        From :func:`vareval.stats.paired_bootstrap` or
        :func:`vareval.stats.paired_randomization`.
    width : float, default 7.0
        Width in inches (3.3: one column of a paper).
    title : str, optional
        Title above the axes (default: the test and its p-value).

    Returns
    -------
    matplotlib.figure.Figure
    """
    small = narrow(width)
    dist = np.asarray(result.distribution, dtype=float)
    delta = float(result.estimate)
    bootstrap = result.test == "paired bootstrap"
    step = lattice_step(dist, result.n)
    values, counts = np.unique(dist, return_counts=True)
    stems = values.size <= MAX_STEMS
    ecdf = not stems and step is None and values.size < MIN_DISTINCT
    with figure(name, width=width, height=2.6 if small else 2.9) as (fig, ax):
        if stems:  # few distinct values (1-2 discordant items): drawn as the discrete law
            ax.vlines(values, 0, counts, color=colour(4), linewidth=2.5)
            ax.plot(values, counts, "o", color=colour(0), markersize=4)
            from matplotlib.ticker import MaxNLocator

            ax.set_ylim(0, 1.08 * counts.max())
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
            ax.set_ylabel("resamples")
            if values.size <= 6:
                ax.set_xticks(values, [f"{v:+.4g}" for v in values])
        elif ecdf:
            x = np.sort(dist)
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=colour(0))
            ax.set_ylabel("share of resamples \u2264 x")
        else:
            bins = lattice_bins(dist, step) if step else MAX_BINS
            ax.hist(dist, bins=bins, color=colour(4), edgecolor="white", linewidth=0.3)
            ax.set_ylabel("resamples")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.axvline(delta, color=SELECTED, linewidth=1.6,
                   label=f"observed \u03b4 = {number(delta, signed=True)}")  # fmt: skip
        one_sided = result.alternative != "two-sided"
        if bootstrap:
            lo, hi = result.confidence_interval()
            if np.isfinite(lo) and np.isfinite(hi):
                ax.axvspan(lo, hi, color=colour(1), alpha=0.18,
                           label=f"{result.confidence:.0%} CI ({result.ci_method})")  # fmt: skip
            if one_sided:
                ax.axvline(2 * delta, color=colour(0), linestyle="--", linewidth=1.2,
                           label="2\u03b4 (one-sided threshold)")  # fmt: skip
            where = "on bootstrap test sets"
        else:
            if not one_sided:
                ax.axvline(-delta, color=SELECTED, linestyle="--", linewidth=1.0,
                           label="\u2212\u03b4 (two-sided)")  # fmt: skip
            where = "under random swaps (null)"
        metric = short_label(result.metric, 14 if small else 30)
        ax.set_xlabel(f"\u03b4 in {metric}" + ("" if small else f" {where}"))
        p = f"p = {result.pvalue:.2g}" if result.pvalue < 1e-3 else f"p = {result.pvalue:.3f}"
        test = result.test.split()[-1] if small else result.test  # "randomization"
        ax.set_title(title or f"{test}: {p} ({result.alternative})", loc="left")
        key(fig, ax.get_legend_handles_labels()[0], width, "lower")
    return fig
