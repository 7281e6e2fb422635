"""Two or more models on the same questions: paired differences.

The estimand for models A and B is the difference of their benchmark scores,
``mean_q (mu_A(q) - mu_B(q))``, estimated by the mean over questions of the
difference of per-question means. Pairing removes the questions' shared
difficulty; the SE is cluster-robust (clusters = questions when none given),
as Miller (2024) derives.

Tests (``test=``), all two-sided, each with the effect and its interval:

- ``"permutation"``: flips the sign of each cluster's total difference (A and
  B exchangeable within a cluster under the null); exact enumeration of all
  ``2**G`` flips when that is at most ``n_resamples``, else random flips with
  ``p = (hits + 1) / (B + 1)``;
- ``"bootstrap"``: the paired cluster bootstrap, ``p`` = share of resampled
  differences at least ``|delta|`` from ``delta`` (``(hits + 1) / (B + 1)``);
- ``"t"``: ``t = delta / SE`` on ``G - 1`` df;
- ``"mcnemar"``: the exact McNemar test (a binomial test on the discordant
  questions), for one 0/1 answer per question and no clusters;
- ``"auto"`` (default): McNemar where it applies, else the permutation test;
  the slow tier checks that it rejects at most at its level under the null.

The interval (``interval=``): ``"newcombe"`` (Newcombe 1998's hybrid score
interval, with effective sizes under clusters or samples), ``"t"``
(``delta -/+ t_{G-1} SE``) or ``"bootstrap"`` (percentile of the paired
cluster bootstrap); ``"auto"`` (default) is Newcombe's for 0/1 scores, else
t: the slow tier checks its coverage. Several
models: every pair, p-values adjusted by Holm (default), Benjamini-Hochberg
(``"bh"``), Bonferroni or none, and tiers of models the data cannot separate.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence, as_positive_int, as_rng, as_scores
from vareval.stats._lazy import stats
from vareval.stats._progress import progress_bar
from vareval.stats._result import Result
from vareval.stats.evals._questions import (
    bootstrap_means,
    cluster_se,
    indicator,
    labels_of,
    question_clusters,
    sign_flips,
)
from vareval.stats.evals.score import binomial_n, warn_few_clusters, wilson
from vareval.stats.testset.significance import adjust_pvalues

TESTS = ("auto", "newcombe", "permutation", "bootstrap", "t", "mcnemar")
PAIRED_INTERVALS = ("auto", "newcombe", "t", "bootstrap", "permutation")
CORRECTIONS = ("holm", "bh", "bonferroni", "none")


@dataclasses.dataclass(frozen=True, repr=False)
class EvalComparison(Result):
    """Model A against model B on the same questions.

    Attributes
    ----------
    estimate : float
        ``score_a - score_b``: the mean over questions of the per-question difference.
    low, high, confidence : float
        Interval for ``estimate`` (method ``interval``).
    se : float
        Cluster-robust SE of the paired difference.
    se_unpaired : float
        ``sqrt(se_a**2 + se_b**2)``: what an unpaired comparison would use.
    statistic, df : float, int
        ``estimate / se`` and ``n_clusters - 1``.
    pvalue, test : float, str
        Two-sided p-value and the test that gave it.
    agree : bool
        True when the interval inverts the test (the defaults): the interval
        at level ``c`` excludes 0 exactly when ``pvalue < 1 - c``.
    min_pvalue : float
        The smallest p-value the test can give on this design (``2 / 2**G``
        for the exact sign-flip test on ``G`` clusters): above ``alpha``, no
        data can reach it.
    a_only, b_only : int or None
        Questions only A (only B) got right, for 0/1 single answers.
    """

    model_a: str
    model_b: str
    estimate: float
    low: float
    high: float
    confidence: float
    se: float
    statistic: float
    df: int
    pvalue: float
    test: str
    interval: str
    score_a: float
    score_b: float
    se_unpaired: float
    n_questions: int
    n_clusters: int
    n_resamples: int
    exact: bool
    agree: bool
    min_pvalue: float
    a_only: int | None
    b_only: int | None

    _interval = ("low", "high")


@dataclasses.dataclass(frozen=True, repr=False)
class EvalComparisons(Result):
    """Every pair of several models on the same questions.

    Attributes
    ----------
    models, scores, score_se : tuple, array, array
        Models in descending order of score, their scores and cluster-robust SEs.
    tier : array of int
        Per model: 1 for the best model and every model the data cannot
        separate from it (adjusted p >= alpha), 2 for the best of the rest and
        those not separable from it, and so on.
    a, b, estimate, low, high, se, pvalue, pvalue_adjusted : arrays
        One entry per pair (A ahead of B in ``models``' order).
    agree, min_pvalue : bool, array
        As in :class:`EvalComparison` (``min_pvalue`` per pair, unadjusted).
    """

    models: tuple
    scores: np.ndarray
    score_se: np.ndarray
    tier: np.ndarray
    a: tuple
    b: tuple
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence: float
    se: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    test: str
    interval: str
    correction: str
    alpha: float
    n_questions: int
    n_clusters: int
    n_resamples: int
    agree: bool
    min_pvalue: np.ndarray

    _interval = ("low", "high")
    _rows = ("a", "b", "estimate", "low", "high", "se", "pvalue", "pvalue_adjusted")

    def tied_with_best(self) -> tuple:
        """The models in the first tier."""
        return tuple(m for m, t in zip(self.models, self.tier, strict=False) if t == 1)

    def matrix(self, field: str = "estimate") -> np.ndarray:
        """``field`` as a models x models matrix (row minus column).

        Antisymmetric for ``estimate``, symmetric for p-values; NaN on the diagonal.
        """
        k = len(self.models)
        pos = {m: i for i, m in enumerate(self.models)}
        out = np.full((k, k), np.nan)
        values = np.asarray(getattr(self, field), dtype=float)
        sign = -1.0 if field in ("estimate", "low", "high", "statistic") else 1.0
        for a, b, v in zip(self.a, self.b, values, strict=False):
            out[pos[a], pos[b]] = v
            out[pos[b], pos[a]] = sign * v
        if field in ("low", "high"):  # the mirrored interval swaps its ends
            other = np.asarray(getattr(self, "high" if field == "low" else "low"), dtype=float)
            for a, b, v in zip(self.a, self.b, other, strict=False):
                out[pos[b], pos[a]] = -v
        return out


def adjust(pvalues, correction: str) -> np.ndarray:
    """Holm / Bonferroni (family-wise error) or Benjamini-Hochberg (false discovery rate)."""
    if correction not in CORRECTIONS:
        raise ArgumentError(
            f"`correction` must be one of {', '.join(CORRECTIONS)}; got {correction!r}."
        )
    p = np.asarray(pvalues, dtype=float)
    if correction != "bh":
        return adjust_pvalues(p, correction)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum.accumulate(m / np.arange(m, 0, -1) * p[order][::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


@dataclasses.dataclass(frozen=True)
class ModelQuestions:
    """Per-question means of several models on the same questions."""

    models: tuple
    means: np.ndarray  # (n_questions, n_models)
    cluster: np.ndarray
    n_clusters: int
    clustered: bool
    single_binary: bool  # one 0/1 answer per question and model
    binary: bool = False  # every answer 0 or 1
    samples: np.ndarray | None = None  # (n_questions, n_models) answers per cell

    @property
    def n_questions(self) -> int:
        """The number of questions."""
        return self.means.shape[0]


def model_questions(scores, model, question, cluster=None) -> ModelQuestions:
    """Reduce long rows (score, model, question[, cluster]) to a questions x models matrix.

    Every model must answer every question; a missing pair is refused by name.
    """
    x = as_scores(scores, "scores", min_n=2)
    labs = labels_of(model=model, question=question, cluster=cluster)
    for name in ("model", "question", "cluster"):
        arr = labs[name]
        if arr is not None and arr.size != x.size:
            raise ArgumentError(
                f"`{name}` has {arr.size} entries but `scores` has {x.size}; give one per row."
            )
    if labs["model"] is None or labs["question"] is None:
        raise ArgumentError("`model` and `question` are needed: one label per row.")
    m_labels, m_codes = np.unique(labs["model"], return_inverse=True)
    q_labels, q_codes = np.unique(labs["question"], return_inverse=True)
    k, n = m_labels.size, q_labels.size
    if k < 2:
        raise ArgumentError(f"a comparison needs at least 2 models; got {k}.")
    cell = m_codes * n + q_codes
    counts = np.bincount(cell, minlength=k * n).reshape(k, n)
    if (counts == 0).any():
        mi, qi = np.argwhere(counts == 0)[0]
        missing = int((counts == 0).sum())
        raise ArgumentError(
            f"model {m_labels[mi]!r} has no answer to question {q_labels[qi]!r} "
            f"({missing} model-question pair(s) missing); a paired comparison needs every "
            "model on every question."
        )
    means = (np.bincount(cell, x, k * n).reshape(k, n) / counts).T
    codes, g = question_clusters(q_codes, n, labs["cluster"], q_labels)
    if n < 2:
        raise ArgumentError(f"a comparison needs at least 2 questions; got {n}.")
    return ModelQuestions(
        models=tuple(str(m) for m in m_labels),
        means=means,
        cluster=codes,
        n_clusters=g,
        clustered=labs["cluster"] is not None,
        single_binary=bool((counts == 1).all() and np.isin(x, (0.0, 1.0)).all()),
        binary=bool(np.isin(x, (0.0, 1.0)).all()),
        samples=counts.T,
    )


def _resolve_test(test: str, mq: ModelQuestions) -> str:
    if test not in TESTS:
        raise ArgumentError(f"`test` must be one of {', '.join(TESTS)}; got {test!r}.")
    if test == "mcnemar" and not (mq.single_binary and not mq.clustered):
        raise ArgumentError(
            "test='mcnemar' needs one 0/1 answer per question and no clusters; "
            "use 'permutation' (it resamples clusters)."
        )
    return test


# The test each interval inverts, and the interval each test inverts.
_TEST_OF = {"newcombe": "newcombe", "t": "t", "bootstrap": "bootstrap",
            "permutation": "permutation"}
_INTERVAL_OF = {"newcombe": "newcombe", "t": "t", "bootstrap": "bootstrap",
                "permutation": "permutation", "mcnemar": "newcombe"}


def _tol(x):
    return 1e-9 * np.maximum(1.0, np.abs(x))


def _needed_hits(alpha: float, total: int, exact: bool) -> int:
    """The fewest hits whose p-value (``hits / B``, or ``(hits + 1) / (B + 1)``) is >= alpha."""
    threshold = alpha * total if exact else alpha * (total + 1) - 1
    return max(0, int(np.ceil(threshold - 1e-9)))


def _kth(values: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The ``k``-th largest (smallest) of each column; +-inf for ``k = 0`` (every shift kept)."""
    if k <= 0:
        return np.full(values.shape[1], np.inf if largest else -np.inf)
    ordered = -np.sort(-values, axis=0) if largest else np.sort(values, axis=0)
    return ordered[k - 1]


def _flip_roots(mq: ModelQuestions, ia, ib, n_resamples, rng, bar=None):
    """For every sign flip and pair, the shifts ``delta0`` the flip counts as a hit.

    A flip ``e`` of the clusters counts against ``delta0`` when
    ``|sum_g e_g (s_g - n_g delta0)| >= |sum_g (s_g - n_g delta0)|`` (``s_g`` a
    cluster's total difference, ``n_g`` its questions): a quadratic in
    ``delta0`` opening downwards, so the hits form an interval ``[r1, r2]``
    around the estimate, infinite for the identity and the all-minus flip.
    The p-value at 0 and the interval that inverts it both read these roots.
    """
    ind = indicator(mq.cluster, mq.n_clusters)
    sums = np.asarray(ind @ mq.means)
    s = sums[:, ia] - sums[:, ib]
    sizes = np.asarray(ind.sum(axis=1)).reshape(-1)
    n, total_a = mq.n_questions, s.sum(axis=0)
    low, high, exact = [], [], False
    for signs, enumerated in sign_flips(mq.n_clusters, n_resamples, rng):
        exact = enumerated
        a, b = signs @ s, (signs @ sizes)[:, None]
        quad = b**2 - n**2  # <= 0; 0 for the identity and its negation
        lin = a * b - total_a * n
        const = a**2 - total_a**2
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.sqrt(np.maximum(lin**2 - quad * const, 0.0))
            r1, r2 = (lin + root) / quad, (lin - root) / quad
        full = np.isclose(quad, 0.0, atol=0.5) & np.ones_like(r1, dtype=bool)
        lo, hi = np.minimum(r1, r2), np.maximum(r1, r2)
        low.append(np.where(full, -np.inf, lo))
        high.append(np.where(full, np.inf, hi))
        if bar is not None:
            bar.update(signs.shape[0])
    low, high = np.concatenate(low), np.concatenate(high)
    tol = _tol(np.abs(low).clip(max=1e300)) + _tol(np.abs(high).clip(max=1e300))
    return low - tol, high + tol, exact


def _permutation(mq, ia, ib, est, alpha, n_resamples, rng, progress=False):
    """The sign-flip p-value at 0 and the interval of shifts it does not reject."""
    g = mq.n_clusters
    flips = min(n_resamples, 2**g) if g < 63 else n_resamples
    with progress_bar(flips, "sign flips", progress) as bar:
        low, high, exact = _flip_roots(mq, ia, ib, n_resamples, rng, bar)
    total = low.shape[0]
    hits = ((low <= 0) & (high >= 0)).sum(axis=0)
    p = hits / total if exact else (hits + 1) / (total + 1)
    k = _needed_hits(alpha, total, exact)
    lo, hi = _kth(low, k, largest=False), _kth(high, k, largest=True)
    full = np.isinf(low[:, :1]).sum() if exact else 0  # flips that always hit
    p_min = full / total if exact else 1 / (total + 1)
    return p, lo, hi, exact, total, np.full(est.shape, p_min)


def _bootstrap(deltas, est, alpha, n_resamples):
    """The paired bootstrap p-value and the symmetric interval that inverts it."""
    dev = np.abs(deltas - est)
    hits = (dev >= np.abs(est) - _tol(est)).sum(axis=0)
    p = (hits + 1) / (n_resamples + 1)
    half = _kth(dev + _tol(est), _needed_hits(alpha, n_resamples, False), largest=True)
    return p, est - half, est + half


def _inverted_pvalue(interval_at, est) -> np.ndarray:
    """``1 - c`` for the smallest level ``c`` whose interval holds 0 (by multisection).

    The test that agrees with the interval: at any level, 0 is outside the
    interval exactly when this p-value is below ``1 - level``.
    """
    lo_c, hi_c = np.zeros(est.shape), np.ones(est.shape)
    steps = np.linspace(0, 1, 17)[1:-1, None]  # 15 levels inside the bracket per call
    for _ in range(13):  # each call narrows the bracket 16-fold: to 1e-15 of the level
        levels = lo_c + steps * (hi_c - lo_c)
        low, high = interval_at(np.clip(levels, 1e-15, 1 - 1e-15))
        holds = (low <= 0) & (high >= 0)
        first = np.where(holds.any(axis=0), holds.argmax(axis=0), steps.shape[0])
        below = np.where(first > 0, levels[np.maximum(first - 1, 0), np.arange(est.size)], lo_c)
        above = np.where(first < steps.shape[0],
                         levels[np.minimum(first, steps.shape[0] - 1), np.arange(est.size)], hi_c)
        lo_c, hi_c = below, above
    # a level nearer 1 than 1e-15 is not resolvable in floating point: p is given as 1e-15
    return np.where(est == 0, 1.0, np.maximum(1 - hi_c, 1e-15))


def _pairwise(mq: ModelQuestions, pairs, test, interval, confidence, n_resamples, rng,
              progress=False):
    """Estimates, SEs, intervals and p-values for ``pairs`` of columns, all vectorised.

    ``progress`` (None: on a terminal only) shows a tqdm bar over the blocks of
    resamples or sign flips.
    """
    m, g = mq.means, mq.n_clusters
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    diffs = m[:, ia] - m[:, ib]
    est = diffs.mean(axis=0)
    se = cluster_se(diffs, mq.cluster, g)
    df = g - 1
    alpha = 1 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, est / np.where(se > 0, se, 1), np.nan)

    def t_at(level):
        half = special.stdtrit(df, (1 + level) / 2) * se
        return est - half, est + half

    low, high = t_at(confidence)
    p_min = np.zeros(len(pairs))
    exact, b_used, p = False, 0, None
    if interval == "newcombe":
        low, high = _newcombe(mq, ia, ib, se)(confidence)
    if test == "bootstrap" or interval == "bootstrap":
        with progress_bar(n_resamples, "bootstrap", progress) as bar:
            boot = bootstrap_means(m, mq.cluster, g, n_resamples, rng, bar)
        p_boot, b_low, b_high = _bootstrap(boot[:, ia] - boot[:, ib], est, alpha, n_resamples)
        b_used, p_min = n_resamples, np.full(len(pairs), 1 / (n_resamples + 1))
        if interval == "bootstrap":
            low, high = b_low, b_high
        if test == "bootstrap":
            p = p_boot
    if test == "permutation" or interval == "permutation":
        p_perm, p_low, p_high, exact, b_used, p_min = _permutation(
            mq, ia, ib, est, alpha, n_resamples, rng, progress)
        if interval == "permutation":
            low, high = p_low, p_high
        if test == "permutation":
            p = p_perm
    if test == "t":
        p = np.where(se > 0, 2 * special.stdtr(df, -np.abs(np.nan_to_num(t))), (est == 0) * 1.0)
    elif test == "newcombe":
        p = _inverted_pvalue(_newcombe(mq, ia, ib, se), est)
    elif test == "mcnemar":
        found = [_mcnemar(m[:, i], m[:, j]) for i, j in pairs]
        p = np.array([f[0] for f in found])
        p_min = np.array([min(1.0, 2.0 ** (1 - (f[1] + f[2]))) for f in found])
        exact = True
    return est, se, t, df, low, high, np.minimum(p, 1.0), exact, b_used, p_min


