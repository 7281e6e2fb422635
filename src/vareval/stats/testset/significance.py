"""One test set: is the gain real? Paired significance tests on one test set.

For two systems A and B scored on the same ``n`` test items by a metric
``M``, the effect size is ``delta(x) = M(A, x) - M(B, x)``. The tests here
ask whether ``delta`` could be an accident of this test set:

- :func:`paired_bootstrap`: the paired bootstrap test (Efron and Tibshirani
  1993; Koehn 2004; Berg-Kirkpatrick, Burkett and Klein 2012), with a
  percentile or BCa confidence interval for ``delta``;
- :func:`paired_randomization`: approximate randomization, a paired
  permutation test (Noreen 1989; Riezler and Maxwell 2005);
- :func:`mcnemar_exact`, :func:`paired_wilcoxon`, :func:`paired_t`: exact or
  classical tests where they apply, so one sees when resampling is not needed;
- :func:`compare_systems` and :func:`adjust_pvalues`: several systems at once
  with Holm (1979) or Bonferroni adjusted p-values.

Conventions (all tests)
-----------------------
- ``alternative="greater"`` means A is better than B (``delta > 0``),
  ``"less"`` B better, ``"two-sided"`` either.
- Comparisons use ``>=`` with a tie tolerance of ``1e-9 * max(1, |t|)`` for a
  threshold ``t``, so resampled values equal to the threshold (common with
  discrete metrics) count as hits: the conservative choice.
- p-values are ``(hits + 1) / (B + 1)`` by default (Davison and Hinkley 1997,
  eq. 4.11; Phipson and Smyth 2010): a resampling p-value is never exactly
  0. ``smooth=False`` gives the textbook ``hits / B``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import (
    as_alternative,
    as_confidence,
    as_labels,
    as_positive_int,
    as_rng,
    as_scores,
    check_size,
    constant_differences,
)
from vareval.stats._lazy import stats
from vareval.stats._progress import progress_bar
from vareval.stats._result import LegacyIntervalMethod, Result, renamed
from vareval.stats.testset import resampling as rs

CORRECTIONS = ("holm", "bonferroni", "none")
# Tests on per-item scores (metric "accuracy": correct or not; "mean": the scores).
CLASSICAL_TESTS = ("mcnemar", "wilcoxon", "t")
TESTS = ("auto", "bootstrap", "randomization", *CLASSICAL_TESTS)
# Below this many items a bootstrap has too few distinct resamples (C(2n-1, n):
# 10 for three items) to give a p-value or an interval that means anything.
BOOTSTRAP_MIN_ITEMS = 10
# Below this many items the paired bootstrap test rejects a true null more
# often than its level on macro-F1 (measured: bench/calibrate_small_n.py, table
# in docs/significance.md), so the default test is approximate randomization.
BOOTSTRAP_LEVEL_ITEMS = 200


@dataclasses.dataclass(frozen=True, repr=False)
class PairedTestResult(Result):
    """The result of a paired resampling test of system A against system B.

    Attributes
    ----------
    test : str
        ``"paired bootstrap"`` or ``"approximate randomization"``.
    metric : str
        The metric's name.
    score_a, score_b : float
        ``M(A, x)`` and ``M(B, x)`` on the full test set.
    estimate : float
        The effect ``delta = score_a - score_b``.
    statistic : float
        The observed test statistic, which for these resampling tests *is*
        the difference ``delta`` (as in ``scipy.stats.permutation_test``): it
        always equals ``estimate``. Read the effect as ``estimate``; unlike
        :class:`ExactTestResult` and the t tests, ``statistic`` here is not
        a standardised statistic such as t.
    pvalue : float
        See the test's docstring for the definition.
    alternative : str
        ``"two-sided"``, ``"greater"`` (A better) or ``"less"``.
    low, high : float
        Bootstrap interval for ``delta`` at level ``confidence`` (formerly the
        tuple ``confidence_interval``; now ``confidence_interval()``, which
        returns it at the stored level only: the resamples are not kept).
    ci_method : str
        ``"newcombe"``, ``"bca"`` or ``"percentile"``.
    confidence : float
        Level of the interval.
    hits : int
        Resamples counted in the p-value's numerator (before smoothing).
    n_resamples : int
        Resamples drawn for the p-value.
    smooth : bool
        Whether the p-value is ``(hits + 1) / (B + 1)`` (else ``hits / B``).
    n : int
        Test items.
    n_types : int
        Distinct item types after compression (``n`` for the slow path).
    path : str
        ``"compressed"``, ``"index"``, ``"split"`` (the bootstrap with many
        types: frequent ones as a multinomial, rare ones by item index);
        ``"index-compiled"`` and ``"split-compiled"`` where the compiled
        kernel drew them,
        ``"vectorized"`` (a vectorized callable
        metric, chunks of resamples per call) or ``"loop"`` (a callable metric,
        one call per resample).
    distribution : ndarray
        The resampled deltas behind the p-value (left out of ``to_dict``).
    ci_note : str
        Why there is no interval (``low`` and ``high`` are NaN), or "".
    """

    test: str
    metric: str
    score_a: float
    score_b: float
    estimate: float
    statistic: float
    pvalue: float
    alternative: str
    low: float
    high: float
    ci_method: str
    confidence: float
    hits: int
    n_resamples: int
    smooth: bool
    n: int
    n_types: int
    path: str
    distribution: np.ndarray
    ci_note: str = ""

    _interval = ("low", "high")
    confidence_interval = LegacyIntervalMethod()

    def to_dict(self) -> dict:
        """The fields as plain values, without the resampled distribution."""
        out = super().to_dict()
        out.pop("distribution")
        return out


@dataclasses.dataclass(frozen=True, repr=False)
class ExactTestResult(Result):
    """The result of an exact or classical paired test.

    No figure: one exact test (McNemar, sign) whose statistic is a count of discordant
    items, read from its fields.

    Attributes
    ----------
    test : str
        The test's name.
    statistic : float
        The test statistic (discordant count, W, or t).
    pvalue : float
        The test's p-value for ``alternative``.
    estimate : float
        The effect: difference in accuracy (McNemar) or the mean per-item
        difference ``mean(a - b)`` (Wilcoxon, t); formerly ``delta``.
    low, high : float
        Interval for ``estimate`` at ``confidence`` (see each test); formerly
        the tuple ``confidence_interval``, now ``confidence_interval()``.
    confidence : float
        Level of the interval.
    alternative : str
        As for the resampling tests.
    n : int
        Items.
    details : dict
        Test-specific numbers (discordant counts, degrees of freedom ...).
    """

    test: str
    statistic: float
    pvalue: float
    estimate: float
    low: float
    high: float
    confidence: float
    alternative: str
    n: int
    details: dict

    _interval = ("low", "high")
    _deprecated = {"delta": renamed("estimate")}
    confidence_interval = LegacyIntervalMethod()


@dataclasses.dataclass(frozen=True, repr=False)
class SystemComparison(Result):
    """Several systems compared pairwise, with adjusted p-values.

    Attributes
    ----------
    systems : tuple of str
        The systems, in input order.
    scores : dict
        Each system's metric on the full test set.
    pairs : tuple of (str, str)
        The comparisons ``(A, B)`` in order; ``delta = M(A) - M(B)``.
    results : tuple of PairedTestResult or ExactTestResult
        One per pair (ExactTestResult for the McNemar, Wilcoxon and t tests).
    adjusted_pvalues : ndarray
        Family-wise adjusted p-values, in the order of ``pairs``.
    correction : str
        ``"holm"``, ``"bonferroni"`` or ``"none"``.
    baseline : str or None
        The baseline, or None for all pairs.
    test_reason : str
        Why this test was chosen when ``test="auto"``, else "".
    metric : str
        The metric's name.
    """

    systems: tuple
    scores: dict
    pairs: tuple
    results: tuple
    adjusted_pvalues: np.ndarray
    correction: str
    baseline: str | None
    test_reason: str = ""
    metric: str = ""

    def records(self) -> list[dict]:
        """One record per comparison: a tidy table's rows."""
        rows = []
        for (a, b), r, adj in zip(
            self.pairs, self.results, self.adjusted_pvalues, strict=True
        ):
            rows.append(
                {
                    "system": a,
                    "versus": b,
                    "metric": self.metric,
                    "score": self.scores[a],
                    "versus_score": self.scores[b],
                    "estimate": r.estimate,
                    "ci_low": r.low,
                    "ci_high": r.high,
                    "pvalue": r.pvalue,
                    "adjusted_pvalue": float(adj),
                    "test": r.test,
                    "alternative": r.alternative,
                }
            )
        return rows


