"""Every public result type follows one protocol (see ``vareval.stats._result``).

The walk imports every vareval module and collects each ``Result`` subclass;
``EXAMPLES`` makes a real instance of each from small real inputs. A result
type added without an example here fails ``test_every_result_type_has_an_example``.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import importlib
import inspect
import json
import math
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest

import vareval
import vareval.stats.evals  # noqa: F401 (stats.evals in EXAMPLES)
from vareval import datasets, stats
from vareval.data.tables import FrameResult
from vareval.stats._result import (
    MAX_REPR_LINES,
    PROTOCOL_FIELDS,
    ConfidenceInterval,
    Result,
    _is_scalar,
)

# --- the walk -------------------------------------------------------------------


def _result_types() -> dict:
    """Every ``Result`` subclass defined in a vareval module, by qualified name."""
    found = {}
    for info in pkgutil.walk_packages(vareval.__path__, "vareval."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as err:  # an optional dependency (ray ...) is absent
            if "vareval" in str(err):
                raise
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, Result)
                and cls.__module__ == info.name
                and cls not in (Result, FrameResult)
            ):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


# --- small real inputs ------------------------------------------------------------

RNG = np.random.default_rng(20261201)
COMPONENTS = {"seed": 0.010**2, "config": 0.020**2, "residual": 0.008**2}  # decovac_sim.md
A = RNG.normal(0.80, 0.02, 12)
B = A - 0.01 + RNG.normal(0, 0.01, 12)


@functools.cache
def _runs():
    return datasets.load("digits_runs.csv")


@functools.cache
def _predictions():
    return datasets.load("digits_predictions.csv").iloc[:300]


@functools.cache
def _tasks():
    return datasets.load("sklearn_tasks.csv")


@functools.cache
def _hedwig():
    df = datasets.load("hedwig.tsv")
    return df[df["model_name"].isin(["reg_lstm", "mlp"])]


@functools.cache
def _variance():
    df = datasets.load("decovac_sim.csv")
    df = df[df["seed"].isin(sorted(df["seed"].unique())[:4])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vareval.variance(
            df,
            metric="accuracy",
            fixed=("model", "optimizer"),
            random=("seed", "config"),
            intervals="profile",
            bootstrap_lrt=True,
            n_resamples=20,
            rng=0,
        )


def _task_array():
    return vareval.data.tasks.task_scores(_tasks(), "accuracy", "method", "task").scores


def _fit_predict(x_train, y_train, x_test):
    """Nearest class mean: a real, tiny classifier."""
    classes = np.unique(y_train)
    means = np.stack([x_train[y_train == c].mean(axis=0) for c in classes])
    return classes[np.argmin(((x_test[:, None, :] - means) ** 2).sum(axis=2), axis=1)]


def _xy():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    return rng.normal(size=(60, 3)) + y[:, None], y


def _trial(trial):
    return {"x": float(trial.rng("init").normal()) + trial.config["lr"]}


def _paired_trial(trial):
    """A seed's common part plus the model's own noise: paired differences that vary."""
    own = trial.rng("noise_" + trial.factors["model"]).normal(0, 0.5)
    return {"x": float(trial.rng("init").normal() + own)}


def _sequential_run(tmp):
    from vareval.experiment import ExperimentSpec
    from vareval.experiment.sequential import run_until_settled

    spec = ExperimentSpec(
        trial="unused:train",
        factors={"model": ["a", "b"]},
        seeds=2,
        sources=("init", "noise_a", "noise_b"),
        entropy=3,
    )
    return run_until_settled(
        spec, tmp / "sequential.db", compare=("a", "b"), metric="x", budget=20, batch=20,
        trial=_paired_trial, engine="serial", progress=False,
    )


@functools.cache
def _store(tmp):
    from vareval.experiment import ExperimentSpec, run

    spec = ExperimentSpec(
        trial="unused:train",
        factors={"model": ["a", "b"]},
        seeds=2,
        configs=1,
        space={"lr": {"distribution": "uniform", "low": 0.0, "high": 1.0}},
        sources=("init",),
        entropy=3,
    )
    path = tmp / "runs.db"
    report = run(spec, path, trial=_trial, engine="serial", progress=False)
    return path, report


def _gold_preds():
    df = _predictions()
    return df["gold"].astype(str).to_numpy(), df["knn"].astype(str).to_numpy(), df[
        "logreg"
    ].astype(str).to_numpy()


def _binary():
    """Gold 0/1 and two systems' scores that track it, with noise."""
    rng = np.random.default_rng(3)
    gold = np.repeat([0, 1], 40)
    return gold, gold + rng.normal(0, 0.8, 80), gold + rng.normal(0, 1.2, 80)


