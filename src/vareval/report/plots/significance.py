"""Plot for job 5: the resampled distribution of delta behind a paired test."""

from __future__ import annotations

import numpy as np

from vareval._format import number


def delta_distribution(result, *, bins: int = 60, ax=None):
    """Histogram of the resampled deltas of a paired test, with delta, CI and threshold.

    For a paired bootstrap the histogram is centred near the observed delta;
    the dashed line at ``2 delta`` is the textbook's one-sided threshold
    (resamples beyond it are the one-sided p-value's hits). For approximate
    randomization the histogram is the null distribution around 0 and the
    line marks the observed delta.

    Parameters
    ----------
    result : PairedTestResult
        From :func:`vareval.stats.paired_bootstrap` or
        :func:`vareval.stats.paired_randomization`.
    bins : int, default 60
    ax : matplotlib Axes, optional
        Draw into it; by default a new figure (Agg backend) is made.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if ax is None:
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 3.2))
    else:
        fig = ax.figure
    dist = np.asarray(result.distribution, dtype=float)
    delta = result.estimate
    ax.hist(dist, bins=bins, color="#56B4E9", edgecolor="white", linewidth=0.3)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.axvline(
        delta, color="#D55E00", linewidth=1.6, label=f"observed δ = {number(delta, signed=True)}"
    )
    if result.test == "paired bootstrap":
        lo, hi = result.confidence_interval()
        ax.axvspan(
            lo,
            hi,
            color="#E69F00",
            alpha=0.15,
            label=f"{result.confidence:.0%} CI ({result.ci_method})",
        )
        ax.axvline(
            2 * delta,
            color="#0072B2",
            linestyle="--",
            linewidth=1.2,
            label="2δ (one-sided threshold)",
        )
        ax.set_xlabel(f"δ({result.metric}) on bootstrap test sets")
    else:
        ax.set_xlabel(f"δ({result.metric}) under random swaps (null)")
    ax.set_ylabel("resamples")
    ax.set_title(
        f"{result.test}: p = {result.pvalue:.4g} ({result.alternative})", fontsize=10
    )
    ax.legend(frameon=False, fontsize=8)
    return fig