# --- validation -------------------------------------------------------------


def _paired_iv(
    gold, pred_a, pred_b, metric, n_resamples, alternative, confidence, ci, rng
):
    metric = rs.get_metric(metric)
    a = np.asarray(pred_a)
    b = np.asarray(pred_b)
    for name, arr in (("pred_a", a), ("pred_b", b)):
        if arr.ndim != 1 or arr.size == 0:
            raise ArgumentError(
                f"`{name}` must be a non-empty one-dimensional array; "
                f"got shape {arr.shape}."
            )
    if a.size != b.size:
        raise ArgumentError(
            f"systems must have one output per item: `pred_a` has {a.size} and "
            f"`pred_b` has {b.size}."
        )
    if metric.needs_gold:
        if gold is None:
            raise ArgumentError(
                f"metric {metric.name!r} needs the gold labels (`gold`)."
            )
        gold = np.asarray(gold)
        if gold.ndim != 1 or gold.size != a.size:
            raise ArgumentError(
                f"`gold` must have one label per item ({a.size}); "
                f"got shape {gold.shape}."
            )
    elif gold is not None:
        gold = np.asarray(gold)
    if isinstance(metric, rs.SumMetric) and metric.labels:
        arrays = as_labels(gold=gold, pred_a=pred_a, pred_b=pred_b)
        gold, a, b = arrays["gold"], arrays["pred_a"], arrays["pred_b"]
    if not metric.needs_gold and isinstance(metric, rs.SumMetric):
        a = as_scores(a, "pred_a")
        b = as_scores(b, "pred_b")
    n_resamples = check_size(as_positive_int(n_resamples, "n_resamples"), "`n_resamples`")
    alternative = as_alternative(alternative)
    confidence = as_confidence(confidence)
    if ci not in CI_METHODS:
        raise ArgumentError(f"`ci` must be one of {', '.join(CI_METHODS)}; got {ci!r}.")
    if ci == "newcombe" and metric.name != "accuracy":
        raise ArgumentError(
            f"`ci='newcombe'` is an interval for a difference in accuracy; metric "
            f"{metric.name!r} takes 'bca' or 'percentile'."
        )
    return metric, gold, a, b, n_resamples, alternative, confidence, as_rng(rng)


CI_METHODS = ("auto", "newcombe", "bca", "percentile")