def _pilot_draws():
    """Variance components as a pilot of 9 levels might estimate them (scaled chi-square)."""
    rng = np.random.default_rng(4)
    return {k: v * rng.chisquare(8, 200) / 8 for k, v in COMPONENTS.items()}


def _ranking_scores():
    return _task_array().mean(axis=2).T  # datasets x methods


@functools.cache
def _coverage():
    return stats.band_coverage(
        stats.ReflectedKDE(A, 0.01, a=0, b=1), 10, k=[1, 2, 5], n_trials=200, rng=0
    )


@functools.cache
def _evals():
    """Two models' 0/1 answers: 20 questions x 3 samples, questions in 5 clusters."""
    q = np.tile(np.repeat(np.arange(20), 3), 2)
    model = np.repeat(["a", "b"], 60)
    score = (np.random.default_rng(24).random(120) < np.where(model == "a", 0.7, 0.5)) * 1.0
    return score, q, q // 4, model


def _reruns_example():
    from vareval.data.design import reruns_of

    df = pd.DataFrame({"m": ["a"] * 4, "seed": [0, 0, 1, 1], "config": ["c"] * 4,
                       "rerun": [0, 1] * 2, "acc": [0.5, 0.5, 0.6, 0.61]})  # fmt: skip
    return reruns_of(df, "acc", "m")


def _summary_table():
    return vareval.summarize(_runs(), metric="accuracy", by="method")


