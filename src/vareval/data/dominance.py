"""Almost stochastic order and effect sizes on a results table.

Roles: ``metric`` (the scores), ``by`` (the method), optionally ``task`` (one
comparison per task, adjusted over all tasks) and ``pair_on`` (runs matched
across methods, e.g. by seed: the standardised effect is then the paired
d_z). ASO itself compares two score distributions and needs no pairing.
"""

from __future__ import annotations

import pandas as pd

from vareval import stats
from vareval.data.tables import ResultTable
from vareval.data.tasks import task_scores
from vareval.data.validate import groups, shown
from vareval.errors import DataError
from vareval.stats._checks import keyword_only


def _score_sets(df, metric, by, task, pair_on, higher_is_better) -> dict:
    """``{task: {method: scores}}``; the single task is named ``""`` without ``task``.

    Scores of a loss (``higher_is_better=False``) are negated, so that
    "better" keeps its meaning. With ``pair_on`` the runs of every method are
    aligned by key (validated by :func:`~vareval.data.tasks.task_scores`), so
    paired effects are well defined.
    """
    sign = 1.0 if higher_is_better else -1.0
    if task is None and pair_on is None:
        return {"": {m: sign * x for m, x in groups(df, metric, by, min_runs=2).items()}}
    if task is None:
        task = "\0task"  # one task for the whole table: a column name no table uses
        df = df.assign(**{task: ""})
    ts = task_scores(df, metric, by, task, pair_on=pair_on, min_tasks=1)
    if ts.scores.shape[2] < 2:
        raise DataError(
            f"each method has 1 run per task in column {metric!r}; comparing score "
            "distributions needs at least 2 runs per method and task."
        )
    return {
        t: {m: sign * ts.scores[i, j] for i, m in enumerate(ts.methods)}
        for j, t in enumerate(ts.tasks)
    }


@keyword_only("metric", "by")
def aso(
    df,
    *,
    metric: str,
    by,
    task=None,
    pair_on=None,
    confidence: float = 0.95,
    correction: str = "holm",
    n_resamples: int = 1000,
    threshold: float = 0.2,
    higher_is_better: bool = True,
    rng=None,
) -> ResultTable:
    """Almost stochastic order between every ordered pair of methods (per task).

    Calls :func:`vareval.stats.multi_aso_tasks`: one family of claims over
    every task and ordered pair, adjusted with ``correction``. For a loss
    (``higher_is_better=False``) the scores are negated.

    Returns
    -------
    ResultTable
        Keyed by task (``""`` without ``task``), each a
        :class:`~vareval.stats.MultiASOResult`; the frame has one row per
        ordered pair.
    """
    results = stats.multi_aso_tasks(
        _score_sets(df, metric, by, task, pair_on, higher_is_better),
        confidence=confidence,
        correction=correction,
        n_resamples=n_resamples,
        threshold=threshold,
        rng=rng,
    )
    rows = [
        {
            "task": t,
            "method": r.names[i],
            "versus": r.names[j],
            "epsilon_min": r.epsilon_min[i, j],
            "violation_ratio": r.violation_ratio[i, j],
            "sd": r.sd[i, j],
            "pvalue": r.pvalue[i, j],
            "pvalue_adjusted": r.pvalue_adjusted[i, j],
            "better": bool(r.better[i, j]),
        }
        for t, r in results.items()
        for i in range(len(r.names))
        for j in range(len(r.names))
        if i != j
    ]
    frame = pd.DataFrame(rows)
    frame = frame.drop(columns="task") if task is None else frame
    index = ["method", "versus"] if task is None else ["task", "method", "versus"]
    return ResultTable(
        f"Almost stochastic order of {metric!r} (epsilon_min < {threshold:g}: method better)",
        results,
        frame.set_index(index),
    )


@keyword_only("metric", "by")
def effect_sizes(
    df,
    *,
    metric: str,
    by,
    task=None,
    pair_on=None,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> ResultTable:
    """Effect sizes of every pair of methods (per task), with intervals.

    Independent runs: Cohen's d, Hedges' g, Vargha-Delaney A12 and Cliff's
    delta; with ``pair_on``: the paired d_z and g_z on runs matched by key.
    Positive means the first method of the pair is better.
    """
    sets = _score_sets(df, metric, by, task, pair_on, higher_is_better)
    few = {t: list(s) for t, s in sets.items() if len(s) < 2}
    if few:
        t, names = next(iter(few.items()))
        raise DataError(
            f"effect sizes compare methods, and {f'task {t!r} has' if t else 'the table has'} "
            f"{len(names)} ({shown(names)}); give at least two methods in column(s) {by!r}."
        )
    results, rows = {}, []
    for t, s in sets.items():
        names = list(s)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                key = f"{t}: {a} vs {b}" if t else f"{a} vs {b}"
                sizes = stats.effect_sizes(
                    s[a], s[b], paired=pair_on is not None, confidence=confidence
                )
                results.update({f"{key}: {name}": r for name, r in sizes.items()})
                rows += [
                    {
                        "task": t,
                        "method": a,
                        "versus": b,
                        "effect": r.name,
                        "estimate": r.estimate,
                        "ci_low": r.low,
                        "ci_high": r.high,
                    }
                    for r in sizes.values()
                ]
    frame = pd.DataFrame(rows)
    frame = frame.drop(columns="task") if task is None else frame
    index = (
        ["method", "versus", "effect"] if task is None else ["task", "method", "versus", "effect"]
    )
    return ResultTable(
        f"Effect sizes of {metric!r} ({confidence:.0%} intervals)", results, frame.set_index(index)
    )
