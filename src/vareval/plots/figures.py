"""One figure for every result: ``figure_for(result)`` returns a matplotlib Figure.

The figures are the report's own (the same plot functions, the same style),
drawn for one result object. Dispatch is on the result's class, looked up by
its qualified name along the class hierarchy, so nothing here imports a
result module or matplotlib until a figure is asked for. Every plot takes
``width`` in inches (3.3: one column of a paper; 7, the default: a full page);
other keywords go to the plot (a ``label`` or ``metric`` for the axes, names
``a``/``b`` for a two-model comparison). Nothing global is touched: no
pyplot, no backend switch, no rcParams changed.

>>> fig = vareval.summarize(scores).plot(width=3.3)      # doctest: +SKIP
>>> fig.savefig("runs.pdf")                              # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import re

from vareval.errors import ArgumentError

_P = "vareval.plots."

# qualified class name -> (module, function) drawing it; functions in this module
# adapt a result to the plot's arguments.
_PLOTS = {
    "vareval.stats.repeated.summary.Summary": (__name__, "_summary"),
    "vareval.stats.repeated.best_of_k.BestOfK": (__name__, "_best_of_k"),
    "vareval.stats.repeated.best_of_k.RankingStability": (_P + "best_of_k", "ranking_plot"),
    "vareval.stats.repeated.paired.PairedDifference": (__name__, "_paired"),
    "vareval.stats.repeated.paired.Plan": (__name__, "_plan"),
    "vareval.stats.testset.significance.PairedTestResult": (
        _P + "significance", "delta_distribution"
    ),
    "vareval.stats.testset.significance.SystemComparison": (__name__, "_system_comparison"),
    "vareval.data.significance.SignificanceReport": (__name__, "_significance_report"),
    "vareval.stats.tuning.bands.TuningCurveBand": (_P + "tuning", "band_plot"),
    "vareval.stats.tuning.bands.CDFBand": (_P + "tuning", "cdf_band_plot"),
    "vareval.stats.tuning.bands.TuningComparison": (_P + "tuning", "comparison_plot"),
    "vareval.stats.tuning.parametric.ParametricTuningCurve": (_P + "tuning", "parametric_plot"),
    "vareval.stats.tuning.selection.SelectionCurve": (__name__, "_selection_curve"),
    "vareval.data.selection.SelectionCurves": (__name__, "_selection_curves"),
    "vareval.stats.evals.compare.EvalComparison": (__name__, "_eval_comparison"),
    "vareval.stats.evals.compare.EvalComparisons": (__name__, "_eval_comparisons"),
    "vareval.data.tuning.TuningCurves": (_P + "tuning", "tuning_plot"),
    "vareval.data.variance.VarianceAnalysis": (__name__, "_variance_analysis"),
    "vareval.stats.variance.fit.MixedModelFit": (__name__, "_mixed_fit"),
    "vareval.stats.variance.intervals.VarianceIntervals": (
        _P + "variance", "variance_intervals_plot"
    ),
    "vareval.stats.tasks.aggregate.IntervalEstimates": (_P + "aggregate", "interval_plot"),
    "vareval.stats.tasks.aggregate.PerformanceProfile": (_P + "aggregate", "profile_plot"),
    "vareval.stats.tasks.aggregate.ProbabilityOfImprovement": (__name__, "_improvement"),
    "vareval.stats.tasks.dominance.MultiASOResult": (__name__, "_aso"),
    "vareval.stats.tasks.ranking.Ranking": (_P + "ranking", "cd_diagram"),
    "vareval.stats.tasks.ranking.BayesianSignedRank": (_P + "ranking", "signed_rank_plot"),
    "vareval.stats.testset.classification.ClassificationMetrics": (__name__, "_classification"),
    "vareval.data.significance.MetricsReport": (__name__, "_metrics_report"),
    "vareval.stats.variance.tests.ContrastResult": (__name__, "_contrasts"),
    "vareval.stats.testset.roc.AUCComparison": (__name__, "_aucs"),
    "vareval.stats.variance.bootstrap.BootstrapLRT": (_P + "variance", "null_plot"),
    "vareval.stats.testset.classification.ConfusionMatrix": (
        _P + "classification", "confusion_plot"
    ),
    "vareval.stats.tuning.coverage.CoverageResult": (_P + "classification", "coverage_plot"),
    "vareval.stats.budget.sequential.ConfidenceSequence": (_P + "sequential", "sequence_plot"),
    "vareval.data.tables.ResultTable": (__name__, "_table"),
    "vareval.experiment.sequential.SequentialRun": (__name__, "_sequential_run"),
}


def figure_for(result, **kw):
    """Return the figure of ``result`` as a matplotlib ``Figure``.

    Parameters
    ----------
    result : a vareval result
        Any result the report draws, and the statistics and data results
        for which a picture helps (see ``docs/report.md``).
    **kw
        ``width`` in inches (default 7; 3.3 for one column of a paper) and
        options of the plot for this result.

    Returns
    -------
    matplotlib.figure.Figure
        A bare Figure (no pyplot): ``fig.savefig("x.pdf")`` writes it.

    Raises
    ------
    ArgumentError
        If no figure makes sense for the result's type; the message names it.
    """
    for cls in type(result).__mro__:
        target = _PLOTS.get(f"{cls.__module__}.{cls.__qualname__}")
        if target is not None:
            module, function = target
            return getattr(importlib.import_module(module), function)(result, **kw)
    raise ArgumentError(
        f"no figure for {type(result).__name__}: its docstring says why (a single "
        "test or number is read from its fields, or to_frame()); figures exist for "
        "summaries, best-of-k, paired differences, plans, resampling tests, tuning "
        "curves and bands, variance components, contrasts, bootstrap LRTs, aggregates, "
        "profiles, P(improvement), ASO, rankings, confusion matrices, AUC comparisons "
        "and band coverage."
    )


def _summary(result, *, label: str = "runs", metric: str = "score", **kw):
    from vareval.plots.summary import strip_plot

    return strip_plot({label: result}, metric, **kw)


def _best_of_k(result, *, label: str = "runs", **kw):
    from vareval.plots.best_of_k import best_of_k_plot

    return best_of_k_plot({label: result}, **kw)


def _paired(result, *, label: str = "A \u2212 B", metric: str = "score", **kw):
    from vareval.plots.paired import differences_plot

    return differences_plot({label: result}, metric, **kw)


def _plan(result, *, label: str = "A \u2212 B", metric: str = "score", pairs=None, **kw):
    from vareval.plots.paired import planning_plot

    return planning_plot({label: result}, {label: pairs}, metric, **kw)


def _system_comparison(result, *, metric: str | None = None, **kw):
    from vareval.plots.comparisons import forest_plot

    labels = [f"{a} \u2212 {b}" for a, b in result.pairs]
    lows, highs = zip(*(r.confidence_interval() for r in result.results), strict=True)
    metric = metric or result.metric
    return forest_plot(
        labels,
        [r.estimate for r in result.results],
        lows,
        highs,
        f"\u03b4 in {metric} (system minus versus)",
        **{"name": "significance-effects", **kw},
    )


def _significance_report(result, **kw):
    return _system_comparison(result.comparison, **kw)


def _selection_curve(result, *, label: str = "method", metric: str = "test score", **kw):
    from vareval.plots.tuning import selection_plot

    return selection_plot({label: result}, metric, **kw)


def _selection_curves(result, **kw):
    from vareval.plots.tuning import selection_plot

    return selection_plot(result.curves, result.test, **kw)


def _eval_comparison(result, **kw):
    from vareval.plots.evals import differences_plot

    label = f"{result.model_a} \u2212 {result.model_b}"
    return differences_plot([label], [result.estimate], [result.low], [result.high], **kw)


def _eval_comparisons(result, *, kind: str = "auto", **kw):
    """The matrix of differences from three models on, else the forest of pairs.

    ``kind="matrix"``: models x models, row minus column, a star where the
    adjusted p < alpha; ``"differences"``: each pair's difference with its interval.
    """
    from vareval.plots.evals import differences_matrix, differences_plot

    if kind not in ("auto", "matrix", "differences"):
        raise ArgumentError(f"`kind` must be 'auto', 'matrix' or 'differences'; got {kind!r}.")
    if kind == "matrix" or (kind == "auto" and len(result.models) >= 3):
        return differences_matrix(
            result.models, result.matrix("estimate"), result.matrix("pvalue_adjusted"),
            alpha=result.alpha, correction=result.correction, **kw,
        )  # fmt: skip
    labels = [f"{a} \u2212 {b}" for a, b in zip(result.a, result.b, strict=True)]
    return differences_plot(labels, result.estimate, result.low, result.high, **kw)


def _eval_scores(table, *, metric: str | None = None, naive: bool = True, **kw):
    """A table of :func:`vareval.eval_scores`: each model's score, interval and naive CLT one."""
    from vareval.plots.evals import _NAMES, scores_plot

    results = list(table.results.values())
    units = {
        f"{r.n_clusters:,} clusters" if r.n_clusters < r.n_questions
        else f"{r.n_questions:,} questions" for r in results
    }  # fmt: skip
    unit = units.pop() if len(units) == 1 else "clusters (or questions)"
    kinds = {f"{r.confidence:.0%} {_NAMES.get(r.interval, r.interval)}" for r in results}
    what = kinds.pop() if len(kinds) == 1 else f"{results[0].confidence:.0%}"
    frame = table.frame
    return scores_plot(
        [k if isinstance(k, str) else " / ".join(k) for k in table.results],  # (model, filter)
        [r.estimate for r in results], [r.low for r in results],
        [r.high for r in results], interval=f"{what} interval over {unit}",
        naive=(frame["naive_low"], frame["naive_high"]) if naive else None,
        metric=metric or table.title.partition(": each model's score")[0], **kw,
    )  # fmt: skip


