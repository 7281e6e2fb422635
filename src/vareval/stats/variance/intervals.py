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
# the ML deviance in s = theta^2 and log sigma^2, and the constrained minima

_FLOOR = 1e-6  # a relative SD of 0 is evaluated here: the deviance moves by ~1e-12


def _intercept_state(fit: MixedModelFit):
    """The fit's refitting state; random slopes are not supported here."""
    st = _state(fit)
    if not hasattr(st, "cp"):
        raise ArgumentError(
            "intervals and bootstrap tests are available for random intercepts "
            "(also per group), not yet for random slopes."
        )
    return st


def _hessian(fg, x, g, upper=None):
    """Forward differences of the analytic gradient (steps into the bounds' inside)."""
    H = np.empty((x.size, x.size))
    for i in range(x.size):
        h = 1e-5 * max(abs(x[i]), 0.1)
        if upper is not None and x[i] + h > upper[i]:
            h = -h
        xi = x.copy()
        xi[i] += h
        H[:, i] = (fg(xi)[1] - g) / h
    return 0.5 * (H + H.T)


def _newton(fg, x, lower, upper=None, H=None, tol=1e-7, max_iter=50):
    """Minimise ``fg`` (value and gradient) over ``lower <= x <= upper`` by projected Newton.

    ``H`` (a Hessian from a nearby point, kept current by BFGS updates) or, when
    it is None or a step fails, forward differences of the gradient. Stops when
    the Newton decrement ``g'H^-1 g`` on the free coordinates is below ``tol``
    (the value is then within about ``tol / 2`` of the minimum; the deviance
    itself carries rounding noise of about 1e-12 of its size, which the line
    search allows for). Should the steps stall far from that (a Hessian
    misleading them), L-BFGS-B finishes. Returns ``(value, x, H)``.
    """
    upper = np.full(x.size, np.inf) if upper is None else upper
    f, g = fg(x)
    noise = 1e-12 * abs(f) if np.isfinite(f) else 0.0
    fresh = H is None
    if fresh:
        H = _hessian(fg, x, g, upper)
    dec = 0.0
    for _ in range(max_iter):
        free = ~(((x <= lower) & (g > 0)) | ((x >= upper) & (g < 0)))
        if not np.any(free):
            dec = 0.0
            break
        w, V = np.linalg.eigh(H[np.ix_(free, free)])
        w = np.maximum(np.abs(w), 1e-10 * max(np.max(np.abs(w)), 1e-300))
        d = np.zeros_like(x)
        d[free] = -V @ ((V.T @ g[free]) / w)
        dec = -g @ d
        if dec < tol:
            break
        t = 1.0
        for _ in range(20):
            xn = np.clip(x + t * d, lower, upper)
            fn, gn = fg(xn)
            if fn <= f + 1e-4 * (g @ (xn - x)) + noise:
                break
            t /= 2
        else:  # no descent along the step: a fresh Hessian, once
            if fresh:
                break
            H, fresh = _hessian(fg, x, g, upper), True
            continue
        sv, yv = xn - x, gn - g
        if sv @ yv > 1e-12 * np.linalg.norm(sv) * np.linalg.norm(yv):  # BFGS update
            Hs = H @ sv
            H = H - np.outer(Hs, Hs) / (sv @ Hs) + np.outer(yv, yv) / (sv @ yv)
        x, f, g, fresh = xn, fn, gn, False
    if dec > 1e-4:
        res = sopt.minimize(fg, x, jac=True, method="L-BFGS-B",
                            bounds=list(zip(lower, upper, strict=True)))  # fmt: skip
        if res.fun < f:
            f, x = float(res.fun), res.x
    return f, x, H


def _stick(b):
    """Stick-breaking: the split ``q`` (summing to 1) with fractions ``b`` in [0, 1].

    ``q_m = b_m prod_{i<m} (1 - b_i)``, the last member taking what is left;
    returns ``q`` and its Jacobian (by a complex step). Linear in each ``b_m``,
    so a member's share 0 is a bound the gradient sees, not a stationary point.
    """

    def split(b):
        left = np.concatenate([[1.0], np.cumprod(1.0 - b)])
        return left * np.append(b, 1.0)

    if b.size == 0:
        return np.ones(1), np.zeros((1, 0))
    h = 1e-30
    J = np.array([split(b + 1j * h * e).imag / h for e in np.eye(b.size)]).T
    return split(b.astype(complex)).real, J


