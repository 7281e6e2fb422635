"""Section: confidence sequences of sequential runs, shown when a store holds one.

Built from the ``sequences`` table of a run store (``extras["sequential"]``,
filled by the report command when its input is a store).
"""

from __future__ import annotations

from vareval.report.sections._base import Figure, Paragraph, ReportData, Section, Table, num

_EXPLAIN = {
    "difference": "the sequence excluded 0",
    "equivalent within margin": "the sequence lay inside the margin",
    "budget": "the budget of seeds was spent",
    "not settled": "the run has not stopped yet",
}


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when the store holds no sequence."""
    spec = data.extras.get("sequential") or {}
    records = spec.get("records") or []
    if not records:
        return None
    from functools import partial

    from vareval.experiment.sequential import stored_sequence
    from vareval.plots.sequential import sequence_plot

    rows, blocks = [], []
    for i, rec in enumerate(records):
        cs = stored_sequence(rec)
        label = f"{rec['a']} \u2212 {rec['b']}"
        ci = cs.confidence_interval()
        rows.append([
            rec["metric"], label, cs.method, str(int(cs.n[-1])),
            rec["reason"] or "running", num(cs.estimate[-1]),
            f"[{num(ci.low)}, {num(ci.high)}]",
        ])
        blocks.append(Figure(
            partial(sequence_plot, cs, rec["metric"], label, name=f"sequential-{i + 1}"),
            f"{label} on {rec['metric']}: the running mean difference and its "
            f"{cs.confidence:.0%} confidence sequence over the paired seeds"
            + (f"; stopped at n = {cs.stop} because {_EXPLAIN[cs.reason]}." if cs.stop else "."),
            name=f"sequential-{i + 1}",
        ))
    table = Table(
        ["metric", "comparison", "sequence", "pairs", "stopped", "estimate", "interval at stop"],
        rows, caption="Sequential runs recorded in the store.",
        numeric=[False, False, False, True, False, True, False],
    )
    return Section(
        id="sequential",
        title="Runs until settled",
        estimand=(
            "The mean paired difference between two experiments over seeds (common random "
            "numbers), with an anytime-valid confidence sequence: it covers the true "
            "difference at every number of pairs at once, so looking after every batch and "
            "stopping when it settles keeps its level."
        ),
        how_to_read=(
            "The band narrows as pairs accrue. The run stopped when the band left zero (a "
            "difference), fell inside the dashed margin (equivalent) or the budget ran out; "
            "the interval at the stop is valid whatever made it stop. The betting and "
            "empirical-Bernstein sequences (bounded metrics) hold at every n; the "
            "normal-mixture one (no bounds) only asymptotically."
        ),
        blocks=[table, *blocks, Paragraph(
            "Every trial of a sequential run is kept in the store; the sequence is recomputed "
            "from them in seed order."
        )],
    )
