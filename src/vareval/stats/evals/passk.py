"""pass@k from several samples per question, with an interval over questions.

For a question with ``n`` samples of which ``c`` are correct, the unbiased
estimator of the chance that at least one of ``k`` samples drawn without
replacement is correct is ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021).
The benchmark's pass@k is its mean over questions: its SE is the
cluster-robust SE over questions (clusters when given), its interval
``-/+ t_{G-1} SE`` clipped to [0, 1]. The sampling of answers is inside each
question's estimate, so the SE over questions counts both sources.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence, as_positive_int
from vareval.stats._result import Result
from vareval.stats.evals._questions import cluster_se, questions
from vareval.stats.evals.compare import EvalComparisons, compare_matrix, model_questions
from vareval.stats.evals.score import warn_few_clusters


@dataclasses.dataclass(frozen=True, repr=False)
class PassAtK(Result):
    """One model's pass@k on a benchmark.

    No figure: one pass@k with its interval, read from its fields.

    Attributes
    ----------
    estimate : float
        Mean over questions of the unbiased per-question pass@k.
    low, high, confidence, se, df
        ``estimate -/+ t_{df} se`` clipped to [0, 1]; ``se`` cluster-robust over questions.
    k, n_questions, n_clusters : int
    min_samples : int
        The fewest samples any question has (at least ``k``).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    se: float
    df: int
    k: int
    n_questions: int
    n_clusters: int
    min_samples: int

    _interval = ("low", "high")


def pass_at_k_question(n, c, k: int) -> np.ndarray:
    """Chen et al.'s unbiased pass@k of each question: ``1 - C(n-c, k) / C(n, k)``."""
    n, c = np.asarray(n, dtype=float), np.asarray(c, dtype=float)
    ok = n - c >= k
    m = np.where(ok, n - c, k)  # placeholder where every k-subset holds a correct answer
    log_ratio = (
        special.gammaln(m + 1) - special.gammaln(m - k + 1)
        - special.gammaln(n + 1) + special.gammaln(n - k + 1)
    )
    return np.where(ok, -np.expm1(log_ratio), 1.0)


def _check_binary(x: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isin(x, (0.0, 1.0)))
    if bad.size:
        raise ArgumentError(
            f"`correct` must be 0 or 1 for pass@k; row {bad[0]} is {x[bad[0]]!r}."
        )


def _per_question(samples: np.ndarray, means: np.ndarray, k: int) -> np.ndarray:
    if samples.min() < k:
        raise ArgumentError(
            f"pass@{k} needs at least {k} samples of every question; "
            f"{int((samples < k).sum())} question(s) have fewer (fewest: {samples.min()})."
        )
    return pass_at_k_question(samples, np.rint(means * samples), k)


def pass_at_k(correct, question, k: int, cluster=None, *, confidence: float = 0.95) -> PassAtK:
    """pass@k of one model with its interval over questions (see the module docstring).

    Parameters
    ----------
    correct : array_like
        1 if the sample is correct, else 0; one row per sample.
    question : array_like
        The question of each sample.
    k : int
        Samples allowed per question.
    cluster : array_like, optional
        The cluster of each row's question.
    """
    k = as_positive_int(k, "k")
    confidence = as_confidence(confidence)
    q = questions(correct, question, cluster, name="correct")
    _check_binary(np.asarray(correct, dtype=float))
    values = _per_question(q.samples, q.means, k)
    warn_few_clusters(q)
    est = float(values.mean())
    se = float(cluster_se(values, q.cluster, q.n_clusters))
    half = special.stdtrit(q.n_clusters - 1, (1 + confidence) / 2) * se
    return PassAtK(
        estimate=est,
        low=max(est - half, 0.0),
        high=min(est + half, 1.0),
        confidence=confidence,
        se=se,
        df=q.n_clusters - 1,
        k=k,
        n_questions=q.means.size,
        n_clusters=q.n_clusters,
        min_samples=int(q.samples.min()),
    )


def compare_pass_at_k(
    correct,
    model,
    question,
    k: int,
    cluster=None,
    *,
    test: str = "permutation",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng=None,
) -> EvalComparisons:
    """Paired comparison of models' pass@k on the same questions.

    Each question's unbiased pass@k per model, then the paired machinery of
    :func:`vareval.stats.evals.compare.compare_models` on those values
    (cluster-robust SE; by default the permutation test over clusters with the
    interval that inverts it).
    """
    k = as_positive_int(k, "k")
    x = np.asarray(correct, dtype=float)
    _check_binary(x)
    mq = model_questions(x, model, question, cluster)
    m_codes = np.unique(np.asarray(model), return_inverse=True)[1].reshape(-1)
    q_codes = np.unique(np.asarray(question), return_inverse=True)[1].reshape(-1)
    n = mq.n_questions
    samples = np.bincount(m_codes * n + q_codes, minlength=len(mq.models) * n)
    samples = samples.reshape(len(mq.models), n).T
    values = _per_question(samples, mq.means, k)
    mq = dataclasses.replace(mq, means=values, single_binary=False, binary=False)
    return compare_matrix(
        mq, test=test, interval="auto", correction=correction, alpha=alpha,
        confidence=confidence, n_resamples=n_resamples, rng=rng,
    )