def _unstick(q):
    """The fractions ``b`` of the split ``q`` (inverse of :func:`_stick`)."""
    left = 1.0 - np.concatenate([[0.0], np.cumsum(q)[:-2]])
    return np.where(left > 1e-12, q[:-1] / np.maximum(left, 1e-300), 0.5).clip(0.0, 1.0)


class _Profiler:
    """The ML deviance of a fit and its minima under one constraint each.

    Parameters are ``s = theta^2`` (relative variances, bound below by 0) and
    ``tau = log sigma^2``; every constraint is solved by :func:`_newton`,
    warm-started at the previous point of the same profile.
    """

    def __init__(self, fit: MixedModelFit):
        st = _intercept_state(fit)
        self.cp = st.cp
        self.n, self.k = st.cp.n, st.cp.k
        ml = _refit_as(fit, False)
        self.s = np.maximum(ml.theta, 0.0) ** 2
        self.tau = 2.0 * np.log(ml.sigma)
        self.codes = st.codes
        self.dmin = self._eval(self.s)[0]
        self._zero = {}

    def _eval(self, s):
        """Profiled dev, its gradient in s, and log|A|, r^2 with their gradients."""
        th = np.sqrt(np.maximum(s, _FLOOR**2))
        try:
            ev = self.cp.evaluate(th, reml=False, grad=True)
        except FitError:  # so far out that the system is singular
            return None
        two = 2.0 * th
        return (
            ev["dev"], ev["grad"] / two, ev["logdetA"], ev["dlogdetA"] / two,
            ev["r2"], ev["dr2"] / two,
        )  # fmt: skip

    def _dev(self, s, tau):
        """ML deviance at (s, tau) and its gradient in s and in tau."""
        e = self._eval(s)
        if e is None:
            return np.inf, np.zeros(self.k), 0.0
        _, _, lA, dA, r2, dr2 = e
        w = np.exp(-tau)
        f = lA + self.n * (_LOG2PI + tau) + r2 * w
        return f, dA + dr2 * w, self.n - r2 * w

    def _profiled(self, s):
        e = self._eval(s)
        return (np.inf, np.zeros(self.k)) if e is None else e[:2]

    # -- the problems: (fg, x at the estimate, lower bounds) ------------------
    def sd_problem(self, j):
        """sigma_j = c (j = k: the residual SD); ``x = (s without j, tau)`` or ``s``."""
        k = self.k
        if j == k:
            def fg(x, c):
                f, gs, _ = self._dev(x, 2.0 * np.log(c))
                return f, gs

            return fg, self.s.copy(), np.zeros(k), None, lambda x: []
        free = np.arange(k) != j

        def fg(x, c):
            s = np.empty(k)
            s[free] = x[:-1]
            s[j] = c * c * np.exp(-x[-1])
            f, gs, gt = self._dev(s, x[-1])
            return f, np.append(gs[free], gt - gs[j] * s[j])

        x0, lower = np.append(self.s[free], self.tau), np.append(np.zeros(k - 1), -np.inf)
        return fg, x0, lower, None, lambda x: []

    def ratio_problem(self, spec):
        """The ratio ``spec`` equal to ``rho`` (sigma profiled); see :func:`_ratio_specs`.

        The ratio fixes ``sum_{m in S} c_m s_m = t`` (linear in ``s``). Free are
        ``s`` outside ``S`` and the split ``q`` of ``t`` among ``S``
        (:func:`_stick`): ``s_S = t q / (c'q)``.
        """
        S, w = spec
        k = self.k
        inS = np.zeros(k, bool)
        inS[slice(None) if S is None else list(S)] = True
        out, ins = np.flatnonzero(~inS), np.flatnonzero(inS)
        no = out.size

        def fg(x, rho):
            c = w[ins] if S is None else 1.0 - rho * w[ins]
            if S is None:
                t, dt = (1.0 - rho) / rho, np.zeros(no)
            else:
                t, dt = rho * (1.0 + w[out] @ x[:no]), rho * w[out]
            q, J = _stick(x[no:])
            cq = c @ q
            s = np.empty(k)
            s[out] = x[:no]
            s[ins] = t * q / cq
            f, gs = self._profiled(s)
            gin = gs[ins] @ q
            g_out = gs[out] + gin * dt / cq
            g_q = (t / cq) * (gs[ins] - gin * c / cq)
            return f, np.append(g_out, g_q @ J)

        s_in = self.s[ins]
        q0 = s_in / s_in.sum() if s_in.sum() > 0 else np.full(ins.size, 1.0 / ins.size)
        x0 = np.append(self.s[out], _unstick(q0))
        lower = np.zeros(x0.size)
        upper = np.append(np.full(no, np.inf), np.ones(ins.size - 1))
        # the deviance can have minima at either end of the split (all of t on
        # one member or on another) and inside: a solution with the split at
        # an end may be the worse one, so the split is then also restarted from
        # the estimate's and an even one
        splits = [x0[no:], _unstick(np.full(ins.size, 1.0 / ins.size))]
        if ins.size == 1:
            splits = []
        elif np.allclose(*splits):
            splits = splits[:1]

        def restarts(x):
            b = x[no:]
            if not np.any((b <= 0) | (b >= 1)):
                return []
            return [np.append(x[:no], s) for s in splits if not np.allclose(s, b)]

        return fg, x0, lower, upper, restarts

    def zero(self, Z):
        """Min dev (sigma profiled) with ``s_m = 0`` for ``m`` in ``Z``."""
        Z = tuple(sorted(Z))
        if Z not in self._zero:
            free = np.ones(self.k, bool)
            free[list(Z)] = False

            def fg(x):
                s = np.zeros(self.k)
                s[free] = x
                f, gs = self._profiled(s)
                return f, gs[free]

            if np.any(free):
                d = _newton(fg, self.s[free], np.zeros(int(free.sum())))[0]
            else:
                d = self._profiled(np.zeros(self.k))[0]
            self._zero[Z] = d
        return self._zero[Z]

    # -- one end of an interval ---------------------------------------------
    def end(self, problem, value_of, u_hat, side, du0, u_max, z):
        """The ``u`` past ``u_hat`` on ``side`` with signed root deviance ``z``.

        ``value_of(u)`` maps ``u`` to the constrained quantity; the constrained
        minimum at ``u`` is warm-started at the last point's. Steps out (each
        step extrapolating the profile's slope) until the root is bracketed,
        then Brent's method. None when ``u_max`` is reached inside.
        """
        fg, x0, lower, upper, restarts = problem
        state = {"x": x0, "H": None}
        seen = {}

        def zeta(u):
            if u not in seen:
                v = value_of(u)
                d, state["x"], state["H"] = _newton(
                    lambda x: fg(x, v), state["x"], lower, upper, state["H"]
                )
                for start in restarts(state["x"]):
                    other = _newton(lambda x: fg(x, v), start, lower, upper)
                    if other[0] < d - 1e-9:
                        d, state["x"], state["H"] = other
                # past where the system is singular: far outside
                seen[u] = np.sqrt(max(min(d - self.dmin, 1e6), 0.0)) - z
            return seen[u]

        a, fa = u_hat, -z
        b = u_hat + side * du0
        while True:
            if side * (b - u_max) >= 0:
                b = u_max
            fb = zeta(b)
            if fb >= 0:
                break
            if b == u_max:
                return None
            slope = (fb - fa) / (b - a)
            reach = abs(b - u_hat)
            step = -1.1 * fb / slope if slope * side > 0 else 3.0 * reach
            a, fa = b, fb
            b = b + side * min(max(abs(step), 0.1 * reach), 3.0 * reach, 2.0)
        return sopt.brentq(zeta, a, b, xtol=1e-9, rtol=1e-10)


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