def _resolve_ci(ci: str, metric) -> str:
    """``"auto"``: Newcombe's score interval for accuracy, BCa for any other metric.

    The bootstrap of an accuracy difference lives on the lattice ``k / n`` and
    its plug-in spread is too narrow at small ``n``: exact coverage of the 95 %
    BCa interval is 0.936 (percentile 0.931) at n = 30 with accuracies 0.75 and
    0.65, 0.944 at n = 100; Newcombe's interval gives 0.951 at both.
    """
    if ci != "auto":
        return ci
    return "newcombe" if metric.name == "accuracy" else "bca"


def _tol(x: float) -> float:
    return 1e-9 * max(1.0, abs(x))


def _pvalue(hits: int, b: int, smooth: bool) -> float:
    return (hits + 1) / (b + 1) if smooth else hits / b


# --- confidence intervals ----------------------------------------------------


def _percentile(dist, probs):
    return tuple(float(v) for v in np.percentile(dist, np.asarray(probs) * 100))


def _bca_interval(dist, delta, jack, weights, confidence):
    """BCa interval (Efron 1987) from bootstrap deltas and jackknife deltas.

    ``jack`` are leave-one-out deltas with multiplicities ``weights``.
    """
    alpha = (1 - confidence) / 2
    if np.ptp(dist) == 0:
        return float(dist[0]), float(dist[0])
    b = dist.size
    below = np.count_nonzero(dist < delta) + 0.5 * np.count_nonzero(dist == delta)
    z0 = special.ndtri(np.clip(below / b, 0.5 / b, 1 - 0.5 / b))
    w = np.asarray(weights, dtype=float)
    mean = np.sum(w * jack) / w.sum()
    dev = mean - jack
    den = 6.0 * np.sum(w * dev**2) ** 1.5
    a = np.sum(w * dev**3) / den if den > 0 else 0.0
    z = special.ndtri(np.array([alpha, 1 - alpha]))
    probs = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
    return _percentile(dist, probs)


def _interval(ci, dist, delta, jackknife, confidence):
    alpha = (1 - confidence) / 2
    if ci == "percentile":
        return _percentile(dist, [alpha, 1 - alpha])
    jack, weights = jackknife()
    return _bca_interval(dist, delta, jack, weights, confidence)


# --- the resampling tests ------------------------------------------------------


class _Prepared:
    """Observed delta plus the draws of either path, for one pair of systems."""

    def __init__(self, metric, gold, a, b, method, progress):
        self.metric, self.gold, self.a, self.b = metric, gold, a, b
        self.method, self.progress = method, progress
        self.n = a.size
        if isinstance(metric, rs.CallableMetric):
            self.types = None
            self.score_a = float(metric.fn(gold, a))
            self.score_b = float(metric.fn(gold, b))
            self.n_types = self.n
        else:
            self.types = rs.paired_types(metric, gold, a, b)
            ta, tb = self.types.totals()
            rs.check_combine(metric, ta[None, :])  # a probe of the output's shape
            self.score_a = rs.metric_value(metric, ta[None, :])
            self.score_b = rs.metric_value(metric, tb[None, :])
            self.n_types = self.types.n_types
        rs.finite_or_raise(self.score_a, f"metric {metric.name!r} of system A")
        rs.finite_or_raise(self.score_b, f"metric {metric.name!r} of system B")
        self.delta = self.score_a - self.score_b

    def _finite(self, values, what):
        bad = np.count_nonzero(~np.isfinite(values))
        if bad:
            raise ArgumentError(
                f"metric {self.metric.name!r} gave a NaN or infinite delta on {bad} of "
                f"{values.size} {what} (e.g. a resample with one gold class); the "
                "randomization test (--test randomization) keeps every item's gold label."
            )
        return values

    def bootstrap(self, n_resamples, rng, for_interval=False):
        """Bootstrap deltas; for an interval only, undefined ones are kept (as NaN)."""
        if self.types is None and self.metric.vectorized:
            d = rs.rows_bootstrap_deltas(
                self.metric, self.gold, self.a, self.b, n_resamples, rng
            )
            path = "vectorized"
        elif self.types is None:
            d = rs.loop_bootstrap_deltas(
                self.metric, self.gold, self.a, self.b, n_resamples, rng, self.progress
            )
            path = "loop"
        else:
            d, path = rs.bootstrap_deltas(
                self.metric, self.types, n_resamples, rng, self.method
            )
        return (d if for_interval else self._finite(d, "bootstrap resamples")), path

    def randomization(self, n_resamples, rng):
        if self.types is None and self.metric.vectorized:
            d = rs.rows_randomization_deltas(
                self.metric, self.gold, self.a, self.b, n_resamples, rng
            )
            path = "vectorized"
        elif self.types is None:
            d = rs.loop_randomization_deltas(
                self.metric, self.gold, self.a, self.b, n_resamples, rng, self.progress
            )
            path = "loop"
        else:
            d, path = rs.randomization_deltas(
                self.metric, self.types, n_resamples, rng, self.method
            )
        return self._finite(d, "randomizations"), path

    def jackknife(self):
        if self.types is None:
            jack = (
                rs.rows_jackknife_deltas(self.metric, self.gold, self.a, self.b)
                if self.metric.vectorized
                else rs.loop_jackknife_deltas(
                    self.metric, self.gold, self.a, self.b, self.progress
                )
            )
            return self._finite(jack, "leave-one-out subsets"), np.ones(self.n)
        jack = rs.jackknife_deltas(self.metric, self.types)
        return self._finite(jack, "leave-one-out subsets"), self.types.counts