def _newcombe(mq: ModelQuestions, ia, ib, se_d):
    """Newcombe (1998)'s hybrid score interval for a paired difference of proportions.

    ``delta -/+ sqrt(d1**2 - 2 phi d1 d2 + d2**2)`` from each model's Wilson
    limits (``d1 = p_a - low_a``, ``d2 = high_b - p_b`` for the lower end),
    ``phi`` the correlation of the two scores. With clusters or several
    samples, the Wilson limits use each model's effective size
    (:func:`~vareval.stats.evals.score.binomial_n`) and ``phi`` is the one the
    cluster-robust SEs imply: ``(se_a**2 + se_b**2 - se_d**2) / (2 se_a se_b)``.
    Returns the interval as a function of the level (one per pair, or one for all),
    so its inversion computes the level-free parts once.
    """
    p = mq.means.mean(axis=0)
    se = cluster_se(mq.means, mq.cluster, mq.n_clusters)
    design = mq.clustered or bool((mq.samples > 1).any())
    answers = mq.samples.sum(axis=0)

    with np.errstate(divide="ignore", invalid="ignore"):
        phi = (se[ia] ** 2 + se[ib] ** 2 - se_d**2) / (2 * se[ia] * se[ib])
        if mq.single_binary and not mq.clustered:
            phi = _newcombe_phi(mq.means[:, ia], mq.means[:, ib])
    phi = np.clip(np.nan_to_num(phi), -1.0, 1.0)
    est = p[ia] - p[ib]

    def limits(i, confidence):  # model i's Wilson limits, at each pair's level
        n_eff = binomial_n(p[i], se[i], mq.n_questions, answers[i], mq.n_clusters, design,
                           confidence)
        return wilson(p[i] * n_eff, n_eff, confidence)

    def interval(confidence):
        (lo_a, hi_a), (lo_b, hi_b) = limits(ia, confidence), limits(ib, confidence)
        d1, d2 = p[ia] - lo_a, hi_b - p[ib]
        e1, e2 = hi_a - p[ia], p[ib] - lo_b
        low = est - np.sqrt(np.maximum(d1**2 - 2 * phi * d1 * d2 + d2**2, 0))
        high = est + np.sqrt(np.maximum(e1**2 - 2 * phi * e1 * e2 + e2**2, 0))
        return low, high

    return interval


