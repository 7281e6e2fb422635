"""Section: per-method summaries with every individual score drawn."""

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
    pct,
)


def build(data: ReportData) -> Section:
    """Build this section from ``data``, or None when its data is absent."""
    from vareval.data.repeated import summarize
    from vareval.plots.summary import strip_plot

    # the same summaries (and design) as `vareval summarize` on this table
    summary = summarize(
        data.df, metric=data.metric, by=data.by, confidence=data.confidence,
        higher_is_better=data.higher_is_better,
    )  # fmt: skip
    summaries = {name: summary.results[name] for name in data.groups}
    data.facts["summaries"] = summaries
    c = conf(data.confidence)
    rows = []
    for name, s in summaries.items():
        cover = (
            ""
            if s.median_ci_coverage >= s.confidence - 1e-9
            else (f" (covers {pct(s.median_ci_coverage)})")
        )
        rows.append(
            [
                name,
                str(s.n),
                num(s.mean),
                interval(s.confidence_interval()),
                num(s.median),
                "n/a" if s.units else interval((s.median_low, s.median_high)) + cover,
                num(s.sd),
                num(s.se),
                num(s.iqr),
                f"{num(s.min)} \u2013 {num(s.max)}",
                f"{num(s.selected)} (selected)",
            ]
        )
    table = Table(
        [
            "method",
            "n",
            "mean",
            f"{c} CI (mean)",
            "median",
            f"{c} CI (median)",
            "SD",
            "SE",
            "IQR",
            "range",
            "best run",
        ],
        rows,
        caption=f"Per-method summaries of {data.metric!r} ({data.direction}). SD "
        "uses n\u22121; "
        "SE = SD/\u221an. The best run is a selected statistic, not the method's "
        "performance.",
        numeric=[False] + [True] * 10,
    )
    blocks = [
        Paragraph(
            summary.design.statement().capitalize()
            + "".join(f"; {n}" for n in summary.notes if "interval" in n)
            + "."
        ),
        table,
    ]
    short = [
        n for n, s in summaries.items() if s.median_ci_coverage < s.confidence - 1e-9
    ]
    if short:
        blocks.append(
            Paragraph(
                "With this few runs no order-statistic interval reaches the "
                "requested level for "
                + ", ".join(map(repr, short))
                + "; the widest one, [min, max], is shown with its exact coverage."
            )
        )
    blocks.append(
        Figure(
            lambda width: strip_plot(summaries, data.metric, width=width, name="scores"),
            caption="Every run as a dot (jittered vertically), the box spans the "
            "quartiles with "
            f"the median inside, the black tick is the mean with its {c} t interval, "
            "and the star is the best run, marked as selected.",
            name="scores",
        )
    )
    return Section(
        id="summaries",
        title="Per-method summaries, every run shown",
        estimand="The mean and the median target a method's typical score over the "
        f"repeated runs: each has a {c} confidence interval (t interval for the mean, "
        "distribution-free "
        "order-statistic interval for the median). SD, IQR and range describe "
        "run-to-run spread, not uncertainty about the centre.",
        how_to_read="Compare methods by their centres and intervals, not by their "
        "best runs: the "
        "best run (star) is what a single lucky run can show and is labelled selected.",
        blocks=blocks,
    )
