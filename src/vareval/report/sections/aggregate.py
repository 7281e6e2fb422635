"""Section: performance across tasks.

Shown when the report is told which column names the task
(``extras["tasks"] = {"task": [...], "normalize": ..., "pair_on": ...}``); built
on :func:`vareval.data.aggregate.aggregate`.
"""

from __future__ import annotations

from vareval.report.sections._base import (
    Figure,
    Paragraph,
    ReportData,
    Section,
    Table,
    conf,
    interval,
    num,
)

_NAMES = {"median": "median", "iqm": "IQM", "mean": "mean", "optimality_gap": "optimality gap"}


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when no task column is named."""
    spec = data.extras.get("tasks")
    if not spec:
        return None
    from vareval.data.aggregate import aggregate
    from vareval.plots.aggregate import improvement_plot, interval_plot, profile_plot

    res = aggregate(
        data.df,
        metric=data.metric,
        by=data.by,
        task=spec["task"],
        pair_on=spec.get("pair_on"),
        normalize=spec.get("normalize", "none"),
        confidence=data.confidence,
        rng=data.seed,
    )
    ie, profile = res["intervals"], res["profile"]
    improvements = [v for k, v in res.results.items() if k.startswith("P(")]
    c = conf(data.confidence)
    rows = [
        [m]
        + [
            f"{num(ie.estimate[i, j])} {interval((ie.low[i, j], ie.high[i, j]))}"
            for j in range(len(ie.aggregates))
        ]
        for i, m in enumerate(ie.methods)
    ]
    blocks = [
        Paragraph(f"{res.title}; {ie.n_resamples:,} resamples, seed {data.seed}."),
        Table(
            ["method"] + [f"{_NAMES[a]} {c} CI" for a in ie.aggregates],
            rows,
            caption="IQM: mean of the middle 50 % of all run x task scores; median: of the "
            "per-task means; optimality gap: how far runs fall short of "
            f"gamma = {ie.gamma:g} (lower is better).",
            numeric=[False] + [True] * len(ie.aggregates),
        ),
        Figure(
            lambda width: interval_plot(
                ie, xlabel=data.metric, width=width, name="aggregate-intervals"
            ),
            caption=f"Point estimates (ticks) and {c} stratified-bootstrap intervals (bars).",
            name="aggregate-intervals",
        ),
        Figure(
            lambda width: profile_plot(profile, width=width, name="aggregate-profile"),
            caption="Fraction of runs scoring above each threshold; shaded: a band that "
            f"holds for the whole curve at once with {c} confidence; dotted: pointwise "
            "intervals.",
            name="aggregate-profile",
        ),
    ]
    if improvements:
        blocks.append(
            Figure(
                lambda width: improvement_plot(
                    improvements, width=width, name="aggregate-improvement"
                ),
                caption="Probability that a run of X beats a run of Y on a task picked at "
                f"random, with its interval; 0.5 (dashed) is no difference. {res.notes[0]}; "
                f"{res.notes[1]}.",
                name="aggregate-improvement",
            )
        )
    return Section(
        id="aggregate",
        title="Across tasks: aggregates, profiles, probability of improvement",
        estimand="Each method's expected performance over runs on these tasks "
        "(mean, median of task means, interquartile mean, optimality gap), "
        "its score distribution, and P(X > Y) averaged over tasks.",
        how_to_read="Intervals come from resampling runs within each task (tasks kept), "
        "so they speak about these tasks; compare methods by their intervals, not "
        "their point estimates, and prefer the IQM to the mean (outlier runs) and to "
        "the median (few tasks).",
        blocks=blocks,
    )
