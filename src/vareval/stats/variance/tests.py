"""Tests on a fitted mixed model: the three DECoVaC hypotheses.

- H1/H2 (is there seed / configuration variance?): :func:`random_effect_lrt`,
  a likelihood-ratio test per random effect with the boundary-corrected
  p-value (Self & Liang 1987; Stram & Lee 1994) beside the naive one.
- H3 (do the experiments differ?): :func:`f_test` and :func:`contrast` with
  Satterthwaite denominator degrees of freedom computed as lmerTest does
  (Kuznetsova et al. 2017) or the Kenward-Roger adjusted covariance and
  degrees of freedom as pbkrtest does (Kenward & Roger 1997; Halekoh &
  Hojsgaard 2014).
- :func:`pairwise`: all pairwise differences with Holm-adjusted p-values.

Nothing here forms an n x n matrix: Kenward-Roger's traces are computed from
the cross-products ``[Z X]'[Z X]`` and Woodbury's identity.

References
----------
Kenward, M. G. and Roger, J. H. (1997). Small sample inference for fixed
effects from restricted maximum likelihood. *Biometrics* 53(3), 983-997.
Kuznetsova, A., Brockhoff, P. B. and Christensen, R. H. B. (2017). lmerTest
package: tests in linear mixed effects models. *J. Stat. Softw.* 82(13).
Halekoh, U. and Hojsgaard, S. (2014). A Kenward-Roger approximation and
parametric bootstrap methods for tests in linear mixed models - the R package
pbkrtest. *J. Stat. Softw.* 59(9).
Self, S. G. and Liang, K.-Y. (1987). Asymptotic properties of maximum
likelihood estimators and likelihood ratio tests under nonstandard
conditions. *JASA* 82(398), 605-610.
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
*Scand. J. Statist.* 6(2), 65-70.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings

import numpy as np

from vareval.errors import ArgumentError, FitError, VarevalWarning
from vareval.stats._blas import single_blas_thread
from vareval.stats._checks import as_confidence
from vareval.stats._lazy import special  # scipy.special on first use; chi2 tails closed
from vareval.stats._progress import progress_bar
from vareval.stats._result import ConfidenceInterval, Result, t_interval_at
from vareval.stats.variance import dense
from vareval.stats.variance.fit import (
    MixedModelFit,
    _Crossprods,
    _Dropped,
    _fit_from_crossprods,
    _nesting,
    _refit_as,
    _state,
    fit_mixed,
)
from vareval.stats.variance.slopes import _SlopeModel, _SlopeState
from vareval.stats.variance.sparse import product

METHODS = ("satterthwaite", "kenward-roger")
MAX_DENSE_KR_ROWS = 5000  # Kenward-Roger for random slopes uses n x n matrices


# --------------------------------------------------------------------------
# H1/H2: likelihood-ratio tests for the random effects


@dataclasses.dataclass(frozen=True, repr=False)
class RandomEffectLRT(Result):
    """Likelihood-ratio test of one variance component being zero.

    No figure: one likelihood-ratio test of a random effect, read from its fields (a
    bootstrap LRT draws its null).

    Attributes
    ----------
    term : str
        The grouping factor dropped.
    statistic : float
        ``criterion(reduced) - criterion(full)`` (REML criteria for REML fits,
        deviances for ML fits); exactly 0 when the dropped variance is
        estimated at 0 or the difference is below 1e-6 (the optimiser's
        noise), so a variance at the boundary always gets the mixture's p = 1.
    df : int
        1: one variance parameter is removed.
    pvalue : float
        Boundary-corrected p-value from the 50:50 mixture of chi-square(0) and
        chi-square(1): ``0.5 P(chi2_1 >= statistic)``.
    pvalue_naive : float
        ``P(chi2_1 >= statistic)``, conservative because the null value 0 lies on
        the boundary of the parameter space.
    loglik_full, loglik_reduced : float
        The (restricted) log-likelihoods of both models.
    variance : float
        The dropped component's estimated variance in the full model.
    """

    term: str
    statistic: float
    df: int
    pvalue: float
    pvalue_naive: float
    loglik_full: float
    loglik_reduced: float
    variance: float


@single_blas_thread
def random_effect_lrt(fit: MixedModelFit, terms=None, progress=False) -> tuple:
    """Test each random intercept by refitting the model without it.

    Estimand: whether the variance ``sigma_j^2`` of a grouping factor is zero
    (DECoVaC's H1 for the seed, H2 for the configuration). The reduced model is
    fitted by the same criterion as ``fit`` (REML or ML), as lmerTest's
    ``ranova`` does; with REML the fixed effects are unchanged so the
    restricted likelihoods are comparable.

    Parameters
    ----------
    fit : MixedModelFit
        The full model.
    terms : sequence of str, optional
        Grouping factors to test; all by default.
    progress : bool or None, default False
        Show a tqdm bar over the refits (None: on a terminal only).

    Returns
    -------
    tuple of RandomEffectLRT
        One per tested term, in order.

    Notes
    -----
    Under H0 the statistic follows the mixture ``0.5 chi2_0 + 0.5 chi2_1``
    (Self & Liang 1987), so the corrected p-value is half the naive one.
    """
    st = _state(fit)  # refuses a fit not made by fit_mixed
    names = list(fit.group_names)
    if isinstance(st, _SlopeState):
        return _slope_lrt(fit, st, terms)
    if terms is None:
        terms = names
    for term in terms:
        if term not in names:
            raise ArgumentError(
                f"`terms` has {term!r}, which is not a grouping factor "
                f"of the fit ({', '.join(names)})."
            )
    out = []
    with progress_bar(len(terms), "LRT refits", progress) as bar:
        for term in terms:
            j = names.index(term)
            keep = [m for m in range(len(names)) if m != j]
            if fit.converged and fit.variance[j] == 0:  # the full fit is the reduced one
                reduced = fit
            else:
                reduced = _refit(fit, keep, start=_reduced_start(fit, j) if keep else None)
            out.append(_lrt_result(term, fit, reduced, 1, float(fit.variance[j])))
            bar.update()
    return tuple(out)


@single_blas_thread
def equal_variance_lrt(fit: MixedModelFit, terms, name: str | None = None):
    """Test whether grouping factors with disjoint observations share one variance.

    Estimand: whether the variances ``sigma_1^2 = ... = sigma_m^2`` of the
    factors ``terms`` (e.g. the configuration factor of each model, fitted
    with a variance per model) are equal. The reduced model merges them into
    one factor with a common variance (lme4: ``(1 | config:model)`` against
    the diagonal ``(0 + model || config)``), fitted by the same criterion.

    Parameters
    ----------
    fit : MixedModelFit
        The model with a variance per factor.
    terms : sequence of str
        At least two grouping factors of ``fit`` that no observation shares.
    name : str, optional
        Name of the merged factor and of the test; default the terms joined
        by ``" = "``.

    Returns
    -------
    RandomEffectLRT
        ``df = len(terms) - 1``; ``pvalue`` from chi-square(df) (the null,
        equal positive variances, is inside the parameter space).
    """
    st = _state(fit)
    names = list(fit.group_names)
    terms = list(terms)
    bad = [t for t in terms if t not in names]
    if bad or len(terms) < 2 or len(set(terms)) != len(terms):
        raise ArgumentError(
            f"`terms` must name two or more distinct grouping factors of the fit "
            f"({', '.join(names)}); got {terms}."
        )
    idx = [names.index(t) for t in terms]
    merged = np.full(fit.n_obs, -1, dtype=np.intp)
    levels, off = [], 0
    for j in idx:
        g = st.codes[j]
        rows = g >= 0
        if np.any(merged[rows] >= 0):
            raise ArgumentError(
                f"`terms` {terms} share observations; only factors on disjoint "
                "observations (one per level of a fixed factor) can be merged."
            )
        merged[rows] = g[rows] + off
        levels += list(st.level_names[j])
        off += len(st.level_names[j])
    name = " = ".join(terms) if name is None else str(name)
    keep = [m for m in range(len(names)) if m not in idx]
    codes = [merged] + [st.codes[m] for m in keep]
    start = np.append(np.sqrt(np.mean(fit.theta[idx] ** 2)), fit.theta[keep])
    reduced = _refit(
        fit,
        None,
        start=start,
        codes=codes,
        names=[name] + [names[m] for m in keep],
        level_names=[tuple(levels)] + [st.level_names[m] for m in keep],
    )
    return _lrt_result(name, fit, reduced, len(terms) - 1, None)


def _slope_lrt(fit, st, terms):
    """Each random term dropped in turn, as lmerTest's ``ranova``.

    The slope is tested against a random intercept alone; with independent
    effects (``(1 | g) + (0 + x | g)``) the intercept is tested too, against
    the slope alone.
    """
    intercept, slope = fit.group_names[:2]
    testable = [slope] if fit.correlations else [intercept, slope]
    terms = testable if terms is None else list(terms)
    if not terms or any(t not in testable for t in terms):
        raise ArgumentError(
            f"`terms`: this random-slope fit can test {' and '.join(map(repr, testable))}; "
            f"got {terms}."
        )
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        if intercept in terms:
            model = _SlopeModel(st.y, st.X, st.codes, st.x, st.cp.m, False, intercept=False)
            reduced = dataclasses.replace(st, cp=model).refit(fit.reml)
            out.append(_lrt_result(intercept, fit, reduced, 1, float(fit.variance[0])))
        if slope in terms:
            reduced = fit_mixed(st.y, st.X, [st.codes], reml=fit.reml)
            df = 2 if fit.correlations else 1  # the slope's variance (and covariance)
            out.append(_lrt_result(slope, fit, reduced, df, float(fit.variance[1])))
    return tuple(out)


# criterion differences below this are the optimiser's noise, not evidence
_LRT_TOL = 1e-6


def _lrt_statistic(fit, reduced, variance) -> float:
    """``criterion(reduced) - criterion(fit)``, exactly 0 at the boundary.

    A variance fitted at 0 makes the full model the reduced one, so the
    statistic is 0 whatever rounding noise the two fits leave (5e-12 gave
    p = 0.4999991 where an exact 0 gives the mixture's p = 1).
    """
    stat = reduced.criterion - fit.criterion
    return 0.0 if stat < _LRT_TOL or variance == 0 else float(stat)


def _lrt_result(term, fit, reduced, df, variance):
    """The LRT of ``reduced`` against ``fit``; NaN unless both fits converged."""
    if not (fit.converged and reduced.converged):
        which = "full" if not fit.converged else "reduced"
        warnings.warn(
            f"no likelihood-ratio test for {term!r}: the {which} model's fit "
            "did not converge.",
            VarevalWarning,
            stacklevel=4,
        )
        stat = np.nan
    else:
        stat = _lrt_statistic(fit, reduced, variance)
    naive = float(special.chdtrc(df, stat))
    pvalue = naive
    if variance is not None:
        # a variance against 0 lies on the boundary: the 50:50 mixture of
        # chi-square(df - 1) and chi-square(df) (Stram & Lee 1994)
        lower = float(stat == 0) if df == 1 else float(special.chdtrc(df - 1, stat))
        pvalue = 0.5 * (lower + naive) if stat != 0 else 1.0
    return RandomEffectLRT(
        term=term,
        statistic=float(stat),
        df=df,
        pvalue=pvalue,
        pvalue_naive=naive,
        loglik_full=fit.loglik,
        loglik_reduced=reduced.loglik,
        variance=np.nan if variance is None else variance,
    )


def _reduced_start(fit, j):
    """Starting ``theta`` for the model without factor ``j``, from the full fit.

    The dropped variance goes where the reduced model will put most of it: to
    the factor nested in ``j`` with the fewest levels (seed:experiment carries
    the seed's variance once seed is dropped), else to the residual (``theta``
    is relative to it). A start near the optimum saves Newton steps, each a
    factorisation.
    """
    st = _state(fit)
    var = np.array(fit.variance, dtype=float)  # the factors', then the residual's
    inner = np.flatnonzero(_nesting(st.codes, fit.n_levels)[:, j])
    to = inner[np.argmin(np.asarray(fit.n_levels)[inner])] if inner.size else -1
    var[to] += var[j]
    keep = [m for m in range(fit.theta.size) if m != j]
    return np.sqrt(var[keep] / var[-1])


def _refit(fit, keep, start=None, codes=None, names=None, level_names=None):
    """Refit ``fit``'s model with the grouping factors ``keep`` (or new ones).

    Fitted from ``start`` (a warm start from the full fit), and from the
    default start too when that fit did not converge; the better converged fit
    is kept. A variance at 0 in the start does not stall the fit: the Newton
    steps move in ``s = theta^2``, where 0 is no stationary point, and every
    zero of the result is probed (``fit._optimise``).
    """
    st = _state(fit)
    cp = None
    if codes is None:
        codes = [st.codes[m] for m in keep]
        names = [fit.group_names[m] for m in keep]
        level_names = [st.level_names[m] for m in keep]
        dropped = [m for m in range(len(st.codes)) if m not in keep]
        if len(dropped) == 1 and _Dropped.worthwhile(st.cp, dropped[0]):
            cp = _Dropped(st.cp, dropped[0])  # the full model's factor and analysis
    if cp is None:
        sums = None if keep is None else st.cp.sums(keep)  # the kept factors' own
        cp = _Crossprods(st.y, st.X, codes, [len(lev) for lev in level_names], sums=sums)
    fits = []
    for s0 in [None] if start is None else [start, None]:
        if fits and fits[0].converged:
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            fits.append(
                _fit_from_crossprods(
                    cp, st.y, st.X, codes, fit.fixed_names, names,
                    level_names, fit.reml, start=s0, warn=False, polish=False,
                )
            )  # fmt: skip
    ok = [f for f in fits if f.converged] or fits
    return min(ok, key=lambda f: f.criterion)


# --------------------------------------------------------------------------
# numerical derivatives (central differences with Richardson extrapolation)


def _richardson_jacobian(f, x, d=1e-4, r=4):
    """Jacobian of a vector function by central differences, Richardson-extrapolated.

    The step is ``d |x_i|`` (``d`` when ``x_i`` is 0) halved ``r - 1`` times, as
    numDeriv's default method (which lmerTest uses).
    """
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        h = d * abs(x[i]) if abs(x[i]) > 1e-8 else d
        est = []
        for _ in range(r):
            e = np.zeros_like(x)
            e[i] = h
            est.append((np.atleast_1d(f(x + e)) - np.atleast_1d(f(x - e))) / (2 * h))
            h /= 2
        for m in range(1, r):
            four = 4.0**m
            est = [
                (four * est[k + 1] - est[k]) / (four - 1) for k in range(len(est) - 1)
            ]
        cols.append(est[0])
    return np.column_stack(cols) if cols else np.zeros((0, 0))


def _richardson_hessian(f, x, d=0.1, eps=1e-4, r=4):
    """Hessian of a scalar function as numDeriv's ``hessian`` (``genD``) computes it.

    Second differences with the step ``d |x_i|`` (``eps`` when ``x_i`` is ~0)
    halved ``r - 1`` times and Richardson-extrapolated; lmerTest differentiates
    the deviance in (theta, sigma) this way.
    """
    x = np.asarray(x, dtype=float)
    k = x.size
    h0 = np.abs(d * x) + eps * (np.abs(x) < np.sqrt(np.finfo(float).eps / 7e-7))
    f0 = f(x)

    def extrapolate(est):
        for m in range(1, r):
            est = [(4.0**m * est[i + 1] - est[i]) / (4.0**m - 1) for i in range(len(est) - 1)]
        return est[0]

    E = np.eye(k)
    diag = np.empty(k)
    for i in range(k):
        steps = h0[i] / 2.0 ** np.arange(r)
        diag[i] = extrapolate(
            [(f(x + h * E[i]) - 2 * f0 + f(x - h * E[i])) / h**2 for h in steps]
        )
    H = np.diag(diag)
    for i in range(k):
        for j in range(i):
            est = []
            for m in range(r):
                hi, hj = h0[i] / 2.0**m, h0[j] / 2.0**m
                step = hi * E[i] + hj * E[j]
                est.append(
                    (f(x + step) - 2 * f0 + f(x - step) - diag[i] * hi**2 - diag[j] * hj**2)
                    / (2 * hi * hj)
                )
            H[i, j] = H[j, i] = extrapolate(est)
    return H


# --------------------------------------------------------------------------
# Satterthwaite: covariance of the variance parameters and the Jacobian of vcov


class _Satterthwaite:
    """lmerTest's ingredients: vcov(varpar) = 2 H^-1 and d vcov(beta) / d varpar.

    Computed in units of the residual SD (y / sigma): the df do not depend on
    the units of y, but the finite differences and the eigenvalue cut-off do,
    and the Hessian in (theta, sigma) is badly conditioned when sigma is far
    from 1.
    """

    def __init__(self, fit: MixedModelFit):
        st = _state(fit)
        cp = st.cp
        self.reml = fit.reml
        self.n, self.p, self.k = cp.n, cp.p, cp.k
        # unit: sigma (or, for a perfect fit, the SD of y)
        self.unit2 = fit.sigma**2 if fit.sigma > 0 else float(np.var(st.y)) or 1.0
        ev = cp.evaluate(fit.theta, reml=fit.reml, grad=True, gram=True)
        self._set_vcov_varpar(
            self._hessian_vp(cp, fit.theta, fit.sigma / np.sqrt(self.unit2), ev, st.jacobians)
        )
        # Jacobian of vcov(beta) = sigma^2 C(theta), C = (X'V^-1 X)^-1 (relative units)
        RXi = dense.solve_triangular(ev["RX"], np.eye(self.p), lower=False)
        C = RXi @ RXi.T
        s2 = fit.sigma**2 / self.unit2
        jac = []
        for j in range(self.k):
            # d C / d gamma_j = C G_j'G_j C with gamma_j = theta_j^2
            jac.append(s2 * 2.0 * fit.theta[j] * (C @ ev["gram"][j] @ C))
        jac.append(2.0 * np.sqrt(s2) * C)
        self.jac = jac
        self.vcov = fit.vcov / self.unit2

    def _set_vcov_varpar(self, H):
        """vcov(varpar) = 2 H^-1, by lmerTest's pseudo-inverse at a boundary."""
        self.H = 0.5 * (H + H.T)
        evals, evecs = np.linalg.eigh(self.H)
        pos = evals > 1e-8
        if np.any(evals < -1e-8) or not np.all(pos):
            warnings.warn(
                "the Hessian of the deviance in the variance parameters is not "
                "positive definite (a variance is at its boundary); Satterthwaite "
                "degrees of freedom use its pseudo-inverse, as lmerTest does.",
                VarevalWarning,
                stacklevel=6,
            )
        self.vcov_varpar = 2.0 * (evecs[:, pos] / evals[pos]) @ evecs[:, pos].T

    def _hessian_vp(self, cp, theta, sigma, ev, jacobians=None):
        """Hessian of lmerTest's deviance in (theta, sigma) (sigma in units of ``unit``).

        The deviance is ``log|A| (+ log|R_X|^2) + r2 / sigma^2 + m log sigma^2``
        (up to constants), so only its theta-theta block needs differences:
        central differences of the analytic gradient in theta (relative step
        1e-4, error ~1e-8), those of the fit's Newton polish when it ended next
        to ``theta``; the sigma row is analytic.
        """
        s2u = sigma * sigma * self.unit2
        m = self.n - self.p if self.reml else self.n

        def grad_theta(th):
            ev = cp.evaluate(th, reml=self.reml, grad=True)
            g = ev["dlogdetA"] + ev["dr2"] / s2u
            return g + ev["dlogdetRX2"] if self.reml else g

        k = theta.size
        H = np.empty((k + 1, k + 1))
        if jacobians is not None and jacobians.near(theta):
            jacobians.fill_zeros(cp, self.reml)
            J = jacobians.logdet_a + jacobians.r2 / s2u
            H[:k, :k] = J + jacobians.rx if self.reml else J
        else:
            H[:k, :k] = _richardson_jacobian(grad_theta, theta, r=1)
        H[:k, k] = H[k, :k] = -2.0 * ev["dr2"] / (s2u * sigma)
        H[k, k] = 6.0 * ev["r2"] / (s2u * sigma * sigma) - 2.0 * m / sigma**2
        return H

    def ddf_1d(self, L):
        """Satterthwaite df of one contrast (a 1-D array) and its variance."""
        var = float(L @ self.vcov @ L)
        grad = np.array([L @ J @ L for J in self.jac])
        return 2.0 * var**2 / float(grad @ self.vcov_varpar @ grad), var * self.unit2

    def f_test(self, L, beta, rhs):
        """LmerTest's contestMD: F and its Satterthwaite denominator df."""
        VL = L @ self.vcov @ L.T
        d, P = np.linalg.eigh(VL)
        order = np.argsort(d)[::-1]
        d, P = d[order], P[:, order]
        tol = max(np.sqrt(np.finfo(float).eps) * d[0], 0.0)
        pos = d > tol
        q = int(np.sum(pos))
        PtL = (P.T @ L)[:q]
        t2 = (PtL @ beta - P.T[:q] @ rhs) ** 2 / (d[:q] * self.unit2)
        F = float(np.sum(t2) / q)
        nu = np.array([self.ddf_1d(PtL[m])[0] for m in range(q)])
        return F, q, _combine_ddf(nu)


class _NumericSatterthwaite(_Satterthwaite):
    """lmerTest's Satterthwaite by numerical derivatives alone (random slopes).

    The Hessian of the deviance in (theta, sigma) and the Jacobian of
    ``vcov(beta)`` are Richardson-extrapolated differences, as lmerTest
    computes them for every model; in units of the residual SD, as above.
    """

    def __init__(self, fit: MixedModelFit):
        st = _state(fit)
        model = st.cp
        self.reml = fit.reml
        self.p = fit.n_fixed
        self.unit2 = fit.sigma**2 if fit.sigma > 0 else float(np.var(st.y)) or 1.0
        unit = np.sqrt(self.unit2)
        varpar = np.append(fit.theta, fit.sigma / unit)

        def dev(v):
            return model.deviance_vp(v[:-1], v[-1] * unit, fit.reml)

        self._set_vcov_varpar(_richardson_hessian(dev, varpar))

        def vcov_beta(v):
            RX = model.evaluate(v[:-1], fit.reml)["RX"]
            RXi = dense.solve_triangular(RX, np.eye(self.p), lower=False)
            return (v[-1] ** 2 * (RXi @ RXi.T)).ravel()

        J = _richardson_jacobian(vcov_beta, varpar)
        self.jac = [J[:, i].reshape(self.p, self.p) for i in range(varpar.size)]
        self.vcov = fit.vcov / self.unit2


def _combine_ddf(nu, tol=1e-8):
    """LmerTest's get_Fstat_ddf: combine per-direction dfs into the F test's df."""
    if nu.size == 1:
        return float(nu[0])
    if np.all(np.abs(nu - nu[0]) < tol):
        return float(nu[0])
    if np.any(nu <= 2):
        return 2.0
    E = float(np.sum(nu / (nu - 2)))
    return 2.0 * E / (E - nu.size)


# --------------------------------------------------------------------------
# Kenward-Roger


class _Schur:
    """``A = Lambda Z'Z Lambda + I`` at ``theta`` in the fit's Schur form.

    Rows follow the fit's order: the levels of the largest factor (whose block
    of ``A`` is diagonal) first, then the other factors' levels. Solves, products
    with ``Z'Z`` and the traces Kenward-Roger needs cost O(q r + r^3), with ``r``
    the levels of the smaller factors: no q x q matrix is formed.
    """

    def __init__(self, cp: _Crossprods, theta):
        self.cp = cp
        b = cp.big
        self.qb, self.r = cp.q[b], cp.r
        self.tb = float(theta[b])
        self.d = self.tb**2 * cp.n_b + 1.0
        self.lam_r = np.repeat(theta[cp.rest], [cp.q[j] for j in cp.rest])
        self.lam = np.concatenate([np.full(self.qb, self.tb), self.lam_r])
        p = cp.p
        parts = [cp.ZtXy_b[:, :p]] + ([cp.ZtXy_r[:, :p]] if self.r else [])
        self.ZtX = np.vstack(parts)
        self.slices = [None] * cp.k
        self.slices[b] = slice(0, self.qb)
        for i, j in enumerate(cp.rest):
            off = self.qb + cp.rest_offsets
            self.slices[j] = slice(off[i], off[i + 1])
        self.theta = np.asarray(theta, dtype=float)
        if self.r:
            self.cS = cp.schur_factor(self.theta, self.d, self.lam_r)[0]

    def solve(self, rhs):
        """``A^-1 rhs`` for a (q, m) array."""
        cp, qb = self.cp, self.qb
        t = rhs[:qb] / self.d[:, None]
        if not self.r:
            return t
        lr = self.lam_r[:, None]
        out = np.empty_like(rhs)  # filled in place: no stacked copies of (q, m) arrays
        out[qb:] = self.cS.solve(rhs[qb:] - self.tb * lr * product(cp.N_brT, t))
        np.subtract(rhs[:qb], self.tb * product(cp.N_br, lr * out[qb:]), out=out[:qb])
        out[:qb] /= self.d[:, None]
        return out

    def quad(self, v):
        """``v' A^-1 v`` for a (q, m) array: ``v_b' D^-1 v_b + y' S^-1 y`` by the Schur form."""
        cp, qb = self.cp, self.qb
        t = v[:qb] / self.d[:, None]
        out = v[:qb].T @ t
        if self.r:
            y = v[qb:] - self.tb * self.lam_r[:, None] * product(cp.N_brT, t)
            out += y.T @ self.cS.solve(y)
        return out

    def nmul(self, a):
        """``Z'Z a`` for a (q, m) array."""
        cp, qb = self.cp, self.qb
        if not self.r:
            return cp.n_b[:, None] * a
        out = np.empty_like(a)
        np.multiply(cp.n_b[:, None], a[:qb], out=out[:qb])
        out[:qb] += product(cp.N_br, a[qb:])
        out[qb:] = product(cp.N_brT, a[:qb])
        out[qb:] += product(cp.N_rr, a[qb:])
        return out

    def traces(self, n, s2, jacobians=None):
        """``tr(S G_i S G_j)`` for ``G = (Z_1 Z_1', ..., Z_k Z_k', I)``, ``S = Sigma^-1``.

        Everything is an r x r matrix over the smaller factors' levels, by
        Woodbury on ``V = V_b + Z_r Lambda_r^2 Z_r'`` with ``V_b = I + theta_b^2
        Z_b Z_b'`` (whose inverse is diagonal in the largest factor's levels);
        with a sparse Schur complement, minus the Hessian of ``log|Sigma|``,
        from the fit's ``jacobians`` when they were taken next to ``theta``.
        """
        cp, qb, r, k = self.cp, self.qb, self.r, self.cp.k
        if r and cp.sparse:  # from the gradient of log|A| (stats/variance/sparse.py)
            # else at the points of Satterthwaite's Hessian, whose gradients are kept
            H = None  # the columns of a theta_j = 0 are not used
            if jacobians is not None and jacobians.near(self.theta):
                H = jacobians.logdet_a
            elif np.all(self.theta > 0):
                H = _richardson_jacobian(cp.schur.grad_logdet_a, self.theta, r=1)
            return cp.schur.traces(self.theta, n, s2, hess_theta=H)
        b = cp.big
        tb2 = self.tb**2
        d = self.d
        u = cp.n_b / d
        out = np.zeros((k + 1, k + 1))
        if r:
            mm, lr = cp.mm, self.lam_r
            P = self.cS.inverse()
            G2 = lr[:, None] * cp._ndn(1.0 / d**2) * lr
            G3 = lr[:, None] * cp._ndn(1.0 / d**3) * lr
            Gu = lr[:, None] * cp._ndn(u / d**2) * lr
            PG2 = mm(P, G2)
            tPG2sq = float(np.sum(PG2 * PG2.T))
            tPGu = float(np.sum(P * Gu))
            tPG3 = float(np.sum(P * G3))
            tP2G2 = float(np.sum(mm(P, P) * G2))
        else:
            tPG2sq = tPGu = tPG3 = tP2G2 = 0.0
        # Z_b'S Z_b = (diag(u) - V P V') / s2 with V = D^-1 N_br Lambda_r
        out[b, b] = float(np.sum(u * u)) - 2.0 * tPGu + tPG2sq
        out[b, k] = float(np.sum(u / d)) - tPG3 + tb2 * (tPGu - tPG2sq) - tP2G2
        normR2 = (
            float(np.sum(1.0 / d**2))
            + 2.0 * tb2 * tPG3
            + tb2 * tb2 * tPG2sq
            + 2.0 * tb2 * tP2G2
            + (float(np.sum(P * P)) if r else 0.0)
        )
        out[k, k] = n - (qb + r) + normR2
        if r:
            # E = Z_r'V_b^-1 Z_r; V^-1 Z_r = V_b^-1 Z_r T with T = I - L P L E
            E = cp.N_rr - tb2 * cp._ndn(1.0 / d)
            T = np.eye(r) - mm(lr[:, None] * P * lr, E)
            M_rr = mm(E, T)  # Z_r' V^-1 Z_r
            # Z_b'V^-1 Z_r = D^-1 N_br T: squared column norms
            sq_br = np.sum(T * mm(cp._ndn(1.0 / d**2), T), axis=0)
            # Z_r'V^-2 Z_r = T' (Z_r'V_b^-2 Z_r) T
            K2 = cp.N_rr - cp._ndn(2.0 * tb2 / d - tb2 * tb2 * cp.n_b / d**2)
            diag = np.sum(T * mm(K2, T), axis=0)
            for i, j in enumerate(cp.rest):
                si = slice(cp.rest_offsets[i], cp.rest_offsets[i + 1])
                out[b, j] = out[j, b] = float(np.sum(sq_br[si]))
                out[j, k] = float(np.sum(diag[si]))
                for i2, j2 in enumerate(cp.rest):
                    s2_ = slice(cp.rest_offsets[i2], cp.rest_offsets[i2 + 1])
                    out[j, j2] = float(np.sum(M_rr[si, s2_] ** 2))
        out = out / s2**2
        out[k, :k] = out[:k, k]
        return out


class _KenwardRoger:
    """pbkrtest's vcovAdj: the adjusted covariance Phi_A and its ingredients P, W.

    ``Sigma = sum_j gamma_j Z_j Z_j' + gamma_e I`` and ``S = Sigma^-1``. Every
    n-vector involved lies in the span of ``[Z X]`` and is carried as its
    coefficients; ``S`` acts on them through Woodbury's identity and the fit's
    Schur factorisation (:class:`_Schur`), so the cost grows with the levels of
    the smaller factors, not with all levels or rows.
    """

    def __init__(self, fit: MixedModelFit):
        st = _state(fit)
        cp = st.cp
        fit = _refit_as(fit, True)  # pbkrtest refits an ML model by REML
        self.coef = fit.coef
        n, p, k = cp.n, cp.p, cp.k
        s2e = fit.sigma**2
        XtX = cp.XyXy[:p, :p]
        if k == 0:
            raise FitError("Kenward-Roger needs at least one random effect.")
        sy = _Schur(cp, fit.theta)
        lam, ZtX, sl = sy.lam[:, None], sy.ZtX, sy.slices
        q = lam.shape[0]

        # S = (I - Z Lambda A^-1 Lambda Z') / s2e (Woodbury): S X = Z a0 + X c0
        c0 = np.eye(p) / s2e
        a0 = -(lam * sy.solve(lam * ZtX)) / s2e
        ZSX = sy.nmul(a0) + ZtX @ c0  # Z' S X
        XSX = ZtX.T @ a0 + XtX @ c0  # X' S X
        Phi = np.linalg.inv(XSX)
        Phi = 0.5 * (Phi + Phi.T)
        # P_i = -X' S G_i S X, Q_ij = X' S G_i S G_j S X, Ktr_ij = tr(S G_i S G_j)
        P = [-(ZSX[sl[j]].T @ ZSX[sl[j]]) for j in range(k)]
        P.append(-(a0.T @ ZSX + c0.T @ XSX))
        # Q_ij = u_i' S u_j for u_j = G_j S X = Z_j Z_j' S X (u_k = S X), each
        # (u_i'u_j - (Lambda Z'u_i)' A^-1 (Lambda Z'u_j)) / s2e: one solve
        B = np.zeros((q, k * p))  # u_j = Z B_j
        for j in range(k):
            B[sl[j], j * p : (j + 1) * p] = ZSX[sl[j]]
        V = np.empty((q, (k + 1) * p))  # Lambda Z'u_j, then Lambda Z'S X
        V[:, : k * p] = sy.nmul(B)  # Z'Z_j Z_j' S X
        V[:, k * p :] = ZSX
        uu = {}
        for i in range(k):  # u_i'u_j = (Z_i' S X)' (Z_i' Z_j Z_j' S X)
            for j in range(i, k):
                uu[i, j] = ZSX[sl[i]].T @ V[sl[i], j * p : (j + 1) * p]
            uu[i, k] = -P[i]
        uu[k, k] = -P[k]
        V *= lam
        VW = sy.quad(V)
        Q = {
            (i, j): (u - VW[i * p : (i + 1) * p, j * p : (j + 1) * p]) / s2e
            for (i, j), u in uu.items()
        }
        self._adjusted(Phi, P, Q, sy.traces(n, s2e, _state(fit).jacobians))

    def _adjusted(self, Phi, P, Q, Ktr):
        """Phi_A = Phi + 2 Phi U Phi and W from P_i, Q_ij and tr(S G_i S G_j)."""
        ng = len(P)
        IE2 = np.empty((ng, ng))
        for i in range(ng):
            PhiPi = Phi @ P[i]
            for j in range(i, ng):
                IE2[i, j] = IE2[j, i] = (
                    Ktr[i, j]
                    - 2.0 * float(np.sum(Phi * Q[i, j]))
                    + float(np.sum(PhiPi * (P[j] @ Phi)))
                )
        condi = float(np.min(np.abs(np.linalg.eigvalsh(IE2))))
        W = 2.0 * (np.linalg.inv(IE2) if condi > 1e-10 else np.linalg.pinv(IE2))
        U = np.zeros_like(Phi)
        for i in range(ng - 1):
            for j in range(i + 1, ng):
                U += W[i, j] * (Q[i, j] - P[i] @ Phi @ P[j])
        U = U + U.T
        for i in range(ng):
            U += W[i, i] * (Q[i, i] - P[i] @ Phi @ P[i])
        self.Phi = Phi
        self.PhiA = Phi + 2.0 * Phi @ U @ Phi
        self.P = P
        self.W = W

    def adjust(self, L):
        """Pbkrtest's .KR_adjust: (ddf, F scaling, q) for ``L beta = rhs``."""
        Phi = self.Phi
        Theta = L.T @ np.linalg.solve(L @ Phi @ L.T, L)
        ThetaPhi = Theta @ Phi
        ng = len(self.P)
        u = [ThetaPhi @ self.P[i] @ Phi for i in range(ng)]
        tr = [np.trace(ui) for ui in u]
        A1 = A2 = 0.0
        for i in range(ng):
            for j in range(i, ng):
                e = 1.0 if i == j else 2.0
                A1 += e * self.W[i, j] * tr[i] * tr[j]
                A2 += e * self.W[i, j] * float(np.sum(u[i] * u[j].T))
        q = int(np.linalg.matrix_rank(L))
        B = (A1 + 6.0 * A2) / (2.0 * q)
        g = ((q + 1) * A1 - (q + 4) * A2) / ((q + 2) * A2)
        den = 3 * q + 2 * (1 - g)
        c1, c2, c3 = g / den, (q - g) / den, (q + 2 - g) / den
        EEstar = 1.0 / (1.0 - A2 / q)
        VVstar = (2.0 / q) * (1 + c1 * B) / ((1 - c2 * B) ** 2 * (1 - c3 * B))
        rho = VVstar / (2.0 * EEstar**2)
        ddf = 4.0 + (q + 2) / (q * rho - 1)
        # at ddf 2 the scaling is 0/0: pbkrtest (0.5.2) then uses 1
        scaling = 1.0 if abs(ddf - 2) < 1e-2 else ddf * (1 - A2 / q) / (ddf - 2)
        return float(ddf), float(scaling), q


class _DenseKenwardRoger(_KenwardRoger):
    """pbkrtest's vcovAdj with n x n matrices, for random slopes (small n).

    The covariance parameters are those of pbkrtest: the intercept variance,
    the intercept-slope covariance (if estimated), the slope variance and the
    residual variance, with ``G_i = d Sigma / d gamma_i``.
    """

    def __init__(self, fit: MixedModelFit):
        st = _state(fit)
        n = fit.n_obs
        if n > MAX_DENSE_KR_ROWS:
            raise FitError(
                f"Kenward-Roger for random slopes uses n x n matrices; {n} rows "
                f"exceed {MAX_DENSE_KR_ROWS}. Use method='satterthwaite'."
            )
        if not fit.reml:
            fit = st.refit(reml=True)
        X = st.X
        Z1 = np.eye(fit.n_levels[0])[st.codes]
        Z2 = Z1 * st.x[:, None]
        G = [Z1 @ Z1.T]
        gam = [fit.variance[0]]
        if fit.correlations:
            cov = fit.correlations[0][2] * fit.sd[0] * fit.sd[1]
            G.append(Z1 @ Z2.T + Z2 @ Z1.T)
            gam.append(cov)
        G += [Z2 @ Z2.T, np.eye(n)]
        gam += [fit.variance[1], fit.variance[2]]
        Si = np.linalg.inv(sum(g * Gi for g, Gi in zip(gam, G, strict=True)))
        Phi = np.linalg.inv(X.T @ Si @ X)
        H = [Gi @ Si for Gi in G]
        O = [h @ X for h in H]  # noqa: E741
        P = [-(o.T @ Si @ X) for o in O]
        ng = len(G)
        Q = {(i, j): O[i].T @ Si @ O[j] for i in range(ng) for j in range(ng)}
        Ktr = np.array([[np.sum(H[i].T * H[j]) for j in range(ng)] for i in range(ng)])
        self.coef = fit.coef
        self._adjusted(Phi, P, Q, Ktr)



# --------------------------------------------------------------------------
# H3: F tests and contrasts


@dataclasses.dataclass(frozen=True, repr=False)
class FTestResult(Result):
    """F test of ``L beta = rhs``.

    No figure: one F test of a fixed term, read from its fields.

    Attributes
    ----------
    term : str
        A label for the hypothesis.
    statistic : float
        The F statistic. Kenward-Roger: the *scaled* Wald F with the adjusted
        covariance, ``scaling * F_unscaled``, as lmerTest's ``contest``/``anova``
        and pbkrtest's ``KRmodcomp`` report it.
    ndf, ddf : float
        Numerator and denominator degrees of freedom.
    pvalue : float
        ``P(F_{ndf, ddf} >= statistic)``.
    method : str
        ``"satterthwaite"`` or ``"kenward-roger"``.
    statistic_unscaled, pvalue_unscaled : float
        Kenward-Roger only: the Wald F before scaling (pbkrtest's ``FstatU``)
        and its p-value on the same df (NaN otherwise).
    scaling : float
        Kenward-Roger only: the scale factor ``lambda`` of Kenward and Roger
        (1997), 1 for Satterthwaite.
    """

    term: str
    statistic: float
    ndf: float
    ddf: float
    pvalue: float
    method: str
    statistic_unscaled: float = float("nan")
    pvalue_unscaled: float = float("nan")
    scaling: float = 1.0


@dataclasses.dataclass(frozen=True, repr=False)
class ContrastResult(Result):
    """Estimates of linear combinations ``L beta`` (one per row of ``L``).

    Attributes
    ----------
    labels : tuple of str
        A name per row.
    estimate, se, df, statistic, pvalue : ndarray
        Estimate, standard error, denominator df, t statistic and two-sided
        p-value of each row.
    ci_low, ci_high : ndarray
        The ``confidence`` t interval.
    pvalue_holm : ndarray
        Holm-adjusted p-values over the rows (the family).
    confidence : float
        Confidence level of the intervals.
    method : str
        ``"satterthwaite"`` or ``"kenward-roger"``.
    """

    labels: tuple
    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    pvalue_holm: np.ndarray
    confidence: float
    method: str

    _interval = ("ci_low", "ci_high")
    _rows = (
        "labels", "estimate", "se", "df", "statistic", "pvalue", "ci_low", "ci_high", "pvalue_holm"
    )

    def _interval_at(self, level: float) -> ConfidenceInterval:
        return t_interval_at(self.estimate, self.se, self.df, level)


def _method(method):
    if method not in METHODS:
        raise ArgumentError(
            f"`method` must be 'satterthwaite' or 'kenward-roger'; got {method!r}."
        )
    return method


def _as_L(L, p, name="L"):
    try:
        L = np.atleast_2d(np.asarray(L, dtype=float))
    except (TypeError, ValueError):
        raise ArgumentError(f"`{name}` must be a numeric matrix.") from None
    if L.ndim != 2 or L.shape[1] != p or L.shape[0] < 1:
        raise ArgumentError(
            f"`{name}` must have {p} columns (one per fixed effect); "
            f"got shape {L.shape}."
        )
    if not np.all(np.isfinite(L)) or np.linalg.matrix_rank(L) == 0:
        raise ArgumentError(f"`{name}` must be finite and not all zero.")
    return L


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979)."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p)
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def _helpers(fit, method, cache):
    key = method
    if cache is not None and key in cache:
        return cache[key]
    slopes = isinstance(_state(fit), _SlopeState)
    if method == "satterthwaite":
        obj = (_NumericSatterthwaite if slopes else _Satterthwaite)(fit)
    else:
        obj = (_DenseKenwardRoger if slopes else _KenwardRoger)(fit)
    if cache is not None:
        cache[key] = obj
    return obj


@single_blas_thread
def f_test(
    fit: MixedModelFit,
    L,
    *,
    rhs=None,
    method: str = "satterthwaite",
    term: str = "L",
    _cache=None,
) -> FTestResult:
    """F test of the fixed-effect hypothesis ``L beta = rhs``.

    Estimand: whether the linear combinations ``L beta`` of the fixed effects
    (e.g. all experiment differences: DECoVaC's H3) are equal to ``rhs``.

    Parameters
    ----------
    fit : MixedModelFit
    L : array_like, shape (m, p)
        Hypothesis matrix; rank-deficient rows are handled (the rank is the
        numerator df).
    rhs : array_like, shape (m,), optional
        Right-hand side, zero by default.
    method : {"satterthwaite", "kenward-roger"}
        Satterthwaite: lmerTest's ``contestMD`` (F from ``vcov(beta)``, df from
        the eigen-directions of ``L V L'`` combined as in Fai & Cornelius).
        Kenward-Roger: pbkrtest's adjusted covariance and df (an ML fit is
        refitted by REML first, as pbkrtest does); ``statistic`` is the
        scaled Wald F with the adjusted covariance, as lmerTest's ``anova`` and
        pbkrtest's ``KRmodcomp`` report it; the unscaled F is in
        ``statistic_unscaled``.
    term : str
        Label stored in the result.

    Returns
    -------
    FTestResult
    """
    method = _method(method)
    L = _as_L(L, fit.n_fixed)
    rhs = np.zeros(L.shape[0]) if rhs is None else np.asarray(rhs, float).reshape(-1)
    if rhs.size != L.shape[0]:
        raise ArgumentError(f"`rhs` must have {L.shape[0]} values; got {rhs.size}.")
    h = _helpers(fit, method, _cache)
    if method == "satterthwaite":
        F, q, ddf = h.f_test(L, fit.coef, rhs)
        return FTestResult(
            term=term,
            statistic=F,
            ndf=float(q),
            ddf=ddf,
            pvalue=float(special.fdtrc(q, ddf, F)),
            method=method,
        )
    # reduce L to full row rank for the Wald statistic
    U, s, Vt = np.linalg.svd(L, full_matrices=False)
    keep = s > s[0] * 1e-10
    Lr = np.diag(s[keep]) @ Vt[keep]
    rr = U[:, keep].T @ rhs
    with np.errstate(divide="ignore", invalid="ignore"):
        # with a variance at exactly 0, A2 can be 0 and the df 0/0: NaN, not a number
        ddf, scaling, q = h.adjust(Lr)
    diff = Lr @ h.coef - rr
    wald = float(diff @ np.linalg.solve(Lr @ h.PhiA @ Lr.T, diff))
    F = wald / q
    return FTestResult(
        term=term,
        statistic=scaling * F,
        ndf=float(q),
        ddf=ddf,
        pvalue=float(special.fdtrc(q, ddf, scaling * F)),
        method=method,
        statistic_unscaled=F,
        pvalue_unscaled=float(special.fdtrc(q, ddf, F)),
        scaling=scaling,
    )


@single_blas_thread
def contrast(
    fit: MixedModelFit,
    L,
    *,
    labels=None,
    method: str = "satterthwaite",
    confidence: float = 0.95,
    _cache=None,
) -> ContrastResult:
    """Estimate, SE, df, t test and confidence interval of each row of ``L beta``.

    Estimand: each linear combination ``l' beta`` (a mean difference, a cell
    mean, an average over levels).

    Parameters
    ----------
    fit : MixedModelFit
    L : array_like, shape (m, p)
        One contrast per row.
    labels : sequence of str, optional
        Names of the rows.
    method : {"satterthwaite", "kenward-roger"}
        Satterthwaite (lmerTest's ``contest1D``): SE from ``vcov(beta)``.
        Kenward-Roger (pbkrtest): SE from the adjusted covariance and the KR df.
    confidence : float, default 0.95

    Returns
    -------
    ContrastResult
        Holm's adjustment is applied over the rows.
    """
    method = _method(method)
    confidence = as_confidence(confidence)
    L = _as_L(L, fit.n_fixed)
    m = L.shape[0]
    labels = (
        tuple(f"c{i}" for i in range(m)) if labels is None else tuple(map(str, labels))
    )
    if len(labels) != m:
        raise ArgumentError(f"`labels` has {len(labels)} names for {m} rows of L.")
    h = _helpers(fit, method, _cache)
    est = L @ (fit.coef if method == "satterthwaite" else h.coef)
    se = np.empty(m)
    df = np.empty(m)
    for i in range(m):
        if method == "satterthwaite":
            df[i], var = h.ddf_1d(L[i])
        else:
            var = float(L[i] @ h.PhiA @ L[i])
            df[i] = h.adjust(L[i][None, :])[0]
        se[i] = np.sqrt(var)
    t = est / se
    pv = 2.0 * special.stdtr(df, -np.abs(t))
    crit = special.stdtrit(df, 0.5 + confidence / 2.0)
    return ContrastResult(
        labels=labels,
        estimate=est,
        se=se,
        df=df,
        statistic=t,
        pvalue=pv,
        ci_low=est - crit * se,
        ci_high=est + crit * se,
        pvalue_holm=holm(pv),
        confidence=confidence,
        method=method,
    )


@single_blas_thread
def pairwise(
    fit: MixedModelFit,
    means,
    *,
    labels=None,
    method: str = "satterthwaite",
    confidence: float = 0.95,
    _cache=None,
) -> ContrastResult:
    """All pairwise differences between group means, with Holm-adjusted p-values.

    Estimand: ``mu_a - mu_b`` for every pair of groups ``a < b``, where the
    group means are ``mu = M beta`` (rows of ``means``: e.g. the cells of the
    experiment factor, or least-squares means averaged over other factors).

    Parameters
    ----------
    fit : MixedModelFit
    means : array_like, shape (g, p)
        One row per group: the linear combination of ``beta`` that is its mean.
    labels : sequence of str, optional
        Names of the groups.
    method, confidence
        As in :func:`contrast`.

    Returns
    -------
    ContrastResult
        Rows labelled ``"a - b"``, in the order (0, 1), (0, 2), ..., (g-2, g-1).
    """
    M = _as_L(means, fit.n_fixed, "means")
    g = M.shape[0]
    if g < 2:
        raise ArgumentError("`means` needs at least two groups to compare.")
    labels = (
        tuple(f"g{i}" for i in range(g)) if labels is None else tuple(map(str, labels))
    )
    if len(labels) != g:
        raise ArgumentError(f"`labels` has {len(labels)} names for {g} groups.")
    pairs = list(itertools.combinations(range(g), 2))
    L = np.array([M[a] - M[b] for a, b in pairs])
    names = [f"{labels[a]} - {labels[b]}" for a, b in pairs]
    return contrast(
        fit, L, labels=names, method=method, confidence=confidence, _cache=_cache
    )
