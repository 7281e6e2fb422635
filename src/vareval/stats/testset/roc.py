"""One test set: ROC AUC of per-item scores, and DeLong's test for two correlated AUCs.

The area under the ROC curve of scores ``s`` for binary gold labels is the
Mann-Whitney probability ``AUC = P(s(X) > s(Y)) + P(s(X) = s(Y)) / 2`` for a
positive item ``X`` and a negative item ``Y`` drawn at random (Bamber 1975;
Hanley and McNeil 1982): ties count half, and a higher score means "more
likely positive". On a test set it is the share of (positive, negative) pairs
ordered correctly, computed here from midranks in ``O(n log n)``.

DeLong, DeLong and Clarke-Pearson (1988) estimate the covariance of several
AUCs measured on the same items from *structural components*: for system
``r``, each positive item ``i`` gets ``V10_r(i) = mean_j psi(s_r(x_i),
s_r(y_j))`` and each negative item ``j`` gets ``V01_r(j) = mean_i
psi(s_r(x_i), s_r(y_j))``, with ``psi(a, b) = 1`` for ``a > b``, 1/2 for a tie,
0 otherwise. Then ``Cov(AUC_r, AUC_s) = S10_rs / m + S01_rs / n`` with ``S10``
and ``S01`` the sample covariances (ddof = 1) of the components over the
``m`` positives and ``n`` negatives. Sun and Xu (2014) obtain every component
from three midrank computations per system, so the whole test costs
``O(n log n)`` with no loop over items.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_alternative, as_confidence, as_labels, as_scores
from vareval.stats._lazy import stats
from vareval.stats._result import ConfidenceInterval, Result
from vareval.stats.testset.auc import positive_flags


@dataclasses.dataclass(frozen=True, repr=False)
class DeLongResult(Result):
    """DeLong's test of two correlated ROC AUCs on the same items.

    No figure: one AUC difference and its test; compare_aucs draws the differences of
    many.

    Attributes
    ----------
    auc_a, auc_b : float
        The two systems' AUCs.
    estimate : float
        The effect: ``auc_a - auc_b``.
    se : float
        DeLong's standard error of the difference.
    statistic : float
        ``z = estimate / se``, standard normal under the null of equal AUCs.
    pvalue : float
        For ``alternative``: two-sided ``2 Phi(-|z|)``, ``"greater"`` (A
        better) ``Phi(-z)``, ``"less"`` ``Phi(z)``.
    alternative : str
    correlation : float
        DeLong's estimate of the correlation between the two AUC estimates.
    n_positive, n_negative : int
        Positive and negative items.
    positive : object
        The positive class.
    test : str
        ``"DeLong"``.
    """

    auc_a: float
    auc_b: float
    estimate: float
    se: float
    statistic: float
    pvalue: float
    alternative: str
    correlation: float
    n_positive: int
    n_negative: int
    positive: object
    test: str = "DeLong"

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The Wald interval ``estimate -+ z_{(1+level)/2} se`` for ``auc_a - auc_b``.

        Two-sided at any level, whatever ``alternative`` (as pROC's
        ``roc.test(method="delong")``).
        """
        level = as_confidence(confidence_level, "confidence_level")
        half = special.ndtri((1 + level) / 2) * self.se
        return ConfidenceInterval(float(self.estimate - half), float(self.estimate + half))


def _binary_iv(gold, scores: dict, pos_label):
    """Gold as booleans "is positive" and the scores as a (k, n) float array."""
    if pos_label is None:
        raise ArgumentError(
            "AUC needs the positive class (--positive, pos_label=): the class whose "
            "items should get the higher scores."
        )
    gold = as_labels(positive=np.asarray([pos_label]), gold=gold)["gold"]
    arrays = [as_scores(v, k) for k, v in scores.items()]
    for (name, _), arr in zip(scores.items(), arrays, strict=True):
        if arr.size != gold.size:
            raise ArgumentError(
                f"`{name}` must have one score per item ({gold.size}); got {arr.size}."
            )
    return positive_flags(gold, pos_label), np.vstack(arrays)




