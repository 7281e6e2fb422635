"""Commands for classifier evaluation: metrics, significance."""

from __future__ import annotations

import click

from vareval._format import number, scale_of
from vareval._format import pvalue as _p
from vareval.cli._common import (
    baseline_option,
    ci_method_option,
    confidence_option,
    emit,
    json_option,
    per_metric,
    resamples_option,
    seed_option,
    shared_option,
    split_columns,
    system_option,
    table_argument,
)


def _systems(values) -> list[str] | None:
    out = [name for v in values for name in split_columns(v)]
    return out or None


def _table_options(f):
    """Options naming the roles of a predictions table's columns."""
    f = click.option(
        "--prediction", default=None, help="Long format: the column with the outputs."
    )(f)
    f = click.option(
        "--system-column",
        default=None,
        help="Long format: the column naming the system of each row.",
    )(f)
    f = click.option(
        "--item",
        default=None,
        help="Item id column (required for long format; ignored as a system).",
    )(f)
    return system_option(f)


def _fmt(x: float, signed: bool = False, scale: float = 1.0) -> str:
    """A score or difference at the scale of the scores (see vareval._format)."""
    return number(x, scale, signed=signed)


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(r):
        cells = [
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)])


_SIDES = {
    "two-sided": "two-sided",
    "greater": "one-sided (system better)",
    "less": "one-sided (system worse)",
}
_ADJUSTED = {"holm": "p (Holm)", "bonferroni": "p (Bonferroni)", "none": "p (unadjusted)"}


def format_delong(report) -> str:
    """A person's view of DeLong's tests of ROC AUCs (an ``AUCComparison``)."""
    comp = report.comparison
    first = comp.results[0]
    alt = _SIDES[first.alternative]
    head = (
        f"DeLong test, metric auc (positive class {comp.positive!r}), {report.n_items} "
        f"items ({first.n_positive} positive, {first.n_negative} negative), {alt}"
    )
    if comp.test_reason:
        head += f"\n(chosen: {comp.test_reason})"
    scores = _table(
        ["system", "auc"], [[s, _fmt(v)] for s, v in comp.scores.items()], {1}
    )
    level = f"{comp.confidence * 100:g}% CI"
    rows = []
    for rec in comp.records():
        rows.append(
            [
                rec["system"],
                rec["versus"],
                _fmt(rec["estimate"], True),
                _fmt(rec["se"]),
                f"[{_fmt(rec['ci_low'], True)}, {_fmt(rec['ci_high'], True)}]",
                f"{rec['statistic']:+.2f}",
                _p(rec["pvalue"]),
                _p(rec["adjusted_pvalue"]),
            ]
        )
    tests = _table(
        ["system", "versus", "delta", "SE", level, "z", "p", _ADJUSTED[comp.correction]],
        rows,
        {2, 3, 5, 6, 7},
    )
    note = (
        "delta = AUC(system) - AUC(versus); SE from DeLong's structural components "
        "(DeLong et al. 1988), z = delta / SE, CI = delta -+ z_crit SE."
    )
    return "\n\n".join([head, scores, tests, note])


def format_significance(report) -> str:
    """A person's view of a :class:`~vareval.data.significance.SignificanceReport`."""
    from vareval.stats.testset.significance import ExactTestResult

    if report.test == "delong":
        return format_delong(report)
    comp = report.comparison
    first = comp.results[0]
    alt = _SIDES[first.alternative]
    if isinstance(first, ExactTestResult):
        return _format_classical(report, alt)
    draws = (
        f"all {first.n_resamples:,} swap patterns"
        if first.path == "exact"
        else f"{first.n_resamples:,} resamples"
    )
    head = (
        f"{first.test} test, metric {first.metric}, {report.n_items} items, {draws}"
        + (f", seed {report.seed}" if report.seed is not None else "")
        + f", {alt}"
    )
    if comp.test_reason:
        head += f"\n(chosen: {comp.test_reason})"
    method = {"newcombe": "Newcombe score", "bca": "BCa", "percentile": "percentile"}[
        first.ci_method
    ]
    scores, tests = _scores_and_tests(comp, method, lambda r: bool(r.ci_note))
    if first.path == "exact":
        form = "exact: the share of all swap patterns at least as extreme"
    else:
        form = "(hits + 1) / (B + 1)" if first.smooth else "hits / B (unsmoothed)"
    note = f"delta = metric(system) - metric(versus); p-values are {form}."
    if first.ci_note:
        note += f"\nCI n/a: {first.ci_note}"
    return "\n\n".join([head, scores, tests, note])


