"""Confidence intervals for the variance components of a mixed model.

Profile-likelihood intervals (lme4's ``confint(method = "profile")``) for every
component's standard deviation and variance, and for each factor's share of
the total variance and its intra-class correlation.

As lme4 does, the profile is that of the *ML* deviance, also for a REML fit: the
interval for a quantity ``g`` is ``{v : min_{g(params) = v} dev(params) -
min dev <= chi2_1(confidence)}``, found by root-finding on each side of the ML
estimate, each point being a constrained minimisation over the other
parameters. A lower end at the boundary (the deviance rises by less than the
cut-off when the variance is 0) is reported as 0, as lme4 does.

References
----------
Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear
mixed-effects models using lme4. *J. Stat. Softw.* 67(1), section 5.1.
Venzon, D. J. and Moolgavkar, S. H. (1988). A method for computing
profile-likelihood-based confidence intervals. *Applied Statistics* 37, 87-94.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.optimize as sopt
from scipy import stats as sst

from vareval.errors import ArgumentError, FitError
from vareval.stats._blas import single_blas_thread
from vareval.stats._checks import as_confidence
from vareval.stats._progress import progress_bar
from vareval.stats._result import Result
from vareval.stats.variance.fit import (
    MixedModelFit,
    _nesting,
    _refit_as,
    _state,
)

_LOG2PI = np.log(2.0 * np.pi)
_OPTS = {"ftol": 1e-12, "gtol": 1e-7, "maxiter": 500}


@dataclasses.dataclass(frozen=True, repr=False)
class VarianceIntervals(Result):
    """Confidence intervals for each variance component and its share and ICC.

    Attributes
    ----------
    components : tuple of str
        The grouping factors followed by ``"Residual"``.
    sd, sd_low, sd_high : ndarray
        Estimated standard deviation of each component (from the fit) and the
        interval's ends.
    variance_low, variance_high : ndarray
        The interval for each variance (the SD interval squared).
    share, share_low, share_high : ndarray
        Each component's share of the total variance and its interval.
    icc, icc_low, icc_high : ndarray
        Intra-class correlation (including the factors a factor is nested in)
        and its interval; NaN for the residual.
    confidence : float
        Confidence level.
    method : str
        ``"profile"`` (ML profile likelihood) or ``"bootstrap"`` (parametric
        bootstrap percentiles).
    n_resamples : int
        Bootstrap replicates (0 for the profile).
    """

    components: tuple
    sd: np.ndarray
    sd_low: np.ndarray
    sd_high: np.ndarray
    variance_low: np.ndarray
    variance_high: np.ndarray
    share: np.ndarray
    share_low: np.ndarray
    share_high: np.ndarray
    icc: np.ndarray
    icc_low: np.ndarray
    icc_high: np.ndarray
    confidence: float
    method: str
    n_resamples: int = 0

    _rows = (
        "components",
        *("sd", "sd_low", "sd_high", "variance_low", "variance_high"),
        *("share", "share_low", "share_high", "icc", "icc_low", "icc_high"),
    )


# --------------------------------------------------------------------------
# the ML deviance with sigma free, and the constrained minimisations


def _intercept_state(fit: MixedModelFit):
    """The fit's refitting state; random slopes are not supported here."""
    st = _state(fit)
    if not hasattr(st, "cp"):
        raise ArgumentError(
            "intervals and bootstrap tests are available for random intercepts "
            "(also per group), not yet for random slopes."
        )
    return st


