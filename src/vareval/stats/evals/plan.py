"""Planning an eval from a pilot: its precision, detectable effect and size.

From a pilot's per-question scores (or, with ``baseline=``, the paired
differences of two models) the variance per question is ``V = n SE**2``,
with ``SE`` the pilot's cluster-robust SE, so clustering at the pilot's
cluster sizes is inside ``V``. On ``n'`` questions like these the SE is
``sqrt(V / n')``. With ``K`` samples per question now and ``K'`` planned,
only the within-question part changes: ``V(K') = V - w / K + w / K'``, ``w``
the within-question variance (Miller 2024). Power and the minimum
detectable effect use the normal approximation of a two-sided test at
``alpha``: ``MDE = (z_{1-alpha/2} + z_{power}) SE``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence, as_positive_int, as_scores
from vareval.stats._result import Result
from vareval.stats.evals._questions import cluster_se, questions


@dataclasses.dataclass(frozen=True, repr=False)
class EvalPlan(Result):
    """What a benchmark of this kind can tell, and how big it must be.

    No figure: a few planned sizes, read as text.

    Attributes
    ----------
    estimate : float
        The pilot's score (or paired difference).
    se : float
        The SE on ``n_questions`` questions with ``samples`` samples each.
    mde : float
        Minimum detectable effect at ``power`` and ``alpha`` on that size.
    questions_for_se, questions_for_power : int or None
        Questions needed for ``target_se`` / to detect ``effect`` with ``power``.
    samples_for_se : float
        Samples per question that reach ``target_se`` on ``n_questions``
        (``inf`` if more samples alone cannot: the between-question part is too large).
    variance_per_question, within_variance : float
        ``V`` and ``w`` from the pilot (``w`` NaN with one sample per question).
    n_clusters : int
        Independent units of the planned eval: the pilot's clusters scaled by
        ``n_questions / pilot_questions`` (questions, without clusters).
    min_pvalue : float
        The smallest p-value an exact sign-flip test over ``n_clusters`` can give,
        ``2 / 2**G``: above ``alpha`` it cannot reject whatever the data; with
        one unit no test can (1.0).
    reaches_alpha : bool
        ``min_pvalue < alpha``.
    """

    estimate: float
    se: float
    mde: float
    questions_for_se: int | None
    questions_for_power: int | None
    samples_for_se: float | None
    n_questions: int
    samples: float
    paired: bool
    pilot_questions: int
    pilot_samples: float
    pilot_se: float
    variance_per_question: float
    within_variance: float
    target_se: float | None
    effect: float | None
    power: float
    alpha: float
    n_clusters: int
    min_pvalue: float
    reaches_alpha: bool

    _headline = ("estimate", "se", "mde", "questions_for_se", "questions_for_power")


def _within(q) -> float:
    several = q.samples > 1
    return float(np.mean(q.within[several])) if several.any() else float("nan")


def plan_eval(
    scores,
    question=None,
    cluster=None,
    *,
    baseline=None,
    target_se: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    n_questions: int | None = None,
    samples: float | None = None,
) -> EvalPlan:
    """Plan an eval from a pilot (see the module docstring).

    Parameters
    ----------
    scores, question, cluster : array_like
        The pilot's answers, as :func:`vareval.stats.evals.score.eval_score` takes them.
    baseline : array_like, optional
        A second model's scores on the same rows: plan the paired comparison.
    target_se, effect : float, optional
        The SE wanted, and the effect to detect with ``power`` at ``alpha``.
    n_questions, samples : optional
        The planned size (default: the pilot's).
    """
    power = as_confidence(power, "power")
    alpha = as_confidence(alpha, "alpha")
    for name, v in (("target_se", target_se), ("effect", effect)):
        if v is not None and not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
            raise ArgumentError(f"`{name}` must be a positive number; got {v!r}.")
    q = questions(scores, question, cluster)
    values, w = q.means, _within(q)
    if baseline is not None:
        b = as_scores(baseline, "baseline")
        if b.size != np.asarray(scores).size:
            raise ArgumentError(
                f"`baseline` has {b.size} rows and `scores` {np.asarray(scores).size}; "
                "pair them row by row."
            )
        qb = questions(b, question, cluster, name="baseline")
        values, w = q.means - qb.means, w + _within(qb)
    n0, k0 = values.size, float(q.samples.mean())
    se0 = float(cluster_se(values, q.cluster, q.n_clusters))
    v_now = n0 * se0**2
    n = n0 if n_questions is None else as_positive_int(n_questions, "n_questions", minimum=2)
    k = k0 if samples is None else float(samples)
    if samples is not None and not (k >= 1):
        raise ArgumentError(f"`samples` must be >= 1; got {samples!r}.")
    if samples is not None and k != k0 and not math.isfinite(w):
        raise ArgumentError(
            "`samples` needs a pilot with several samples of some question, to measure the "
            "within-question variance; every pilot question has one."
        )
    v = v_now if k == k0 else max(v_now - w / k0 + w / k, 0.0)
    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    se = math.sqrt(v / n)
    samples_for_se = None
    if target_se is not None and math.isfinite(w):
        room = n * target_se**2 - (v_now - w / k0)
        samples_for_se = w / room if room > 0 else math.inf
    g = max(1, int(round(q.n_clusters * n / n0)))
    p_min = 1.0 if g < 2 else min(1.0, 2.0 ** (1 - g))
    return EvalPlan(
        n_clusters=g,
        min_pvalue=p_min,
        reaches_alpha=bool(p_min < alpha),
        estimate=float(values.mean()),
        se=se,
        mde=float(z * se),
        questions_for_se=None if target_se is None else max(2, math.ceil(v / target_se**2)),
        questions_for_power=None if effect is None else max(2, math.ceil(v * z**2 / effect**2)),
        samples_for_se=samples_for_se,
        n_questions=n,
        samples=k,
        paired=baseline is not None,
        pilot_questions=n0,
        pilot_samples=k0,
        pilot_se=se0,
        variance_per_question=v,
        within_variance=w,
        target_se=target_se,
        effect=effect,
        power=power,
        alpha=alpha,
    )