def _scores_and_tests(comp, method: str, no_ci) -> tuple[str, str]:
    """The per-system scores, then one row per comparison: delta, CI, p, adjusted p."""
    first = comp.results[0]
    unit = scale_of(list(comp.scores.values())) or 1.0
    scores = _table(
        ["system", comp.metric],
        [[s, _fmt(v, scale=unit)] for s, v in comp.scores.items()],
        {1},
    )
    level = f"{first.confidence * 100:g}% CI ({method})"
    rows = []
    for (a, b), r, padj in zip(comp.pairs, comp.results, comp.adjusted_pvalues, strict=True):
        lo, hi = r.confidence_interval()
        rows.append(
            [
                a,
                b,
                _fmt(r.estimate, True, unit),
                "n/a" if no_ci(r) else f"[{_fmt(lo, True, unit)}, {_fmt(hi, True, unit)}]",
                _p(r.pvalue),
                _p(float(padj)),
            ]
        )
    tests = _table(
        ["system", "versus", "delta", level, "p", _ADJUSTED[comp.correction]], rows, {2, 4, 5}
    )
    return scores, tests


_CLASSICAL = {
    "mcnemar": (
        "Newcombe score",
        "exact binomial p-values on the discordant items (n_ab of n_ab + n_ba; "
        "McNemar 1947)",
    ),
    "wilcoxon": (
        "t, for scale",
        "Wilcoxon signed-rank p-values on per-item scores (scipy.stats.wilcoxon; zero "
        "differences dropped)",
    ),
    "t": ("t", "paired t test p-values on per-item scores (scipy.stats.ttest_rel)"),
}


def _format_classical(report, alt: str) -> str:
    """McNemar, Wilcoxon or t: nothing is drawn, so no seed or resamples to report."""
    comp = report.comparison
    first = comp.results[0]
    method, form = _CLASSICAL[report.test]
    head = f"{first.test} test, metric {comp.metric}, {report.n_items} items, {alt}"
    scores, tests = _scores_and_tests(comp, method, lambda r: False)
    note = f"delta = metric(system) - metric(versus); {form}."
    if report.test == "mcnemar":
        counts = ", ".join(
            f"{a} vs {b}: {r.details['n_ab']}/{r.details['n_ba']}"
            for (a, b), r in zip(comp.pairs, comp.results, strict=True)
        )
        note += f"\ndiscordant items n_ab/n_ba: {counts}"
    return "\n\n".join([head, scores, tests, note])


def format_metrics(report) -> str:
    """Confusion matrix and per-class table of each system, for a person."""
    parts = []
    for name, m in report.systems.items():
        labels = [str(c) for c in m.labels]
        cm = m.confusion.matrix
        conf = _table(
            ["gold \\ predicted", *labels],
            [[lab, *map(str, cm[i])] for i, lab in enumerate(labels)],
            set(range(1, len(labels) + 1)),
        )
        fname = "f1" if m.beta == 1 else f"f{m.beta:g}"
        per = _table(
            ["class", "precision", "recall", fname, "support", "predicted"],
            [
                [
                    str(r["class"]),
                    _fmt(r["precision"]),
                    _fmt(r["recall"]),
                    _fmt(r["fbeta"]),
                    str(r["support"]),
                    str(r["predicted"]),
                ]
                for r in m.records()
            ],
            {1, 2, 3, 4, 5},
        )
        head = (
            f"system {name}: accuracy {_fmt(m.accuracy)}, MCC {_fmt(m.mcc)}, "
            f"balanced accuracy {_fmt(m.balanced_accuracy)}"
        )
        if m.positive is not None:
            head += (
                f"\npositive class {m.positive!r}: sensitivity {_fmt(m.sensitivity)}, "
                f"specificity {_fmt(m.specificity)}"
            )
        parts.append(f"{head}\n\n{conf}\n\n{per}")
    return "\n\n".join(parts)


