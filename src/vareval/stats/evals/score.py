"""One model's score on a benchmark, with an interval from the right unit.

The estimand is the benchmark score in expectation over the model's
sampling: the mean over questions of each question's expected score, which
the mean of per-question means estimates (Miller 2024, section on
resampling). Its SE counts the independent unit: the cluster of questions
(one passage, one document) when there are clusters, else the question;
several samples of one question are never independent questions.

Intervals (``interval=``):

- ``"wilson"``: Wilson's score interval for 0/1 scores (Brown, Cai and
  DasGupta 2001), on the effective number of questions
  ``p (1 - p) / SE**2`` when clusters or several samples make the SE larger
  than a binomial's (Korn and Graubard 1998's design-effect rule);
- ``"clopper-pearson"``: the exact binomial interval, on the same effective n;
- ``"bayes"``: the equal-tailed posterior interval of a Beta(1, 1) prior on
  ``k`` successes in ``n`` (Bowyer, Aitchison and Ivanova 2025's IID case);
- ``"t"``: ``mean -/+ t_{G-1} SE`` with the cluster-robust SE;
- ``"bootstrap"``: percentile interval of the cluster bootstrap;
- ``"normal"``: the naive CLT interval over rows (every answer independent),
  shown only to see what it gets wrong;
- ``"auto"`` (default): Wilson for 0/1 scores, else ``t``. With clusters
  or several samples the binomial intervals use Korn and Graubard (1998)'s
  effective size, ``p (1 - p) / SE**2`` times ``(z / t_{G-1})**2``. The slow tier
  (``tests/stats/evals/test_calibration.py``) checks its coverage at
  n = 10 to 2,000, ICC 0 to 0.3 and 1 to 10 samples per question.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from scipy import special

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats._checks import as_confidence, as_positive_int, as_rng
from vareval.stats._result import ConfidenceInterval, Result
from vareval.stats.evals._questions import (
    FEW_CLUSTERS,
    Questions,
    bootstrap_means,
    cluster_se,
    questions,
)

INTERVALS = ("auto", "wilson", "clopper-pearson", "bayes", "t", "bootstrap", "normal")
_BINARY_ONLY = ("wilson", "clopper-pearson", "bayes")


@dataclasses.dataclass(frozen=True, repr=False)
class EvalScore(Result):
    """One model's benchmark score with its interval.

    No figure: one score with its interval; the table of eval_scores draws the models side by side.

    Attributes
    ----------
    estimate : float
        Mean over questions of the per-question mean score.
    low, high, confidence : float
        The interval named by ``interval``, at level ``confidence``.
    se : float
        Cluster-robust SE of ``estimate`` (clusters = questions when none given).
    df : int
        ``n_clusters - 1``, the t interval's degrees of freedom.
    interval : str
        The interval's method (``"auto"`` resolved).
    n_questions, n_clusters, n_answers : int
        Questions, independent clusters, and rows (answers, all samples).
    samples_per_question : float
        Mean number of samples per question.
    se_naive : float
        The SE a CLT over rows would give (``sd(rows) / sqrt(n_answers)``).
    design_effect : float
        ``(se / se_naive)**2``: how many times the naive variance the true one is.
    n_effective : float
        ``n_answers / design_effect``: independent answers the data are worth.
    within_variance, between_variance : float
        Miller's split: mean variance of a question's samples around its mean
        (NaN with one sample each), and the variance of questions' expected
        scores (``var(means) - within / K``, floored at 0).
    binary : bool
        Whether every score is 0 or 1.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    se: float
    df: int
    interval: str
    n_questions: int
    n_clusters: int
    n_answers: int
    samples_per_question: float
    se_naive: float
    design_effect: float
    n_effective: float
    within_variance: float
    between_variance: float
    binary: bool

    _interval = ("low", "high")

    def se_with_samples(self, samples) -> np.ndarray:
        """The SE with ``samples`` samples per question on the same questions.

        Only the within-question part shrinks: ``sqrt(se**2 - w / (K n) + w / (K' n))``
        with ``w`` the within variance and ``K`` the current samples per question
        (Miller 2024, eq. for resampled answers). Needs two or more samples per
        question to know ``w``.
        """
        k = np.asarray(samples, dtype=float)
        if not np.isfinite(self.within_variance):
            raise ArgumentError(
                "se_with_samples needs several samples of some question to measure the "
                "within-question variance; every question has one."
            )
        if (k < 1).any():
            raise ArgumentError(f"`samples` must be >= 1; got {samples!r}.")
        n = self.n_questions
        between = max(self.se**2 - self.within_variance / (self.samples_per_question * n), 0.0)
        return np.sqrt(between + self.within_variance / (k * n))


def wilson(k, n, confidence: float) -> ConfidenceInterval:
    """Wilson's score interval for ``k`` successes in ``n`` (``n`` may be fractional)."""
    z = special.ndtri((1 + confidence) / 2)
    p = np.asarray(k, float) / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return ConfidenceInterval(np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1))


def clopper_pearson(k, n, confidence: float) -> ConfidenceInterval:
    """The exact (Clopper-Pearson) binomial interval; real-valued ``k``, ``n`` allowed."""
    a = (1 - confidence) / 2
    k = np.asarray(k, float)
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, special.betaincinv(k, n - k + 1, a), 0.0)
        high = np.where(k < n, special.betaincinv(k + 1, n - k, 1 - a), 1.0)
    return ConfidenceInterval(low, high)


