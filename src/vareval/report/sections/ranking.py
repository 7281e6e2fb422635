"""Section: ranks across tasks, the Friedman test and the critical-difference diagram.

Shown when the report is told which column names the task
(``extras["tasks"] = {"task": [...], "pair_on": ...}``, as for the aggregates);
built on :func:`vareval.data.ranking.rank`.
"""

from __future__ import annotations

from vareval.report.sections._base import Figure, Paragraph, ReportData, Section, Table, num


def _p(p: float) -> str:
    return num(p, 2) if p >= 1e-4 else "< 0.0001"


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when no task column is named."""
    spec = data.extras.get("tasks")
    if not spec or len(data.groups) < 2:
        return None
    from vareval.data.ranking import rank
    from vareval.plots.ranking import cd_diagram

    table = rank(
        data.df,
        metric=data.metric,
        by=data.by,
        task=spec["task"],
        pair_on=spec.get("pair_on"),
        higher_is_better=data.higher_is_better,
    )
    r = table["ranking"]
    f = r.friedman
    rows = [[r.names[i], num(r.mean_ranks[i], 3)] for i in r.order]
    pairs = table.to_frame().reset_index()
    pair_rows = [
        [
            row.method,
            row.versus,
            num(row.rank_difference, 3),
            _p(row.nemenyi_pvalue),
            _p(row.wilcoxon_pvalue_holm),
        ]
        for row in pairs.itertuples(index=False)
    ]
    blocks = [
        Paragraph(
            f"{table.title}. " + " ".join(r.omnibus_lines(_p)) + "."
        ),
        Figure(
            lambda width: cd_diagram(r, width=width, name="cd-diagram"),
            caption=f"Critical-difference diagram: mean rank over {f.n_datasets} tasks (1 = best, "
            f"left). Methods joined by a bar are within Nemenyi's critical difference "
            f"({num(r.critical_difference, 3)} at alpha {r.alpha:g}) of each other: the "
            "test does not separate them.",
            name="cd-diagram",
        ),
        Table(
            ["method", "mean rank"], rows, caption="Mean rank per method.", numeric=[False, True]
        ),
        Table(
            ["method", "versus", "rank difference", "Nemenyi p", "Wilcoxon p (Holm)"],
            pair_rows,
            caption="Each pair: the Nemenyi test on mean ranks and the Wilcoxon signed-rank "
            "test over tasks with Holm's adjustment (its verdict on a pair does not depend "
            "on the other methods compared).",
            numeric=[False, False, True, True, True],
        ),
    ]
    return Section(
        id="ranking",
        title="Ranks across tasks",
        estimand="The expected rank of each method on a task drawn from the population the "
        "tasks represent (Demsar 2006); the methods' scores on each task are their mean "
        "over runs, and only their order within a task matters.",
        how_to_read="A small Friedman p says the methods do not all rank alike. Pairs not "
        "joined by a bar in the diagram differ by more than the critical difference.",
        blocks=blocks,
    )
