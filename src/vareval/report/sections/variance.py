"""Section: variance components and the mixed-model tests (DECoVaC).

Shown when the report is asked for random effects (``extras["variance"]``,
e.g. ``--random seed,config``, or a run store); built on
:func:`vareval.data.variance.variance` when that module is installed.
"""

from __future__ import annotations

import warnings

from vareval.errors import VarevalError, VarevalWarning
from vareval.report.sections._base import (
    Figure,
    Paragraph,
    ReportData,
    Section,
    Table,
    conf,
    interval,
    num,
    optional,
)
from vareval.report.sections.significance import pvalue

MAX_PAIRS = 30  # pairwise rows shown; the rest are counted


def _components_table(comp, ci, c) -> Table:
    """Variance components, with their intervals when computed."""
    head = ["component", "levels", "variance", "SD", "share of total", "ICC"]
    if ci is not None:
        head[3:] = ["SD", f"{c} CI", "share of total", f"{c} CI", "ICC", f"{c} CI"]

    def pct(lo, hi):
        return f"[{100 * lo:.1f}%, {100 * hi:.1f}%]"

    rows = []
    for i, r in enumerate(comp.itertuples()):
        row = [str(r.component), str(r.levels), num(r.variance), num(r.sd)]
        if ci is not None:
            row.append(interval((ci.sd_low[i], ci.sd_high[i])))
        row.append(f"{100 * r.share:.1f}%")
        if ci is not None:
            row.append(pct(ci.share_low[i], ci.share_high[i]))
        row.append(num(r.icc, 3))
        if ci is not None:
            icc_ci = (ci.icc_low[i], ci.icc_high[i])
            row.append("-" if icc_ci[0] != icc_ci[0] else interval(icc_ci, 3))
        rows.append(row)
    caption = (
        "Variance components: how much of the run-to-run variance each grouping "
        "factor explains; the residual is what is left (reruns, nondeterminism)."
    )
    if ci is not None:
        caption += (
            " Intervals by profile likelihood (the ML deviance, as lme4's confint); "
            "a lower end of 0 means the data cannot rule out no variance."
        )
    return Table(head, rows, caption=caption, numeric=[False] + [True] * (len(head) - 1))


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    spec = data.extras.get("variance")
    if not spec:
        return None
    variance = optional("vareval.data.variance", "variance")
    if variance is None:
        raise VarevalError("the mixed-model analysis is not installed in this vareval.")
    from vareval.plots.variance import variance_intervals_plot, variance_plot

    df = spec.get("df", data.df)
    metric = spec.get("metric", data.metric)
    fixed = spec.get("fixed") or data.by
    random = spec["random"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VarevalWarning)
        res = variance(
            df,
            metric=metric,
            fixed=fixed,
            random=random,
            nested=spec.get("nested"),
            confidence=data.confidence,
            intervals=spec.get("intervals", "profile"),
        )
    fit = res.fit
    comp = res.components_frame()
    c = conf(data.confidence)
    blocks = [
        Paragraph(
            f"Linear mixed model of {metric!r} on {len(df):,} runs"
            + (f" from {spec['source']}" if spec.get("source") else "")
            + ": fixed effects for "
            + ", ".join(map(repr, fixed))
            + ", random intercepts for "
            + ", ".join(map(repr, random))
            + (f" (nested: {spec['nested']})" if spec.get("nested") else "")
            + f"; {'REML' if fit.reml else 'ML'} fit"
            + ("; singular fit (a variance at zero)" if fit.singular else "")
            + ("" if fit.converged else "; the fit did NOT converge")
            + "."
        ),
        _components_table(comp, res.intervals, c),
        Figure(
            lambda width: variance_plot(
                list(comp["component"]),
                comp["variance"],
                comp["sd"],
                metric,
                width=width,
                name="variance-components",
            ),
            caption="Each component's share of the total variance: segment length = "
            "share (variances add up, SDs do not); the legend gives each share and the "
            "component's SD in the metric's units.",
            name="variance-components",
        ),
        Table(
            [
                "random effect",
                "variance",
                "LRT statistic",
                "p (boundary-corrected)",
                "p (naive \u03c7\u00b2\u2081)",
            ],
            [
                [
                    str(t.term),
                    num(t.variance),
                    num(t.statistic),
                    pvalue(t.pvalue),
                    pvalue(t.pvalue_naive),
                ]
                for t in res.lrt
            ],
            caption="H1/H2: is there variance from this factor? Likelihood-ratio test "
            "against the model without it; the boundary-corrected p uses the 50:50 "
            "mixture of \u03c7\u00b2\u2080 and \u03c7\u00b2\u2081.",
            numeric=[False] + [True] * 4,
        ),
    ]
    if res.intervals is not None:
        blocks.append(
            Figure(
                lambda width: variance_intervals_plot(
                    res.intervals, width=width, name="variance-intervals"
                ),
                caption=f"Each component's share of the total variance (dot) with its {c} "
                "interval (bar); the label gives the component's SD.",
                name="variance-intervals",
            )
        )
    if res.withheld:
        blocks.append(Paragraph("H3 and pairwise differences: " + res.withheld))
    else:
        blocks += _tests_tables(res, c)
    notes = [str(w.message) for w in caught if str(w.message) != res.withheld]
    if notes:
        blocks.append(Paragraph("Note: " + " ".join(notes[:3])))
    data.facts["variance"] = res
    return Section(
        id="variance",
        title="Where the variance comes from",
        estimand="Variance components: the variance of the mean score across seeds, "
        "configurations (and what is left over), estimated by a linear mixed model; "
        "and "
        "the mean differences between experiments with the other factors treated as "
        "random.",
        how_to_read="A large seed or configuration share means single runs say little: "
        "compare experiments by the model's pairwise differences and their intervals, "
        "which account for the variance of every random term of the model at once ("
        + ", ".join(res.random)
        + (
            "; seed x experiment added because the experiments share seeds"
            if res.seed_term
            else ""
        )
        + ", and the residual).",
        blocks=blocks,
    )


def _tests_tables(res, c) -> list:
    """H3's F tests and the pairwise differences as two tables."""
    f = res.f_frame()
    f_table = Table(
        ["term", "df method", "F", "num df", "den df", "p"],
        [
            [
                str(r.term),
                str(r.method),
                num(r.F),
                num(r.ndf, 3),
                num(r.ddf, 4),
                pvalue(r.p),
            ]
            for r in f.itertuples()
        ],
        caption="H3: do the experiments differ? Type III F tests with "
        "Satterthwaite and Kenward\u2013Roger denominator degrees of freedom.",
        numeric=[False, False] + [True] * 4,
    )
    pairs = res.pairs_frame()
    shown = pairs.head(MAX_PAIRS)
    pairs_table = Table(
        ["contrast", "estimate", "SE", "df", f"{c} CI", "p (Holm)"],
        [
            [
                str(r.contrast),
                num(r.estimate),
                num(r.se),
                num(r.df, 4),
                interval((r.ci_low, r.ci_high)),
                pvalue(r.p_holm),
            ]
            for r in shown.itertuples()
        ],
        caption="Pairwise differences between the experiments' mean scores, with "
        "Satterthwaite df and Holm-adjusted p-values"
        + (
            f"; the first {MAX_PAIRS} of {len(pairs)} are shown."
            if len(pairs) > MAX_PAIRS
            else "."
        ),
        numeric=[False] + [True] * 5,
    )
    return [f_table, pairs_table]