EXAMPLES = {
    # statistics layer
    "vareval.stats.repeated.summary.Summary": lambda tmp: stats.summarize(A),
    "vareval.stats.repeated.paired.PairedDifference": lambda tmp: stats.paired_difference(
        A, B, rng=0
    ),
    "vareval.stats.repeated.paired.Plan": lambda tmp: stats.plan_replications(0.01, effect=0.01),
    "vareval.stats.testset.classification.ConfusionMatrix": lambda tmp: stats.confusion_matrix(
        *_gold_preds()[:2]
    ),
    "vareval.stats.testset.classification.ClassificationMetrics": lambda tmp: (
        stats.classification_metrics(*_gold_preds()[:2])
    ),
    "vareval.stats.testset.crossval.Split": lambda tmp: stats.kfold_splits(20, 4, rng=0)[0],
    "vareval.stats.testset.crossval.CrossValidation": lambda tmp: stats.cross_validate(
        _fit_predict, *_xy(), k=3, rng=0
    ),
    "vareval.stats.testset.crossval.HoldoutEvaluation": lambda tmp: stats.holdout_evaluate(
        _fit_predict, *_xy(), k=3, rng=0
    ),
    "vareval.stats.testset.crossval.CorrectedTTestResult": lambda tmp: (
        stats.corrected_resampled_ttest(A, B, n_train=90, n_test=10)
    ),
    "vareval.stats.repeated.best_of_k.BestOfK": lambda tmp: stats.best_of_k(
        A, n_resamples=2000, rng=0
    ),
    "vareval.stats.repeated.best_of_k.RankingStability": lambda tmp: stats.ranking_stability(
        A, B, max_k=4, n_resamples=500, rng=0
    ),
    "vareval.stats.testset.significance.PairedTestResult": lambda tmp: stats.paired_bootstrap(
        *_gold_preds(), n_resamples=500, rng=0
    ),
    "vareval.stats.testset.significance.ExactTestResult": lambda tmp: stats.mcnemar_exact(
        *_gold_preds()
    ),
    "vareval.stats.testset.significance.SystemComparison": lambda tmp: stats.compare_systems(
        _gold_preds()[0],
        dict(zip(["knn", "logreg"], _gold_preds()[1:], strict=True)),
        n_resamples=500,
        rng=0,
    ),
    "vareval.stats.tasks.aggregate.IntervalEstimates": lambda tmp: stats.interval_estimates(
        _task_array(), n_resamples=200, rng=0
    ),
    "vareval.stats.tasks.aggregate.PerformanceProfile": lambda tmp: stats.performance_profile(
        _task_array(), n_resamples=200, rng=0
    ),
    "vareval.stats.tasks.aggregate.ProbabilityOfImprovement": lambda tmp: (
        stats.probability_of_improvement(
            _task_array()[0], _task_array()[1], n_resamples=200, rng=0
        )
    ),
    "vareval.stats.tuning.bands.OrderStatisticBand": lambda tmp: stats.order_statistic_band(30),
    "vareval.stats.tuning.bands.TuningCurveBand": lambda tmp: (
        stats.cdf_band(A, a=0, b=1).tuning_curve(np.arange(1, 6))
    ),
    "vareval.stats.tuning.bands.CDFBand": lambda tmp: stats.cdf_band(A, a=0, b=1),
    "vareval.stats.tuning.bands.TuningComparison": lambda tmp: stats.compare_tuning_curves(
        A, B, np.arange(1, 6), a=0, b=1
    ),
    "vareval.stats.tuning.bands.IterationProjection": lambda tmp: stats.project_iterations(
        A, B, 3, a=0, b=1
    ),
    "vareval.stats.tuning.coverage.CoverageResult": lambda tmp: _coverage(),
    "vareval.stats.tasks.dominance.ASOResult": lambda tmp: stats.aso(A, B, n_resamples=200, rng=0),
    "vareval.stats.tasks.dominance.MultiASOResult": lambda tmp: stats.multi_aso(
        {"a": A, "b": B, "c": A + 0.01}, n_resamples=100, rng=0
    ),
    "vareval.stats.tasks.dominance.EffectSize": lambda tmp: stats.cohens_d(A, B),
    "vareval.stats.tasks.ranking.FriedmanResult": lambda tmp: stats.friedman(_ranking_scores()),
    "vareval.stats.tasks.ranking.Ranking": lambda tmp: stats.rank_methods(_ranking_scores()),
    "vareval.stats.tasks.ranking.BayesianSignedRank": lambda tmp: stats.bayesian_signed_rank(
        A, B, rope=0.005, n_resamples=2000, rng=0
    ),
    "vareval.stats.variance.fit.MixedModelFit": lambda tmp: _variance().fit,
    "vareval.stats.variance.tests.RandomEffectLRT": lambda tmp: _variance().lrt[0],
    "vareval.stats.variance.tests.FTestResult": lambda tmp: _variance().f_tests["satterthwaite"][0],
    "vareval.stats.variance.tests.ContrastResult": lambda tmp: _variance().pairs,
    "vareval.stats.variance.intervals.VarianceIntervals": lambda tmp: _variance().intervals,
    "vareval.stats.variance.bootstrap.BootstrapLRT": lambda tmp: _variance().pb_lrt[0],
    "vareval.stats.testset.roc.DeLongResult": lambda tmp: stats.delong_test(
        *_binary(), pos_label=1
    ),
    "vareval.stats.testset.roc.AUCComparison": lambda tmp: stats.compare_aucs(
        _binary()[0], dict(zip("ab", _binary()[1:], strict=True)), pos_label=1
    ),
    "vareval.stats.budget.sequential.ConfidenceSequence": lambda tmp: stats.confidence_sequence(
        A - B, bounds=(-1, 1)
    ),
    "vareval.experiment.sequential.SequentialRun": _sequential_run,
    "vareval.stats.budget.allocation.Allocation": lambda tmp: stats.allocate(
        COMPONENTS, budget=300, draws=_pilot_draws()
    ),
    # data layer
    "vareval.data.tables.ResultTable": lambda tmp: vareval.paired(
        _runs(), metric="accuracy", by="method", pair_on="seed", a="mlp", b="logreg", rng=0
    ),
    "vareval.data.repeated.SummaryTable": lambda tmp: _summary_table(),
    "vareval.data.design.Design": lambda tmp: _summary_table().design,
    "vareval.data.design.Reruns": lambda tmp: _reruns_example(),
    "vareval.data.runs.RunCount": lambda tmp: _summary_table().runs["mlp"],
    "vareval.data.significance.SignificanceReport": lambda tmp: vareval.significance(
        _predictions(), gold="gold", item="item", n_resamples=300, rng=0
    ),
    "vareval.data.significance.MetricsReport": lambda tmp: vareval.metrics(
        _predictions(), gold="gold", item="item"
    ),
    "vareval.data.tuning.TuningCurves": lambda tmp: vareval.tuning_curve(
        _hedwig(), metric="f1", by="model_name", bounds=(0, 1), ks=[1, 5, 10]
    ),
    "vareval.data.variance.VarianceAnalysis": lambda tmp: _variance(),
    "vareval.data.selection.SelectedTable": lambda tmp: vareval.select(
        datasets.load("digits_search.csv"), validation="val_accuracy", test="test_accuracy",
        by="model",
    ),
    "vareval.data.selection.SelectionCurves": lambda tmp: vareval.selection_curves(
        datasets.load("digits_search.csv"), validation="val_accuracy", test="test_accuracy",
        by="model", ks=[1, 2, 5],
    ),
    "vareval.stats.tuning.selection.Selection": lambda tmp: stats.choose_on_validation(
        [0.8, 0.9, 0.9, 0.7], [0.7, 0.85, 0.8, 0.75], [0, 0, 1, 1]
    ),
    "vareval.stats.tuning.selection.SelectionCurve": lambda tmp: stats.selection_curve(
        [0.8, 0.9, 0.9, 0.7, 0.6], [0.7, 0.85, 0.8, 0.75, 0.5], [1, 2, 3]
    ),
    "vareval.stats.tuning.parametric.GoodnessOfFit": lambda tmp: stats.QuadraticDistribution(
        0, 1, 3
    ).goodness_of_fit([0.2, 0.5, 0.6, 0.9]),
    "vareval.stats.tuning.parametric.ParametricTuningCurve": lambda tmp: (
        stats.parametric_tuning_curve(
            stats.QuadraticDistribution(0, 1, 3).sample(30, rng=0), [1, 10, 100],
            n_resamples=12, rng=0,
        )
    ),
    "vareval.data.tasks.TaskScores": lambda tmp: vareval.data.tasks.task_scores(
        _tasks(), "accuracy", "method", "task"
    ),
    # language-model evaluations
    "vareval.stats.evals.score.EvalScore": lambda tmp: stats.evals.eval_score(*_evals()[:3]),
    "vareval.stats.evals.compare.EvalComparison": lambda tmp: stats.evals.compare_two(
        _evals()[0][:60], _evals()[0][60:], _evals()[1][:60], test="t"
    ),
    "vareval.stats.evals.compare.EvalComparisons": lambda tmp: stats.evals.compare_models(
        _evals()[0], _evals()[3], _evals()[1], n_resamples=200, rng=0
    ),
    "vareval.stats.evals.passk.PassAtK": lambda tmp: stats.evals.pass_at_k(
        _evals()[0][:60], _evals()[1][:60], 2
    ),
    "vareval.stats.evals.plan.EvalPlan": lambda tmp: stats.evals.plan_eval(
        _evals()[0][:60], _evals()[1][:60], target_se=0.05
    ),
    # experiments
    "vareval.experiment.runner.RunReport": lambda tmp: _store(tmp)[1],
    "vareval.experiment.runner.ReplayResult": lambda tmp: _replay(tmp),
}