def beta_posterior(k, n, confidence: float) -> ConfidenceInterval:
    """Equal-tailed interval of the Beta(k + 1, n - k + 1) posterior (uniform prior)."""
    a = (1 - confidence) / 2
    return ConfidenceInterval(
        special.betaincinv(k + 1, n - k + 1, a), special.betaincinv(k + 1, n - k + 1, 1 - a)
    )


def _binary_interval(method: str, p: float, n_eff: float, confidence: float):
    k = p * n_eff
    f = {"wilson": wilson, "clopper-pearson": clopper_pearson, "bayes": beta_posterior}[method]
    low, high = f(k, n_eff, confidence)
    return float(low), float(high)


def binomial_n(p, se, n_questions, n_answers, n_clusters, design: bool, confidence: float):
    """The number of answers a binomial interval on ``p`` should use (arrays allowed).

    A simple design (``design=False``: one answer per question, no clusters):
    the number of questions. Else Korn and Graubard (1998)'s effective size
    ``p (1 - p) / se**2`` (at most the number of answers), times
    ``(z / t_{G-1})**2`` so that few clusters widen the interval as a t on
    ``G - 1`` df would.
    """
    if not design:
        return np.full(np.shape(p), float(n_questions))
    level = (1 + confidence) / 2
    df_factor = (special.ndtri(level) / special.stdtrit(n_clusters - 1, level)) ** 2
    se = np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = np.where(se > 0, np.minimum(p * (1 - p) / se**2, n_answers) * df_factor, n_questions)
    return eff


def resolve_interval(interval: str, binary: bool) -> str:
    """``"auto"`` -> Wilson for 0/1 scores, else t; refuse a 0/1 interval on other scores."""
    if interval not in INTERVALS:
        raise ArgumentError(f"`interval` must be one of {', '.join(INTERVALS)}; got {interval!r}.")
    if interval == "auto":
        return "wilson" if binary else "t"
    if interval in _BINARY_ONLY and not binary:
        raise ArgumentError(
            f"interval={interval!r} is for 0/1 scores; these scores are not all 0 or 1: "
            "use 't' or 'bootstrap'."
        )
    return interval


def warn_few_clusters(q: Questions) -> None:
    """A warning when the clusters are too few for a cluster-robust SE to be trusted."""
    if q.clustered and q.n_clusters < FEW_CLUSTERS:
        warnings.warn(
            f"only {q.n_clusters} clusters: the cluster-robust SE is unreliable below about "
            f"{FEW_CLUSTERS} (its interval is a t with {q.n_clusters - 1} df).",
            VarevalWarning,
            stacklevel=3,
        )


def _split(q: Questions, se: float) -> tuple[float, float]:
    """Within- and between-question variance (Miller 2024's resampling section)."""
    several = q.samples > 1
    if not several.any():
        return float("nan"), float("nan")
    within = float(np.mean(q.within[several]))
    k_mean = float(q.samples.mean())
    between = max(float(np.var(q.means, ddof=1)) - within / k_mean, 0.0)
    return within, between


def eval_score(
    scores,
    question=None,
    cluster=None,
    *,
    interval: str = "auto",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng=None,
) -> EvalScore:
    """One model's benchmark score with an interval that counts the right unit.

    Parameters
    ----------
    scores : array_like
        One score per answer (0/1, partial credit or any number).
    question : array_like, optional
        The question of each answer; rows sharing one are samples (epochs) of
        it. Default: every row its own question.
    cluster : array_like, optional
        The cluster of each answer's question (passage, document, subject).
    interval : str
        See the module docstring; ``"auto"``: Wilson for 0/1 scores, else t.
    confidence : float
        Level of the interval.
    n_resamples, rng
        For ``interval="bootstrap"``: cluster-bootstrap resamples and their seed.
    """
    confidence = as_confidence(confidence)
    q = questions(scores, question, cluster)
    method = resolve_interval(interval, q.binary)
    warn_few_clusters(q)
    x = np.asarray(scores, dtype=float)
    n, g = q.means.size, q.n_clusters
    estimate = float(q.means.mean())
    se = float(cluster_se(q.means, q.cluster, g))
    se_naive = float(np.std(x, ddof=1) / np.sqrt(x.size))
    deff = (se / se_naive) ** 2 if se_naive > 0 else 1.0
    n_eff = x.size / deff if deff > 0 else float(x.size)
    if method in _BINARY_ONLY:
        design = q.clustered or bool((q.samples > 1).any())
        n_binom = float(binomial_n(estimate, se, n, x.size, g, design, confidence))
        low, high = _binary_interval(method, estimate, n_binom, confidence)
    elif method == "t":
        half = special.stdtrit(g - 1, (1 + confidence) / 2) * se
        low, high = estimate - half, estimate + half
    elif method == "bootstrap":
        n_resamples = as_positive_int(n_resamples, "n_resamples")
        boot = bootstrap_means(q.means[:, None], q.cluster, g, n_resamples, as_rng(rng))[:, 0]
        a = (1 - confidence) / 2
        low, high = np.quantile(boot, [a, 1 - a])
    else:  # normal: every answer independent
        half = special.ndtri((1 + confidence) / 2) * se_naive
        low, high = estimate - half, estimate + half
    within, between = _split(q, se)
    return EvalScore(
        estimate=estimate,
        low=float(low),
        high=float(high),
        confidence=confidence,
        se=se,
        df=g - 1,
        interval=method,
        n_questions=n,
        n_clusters=g,
        n_answers=x.size,
        samples_per_question=float(q.samples.mean()),
        se_naive=se_naive,
        design_effect=float(deff),
        n_effective=float(n_eff),
        within_variance=within,
        between_variance=between,
        binary=q.binary,
    )