class _Profiler:
    """ML deviance ``dev(theta, sigma)`` of a fit and its constrained minima."""

    def __init__(self, fit: MixedModelFit):
        st = _intercept_state(fit)
        self.cp = cp = st.cp
        self.n, self.k = cp.n, cp.k
        ml = _refit_as(fit, False)
        self.theta = ml.theta
        self.sigma = ml.sigma
        self.dmin = ml.criterion
        self.codes = st.codes

    def dev(self, theta, sigma):
        """ML deviance at (theta, sigma) and its gradient in theta."""
        try:
            ev = self.cp.evaluate(np.maximum(theta, 0.0), reml=False, grad=True)
        except FitError:  # theta so large the system is singular: step back
            return self.dmin + 1e6, np.zeros_like(theta), np.nan
        s2 = sigma * sigma
        d = ev["logdetA"] + self.n * (_LOG2PI + np.log(s2)) + ev["r2"] / s2
        return d, ev["dlogdetA"] + ev["dr2"] / s2, ev["r2"]

    def _minimise(self, fun, x0, bounds):
        res = sopt.minimize(
            fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=_OPTS
        )
        return float(res.fun), res.x

    def sd_profile(self, j, c, x0=None):
        """Min dev with sigma_j = c (j = k: the residual SD)."""
        k = self.k
        if j == k:
            # sigma fixed: minimise over theta >= 0

            def fun(th):
                d, g, _ = self.dev(th, c)
                return d, g

            x0 = self.theta if x0 is None else x0
            return self._minimise(fun, x0, [(0.0, None)] * k)
        free = [m for m in range(k) if m != j]

        def fun(x):
            th = np.empty(k)
            th[free] = x[:-1]
            s = np.exp(x[-1])
            th[j] = c / s
            d, g, r2 = self.dev(th, s)
            # d/dlog s: n log s^2 -> 2n; r2/s^2 -> -2 r2/s^2; theta_j = c/s -> -theta_j
            gs = 2.0 * self.n - 2.0 * r2 / (s * s) - g[j] * th[j]
            return d, np.append(g[free], gs)

        if x0 is None:
            x0 = np.append(self.theta[free], np.log(self.sigma))
        return self._minimise(fun, x0, [(0.0, None)] * len(free) + [(None, None)])

    def ratio_profile(self, spec, s, x0=None):
        """Min dev (sigma profiled) with the ratio ``spec`` of variances equal to ``s``.

        ``spec = (S, w)``: the ratio ``sum_{m in S} gamma_m / (1 + w'gamma)``
        (``S = None``: ``1 / (1 + w'gamma)``, the residual's share), with
        ``gamma = theta^2``. The free parameters are the other factors'
        ``theta`` and the split of the constrained total among ``S``.
        """
        S, w = spec
        k = self.k
        inS = np.zeros(k, bool)
        if S is None:
            inS[:] = True
        else:
            inS[list(S)] = True
        out = np.flatnonzero(~inS)
        ins = np.flatnonzero(inS)
        # the constraint is linear in gamma: sum_S gamma_m c_m = t
        c = w[ins] if S is None else 1.0 - s * w[ins]

        def theta_of(x):
            th = np.empty(k)
            th[out] = x[: out.size]
            v = x[out.size :]
            v = v / v.sum() if v.sum() > 0 else np.full(v.size, 1.0 / v.size)
            rest = float(w[out] @ th[out] ** 2)
            t = (1.0 - s) / s if S is None else s * (1.0 + rest)
            th[ins] = np.sqrt(t * v / c)
            return th

        def fun(x):
            try:
                return self.cp.evaluate(theta_of(x), reml=False)["dev"]
            except FitError:  # a variance so large the system is singular
                return self.dmin + 1e6

        if x0 is None:
            g = self.theta[ins] ** 2 * c
            v0 = g / g.sum() if g.sum() > 0 else np.full(ins.size, 1.0 / ins.size)
            x0 = np.append(self.theta[out], np.clip(v0, 0.05, 1.0))
        bounds = [(0.0, None)] * out.size + [(0.0, 1.0)] * ins.size
        if ins.size == 1:  # nothing to split
            x0, bounds = x0[: out.size], bounds[: out.size]
            x0 = np.append(x0, 1.0)
            bounds.append((1.0, 1.0))
        res = sopt.minimize(fun, x0, method="L-BFGS-B", bounds=bounds, options=_OPTS)
        return float(res.fun), res.x


def _ratio_specs(codes, n_levels):
    """The share and ICC of each factor and the residual's share, as ratio specs.

    A spec ``(S, w)`` is the ratio ``sum_{m in S} gamma_m / (1 + w'gamma)`` in
    the relative variances ``gamma = theta^2``: the total is that of an
    observation the component applies to (``w_m`` the share of those
    observations that factor ``m`` covers: 1 unless a variance is given per
    level of a fixed factor), as :class:`MixedModelFit` defines shares.
    Returns ``(shares, iccs, residual)``.
    """
    k = len(codes)
    cover = np.array([g >= 0 for g in codes], dtype=float)
    inside = _nesting(codes, n_levels)
    shares, iccs = [], []
    for j in range(k):
        w = cover[:, cover[j] > 0].mean(axis=1)
        shares.append(([j], w))
        iccs.append(([j] + [m for m in range(k) if inside[j, m]], w))
    return shares, iccs, (None, cover.mean(axis=1))


def ratio_value(spec, gamma):
    """The ratio ``spec`` at relative variances ``gamma`` (shape (..., k))."""
    S, w = spec
    num = 1.0 if S is None else np.sum(gamma[..., S], axis=-1)
    return num / (1.0 + gamma @ w)