def _bootstrap_hits(dist, delta, alternative):
    """Count resamples at least as extreme as observed under the shifted null."""
    if alternative == "greater":
        return int(np.count_nonzero(dist >= 2 * delta - _tol(2 * delta)))
    if alternative == "less":
        return int(np.count_nonzero(dist <= 2 * delta + _tol(2 * delta)))
    return int(np.count_nonzero(np.abs(dist - delta) >= abs(delta) - _tol(delta)))


def _randomization_hits(dist, delta, alternative):
    if alternative == "greater":
        return int(np.count_nonzero(dist >= delta - _tol(delta)))
    if alternative == "less":
        return int(np.count_nonzero(dist <= delta + _tol(delta)))
    return int(np.count_nonzero(np.abs(dist) >= abs(delta) - _tol(delta)))


def paired_bootstrap(
    gold,
    pred_a,
    pred_b,
    *,
    metric="accuracy",
    n_resamples: int = 10_000,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    ci: str = "auto",
    smooth: bool = True,
    method: str = "auto",
    rng=None,
    progress=None,
) -> PairedTestResult:
    """Paired bootstrap test of ``delta = M(A, x) - M(B, x)`` for any metric.

    Estimand: the difference in the metric between the two systems on the
    population the test set is a sample of. The test draws ``B`` virtual test
    sets ``x_i`` of ``n`` items with replacement from the ``n`` items (keeping
    each item's pair of outputs together) and computes ``delta(x_i)``.

    p-values (Efron and Tibshirani 1993, sec. 16.4; Koehn 2004;
    Berg-Kirkpatrick et al. 2012). The bootstrap distribution of
    ``delta(x_i)`` is centred near ``delta(x)``, not 0, so the null
    distribution is the bootstrap distribution *shifted* to 0:
    ``delta(x_i) - delta(x)``.

    - ``"greater"`` (A better; the textbook's test):
      ``p = #{delta(x_i) >= 2 delta(x)} / B``, the share of resamples where
      the shifted statistic ``delta(x_i) - delta(x)`` reaches ``delta(x)``:
      the "2 delta" rule.
    - ``"less"``: ``#{delta(x_i) <= 2 delta(x)} / B``.
    - ``"two-sided"``: ``#{|delta(x_i) - delta(x)| >= |delta(x)|} / B``.

    With ``smooth=True`` (default) the p-value is ``(hits + 1) / (B + 1)``.
    Ties are counted as hits (tolerance ``1e-9 * max(1, |threshold|)``).

    Parameters
    ----------
    gold : array_like or None
        Gold labels, one per item (None for ``metric="mean"``).
    pred_a, pred_b : array_like
        The two systems' outputs on the same items in the same order (labels,
        or per-item scores for ``metric="mean"``).
    metric : str, SumMetric or callable, default "accuracy"
        A name (``accuracy``, ``macro-f1``, ``micro-f1``, ``weighted-f1``,
        ``macro-f0.5``, ``macro-precision``, ..., ``mean``), a
        :class:`~vareval.stats.testset.resampling.SumMetric`, or a plain callable
        ``fn(gold, pred) -> float`` (slow path: a loop with a progress bar).
    n_resamples : int, default 10000
        ``B``, at least 1.
    alternative : {"two-sided", "greater", "less"}
    confidence : float, default 0.95
        Level of the interval for ``delta``.
    ci : {"auto", "newcombe", "bca", "percentile"}, default "auto"
        Newcombe's (1998) score interval for paired proportions (accuracy
        only; what ``"auto"`` picks for accuracy, since the bootstrap
        intervals of an accuracy difference cover 93-94 % at n = 30-100), the
        bias-corrected and accelerated bootstrap (Efron 1987; acceleration
        from the exact leave-one-item-out jackknife; ``"auto"`` for every
        other metric) or the percentile bootstrap interval.
    smooth : bool, default True
        ``(hits + 1) / (B + 1)``; False gives ``hits / B``.
    method : {"auto", "compressed", "index"}
        Resampling path (same distribution); ``auto`` compresses when there
        are at most ``n / 2`` item types (splitting frequent and rare ones
        when they are many).
    rng : None, int or numpy.random.Generator
    progress : bool or None
        Progress bar for the slow callable path (None: only on a terminal).

    Returns
    -------
    PairedTestResult

    Examples
    --------
    The textbook's test set of 10 documents, A right on 7, B on 5:

    >>> gold = [1] * 10
    >>> a = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0]
    >>> b = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    >>> r = paired_bootstrap(gold, a, b, alternative="greater", rng=0)
    >>> round(r.estimate, 2)
    0.2
    """
    metric, gold, a, b, n_resamples, alternative, confidence, rng = _paired_iv(
        gold, pred_a, pred_b, metric, n_resamples, alternative, confidence, ci, rng
    )
    prep = _Prepared(metric, gold, a, b, method, progress)
    if a.size < BOOTSTRAP_MIN_ITEMS:
        raise ArgumentError(
            f"the paired bootstrap needs at least {BOOTSTRAP_MIN_ITEMS} items; "
            f"{a.size} item(s) have only {_distinct_resamples(a.size)} distinct "
            "resamples, so its p-value and interval would mean nothing. Use the "
            "randomization test (exact for so few items) or McNemar's exact test."
        )
    dist, path = prep.bootstrap(n_resamples, rng)
    hits = _bootstrap_hits(dist, prep.delta, alternative)
    test = "paired bootstrap"
    return _paired_result(test, prep, dist, dist, hits, path, alternative, ci, confidence, smooth)


