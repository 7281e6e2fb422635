"""Across tasks: almost stochastic order and effect sizes between two samples of scores.

Almost stochastic order (ASO; del Barrio, Cuesta-Albertos and Matrán 2018,
brought to deep learning by Dror, Shlomov and Reichart 2019 and packaged as
deepsig by Ulmer, Hardmeier and Frellsen 2022) asks how far the score
distribution of A is from stochastically dominating that of B. With quantile
functions ``F^-1`` (A) and ``G^-1`` (B), the *violation ratio*

    eps_W2 = int_{F^-1(t) < G^-1(t)} (F^-1(t) - G^-1(t))^2 dt / W2(F, G)^2

is the share of the squared 2-Wasserstein distance spent where A is worse
than B: 0 means A dominates B, 1 that B dominates A. ``epsilon_min`` is an
upper confidence bound for it, ``eps_hat + z_conf * sd_boot``, with the
bootstrap SD of the plug-in violation ratio; A is declared almost
stochastically better than B when ``epsilon_min < threshold`` (deepsig's
0.5, or the stricter 0.2 that is the default here; see :func:`aso`).

Both quantile functions of an empirical sample are step functions, so the
integrals are computed exactly on the merged steps (``dt=None``); ``dt=0.005``
reproduces deepsig's Riemann sum instead. The bootstrap is vectorised: a
resample's quantile function is its sorted values, and the merged steps are
the same for every resample, so all violation ratios are one weighted sum.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Mapping

import numpy as np
from scipy import special

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats._checks import (
    as_confidence,
    as_positive_int,
    as_rng,
    as_scores,
    check_size,
)
from vareval.stats._lazy import stats
from vareval.stats._result import LegacyIntervalMethod, Result

_CHUNK_ELEMENTS = 4_000_000  # bootstrap rows x steps held in memory at once


@dataclasses.dataclass(frozen=True, repr=False)
class ASOResult(Result):
    """Almost stochastic order of A over B.

    No figure: one epsilon_min and its test; multi_aso draws the matrix of many.

    ``epsilon_min`` is a one-sided (upper) confidence bound, not an interval:
    this result has no two-sided interval, and ``confidence_interval()``
    raises ``TypeError``.

    Attributes
    ----------
    epsilon_min : float
        One-sided upper confidence bound (level ``confidence``) of the
        violation ratio, clipped to [0, 1]; A is almost stochastically better
        than B when it is below ``threshold``.
    violation_ratio : float
        The plug-in estimate of ``eps_W2`` (also ``estimate``).
    sd : float
        Bootstrap standard deviation of the violation ratio.
    pvalue : float
        ``Phi((violation_ratio - threshold) / sd)``: the smallest ``1 -
        confidence`` at which ``epsilon_min`` falls below ``threshold``; the
        p-value of the one-sided test of ``eps_W2 >= threshold``.
    threshold : float
        The bound on the violation ratio that counts as "almost" dominance.
    confidence : float
        Level of ``epsilon_min``.
    n_a, n_b : int
        Sample sizes.
    n_resamples : int
        Bootstrap resamples.
    dt : float or None
        Step of deepsig's Riemann sum, or None for the exact integral.
    """

    epsilon_min: float
    violation_ratio: float
    sd: float
    pvalue: float
    threshold: float
    confidence: float
    n_a: int
    n_b: int
    n_resamples: int
    dt: float | None

    _headline = ("violation_ratio", "epsilon_min", "confidence", "threshold", "pvalue")

    @property
    def estimate(self) -> float:
        """The plug-in violation ratio."""
        return self.violation_ratio

    @property
    def a_better(self) -> bool:
        """Whether ``epsilon_min < threshold``: A almost stochastically dominates B."""
        return self.epsilon_min < self.threshold


@dataclasses.dataclass(frozen=True, repr=False)
class MultiASOResult(Result):
    """Almost stochastic order between every ordered pair of systems.

    Entry ``[i, j]`` of each matrix is about "row system i over column
    system j"; the diagonal is NaN.

    Attributes
    ----------
    names : list of str
        The systems, in input order.
    epsilon_min : ndarray, shape (k, k)
        Upper bounds at level ``adjusted_confidence`` (simultaneous under
        Bonferroni when a correction is asked for).
    violation_ratio : ndarray, shape (k, k)
        Plug-in violation ratios; ``[i, j] + [j, i] = 1``.
    sd : ndarray, shape (k, k)
        Bootstrap SDs (symmetric).
    pvalue, pvalue_adjusted : ndarray, shape (k, k)
        One-sided p-values for ``eps_W2[i, j] >= threshold`` and their
        family-wise adjustment over the ``k (k - 1)`` ordered pairs.
    better : ndarray of bool, shape (k, k)
        ``pvalue_adjusted < 1 - confidence``: row i almost stochastically
        dominates column j.
    correction : str
        ``"holm"``, ``"bonferroni"`` or ``"none"``.
    confidence, adjusted_confidence : float
        The family's level and the per-comparison level of ``epsilon_min``.
    threshold : float
    n_resamples : int
    dt : float or None
    """

    names: list
    epsilon_min: np.ndarray
    violation_ratio: np.ndarray
    sd: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    better: np.ndarray
    correction: str
    confidence: float
    adjusted_confidence: float
    threshold: float
    n_resamples: int
    dt: float | None

    def to_frame(self):
        """One row per ordered pair ``(system, versus)``, the diagonal left out."""
        import pandas as pd

        i, j = np.nonzero(~np.eye(len(self.names), dtype=bool))
        names = np.asarray(self.names, dtype=object)
        out = {"system": names[i], "versus": names[j]}
        for col in ("violation_ratio", "epsilon_min", "sd", "pvalue", "pvalue_adjusted", "better"):
            out[col] = getattr(self, col)[i, j]
        return pd.DataFrame(out)


@dataclasses.dataclass(frozen=True, repr=False)
class EffectSize(Result):
    """A standardised effect of A over B with its confidence interval.

    No figure: one effect size with its interval, read from its fields.

    Attributes
    ----------
    name : str
        ``"cohen_d"``, ``"cohen_dz"``, ``"hedges_g"``, ``"hedges_gz"``,
        ``"vargha_delaney_a12"`` or ``"cliffs_delta"``.
    estimate : float
        The effect (positive: A larger).
    low, high : float
        Interval for the population effect at level ``confidence`` (formerly
        the tuple ``confidence_interval``; now ``confidence_interval()``).
    confidence : float
    ci_method : str
        How the interval was made.
    n_a, n_b : int
        Sample sizes (equal, the number of pairs, when ``paired``).
    paired : bool
    """

    name: str
    estimate: float
    low: float
    high: float
    confidence: float
    ci_method: str
    n_a: int
    n_b: int
    paired: bool

    _interval = ("low", "high")
    confidence_interval = LegacyIntervalMethod()


# ---------------------------------------------------------------- ASO


def _steps(n: int, m: int, dt: float | None):
    """Quantile indices and weights of the integral over (0, 1).

    Returns ``(ia, ib, w_total, w_violation)``: the integrand on step ``s`` is
    ``G^-1 - F^-1`` evaluated at sorted positions ``ib[s]`` and ``ia[s]``.
    Exact: the merged steps ``(u_s, u_{s+1}]`` of the two quantile functions
    (breakpoints ``i/n`` and ``j/m``), weighted by their widths. Riemann:
    deepsig's grid ``t = dt, 2 dt, ... < 1`` with its quantile ``x_(ceil(n t))``
    and its violation sum that leaves out the first point.
    """
    if dt is None:
        # breakpoints as integers over the common denominator n * m
        ends = np.union1d(np.arange(1, n + 1) * m, np.arange(1, m + 1) * n)
        starts = np.concatenate([[0], ends[:-1]])
        ia = (ends + m - 1) // m - 1
        ib = (ends + n - 1) // n - 1
        w = (ends - starts) / (n * m)
        return ia, ib, w, w
    t = np.arange(dt, 1, dt)
    ia = np.clip(np.ceil(n * t).astype(int) - 1, 0, n - 1)
    ib = np.clip(np.ceil(m * t).astype(int) - 1, 0, m - 1)
    w = np.full(t.size, dt)
    w_violation = w.copy()
    w_violation[0] = 0.0
    return ia, ib, w, w_violation


def _violation_ratios(a_sorted, b_sorted, steps) -> np.ndarray:
    """Violation ratios of the rows of two sorted samples (rows are resamples)."""
    ia, ib, w, w_violation = steps
    diff = b_sorted[:, ib] - a_sorted[:, ia]
    sq = diff * diff
    total = sq @ w
    violated = np.where(diff > 0, sq, 0.0) @ w_violation
    with np.errstate(invalid="ignore", divide="ignore"):
        # equal quantile functions: no direction at all, so half (as deepsig)
        return np.where(total > 0, violated / total, 0.5)


class _Resamples:
    """The sorted bootstrap resamples of ``x``, drawn a block of rows at a time.

    The stream is saved where the resamples begin and ``rng`` is moved past
    them (the same draws as one ``(n_resamples, n)`` call), so any number of
    passes over the blocks see the same resamples in the memory of a block:
    10^3 resamples of 5 x 10^5 runs are never held at once.
    """

    def __init__(self, x: np.ndarray, n_resamples: int, rng):
        self.x, self.n = x, n_resamples
        self.start = copy.deepcopy(rng)
        rows = self.rows(x.size)
        for i in range(0, n_resamples, rows):
            rng.integers(0, x.size, size=(min(rows, n_resamples - i), x.size))

    @staticmethod
    def rows(size: int) -> int:
        return max(1, _CHUNK_ELEMENTS // max(size, 1))

    def blocks(self, rows: int):
        rng = copy.deepcopy(self.start)
        for i in range(0, self.n, rows):
            draw = rng.integers(0, self.x.size, size=(min(rows, self.n - i), self.x.size))
            yield np.sort(self.x[draw], axis=1)


def _aso_core(a, b, boot_a, boot_b, dt):
    """Observed violation ratio and bootstrap SD from pre-drawn sorted resamples."""
    steps = _steps(a.size, b.size, dt)
    a_sorted, b_sorted = np.sort(a), np.sort(b)
    observed = _violation_ratios(a_sorted[None], b_sorted[None], steps)[0]
    if np.array_equal(a_sorted[steps[0]], b_sorted[steps[1]]):
        warnings.warn(
            "the two samples have the same quantile function (no distance between them); "
            "the violation ratio is set to 0.5.",
            VarevalWarning,
            stacklevel=3,
        )
    rows = _Resamples.rows(max(steps[0].size, a.size, b.size))
    boots = np.concatenate(
        [_violation_ratios(x, y, steps) for x, y in zip(boot_a.blocks(rows),
                                                         boot_b.blocks(rows), strict=True)]
    )
    sd = float(boots.std())
    if sd == 0:
        warnings.warn(
            f"every bootstrap violation ratio equals the observed {observed:g} (samples of "
            f"{a.size} and {b.size} runs that "
            + ("are all equal" if np.ptp(np.concatenate([a, b])) == 0 else "do not overlap")
            + "): epsilon_min then has no "
            "spread and its p-value is 0 or 1 whatever the number of runs.",
            VarevalWarning,
            stacklevel=3,
        )
    return float(observed), sd


def _upper_bound(ratio, sd, confidence):
    return np.clip(ratio + stats.norm.ppf(confidence) * sd, 0.0, 1.0)


def _aso_pvalue(ratio, sd, threshold):
    ratio, sd = np.asarray(ratio, dtype=float), np.asarray(sd, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (ratio - threshold) / sd
    return np.where(sd > 0, stats.norm.cdf(z), np.where(ratio < threshold, 0.0, 1.0))


def _aso_iv(confidence, n_resamples, threshold, dt):
    confidence = as_confidence(confidence)
    n_resamples = check_size(as_positive_int(n_resamples, "n_resamples", minimum=2),
                             "`n_resamples`")
    if not 0 < threshold <= 0.5:
        raise ArgumentError(f"`threshold` must be in (0, 0.5]; got {threshold!r}.")
    if dt is not None and not 0 < dt < 0.5:
        raise ArgumentError(f"`dt` must be None (exact) or in (0, 0.5); got {dt!r}.")
    return confidence, n_resamples, float(threshold), dt


def aso(
    a,
    b,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    threshold: float = 0.2,
    dt: float | None = None,
    rng=None,
) -> ASOResult:
    """Almost stochastic order of A's scores over B's (higher is better).

    The estimand is the violation ratio ``eps_W2(F_A, F_B)`` of del Barrio
    et al. (2018): the share of the squared 2-Wasserstein distance between
    the two score distributions on which A's quantile function lies below
    B's. ``epsilon_min`` is its upper confidence bound
    ``eps_hat + Phi^-1(confidence) * sd`` with ``sd`` the bootstrap SD of
    ``eps_hat``, as in Dror et al. (2019) and deepsig 1.2.8 (Ulmer et al.
    2022); the samples need not have the same size or be paired.

    Parameters
    ----------
    a, b : array_like
        Scores of A (the candidate) and B, one per run.
    confidence : float, default 0.95
        Level of ``epsilon_min``; for several comparisons use
        :func:`multi_aso`, which adjusts it.
    n_resamples : int, default 1000
        Bootstrap resamples for ``sd``.
    threshold : float, default 0.2
        ``epsilon_min`` below it declares A better. Dror et al. and deepsig
        use 0.5, but for two *identical* score distributions that rule
        declares a winner in about 18-20 % of comparisons at confidence 0.95
        (n = 5 to 20 runs each; the violation ratio is 0/0 there and its
        bootstrap misses its spread). 0.2, as Ulmer et al. (2022) recommend,
        keeps that rate near 5 % (see docs/ranking.md).
    dt : float or None, default None
        None integrates the step quantile functions exactly; a number uses
        deepsig's Riemann sum with that step (0.005 is deepsig's default).
    rng : int, Generator or None

    Returns
    -------
    ASOResult

    References
    ----------
    del Barrio, Cuesta-Albertos, Matrán (2018), "An optimal transportation
    approach for assessing almost stochastic order". Dror, Shlomov, Reichart
    (2019), "Deep dominance". Ulmer, Hardmeier, Frellsen (2022),
    "deep-significance".
    """
    a = as_scores(a, "a")
    b = as_scores(b, "b")
    confidence, n_resamples, threshold, dt = _aso_iv(confidence, n_resamples, threshold, dt)
    rng = as_rng(rng)
    boot_a = _Resamples(a, n_resamples, rng)
    boot_b = _Resamples(b, n_resamples, rng)
    ratio, sd = _aso_core(a, b, boot_a, boot_b, dt)
    return ASOResult(
        epsilon_min=float(_upper_bound(ratio, sd, confidence)),
        violation_ratio=ratio,
        sd=sd,
        pvalue=float(_aso_pvalue(ratio, sd, threshold)),
        threshold=threshold,
        confidence=confidence,
        n_a=a.size,
        n_b=b.size,
        n_resamples=n_resamples,
        dt=dt,
    )


def multi_aso(
    scores: Mapping,
    *,
    confidence: float = 0.95,
    correction: str = "holm",
    n_resamples: int = 1000,
    threshold: float = 0.2,
    dt: float | None = None,
    rng=None,
) -> MultiASOResult:
    """Almost stochastic order between every ordered pair of several systems.

    Each system's scores are bootstrapped once and the resamples are shared
    by all its pairs. The family is the ``k (k - 1)`` *ordered* claims "i
    dominates j": with no direction fixed in advance, each pair can produce
    a claim either way, so Bonferroni divides ``1 - confidence`` by
    ``k (k - 1)`` and Holm steps down over the same p-values (see
    :class:`ASOResult` for the p-value). deepsig's ``multi_aso`` instead
    raises the level to ``confidence + (1 - confidence) / m`` with ``m``
    pairs, which is Bonferroni only for ``m = 2``.

    Parameters
    ----------
    scores : mapping of str to array_like
        System name to its scores (at least two systems; sizes may differ).
    confidence : float, default 0.95
        Family-wise level.
    correction : {"holm", "bonferroni", "none"}
        Adjustment of the p-values; ``epsilon_min`` is at Bonferroni's
        per-comparison level for both ``holm`` and ``bonferroni`` (Holm has
        no simultaneous bound), and at ``confidence`` for ``none``.
    n_resamples, threshold, dt, rng
        As in :func:`aso`.

    Returns
    -------
    MultiASOResult
    """
    return multi_aso_tasks(
        {"": scores},
        confidence=confidence,
        correction=correction,
        n_resamples=n_resamples,
        threshold=threshold,
        dt=dt,
        rng=rng,
    )[""]


def multi_aso_tasks(
    tasks: Mapping,
    *,
    confidence: float = 0.95,
    correction: str = "holm",
    n_resamples: int = 1000,
    threshold: float = 0.2,
    dt: float | None = None,
    rng=None,
) -> dict:
    """:func:`multi_aso` on each of several tasks, adjusted over all of them.

    The family is every ordered pair of systems on every task (``T k (k -
    1)`` claims), so a dominance declared on any task keeps the family-wise
    error rate at ``1 - confidence``.

    Parameters
    ----------
    tasks : mapping of str to (mapping of str to array_like)
        Task name to that task's ``{system: scores}``.
    confidence, correction, n_resamples, threshold, dt, rng
        As in :func:`multi_aso`.

    Returns
    -------
    dict of str to MultiASOResult
    """
    from vareval.stats.testset.significance import adjust_pvalues

    confidence, n_resamples, threshold, dt = _aso_iv(confidence, n_resamples, threshold, dt)
    if correction not in ("holm", "bonferroni", "none"):
        raise ArgumentError(
            f"`correction` must be 'holm', 'bonferroni' or 'none'; got {correction!r}."
        )
    if not isinstance(tasks, Mapping) or not tasks:
        raise ArgumentError("`tasks` must map at least one task name to its {system: scores}.")
    rng = as_rng(rng)
    raw = {str(t): _pairwise_ratios(scores, t, n_resamples, dt, rng) for t, scores in tasks.items()}
    k_all = [r[0].shape[0] for r in raw.values()]
    m = sum(k * (k - 1) for k in k_all)
    level = confidence if correction == "none" else 1.0 - (1.0 - confidence) / m
    pvalues = {t: _aso_pvalue(ratio, sd, threshold) for t, (ratio, sd, _) in raw.items()}
    offs = {t: ~np.eye(k, dtype=bool) for t, k in zip(raw, k_all, strict=True)}
    flat = np.concatenate([pvalues[t][offs[t]] for t in raw])
    adjusted_flat = np.split(
        adjust_pvalues(flat, correction), np.cumsum([k * (k - 1) for k in k_all])[:-1]
    )
    out = {}
    for (t, (ratio, sd, names)), adj in zip(raw.items(), adjusted_flat, strict=True):
        off = offs[t]
        adjusted = np.full(ratio.shape, np.nan)
        adjusted[off] = adj
        out[t] = MultiASOResult(
            names=names,
            epsilon_min=np.where(off, _upper_bound(ratio, sd, level), np.nan),
            violation_ratio=ratio,
            sd=sd,
            pvalue=np.where(off, pvalues[t], np.nan),
            pvalue_adjusted=adjusted,
            better=off & (np.nan_to_num(adjusted, nan=1.0) < 1.0 - confidence),
            correction=correction,
            confidence=confidence,
            adjusted_confidence=level,
            threshold=threshold,
            n_resamples=n_resamples,
            dt=dt,
        )
    return out


def _pairwise_ratios(scores, task, n_resamples, dt, rng):
    """Violation ratios and bootstrap SDs of every ordered pair (diagonal NaN)."""
    where = f" for task {task!r}" if task else ""
    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise ArgumentError(f"`scores`{where} must map at least two system names to their scores.")
    names = [str(k) for k in scores]
    samples = [as_scores(v, f"scores[{k!r}]{where}") for k, v in scores.items()]
    boots = [_Resamples(x, n_resamples, rng) for x in samples]
    k = len(samples)
    ratio = np.full((k, k), np.nan)
    sd = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(i + 1, k):
            ratio[i, j], sd[i, j] = _aso_core(samples[i], samples[j], boots[i], boots[j], dt)
            ratio[j, i], sd[j, i] = 1.0 - ratio[i, j], sd[i, j]
    return ratio, sd, names


# ---------------------------------------------------------------- effect sizes


def _nct_interval(t: float, df: float, scale: float, confidence: float) -> tuple:
    """Interval for a standardised mean ``ncp / scale`` by inverting the noncentral t.

    The bounds are the noncentrality parameters under which the observed
    ``t`` is the ``(1 + confidence) / 2`` and ``(1 - confidence) / 2``
    quantile (Steiger and Fouladi 1997); exact under normality.
    """
    from scipy.optimize import brentq

    alpha = 1.0 - confidence
    width = 5.0 + abs(t)

    def cdf(ncp):
        value = stats.nct.cdf(t, df, ncp)
        # scipy's nct.cdf can return NaN far in a tail; the cdf falls with ncp
        return value if np.isfinite(value) else (0.0 if ncp > t else 1.0)

    def bound(target):
        lo, hi = t - width, t + width
        while cdf(lo) < target:
            lo -= width
        while cdf(hi) > target:
            hi += width
        return brentq(lambda ncp: cdf(ncp) - target, lo, hi, xtol=1e-12)

    return (bound(1 - alpha / 2) / scale, bound(alpha / 2) / scale)


def _hedges_correction(df: float) -> float:
    """Hedges' exact small-sample factor ``J(df) = Gamma(df/2) / (sqrt(df/2) Gamma((df-1)/2))``."""
    return float(np.exp(special.gammaln(df / 2) - special.gammaln((df - 1) / 2)) / np.sqrt(df / 2))