def _variance_analysis(result, **kw):
    comp = result.components_frame()
    return _components(list(comp["component"]), comp["variance"], comp["sd"], result.metric, kw)


def _mixed_fit(result, *, metric: str = "score", **kw):
    return _components(list(result.components), result.variance, result.sd, metric, kw)


def _components(names, variances, sds, metric, kw):
    from vareval.plots.variance import variance_plot

    return variance_plot(names, variances, sds, metric, **{"name": "variance-components", **kw})


def _classification(result, **kw):
    from vareval.plots.classification import confusion_plot

    return confusion_plot(result.confusion, **kw)


def _metrics_report(result, **kw):
    from vareval.plots.classification import confusions_plot

    return confusions_plot(result.systems, **kw)


def _contrasts(result, *, metric: str = "score", **kw):
    from vareval.plots.comparisons import forest_plot

    return forest_plot(
        list(result.labels), result.estimate, result.ci_low, result.ci_high,
        f"difference in {metric}, {result.confidence:.0%} CI ({result.method})",
        **{"name": "contrasts", **kw},
    )  # fmt: skip


def _aucs(result, **kw):
    """Each pair's AUC difference with its DeLong (normal) interval at the result's level."""
    import numpy as np
    from scipy import stats

    from vareval.plots.comparisons import forest_plot

    z = stats.norm.ppf(0.5 + result.confidence / 2)
    est = np.array([r.estimate for r in result.results], dtype=float)
    se = np.array([r.se for r in result.results], dtype=float)
    labels = [f"{a} \u2212 {b}" for a, b in result.pairs]
    return forest_plot(labels, est, est - z * se, est + z * se,
                       f"AUC difference, {result.confidence:.0%} DeLong CI",
                       **{"name": "auc-differences", **kw})  # fmt: skip