def _named(scores) -> dict:
    """Systems' scores as ``{name: scores}``, from a mapping or a sequence (named by position).

    One form for :func:`delong_covariance` and :func:`compare_aucs`.
    """
    if isinstance(scores, Mapping):
        return {str(k): v for k, v in scores.items()}
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise ArgumentError(
            "`scores` must map system names to per-item scores, or be a sequence of them."
        )
    return {str(i): s for i, s in enumerate(scores)}


def _check_delong(positive: np.ndarray) -> None:
    """DeLong's variance needs two items of each class: over one its variance is undefined."""
    for name, count in (("positive", int(positive.sum())), ("negative", int((~positive).sum()))):
        if count < 2:
            raise ArgumentError(
                f"DeLong's variance needs at least 2 {name} items; got {count}: the structural "
                "components of a class with one item have no variance (pROC gives NaN). "
                "Use a resampling test (--test randomization)."
            )


def _components(positive: np.ndarray, scores: np.ndarray):
    """AUCs and DeLong's structural components, by midranks (Sun and Xu 2014).

    ``scores`` has shape (..., k, n) (items last). Returns ``auc`` (..., k),
    ``v10`` (..., k, m) and ``v01`` (..., k, n_neg).
    """
    x, y = scores[..., positive], scores[..., ~positive]
    m, n = x.shape[-1], y.shape[-1]
    tz = stats.rankdata(np.concatenate([x, y], axis=-1), axis=-1)
    tx = stats.rankdata(x, axis=-1)
    ty = stats.rankdata(y, axis=-1)
    # A positive's rank among all, less its rank among positives, counts the
    # negatives below it (ties half): m * n * V10 summed is the Mann-Whitney U.
    v10 = (tz[..., :m] - tx) / n
    v01 = 1.0 - (tz[..., m:] - ty) / m
    return v10.mean(axis=-1), v10, v01


def delong_difference(positive: np.ndarray, scores: np.ndarray):
    """AUC differences and DeLong's variances for many data sets at once.

    Parameters
    ----------
    positive : ndarray of bool, shape (n,)
        Which items are positive (the same for every data set).
    scores : ndarray, shape (..., 2, n)
        Two systems' scores per data set.

    Returns
    -------
    (estimate, variance) : ndarrays of shape (...)
        ``AUC_A - AUC_B`` and the variance of its estimate, from the
        differences of the structural components (exactly 0 for identical
        systems, where ``Var A + Var B - 2 Cov`` may round below 0).
    """
    auc, v10, v01 = _components(positive, scores)
    d10, d01 = v10[..., 0, :] - v10[..., 1, :], v01[..., 0, :] - v01[..., 1, :]
    var = _var(d10) + _var(d01)
    return auc[..., 0] - auc[..., 1], var


def _var(d: np.ndarray) -> np.ndarray:
    """Variance over items (last axis, ddof = 1) over the number of items; 0 for one item."""
    if d.shape[-1] < 2:
        return np.zeros(d.shape[:-1])
    return d.var(axis=-1, ddof=1) / d.shape[-1]


def roc_auc(y_true, y_score, *, pos_label) -> float:
    """The area under the ROC curve of per-item scores.

    Estimand (on the given items): the share of (positive, negative) item
    pairs in which the positive item has the higher score, ties counted half
    (the Mann-Whitney form of the AUC). Equals scikit-learn's
    ``roc_auc_score(y_true == pos_label, y_score)``.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Gold labels of exactly two classes.
    y_score : array_like of float, shape (n,)
        Scores; higher means more likely ``pos_label``.
    pos_label : label
        The positive class, of the labels' kind (text for labels read as text).

    Examples
    --------
    >>> roc_auc(["n", "n", "p", "p"], [0.1, 0.4, 0.35, 0.8], pos_label="p")
    0.75
    """
    positive, scores = _binary_iv(y_true, {"y_score": y_score}, pos_label)
    return float(_components(positive, scores)[0][0])