def _two_samples(a, b, paired: bool):
    a = as_scores(a, "a", min_n=2)
    b = as_scores(b, "b", min_n=2)
    if paired and a.size != b.size:
        raise ArgumentError(
            f"paired effect sizes need `a` and `b` of equal length; got {a.size} and {b.size}."
        )
    return a, b


def _spread(a, b, paired: bool) -> float:
    """The SD a standardised effect divides by: of the differences, or pooled."""
    if paired:
        return float((a - b).std(ddof=1))
    df = a.size + b.size - 2
    return float(np.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / df))


def _standardised(a, b, paired: bool, confidence: float):
    """``(d, (low, high), df)`` for Cohen's d (pooled SD) or d_z (SD of differences)."""
    sd = _spread(a, b, paired)
    if paired:
        diff = a - b
        scale = np.sqrt(diff.size)
        df = diff.size - 1
    else:
        df = a.size + b.size - 2
        scale = np.sqrt(a.size * b.size / (a.size + b.size))
        diff = None
    if not sd > 0:
        raise ArgumentError(
            "a standardised effect needs spread: the "
            + ("paired differences" if paired else "pooled scores")
            + " have SD 0."
        )
    d = float(((diff.mean()) if paired else (a.mean() - b.mean())) / sd)
    return d, _nct_interval(d * scale, df, scale, confidence), df