def paired_randomization(
    gold,
    pred_a,
    pred_b,
    *,
    metric="accuracy",
    n_resamples: int = 10_000,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    ci: str = "auto",
    ci_resamples: int | None = None,
    smooth: bool = True,
    method: str = "auto",
    rng=None,
    progress=None,
) -> PairedTestResult:
    """Approximate randomization (paired permutation) test for any metric.

    Null hypothesis: on every item, the two systems' outputs are exchangeable
    (Noreen 1989; Riezler and Maxwell 2005). Each of ``R`` randomizations
    swaps A's and B's outputs on each item independently with probability
    1/2 and recomputes ``delta``. p-values, with ``delta`` observed:

    - ``"two-sided"``: ``(#{|delta_perm| >= |delta|} + 1) / (R + 1)``;
    - ``"greater"``: ``(#{delta_perm >= delta} + 1) / (R + 1)``;
    - ``"less"``: ``(#{delta_perm <= delta} + 1) / (R + 1)``.

    When the ``m`` items whose outputs differ allow at most ``R`` swap
    patterns (``2^m <= R``, ``method="auto"``), all of them are enumerated
    instead: the exact permutation test, ``p = hits / 2^m`` (``path`` is
    ``"exact"``). For accuracy, the exact version of this test is McNemar's
    exact test (:func:`mcnemar_exact`). The confidence interval for ``delta`` comes from
    a paired bootstrap (``ci_resamples`` resamples, default ``R``) on an
    independent random stream, because the randomization distribution is
    centred at 0 and says nothing about the size of ``delta``.

    Parameters are those of :func:`paired_bootstrap`; ``n_resamples`` is ``R``.

    Returns
    -------
    PairedTestResult
    """
    metric, gold, a, b, n_resamples, alternative, confidence, rng = _paired_iv(
        gold, pred_a, pred_b, metric, n_resamples, alternative, confidence, ci, rng
    )
    ci_resamples = n_resamples if ci_resamples is None else ci_resamples
    ci_resamples = as_positive_int(ci_resamples, "ci_resamples")
    test_rng, ci_rng = rng.spawn(2)
    prep = _Prepared(metric, gold, a, b, method, progress)
    test = "approximate randomization"
    if method == "auto" and prep.types is not None and (
        2 ** rs.discordant_items(prep.types) <= n_resamples
    ):
        dist, path = rs.all_randomization_deltas(metric, prep.types), "exact"
        test, smooth = "exact randomization", False
    else:
        dist, path = prep.randomization(n_resamples, test_rng)
    hits = _randomization_hits(dist, prep.delta, alternative)
    boot, _ = prep.bootstrap(ci_resamples, ci_rng, for_interval=True)
    return _paired_result(test, prep, dist, boot, hits, path, alternative, ci, confidence, smooth)


def _distinct_resamples(n: int) -> int:
    """Distinct bootstrap resamples (multisets) of ``n`` items: C(2n - 1, n)."""
    return math.comb(2 * n - 1, n)


def _paired_result(test, prep, dist, boot, hits, path, alternative, ci, confidence, smooth):
    """The result of a resampling test: ``dist`` gives p, ``boot`` the interval for delta."""
    ci = _resolve_ci(ci, prep.metric)
    if ci == "newcombe":
        ra, rb = prep.a == prep.gold, prep.b == prep.gold
        counts = [int(np.sum(x)) for x in (ra & rb, ra & ~rb, ~ra & rb, ~ra & ~rb)]
        interval = _newcombe_paired_ci(*counts, confidence)
        note = ""
    elif prep.n < BOOTSTRAP_MIN_ITEMS:
        interval = (math.nan, math.nan)
        note = (
            f"{prep.n} item(s) have only {_distinct_resamples(prep.n)} "
            f"distinct bootstrap resamples; an interval needs at least "
            f"{BOOTSTRAP_MIN_ITEMS} items."
        )
    elif not np.isfinite(boot).all():  # the test's p-value does not use these resamples
        interval = (math.nan, math.nan)
        note = (
            f"metric {prep.metric.name!r} is undefined on "
            f"{np.count_nonzero(~np.isfinite(boot))} of {boot.size} bootstrap resamples "
            "(e.g. a resample with one gold class), so no interval: dropping them would "
            "condition on the resample, and keeping them is impossible."
        )
    else:
        interval = _interval(ci, boot, prep.delta, prep.jackknife, confidence)
        note = ""
    return PairedTestResult(
        test=test,
        metric=prep.metric.name,
        score_a=prep.score_a,
        score_b=prep.score_b,
        estimate=prep.delta,
        statistic=prep.delta,
        pvalue=_pvalue(hits, dist.size, smooth),
        alternative=alternative,
        low=float(interval[0]),
        high=float(interval[1]),
        ci_method=ci,
        confidence=confidence,
        hits=hits,
        n_resamples=dist.size,
        smooth=bool(smooth),
        n=prep.n,
        n_types=prep.n_types,
        path=path,
        distribution=dist,
        ci_note=note,
    )


# --- exact and classical tests ---------------------------------------------------