@click.command()
@table_argument("predictions", predictions=True)
@click.option(
    "--gold", default=None, help="Gold label column (not needed for --metric mean)."
)
@_table_options
@shared_option(
    "--metric",
    "metric",
    default="accuracy",
    show_default=True,
    help="accuracy, macro-f1, micro-f1, weighted-f1, macro-f0.5, macro-precision, "
    "..., mcc, balanced_accuracy, adjusted_balanced_accuracy, sensitivity, "
    "specificity (binary; need --positive), auc (per-item scores; needs --positive), "
    "or mean (per-item scores); several comma-separated give one block each, with the "
    "correction for multiple comparisons applied within each metric.",
)
@click.option(
    "--positive",
    default=None,
    help="The positive class (as written in the gold column) for sensitivity, "
    "specificity and auc.",
)
@click.option(
    "--test",
    type=click.Choice(
        ["auto", "bootstrap", "randomization", "delong", "mcnemar", "wilcoxon", "t"]
    ),
    default="auto",
    show_default=True,
    help="auto: randomization on small test sets, where the bootstrap test "
    "rejects too often, else the bootstrap; DeLong's test for --metric auc. "
    "The output says which and why. mcnemar (accuracy; exact), wilcoxon and t test "
    "per-item scores (metric accuracy or mean) and draw nothing.",
)
@resamples_option(10_000, "Resamples B of the bootstrap or randomization test.")
@seed_option()
@baseline_option(help="Compare every system with this one (default: the first system).")
@click.option("--all-pairs", is_flag=True, help="Compare every pair of systems.")
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "none"]),
    default="holm",
    show_default=True,
)
@click.option(
    "--alternative",
    type=click.Choice(["two-sided", "greater", "less"]),
    default="two-sided",
    show_default=True,
    help="greater: the system beats the one it is compared with (the textbook's test).",
)
@confidence_option
@ci_method_option(["auto", "newcombe", "bca", "percentile"], "auto")
@click.option(
    "--unsmoothed",
    is_flag=True,
    help="p = hits / B (the textbook's form, can be 0), not (hits + 1) / (B + 1).",
)
@json_option
def significance(
    predictions,
    gold,
    systems,
    item,
    system_column,
    prediction,
    metric,
    positive,
    test,
    resamples,
    seed,
    baseline,
    all_pairs,
    correction,
    alternative,
    confidence,
    ci_method,
    unsmoothed,
    as_json,
):
    """Paired significance tests between systems on one test set, for any metric.

    PREDICTIONS is a per-item table: a gold column and one column per system
    (wide), or item/system/prediction columns (long). Prints each system's
    metric, then delta with its CI, p and adjusted p for every comparison.
    For --metric auc the system columns hold per-item scores (higher: more
    likely the --positive class) and DeLong's test is the default.
    """
    from vareval.data.significance import significance as run
    from vareval.stats._checks import check_size

    check_size(resamples, "--resamples")

    metrics = split_columns(metric)
    reports = [run(
        predictions,
        gold=gold,
        systems=_systems(systems),
        metric=m,
        test=test,
        baseline=baseline,
        all_pairs=all_pairs,
        correction=correction,
        n_resamples=resamples,
        alternative=alternative,
        confidence=confidence,
        ci=ci_method,
        smooth=not unsmoothed,
        rng=seed,
        item=item,
        system_column=system_column,
        prediction=prediction,
        positive=positive,
    ) for m in metrics]  # fmt: skip
    payloads = [r.to_dict() for r in reports]
    emit(as_json, *per_metric(metrics, payloads, [format_significance(r) for r in reports]))


@click.command()
@table_argument("predictions", predictions=True)
@click.option("--gold", required=True, help="Gold label column.")
@_table_options
@click.option(
    "--beta", type=float, default=1.0, show_default=True, help="F-beta's beta."
)
@click.option(
    "--positive",
    default=None,
    help="The positive class of binary data (as written in the gold column): adds "
    "sensitivity and specificity.",
)
@json_option
def metrics(
    predictions, gold, systems, item, system_column, prediction, beta, positive, as_json
):
    """Confusion matrix, accuracy, MCC, balanced accuracy and per-class P/R/F.

    0/0 (a class never predicted, or absent from gold) counts as 0; MCC is 0
    when gold or predictions hold one class (scikit-learn's conventions).
    """
    from vareval.data.significance import metrics as run

    report = run(
        predictions,
        gold=gold,
        systems=_systems(systems),
        beta=beta,
        item=item,
        system_column=system_column,
        prediction=prediction,
        positive=positive,
    )
    emit(as_json, report.to_dict(), format_metrics(report))


def demo_section() -> str:
    """Classifier evaluation and significance on the bundled digits predictions."""
    from vareval.data.significance import load_example
    from vareval.data.significance import metrics as run_metrics
    from vareval.data.significance import significance as run
    from vareval.stats import mcnemar_exact

    df = load_example()
    knn = run_metrics(df, gold="gold", item="item", systems=["knn"]).systems["knn"]
    rep = run(
        df, gold="gold", item="item", metric="macro-f1", n_resamples=10_000, rng=0
    )
    mc = mcnemar_exact(df["gold"], df["knn"], df["logreg"])
    lines = [
        "== Classifier evaluation and paired significance ==",
        "Bundled: 4 scikit-learn classifiers on the 899-image test half of sklearn's "
        "digits (10 classes).",
        "$ vareval metrics digits_predictions.csv --gold gold --item item --system knn",
        f"knn: accuracy {knn.accuracy:.4f}, "
        f"macro-F1 {knn.averages['macro']['fbeta']:.4f}, "
        f"weakest class {knn.labels[int(knn.fbeta.argmin())]} "
        f"(F1 {knn.fbeta.min():.4f})",
        "$ vareval significance digits_predictions.csv --gold gold --item item "
        "--metric macro-f1 --seed 0",
        format_significance(rep),
        "For accuracy an exact test exists (McNemar): knn vs logreg, "
        f"{mc.details['n_ab']} vs {mc.details['n_ba']} discordant items, "
        f"delta {mc.estimate:+.4f}, exact p = {mc.pvalue:.4f}.",
    ]
    return "\n".join(lines)


COMMANDS = [significance, metrics]
