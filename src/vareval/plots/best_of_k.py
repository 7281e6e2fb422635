"""Best-of-k plots: the best-of-k illusion and ranking stability as runs grow."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import colour, figure, narrow, short_label


def best_of_k_plot(results: dict, *, width: float = 7.0, name: str = "best-of-k"):
    """Median (solid) and 90th-percentile (dashed) apparent gap against k.

    Parameters
    ----------
    results : dict of str to BestOfK
        ``vareval.stats.best_of_k`` results keyed by method.
    """
    small = narrow(width)
    with figure(name, width=width, height=2.6 if small else 3.3) as (fig, ax):
        for i, (label, r) in enumerate(results.items()):
            ks = np.asarray(r.ks)
            ax.plot(
                ks,
                100 * np.asarray(r.median_gap),
                "o-",
                color=colour(i),
                label=f"{short_label(label, 14 if small else 28)}: median",
            )
            ax.plot(
                ks,
                100 * np.asarray(r.p90_gap),
                "s--",
                color=colour(i),
                alpha=0.8,
                label=f"{short_label(label, 14 if small else 28)}: 90th pct.",
            )
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k: runs per method, best one kept")
        ax.set_ylabel("apparent gap between\nidentical methods (%)")
        ax.set_ylim(bottom=0)
        if small:
            fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2)
        else:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def ranking_plot(result, label: str = "", *, width: float = 7.0, name: str = "ranking"):
    """Share of simulated k-run experiments ranking two methods as the full samples."""
    small = narrow(width)
    with figure(name, width=width, height=2.6 if small else 3.1) as (fig, ax):
        ks = np.asarray(result.ks)
        for i, (field, text) in enumerate(
            (
                ("mean_of_k", "mean of k runs"),
                ("median_of_k", "median of k runs"),
                ("best_of_k", "best of k runs (selected)"),
            )
        ):
            ax.plot(
                ks,
                100 * np.asarray(getattr(result, field)),
                "o-",
                color=colour(i),
                label=text,
                markersize=4,
            )
        ax.axhline(50, color="black", linewidth=0.8, linestyle=":")
        ax.set_ylim(0, 101)
        ax.set_xlabel("k: runs per method")
        ax.set_ylabel("same ranking as the full\nsamples' means (%)")
        if label:
            ax.set_title(short_label(label, 40 if small else 60), loc="left")
        ax.legend(loc="lower right")
    return fig