def mcnemar_exact(
    gold, pred_a, pred_b, *, alternative: str = "two-sided", confidence: float = 0.95
) -> ExactTestResult:
    """McNemar's exact test for a difference in accuracy (McNemar 1947).

    Only discordant items matter: ``n_ab`` items A gets right and B wrong, and
    ``n_ba`` the reverse. Under the null of equal accuracy (exchangeable
    outputs), ``n_ab ~ Binomial(n_ab + n_ba, 1/2)``; this is the exact
    distribution that approximate randomization of accuracy estimates by
    sampling. ``"greater"`` means A more accurate.

    The two-sided interval for the accuracy difference ``acc(A) - acc(B)`` (the
    estimand: the difference of the two systems' expected accuracies on items
    like these) is Newcombe's hybrid score interval for paired proportions
    (Newcombe 1998, method 10): Wilson intervals for each accuracy combined
    with the correlation of the paired outcomes. It keeps near-nominal
    coverage at small discordant counts, where the Wald interval collapses to
    a point (3 items all going B's way gave [-1, -1] beside p = 0.25).

    Returns
    -------
    ExactTestResult
        ``statistic`` is ``n_ab``; ``details`` holds ``n_ab`` and ``n_ba``.
    """
    alternative = as_alternative(alternative)
    confidence = as_confidence(confidence)
    arrays = as_labels(gold=gold, pred_a=pred_a, pred_b=pred_b)
    gold, a, b = arrays["gold"], arrays["pred_a"], arrays["pred_b"]
    if not gold.size == a.size == b.size or gold.size == 0:
        raise ArgumentError(
            f"`gold`, `pred_a` and `pred_b` must have the same non-zero length; got "
            f"{gold.size}, {a.size} and {b.size}."
        )
    ra, rb = a == gold, b == gold
    n_ab, n_ba, n = int(np.sum(ra & ~rb)), int(np.sum(~ra & rb)), gold.size
    m = n_ab + n_ba
    p = (
        1.0
        if m == 0
        else float(stats.binomtest(n_ab, m, 0.5, alternative=alternative).pvalue)
    )
    delta = (n_ab - n_ba) / n
    both = int(np.sum(ra & rb))
    low, high = _newcombe_paired_ci(both, n_ab, n_ba, n - m - both, confidence)
    return ExactTestResult(
        test="McNemar exact",
        statistic=float(n_ab),
        pvalue=p,
        estimate=delta,
        low=float(low),
        high=float(high),
        confidence=confidence,
        alternative=alternative,
        n=n,
        details={"n_ab": n_ab, "n_ba": n_ba},
    )