def delong_covariance(y_true, scores, *, pos_label) -> tuple[np.ndarray, np.ndarray]:
    """AUCs of several systems on the same items and DeLong's covariance matrix.

    Parameters
    ----------
    y_true : array_like, shape (n,)
    scores : mapping of str to array_like, or sequence of array_like
        Each system's per-item scores (as :func:`compare_aucs`).
    pos_label : label

    Returns
    -------
    (auc, covariance) : ndarray (k,), ndarray (k, k)
        ``covariance = S10 / m + S01 / n`` (DeLong et al. 1988), systems in
        the order given.
    """
    positive, arr = _binary_iv(y_true, _named(scores), pos_label)
    _check_delong(positive)
    auc, v10, v01 = _components(positive, arr)
    return auc, _cov(v10) + _cov(v01)


def _cov(v: np.ndarray) -> np.ndarray:
    """Covariance over items (ddof = 1) divided by the number of items; 0 for one item."""
    if v.shape[1] < 2:
        return np.zeros((v.shape[0], v.shape[0]))
    return np.atleast_2d(np.cov(v, ddof=1)) / v.shape[1]


def delong_test(
    y_true,
    scores_a,
    scores_b,
    *,
    pos_label,
    alternative: str = "two-sided",
) -> DeLongResult:
    """DeLong's test of equal ROC AUCs for two systems scored on the same items.

    Estimand: ``AUC_A - AUC_B``, the difference between the two systems'
    areas under the ROC curve on the population the items sample. The
    variance of the estimated difference comes from DeLong, DeLong and
    Clarke-Pearson's (1988) structural components,
    ``Var = (S10_aa + S10_bb - 2 S10_ab) / m + (S01_aa + S01_bb - 2 S01_ab) / n``,
    computed by Sun and Xu's (2014) midrank algorithm in ``O(n log n)``;
    ``z = (AUC_A - AUC_B) / sqrt(Var)`` is compared with the standard normal.
    Equals pROC's ``roc.test(method = "delong", paired = TRUE)`` with
    ``direction = "<"``.

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Gold labels of exactly two classes.
    scores_a, scores_b : array_like of float, shape (n,)
        Each system's scores; higher means more likely ``pos_label``.
    pos_label : label
        The positive class.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: A's AUC is larger.

    Returns
    -------
    DeLongResult
        ``confidence_interval(level)`` gives the Wald interval for the
        difference.

    Raises
    ------
    ArgumentError
        When the AUCs differ but their estimated variance is 0 (every
        structural component equal), where ``z`` would be infinite.
    """
    alternative = as_alternative(alternative)
    positive, arr = _binary_iv(
        y_true, {"scores_a": scores_a, "scores_b": scores_b}, pos_label
    )
    _check_delong(positive)
    auc, v10, v01 = _components(positive, arr)
    cov = _cov(v10) + _cov(v01)
    estimate, var = (float(v) for v in delong_difference(positive, arr))
    if var <= 0:
        if estimate != 0:
            raise ArgumentError(
                f"DeLong's variance of the AUC difference ({estimate:+.6g}) is 0: every "
                "structural component is equal, so z would be infinite; with this few "
                "distinct scores use a resampling test (--test randomization)."
            )
        statistic, pvalue = 0.0, 1.0
    else:
        statistic = estimate / math.sqrt(var)
        pvalue = {
            "two-sided": 2 * special.ndtr(-abs(statistic)),
            "greater": special.ndtr(-statistic),
            "less": special.ndtr(statistic),
        }[alternative]
    denom = math.sqrt(cov[0, 0] * cov[1, 1])
    return DeLongResult(
        auc_a=float(auc[0]),
        auc_b=float(auc[1]),
        estimate=estimate,
        se=math.sqrt(max(var, 0.0)),
        statistic=float(statistic),
        pvalue=float(pvalue),
        alternative=alternative,
        correlation=float(cov[0, 1] / denom) if denom > 0 else math.nan,
        n_positive=int(positive.sum()),
        n_negative=int((~positive).sum()),
        positive=pos_label.item() if isinstance(pos_label, np.generic) else pos_label,
    )