def _interval(zeta, est, lo_bound, hi_bound, grow):
    """Ends of ``{v : zeta(v) <= 0}`` around ``est`` (zeta(est) < 0)."""
    ends = []
    # lower end
    if zeta(lo_bound) <= 0:
        ends.append(lo_bound)
    else:
        ends.append(sopt.brentq(zeta, lo_bound, est, xtol=1e-300, rtol=1e-6))
    # upper end: grow from the estimate until zeta > 0, then bracket the root
    # between the last point inside and the first outside
    lo = est
    for _ in range(80):
        nxt = min(grow(lo), hi_bound)
        if zeta(nxt) > 0:
            ends.append(sopt.brentq(zeta, lo, nxt, xtol=1e-300, rtol=1e-6))
            return ends
        if nxt >= hi_bound:
            break
        lo = nxt
    ends.append(hi_bound)
    return ends


@single_blas_thread
def profile_intervals(
    fit: MixedModelFit, *, confidence: float = 0.95, progress=False
) -> VarianceIntervals:
    """Profile-likelihood intervals for every variance component, SD, share and ICC.

    Estimands: each component's SD ``sigma_j`` (and variance ``sigma_j^2``),
    its share ``sigma_j^2 / sum sigma^2`` of the total variance and its
    intra-class correlation, as in :class:`MixedModelFit`.

    Parameters
    ----------
    fit : MixedModelFit
        A REML or ML fit; the profile is the ML deviance's in both cases, as in
        lme4's ``confint(fit, method = "profile")``.
    confidence : float, default 0.95
    progress : bool or None, default False
        Show a tqdm bar over the intervals (None: on a terminal only).

    Returns
    -------
    VarianceIntervals
        The point estimates are the fit's own (REML or ML).

    Notes
    -----
    For the SD of factor ``j`` the deviance is minimised over the other
    relative SDs and ``sigma`` with ``theta_j sigma`` fixed; for the residual
    SD over ``theta`` with ``sigma`` fixed; for a share or ICC over the
    parameters left free by the constraint on the ratio of variances (``sigma``
    is profiled out analytically, the ratio not depending on it). Each end is
    the root of ``profile(v) - min dev - chi2_1(confidence)``.
    """
    confidence = as_confidence(confidence)
    if not fit.group_names:
        raise ArgumentError("`fit` has no random effects to give intervals for.")
    pr = _Profiler(fit)
    k = pr.k
    cut = float(sst.chi2.ppf(confidence, 1))
    with progress_bar(2 * (k + 1), "profile intervals", progress) as bar:
        sd_ml = np.append(pr.theta * pr.sigma, pr.sigma)
        sd_lo, sd_hi = np.empty(k + 1), np.empty(k + 1)
        for j in range(k + 1):
            def zeta(c, j=j):
                return pr.sd_profile(j, c)[0] - pr.dmin - cut

            lo_bound = 0.0 if j < k else sd_ml[k] * 1e-3
            est = max(sd_ml[j], 1e-12 * sd_ml[k])
            sd_lo[j], sd_hi[j] = _interval(
                zeta, est, lo_bound, np.inf, lambda v: 2.0 * v if v > 0 else sd_ml[k]
            )
            bar.update()
        gam = pr.theta**2

        def ratio_interval(spec):
            est = min(max(float(ratio_value(spec, gam)), 1e-12), 1.0 - 1e-12)

            def zeta(s):
                s = min(max(s, 1e-15), 1.0 - 1e-15)
                return pr.ratio_profile(spec, s)[0] - pr.dmin - cut

            return _interval(zeta, est, 0.0, 1.0, lambda v: 1.0 - (1.0 - v) / 4.0)

        shares, iccs, residual = _ratio_specs(pr.codes, pr.cp.q)
        share_lo, share_hi = np.empty(k + 1), np.empty(k + 1)
        icc_lo, icc_hi = np.full(k + 1, np.nan), np.full(k + 1, np.nan)
        for j in range(k):
            share_lo[j], share_hi[j] = ratio_interval(shares[j])
            if len(iccs[j][0]) == 1:
                icc_lo[j], icc_hi[j] = share_lo[j], share_hi[j]
            else:
                icc_lo[j], icc_hi[j] = ratio_interval(iccs[j])
            bar.update()
        share_lo[k], share_hi[k] = ratio_interval(residual)
        bar.update()
    return VarianceIntervals(
        components=fit.components,
        sd=fit.sd,
        sd_low=sd_lo,
        sd_high=sd_hi,
        variance_low=sd_lo**2,
        variance_high=sd_hi**2,
        share=fit.share,
        share_low=share_lo,
        share_high=share_hi,
        icc=fit.icc,
        icc_low=icc_lo,
        icc_high=icc_hi,
        confidence=confidence,
        method="profile",
    )


__all__ = ["VarianceIntervals", "profile_intervals"]
