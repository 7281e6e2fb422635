"""Tuning curves: simultaneous confidence bands for a CDF and the tuning curves they bound.

Four bands for the CDF ``F`` of the search outcomes, from ``n`` scores:

- ``"dkw"``: the empirical CDF plus or minus the Dvoretzky-Kiefer-Wolfowitz
  (Massart 1990) epsilon; conservative, any distribution;
- ``"ks"``: plus or minus the exact finite-``n`` Kolmogorov-Smirnov critical
  value (``scipy.stats.kstwo``); exact for continuous ``F``;
- ``"ld-et"`` and ``"ld-hd"``: the Learned-Miller-DeStefano bands. The
  ``i``-th order statistic of ``n`` uniforms has the Beta(i, n + 1 - i) law;
  an equal-tailed (``et``) or highest-density (``hd``) interval at pointwise
  level ``c`` for each ``U_(i) = F(Y_(i))`` gives a band, and ``c`` is raised
  until the intervals hold *simultaneously* with the requested confidence.

vareval computes that simultaneous coverage *exactly*: the probability that
every uniform order statistic lies in its interval,
``P(l_i <= U_(i) <= u_i for all i)``, is a boundary-crossing probability of
the empirical process, evaluated by a Poissonised recursion over the band's
breakpoints (Noe 1972; Moscovich and Nadler 2017): the count of a rate-``n``
Poisson process is carried through the ``2n`` breakpoints, each step a short
convolution with a Poisson kernel restricted to the band's window, and the
answer is conditioned on ``N(1) = n``. The pointwise level that makes this
probability equal the requested confidence is found by a safeguarded secant
search on ``-log(1 - c)``. The anchor (``opda``) estimates the same level by
Monte Carlo over 100,000 samples instead.

A CDF band ``[F_lo, F_hi]`` bounds every quantile and hence the whole tuning
curve at once: the *upper* CDF band gives the *lower* curve and vice versa,
so the tuning-curve band holds simultaneously for every ``k``.

References
----------
Learned-Miller, E. and DeStefano, J. (2008). A probabilistic upper bound on
    differential entropy. IEEE Transactions on Information Theory 54(11).
Lourie, N., Cho, K. and He, H. (2023). Show your work with confidence:
    confidence bands for tuning curves. arXiv:2311.09480.
Massart, P. (1990). The tight constant in the Dvoretzky-Kiefer-Wolfowitz
    inequality. Annals of Probability 18(3).
Moscovich, A. and Nadler, B. (2017). Fast calculation of boundary crossing
    probabilities for Poisson processes. Statistics & Probability Letters 123.
Noe, M. (1972). The calculation of distributions of two-sided
    Kolmogorov-Smirnov type statistics. Annals of Mathematical Statistics 43.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
from scipy import special

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats._checks import (
    MINIMIZE,
    as_bool,
    as_confidence,
    as_positive_int,
    as_scores,
    renamed_keywords,
)
from vareval.stats._lazy import stats
from vareval.stats._progress import drawn, progress_bar
from vareval.stats._result import Result, renamed_opposite
from vareval.stats.tuning.curves import (
    EmpiricalDistribution,
    _as_bounds,
    _as_k,
    _as_q,
    _minimizing,
)

__all__ = [
    "CDFBand",
    "OrderStatisticBand",
    "TuningComparison",
    "TuningCurveBand",
    "IterationProjection",
    "beta_equal_tailed_interval",
    "beta_highest_density_interval",
    "cdf_band",
    "compare_tuning_curves",
    "dkw_epsilon",
    "order_statistic_band",
    "project_iterations",
    "simultaneous_coverage",
]

METHODS = ("ld-hd", "ld-et", "ks", "dkw")
# opda's spellings of the same bands, accepted everywhere a band is named
ALIASES = {"ld_highest_density": "ld-hd", "ld_equal_tailed": "ld-et"}
# the bands' names in words, for the first place a short name is printed
METHOD_NAMES = {
    "ld-hd": "Learned-Miller-DeStefano highest-density band",
    "ld-et": "Learned-Miller-DeStefano equal-tailed band",
    "ks": "Kolmogorov-Smirnov band",
    "dkw": "Dvoretzky-Kiefer-Wolfowitz band",
}


def _as_method(method) -> str:
    method = ALIASES.get(method, method) if isinstance(method, str) else method
    if method not in METHODS:
        raise ArgumentError(
            f"`method` must be one of {', '.join(repr(m) for m in METHODS)} "
            f"(or opda's {', '.join(repr(m) for m in ALIASES)}); got {method!r}."
        )
    return method


def dkw_epsilon(n, confidence) -> float:
    r"""Return the half-width of the Dvoretzky-Kiefer-Wolfowitz band (opda's ``dkw_epsilon``).

    :math:`\epsilon = \sqrt{\log(2 / \alpha) / (2 n)}` with
    :math:`\alpha = 1 - \text{confidence}`: the empirical CDF of ``n``
    draws is within ``epsilon`` of the true CDF everywhere with probability
    at least ``confidence`` (Massart 1990's tight constant). ``confidence = 1``
    gives ``inf``.
    """
    n = as_positive_int(n, "n")
    c = float(confidence) if not isinstance(confidence, bool) else np.nan
    if not 0 <= c <= 1:
        raise ArgumentError(f"`confidence` must be a number in [0, 1]; got {confidence!r}.")
    return np.inf if c == 1 else float(np.sqrt(np.log(2.0 / (1.0 - c)) / (2.0 * n)))


def _beta_iv(a, b, coverage):
    try:
        a, b, cov = np.broadcast_arrays(*(np.asarray(v, float) for v in (a, b, coverage)))
    except (TypeError, ValueError):
        raise ArgumentError(
            "`a`, `b` and `coverage` must be numbers (or arrays that broadcast)."
        ) from None
    if not (np.all(np.isfinite(a) & (a > 0)) and np.all(np.isfinite(b) & (b > 0))):
        raise ArgumentError("`a` and `b` of a Beta law must be finite and positive.")
    if not np.all((cov >= 0) & (cov <= 1)):
        raise ArgumentError("`coverage` must lie in [0, 1].")
    return a, b, cov


def beta_equal_tailed_interval(a, b, coverage):
    """Return the equal-tailed interval of Beta(a, b) with mass ``coverage``.

    ``(x, y)`` with ``P(X < x) = P(X > y) = (1 - coverage) / 2`` (opda's
    ``beta_equal_tailed_interval``); arguments broadcast.
    """
    a, b, cov = _beta_iv(a, b, coverage)
    tail = (1.0 - cov) / 2.0
    return special.betaincinv(a, b, tail)[()], (1.0 - special.betaincinv(b, a, tail))[()]


def beta_highest_density_interval(a, b, coverage):
    """Return the highest-density interval of Beta(a, b) with mass ``coverage``.

    The shortest interval ``[x, y]`` holding ``coverage`` of the mass, whose
    ends have equal density (opda's ``beta_highest_density_interval``). It
    exists when ``a > 1`` or ``b > 1``; a monotone density (``a <= 1 < b`` or
    ``b <= 1 < a``) gives an interval that touches 0 or 1. Arguments
    broadcast; solved by Newton's method to about 1e-14, not bisection.
    """
    a, b, cov = _beta_iv(a, b, coverage)
    if np.any((a <= 1) & (b <= 1)):
        raise ArgumentError(
            "Beta(a, b) has a highest-density interval only when a > 1 or b > 1."
        )
    x = np.where(a <= 1, 0.0, special.betaincinv(a, b, np.clip(1.0 - cov, 0, 1)))
    y = np.where(a <= 1, special.betaincinv(a, b, cov), 1.0)
    both = (a > 1) & (b > 1) & (cov > 0) & (cov < 1)
    if np.any(both):
        aa, bb, alpha = a[both], b[both], 1.0 - cov[both]
        flip = aa > bb  # solve Beta(min, max) and mirror: X ~ 1 - Beta(b, a)
        lo_a, hi_b = np.where(flip, bb, aa), np.where(flip, aa, bb)
        xs, ys, _ = _beta_hd_interval(lo_a, hi_b, alpha)
        x[both], y[both] = np.where(flip, 1.0 - ys, xs), np.where(flip, 1.0 - xs, ys)
    mode = np.clip((a - 1) / np.where(a + b > 2, a + b - 2, 1.0), 0, 1)
    x = np.where((cov == 0) & (a > 1) & (b > 1), mode, np.where(cov == 1, 0.0, x))
    y = np.where((cov == 0) & (a > 1) & (b > 1), mode, np.where(cov == 1, 1.0, y))
    return x[()], y[()]


# -- the exact simultaneous coverage ------------------------------------------


def _poisson_kernels(lam: np.ndarray):
    """Return a flat array of truncated Poisson pmfs, one per rate, and offsets."""
    lengths = np.where(lam > 0, np.ceil(lam + 12.0 * np.sqrt(lam) + 30.0), 1).astype(
        np.int64
    )
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    owner = np.repeat(np.arange(lam.size), lengths)
    j = np.arange(offsets[-1]) - offsets[owner]
    lam_o = lam[owner]
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = j * np.log(lam_o) - lam_o - special.gammaln(j + 1.0)
    flat = np.where(lam_o > 0, np.exp(logp), (j == 0).astype(float))
    return flat, offsets


def simultaneous_coverage(lower, upper) -> float:
    r"""Return the exact probability that all uniform order statistics are in bounds.

    Computes :math:`P(l_i \le U_{(i)} \le u_i,\ i = 1, \dots, n)` for the
    order statistics of ``n`` independent Uniform(0, 1) variables, which is
    the simultaneous coverage of the CDF band ``[l, u]`` for any continuous
    distribution. The event is a two-sided boundary-crossing event for the
    empirical process; it is evaluated exactly (up to floating point) by the
    Poissonised recursion of Noe (1972) and Moscovich and Nadler (2017): a
    rate-``n`` Poisson count is propagated through the sorted ``2n``
    breakpoints, truncated to the band's window at each, and the result is
    conditioned on ``N(1) = n``. Cost: ``O(n w)`` for a band ``w`` counts
    wide, with short Poisson kernels, so about ``O(n^{3/2})`` for the
    Learned-Miller-DeStefano and KS bands.

    Parameters
    ----------
    lower, upper : array_like
        Non-decreasing bounds ``l_i <= u_i`` in ``[0, 1]`` for
        ``U_(1), ..., U_(n)``.

    Returns
    -------
    float
        The coverage probability.
    """
    lo_b = np.asarray(lower, dtype=float)
    hi_b = np.asarray(upper, dtype=float)
    if lo_b.ndim != 1 or lo_b.shape != hi_b.shape or lo_b.size == 0:
        raise ArgumentError(
            "`lower` and `upper` must be 1-D arrays of the same, non-zero length."
        )
    if not (np.all(np.isfinite(lo_b)) and np.all(np.isfinite(hi_b))):
        raise ArgumentError("`lower` and `upper` must be finite.")
    if np.any(np.diff(lo_b) < 0) or np.any(np.diff(hi_b) < 0):
        raise ArgumentError("`lower` and `upper` must be non-decreasing.")
    n = lo_b.size
    return _crossing_probability(lo_b, hi_b, np.arange(1, n + 1), n)


def _crossing_probability(lo_b, hi_b, idx, n: int, bar=None) -> float:
    """``P(lo_j <= U_(idx_j) <= hi_j for all j)`` for ``n`` uniforms (see above).

    ``bar``, a progress bar, is reset to the ``2 m`` breakpoints and moved
    every hundredth of them.

    ``idx`` is an increasing subset of ``1..n`` (all of it for a full band).
    At a lower bound of ``U_(i)`` the Poisson count must be at most ``i - 1``,
    at an upper bound at least ``i``; between breakpoints the count can only
    grow, so each breakpoint also inherits the next lower bound's cap and the
    last upper bound's floor.
    """
    lo_b, hi_b = np.clip(lo_b, 0.0, 1.0), np.clip(hi_b, 0.0, 1.0)
    if np.any(lo_b > hi_b):
        return 0.0
    m = idx.size
    times = np.concatenate([lo_b, hi_b])
    is_upper = np.concatenate([np.zeros(m, bool), np.ones(m, bool)])
    order = np.argsort(times, kind="stable")
    times, is_upper = times[order], is_upper[order]
    index = np.concatenate([idx, idx])[order]
    # cap: the next lower bound's i - 1 (n past the last); floor: the last upper bound's i
    cap = np.where(~is_upper, index - 1, n)
    cap = np.minimum.accumulate(cap[::-1])[::-1].tolist()
    floor = np.maximum.accumulate(np.where(is_upper, index, 0)).tolist()
    lam = n * np.diff(np.concatenate([[0.0], times, [1.0]]))
    kernels, offsets = _poisson_kernels(lam)
    offsets = offsets.tolist()
    state = np.ones(1)
    base = 0  # the count that state[0] stands for
    tick = max(1, (2 * m) // 100) if bar is not None else 0
    if bar is not None:
        bar.reset(total=2 * m)
    for e in range(2 * m):
        if tick and e % tick == tick - 1:
            bar.update(tick)
        top = cap[e]
        width = top - base + 1  # jumps beyond this leave the band
        kern = kernels[offsets[e] : min(offsets[e + 1], offsets[e] + width)]
        state = _convolve(state, kern)
        new_base = max(base, floor[e])
        stop = min(base + state.size, top + 1)
        if stop <= new_base:
            return 0.0
        state = state[new_base - base : stop - base]
        base = new_base
    # last step to t = 1, keeping only N(1) = n
    need = n - base
    kern = kernels[offsets[2 * m] : offsets[2 * m + 1]]
    if need < 0 or need >= state.size + kern.size - 1:
        return 0.0
    j = np.arange(state.size)
    ok = (need - j >= 0) & (need - j < kern.size)
    mass = float(np.dot(state[ok], kern[need - j[ok]]))
    log_pn = n * np.log(n) - n - special.gammaln(n + 1.0)
    return float(min(max(mass * np.exp(-log_pn), 0.0), 1.0))


def _convolve(state, kern):
    """Direct convolution for short kernels; FFT (negative round-off cut) for long ones."""
    if kern.size == 1:
        return state * kern[0]
    if min(state.size, kern.size) < 128:
        return np.convolve(state, kern)
    from scipy import fft  # what scipy.signal.fftconvolve does, without its per-call checks

    size = state.size + kern.size - 1
    fast = fft.next_fast_len(size, True)
    out = fft.irfft(fft.rfft(state, fast) * fft.rfft(kern, fast), fast)[:size]
    return np.maximum(out, 0.0)


# -- pointwise Beta intervals --------------------------------------------------


def _beta_log_density(x, a, b):
    """Unnormalised log density of Beta(a, b)."""
    with np.errstate(divide="ignore"):
        return (a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x)


def _hd_upper_given_lower(target, a, b, s_mode, s):
    """Solve log-density(y) = target for y in (mode, 1); return ``(y, 1 - y)``.

    Newton's method in ``s = -log(1 - y)``, where the log density
    ``(a - 1) log(1 - e^{-s}) - (b - 1) s`` is concave and decreasing past the
    mode, so the iteration converges monotonically after at most one
    overshoot and ``1 - y`` keeps full relative precision near 1.
    """
    for _ in range(60):
        em = np.exp(-s)
        f = (a - 1.0) * np.log(-np.expm1(-s)) - (b - 1.0) * s - target
        d = (a - 1.0) * em / (-np.expm1(-s)) - (b - 1.0)
        s_new = s - f / d
        s_new = np.where(
            s_new <= s_mode, 0.5 * (s + s_mode), np.minimum(s_new, 2 * s + 50)
        )
        done = np.abs(s_new - s) <= 1e-14 * s
        s = s_new
        if np.all(done):
            break
    return -np.expm1(-s), np.exp(-s), s


def _beta_hd_interval(a, b, alpha, x0=None):
    """Highest-density intervals of Beta(a, b) (1 < a <= b) with mass ``1 - alpha``.

    Newton's method on the lower end ``x`` in ``(0, mode)``, with the upper
    end ``y(x)`` of equal density, guarded by a bisection bracket, iterating
    only on the entries that have not converged. The tail masses are computed
    separately (``I_x(a, b)`` and ``I_{1-y}(b, a)``) so that tiny ``alpha``
    keeps full relative precision. Returns ``x``, ``y`` and ``1 - y``.
    """
    mode = (a - 1.0) / (a + b - 2.0)
    s_mode = -np.log1p(-mode)
    alpha = np.broadcast_to(np.asarray(alpha, float), np.shape(a))
    x = special.betaincinv(a, b, alpha / 2.0) if x0 is None else np.array(x0, float)
    x = np.clip(x, 1e-300, mode * (1 - 1e-12))
    z0 = special.betaincinv(b, a, alpha / 2.0)
    s = np.maximum(-np.log(z0), s_mode * 1.5 + 1e-3)
    y, z = -np.expm1(-s), np.exp(-s)
    left, right = np.zeros_like(x), mode.copy()
    logb = special.betaln(a, b)
    act = np.arange(x.size)
    for _ in range(200):
        xa, aa, ba = x[act], a[act], b[act]
        with np.errstate(divide="ignore"):
            target = (aa - 1.0) * np.log(xa) + (ba - 1.0) * np.log1p(-xa)
        ya, za, sa = _hd_upper_given_lower(target, aa, ba, s_mode[act], s[act])
        y[act], z[act], s[act] = ya, za, sa
        h = alpha[act] - special.betainc(aa, ba, xa) - special.betainc(ba, aa, za)
        la = np.where(h > 0, xa, left[act])
        ra = np.where(h <= 0, xa, right[act])
        left[act], right[act] = la, ra
        dens = np.exp(target - logb[act])
        dlx = (aa - 1.0) / xa - (ba - 1.0) / (1.0 - xa)
        with np.errstate(divide="ignore", over="ignore"):
            dly = (aa - 1.0) / ya - (ba - 1.0) / za
        slope = dens * (dlx / dly - 1.0)  # d coverage / dx (< 0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x_new = xa - h / slope
        bad = ~np.isfinite(x_new) | (x_new <= la) | (x_new >= ra)
        x_new = np.where(bad, 0.5 * (la + ra), x_new)
        done = (np.abs(h) <= 1e-12 * alpha[act]) | (np.abs(x_new - xa) <= 1e-14 * xa)
        x[act] = np.where(done, xa, x_new)
        act = act[~done]
        if act.size == 0:
            break
    return x, y, z


# Up to this many scores an LD band bounds every order statistic; past it, a grid
# of them (see _first_half): exact coverage still, at a fraction of the cost.
EXACT_N = 40_000
GRID_SPACING = 4.0


def _first_half(n: int) -> np.ndarray:
    """Indices ``i <= (n + 1) // 2`` an LD band bounds; the rest are their mirrors.

    All of them up to :data:`EXACT_N`. Past it, a grid whose spacing near
    ``i`` is ``sd_i / GRID_SPACING`` counts, ``sd_i = sqrt(i (n - i) / n)``
    the standard deviation of the count below ``F^{-1}(i / n)``: every index
    in the tails, about ``sqrt(n) / 8`` apart in the middle. The band is
    about ``6.6 sd_i`` counts wide there, so bounding only the grid (between two
    grid points the edges are the outer ones': order statistics increase)
    widens it by a few per cent, while its coverage stays exact.
    """
    half = (n + 1) // 2
    i = np.arange(1, half + 1)
    if n <= EXACT_N:
        return i
    spacing = np.maximum(np.floor(np.sqrt(i * (n - i) / n) / GRID_SPACING), 1.0)
    steps = np.floor(np.cumsum(1.0 / spacing) + 1e-9)
    keep = np.flatnonzero(np.diff(steps, prepend=0.0) > 0)
    return np.unique(np.append(i[keep], [1, half]))


def _order_statistic_intervals(n: int, alpha: float, kind: str, warm=None, first=None):
    """Pointwise intervals at level 1 - alpha (equal-tailed or HD) and their indices.

    U_(i) and 1 - U_(n+1-i) have the same law, so the intervals are computed
    for the indices ``first`` of the first half (Beta(i, n + 1 - i) with
    i <= n + 1 - i; default all of them) and mirrored. Returns the lower and
    upper ends, the warm start for the next HD solve and the indices (increasing).
    """
    i = (np.arange(1, (n + 1) // 2 + 1) if first is None else first).astype(float)
    a, b = i, n + 1.0 - i
    if kind == "et":
        x = special.betaincinv(a, b, alpha / 2.0)
        z = special.betaincinv(b, a, alpha / 2.0)  # 1 - upper end
    elif n == 1:  # uniform: no highest-density interval; use the central one
        x, z = np.array([alpha / 2.0]), np.array([alpha / 2.0])
    else:
        # U_(1) ~ Beta(1, n) has a decreasing density: HD interval [0, 1 - alpha^(1/n)]
        x, z = np.empty(i.size), np.empty(i.size)
        x[0], z[0] = 0.0, np.exp(np.log(alpha) / n)
        if i.size > 1:
            x[1:], _, z[1:] = _beta_hd_interval(a[1:], b[1:], alpha, x0=warm)
            warm = x[1:].copy()
    # U_(n+1-i) ~ 1 - U_(i): its interval is [1 - upper_i, 1 - lower_i]; for odd n
    # the middle order statistic is its own mirror
    skip = int(n + 1.0 - i[-1] == i[-1])
    lo = np.concatenate([x, z[::-1][skip:]])
    hi = np.concatenate([1.0 - z, (1.0 - x)[::-1][skip:]])
    idx = np.concatenate([i, (n + 1.0 - i)[::-1][skip:]]).astype(np.int64)
    return lo, hi, warm, idx


def _fill(values, idx, n: int, side: str) -> np.ndarray:
    """A grid band's edge at every order statistic: the nearest grid point's outward."""
    at = np.arange(1, n + 1)
    if side == "lower":  # the last grid index at or below i
        return values[np.searchsorted(idx, at, side="right") - 1]
    return values[np.searchsorted(idx, at, side="left")]  # the first at or above i


@dataclasses.dataclass(frozen=True, repr=False)
class OrderStatisticBand(Result):
    """Simultaneous intervals for the uniform order statistics ``U_(1..n)``.

    No figure: the order-statistic indices of a band, not yet a curve;
    cdf_band(...).plot() draws the band on data.

    Attributes
    ----------
    n : int
        Sample size.
    method : str
        ``"ld-hd"``, ``"ld-et"``, ``"ks"`` or ``"dkw"``.
    confidence : float
        Requested simultaneous confidence.
    lower, upper : ndarray
        ``l_i <= U_(i) <= u_i`` for ``i = 1..n``.
    level : float
        Pointwise level of the Beta intervals (LD bands) or the band's
        half-width epsilon (KS, DKW).
    coverage : float
        Exact simultaneous coverage of the band for continuous data.
    """

    n: int
    method: str
    confidence: float
    lower: np.ndarray
    upper: np.ndarray
    level: float
    coverage: float

    def to_frame(self):
        """One row per order statistic ``i = 1..n``: ``lower`` and ``upper``."""
        import pandas as pd

        i = np.arange(1, self.n + 1)
        return pd.DataFrame({"i": i, "lower": self.lower, "upper": self.upper})


def _ld_solve(n: int, confidence: float, kind: str, bar=None):
    """Find the pointwise level whose intervals hold jointly with ``confidence``.

    Root finding on ``x = -log(alpha)``, ``alpha = 1 - c``, between the
    obvious bracket ``alpha = 1 - confidence`` (coverage <= confidence) and
    the Bonferroni level ``alpha = (1 - confidence) / n`` (coverage >=
    confidence), starting from an asymptotic guess and taking secant steps on
    ``logit(coverage)``, bisecting whenever a step leaves the bracket. ``bar``
    (a progress bar) follows each coverage evaluation's recursion.
    """
    beta = 1.0 - confidence
    if n == 1:
        lo, hi, _, _ = _order_statistic_intervals(1, beta, kind)
        return lo, hi, confidence, float(hi[0] - lo[0])
    x_lo, x_hi = -np.log(beta), -np.log(beta / n)
    warm = None
    cache = {}
    first = _first_half(n)

    def g(x):
        nonlocal warm
        lo, hi, warm, idx = _order_statistic_intervals(n, np.exp(-x), kind, warm, first)
        if bar is not None:
            bar.set_description(f"band coverage, step {len(cache) + 1}", refresh=False)
        cov = _crossing_probability(lo, hi, idx, n, bar)
        cache[x] = (lo, hi, idx, cov)
        cov_c = min(max(cov, 1e-300), 1 - 1e-16)
        return np.log(cov_c / (1 - cov_c)) - np.log(confidence / beta), cov

    # Start from a fit of -log(alpha) + log(beta) against log log n and
    # log beta (least squares over n = 3..5000, confidence 0.1..0.999; within
    # 0.6 everywhere): the level grows like log log n (Learned-Miller and
    # DeStefano 2008).
    big_l, lb = np.log(np.log(max(n, 2))), np.log(beta)
    fit = 0.644 + 0.704 * big_l - 0.100 * big_l * lb - 0.053 * lb + 0.224 * big_l**2
    x = min(max(fit - lb, x_lo), x_hi)
    x_prev = f_prev = None
    best, best_err = x, np.inf
    for _ in range(80):
        f, cov = g(x)
        if abs(cov - confidence) < best_err:
            best, best_err = x, abs(cov - confidence)
        if best_err < 1e-10:
            break
        if f < 0:
            x_lo = x
        else:
            x_hi = x
        if x_hi - x_lo < 1e-14:
            break
        if x_prev is None or f == f_prev:
            x_next = x + (0.15 if f < 0 else -0.15)
        else:
            x_next = x - f * (x - x_prev) / (f - f_prev)
        if not x_lo < x_next < x_hi:
            x_next = 0.5 * (x_lo + x_hi)
        x_prev, f_prev, x = x, f, x_next
    lo, hi, idx, cov = cache[best]
    if idx.size < n:
        lo, hi = _fill(lo, idx, n, "lower"), _fill(hi, idx, n, "upper")
    return lo, hi, cov, 1.0 - float(np.exp(-best))


@functools.lru_cache(maxsize=64)
def _order_statistic_band_cached(n: int, confidence: float, method: str, show: bool = False):
    with progress_bar(None, "band coverage", show) as bar:
        return _order_statistic_band(n, confidence, method, bar if show else None)


def _order_statistic_band(n: int, confidence: float, method: str, bar):
    if method in ("ks", "dkw"):
        if method == "ks":
            eps = float(stats.kstwo(n).ppf(confidence))
        else:
            eps = dkw_epsilon(n, confidence)
        i = np.arange(1, n + 1)
        lo = np.clip(i / n - eps, 0.0, 1.0)
        hi = np.clip((i - 1) / n + eps, 0.0, 1.0)
        # P(all in band) = P(D_n <= eps); the recursion past EXACT_N would cost minutes
        cov = (_crossing_probability(lo, hi, i, n, bar) if n <= EXACT_N
               else float(stats.kstwo(n).cdf(eps)))
        return _frozen(OrderStatisticBand(n, method, confidence, lo, hi, eps, cov))
    lo, hi, cov, level = _ld_solve(n, confidence, method[3:], bar)
    return _frozen(OrderStatisticBand(n, method, confidence, lo, hi, level, cov))


def _frozen(band: OrderStatisticBand) -> OrderStatisticBand:
    """Make the cached band's arrays read-only so no caller can alter the cache."""
    band.lower.flags.writeable = False
    band.upper.flags.writeable = False
    return band


def order_statistic_band(n: int, confidence: float = 0.95, method: str = "ld-hd",
                         progress=False):
    """Return simultaneous intervals for the order statistics of ``n`` uniforms.

    For ``"ld-hd"`` / ``"ld-et"`` the pointwise Beta(i, n + 1 - i) intervals
    (highest-density or equal-tailed) are widened to the pointwise level at
    which they hold *simultaneously* with probability ``confidence``, found
    by exact computation (:func:`simultaneous_coverage`) and root finding;
    the reported ``coverage`` equals ``confidence`` to about 1e-11. For
    ``"ks"`` the intervals are ``[i/n - eps, (i-1)/n + eps]`` with ``eps``
    the exact ``kstwo`` quantile; for ``"dkw"`` ``eps`` is the DKW-Massart
    bound. For ``n = 1`` the highest-density interval does not exist (the
    law is uniform) and the central interval is used. Results are cached.

    Parameters
    ----------
    n : int
        Sample size, >= 1.
    confidence : float, default 0.95
        Simultaneous confidence, strictly between 0 and 1.
    method : {"ld-hd", "ld-et", "ks", "dkw"}
        The band.
    progress : bool or None, default False
        Show a tqdm bar over the exact coverage's recursion (None: on a
        terminal only; see :mod:`vareval.stats._progress`).

    Returns
    -------
    OrderStatisticBand
    """
    n = as_positive_int(n, "n")
    confidence = as_confidence(confidence)
    return _order_statistic_band_cached(n, confidence, _as_method(method), drawn(progress))


# -- CDF bands and tuning-curve bands -------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class TuningCurveBand(Result):
    """A quantile tuning curve with a simultaneous confidence band.

    Attributes
    ----------
    k : ndarray
        Numbers of search iterations.
    estimate : ndarray
        The empirical ``q``-quantile tuning curve.
    lower, upper : ndarray
        The band: with probability at least ``confidence`` the true curve
        lies between them for *every* ``k`` at once (exactly ``confidence``
        for the KS and LD bands with continuous scores).
    q, confidence, method, higher_is_better, n
        How the band was built.
    """

    k: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    q: float
    confidence: float
    method: str
    higher_is_better: bool
    n: int

    _interval = ("lower", "upper")  # simultaneous over every k
    _rows = ("k", "estimate", "lower", "upper")
    _deprecated = {"minimize": renamed_opposite("higher_is_better")}


@dataclasses.dataclass(frozen=True, repr=False)
class CDFBand(Result):
    """A simultaneous confidence band for the CDF of the search outcomes.

    Attributes
    ----------
    points : ndarray
        ``[a, y_(1), ..., y_(n), b]``: the band is a step function that is
        constant on ``[points[j], points[j + 1])``.
    lower_cdf, estimate_cdf, upper_cdf : ndarray
        Band edges and the empirical CDF at each of ``points``.
    a, b : float
        Bounds of the support.
    n, method, confidence : int, str, float
        Sample size, band and requested confidence.
    level : float
        Pointwise Beta level (LD) or half-width epsilon (KS, DKW).
    coverage : float
        Exact simultaneous coverage for continuous scores (for DKW this
        exceeds ``confidence``: the DKW bound is conservative).
    """

    points: np.ndarray
    lower_cdf: np.ndarray
    estimate_cdf: np.ndarray
    upper_cdf: np.ndarray
    a: float
    b: float
    n: int
    method: str
    confidence: float
    level: float
    coverage: float

    _rows = ("points", "lower_cdf", "estimate_cdf", "upper_cdf")

    def distributions(self):
        """Return the band edges and the estimate as empirical distributions.

        ``lower`` has the *lower* CDF (it is stochastically largest) and so
        gives the *upper* tuning curve; ``upper`` gives the lower curve.
        """
        ys = self.points[1:-1]
        return (
            EmpiricalDistribution._from_cdf(
                ys, self.lower_cdf[0], self.lower_cdf[1:-1], self.a, self.b
            ),
            EmpiricalDistribution(ys, a=self.a, b=self.b),
            EmpiricalDistribution._from_cdf(
                ys, self.upper_cdf[0], self.upper_cdf[1:-1], self.a, self.b
            ),
        )

    @renamed_keywords(minimize=MINIMIZE)
    def tuning_curve(
        self, k, q: float = 0.5, *, higher_is_better: bool = True
    ) -> TuningCurveBand:
        """Return the ``q``-quantile tuning curve and its simultaneous band at ``k``.

        The upper CDF band gives the lower curve and the lower CDF band the
        upper curve; because the CDF band holds everywhere at once, the curve
        band holds for every ``k`` at once (Lourie et al. 2023).

        Parameters
        ----------
        k : float or array_like
            Numbers of search iterations (real, >= 1, any shape).
        q : float, default 0.5
            Quantile of the best-of-``k`` score (the median by default).
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, q = _as_k(k), _as_q(q)
        higher_is_better = not _minimizing(higher_is_better)
        lower_cdf, point, upper_cdf = self.distributions()

        def curve(dist):
            return np.asarray(dist.quantile_tuning_curve(k, q, higher_is_better=higher_is_better))

        return TuningCurveBand(
            k=k,
            estimate=curve(point),
            lower=curve(upper_cdf),
            upper=curve(lower_cdf),
            q=q,
            confidence=self.confidence,
            method=self.method,
            higher_is_better=higher_is_better,
            n=self.n,
        )


def _cdf_band_iv(scores, confidence, a, b, method, warn_ties):
    a, b = _as_bounds(a, b)
    ys = as_scores(scores, "scores")
    if ys.min() < a or ys.max() > b:
        bad = ys.min() if ys.min() < a else ys.max()
        raise ArgumentError(
            f"`scores` must lie within the bounds [{a:g}, {b:g}]; got {float(bad)!r}. "
            "Widen the bounds or fix the scores."
        )
    confidence = as_confidence(confidence)
    method = _as_method(method)
    n_ties = ys.size - np.unique(ys).size
    if warn_ties and n_ties and method != "dkw":
        warnings.warn(
            f"`scores` has {n_ties} tied value(s); the {method} band's exact coverage "
            "assumes continuous scores (with ties the band is conservative).",
            VarevalWarning,
            stacklevel=3,
        )
    return np.sort(ys), confidence, a, b, method


def cdf_band(
    scores,
    confidence: float = 0.95,
    *,
    a: float = -np.inf,
    b: float = np.inf,
    method: str = "ld-hd",
    warn_ties: bool = True,
    progress=False,
) -> CDFBand:
    """Return a simultaneous confidence band for the CDF of the search outcomes.

    Estimand: the CDF ``F`` of the score of one random-search iteration; the
    band contains ``F`` everywhere with probability ``confidence`` (exactly
    for ``"ks"``, ``"ld-et"`` and ``"ld-hd"`` when the scores are continuous,
    at least for ``"dkw"``). On ``[y_(j), y_(j+1))`` the lower edge is
    ``l_j`` and the upper edge ``u_{j+1}`` of :func:`order_statistic_band`
    (Learned-Miller and DeStefano 2008; Lourie et al. 2023).

    Parameters
    ----------
    scores : array_like
        One score per search iteration, finite and within ``[a, b]``.
    confidence : float, default 0.95
        Simultaneous confidence, strictly between 0 and 1.
    a, b : float
        Bounds of the support (``a < b``). With infinite bounds the band's
        tuning curves can be infinite.
    method : {"ld-hd", "ld-et", "ks", "dkw"}, default "ld-hd"
        The band (see the module docstring); opda's names
        ``"ld_highest_density"`` and ``"ld_equal_tailed"`` are accepted.
    warn_ties : bool, default True
        Warn (:class:`~vareval.errors.VarevalWarning`) when ties make the
        coverage inexact.
    progress : bool or None, default False
        Show a tqdm bar over the band's exact coverage (None: on a terminal
        only).

    Returns
    -------
    CDFBand
    """
    ys, confidence, a, b, method = _cdf_band_iv(
        scores, confidence, a, b, method, warn_ties
    )
    n = ys.size
    osb = order_statistic_band(n, confidence, method, progress)
    points = np.concatenate([[a], ys, [b]])
    lower = np.concatenate([[0.0], osb.lower, [1.0]])
    upper = np.concatenate([osb.upper, [1.0, 1.0]])
    estimate = np.concatenate([[0.0], np.arange(1, n + 1) / n, [1.0]])
    return CDFBand(
        points=points,
        lower_cdf=lower,
        estimate_cdf=estimate,
        upper_cdf=upper,
        a=a,
        b=b,
        n=n,
        method=method,
        confidence=confidence,
        level=osb.level,
        coverage=osb.coverage,
    )


# -- comparing two models --------------------------------------------------------


VERDICTS = ("A better", "B better", "need more data", "bands coincide at the bound")


@dataclasses.dataclass(frozen=True, repr=False)
class TuningComparison(Result):
    """Per-``k`` comparison of two models' tuning curves with simultaneous bands.

    Attributes
    ----------
    k : ndarray
        Numbers of search iterations.
    verdict : ndarray of str
        ``"A better"`` where A's band lies entirely beyond B's (above, or
        below when minimising), ``"B better"`` for the reverse, otherwise
        ``"need more data"``, except where both bands are the single point
        ``a`` or ``b``: there ``"bands coincide at the bound"``, which no
        amount of data can change.
    band_a, band_b : TuningCurveBand
        The two bands. Each holds for all ``k`` with probability
        ``confidence``; for independent searches both hold at once with
        probability ``confidence ** 2``, which is the level of the verdicts
        taken together.
    """

    k: np.ndarray
    verdict: np.ndarray
    band_a: TuningCurveBand
    band_b: TuningCurveBand

    def to_frame(self):
        """One row per ``k``: the verdict and each band's estimate and edges."""
        import pandas as pd

        out = {"k": self.k, "verdict": self.verdict}
        for name, band in (("a", self.band_a), ("b", self.band_b)):
            out |= {f"{name}_{col}": getattr(band, col) for col in ("estimate", "lower", "upper")}
        return pd.DataFrame(out)


def _verdicts(
    band_a: TuningCurveBand, band_b: TuningCurveBand, minimize: bool, bounds=()
) -> np.ndarray:
    if minimize:
        a_better = band_a.upper < band_b.lower
        b_better = band_b.upper < band_a.lower
    else:
        a_better = band_a.lower > band_b.upper
        b_better = band_b.lower > band_a.upper
    # both bands pinned to the same bound: the curves are equal there for certain
    at_bound = (
        (band_a.lower == band_a.upper)
        & (band_b.lower == band_b.upper)
        & (band_a.lower == band_b.lower)
        & np.isin(band_a.lower, bounds)
    )
    return np.select([a_better, b_better, at_bound], VERDICTS[:2] + VERDICTS[3:], VERDICTS[2])


@renamed_keywords(minimize=MINIMIZE)
def compare_tuning_curves(
    scores_a,
    scores_b,
    k=None,
    *,
    a: float,
    b: float,
    confidence: float = 0.95,
    method: str = "ld-hd",
    q: float = 0.5,
    higher_is_better: bool = True,
) -> TuningComparison:
    """Compare two models' quantile tuning curves, ``k`` by ``k``.

    Estimand: the ``q``-quantile (median) tuning curves of two models. For
    each ``k`` the verdict is "A better" when A's lower band is above B's
    upper band (when maximising), "B better" for the reverse, "bands coincide
    at the bound" when both bands are the single point ``a`` (or ``b``), and
    "need more data" when the bands overlap otherwise. Because each band is simultaneous over all
    ``k``, the verdicts hold jointly with probability at least
    ``confidence ** 2`` (independent searches).

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores of the two models' random-search iterations.
    k : array_like, optional
        Search iterations to compare; default ``1 .. max(n_a, n_b)``.
    a, b : float
        Bounds of the score's support, shared by both models.
    confidence, method, q
        As in :func:`cdf_band` and :meth:`CDFBand.tuning_curve`.
    higher_is_better : bool, default True
        False when smaller scores are better (a loss): the curves then track
        the best (smallest) score so far.

    Returns
    -------
    TuningComparison
    """
    as_bool(higher_is_better, "higher_is_better")
    band_a = cdf_band(scores_a, confidence, a=a, b=b, method=method)
    band_b = cdf_band(scores_b, confidence, a=a, b=b, method=method)
    if k is None:
        k = np.arange(1, max(band_a.n, band_b.n) + 1)
    ta = band_a.tuning_curve(k, q, higher_is_better=higher_is_better)
    tb = band_b.tuning_curve(k, q, higher_is_better=higher_is_better)
    return TuningComparison(
        k=ta.k, verdict=_verdicts(ta, tb, not ta.higher_is_better, (a, b)), band_a=ta,
        band_b=tb,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True, repr=False)
class IterationProjection(Result):
    """A *projection* of the iterations per model that would separate two models.

    No figure: a projected number of iterations per model, read from its fields.

    Attributes
    ----------
    k : float
        The number of search iterations compared.
    n_a, n_b : int
        Iterations observed now.
    iterations : int or None
        Smallest number of iterations per model (on the grid tried) at which
        the typical bands would separate, or ``None`` if none up to
        ``max_iterations`` would.
    more_a, more_b : int or None
        How many more iterations that is for each model.
    leader : str or None
        Which model the current point estimates favour ("A" or "B").
    assumption : str
        The projection's assumption, to print next to it.
    """

    k: float
    n_a: int
    n_b: int
    iterations: int | None
    more_a: int | None
    more_b: int | None
    leader: str | None
    assumption: str


def _typical_sample(scores, m: int) -> np.ndarray:
    """Expected-position sample of size ``m``: the interpolated empirical quantiles."""
    ys = np.sort(scores)
    n = ys.size
    pos = np.arange(1, n + 1) / (n + 1)
    return np.interp(np.arange(1, m + 1) / (m + 1), pos, ys)


@renamed_keywords(minimize=MINIMIZE)
def project_iterations(
    scores_a,
    scores_b,
    k: float,
    *,
    a: float,
    b: float,
    confidence: float = 0.95,
    method: str = "ld-hd",
    q: float = 0.5,
    higher_is_better: bool = True,
    max_iterations: int = 5000,
) -> IterationProjection:
    """Project how many iterations per model would likely separate two models at ``k``.

    This is a *projection*, not an inference: it assumes that the observed
    score distributions are the truth and asks at which sample size ``m``
    (the same for both models) the bands computed from a *typical* sample
    (the empirical quantiles at the expected positions ``j / (m + 1)``,
    linearly interpolated) would no longer overlap at ``k``. Sizes are tried
    on a geometric grid up to ``max_iterations`` and refined by bisection.
    Real samples scatter around the typical one, so the answer is a rough
    guide for planning.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores of the two models' search iterations.
    k : float
        The number of search iterations at which to separate the models.
    a, b, confidence, method, q, higher_is_better
        As in :func:`compare_tuning_curves`.
    max_iterations : int, default 5000
        Largest sample size per model to consider.

    Returns
    -------
    IterationProjection
    """
    ya = as_scores(scores_a, "scores_a")
    yb = as_scores(scores_b, "scores_b")
    a, b = _as_bounds(a, b)
    kk = float(_as_k(k).ravel()[0])
    max_iterations = as_positive_int(max_iterations, "max_iterations", minimum=2)
    minimize = not as_bool(higher_is_better, "higher_is_better")

    def separated(m: int):
        sa, sb = _typical_sample(ya, m), _typical_sample(yb, m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            cmp = compare_tuning_curves(
                sa,
                sb,
                [kk],
                a=a,
                b=b,
                confidence=confidence,
                method=method,
                q=q,
                higher_is_better=not minimize,
            )
        return cmp.verdict[0] != VERDICTS[2]

    ea, eb = EmpiricalDistribution(ya, a=a, b=b), EmpiricalDistribution(yb, a=a, b=b)
    pa = ea.quantile_tuning_curve(kk, q, higher_is_better=not minimize)
    pb = eb.quantile_tuning_curve(kk, q, higher_is_better=not minimize)
    leader = None if pa == pb else ("A" if (pa > pb) != minimize else "B")
    n0 = max(ya.size, yb.size)
    assumption = (
        "projection: assumes the observed score distributions are the truth and a "
        "typical sample; not a guarantee"
    )
    found, last_fail = None, n0
    if leader is not None:
        grid = sorted({int(np.ceil(n0 * f)) for f in 2.0 ** np.arange(0, 12, 0.5)})
        for m in (m for m in grid if m <= max_iterations):
            if separated(m):
                found = m
                break
            last_fail = m
        if found is not None and found > n0:
            lo, hi = last_fail, found
            while hi - lo > max(1, hi // 50):
                mid = (lo + hi) // 2
                if separated(mid):
                    hi = mid
                else:
                    lo = mid
            found = hi
    return IterationProjection(
        k=kk,
        n_a=ya.size,
        n_b=yb.size,
        iterations=found,
        more_a=None if found is None else max(0, found - ya.size),
        more_b=None if found is None else max(0, found - yb.size),
        leader=leader,
        assumption=assumption,
    )
