"""Section: paired significance tests on one test set, effect sizes and CIs.

Shown when the report is given a per-item predictions table
(``extras["significance"]``); built on :func:`vareval.data.significance.significance`
when that module is installed.
"""

from __future__ import annotations

from vareval.errors import VarevalError
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


def pvalue(p) -> str:
    """A p-value as a reader expects it: small ones as an upper bound."""
    p = float(p)
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    spec = data.extras.get("significance")
    if not spec:
        return None
    significance = optional("vareval.data.significance", "significance")
    if significance is None:
        raise VarevalError("the significance tests are not installed in this vareval.")
    from vareval.plots.comparisons import forest_plot

    metric = spec.get("metric", "accuracy")
    test = spec.get("test", "auto")
    rep = significance(
        spec["df"],
        gold=spec.get("gold"),
        systems=spec.get("systems"),
        metric=metric,
        test=test,
        baseline=spec.get("baseline"),
        n_resamples=spec.get("n_resamples", 10_000),
        confidence=data.confidence,
        rng=data.seed,
        item=spec.get("item"),
    )
    frame = rep.to_frame()
    c = conf(data.confidence)
    data.facts["significance"] = rep
    correction = getattr(rep.comparison, "correction", "holm")
    rows = [
        [
            str(r.system),
            str(r.versus),
            num(r.score),
            num(r.versus_score),
            num(r.estimate),
            interval((r.ci_low, r.ci_high)),
            pvalue(r.pvalue),
            pvalue(r.adjusted_pvalue),
        ]
        for r in frame.itertuples()
    ]
    source = spec.get("source", "the predictions table")
    blocks = [
        Paragraph(
            f"{rep.n_items:,} test items from {source}; metric {metric!r}; "
            f"{str(frame['test'].iloc[0]) if len(frame) else test} test, "
            f"{_draws(rep.comparison.results[0])}, "
            f"{frame['alternative'].iloc[0] if len(frame) else 'two-sided'}; "
            f"p-values adjusted with {correction.capitalize()} for "
            f"{len(frame)} comparison(s)."
            + (f" Chosen: {rep.comparison.test_reason}." if rep.comparison.test_reason else "")
            + "".join(
                f" No interval: {n}"
                for n in {r.ci_note for r in rep.comparison.results if r.ci_note}
            )
        ),
        Table(
            [
                "system",
                "versus",
                "score",
                "versus score",
                "effect \u03b4",
                f"{c} CI of \u03b4",
                "p",
                f"p ({correction})",
            ],
            rows,
            caption="\u03b4 = M(system) \u2212 M(versus) on the whole test set, "
            "with its bootstrap interval over test items; the p-value asks whether "
            "\u03b4 could be test-set noise. The effect and its interval matter more "
            "than p.",
            numeric=[False, False] + [True] * 6,
        ),
    ]
    if len(frame):
        blocks.append(
            Figure(
                lambda width: forest_plot(
                    [f"{r.system} \u2212 {r.versus}" for r in frame.itertuples()],
                    frame["estimate"],
                    frame["ci_low"],
                    frame["ci_high"],
                    f"\u03b4 in {metric} (system minus versus)",
                    width=width,
                    name="significance-effects",
                ),
                caption=f"Effect \u03b4 with its {c} interval for each comparison; the "
                "vertical line is no difference.",
                name="significance-effects",
            )
        )
    blocks.extend(_distribution_figures(rep, metric))
    return Section(
        id="significance",
        title="Is the gain real on this test set?",
        estimand=f"The difference \u03b4 in {metric!r} between two systems on this "
        "fixed test set (a corpus-level metric, not a mean over runs), with a "
        f"{c} interval from resampling test items and a paired test's p-value.",
        how_to_read="These tests treat the test items as the random sample and each "
        "system as one trained model: they say nothing about run-to-run variance, "
        "which the sections above cover.",
        blocks=blocks,
    )


def _draws(result) -> str:
    """How the p-value was computed: every swap pattern, or a number of resamples."""
    if result.path == "exact":
        return f"all {result.n_resamples:,} swap patterns (exact)"
    return f"{result.n_resamples:,} resamples"


def _bins_sentence(result) -> str:
    """How the histogram is binned: on the values' lattice, if they lie on one."""
    from vareval.plots.significance import lattice_step

    step = lattice_step(result.distribution, result.n)
    if step is None:
        return ""
    units = round(step * result.n)
    lattice = "1/n" if units == 1 else f"{units}/n"
    return (
        f" The values lie on multiples of {lattice} ({result.n:,} items), and every "
        "bar spans the same number of them, so no bar is empty or doubled by chance."
    )


MAX_DISTRIBUTIONS = 3  # resampling histograms drawn (one per comparison)


def _distribution_figures(rep, metric: str) -> list:
    """The resampled distribution of delta behind the first few tests, if plottable."""
    from functools import partial

    from vareval.plots.significance import delta_distribution

    results = getattr(rep.comparison, "results", ())
    pairs = getattr(rep.comparison, "pairs", ())
    blocks = []
    for i, (pair, result) in enumerate(
        zip(pairs[:MAX_DISTRIBUTIONS], results[:MAX_DISTRIBUTIONS], strict=True)
    ):
        name = f"resampling-{i + 1}"
        two_sided = result.alternative == "two-sided"
        bootstrap = result.test == "paired bootstrap"
        blocks.append(
            Figure(
                partial(
                    delta_distribution,
                    result,
                    title=f"{pair[0]} \u2212 {pair[1]}",
                    name=name,
                ),
                caption=f"{pair[0]} \u2212 {pair[1]}: the resampled \u03b4 behind the "
                "test, with the observed \u03b4"
                + (f" and its {conf(result.confidence)} interval" if bootstrap else "")
                + (
                    "; the p-value counts resamples at least |\u03b4| from \u03b4 "
                    "(at or beyond 0, or at or beyond 2\u03b4)"
                    if bootstrap and two_sided
                    else "; beyond the dashed 2\u03b4 line lie the one-sided p-value's hits"
                    if bootstrap
                    else " (and its mirror \u2212\u03b4): the p-value counts swaps at "
                    "least as far from 0"
                    if two_sided
                    else ": the p-value counts swaps beyond it"
                )
                + "."
                + _bins_sentence(result),
                name=name,
            )
        )
    return blocks
