"""Plot of tuning curves with their simultaneous confidence bands (job 6)."""

from __future__ import annotations

import numpy as np

# IBM Design colour-blind-safe palette (as in the optimal design analysis case study)
PALETTE = ["#648FFF", "#FFB000", "#DC267F", "#785EF0", "#FE6100"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1))]


def plot_tuning_curves(result, path=None, *, k_max=None):
    """Plot each method's median tuning curve and its simultaneous band.

    Parameters
    ----------
    result : vareval.data.tuning.TuningCurves
        The curves, as returned by :func:`vareval.tuning_curve`.
    path : str or path-like, optional
        Where to save the figure (format from the extension); if ``None``
        the figure is returned without saving.
    k_max : int, optional
        Largest ``k`` on the x axis; default the largest ``k`` in ``result``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    # A bare Figure renders with the Agg canvas and leaves pyplot's global
    # backend (and a notebook user's figures) alone.
    from matplotlib.figure import Figure

    k_max = int(k_max or max(result.k))
    ks = np.linspace(1, k_max, 400) if k_max > 1 else np.array([1.0])
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.subplots()
    for i, name in enumerate(result.methods):
        colour, style = PALETTE[i % len(PALETTE)], LINESTYLES[i % len(LINESTYLES)]
        band = result.cdf_bands[name].tuning_curve(
            ks, result.q, minimize=result.minimize
        )
        label = f"{name} (n={band.n})"
        ax.plot(ks, band.estimate, color=colour, linestyle=style, label=label)
        ax.fill_between(ks, band.lower, band.upper, color=colour, alpha=0.25, lw=0)
    what = "median" if result.q == 0.5 else f"{result.q:g}-quantile"
    direction = "min" if result.minimize else "max"
    ax.set_xlabel("search iterations k")
    ax.set_ylabel(f"{what} {direction} of {result.metric} over k iterations")
    ax.set_title(
        f"Tuning curves, {result.confidence:.0%} simultaneous {result.method} bands"
    )
    ax.set_xlim(1, k_max)
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
