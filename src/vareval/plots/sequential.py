"""Sequential plot: a confidence sequence over the number of pairs."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import NEUTRAL, SELECTED, colour, figure, narrow, short_label


def draw_sequence(ax, cs, metric: str, label: str) -> None:
    """Draw the running estimate, the sequence's band, zero, the margin and the stop on ``ax``."""
    n = np.asarray(cs.n)
    low, high = np.asarray(cs.low, float), np.asarray(cs.high, float)
    finite = np.isfinite(low) & np.isfinite(high)
    # each n holds its value over [n, n + 1): the last pair is drawn too
    x, est = np.append(n, n[-1] + 1), np.append(cs.estimate, cs.estimate[-1])
    keep = np.append(finite, finite[-1])
    ax.fill_between(x[keep], np.append(low, low[-1])[keep], np.append(high, high[-1])[keep],
                    step="post", color=colour(0), alpha=0.25, linewidth=0,
                    label=f"{cs.confidence:.0%} confidence sequence")
    ax.step(x, est, where="post", color=colour(0), label="running mean difference")
    ax.axhline(0, color="black", linewidth=0.9)
    span = np.concatenate([low[finite], high[finite], np.asarray(cs.estimate), [0.0]])
    if cs.margin is not None:
        m = float(cs.margin)
        span = np.concatenate([span, [-m, m]])
        thin = 2 * m < 0.04 * (span.max() - span.min())  # the lines would sit on zero
        ax.axhspan(-m, m, color=NEUTRAL, alpha=0.35 if thin else 0.12, linewidth=0)
        for sign in (-1, 1):
            ax.axhline(sign * m, color=NEUTRAL, linestyle="--", linewidth=0.9,
                       label=(f"equivalence margin \u00b1{m:g}"
                              + (" (a thin band here)" if thin else "")) if sign > 0 else None)
    looks = np.asarray(cs.looks)
    if 0 < looks.size < n.size:  # batched: mark where the rule looked
        ax.plot(looks, np.asarray(cs.estimate)[looks - 1], "o", color=colour(0), markersize=3)
    if cs.stop:
        ax.axvline(cs.stop, color=SELECTED, linewidth=1.1, label=f"stop: {cs.reason}")
    pad = 0.05 * (span.max() - span.min() or 1.0)
    ax.set_ylim(span.min() - pad, span.max() + pad)
    ax.set_xlim(1, n[-1] + 1)
    ax.set_xlabel("pairs (n)")
    ax.set_ylabel(metric)
    ax.set_title(f"difference {short_label(label, 22 if narrow(ax.figure.get_figwidth()) else 50)}")
    wide = not narrow(ax.figure.get_figwidth())
    ax.figure.legend(loc="outside lower center", ncol=2 if wide else 1)


def sequence_plot(
    cs, metric: str = "score", label: str = "A \u2212 B", *, width: float = 7.0,
    name: str = "sequential",
):  # fmt: skip
    """The confidence sequence of a paired comparison as a Figure (see :func:`draw_sequence`)."""
    with figure(name, width=width, height=3.0 if narrow(width) else 3.6) as (fig, ax):
        draw_sequence(ax, cs, metric, label)
    return fig