def cohens_d(a, b, *, paired: bool = False, confidence: float = 0.95) -> EffectSize:
    """Cohen's d of A over B, or d_z for paired scores, with an exact interval.

    Independent samples: ``d = (mean_A - mean_B) / s_pooled`` with the pooled
    SD (``ddof = 1`` in each group), estimating ``(mu_A - mu_B) / sigma``.
    Paired (``paired=True``): ``d_z = mean(A - B) / sd(A - B)``, estimating
    ``mu_D / sigma_D``. The interval inverts the noncentral t distribution of
    ``t = d sqrt(n_A n_B / (n_A + n_B))`` (or ``d_z sqrt(n)``), exact for
    normal scores (Steiger and Fouladi 1997; Cumming and Finch 2001).
    """
    confidence = as_confidence(confidence)
    a, b = _two_samples(a, b, paired)
    d, ci, _ = _standardised(a, b, paired, confidence)
    return EffectSize(
        name="cohen_dz" if paired else "cohen_d",
        estimate=d,
        low=ci[0],
        high=ci[1],
        confidence=confidence,
        ci_method="noncentral t",
        n_a=a.size,
        n_b=b.size,
        paired=paired,
    )


def hedges_g(a, b, *, paired: bool = False, confidence: float = 0.95) -> EffectSize:
    """Hedges' g: Cohen's d (or d_z) times the exact small-sample correction J(df).

    ``J(df) = Gamma(df / 2) / (sqrt(df / 2) Gamma((df - 1) / 2))`` makes g
    unbiased for the standardised difference under normality (Hedges 1981),
    with ``df = n_A + n_B - 2`` (paired: ``n - 1``). The interval is d's
    noncentral-t interval times the same J.
    """
    confidence = as_confidence(confidence)
    a, b = _two_samples(a, b, paired)
    d, (low, high), df = _standardised(a, b, paired, confidence)
    j = _hedges_correction(df)
    return EffectSize(
        name="hedges_gz" if paired else "hedges_g",
        estimate=j * d,
        low=j * low,
        high=j * high,
        confidence=confidence,
        ci_method="noncentral t x J",
        n_a=a.size,
        n_b=b.size,
        paired=paired,
    )