def _replay(tmp):
    from vareval.experiment import replay

    return replay(_store(tmp)[0], 1, trial=_trial)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("store")


def test_every_result_type_has_an_example():
    missing = sorted(set(_result_types()) - set(EXAMPLES))
    assert not missing, (
        f"result types without an example in {__file__}: {missing}; add one to EXAMPLES "
        "so the result protocol is checked for them"
    )
    stale = sorted(set(EXAMPLES) - set(_result_types()))
    assert not stale, f"EXAMPLES names types that no longer exist: {stale}"


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def result(request, store_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vareval.errors.VarevalWarning)
        return EXAMPLES[request.param](store_dir)


def test_is_a_frozen_result_of_the_named_type(result, request):
    name = request.node.callspec.params["result"]
    assert f"{type(result).__module__}.{type(result).__qualname__}" == name
    assert isinstance(result, Result)
    assert type(result).__dataclass_params__.frozen


def test_repr_is_short(result):
    text = repr(result)
    assert 1 <= len(text.splitlines()) < MAX_REPR_LINES, text
    assert type(result).__name__ in text or getattr(result, "title", "") in text


def test_repr_shows_the_answer(result):
    """The answer (estimate, interval, p-value, the test) survives the cut at MAX_REPR_LINES."""
    names = {f.name for f in dataclasses.fields(result)}
    interval = type(result)._interval or ()
    text = repr(result)
    for name in ("estimate", *interval, "pvalue"):
        if name in names and _is_scalar(getattr(result, name)):
            assert name in text, f"{name} missing from the repr:\n{text}"
    if type(result).__repr__ is Result.__repr__:
        answer = ("estimate", *interval, *PROTOCOL_FIELDS[1:], *type(result)._headline)
        shown = [line.split("=")[0].strip() for line in text.splitlines()[1:-1]]
        assert all(name in shown for name in answer if name in names), text


