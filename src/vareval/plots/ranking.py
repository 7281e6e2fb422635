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
    if counts is None:
        return cell_matrix(
            names, np.where(np.isnan(values), 0.5, values), better, title=title,
            texts=[[f"{v:.2f}" for v in row] for row in values], cmap="RdBu", limits=(0, 1),
            dark=lambda v: abs(v - 0.5) > 0.3, bar="epsilon_min",
            ends=["0: row better\n(red)", "0.5", "1: column\nbetter (blue)"],
            width=width, name=name,
        )  # fmt: skip
    return cell_matrix(
        names, np.where(np.isnan(values), 0, values), better, title=title,
        texts=[[f"{int(v)}" if np.isfinite(v) else "" for v in row] for row in values],
        cmap="Blues", limits=(0, counts), dark=lambda v: v > 0.6 * counts,
        bar=f"tasks of {counts}", width=width, name=name,
    )  # fmt: skip


def cell_matrix(
    names, values, marks, *, title: str, texts, cmap: str, limits, dark, bar: str,
    ends=None, note: str = "", width: float = 7.0, name: str = "matrix",
):  # fmt: skip
    """A models x models heat map: row i against column j, the diagonal left blank.

    ``values`` are the colours (on ``cmap`` between ``limits``), ``texts`` the
    cells' numbers, drawn only where they fit (the colour carries them
    otherwise); a cell where ``marks`` is true carries a star. ``dark(v)``
    says where the text is white. The colour bar is labelled ``bar``, with
    ``ends`` as the labels of its low, middle and high ticks when given;
    ``note`` goes under the column labels (what the star means).
    """
    k = len(names)
    font = 7 if width < 5 else 9
    labels = [short_label(n, 14 if width < 5 else 20, lines=1) for n in names]
    height = min(width * 0.8, 2.6 + 0.45 * k)
    chars = max((len(t) for row in texts for t in row), default=1) + 1
    with figure(name, width=width, height=height) as (fig, ax):
        image = ax.imshow(values, cmap=cmap, vmin=limits[0], vmax=limits[1])
        ax.set_xticks(range(k), labels, rotation=90, fontsize=font)
        ax.set_yticks(range(k), labels, fontsize=font)
        ax.grid(False)
        ax.set_title(title, fontsize=font + 1)
        if note:
            fig.supxlabel(note, fontsize=font)
        cbar = fig.colorbar(image, ax=ax, shrink=0.8)
        cbar.set_label(bar, fontsize=font)
        if ends is not None:  # say on the figure what the colours mean
            cbar.set_ticks([limits[0], (limits[0] + limits[1]) / 2, limits[1]], labels=ends)
            cbar.ax.tick_params(labelsize=font - 1)
        fig.draw_without_rendering()  # lay out the labels: the cells' size is then known
        cell = ax.get_window_extent().width / k * 72 / fig.dpi  # points across one cell
        numbers = cell >= max(chars, 5) * 0.62 * font
        for i in range(k):
            for j in range(k):
                if i == j or not (numbers or marks[i, j]):
                    continue
                text = texts[i][j] if numbers else ""
                ax.text(
                    j,
                    i,
                    text + ("*" if marks[i, j] else ""),
                    ha="center",
                    va="center",
                    fontsize=font,
                    color="white" if dark(values[i, j]) else "black",
                )
    return fig
