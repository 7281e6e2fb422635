"""Ranking plots across tasks: the critical-difference diagram and the ASO matrix."""

from __future__ import annotations

import numpy as np

from vareval.plots._style import colour, figure, narrow, short_label


def _draw_cd(fig, ranking, width: float) -> None:
    """Demsar's diagram: mean ranks on an axis, best on the left, CD and cliques as bars."""
    k = len(ranking.names)
    order = list(ranking.order)
    ranks = ranking.mean_ranks
    font = 7 if width < 5 else 9
    chars = 10 if width < 5 and k > 6 else 16
    texts = [
        f"{short_label(n, chars, lines=1)} ({r:.2f})"
        for n, r in zip(ranking.names, ranks, strict=True)
    ]
    longest = max(map(len, texts)) * 0.58 * font / 72  # inches of the longest label
    side = min(0.42, longest / width + 0.04)  # room for the labels, in figure widths
    margin = 0.06 * (k - 1)  # leader lines run past the axis ends to the labels
    left = order[: (k + 1) // 2]
    right = order[(k + 1) // 2 :][::-1]  # worst at the top on the right, as Demsar draws
    n_lines = max(len(left), len(right))
    n_cliques = len(ranking.cliques)
    clique_gap, line_gap = 0.22, 0.42
    bottom = -(clique_gap * (n_cliques + 1) + line_gap * n_lines)
    ax = fig.add_axes((side, 0.03, 1 - 2 * side, 0.94))
    ax.set_xlim(1 - margin, k + margin)
    ax.set_ylim(bottom - 0.1, 1.0)
    ax.axis("off")
    ax.plot([1, k], [0, 0], color="black", lw=1)
    every = 1 if (1 - 2 * side) * width * 72 / k >= 2.2 * font else 2  # room per rank
    for r in range(1, k + 1):
        ax.plot([r, r], [0, 0.1], color="black", lw=1)
        if (r - 1) % every == 0:
            ax.text(r, 0.15, str(r), ha="center", va="bottom", fontsize=font)
    cd = ranking.critical_difference
    ax.plot([1, min(k, 1 + cd)], [0.7, 0.7], color="black", lw=2, solid_capstyle="butt")
    ax.text(1 + min(cd, k - 1) / 2, 0.75, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=font)
    for j, clique in enumerate(ranking.cliques):
        lo, hi = min(ranks[clique]), max(ranks[clique])
        y = -clique_gap * (j + 1)
        ax.plot([lo - 0.03, hi + 0.03], [y, y], color="#D55E00", lw=3, solid_capstyle="round")
    for members, x_edge, ha in ((left, 1 - margin, "right"), (right, k + margin, "left")):
        for i, m in enumerate(members):
            y = -clique_gap * (n_cliques + 1) - line_gap * i
            ax.plot([ranks[m], ranks[m], x_edge], [0, y, y], color="#555555", lw=0.8)
            ax.text(
                x_edge + (-0.02 if ha == "right" else 0.02) * (k - 1),
                y,
                texts[m],
                ha=ha,
                va="center",
                fontsize=font,
                clip_on=False,
            )


def _cd_height(ranking) -> float:
    k = len(ranking.names)
    return 0.9 + 0.3 * ((k + 1) // 2) + 0.15 * len(ranking.cliques)


def cd_diagram(ranking, *, width: float = 7.0, name: str = "cd-diagram"):
    """The critical-difference diagram of a :class:`~vareval.stats.Ranking` as a Figure.

    Mean ranks run from 1 (best, left) to k; a bar under the axis joins
    methods whose mean ranks differ by at most the Nemenyi critical
    difference (shown above the axis), i.e. that the test does not separate.
    """
    with figure(name, width=width, height=_cd_height(ranking), nrows=0) as (fig, _):
        fig.set_layout_engine("none")
        _draw_cd(fig, ranking, width)
    return fig


def signed_rank_plot(result, *, a: str = "A", b: str = "B", width=7.0, name="signed-rank"):
    """Posterior probabilities of the Bayesian signed-rank test as one stacked bar.

    The bar's three segments are the shares of posterior samples in which A
    better (by more than the ROPE), practically equivalent (inside the ROPE)
    and B better is the most probable; they sum to one.
    """
    small = narrow(width)
    parts = (
        (f"{short_label(a, 14, lines=1)} better", result.p_left, colour(0)),
        (f"within ROPE \u00b1{result.rope:g}", result.p_rope, "#bbbbbb"),
        (f"{short_label(b, 14, lines=1)} better", result.p_right, colour(1)),
    )
    with figure(name, width=width, height=1.35) as (fig, ax):
        left = 0.0
        for label, p, c in parts:
            ax.barh(0, p, left=left, height=0.7, color=c, edgecolor="white",
                    label=f"{label}: {p:.3f}")  # fmt: skip
            left += p
        ax.set_xlim(0, 1)
        ax.set_yticks([])
        ax.grid(axis="y", visible=False)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("posterior probability (Bayesian signed-rank test)")
        fig.legend(loc="outside lower center", ncol=1 if small else 3, handlelength=1.2)
    return fig


def aso_matrix(
    names, values, better, *, title: str, counts=None, width=7.0, name: str = "aso-matrix"
):
    """Heat map of epsilon_min (or, with ``counts``, of tasks won) for row over column.

    ``values[i, j]`` is epsilon_min of row i over column j (0: row dominates,
    1: column dominates), or with ``counts`` the number of tasks (out of
    ``counts``) on which row i almost stochastically dominates column j.
    Cells where ``better`` is true carry a star.
    """
    k = len(names)
    font = 7 if width < 5 else 9
    labels = [short_label(n, 14, lines=1) for n in names]
    height = min(width * 0.8, 2.6 + 0.45 * k)
    with figure(name, width=width, height=height) as (fig, ax):
        if counts is None:
            image = ax.imshow(np.where(np.isnan(values), 0.5, values), cmap="RdBu", vmin=0, vmax=1)
            bar = "epsilon_min"
        else:
            image = ax.imshow(
                np.where(np.isnan(values), 0, values), cmap="Blues", vmin=0, vmax=counts
            )
            bar = f"tasks of {counts}"
        # a cell's number only where it fits (the colour carries it otherwise)
        cell = 0.45 * width * 72 / k  # points across one cell, roughly
        numbers = cell >= 5 * 0.62 * font
        for i in range(k):
            for j in range(k):
                if i == j or not (numbers or better[i, j]):
                    continue
                v = values[i, j]
                text = "" if not numbers else f"{v:.2f}" if counts is None else f"{int(v)}"
                dark = abs(v - 0.5) > 0.3 if counts is None else v > 0.6 * counts
                ax.text(
                    j,
                    i,
                    text + ("*" if better[i, j] else ""),
                    ha="center",
                    va="center",
                    fontsize=font,
                    color="white" if dark else "black",
                )
        ax.set_xticks(range(k), labels, rotation=90, fontsize=font)
        ax.set_yticks(range(k), labels, fontsize=font)
        ax.grid(False)
        ax.set_title(title, fontsize=font + 1)
        cbar = fig.colorbar(image, ax=ax, shrink=0.8)
        cbar.set_label(bar, fontsize=font)
        if counts is None:  # say on the figure what the colours mean
            ends = ["0: row better\n(red)", "0.5", "1: column\nbetter (blue)"]
            cbar.set_ticks([0, 0.5, 1], labels=ends)
            cbar.ax.tick_params(labelsize=font - 1)
    return fig