def _a12_with_interval(a, b, confidence: float):
    """A12 and its Brunner-Munzel t interval (placements, Welch-Satterthwaite df)."""
    n, m = a.size, b.size
    ranks = stats.rankdata(np.concatenate([a, b]))
    ra, rb = ranks[:n], ranks[n:]
    a12 = (ra.mean() - (n + 1) / 2) / m
    # placements: joint rank minus within-group rank, in the variance of Brunner-Munzel
    pa = ra - stats.rankdata(a)
    pb = rb - stats.rankdata(b)
    va = pa.var(ddof=1) / (m * m)
    vb = pb.var(ddof=1) / (n * n)
    se = np.sqrt(va / n + vb / m)
    if not se > 0:
        warnings.warn(
            "the two samples are completely separated (or identical): the Brunner-Munzel "
            "variance is 0 and the interval for A12 shrinks to a point.",
            VarevalWarning,
            stacklevel=3,
        )
        return float(a12), (float(a12), float(a12))
    df = (va / n + vb / m) ** 2 / ((va / n) ** 2 / (n - 1) + (vb / m) ** 2 / (m - 1))
    half = stats.t.ppf((1 + confidence) / 2, df) * se
    return float(a12), (max(0.0, a12 - half), min(1.0, a12 + half))


def vargha_delaney_a12(a, b, *, confidence: float = 0.95) -> EffectSize:
    """Vargha and Delaney's A12 = P(A > B) + P(A = B) / 2, with an interval.

    The estimand is the probability that a random run of A beats a random run
    of B, ties counting half (Vargha and Delaney 2000); the estimate is the
    Mann-Whitney ``U / (n_A n_B)`` from mid-ranks. The interval is Brunner
    and Munzel's (2000): ``A12 +- t_df se`` with the placement variance and
    Welch-Satterthwaite df, valid under unequal variances and ties, clipped
    to [0, 1].
    """
    confidence = as_confidence(confidence)
    a, b = _two_samples(a, b, paired=False)
    a12, ci = _a12_with_interval(a, b, confidence)
    return EffectSize(
        name="vargha_delaney_a12",
        estimate=a12,
        low=ci[0],
        high=ci[1],
        confidence=confidence,
        ci_method="Brunner-Munzel t",
        n_a=a.size,
        n_b=b.size,
        paired=False,
    )