def test_html_repr_is_a_table(result):
    page = result._repr_html_()
    assert isinstance(page, str) and "<table" in page and "</table>" in page


def test_html_repr_shows_the_answer_in_a_few_rows_and_folds_the_rest(result):
    from vareval.stats._result import HTML_HEAD_ROWS

    page = result._repr_html_()
    shown = page.split("<details>")[0]
    assert shown.count("<tr") <= HTML_HEAD_ROWS + 2, type(result).__name__  # + header rows
    assert page.count("<details>") == page.count("</details>")


def test_to_frame_is_one_dataframe(result):
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) >= 1 and len(frame.columns) >= 1


def test_to_dict_is_json(result):
    out = result.to_dict()
    assert isinstance(out, dict) and out
    json.loads(json.dumps(out, allow_nan=True))


def test_confidence_interval_brackets_the_estimate(result):
    if not type(result).has_interval():
        with pytest.raises(TypeError, match="no confidence interval"):
            result.confidence_interval()
        return
    ci = result.confidence_interval()
    assert type(ci) is ConfidenceInterval
    low, high, estimate = (np.asarray(v, dtype=float) for v in (*ci, result.estimate))
    if estimate.shape != low.shape:  # a sequence of estimates: the interval is the last one's
        estimate = estimate[..., -1]
    ok = np.isfinite(low) & np.isfinite(high)
    assert ok.any()
    assert np.all(low[ok] <= estimate[ok] + 1e-12) and np.all(estimate[ok] <= high[ok] + 1e-12)
    if hasattr(result, "confidence"):  # the stored level gives the stored interval
        same = result.confidence_interval(result.confidence)
        np.testing.assert_array_equal(np.asarray(same, dtype=float), np.asarray(ci, dtype=float))


def test_plot_reaches_the_figures_module(result, monkeypatch):
    import sys
    import types

    if type(result).plot is not Result.plot:  # a result with a plot of its own
        from matplotlib.figure import Figure

        assert isinstance(result.plot(), Figure)
        return

    seen = []
    fake = types.ModuleType("vareval.plots.figures")
    fake.figure_for = lambda r, **kw: seen.append((r, kw)) or "figure"
    monkeypatch.setitem(sys.modules, "vareval.plots.figures", fake)
    assert result.plot(width=3.3) == "figure" and seen == [(result, {"width": 3.3})]


def test_a_result_draws_its_figure_or_says_why_not(result):
    """Every result a reader would want to see has a figure; the others say why in the docstring."""
    from matplotlib.figure import Figure

    from vareval.errors import ArgumentError

    try:
        fig = result.plot(width=3.3)
    except ArgumentError as err:
        assert "no figure for" in str(err)
        assert "No figure: " in (type(result).__doc__ or ""), type(result).__name__
        return
    assert isinstance(fig, Figure)
    assert "No figure" not in (type(result).__doc__ or "")
    assert fig._repr_png_().startswith(b"\x89PNG")  # shows itself in a notebook


