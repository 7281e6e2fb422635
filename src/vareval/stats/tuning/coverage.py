"""Tuning curves: the coverage laboratory for tuning-curve confidence bands.

A simulation that checks how often a confidence band contains the truth,
after the case study of optimal design analysis (Lourie et al. 2023), which
reproduces Tang et al. (2020):

- :class:`ReflectedKDE`: a realistic simulator of random search, a Gaussian
  kernel density estimate of observed scores with the kernel reflected at the
  bounds ``a`` and ``b`` (Jones 1993) and rejection to ``[a, b]``; its CDF,
  quantiles and *true* tuning curves are available exactly;
- :func:`simulated_tuning_curve`: the true expected best-of-``k`` curve of
  any simulator from a large simulation;
- :func:`bootstrap_bands`: the percentile bootstrap bands of the U- and
  V-statistic estimators that Dodge et al. (2019) suggested;
- :func:`bootstrap_coverage` and :func:`band_coverage`: pointwise and
  simultaneous coverage over many simulated searches, each with a
  Clopper-Pearson interval.

Every simulation is vectorised over trials and resamples (in chunks that
bound memory), reproducible given ``rng=``, and can show a tqdm progress bar.

References
----------
Jones, M. C. (1993). Simple boundary correction for kernel density
    estimation. Statistics and Computing 3.
Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y. and Lin, J. (2020). Showing your
    work doesn't always work. ACL.
Lourie, N., Cho, K. and He, H. (2023). Show your work with confidence:
    confidence bands for tuning curves. arXiv:2311.09480.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import (
    MINIMIZE,
    as_bool,
    as_confidence,
    as_positive_int,
    as_rng,
    as_scores,
    renamed_keywords,
)
from vareval.stats._result import Result, interval_method, renamed, renamed_interval
from vareval.stats.tuning.bands import _as_method, order_statistic_band
from vareval.stats.tuning.curves import _as_bounds, _as_k, _minimizing, _u_weights, _v_weights

__all__ = [
    "CoverageResult",
    "ReflectedKDE",
    "band_coverage",
    "bootstrap_bands",
    "bootstrap_coverage",
    "clopper_pearson",
    "simulated_tuning_curve",
]

_CHUNK = 2**22  # floats per working array (32 MB)


def _progress(iterable, total, enabled, desc):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


def clopper_pearson(successes, total, confidence: float = 0.95):
    """Return the equal-tailed Clopper-Pearson interval for a binomial proportion.

    Parameters
    ----------
    successes : int or array_like of int
        Numbers of successes, ``0 <= successes <= total``.
    total : int
        Number of trials.
    confidence : float, default 0.95
        Level of the interval.

    Returns
    -------
    (ndarray, ndarray)
        Lower and upper limits (exact, conservative).
    """
    confidence = as_confidence(confidence)
    x = np.asarray(successes, dtype=float)
    n = float(as_positive_int(total, "total"))
    if np.any(x < 0) or np.any(x > n) or np.any(x % 1 != 0):
        raise ArgumentError("`successes` must be whole numbers between 0 and `total`.")
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore"):
        lo = np.where(x > 0, special.betaincinv(x, n - x + 1, alpha / 2), 0.0)
        hi = np.where(x < n, special.betaincinv(x + 1, n - x, 1 - alpha / 2), 1.0)
    return lo[()], hi[()]


class ReflectedKDE:
    """A Gaussian KDE on ``[a, b]`` with reflection at the bounds: a search simulator.

    The data are reflected to ``2a - y`` and ``2b - y`` and a Gaussian kernel
    of standard deviation ``bandwidth`` is put on each of the ``3n`` points;
    the density is that mixture restricted (renormalised) to ``[a, b]``, and
    samples are drawn from the mixture with rejection of draws outside
    ``[a, b]``. Reflecting once suffices when the bandwidth is small against
    ``b - a`` (Jones 1993).

    Parameters
    ----------
    data : array_like
        Observed scores within ``[a, b]``.
    bw : float
        Bandwidth *factor* as scipy's ``gaussian_kde(bw_method=bw)`` applied
        to the reflected data: the kernel SD is ``bw`` times the SD (ddof=1)
        of the ``3n`` reflected points. The case study uses 0.05 for the
        LSTM and 0.0125 for the MLP of hedwig.tsv.
    a, b : float
        Finite bounds of the support.
    """

    def __init__(self, data, bw: float, *, a: float, b: float):
        a, b = _as_bounds(a, b)
        if not (np.isfinite(a) and np.isfinite(b)):
            raise ArgumentError("`a` and `b` must be finite for a reflected KDE.")
        ys = as_scores(data, "data", min_n=2)
        if ys.min() < a or ys.max() > b:
            raise ArgumentError(f"`data` must lie within [{a:g}, {b:g}].")
        if not (isinstance(bw, float | int) and bw > 0 and np.isfinite(bw)):
            raise ArgumentError(f"`bw` must be a positive number; got {bw!r}.")
        self.a, self.b, self.data = a, b, ys
        self.centres = np.concatenate([2 * a - ys, ys, 2 * b - ys])
        self.bandwidth = float(bw) * float(np.std(self.centres, ddof=1))
        g = self._mixture_cdf(np.array([a, b]))
        self._g_a, self._mass = g[0], g[1] - g[0]

    def __repr__(self) -> str:
        return (
            f"ReflectedKDE(n={self.data.size}, bandwidth={self.bandwidth:.4g}, "
            f"a={self.a:g}, b={self.b:g})"
        )

    def _mixture_cdf(self, y):
        y = np.asarray(y, dtype=float)
        flat = y.ravel()
        out = np.empty(flat.size)
        step = max(1, _CHUNK // self.centres.size)
        for s in range(0, flat.size, step):
            z = (flat[s : s + step, None] - self.centres) / self.bandwidth
            out[s : s + step] = special.ndtr(z).mean(axis=1)
        return out.reshape(y.shape)

    def cdf(self, y):
        """The CDF on ``[a, b]`` (0 below ``a``, 1 above ``b``)."""
        y = np.clip(np.asarray(y, dtype=float), self.a, self.b)
        return ((self._mixture_cdf(y) - self._g_a) / self._mass)[()]

    def fast_cdf(self, y):
        """The CDF interpolated from a table of 2**16 + 1 exact values.

        Linear interpolation; the error is below ``h**2 max|f'| / 8`` for grid
        step ``h = (b - a) / 2**16`` (about 1e-9 for the case study's
        bandwidths). Used by :func:`band_coverage` on millions of points.
        """
        if not hasattr(self, "_table"):
            grid = np.linspace(self.a, self.b, 2**16 + 1)
            self._table = (grid, self.cdf(grid))
        grid, values = self._table
        return np.interp(np.asarray(y, dtype=float), grid, values)[()]

    def pdf(self, y):
        """The density on ``[a, b]`` (0 outside)."""
        y = np.asarray(y, dtype=float)
        z = (y[..., None] - self.centres) / self.bandwidth
        dens = np.exp(-0.5 * z**2).mean(axis=-1) / (self.bandwidth * np.sqrt(2 * np.pi))
        inside = (y >= self.a) & (y <= self.b)
        return np.where(inside, dens / self._mass, 0.0)[()]

    def ppf(self, p):
        """The quantile function, by vectorised bisection to 1e-13 of ``b - a``."""
        p = np.asarray(p, dtype=float)
        if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
            raise ArgumentError("probabilities passed to `ppf` must lie in [0, 1].")
        lo = np.full(p.shape, self.a)
        hi = np.full(p.shape, self.b)
        for _ in range(int(np.ceil(np.log2(1e13))) + 1):
            mid = 0.5 * (lo + hi)
            below = self.cdf(mid) < p
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return (0.5 * (lo + hi))[()]

    def sample(self, size, *, rng=None) -> np.ndarray:
        """Draw ``size`` simulated search outcomes (rejection to ``[a, b]``).

        Parameters
        ----------
        size : int or tuple of int
            Output shape.
        rng : None, int or numpy.random.Generator
            Source of randomness (SPEC 7).
        """
        gen = as_rng(rng)
        shape = (size,) if np.isscalar(size) else tuple(size)
        total = int(np.prod(shape))
        out = np.empty(total)
        filled = 0
        while filled < total:
            want = int((total - filled) / self._mass * 1.05) + 64
            centres = self.centres[gen.integers(0, self.centres.size, want)]
            draws = centres + self.bandwidth * gen.standard_normal(want)
            draws = draws[(draws >= self.a) & (draws <= self.b)][: total - filled]
            out[filled : filled + draws.size] = draws
            filled += draws.size
        return out.reshape(shape)

    @renamed_keywords(minimize=MINIMIZE)
    def quantile_tuning_curve(self, k, q: float = 0.5, *, higher_is_better: bool = True):
        """The true ``q``-quantile tuning curve ``Q(q ** (1 / k))`` of the simulator."""
        k, minimize = _as_k(k), _minimizing(higher_is_better)
        p = 1.0 - (1.0 - q) ** (1.0 / k) if minimize else q ** (1.0 / k)
        return self.ppf(p)

    @renamed_keywords(minimize=MINIMIZE)
    def average_tuning_curve(self, k, *, higher_is_better: bool = True, grid: int = 20001):
        """The true expected best of ``k``, by quadrature of ``1 - F(y)^k``.

        Simpson's rule on ``grid`` points; accurate to about 1e-8 of ``b - a``
        for the bandwidths used in practice.
        """
        k, minimize = _as_k(k), _minimizing(higher_is_better)
        grid = grid + (grid % 2 == 0)
        y = np.linspace(self.a, self.b, grid)
        f = self.cdf(y)
        h = (self.b - self.a) / (grid - 1)
        simpson = np.ones(grid)
        simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
        simpson *= h / 3.0
        kk = k[..., None]
        if minimize:  # E min = a + int P(min > y) dy
            return self.a + np.sum(simpson * (1.0 - f) ** kk, axis=-1)[()]
        return self.a + np.sum(simpson * (1.0 - f**kk), axis=-1)[()]


@renamed_keywords(n_sims="n_trials", minimize=MINIMIZE)
def simulated_tuning_curve(
    sampler, k, *, n_trials: int = 65536, higher_is_better: bool = True, rng=None, progress=False
):
    """Estimate the true expected best-of-``k`` curve of a simulator by simulation.

    Estimand: ``E[max(Y_1, ..., Y_k)]`` (or the minimum) for ``Y`` from
    ``sampler``; the estimate averages ``n_trials`` simulated searches of
    ``max(k)`` iterations each (the case study's "true tuning curve").

    Parameters
    ----------
    sampler : object
        Anything with ``sample(size, rng=...)``, e.g. :class:`ReflectedKDE`.
    k : array_like of int
        Numbers of search iterations (whole numbers >= 1).
    n_trials : int, default 65536
        Number of simulated searches.
    higher_is_better : bool, default True
        False when smaller scores are better (a loss).
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    (ndarray, ndarray)
        The estimated curve at ``k`` and its Monte Carlo standard error.
    """
    k = _as_k(k, integer=True)
    n_trials = as_positive_int(n_trials, "n_trials", minimum=2)
    minimize = not as_bool(higher_is_better, "higher_is_better")
    gen = as_rng(rng)
    kmax = int(k.max())
    step = max(1, _CHUNK // kmax)
    total = np.zeros(k.shape)
    total_sq = np.zeros(k.shape)
    starts = range(0, n_trials, step)
    for s in _progress(starts, len(starts), progress, "true tuning curve"):
        m = min(step, n_trials - s)
        draws = sampler.sample((m, kmax), rng=gen)
        best = (np.minimum if minimize else np.maximum).accumulate(draws, axis=1)
        at_k = best[:, k - 1]
        total += at_k.sum(axis=0)
        total_sq += (at_k**2).sum(axis=0)
    mean = total / n_trials
    var = np.maximum(total_sq / n_trials - mean**2, 0.0) * n_trials / (n_trials - 1)
    return mean, np.sqrt(var / n_trials)


def _estimator_weights(estimator: str, n: int, k: np.ndarray) -> np.ndarray:
    if estimator == "u":
        return _u_weights(n, k)
    if estimator == "v":
        return _v_weights(n, k)
    raise ArgumentError(f"`estimator` must be 'u' or 'v'; got {estimator!r}.")


@renamed_keywords(n_bootstrap="n_resamples", minimize=MINIMIZE)
def bootstrap_bands(
    samples,
    k,
    *,
    estimator: str = "u",
    n_resamples: int = 4096,
    confidence: float = 0.95,
    higher_is_better: bool = True,
    rng=None,
    progress: bool = False,
):
    """Percentile bootstrap bands for the U- or V-statistic tuning-curve estimate.

    Estimand (nominally): the expected best of ``k``, pointwise in ``k``.
    For each sample the ``n`` scores are resampled with replacement
    ``n_resamples`` times, the estimator (Tang et al. 2020 for ``"u"``,
    Dodge et al. 2019 for ``"v"``) is computed on each resample and its
    ``(1 -/+ confidence) / 2`` quantiles form the band. These are the bands
    whose coverage Tang et al. (2020) found to be poor; they are provided
    for contrast, not for inference.

    Parameters
    ----------
    samples : array_like, shape (n,) or (trials, n)
        One search's scores, or many searches (one per row).
    k : array_like of int
        Numbers of search iterations.
    estimator : {"u", "v"}, default "u"
        The estimator to bootstrap.
    n_resamples : int, default 4096
        Resamples per search.
    confidence : float, default 0.95
        Pointwise level of the percentile bands.
    higher_is_better : bool, default True
        False when smaller scores are better (a loss).
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    (ndarray, ndarray)
        Lower and upper bands, shape ``(len(k),)`` or ``(trials, len(k))``.
    """
    x = np.asarray(samples, dtype=float)
    single = x.ndim == 1
    x = np.atleast_2d(x)
    if x.ndim != 2 or x.shape[1] < 1 or not np.all(np.isfinite(x)):
        raise ArgumentError("`samples` must be a finite 1-D or 2-D array of scores.")
    k = np.atleast_1d(_as_k(k, integer=True))
    n_resamples = as_positive_int(n_resamples, "n_resamples", minimum=2)
    confidence = as_confidence(confidence)
    minimize = not as_bool(higher_is_better, "higher_is_better")
    gen = as_rng(rng)
    trials, n = x.shape
    w = _estimator_weights(estimator, n, k)  # (K, n)
    if minimize:
        w = w[:, ::-1]
    qs = [(1 - confidence) / 2, (1 + confidence) / 2]
    lo, hi = np.empty((trials, k.size)), np.empty((trials, k.size))
    step = max(1, _CHUNK // (n_resamples * n))
    starts = range(0, trials, step)
    for s in _progress(starts, len(starts), progress, f"bootstrap ({estimator})"):
        block = x[s : s + step]
        idx = gen.integers(0, n, size=(block.shape[0], n_resamples, n))
        res = np.take_along_axis(block[:, None, :], idx, axis=2)
        res.sort(axis=2)
        est = res @ w.T  # (t, B, K)
        lo[s : s + step], hi[s : s + step] = np.quantile(est, qs, axis=1)
    if single:
        return lo[0], hi[0]
    return lo, hi


@dataclasses.dataclass(frozen=True, repr=False)
class CoverageResult(Result):
    """Coverage of a confidence band in simulation, with Clopper-Pearson intervals.

    The headline is the simultaneous coverage: ``estimate`` with its
    Clopper-Pearson interval ``(low, high)``, also ``confidence_interval()``
    (at the stored level only: the hits are not kept).

    Attributes
    ----------
    estimate : float
        Share of trials whose band contained the truth everywhere at once
        (for :func:`band_coverage`, the whole CDF); formerly ``simultaneous``.
    low, high : float
        Its Clopper-Pearson interval (formerly ``simultaneous_ci``).
    k : ndarray
        Numbers of search iterations checked.
    pointwise : ndarray
        Share of trials whose band contained the true curve at each ``k``.
    pointwise_low, pointwise_high : ndarray
        Clopper-Pearson interval for each pointwise coverage (formerly
        ``pointwise_ci``).
    nominal : float
        The band's nominal level.
    n, n_trials : int
        Sample size per search and number of simulated searches.
    band : str
        Which band was checked.
    confidence : float
        Level of the Clopper-Pearson intervals (formerly ``coverage_confidence``).
    """

    estimate: float
    low: float
    high: float
    k: np.ndarray
    pointwise: np.ndarray
    pointwise_low: np.ndarray
    pointwise_high: np.ndarray
    nominal: float
    n: int
    n_trials: int
    band: str
    confidence: float

    _interval = ("low", "high")
    _deprecated = {
        "simultaneous": renamed("estimate"),
        "simultaneous_ci": interval_method(),
        "pointwise_ci": renamed_interval("pointwise_low", "pointwise_high"),
        "coverage_confidence": renamed("confidence"),
    }

    def to_frame(self):
        """One row per ``k``: pointwise coverage and its Clopper-Pearson interval."""
        import pandas as pd

        return pd.DataFrame(
            {
                "k": self.k,
                "pointwise": self.pointwise,
                "pointwise_low": self.pointwise_low,
                "pointwise_high": self.pointwise_high,
            }
        )


def _coverage_result(k, covered, simultaneous, nominal, n, band, cc) -> CoverageResult:
    trials = covered.shape[0]
    hits = covered.sum(axis=0)
    s_hits = int(simultaneous.sum())
    s_lo, s_hi = clopper_pearson(s_hits, trials, cc)
    p_lo, p_hi = clopper_pearson(hits, trials, cc)
    return CoverageResult(
        estimate=s_hits / trials,
        low=float(s_lo),
        high=float(s_hi),
        k=np.asarray(k),
        pointwise=hits / trials,
        pointwise_low=np.asarray(p_lo),
        pointwise_high=np.asarray(p_hi),
        nominal=nominal,
        n=n,
        n_trials=trials,
        band=band,
        confidence=cc,
    )


@renamed_keywords(n_bootstrap="n_resamples", minimize=MINIMIZE)
def bootstrap_coverage(
    sampler,
    n: int,
    k,
    truth,
    *,
    estimator: str = "u",
    n_trials: int = 1000,
    n_resamples: int = 1024,
    confidence: float = 0.95,
    coverage_confidence: float = 0.95,
    higher_is_better: bool = True,
    rng=None,
    progress: bool = False,
) -> CoverageResult:
    """Estimate the coverage of bootstrap bands for the U or V estimator.

    Simulates ``n_trials`` searches of ``n`` iterations from ``sampler``,
    forms :func:`bootstrap_bands` for each and checks whether ``truth`` (the
    true expected best-of-``k`` curve, e.g. from
    :meth:`ReflectedKDE.average_tuning_curve`) lies inside, pointwise at each
    ``k`` and simultaneously at all of them (Tang et al. 2020; the case study
    of Lourie et al. 2023).

    Parameters
    ----------
    sampler : object
        Anything with ``sample(size, rng=...)``.
    n : int
        Iterations per simulated search.
    k : array_like of int
        Numbers of search iterations to check.
    truth : array_like
        The true curve at ``k``.
    estimator, n_resamples, confidence, higher_is_better
        As in :func:`bootstrap_bands`.
    n_trials : int, default 1000
        Number of simulated searches.
    coverage_confidence : float, default 0.95
        Level of the Clopper-Pearson intervals.
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    CoverageResult
    """
    n = as_positive_int(n, "n")
    n_trials = as_positive_int(n_trials, "n_trials")
    k = np.atleast_1d(_as_k(k, integer=True))
    truth = np.asarray(truth, dtype=float)
    if truth.shape != k.shape:
        raise ArgumentError(f"`truth` must have one value per k ({k.size}).")
    gen = as_rng(rng)
    samples = sampler.sample((n_trials, n), rng=gen)
    lo, hi = bootstrap_bands(
        samples, k, estimator=estimator, n_resamples=n_resamples,
        confidence=confidence, higher_is_better=higher_is_better, rng=gen, progress=progress,
    )  # fmt: skip
    covered = (lo <= truth) & (truth <= hi)
    cc = as_confidence(coverage_confidence, "coverage_confidence")
    band = f"bootstrap-{estimator}"
    return _coverage_result(k, covered, covered.all(axis=1), confidence, n, band, cc)


@renamed_keywords(minimize=MINIMIZE)
def band_coverage(
    sampler,
    n: int,
    *,
    confidence: float = 0.95,
    method: str = "ld-hd",
    n_trials: int = 10000,
    k=None,
    q: float = 0.5,
    higher_is_better: bool = True,
    coverage_confidence: float = 0.95,
    rng=None,
    progress: bool = False,
) -> CoverageResult:
    """Estimate the coverage of the simultaneous CDF bands in simulation.

    For each of ``n_trials`` simulated searches of ``n`` iterations, checks
    whether the CDF band of :func:`vareval.stats.cdf_band` contains the true
    CDF everywhere (``simultaneous``: all ``F(Y_(i))`` within their
    intervals, the event the band guarantees) and, at each ``k``, whether the
    induced tuning-curve band contains the true ``q``-quantile tuning curve
    (``pointwise``; needs ``sampler.ppf``). For continuous distributions the
    simultaneous coverage equals ``confidence`` for the KS and LD bands.

    Parameters
    ----------
    sampler : object
        Anything with ``sample(size, rng=...)`` and ``cdf(y)`` (and ``ppf``,
        ``a`` and ``b`` when ``k`` is given), e.g. :class:`ReflectedKDE`.
    n : int
        Iterations per simulated search.
    confidence, method
        As in :func:`vareval.stats.cdf_band`.
    n_trials : int, default 10000
        Number of simulated searches.
    k : array_like, optional
        Numbers of search iterations at which to check the curve band.
    q, higher_is_better
        The tuning curve checked (as in :meth:`CDFBand.tuning_curve`).
    coverage_confidence : float, default 0.95
        Level of the Clopper-Pearson intervals.
    rng : None, int or numpy.random.Generator
        Source of randomness (SPEC 7).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    CoverageResult
    """
    n = as_positive_int(n, "n")
    n_trials = as_positive_int(n_trials, "n_trials")
    method = _as_method(method)
    minimize = not as_bool(higher_is_better, "higher_is_better")
    gen = as_rng(rng)
    cc = as_confidence(coverage_confidence, "coverage_confidence")
    band = order_statistic_band(n, confidence, method)
    cdf = getattr(sampler, "fast_cdf", sampler.cdf)
    ks = np.atleast_1d(_as_k(k)) if k is not None else np.zeros(0)
    if ks.size:
        # The band's curve at k is a fixed order statistic (or a bound): the
        # index depends only on n, so it is found once for all trials.
        p = 1.0 - (1.0 - q) ** (1.0 / ks) if minimize else q ** (1.0 / ks)
        truth = np.asarray(sampler.ppf(p), dtype=float)
        cum_hi = np.concatenate([band.upper, [1.0, 1.0]])  # at a, y_1..y_n, b
        cum_lo = np.concatenate([[0.0], band.lower, [1.0]])
        idx_low = np.searchsorted(cum_hi, p, side="left")
        idx_up = np.searchsorted(cum_lo, p, side="left")
    step = max(1, _CHUNK // (4 * n))
    simultaneous = np.empty(n_trials, dtype=bool)
    covered = np.empty((n_trials, ks.size), dtype=bool)
    starts = range(0, n_trials, step)
    for s in _progress(starts, len(starts), progress, f"{method} coverage"):
        m = min(step, n_trials - s)
        ys = np.sort(sampler.sample((m, n), rng=gen), axis=1)
        u = np.asarray(cdf(ys), dtype=float)
        simultaneous[s : s + m] = np.all((band.lower <= u) & (u <= band.upper), axis=1)
        if ks.size:
            pts = np.concatenate(
                [np.full((m, 1), sampler.a), ys, np.full((m, 1), sampler.b)], axis=1
            )
            lower, upper = pts[:, idx_low], pts[:, idx_up]
            covered[s : s + m] = (lower <= truth) & (truth <= upper)
    if not ks.size:
        covered = simultaneous[:, None]
        ks = np.array([np.nan])
    return _coverage_result(ks, covered, simultaneous, band.confidence, n, method, cc)
