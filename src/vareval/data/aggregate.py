"""Across tasks on a results table: aggregates across tasks, profiles, probability of improvement.

One call reads the roles (``metric``, ``by``, ``task``, optional ``pair_on``)
from a long table with one row per run, validates it with
:func:`vareval.data.tasks.task_scores`, optionally normalises the scores per
task and calls :mod:`vareval.stats.tasks.aggregate`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from vareval import stats
from vareval.data.tables import ResultTable
from vareval.data.tasks import reference_scores, task_scores
from vareval.data.validate import shown
from vareval.errors import ArgumentError, DataError
from vareval.stats._checks import as_rng, keyword_only
from vareval.stats.tasks.aggregate import AGGREGATES

NORMALIZATIONS = ("none", "minmax", "reference")


def _normalized(table, normalize, reference, task, reference_low, reference_high):
    """Scores after the chosen normalisation, and a sentence saying what was done."""
    if normalize not in NORMALIZATIONS:
        raise ArgumentError(
            f"`normalize` must be one of {', '.join(NORMALIZATIONS)}; got {normalize!r}."
        )
    if (normalize == "reference") != (reference is not None):
        raise ArgumentError("a reference table goes with normalize='reference' (and only with it).")
    if normalize == "none":
        return table.scores, "raw scores"
    if normalize == "minmax":
        return stats.normalize_scores(table.scores), "min-max normalised per task (all methods)"
    if reference_low is None or reference_high is None:
        raise ArgumentError("name the reference table's low and high score columns.")
    low, high = reference_scores(
        reference, table.tasks, task=task, low=reference_low, high=reference_high
    )
    return (
        stats.normalize_scores(table.scores, (low, high)),
        f"normalised per task: {reference_low} = 0, {reference_high} = 1",
    )


def _pairs(methods, pairs, baseline, scores) -> tuple[list[tuple[str, str]], str, int]:
    """The pairs (X, Y) for P(X > Y), a sentence saying which, and the family they adjust for.

    Pairs picked on the same data (the best by IQM) are adjusted for every
    pair they could have been picked from, k (k - 1) / 2; named pairs for
    their own number.
    """
    every = len(methods) * (len(methods) - 1) // 2
    if baseline is not None:
        if pairs is not None:
            raise ArgumentError("give `pairs` or `baseline`, not both.")
        if baseline not in methods:
            raise DataError(f"baseline {baseline!r} not found (methods: {shown(methods)}).")
        chosen = [(m, baseline) for m in methods if m != baseline]
        return chosen, f"P(X > Y): each method against the baseline {baseline}", len(chosen)
    if pairs is None or (isinstance(pairs, str) and pairs == "best"):
        best = methods[int(np.argmax(stats.aggregate_scores(scores, ["iqm"])[:, 0]))]
        return [(best, m) for m in methods if m != best], (
            f"P(X > Y): the best method by IQM ({best}) against each other method; "
            "ask for every pair with pairs='all' (--pairs all)"
        ), every
    if isinstance(pairs, str) and pairs == "all":
        return list(itertools.combinations(methods, 2)), "P(X > Y): every pair of methods", every
    if isinstance(pairs, str):
        raise ArgumentError(f"`pairs` must be 'best', 'all' or a list of pairs; got {pairs!r}.")
    out = []
    for x, y in pairs:
        for m in (x, y):
            if m not in methods:
                raise DataError(f"method {m!r} not found (methods: {shown(methods)}).")
        if x == y:
            raise ArgumentError(f"a pair compares two different methods; got {x!r} twice.")
        out.append((str(x), str(y)))
    return out, "P(X > Y): the pairs asked for", max(len(out), 1)


def _adjustment(family: int, confidence: float, picked: bool) -> str:
    """A sentence saying how the intervals of P(X > Y) were adjusted."""
    if family == 1:
        return f"{confidence:.0%} percentile interval, one pair: not adjusted"
    why = "the best method was picked on these data, so " if picked else ""
    return (
        f"{why}the {confidence:.0%} intervals hold simultaneously over {family} pairs "
        "(Bonferroni on the bootstrap SE)"
    )


@keyword_only("metric", "by", "task")
def aggregate(
    df,
    *,
    metric: str,
    by,
    task,
    pair_on=None,
    normalize: str = "none",
    reference=None,
    reference_low: str | None = None,
    reference_high: str | None = None,
    aggregates=AGGREGATES,
    gamma: float = 1.0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    ci: str = "percentile",
    resample_tasks: bool = False,
    taus=None,
    pairs=None,
    baseline: str | None = None,
    improvement_resamples: int = 1000,
    rng=None,
    progress=False,
) -> ResultTable:
    """Aggregate performance across tasks with stratified-bootstrap intervals.

    Parameters
    ----------
    df : DataFrame
        One row per run with a method, a task and a score (higher is better).
    metric, by, task : str
        The score column and the column(s) naming the method and the task.
    pair_on : str, optional
        Column naming the run (e.g. ``seed``): then every method must hold the
        same run keys on every task, once each.
    normalize : {"none", "minmax", "reference"}, default "none"
        Per-task normalisation before aggregating (see
        :func:`vareval.stats.normalize_scores`).
    reference, reference_low, reference_high
        With ``normalize="reference"``: a table with one row per task (the
        same ``task`` column) and the columns mapped to 0 and 1.
    aggregates, gamma, n_resamples, confidence, ci, resample_tasks
        As :func:`vareval.stats.interval_estimates`.
    taus : array_like, optional
        Thresholds of the performance profiles (default 101 over the score range).
    pairs : "best", "all" or list of (str, str), default "best"
        Method pairs (X, Y) for ``P(X > Y)``. Default (None or "best"): the
        method with the highest IQM against each other method (k - 1 pairs);
        "all": every pair in table order (k (k - 1) / 2, slow for many methods).
        The intervals are simultaneous (Bonferroni) over the family the pairs
        come from: every pair for "best" and "all" (the best is picked on
        these data), the k - 1 pairs of a baseline, or the pairs named; one
        pair keeps the percentile interval. ``notes[1]`` says which.
    baseline : str, optional
        Instead of ``pairs``: each other method X against this one, ``P(X > baseline)``.
    improvement_resamples : int, default 1000
    rng : None, int or Generator
        One seed for everything; independent streams are spawned for each part
        (pair ``p`` of the chosen pairs gets stream ``3 + p``).
    progress : bool or None, default False
        Show tqdm progress bars (None: on a terminal only).

    Returns
    -------
    ResultTable
        Keys ``"intervals"`` (:class:`~vareval.stats.IntervalEstimates`),
        ``"profile"`` and ``"mean_profile"`` (run-score and average-score
        :class:`~vareval.stats.PerformanceProfile`), and ``"P(X > Y)"`` for
        each pair (:class:`~vareval.stats.ProbabilityOfImprovement`); the frame
        is the tidy table of interval estimates.
    """
    table = task_scores(df, metric, by, task, pair_on=pair_on)
    scores, how = _normalized(table, normalize, reference, task, reference_low, reference_high)
    picked = baseline is None and (pairs is None or (isinstance(pairs, str) and pairs == "best"))
    pairs, which, family = _pairs(table.methods, pairs, baseline, scores)
    gens = as_rng(rng).spawn(3 + len(pairs))
    common = {"confidence": confidence, "resample_tasks": resample_tasks, "progress": progress}
    intervals = stats.interval_estimates(
        scores,
        aggregates,
        methods=table.methods,
        gamma=gamma,
        n_resamples=n_resamples,
        ci=ci,
        rng=gens[0],
        **common,
    )
    profiles = {
        name: stats.performance_profile(
            scores,
            taus,
            methods=table.methods,
            kind=kind,
            n_resamples=n_resamples,
            rng=gens[i],
            **common,
        )
        for i, (name, kind) in enumerate((("profile", "runs"), ("mean_profile", "mean")), 1)
    }
    index = [(table.methods.index(x), table.methods.index(y)) for x, y in pairs]
    found = stats.probabilities_of_improvement(
        scores,
        index,
        methods=table.methods,
        n_resamples=improvement_resamples,
        family=family,
        rng=list(gens[3:]),
        **common,
    )
    improvements = {f"P({r.x} > {r.y})": r for r in found}
    frame = pd.DataFrame(intervals.records()).set_index(["method", "aggregate"])
    title = (
        f"{metric!r} across {len(table.tasks)} tasks x {table.scores.shape[2]} runs, {how}; "
        f"{confidence:.0%} stratified-bootstrap intervals ({ci})"
    )
    return ResultTable(
        title,
        {"intervals": intervals, **profiles, **improvements},
        frame,
        notes=(which, _adjustment(family, confidence, picked and len(table.methods) > 2))
        if pairs else (),
    )