def _newcombe_phi(a, b):
    """Newcombe (1998)'s phi of the 2x2 table, ``AD - BC`` reduced by ``N/2`` when positive.

    This is method 10 as the paper defines it (its seven worked examples are reproduced
    in tests/stats/evals/test_newcombe_published.py); an uncorrected phi gives other
    limits. The correction keeps the interval from being too narrow when few questions
    are discordant (without it, the interval's own test rejects a true null up to
    8 % of the time at n = 30).
    """
    n = a.shape[0]
    both, a_only = (a * b).sum(axis=0), (a * (1 - b)).sum(axis=0)
    b_only, neither = ((1 - a) * b).sum(axis=0), ((1 - a) * (1 - b)).sum(axis=0)
    cross = both * neither - a_only * b_only
    cross = np.where(cross > 0, np.maximum(cross - n / 2, 0.0), cross)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    return np.where(margins > 0, cross / np.sqrt(np.where(margins > 0, margins, 1)), 0.0)


def _mcnemar(a, b) -> tuple[float, int, int]:
    """Exact McNemar: a binomial test of the discordant questions at 1/2."""
    a_only, b_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    if a_only + b_only == 0:
        return 1.0, a_only, b_only
    return stats.binomtest(a_only, a_only + b_only, 0.5).pvalue, a_only, b_only