@dataclasses.dataclass(frozen=True, repr=False)
class AUCComparison(Result):
    """Several systems' ROC AUCs compared pairwise by DeLong's test.

    Attributes
    ----------
    systems : tuple of str
    scores : dict
        Each system's AUC.
    pairs : tuple of (str, str)
        The comparisons ``(A, B)``; the effect is ``AUC_A - AUC_B``.
    results : tuple of DeLongResult
        One per pair.
    adjusted_pvalues : ndarray
        Family-wise adjusted p-values, in the order of ``pairs``.
    correction : str
    baseline : str or None
    confidence : float
        Level of the intervals in :meth:`records`.
    positive : object
        The positive class.
    test_reason : str
        Why DeLong's test was chosen, or "".
    """

    systems: tuple
    scores: dict
    pairs: tuple
    results: tuple
    adjusted_pvalues: np.ndarray
    correction: str
    baseline: str | None
    confidence: float
    positive: object
    test_reason: str = ""

    def records(self) -> list[dict]:
        """One record per comparison: a tidy table's rows."""
        rows = []
        for (a, b), r, adj in zip(
            self.pairs, self.results, self.adjusted_pvalues, strict=True
        ):
            low, high = r.confidence_interval(self.confidence)
            rows.append(
                {
                    "system": a,
                    "versus": b,
                    "metric": "auc",
                    "score": r.auc_a,
                    "versus_score": r.auc_b,
                    "estimate": r.estimate,
                    "se": r.se,
                    "statistic": r.statistic,
                    "ci_low": low,
                    "ci_high": high,
                    "pvalue": r.pvalue,
                    "adjusted_pvalue": float(adj),
                    "test": r.test,
                    "alternative": r.alternative,
                }
            )
        return rows


def compare_aucs(
    y_true,
    scores,
    *,
    pos_label,
    baseline: str | None = None,
    all_pairs: bool = False,
    correction: str = "holm",
    alternative: str = "two-sided",
    confidence: float = 0.95,
) -> AUCComparison:
    """Compare several systems' ROC AUCs on the same items by DeLong's test.

    Each system against ``baseline`` (default: the first), or every pair
    with ``all_pairs=True``; one :func:`delong_test` per pair, p-values
    adjusted for the family with Holm (default) or Bonferroni.

    Parameters
    ----------
    y_true : array_like, shape (n,)
    scores : mapping of str to array_like, or sequence of array_like
        System name to its per-item scores (a sequence: named "0", "1", ...),
        at least two systems (as :func:`delong_covariance`).
    pos_label, alternative
        As for :func:`delong_test`.
    baseline, all_pairs, correction
        As for :func:`vareval.stats.compare_systems`.
    confidence : float, default 0.95
        Level of the intervals reported by ``records()``.

    Returns
    -------
    AUCComparison
    """
    from vareval.stats.testset.significance import (
        adjust_pvalues,
        comparison_pairs,
        system_scores,
    )

    named = _named(scores)
    if len(named) < 2:
        raise ArgumentError("`scores` must hold at least two systems' scores.")
    confidence = as_confidence(confidence)
    systems = tuple(named)
    pairs, baseline = comparison_pairs(systems, baseline, all_pairs)
    results = tuple(
        delong_test(
            y_true, named[a], named[b], pos_label=pos_label, alternative=alternative
        )
        for a, b in pairs
    )
    return AUCComparison(
        systems=systems,
        scores=system_scores(systems, pairs, [(r.auc_a, r.auc_b) for r in results]),
        pairs=tuple(pairs),
        results=results,
        adjusted_pvalues=adjust_pvalues([r.pvalue for r in results], correction),
        correction=correction,
        baseline=baseline,
        confidence=confidence,
        positive=results[0].positive,
    )
