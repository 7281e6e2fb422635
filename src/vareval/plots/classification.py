"""Classifier evaluation and band checks as pictures: a confusion matrix, a band's coverage."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import NEUTRAL, colour, figure, narrow, short_label, small_multiples

MAX_CELL_TEXT = 12  # classes up to which every cell carries its count


def confusion_plot(result, *, width: float = 7.0, name: str = "confusion-matrix"):
    """A confusion matrix (rows gold, columns predicted), shaded by each row's share.

    Shading by the share of the gold class makes classes of different sizes
    comparable; each cell is labelled with its count (up to ``MAX_CELL_TEXT`` classes).
    """
    c = len(result.labels)
    small = narrow(width)
    side = min(width * 0.75, 2.4 + 0.32 * c)
    font = 6.5 if small else 8
    with figure(name, width=width, height=side) as (fig, ax):
        image = _draw_confusion(ax, result, small)
        # above the whole figure: a small matrix leaves its axes too narrow for it
        fig.suptitle(f"{result.n:,} items; shading: share of the row", fontsize=font + 1)
        bar = "share of the gold class" if c > 2 else "row share"
        fig.colorbar(image, ax=ax, shrink=0.8).set_label(bar, fontsize=font)
    return fig


def confusions_plot(results: dict, *, width: float = 7.0, name: str = "confusion-matrices"):
    """One confusion matrix per system (``{name: ClassificationMetrics or ConfusionMatrix}``).

    Panels share the classes' order; each is shaded by the share of the gold
    class, as :func:`confusion_plot`.
    """
    small = narrow(width)
    m = len(results)
    c = max(len(getattr(r, "confusion", r).labels) for r in results.values())
    cols = min(m, 2 if small else 3)
    panel = min(0.9 * width / cols, 1.2 + 0.3 * c)
    with small_multiples(name, m, width, panel) as (fig, axes):
        for (system, result), ax in zip(results.items(), axes, strict=True):
            matrix = getattr(result, "confusion", result)
            image = _draw_confusion(ax, matrix, small or m > 1)
            ax.set_title(short_label(system, 16 if small else 24), fontsize=7 if small else 9)
        fig.colorbar(image, ax=axes, shrink=0.6).set_label("share of the gold class",
                                                          fontsize=6.5 if small else 8)  # fmt: skip
    return fig


def _draw_confusion(ax, result, small: bool):
    """Draw one confusion matrix on ``ax``; return the image (for a colour bar)."""
    matrix = np.asarray(result.matrix)
    c = len(result.labels)
    font = 6.5 if small else 8
    labels = [short_label(v, 10 if small else 16, lines=1) for v in result.labels]
    rows = matrix.sum(axis=1, keepdims=True)
    share = np.divide(matrix, rows, out=np.zeros(matrix.shape), where=rows > 0)
    image = ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    if c <= MAX_CELL_TEXT:
        for i in range(c):
            for j in range(c):
                ax.text(j, i, str(matrix[i, j]), ha="center", va="center", fontsize=font,
                        color="white" if share[i, j] > 0.6 else "black")  # fmt: skip
    ax.set_xticks(range(c), labels, rotation=90, fontsize=font)
    ax.set_yticks(range(c), labels, fontsize=font)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.grid(False)
    return image


def coverage_plot(result, *, width: float = 7.0, name: str = "coverage"):
    """Simulated pointwise coverage of a band against k, with Clopper-Pearson intervals.

    The nominal level is the dashed line; the simultaneous coverage (every k
    at once) and its interval are given in the title.
    """
    small = narrow(width)
    k = np.asarray(result.k, dtype=float)
    s_lo, s_hi = result.confidence_interval()
    if k.size:
        est = 100 * np.asarray(result.pointwise, dtype=float)
        lo = 100 * np.asarray(result.pointwise_low, dtype=float)
        hi = 100 * np.asarray(result.pointwise_high, dtype=float)
    else:  # a CDF band: only the coverage of the whole band, drawn at one point
        k, est = np.array([1.0]), np.array([100 * result.estimate])
        lo, hi = np.array([100 * s_lo]), np.array([100 * s_hi])
    with figure(name, width=width, height=2.3 if small else 2.9) as (fig, ax):
        ax.fill_between(k, lo, hi, color=colour(0), alpha=0.2, linewidth=0)
        ax.errorbar(k, est, yerr=[est - lo, hi - est], fmt="o-", color=colour(0),
                    markersize=3, capsize=2, linewidth=1)  # fmt: skip
        if result.k.size == 0:
            ax.set_xticks([1], ["whole CDF"])
        ax.axhline(100 * result.nominal, color="black", linestyle="--", linewidth=0.9)
        ax.set_title(
            f"{result.band}: simultaneous {100 * result.estimate:.1f}% "
            f"[{100 * s_lo:.1f}, {100 * s_hi:.1f}]"
            + ("" if small else f", nominal {100 * result.nominal:g}%, {result.n_trials:,} trials"),
            loc="left",
            color=NEUTRAL,
        )
        ax.set_xlabel("search iterations k" if result.k.size else "")
        ax.set_ylabel("coverage (%)")
        top = max(100.0, float(np.nanmax(hi)))
        ax.set_ylim(min(float(np.nanmin(lo)), 100 * result.nominal) - 2, top + 0.5)
    return fig