def _check(test, interval, confidence, n_resamples, mq):
    """One procedure: an ``"auto"`` interval inverts the test, an ``"auto"`` test the interval.

    Both ``"auto"``: Newcombe's interval for 0/1 scores (else t) and the test
    that agrees with it. Returns the test, the interval, whether they agree by
    construction, the confidence and the resamples.
    """
    test = _resolve_test(test, mq)
    if interval not in PAIRED_INTERVALS:
        raise ArgumentError(
            f"`interval` must be one of {', '.join(PAIRED_INTERVALS)}; got {interval!r}."
        )
    if interval == "auto":
        interval = ("newcombe" if mq.binary else "t") if test == "auto" else _INTERVAL_OF[test]
    if test == "auto":
        test = _TEST_OF[interval]
    if interval == "newcombe" and not mq.binary:
        raise ArgumentError(
            "interval='newcombe' is for 0/1 scores; these are not all 0 or 1: use 't', "
            "'permutation' or 'bootstrap'."
        )
    agree = _TEST_OF.get(interval) == test
    return (test, interval, agree, as_confidence(confidence),
            as_positive_int(n_resamples, "n_resamples"))


def paired_matrix(
    mq: ModelQuestions,
    a: int,
    b: int,
    *,
    test="auto",
    interval="auto",
    confidence=0.95,
    n_resamples=10_000,
    rng=None,
) -> EvalComparison:
    """Column ``a`` against column ``b`` of per-question values (see :func:`compare_two`)."""
    test, interval, agree, confidence, n_resamples = _check(
        test, interval, confidence, n_resamples, mq
    )
    warn_few_clusters(mq)
    est, se, t, df, low, high, p, exact, used, p_min = _pairwise(
        mq, [(a, b)], test, interval, confidence, n_resamples, as_rng(rng)
    )
    se_each = cluster_se(mq.means[:, [a, b]], mq.cluster, mq.n_clusters)
    a_only = b_only = None
    if mq.single_binary:
        _, a_only, b_only = _mcnemar(mq.means[:, a], mq.means[:, b])
    return EvalComparison(
        model_a=mq.models[a],
        model_b=mq.models[b],
        estimate=float(est[0]),
        low=float(low[0]),
        high=float(high[0]),
        confidence=confidence,
        se=float(se[0]),
        statistic=float(t[0]),
        df=int(df),
        pvalue=float(p[0]),
        test=test,
        interval=interval,
        score_a=float(mq.means[:, a].mean()),
        score_b=float(mq.means[:, b].mean()),
        se_unpaired=float(np.hypot(*se_each)),
        n_questions=mq.n_questions,
        n_clusters=mq.n_clusters,
        n_resamples=int(used),
        exact=bool(exact),
        agree=agree,
        min_pvalue=float(p_min[0]),
        a_only=a_only,
        b_only=b_only,
    )