def _wilson_ci(k, n, z):
    """Wilson's score interval for a binomial proportion ``k / n`` (vectorised)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _newcombe_paired_ci(both, only_a, only_b, neither, confidence):
    """Newcombe's (1998) method-10 interval for ``p_A - p_B`` from a paired 2x2 table.

    ``both`` items both systems get right, ``only_a`` / ``only_b`` the
    discordant ones, ``neither`` the rest; arrays broadcast (the coverage
    simulation passes thousands of tables at once). The Wilson limits of each
    accuracy are combined with the correlation ``phi`` of the paired outcomes,
    which Newcombe shrinks towards 0 by ``n / 2`` when positive and sets to 0
    when a margin is empty.
    """
    both, only_a, only_b, neither = (
        np.asarray(v, dtype=float) for v in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    z = special.ndtri((1 + confidence) / 2)
    pa, pb = (both + only_a) / n, (both + only_b) / n
    la, ua = _wilson_ci(both + only_a, n, z)
    lb, ub = _wilson_ci(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    shrunk = np.where(cross > n / 2, cross - n / 2, np.minimum(cross, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0, shrunk / np.sqrt(margins), 0.0)
    delta = pa - pb
    down_a, up_b, up_a, down_b = pa - la, ub - pb, ua - pa, pb - lb
    low = delta - np.sqrt(np.maximum(down_a**2 - 2 * phi * down_a * up_b + up_b**2, 0))
    high = delta + np.sqrt(np.maximum(up_a**2 - 2 * phi * up_a * down_b + down_b**2, 0))
    return low, high


def _scores_pair(scores_a, scores_b):
    a = as_scores(scores_a, "scores_a", min_n=2)
    b = as_scores(scores_b, "scores_b", min_n=2)
    if a.size != b.size:
        raise ArgumentError(
            "`scores_a` and `scores_b` must be paired (same length); "
            f"got {a.size} and {b.size}."
        )
    return a, b


def paired_t(
    scores_a, scores_b, *, alternative: str = "two-sided", confidence: float = 0.95
) -> ExactTestResult:
    """Paired t test on per-item scores (Student 1908), via ``scipy.stats.ttest_rel``.

    Estimand: the mean per-item difference ``E[a - b]``; valid when the mean
    difference is roughly normal (many items). The interval is the t interval.

    When every difference is the same the SD is 0 and t is ``c / 0``:
    ``scipy.stats.ttest_rel`` then returns ``t = inf, p = 0`` (or ``nan`` for
    ``c = 0``), a certainty no finite sample gives. This function refuses that
    case and names the exact alternatives.
    """
    alternative = as_alternative(alternative)
    confidence = as_confidence(confidence)
    a, b = _scores_pair(scores_a, scores_b)
    d = a - b
    if constant_differences(a, b):
        raise ArgumentError(
            f"the paired t test is undefined: all {d.size} differences equal {d[0]:+.6g}, so "
            "their SD is 0 (scipy.stats.ttest_rel would say t = inf, p = 0); use "
            "paired_wilcoxon or a randomization test, whose p-values are exact."
        )
    res = stats.ttest_rel(a, b, alternative=alternative)
    lo, hi = res.confidence_interval(confidence)
    return ExactTestResult(
        test="paired t",
        statistic=float(res.statistic),
        pvalue=float(res.pvalue),
        estimate=float(d.mean()),
        low=float(lo),
        high=float(hi),
        confidence=confidence,
        alternative=alternative,
        n=a.size,
        details={"df": int(a.size - 1), "se": float(d.std(ddof=1) / math.sqrt(a.size))},
    )


def paired_wilcoxon(
    scores_a, scores_b, *, alternative: str = "two-sided", confidence: float = 0.95
) -> ExactTestResult:
    """Wilcoxon signed-rank test on per-item scores (Wilcoxon 1945).

    Via ``scipy.stats.wilcoxon`` (zero differences dropped, the Wilcoxon
    convention; exact null distribution for small samples without ties).
    Null: the differences ``a - b`` are symmetric about 0. ``estimate`` is the
    mean difference with its t interval, reported for scale only.
    """
    alternative = as_alternative(alternative)
    confidence = as_confidence(confidence)
    a, b = _scores_pair(scores_a, scores_b)
    d = a - b
    if np.all(d == 0):
        stat, p = 0.0, 1.0
    else:
        res = stats.wilcoxon(a, b, alternative=alternative)
        stat, p = float(res.statistic), float(res.pvalue)
    if constant_differences(a, b):
        lo = hi = float(d[0])
    else:
        lo, hi = paired_t(a, b, confidence=confidence).confidence_interval()
    return ExactTestResult(
        test="Wilcoxon signed-rank",
        statistic=stat,
        pvalue=p,
        estimate=float(d.mean()),
        low=lo,
        high=hi,
        confidence=confidence,
        alternative=alternative,
        n=a.size,
        details={"nonzero": int(np.count_nonzero(d))},
    )


# --- several systems ------------------------------------------------------------


def adjust_pvalues(pvalues, method: str = "holm") -> np.ndarray:
    """Family-wise adjusted p-values, returned in the input order.

    - ``"holm"`` (Holm 1979): sort ascending, ``p~_(i) = max_{j <= i}
      min(1, (m - j + 1) p_(j))``; monotone in the sorted order, and uniformly
      more powerful than Bonferroni.
    - ``"bonferroni"``: ``min(1, m p)``.
    - ``"none"``: unchanged.

    Both control the family-wise error rate under any dependence.
    """
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise ArgumentError("`pvalues` must be numbers in [0, 1] without NaN.")
    if method not in CORRECTIONS:
        raise ArgumentError(
            f"`correction` must be one of {', '.join(CORRECTIONS)}; got {method!r}."
        )
    m = p.size
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


def choose_test(n_items: int) -> tuple[str, str]:
    """The paired test that holds its level on ``n_items`` items, and why.

    Under exchangeable systems the paired bootstrap test rejects more often
    than its level on small test sets (macro-F1 at 30 items: about 0.07 at
    alpha 0.05), while approximate randomization, a permutation test, is
    valid at any size. Below ``BOOTSTRAP_LEVEL_ITEMS`` items randomization is
    chosen; from there on the bootstrap, whose interval for delta is centred
    on the effect.

    Returns
    -------
    (str, str)
        ``"bootstrap"`` or ``"randomization"``, and the reason in words.
    """
    if n_items < BOOTSTRAP_LEVEL_ITEMS:
        return "randomization", (
            f"randomization test: with {n_items} items (< {BOOTSTRAP_LEVEL_ITEMS}) "
            "the paired bootstrap test rejects a true null more often than its "
            "level; a permutation test does not"
        )
    return "bootstrap", (
        f"paired bootstrap test: with {n_items} items (>= {BOOTSTRAP_LEVEL_ITEMS}) "
        "it holds its level"
    )


def comparison_pairs(systems: tuple, baseline, all_pairs: bool):
    """The pairs ``(A, B)`` to compare, and the baseline (None for all pairs).

    Each system against ``baseline`` (default: the first system), or every
    pair in input order with ``all_pairs=True``.
    """
    if all_pairs and baseline is not None:
        raise ArgumentError("give either `baseline` or `all_pairs`, not both.")
    if all_pairs:
        pairs = [
            (systems[i], systems[j])
            for i in range(len(systems))
            for j in range(i + 1, len(systems))
        ]
        return pairs, None
    baseline = systems[0] if baseline is None else str(baseline)
    if baseline not in systems:
        raise ArgumentError(
            f"`baseline` {baseline!r} is not a system; systems: {', '.join(systems)}."
        )
    return [(s, baseline) for s in systems if s != baseline], baseline


def system_scores(systems, pairs, pair_scores) -> dict:
    """Each system's score, in the order of ``systems``, from the scores of the pairs."""
    scores = {}
    for (a, b), (score_a, score_b) in zip(pairs, pair_scores, strict=True):
        scores.setdefault(a, score_a)
        scores.setdefault(b, score_b)
    return {s: scores[s] for s in systems}


