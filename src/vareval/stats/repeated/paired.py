"""Repeated runs: paired differences between two methods and planning replications.

With matched replications (the same seed, split or fold for both methods)
the differences ``D_i = X_i^A - X_i^B`` carry the comparison. Their mean
estimates the mean difference with ``SE = s_D / sqrt(k)``, and
``Var(A - B) = Var A + Var B - 2 Cov(A, B)`` shows what pairing saves when
the covariance is positive.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
from scipy import special

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats._checks import (
    as_confidence,
    as_positive_int,
    as_rng,
    as_scores,
    constant_differences,
    mean_sd,
    renamed_keywords,
)
from vareval.stats._lazy import stats
from vareval.stats._result import (
    ConfidenceInterval,
    Result,
    interval_method,
    renamed,
    renamed_interval,
    t_interval_at,
)
from vareval.stats.repeated.summary import t_interval

_BOOT_CHUNK = 2_000_000  # resampled values held in memory at once
# Fewer pairs than this have too few distinct bootstrap resamples (C(2k-1, k):
# 10 for three pairs) for a percentile interval that means anything.
MIN_BOOTSTRAP_PAIRS = 10
# Above this many pairs the bootstrap interval of the mean is not drawn: it would
# cost n_resamples x k draws (minutes at 10^6 pairs) to repeat the t interval,
# which the central limit theorem makes equal to it within Monte Carlo error there.
MAX_BOOTSTRAP_PAIRS = 20_000


@dataclasses.dataclass(frozen=True, repr=False)
class PairedDifference(Result):
    """The mean paired difference A - B and what pairing contributed.

    Attributes
    ----------
    k : int
        Number of pairs.
    estimate, sd, se : float
        Mean of the differences (formerly ``mean``), their SD (ddof=1) and
        ``se = sd / sqrt(k)``.
    low, high : float
        Student-t interval for the mean difference at ``confidence`` (the
        corrected one when ``test`` says so; formerly ``t_ci``).
        ``confidence_interval(level)`` recomputes it at any level.
    bootstrap_low, bootstrap_high : float
        Percentile-bootstrap interval for the mean difference (formerly
        ``bootstrap_ci``); NaN when ``bootstrap_note`` says why.
    statistic, df, pvalue : float
        The test of a zero mean difference (two-sided) named by ``test``;
        NaN when the differences are all equal (SD 0: the t statistic is
        undefined).
    correlation : float
        Pearson correlation of A and B across pairs (NaN if either is constant).
    var_a, var_b, cov, var_diff : float
        The terms of ``Var(A - B) = Var A + Var B - 2 Cov``, all ddof=1.
    se_unpaired : float
        SE the same number of runs would give without pairing,
        ``sqrt((var_a + var_b) / k)``.
    variance_ratio : float
        ``(var_a + var_b) / var_diff``: an unpaired design needs this many
        times the runs for the same SE (below 1, pairing hurt).
    selected_gap : float
        Best run of A minus best run of B: a *selected* statistic that
        estimates nothing about the mean difference.
    confidence : float
        Level of both intervals.
    differences : ndarray
        The individual differences, in pair order.
    test : str
        ``"paired t"``, or ``"corrected resampled t"`` (Nadeau and Bengio
        2003) when each replication re-drew the train/test split.
    se_corrected : float
        The corrected test's SE ``sqrt((1/k + n_test/n_train) s_D^2)``
        (NaN for the plain paired t test).
    test_train_ratio : float
        ``n_test / n_train`` of the re-drawn splits (NaN if not re-drawn).
    bootstrap_note : str
        Why there is no bootstrap interval, or "".
    """

    k: int
    estimate: float
    sd: float
    se: float
    low: float
    high: float
    bootstrap_low: float
    bootstrap_high: float
    statistic: float
    df: float
    pvalue: float
    correlation: float
    var_a: float
    var_b: float
    cov: float
    var_diff: float
    se_unpaired: float
    variance_ratio: float
    selected_gap: float
    confidence: float
    differences: np.ndarray
    test: str = "paired t"
    se_corrected: float = math.nan
    test_train_ratio: float = math.nan
    bootstrap_note: str = ""

    _interval = ("low", "high")
    # The corrected SE makes the interval when ``test`` says so: it leads with the answer.
    _headline = (
        "estimate", "low", "high", "confidence", "se", "statistic", "df", "pvalue", "test",
        "se_corrected", "test_train_ratio", "k",
    )
    _deprecated = {
        "mean": renamed("estimate"),
        "t_ci": interval_method(),
        "bootstrap_ci": renamed_interval("bootstrap_low", "bootstrap_high"),
    }

    def _interval_at(self, level: float) -> ConfidenceInterval:
        se = self.se_corrected if self.test == "corrected resampled t" else self.se
        return t_interval_at(self.estimate, se, self.df, level)


@renamed_keywords(n_boot="n_resamples")
def paired_difference(
    a,
    b,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    higher_is_better: bool = True,
    split_sizes: tuple[int, int] | None = None,
    rng=None,
) -> PairedDifference:
    """Mean paired difference A - B with its SE, intervals and variance decomposition.

    Estimand: the mean of ``X^A - X^B`` over matched replications. The t
    interval assumes roughly normal differences (or enough pairs); the
    percentile bootstrap interval resamples pairs and is reported beside it,
    from ``MIN_BOOTSTRAP_PAIRS`` to ``MAX_BOOTSTRAP_PAIRS`` pairs (fewer pairs
    have too few distinct resamples; past the most, it equals the t interval
    within Monte Carlo error and costs minutes: its interval is then NaN and
    ``bootstrap_note`` says why).

    When each replication re-drew the train/test split (``split_sizes``),
    replications share training data, the differences are positively
    correlated and the naive t test is anti-conservative; the test and
    interval are then Nadeau and Bengio's corrected resampled t test
    (:func:`~vareval.stats.testset.crossval.corrected_resampled_ttest`), and the
    bootstrap of the pairs, equally blind to the overlap, is not shown.

    Parameters
    ----------
    a, b : array_like
        Scores of methods A and B, aligned so that ``a[i]`` and ``b[i]`` share
        a replication (seed, split ...). At least two pairs.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 10_000
        Bootstrap resamples of the pairs.
    higher_is_better : bool, default True
        Direction used for the selected best runs.
    split_sizes : (int, int), optional
        ``(n_train, n_test)`` when each replication re-drew the split (only
        their ratio matters); None for a fixed split.
    rng : None, int or numpy.random.Generator
        Source of randomness for the bootstrap (SPEC 7).

    Returns
    -------
    PairedDifference

    Examples
    --------
    >>> r = paired_difference([0.831, 0.847, 0.822], [0.818, 0.835, 0.809], rng=0)
    >>> round(r.estimate, 4), round(r.selected_gap, 3)
    (0.0127, 0.012)
    """
    a = as_scores(a, "a", min_n=2)
    b = as_scores(b, "b", min_n=2)
    if a.size != b.size:
        raise ArgumentError(f"`a` and `b` must be paired: got {a.size} and {b.size} scores.")
    confidence = as_confidence(confidence)
    n_boot = as_positive_int(n_resamples, "n_resamples")
    rng = as_rng(rng)
    k = a.size
    d = a - b
    mean, sd = mean_sd(d)
    if constant_differences(a, b):
        sd = 0.0
    se = sd / np.sqrt(k)
    cov = np.cov(a, b, ddof=1)
    var_a, var_b, cov_ab = float(cov[0, 0]), float(cov[1, 1]), float(cov[0, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov_ab / (np.sqrt(var_a) * np.sqrt(var_b)) if var_a > 0 and var_b > 0 else np.nan
        t = mean / se if se > 0 else np.nan
        var_diff = float(np.square(np.float64(sd)))  # inf, not OverflowError, past 1e154
        ratio = (var_a + var_b) / var_diff if sd > 0 else np.inf
    if sd == 0:
        warnings.warn(
            f"all {k} paired differences equal {mean:+.6g} (SD 0): the t test is undefined "
            "(scipy's ttest_rel would say t = inf, p = 0), so t and p are NaN and the "
            "intervals have zero width; a sign-flip or sign test gives an exact p-value.",
            VarevalWarning,
            stacklevel=3,  # the caller, past the renamed_keywords wrapper
        )
    best = np.max if higher_is_better else np.min
    t_ci = t_interval(mean, se, k - 1, confidence)
    p = float(2 * special.stdtr(k - 1, -abs(t))) if np.isfinite(t) else np.nan
    corrected = {}
    boot_ci, note = (math.nan, math.nan), ""
    if split_sizes is not None:
        n_train, n_test = split_sizes
        if sd > 0:
            # imported for re-drawn splits only (with the test-set modules it needs, ~5 ms)
            from vareval.stats.testset.crossval import corrected_resampled_ttest

            c = corrected_resampled_ttest(
                a, b, n_train=n_train, n_test=n_test, confidence=confidence
            )
            t, p, t_ci, se_c = c.statistic, c.pvalue, c.confidence_interval(), c.se
        else:  # undefined, as the naive test above (corrected_resampled_ttest refuses it)
            se_c = math.nan
        corrected = {
            "test": "corrected resampled t",
            "se_corrected": se_c,
            "test_train_ratio": n_test / n_train,
        }
        note = (
            "each replication re-drew the train/test split, so the pairs share "
            "training data; a bootstrap of the pairs ignores that, as the naive t "
            "test does"
        )
    elif k < MIN_BOOTSTRAP_PAIRS:
        note = (
            f"{k} pairs have only {math.comb(2 * k - 1, k)} distinct bootstrap "
            f"resamples; a bootstrap interval needs at least {MIN_BOOTSTRAP_PAIRS} pairs"
        )
    elif k > MAX_BOOTSTRAP_PAIRS:
        note = (
            f"with {k:,} pairs the bootstrap interval of the mean equals the t interval "
            f"within Monte Carlo error, so it is drawn only up to {MAX_BOOTSTRAP_PAIRS:,} pairs"
        )
    else:
        boot_ci = _bootstrap_mean_ci(d, confidence, n_boot, rng)
    return PairedDifference(
        k=k,
        estimate=mean,
        sd=sd,
        se=float(se),
        low=float(t_ci[0]),
        high=float(t_ci[1]),
        bootstrap_low=boot_ci[0],
        bootstrap_high=boot_ci[1],
        statistic=float(t),
        df=float(k - 1),
        pvalue=float(p),
        correlation=float(corr),
        var_a=var_a,
        var_b=var_b,
        cov=cov_ab,
        var_diff=var_diff,
        se_unpaired=float(np.sqrt((var_a + var_b) / k)),
        variance_ratio=float(ratio),
        selected_gap=_gap(best(a), best(b)),
        confidence=confidence,
        differences=d,
        bootstrap_note=note,
        **corrected,
    )


def _bootstrap_mean_ci(d, confidence, n_boot, rng) -> tuple[float, float]:
    """Percentile interval of the mean of ``d`` over resamples, in memory-bounded chunks."""
    k = d.size
    chunk = max(1, _BOOT_CHUNK // k)
    means = np.concatenate(
        [
            d[rng.integers(0, k, size=(min(chunk, n_boot - start), k))].mean(axis=1)
            for start in range(0, n_boot, chunk)
        ]
    )
    alpha = 1 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


@dataclasses.dataclass(frozen=True, repr=False)
class Plan(Result):
    """How many pairs reach a target precision or power.

    Attributes
    ----------
    sd_diff : float
        SD of the paired differences assumed (usually a pilot's estimate).
    target : str
        "se", "halfwidth" or "power".
    target_value : float
        The SE, CI half-width or power asked for.
    effect : float or None
        The mean difference the power refers to.
    k_required : int
        Smallest number of pairs meeting the target (t-based for half-width
        and power).
    k_normal : int
        The same from the normal approximation.
    achieved : float
        The SE, half-width or power at ``k_required``.
    curve_k, curve_se, curve_halfwidth : ndarray
        The precision curve: SE and CI half-width against the number of pairs.
    curve_power : ndarray or None
        Power against the number of pairs, when an effect is given.
    power : float or None
        Power asked for, when an effect is given.
    confidence, alpha : float
        Level of the half-width and of the test.
    test_train_ratio : float
        ``n_test / n_train`` of re-drawn splits (0: fixed splits): the SE is
        then Nadeau and Bengio's corrected ``sd * sqrt(1/k + ratio)``.
    """

    sd_diff: float
    target: str
    target_value: float
    effect: float | None
    k_required: int
    k_normal: int
    achieved: float
    curve_k: np.ndarray
    curve_se: np.ndarray
    curve_halfwidth: np.ndarray
    curve_power: np.ndarray | None
    power: float | None
    confidence: float
    alpha: float
    test_train_ratio: float = 0.0

    _rows = ("curve_k", "curve_se", "curve_halfwidth", "curve_power")


def plan_replications(
    sd_diff: float,
    *,
    target_se: float | None = None,
    target_halfwidth: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    confidence: float = 0.95,
    max_k: int = 1_000_000,
    test_train_ratio: float = 0.0,
) -> Plan:
    """Number of paired replications needed for a target SE, CI half-width or power.

    Give exactly one target. ``target_se``: ``sd / sqrt(k) <= target``, so
    halving the SE takes four times the pairs. ``target_halfwidth``: the
    Student-t interval of the mean difference at ``confidence`` is at most
    that wide on each side. ``effect``: the two-sided paired t test at level
    ``alpha`` rejects with probability ``power`` when the true mean
    difference is ``effect`` (noncentral t). ``k_normal`` gives the normal
    approximation beside each. All assume the differences' SD is
    ``sd_diff``; from a small pilot that SD is itself uncertain, so treat
    the answer as a planning figure.

    Parameters
    ----------
    sd_diff : float
        SD of the paired differences, > 0.
    target_se, target_halfwidth, effect : float, optional
        The target (exactly one), > 0.
    power : float, default 0.8
        Power wanted when ``effect`` is given, in (0, 1).
    alpha : float, default 0.05
        Level of the test, in (0, 1).
    confidence : float, default 0.95
        Level of the interval for ``target_halfwidth``.
    max_k : int, default 1_000_000
        Largest number of pairs considered.
    test_train_ratio : float, default 0
        ``n_test / n_train`` when each replication re-draws the train/test
        split: the plan is then for the corrected resampled t test (Nadeau
        and Bengio 2003), whose SE is ``sd * sqrt(1/k + ratio)`` and never
        falls below ``sd * sqrt(ratio)``; a target below that floor is refused.

    Returns
    -------
    Plan
    """
    sd, target, value = _plan_iv(sd_diff, target_se, target_halfwidth, effect)
    confidence = as_confidence(confidence)
    alpha = as_confidence(alpha, "alpha")
    power = as_confidence(power, "power")
    max_k = as_positive_int(max_k, "max_k", minimum=2)
    r = float(test_train_ratio)
    if not (np.isfinite(r) and r >= 0):
        raise ArgumentError(f"`test_train_ratio` must be >= 0; got {test_train_ratio!r}.")
    z = special.ndtri
    scale = {"se": 1.0, "halfwidth": z((1 + confidence) / 2),
             "power": z(1 - alpha / 2) + z(power)}[target]  # fmt: skip
    room = (value / (scale * sd)) ** 2 - r  # 1/k must fit under it
    if room <= 0:
        floor = sd * np.sqrt(r)
        what = {
            "se": "corrected SE",
            "halfwidth": "corrected CI half-width",
            "power": f"smallest effect the corrected test detects with power {power:g} at "
            f"alpha {alpha:g}",
        }[target]
        why = "" if target == "se" else f"; its SE never falls below {floor:.4g}"
        raise ArgumentError(
            f"the {what} stays above {scale * floor:.4g} for any number of pairs, so "
            f"{value:g} is out of reach (re-drawn splits share training data: n_test/n_train "
            f"= {r:.3g}{why}); larger test splits, not more pairs, would help."
        )
    k_normal = int(np.ceil(1 / room - 1e-9))
    if target == "se":
        need = lambda k: _se(k, sd, r) <= value  # noqa: E731
    elif target == "halfwidth":
        need = lambda k: _halfwidth(k, sd, confidence, r) <= value  # noqa: E731
    else:
        need = lambda k: _power(k, value / sd, alpha, r) >= power  # noqa: E731
    k_req = _smallest(need, max(k_normal, 2), max_k)
    curve_k = _curve_grid(k_req)
    achieved = {"se": _se(k_req, sd, r), "halfwidth": _halfwidth(k_req, sd, confidence, r)}
    achieved["power"] = _power(k_req, value / sd, alpha, r) if target == "power" else np.nan
    return Plan(
        sd_diff=sd,
        target=target,
        target_value=value,
        effect=value if target == "power" else None,
        k_required=k_req,
        k_normal=max(k_normal, 2),
        achieved=float(achieved[target]),
        curve_k=curve_k,
        curve_se=_se(curve_k, sd, r),
        curve_halfwidth=_halfwidth(curve_k, sd, confidence, r),
        curve_power=_power(curve_k, value / sd, alpha, r) if target == "power" else None,
        power=power if target == "power" else None,
        confidence=confidence,
        alpha=alpha,
        test_train_ratio=r,
    )


def _gap(x: float, y: float) -> float:
    """``x - y``, 0 when the two differ by rounding only (best runs that tie, as seed means)."""
    gap = float(x - y)
    return 0.0 if abs(gap) <= 8 * np.finfo(float).eps * max(abs(x), abs(y)) else gap


def _plan_iv(sd_diff, target_se, target_halfwidth, effect):
    given = {"se": target_se, "halfwidth": target_halfwidth, "power": effect}
    given = {k: v for k, v in given.items() if v is not None}
    if len(given) != 1:
        raise ArgumentError(
            f"give exactly one of `target_se`, `target_halfwidth` or `effect`; got {len(given)}."
        )
    ((target, value),) = given.items()
    argument = {"se": "target_se", "halfwidth": "target_halfwidth", "power": "effect"}[target]
    for name, v in (("sd_diff", sd_diff), (argument, value)):
        # an effect is a difference of either sign; the others are sizes
        if not np.isfinite(v) or (v == 0 if name == "effect" else v <= 0):
            what = "a finite number other than 0" if name == "effect" else "a positive number"
            raise ArgumentError(f"`{name}` must be {what}; got {v!r}.")
    return float(sd_diff), target, float(abs(value))


def _se(k, sd, ratio=0.0):
    """SE of the mean of k paired differences; corrected for re-drawn splits by ``ratio``."""
    return sd * np.sqrt(1 / np.asarray(k, dtype=float) + ratio)


def _halfwidth(k, sd, confidence, ratio=0.0):
    k = np.asarray(k, dtype=float)
    return special.stdtrit(k - 1, (1 + confidence) / 2) * _se(k, sd, ratio)


def _power(k, standardized_effect, alpha, ratio=0.0):
    """Power of the two-sided (corrected) paired t test with k pairs (noncentral t)."""
    k = np.asarray(k, dtype=float)
    df = k - 1
    crit = special.stdtrit(df, 1 - alpha / 2)
    nc = standardized_effect / np.sqrt(1 / k + ratio)
    # Both tails as upper tails: scipy's lower tail of nct returns NaN far out.
    return stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc)


def _smallest(need, start: int, max_k: int) -> int:
    """Smallest k in [2, max_k] with ``need(k)``, for a condition monotone in k."""
    if not need(max_k):
        raise ArgumentError(f"the target needs more than `max_k` = {max_k} pairs.")
    lo = 2
    if need(lo):
        return lo
    hi = min(max(start, 3), max_k)
    while not need(hi):
        lo, hi = hi, min(2 * hi, max_k)
    while hi - lo > 1:  # need(lo) is false, need(hi) is true
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if need(mid) else (mid, hi)
    return hi


def _curve_grid(k_required: int) -> np.ndarray:
    """Pair counts for the precision curve: doublings from 2, a smooth grid, the requirement."""
    top = max(4 * k_required, 16)
    doublings = 2 ** np.arange(1, int(np.log2(top)) + 1)
    smooth = np.round(np.geomspace(2, top, 40)).astype(np.int64)
    return np.unique(np.concatenate([doublings, smooth, [k_required]]))