def cliffs_delta(a, b, *, confidence: float = 0.95) -> EffectSize:
    """Cliff's delta = P(A > B) - P(A < B) = 2 A12 - 1, with an interval.

    The estimand is the dominance probability difference (Cliff 1993);
    the interval is A12's Brunner-Munzel interval mapped by ``2 p - 1``.
    """
    confidence = as_confidence(confidence)
    a, b = _two_samples(a, b, paired=False)
    a12, (low, high) = _a12_with_interval(a, b, confidence)
    return EffectSize(
        name="cliffs_delta",
        estimate=2 * a12 - 1,
        low=2 * low - 1,
        high=2 * high - 1,
        confidence=confidence,
        ci_method="Brunner-Munzel t",
        n_a=a.size,
        n_b=b.size,
        paired=False,
    )


def effect_sizes(a, b, *, paired: bool = False, confidence: float = 0.95) -> dict:
    """Every effect size of A over B at once, keyed by its ``name``.

    Independent samples: Cohen's d, Hedges' g, A12 and Cliff's delta; paired:
    d_z and g_z (the rank-based effects compare two distributions, not pairs).
    Scores without spread (every score, or every paired difference, equal)
    have no standardised effect: d and g are then left out with a warning,
    and the rank-based effects still given.
    """
    a, b = _two_samples(a, b, paired)
    sizes = []
    if _spread(a, b, paired) > 0:
        sizes += [
            cohens_d(a, b, paired=paired, confidence=confidence),
            hedges_g(a, b, paired=paired, confidence=confidence),
        ]
    else:
        warnings.warn(
            "Cohen's d and Hedges' g are left out: the "
            + ("paired differences" if paired else "pooled scores")
            + " have SD 0, so no standardised effect exists.",
            VarevalWarning,
            stacklevel=2,
        )
    if not paired:
        sizes += [
            vargha_delaney_a12(a, b, confidence=confidence),
            cliffs_delta(a, b, confidence=confidence),
        ]
    return {r.name: r for r in sizes}