def compare_systems(
    gold,
    predictions: Mapping,
    *,
    metric="accuracy",
    test: str = "auto",
    baseline: str | None = None,
    all_pairs: bool = False,
    correction: str = "holm",
    n_resamples: int = 10_000,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    ci: str = "auto",
    smooth: bool = True,
    rng=None,
    progress=False,
) -> SystemComparison:
    """Compare several systems on one test set with adjusted p-values.

    Each system against ``baseline`` (default: the first system), or every
    pair with ``all_pairs=True``. Each comparison is a paired test
    (:func:`paired_bootstrap` or :func:`paired_randomization`) on its own
    independent random stream (``SeedSequence.spawn``); the p-values are then
    adjusted for the family with Holm (default) or Bonferroni, controlling
    the family-wise error rate (Holm 1979).

    Parameters
    ----------
    gold : array_like or None
    predictions : mapping of str to array_like
        System name to its outputs, all of the same length, at least two.
    metric, n_resamples, alternative, confidence, ci, smooth, rng
        As for :func:`paired_bootstrap`.
    test : {"auto", "bootstrap", "randomization", "mcnemar", "wilcoxon", "t"}
        ``"auto"`` (default) picks the resampling test that holds its level
        at this number of items (:func:`choose_test`) and says why in
        ``test_reason``. ``"mcnemar"`` (:func:`mcnemar_exact`, accuracy
        only), ``"wilcoxon"`` (:func:`paired_wilcoxon`) and ``"t"``
        (:func:`paired_t`) test per-item scores (:func:`per_item_scores`:
        metric ``accuracy`` or ``mean``); they draw nothing, so ``rng`` and
        ``n_resamples`` are unused.
    baseline : str, optional
    all_pairs : bool, default False
    correction : {"holm", "bonferroni", "none"}
    progress : bool or None, default False
        A tqdm bar over the pairs (None: on a terminal only, when there are several).

    Returns
    -------
    SystemComparison
    """
    if not isinstance(predictions, Mapping) or len(predictions) < 2:
        raise ArgumentError(
            "`predictions` must map at least two system names to outputs."
        )
    if test not in TESTS:
        raise ArgumentError(
            f"`test` must be one of {', '.join(TESTS)}; got {test!r}."
        )
    if correction not in CORRECTIONS:
        raise ArgumentError(
            f"`correction` must be one of {', '.join(CORRECTIONS)}; got {correction!r}."
        )
    systems = tuple(str(s) for s in predictions)
    preds = {str(k): v for k, v in predictions.items()}
    lengths = {s: np.asarray(v).size for s, v in preds.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{s}: {k}" for s, k in lengths.items())
        raise ArgumentError(
            f"systems must have one output per item; lengths differ ({shown})."
        )
    pairs, baseline = comparison_pairs(systems, baseline, all_pairs)
    if test in CLASSICAL_TESTS:
        return _compare_classical(
            gold, preds, pairs, metric, test, alternative, confidence, correction, baseline
        )
    reason = ""
    if test == "auto":
        test, reason = choose_test(next(iter(lengths.values())))
    run = paired_bootstrap if test == "bootstrap" else paired_randomization
    streams = as_rng(rng).spawn(len(pairs))
    results = []
    with progress_bar(len(pairs), f"{test} tests", progress if len(pairs) > 1 else False) as bar:
        for (a, b), r in zip(pairs, streams, strict=True):
            results.append(run(
                gold, preds[a], preds[b], metric=metric, n_resamples=n_resamples,
                alternative=alternative, confidence=confidence, ci=ci, smooth=smooth, rng=r,
            ))  # fmt: skip
            bar.update()
    results = tuple(results)
    return SystemComparison(
        systems=systems,
        scores=system_scores(systems, pairs, [(r.score_a, r.score_b) for r in results]),
        pairs=tuple(pairs),
        results=results,
        adjusted_pvalues=adjust_pvalues([r.pvalue for r in results], correction),
        correction=correction,
        baseline=baseline,
        test_reason=reason,
        metric=results[0].metric,
    )


def per_item_scores(gold, outputs, metric) -> np.ndarray:
    """Each item's score under a metric that is a mean of per-item scores.

    ``accuracy``: 1 where the output equals the gold label, else 0; ``mean``:
    the outputs themselves. Corpus-level metrics (F1, precision, ...) have no
    per-item score, so the McNemar, Wilcoxon and t tests do not apply to them.
    """
    name = rs.get_metric(metric).name
    if name == "mean":
        return as_scores(outputs, "outputs", min_n=2)
    if name == "accuracy":
        arrays = as_labels(gold=gold, outputs=outputs)
        return (arrays["outputs"] == arrays["gold"]).astype(float)
    raise ArgumentError(
        f"metric {name!r} is not a mean of per-item scores, so the McNemar, Wilcoxon and "
        "t tests do not apply; use metric 'accuracy' or 'mean', or the bootstrap or "
        "randomization test."
    )


def _compare_classical(
    gold, preds, pairs, metric, test, alternative, confidence, correction, baseline
):
    """compare_systems for the McNemar, Wilcoxon signed-rank and paired t tests."""
    name = rs.get_metric(metric).name
    if name not in ("accuracy", "mean") or (test == "mcnemar" and name != "accuracy"):
        accepted = "'accuracy'" if test == "mcnemar" else "'accuracy' or 'mean'"
        raise ArgumentError(
            f"`test` {test!r} needs `metric` {accepted} (per-item scores); {name!r} is "
            "not, so use `test` 'bootstrap' or 'randomization' for it."
        )
    scores = {s: per_item_scores(gold, v, metric) for s, v in preds.items()}
    if test == "mcnemar":
        results = tuple(
            mcnemar_exact(gold, preds[a], preds[b], alternative=alternative,
                          confidence=confidence)
            for a, b in pairs
        )  # fmt: skip
    else:
        run = paired_t if test == "t" else paired_wilcoxon
        results = tuple(
            run(scores[a], scores[b], alternative=alternative, confidence=confidence)
            for a, b in pairs
        )
    return SystemComparison(
        systems=tuple(preds),
        scores={s: float(v.mean()) for s, v in scores.items()},
        pairs=tuple(pairs),
        results=results,
        adjusted_pvalues=adjust_pvalues([r.pvalue for r in results], correction),
        correction=correction,
        baseline=baseline,
        metric=name,
    )
