"""Evals plots: each model's score with its interval, and the pairwise differences.

The scores are drawn one row per model, best at the top; the pairs either as
a forest of paired differences with their intervals or as a models x models
matrix of differences (row minus column) with the adjusted test's verdict.
"""

from __future__ import annotations

import numpy as np

from vareval.plots._style import NEUTRAL, colour, few_ticks, figure, key, narrow, short_label
from vareval.plots.comparisons import forest_plot
from vareval.plots.ranking import cell_matrix

# how the corrections and intervals are named in print
_NAMES = {"holm": "Holm", "bh": "BH", "bonferroni": "Bonferroni", "wilson": "Wilson",
          "clopper-pearson": "Clopper-Pearson", "bayes": "Beta-posterior",
          "bootstrap": "cluster-bootstrap"}


def differences_plot(labels, estimates, lows, highs, metric: str = "score", *,
                     width: float = 7.0, name: str = "eval-differences"):  # fmt: skip
    """Each pair ``a - b`` of models: the paired difference in mean score with its interval."""
    return forest_plot(labels, estimates, lows, highs, f"difference in {metric} (a \u2212 b)",
                       width=width, name=name)  # fmt: skip


def scores_plot(labels, estimates, lows, highs, *, interval: str, naive=None,
                metric: str = "score", width: float = 7.0, name: str = "eval-scores"):  # fmt: skip
    """Each model's score with its interval, one row per model, the best at the top.

    ``interval`` names the interval and its unit (``"95% Wilson interval over
    200 clusters"``), shown in the key. ``naive``, a pair ``(lows, highs)``,
    adds the naive CLT interval (every answer independent) as a thin grey
    line under each model's, to see how much too narrow it is.
    """
    est = np.asarray(estimates, dtype=float)
    lo, hi = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    m = est.size
    order = np.argsort(-est, kind="stable")
    small = narrow(width)
    ticks = [short_label(labels[i], 18 if small else 40) for i in order]
    lines = max((t.count("\n") + 1 for t in ticks), default=1)
    height = (0.9 if small else 1.0) + (0.2 + 0.13 * lines) * m
    with figure(name, width=width, height=height) as (fig, ax):
        y = np.arange(m)[::-1].astype(float)
        shown = ax.errorbar(
            est[order], y, xerr=[est[order] - lo[order], hi[order] - est[order]], fmt="o",
            color=colour(0), capsize=3, markersize=4 if small else 5, linewidth=1.4,
            label=short_label(interval, 30 if small else 60),
        )  # fmt: skip
        handles = [shown]
        if naive is not None:
            nlo, nhi = (np.asarray(v, dtype=float)[order] for v in naive)
            (faint,) = ax.plot(
                np.c_[nlo, nhi, np.full(m, np.nan)].ravel(), np.repeat(y - 0.28, 3),
                color=NEUTRAL, alpha=0.6, linewidth=1.0,
                label="naive CLT interval (every answer independent)",
            )  # fmt: skip
            handles.append(faint)
        few_ticks(ax.xaxis, 4 if small else 5)
        ax.set_yticks(y, ticks)
        ax.set_ylim(-0.7, m - 0.3)
        ax.set_xlabel(f"{metric} (mean over questions)")
        ax.grid(axis="y", visible=False)
        key(fig, handles, width)
    return fig


def differences_matrix(names, differences, pvalues, *, alpha: float, correction: str,
                       metric: str = "score", width: float = 7.0,
                       name: str = "eval-matrix"):  # fmt: skip
    """Models x models: the paired difference, row minus column; red where the row is ahead.

    A star marks a significant difference (``correction``-adjusted p < ``alpha``).
    ``differences[i, j]`` is model i's score minus model j's (antisymmetric),
    ``pvalues[i, j]`` the pair's adjusted p-value; the diagonal is blank.
    """
    d = np.asarray(differences, dtype=float)
    p = np.asarray(pvalues, dtype=float)
    top = float(np.nanmax(np.abs(d), initial=0.0)) or 1.0
    places = max(0, 1 - int(np.floor(np.log10(top))))  # two digits of the largest
    texts = [["" if np.isnan(v) else f"{v:+.{places}f}".replace("-", "\u2212") for v in row]
             for row in d]  # fmt: skip
    mark = np.nan_to_num(p, nan=1.0) < alpha
    word = "p" if correction == "none" else f"{_NAMES.get(correction, correction)} p"
    return cell_matrix(
        names, np.nan_to_num(d), mark, texts=texts, cmap="RdBu_r", limits=(-top, top),
        title="row \u2212 column", note=f"*: {word} < {alpha:g}",
        dark=lambda v: abs(v) > 0.6 * top, bar=f"difference in {metric}",
        ends=[f"\u2212{top:.{places}f}: column\nahead (blue)", "0",
              f"+{top:.{places}f}: row\nahead (red)"],
        width=width, name=name,
    )  # fmt: skip