def compare_two(
    scores_a,
    scores_b,
    question=None,
    cluster=None,
    *,
    test: str = "auto",
    interval: str = "auto",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng=None,
) -> EvalComparison:
    """Model A against model B, answers on the same rows.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores of A and B, row ``i`` of both on the same question (and sample).
    question, cluster : array_like, optional
        Each row's question (rows sharing one are samples of it; default: every
        row its own question) and cluster.
    test, interval, confidence, n_resamples, rng
        See the module docstring.
    """
    a = as_scores(scores_a, "scores_a", min_n=2)
    b = as_scores(scores_b, "scores_b", min_n=2)
    if a.size != b.size:
        raise ArgumentError(
            f"`scores_a` has {a.size} rows and `scores_b` {b.size}; pair them row by row."
        )
    q = np.arange(a.size) if question is None else np.asarray(question)
    labs = np.concatenate([np.zeros(a.size, int), np.ones(b.size, int)])
    mq = model_questions(
        np.concatenate([a, b]),
        labs,
        np.concatenate([q, q]),
        None if cluster is None else np.concatenate([np.asarray(cluster)] * 2),
    )
    mq = dataclasses.replace(mq, models=("A", "B"))
    return paired_matrix(
        mq, 0, 1, test=test, interval=interval, confidence=confidence,
        n_resamples=n_resamples, rng=rng,
    )