def _wald(pr):
    """``se(grad)``: the Wald SE of a function of ``(s, tau)`` with gradient ``grad``.

    From the observed information (half the deviance's Hessian, by
    differences) at the ML estimate; NaN when the function moves a variance
    estimated at 0. It only sizes the first step of each end's search.
    """
    x = np.append(pr.s, pr.tau)

    def fg(x):
        f, gs, gt = pr._dev(x[:-1], x[-1])
        return f, np.append(gs, gt)

    H = _hessian(fg, x, fg(x)[1])
    free = np.append(pr.s > 1e-8, True)
    cov = np.zeros_like(H)
    try:
        cov[np.ix_(free, free)] = 2.0 * np.linalg.inv(H[np.ix_(free, free)])
    except np.linalg.LinAlgError:
        cov[:] = np.nan

    def se(grad):
        if np.any(grad[~free] != 0):
            return np.nan
        return float(np.sqrt(max(grad @ cov @ grad, 0.0)))

    return se


def _step(se, z):
    """The first step of an end's search: the Wald end, or 1 without one."""
    return float(np.clip(z * se, 1e-3, 5.0)) if np.isfinite(se) and se > 0 else 1.0


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
    the root of ``profile(v) - min dev - chi2_1(confidence)``: Brent's method on
    the signed root deviance, on a scale where it is nearly linear, after steps
    out from a Wald-sized first one; each profile point is a projected Newton
    solve warm-started at the previous point's solution and Hessian.
    """
    confidence = as_confidence(confidence)
    if not fit.group_names:
        raise ArgumentError("`fit` has no random effects to give intervals for.")
    pr = _Profiler(fit)
    k, s, tau = pr.k, pr.s, pr.tau
    cut = float(sst.chi2.ppf(confidence, 1))
    with progress_bar(2 * (k + 1), "profile intervals", progress) as bar:
        z = np.sqrt(cut)
        se_u = _wald(pr)
        # SDs on u = asinh(sd / a): the log scale (where the profile is nearly
        # linear) for an SD well above a, linear through an SD of 0
        a = 0.01 * np.exp(tau / 2)
        sd_lo, sd_hi = np.empty(k + 1), np.empty(k + 1)
        for j in range(k + 1):
            prob = pr.sd_problem(j)
            v = np.sqrt((s[j] if j < k else 1.0) * np.exp(tau))
            if j == k:
                def sd_of(u, v=v):
                    return v * np.exp(u)

                du = _step(se_u(np.append(np.zeros(k), 0.5)), z)
                lo = pr.end(prob, sd_of, 0.0, -1, du, -60.0, z)
                hi = pr.end(prob, sd_of, 0.0, 1, du, 60.0, z)
                sd_lo[j] = 0.0 if lo is None else sd_of(lo)
                sd_hi[j] = np.inf if hi is None else sd_of(hi)
                bar.update()
                continue

            def sd_of(u):
                return a * np.sinh(u)

            u0 = float(np.arcsinh(v / a))
            grad = np.zeros(k + 1)
            if v > 0:  # d u / d (s_j, tau)
                grad[j], grad[k] = v / (2 * s[j]), v / 2
                grad /= np.hypot(a, v)
            du = _step(se_u(grad), z)
            if pr.zero([j]) - pr.dmin <= cut:
                sd_lo[j] = 0.0
            else:
                sd_lo[j] = sd_of(pr.end(prob, sd_of, u0, -1, min(du, u0), 0.0, z))
            hi = pr.end(prob, sd_of, u0, 1, du, u0 + 60.0, z)
            sd_hi[j] = np.inf if hi is None else sd_of(hi)
            bar.update()

        def ratio_interval(spec):
            S, w = spec
            rho = float(ratio_value(spec, s))
            rho = min(max(rho, 1e-6), 1.0 - 1e-6)
            u0 = float(sst.logistic.ppf(rho))
            # d rho / d s, then d logit(rho) / d s
            drho = (np.isin(np.arange(k), S) if S is not None else 0.0) - rho * w
            drho = drho / (1.0 + w @ s) / (rho * (1.0 - rho))
            du = _step(se_u(np.append(drho, 0.0)), z)
            prob = pr.ratio_problem(spec)

            def ratio_of(u):
                return float(sst.logistic.cdf(u))

            ends = [0.0, 1.0]
            if S is None:  # the residual's share: 1 when every variance may be 0
                hi = None if pr.zero(range(k)) - pr.dmin <= cut else pr.end(
                    prob, ratio_of, u0, 1, du, 30.0, z
                )
                lo = pr.end(prob, ratio_of, u0, -1, du, -30.0, z)
            else:
                lo = None if pr.zero(S) - pr.dmin <= cut else pr.end(
                    prob, ratio_of, u0, -1, du, -30.0, z
                )
                hi = pr.end(prob, ratio_of, u0, 1, du, 30.0, z)
            if lo is not None:
                ends[0] = ratio_of(lo)
            if hi is not None:
                ends[1] = ratio_of(hi)
            return ends

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