def _sequential_run(result, **kw):
    from vareval.plots.sequential import sequence_plot

    kw = {"metric": result.metric, "label": f"{result.a} \u2212 {result.b}", **kw}
    return sequence_plot(result.sequence, **kw)


def _improvement(result, **kw):
    from vareval.plots.aggregate import improvement_plot

    return improvement_plot([result], **kw)


def _aso(result, **kw):
    from vareval.plots.ranking import aso_matrix

    title = "epsilon_min of row over column"
    return aso_matrix(result.names, result.epsilon_min, result.better, title=title, **kw)


# results of one kind drawn together, as the report draws them: type -> plot
_TOGETHER = {
    "Summary": ("summary", "strip_plot"),
    "PairedDifference": ("paired", "differences_plot"),
    "BestOfK": ("best_of_k", "best_of_k_plot"),
}


def _table(table, **kw):
    """A table of results: drawn together when of one kind, or its only result."""
    results = table.results
    kinds = {type(r).__name__ for r in results.values()}
    if kinds == {"EvalScore"}:
        return _eval_scores(table, **kw)
    if len(kinds) == 1 and (kind := kinds.pop()) in _TOGETHER:
        module, function = _TOGETHER[kind]
        plot = getattr(importlib.import_module(_P + module), function)
        if kind != "BestOfK":
            found = re.search(r"'([^']+)'", table.title)
            kw.setdefault("metric", found.group(1) if found else "score")
            return plot(results, kw.pop("metric"), **kw)
        return plot(results, **kw)
    if len(results) == 1:
        return figure_for(next(iter(results.values())), **kw)
    for key in ("intervals", "ranking"):  # the headline result of a mixed table
        if key in results:
            return figure_for(results[key], **kw)
    raise ArgumentError(
        f"no single figure for the table {table.title!r}: draw one of its results, "
        f"e.g. table[{next(iter(results))!r}].plot()."
    )