def tiers(scores: np.ndarray, padj: np.ndarray, alpha: float) -> np.ndarray:
    """Greedy tiers on models sorted by score (see :class:`EvalComparisons`)."""
    k = scores.size
    tier = np.zeros(k, dtype=int)
    level = 0
    for lead in range(k):
        if tier[lead]:
            continue
        level += 1
        tier[lead] = level
        for other in range(lead + 1, k):
            if not tier[other] and padj[lead, other] >= alpha:
                tier[other] = level
    return tier


def compare_matrix(
    mq: ModelQuestions,
    *,
    test="auto",
    interval="auto",
    correction="holm",
    alpha=0.05,
    confidence=0.95,
    n_resamples=10_000,
    rng=None,
    progress=False,
) -> EvalComparisons:
    """Every pair of the models in ``mq`` (see :func:`compare_models`)."""
    test, interval, agree, confidence, n_resamples = _check(
        test, interval, confidence, n_resamples, mq
    )
    alpha = as_confidence(alpha, "alpha")
    warn_few_clusters(mq)
    scores = mq.means.mean(axis=0)
    order = np.argsort(-scores, kind="stable")
    mq = dataclasses.replace(
        mq, models=tuple(mq.models[i] for i in order), means=mq.means[:, order]
    )
    k = len(mq.models)
    pairs = list(itertools.combinations(range(k), 2))
    est, se, _, _, low, high, p, _, used, p_min = _pairwise(
        mq, pairs, test, interval, confidence, n_resamples, as_rng(rng), progress
    )
    padj = adjust(p, correction)
    full = np.ones((k, k))
    for (i, j), v in zip(pairs, padj, strict=False):
        full[i, j] = full[j, i] = v
    return EvalComparisons(
        models=mq.models,
        scores=scores[order],
        score_se=cluster_se(mq.means, mq.cluster, mq.n_clusters),
        tier=tiers(scores[order], full, alpha),
        a=tuple(mq.models[i] for i, _ in pairs),
        b=tuple(mq.models[j] for _, j in pairs),
        estimate=est,
        low=np.asarray(low),
        high=np.asarray(high),
        confidence=confidence,
        se=se,
        pvalue=p,
        pvalue_adjusted=padj,
        test=test,
        interval=interval,
        correction=correction,
        alpha=alpha,
        n_questions=mq.n_questions,
        n_clusters=mq.n_clusters,
        n_resamples=int(used),
        agree=agree,
        min_pvalue=p_min,
    )


def compare_models(
    scores,
    model,
    question,
    cluster=None,
    *,
    test: str = "auto",
    interval: str = "auto",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng=None,
    progress=False,
) -> EvalComparisons:
    """Every pair of several models on the same questions, with adjusted p-values and tiers.

    Parameters
    ----------
    scores, model, question : array_like
        One row per answer: its score, the model and the question (rows of one
        model sharing a question are samples of it).
    cluster : array_like, optional
        The cluster of each row's question.
    test, interval : str
        See the module docstring.
    correction : str
        ``"holm"`` (default), ``"bh"`` (Benjamini-Hochberg), ``"bonferroni"`` or ``"none"``.
    alpha : float
        Level at which tiers separate models.
    progress : bool or None, default False
        Show a tqdm bar over the resamples, drawn in blocks (None: on a
        terminal only).
    """
    mq = model_questions(scores, model, question, cluster)
    return compare_matrix(
        mq, test=test, interval=interval, correction=correction, alpha=alpha,
        confidence=confidence, n_resamples=n_resamples, rng=rng, progress=progress,
    )