# --- the interval at another level ----------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: stats.summarize(A),
        lambda: stats.paired_difference(A, B, rng=0),
        lambda: stats.paired_difference(A, B, split_sizes=(90, 10), rng=0),
        lambda: stats.corrected_resampled_ttest(A, B, n_train=90, n_test=10),
        lambda: _variance().pairs,
    ],
    ids=["summary", "paired", "paired-corrected", "corrected-t", "contrasts"],
)
def test_t_intervals_recompute_at_any_level(make):
    r = make()
    for level in (0.8, 0.99):
        low, high = r.confidence_interval(level)
        again = dataclasses_replace_confidence(make, level)
        np.testing.assert_allclose(low, again[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(high, again[1], rtol=1e-12, atol=1e-15)


def dataclasses_replace_confidence(make, level):
    """The same analysis rerun at ``level``: the reference for a recomputed interval."""
    r = make()
    if isinstance(r, stats.Summary):
        return stats.summarize(A, confidence=level).confidence_interval()
    if isinstance(r, stats.PairedDifference):
        sizes = (90, 10) if r.test != "paired t" else None
        return stats.paired_difference(
            A, B, split_sizes=sizes, confidence=level, rng=0
        ).confidence_interval()
    if isinstance(r, stats.CorrectedTTestResult):
        return stats.corrected_resampled_ttest(
            A, B, n_train=90, n_test=10, confidence=level
        ).confidence_interval()
    from scipy import stats as sps

    half = sps.t.ppf((1 + level) / 2, r.df) * r.se
    return r.estimate - half, r.estimate + half


def test_a_stored_interval_is_not_reinvented_at_another_level():
    r = stats.cohens_d(A, B)
    with pytest.raises(vareval.errors.ArgumentError, match="computed at confidence 0.95"):
        r.confidence_interval(0.9)
    with pytest.raises(vareval.errors.ArgumentError, match="confidence_level"):
        r.confidence_interval(1.5)


def test_stats_results_need_no_pandas_or_matplotlib_to_import():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['pandas'] = sys.modules['matplotlib'] = None; "
        "import vareval.stats as s; "
        "r = s.summarize([1.0, 2.0, 4.0]); repr(r); r._repr_html_(); r.to_dict(); "
        "r.confidence_interval()"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())


def _env():
    import os
    from pathlib import Path

    src = str(Path(vareval.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": src}


# --- deprecated names -------------------------------------------------------------

DEPRECATED = [
    (lambda: stats.summarize(A), "mean_ci", lambda r: r.confidence_interval()),
    (lambda: stats.summarize(A), "median_ci", lambda r: (r.median_low, r.median_high)),
    (lambda: stats.paired_difference(A, B, rng=0), "mean", lambda r: r.estimate),
    (lambda: stats.paired_difference(A, B, rng=0), "t_ci", lambda r: r.confidence_interval()),
    (
        lambda: stats.paired_difference(A, B, rng=0),
        "bootstrap_ci",
        lambda r: (r.bootstrap_low, r.bootstrap_high),
    ),
    (
        lambda: stats.corrected_resampled_ttest(A, B, n_train=90, n_test=10),
        "delta",
        lambda r: r.estimate,
    ),
    (lambda: stats.paired_t(A, B), "delta", lambda r: r.estimate),
    (_coverage, "simultaneous", lambda r: r.estimate),
    (_coverage, "simultaneous_ci", lambda r: r.confidence_interval()),
    (_coverage, "coverage_confidence", lambda r: r.confidence),
]


def test_coverage_pointwise_ci_warns_and_gives_the_new_arrays():
    r = _coverage()
    with pytest.warns(DeprecationWarning, match=r"\.pointwise_ci is deprecated.*pointwise_low"):
        low, high = r.pointwise_ci
    np.testing.assert_array_equal(low, r.pointwise_low)
    np.testing.assert_array_equal(high, r.pointwise_high)
    assert r.confidence_interval() == (r.low, r.high) and r.low <= r.estimate <= r.high


def test_a_one_sided_bound_is_not_an_interval():
    r = stats.aso(A, B, n_resamples=200, rng=0)
    assert not type(r).has_interval()
    with pytest.raises(TypeError, match="ASOResult has no confidence interval"):
        r.confidence_interval()
    assert "one-sided" in type(r).__doc__


@pytest.mark.parametrize(("make", "old", "new"), DEPRECATED, ids=[d[1] for d in DEPRECATED])
def test_old_names_warn_and_give_the_new_value(make, old, new):
    r = make()
    with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated.*use \."):
        value = getattr(r, old)
    assert value == new(r)


TUPLE_INTERVALS = [
    lambda: stats.corrected_resampled_ttest(A, B, n_train=90, n_test=10),
    lambda: stats.paired_t(A, B),
    lambda: stats.cohens_d(A, B),
    lambda: stats.paired_bootstrap(*_gold_preds(), n_resamples=300, rng=0),
]


@pytest.mark.parametrize("make", TUPLE_INTERVALS, ids=["corrected", "t", "d", "bootstrap"])
def test_the_old_tuple_confidence_interval_warns_and_the_method_does_not(make):
    r = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expect = r.confidence_interval()
    with pytest.warns(DeprecationWarning, match=r"call \.confidence_interval\(\)"):
        low, high = r.confidence_interval
    assert (low, high) == tuple(expect) == (r.low, r.high)
    with pytest.warns(DeprecationWarning):
        assert r.confidence_interval[1] == expect.high


def test_a_resampling_test_statistic_is_its_estimate():
    """For the paired bootstrap and randomization tests the test statistic is the difference."""
    r = stats.paired_bootstrap(*_gold_preds(), n_resamples=300, rng=0)
    assert r.statistic == r.estimate == pytest.approx(r.score_a - r.score_b)


def test_html_escapes_text():
    r = stats.probability_of_improvement(
        _task_array()[0], _task_array()[1], labels=("<b>x</b>", "y&z"), n_resamples=50, rng=0
    )
    page = r._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "y&amp;z" in page and "<b>x</b>" not in page


def test_an_unknown_attribute_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = stats.summarize(A).nonsense
    assert not hasattr(stats.summarize(A), "delta")


def test_variance_analysis_parts_stay_available():
    v = _variance()
    frame = v.to_frame()
    parts = v.frames()
    assert set(frame["table"]) == {name for name, f in parts.items() if len(f)}
    comp = frame[frame["table"] == "components"].dropna(axis=1, how="all")
    pd.testing.assert_frame_equal(
        comp.drop(columns="table").reset_index(drop=True),
        parts["components"],
        check_dtype=False,
    )


def test_frame_rows_match_the_arrays():
    r = stats.compare_tuning_curves(A, B, np.arange(1, 6), a=0, b=1)
    f = r.to_frame()
    np.testing.assert_array_equal(f["a_upper"], r.band_a.upper)
    assert list(f["verdict"]) == list(r.verdict)
    m = stats.multi_aso({"a": A, "b": B, "c": A + 0.01}, n_resamples=100, rng=0).to_frame()
    assert len(m) == 6 and not (m["system"] == m["versus"]).any()
    assert math.isclose(m["violation_ratio"].iloc[0] + m["violation_ratio"].iloc[2], 1.0)


def test_data_layer_tables_show_small_numbers_and_pvalues():
    """A variance of 9e-5 and a p-value of 1.6e-275 are not printed as 0.000000."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vareval.errors.VarevalWarning)
        v = vareval.variance(
            datasets.load("decovac_sim.csv"),
            metric="accuracy",
            fixed=("model", "optimizer"),
            random=("seed", "config"),
        )
    text = repr(v)
    assert "0.000000" not in text and "0.0e+00" not in text, text
    seed = v.fit.variance[list(v.fit.components).index("seed")]
    assert 1e-5 < seed < 1e-3 and f"{seed:.3e}" in text
    p_all = v.f_tests["satterthwaite"][-1].pvalue
    assert 0 < p_all < 1e-200 and f"{p_all:.1e}" in text
    assert v.lrt[1].pvalue == 0 and "<1e-300" in text  # config's LRT underflows a double
    html = v._repr_html_()
    assert "0.000000" not in html


def test_a_results_design_line_is_in_its_text_and_its_html(result):
    """A result that assumed a design states it in every view: repr, notebook HTML, JSON."""
    design = getattr(result, "design", None)
    if not hasattr(design, "statement"):
        pytest.skip("this result assumes no design")
    line = design.statement()
    assert line.startswith("design") and line in repr(result)
    assert html.escape(line) in result._repr_html_()


def test_every_table_level_result_with_a_design_has_one():
    """The data layer's results over a runs table carry the design (so the test above runs)."""
    for name in ("vareval.data.tables.ResultTable", "vareval.data.repeated.SummaryTable",
                 "vareval.data.selection.SelectedTable"):  # fmt: skip
        assert hasattr(EXAMPLES[name](None).design, "statement"), name
    p = EXAMPLES["vareval.data.tables.ResultTable"](None)
    page = p._repr_html_()
    assert "design (read from the labels)" in page and "NOTE" in page
