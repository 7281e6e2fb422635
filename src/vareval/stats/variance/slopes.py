"""Random slopes: a correlated or independent random intercept and slope per level.

The model is lme4's ``y ~ X + (x | g)`` (correlated) or ``y ~ X + (1 | g) +
(0 + x | g)`` (independent): each level ``l`` of the grouping factor ``g``
has ``(a_l, c_l) ~ N(0, Sigma)`` and contributes ``a_l + c_l x`` to its
observations. As in lme4, ``Sigma = sigma^2 T T'`` with ``T`` lower
triangular and ``theta`` its entries (column by column; the diagonal entries
only for independent effects), and the profiled deviance is minimised over
``theta``.

A slope term's random-effects matrix is not the indicator matrix the
random-intercept engine (:mod:`vareval.stats.variance.fit`) exploits, so this
engine factors ``A = Lambda' Z'Z Lambda + I`` as a dense matrix: fine for the
hundreds of levels of learning-curve analyses (sleepstudy has 18), not for
the tens of thousands of a DECoVaC store.

References
----------
Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear
mixed-effects models using lme4. *J. Stat. Softw.* 67(1), section 2 (the
sleepstudy example).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from vareval.errors import ArgumentError, FitError, VarevalWarning
from vareval.stats._blas import single_blas_thread
from vareval.stats.variance import dense
from vareval.stats.variance.fit import (
    SINGULAR_TOL,
    ZERO_TOL,
    MixedModelFit,
    _check_rank,
    information_criteria,
)

MAX_SLOPE_LEVELS = 3000  # levels x 2 random effects in the dense factorisation


class _SlopeModel:
    """Cross-products of ``[Z X y]`` for one grouping factor with a slope."""

    def __init__(self, y, X, codes, x, m, correlated, intercept=True):
        import scipy.sparse as sp

        n, p = X.shape
        self.n, self.p, self.m = n, p, m
        self.correlated = correlated
        rows = np.concatenate([np.arange(n), np.arange(n)])
        cols = np.concatenate([2 * codes, 2 * codes + 1])
        vals = np.concatenate([np.ones(n), x])
        Z = sp.csr_matrix((vals, (rows, cols)), shape=(n, 2 * m))
        Xy = np.column_stack([X, y])
        self.ZtZ = (Z.T @ Z).toarray()
        self.ZtXy = np.asarray(Z.T @ Xy)
        self.XyXy = Xy.T @ Xy
        self.Z = Z
        # without the intercept (lme4's (0 + x | g) alone: the reduced model of
        # the intercept's LRT) T = diag(0, theta)
        self.intercept = intercept
        self.n_theta = 3 if correlated else 2 if intercept else 1
        # lme4's bounds: diagonal entries of T >= 0, the off-diagonal free
        self.lower = [0.0, -np.inf, 0.0] if correlated else [0.0] * self.n_theta

    def T(self, theta):
        if self.correlated:
            return np.array([[theta[0], 0.0], [theta[1], theta[2]]])
        return np.diag(theta if self.intercept else [0.0, theta[0]])

    def evaluate(self, theta, reml=True):
        """Profiled deviance at ``theta`` and the pieces the fit needs."""
        n, p, m = self.n, self.p, self.m
        T = self.T(np.asarray(theta, float))
        # Lambda = I_m kron T: apply blockwise to the (2m x .) arrays
        A = _kron_both(self.ZtZ, T, m)
        A[np.diag_indices_from(A)] += 1.0
        try:
            L = dense.cholesky(A, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            raise FitError("the random-effects system is not positive definite.") from None
        LZ = _kron_left(self.ZtXy, T, m)  # Lambda' Z'[X y]
        C = dense.solve_triangular(L, LZ, lower=True, check_finite=False)
        M = self.XyXy - C.T @ C
        M = 0.5 * (M + M.T)
        try:
            R = dense.cholesky(M, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            raise FitError(
                "the fixed-effects cross-product is not positive definite; "
                "the fixed effects are rank-deficient."
            ) from None
        RX = R[:p, :p]
        r2 = max(float(R[p, p] ** 2), 1e-300)
        beta = dense.solve_triangular(RX, R[:p, p], check_finite=False)
        logdetA = 2.0 * float(np.sum(np.log(np.diag(L))))
        logdetRX2 = 2.0 * float(np.sum(np.log(np.abs(np.diag(RX)))))
        nn = n - p if reml else n
        dev = logdetA + nn * (1.0 + np.log(2.0 * np.pi * r2 / nn))
        if reml:
            dev += logdetRX2
        return {
            "dev": float(dev),
            "r2": r2,
            "logdetA": logdetA,
            "logdetRX2": logdetRX2,
            "RX": RX,
            "beta": beta,
            "L": L,
            "C": C,
            "T": T,
        }

    def deviance_vp(self, theta, sigma, reml=True):
        """LmerTest's deviance in (theta, sigma), sigma not profiled out."""
        ev = self.evaluate(theta, reml)
        nn = self.n - self.p if reml else self.n
        dev = ev["logdetA"] + ev["r2"] / sigma**2 + nn * np.log(2.0 * np.pi * sigma**2)
        return dev + ev["logdetRX2"] if reml else dev

    def blups(self, theta, ev):
        """Conditional modes: an (m, 2) array of intercepts and slopes."""
        coef = np.append(-ev["beta"], 1.0)
        u = dense.solve_triangular(ev["L"].T, ev["C"] @ coef, lower=False)
        return u.reshape(self.m, 2) @ ev["T"].T


def _kron_both(A, T, m):
    """(I_m kron T)' A (I_m kron T) for a (2m x 2m) A."""
    left = _kron_left(A, T, m)
    return (left.reshape(2 * m, m, 2) @ T).reshape(2 * m, 2 * m)


def _kron_left(A, T, m):
    """(I_m kron T)' A for a (2m x c) A."""
    return (T.T @ A.reshape(m, 2, -1)).reshape(2 * m, -1)


def _optimise(model, reml):
    """L-BFGS-B from lme4's start, then Newton steps with difference derivatives.

    The finite-difference gradient leaves L-BFGS-B ~1e-5 from the optimum in
    theta, where the deviance is flat to 1e-9; central-difference Newton steps
    on the free coordinates take it to the optimiser's resolution.
    """
    import scipy.optimize as sopt

    start = np.array([1.0, 0.0, 1.0]) if model.correlated else np.ones(model.n_theta)
    lower = np.array(model.lower)

    def fun(th):
        return model.evaluate(th, reml)["dev"]

    res = sopt.minimize(fun, start, method="L-BFGS-B",
                        bounds=[(lo, None) for lo in lower])  # fmt: skip
    x, f = res.x.copy(), float(res.fun)
    nev = int(res.nfev)
    step = np.inf
    for _ in range(20):
        free = np.flatnonzero(x > lower + 1e-8)
        if free.size == 0:
            step = 0.0
            break
        g, H, used = _derivatives(fun, x, free)
        nev += used
        try:
            if np.any(np.linalg.eigvalsh(H) <= 0):
                break
            delta = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            break
        step = float(np.max(np.abs(delta)))
        xn = x.copy()
        xn[free] = np.maximum(x[free] + delta, lower[free])
        fn = fun(xn)
        nev += 1
        if fn > f + 1e-12 * max(1.0, abs(f)):
            break
        x, f = xn, fn
        if step < 1e-9:
            break
    diag = [0, 2] if model.correlated else range(model.n_theta)
    for i in diag:  # a variance below the fit's resolution is 0
        if 0 < x[i] < ZERO_TOL:
            x0 = x.copy()
            x0[i] = 0.0
            if fun(x0) <= f + 1e-10 * max(1.0, abs(f)):
                x = x0
    converged = bool(step < 1e-4)
    return x, converged, str(res.message), nev


def _derivatives(fun, x, free, h=1e-4):
    """Central-difference gradient and Hessian of ``fun`` on the coordinates ``free``."""
    k = free.size
    hs = h * np.maximum(np.abs(x[free]), 0.1)
    f0 = fun(x)
    E = np.zeros((k, x.size))
    E[np.arange(k), free] = hs
    fp = np.array([fun(x + e) for e in E])
    fm = np.array([fun(x - e) for e in E])
    g = (fp - fm) / (2 * hs)
    H = np.diag((fp - 2 * f0 + fm) / hs**2)
    for a in range(k):
        for b in range(a + 1, k):
            d = E[a] + E[b]
            e = E[a] - E[b]
            H[a, b] = H[b, a] = (fun(x + d) - fun(x + e) - fun(x - e) + fun(x - d)) / (
                4 * hs[a] * hs[b]
            )
    return g, H, 1 + 2 * k + 4 * k * (k - 1) // 2


def _fit_slope_iv(y, X, codes, x, fixed_names, group_name, slope_name, level_names):
    y = np.asarray(y, dtype=float)
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    x = np.asarray(x, dtype=float)
    codes = np.asarray(codes)
    n = y.size
    if y.ndim != 1 or n < 3 or not np.all(np.isfinite(y)):
        raise ArgumentError("`y` must be a finite one-dimensional array of >= 3 values.")
    if X.shape[0] != n or not np.all(np.isfinite(X)):
        raise ArgumentError(f"`X` must be a finite matrix with {n} rows; got {X.shape}.")
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ArgumentError(f"`x` (the slope variable) must be {n} finite numbers.")
    if codes.shape != (n,) or not np.issubdtype(codes.dtype, np.integer) or codes.min() < 0:
        raise ArgumentError(f"`codes` must be {n} integer codes 0, 1, ..., levels-1.")
    m = int(codes.max()) + 1
    if np.unique(codes).size < 3:
        raise FitError(
            f"grouping factor {group_name!r} has fewer than 3 levels; a 2 x 2 "
            "covariance of intercept and slope needs more."
        )
    if 2 * m > 2 * MAX_SLOPE_LEVELS:
        raise FitError(
            f"grouping factor {group_name!r} has {m} levels; the random-slope "
            f"engine factors dense matrices and handles up to {MAX_SLOPE_LEVELS}."
        )
    if np.ptp(x) == 0:
        raise ArgumentError(f"the slope variable {slope_name!r} is constant.")
    p = X.shape[1]
    fixed_names = tuple(f"x{i}" for i in range(p)) if fixed_names is None else tuple(
        map(str, fixed_names)
    )
    if len(fixed_names) != p:
        raise ArgumentError(f"`fixed_names` has {len(fixed_names)} names for {p} columns.")
    _check_rank(X, fixed_names)
    if level_names is None:
        level_names = tuple(str(i) for i in range(m))
    return y, X, codes.astype(np.intp), x, m, fixed_names, tuple(map(str, level_names))


@single_blas_thread
def fit_slopes(
    y,
    X,
    codes,
    x,
    *,
    correlated: bool = True,
    fixed_names=None,
    group_name: str = "g",
    slope_name: str = "x",
    level_names=None,
    reml: bool = True,
) -> MixedModelFit:
    """Fit a random intercept and a random slope per level of one factor.

    Estimands: the fixed effects ``beta`` and the covariance ``Sigma`` of each
    level's intercept and slope (the variances and their correlation; with
    ``correlated=False`` the correlation is fixed at 0) and the residual
    variance, as lme4's ``lmer(y ~ X + (x | g))`` or
    ``lmer(y ~ X + (1 | g) + (0 + x | g))``.

    Parameters
    ----------
    y : array_like, shape (n,)
    X : array_like, shape (n, p)
        Fixed effects, full column rank; usually the intercept and ``x``.
    codes : array_like of int, shape (n,)
        The grouping factor (codes ``0 .. levels-1``).
    x : array_like, shape (n,)
        The variable whose slope varies by level (e.g. training days, epochs).
    correlated : bool, default True
        Estimate the intercept-slope correlation (``(x | g)``) or fix it at 0.
    fixed_names : sequence of str, optional
    group_name, slope_name : str
        Names of the factor and of the slope variable; the components are
        ``group_name`` (intercept), ``f"{slope_name}|{group_name}"`` (slope)
        and ``"Residual"``.
    level_names : sequence of str, optional
    reml : bool, default True

    Returns
    -------
    MixedModelFit
        ``correlations`` holds the intercept-slope correlation; ``blups``
        the intercepts and the slopes per level; ``share`` and ``icc`` are
        NaN (a slope's variance is in units of y per unit of x).
    """
    y, X, codes, x, m, fixed_names, level_names = _fit_slope_iv(
        y, X, codes, x, fixed_names, group_name, slope_name, level_names
    )
    model = _SlopeModel(y, X, codes, x, m, correlated)
    return _fit(model, y, X, codes, x, fixed_names, group_name, slope_name,
                level_names, reml)  # fmt: skip


def _fit(model, y, X, codes, x, fixed_names, group_name, slope_name, level_names,
         reml, warn=True):  # fmt: skip
    theta, converged, msg, nev = _optimise(model, reml)
    ev = model.evaluate(theta, reml)
    n, p = model.n, model.p
    nn = n - p if reml else n
    sigma2 = ev["r2"] / nn
    RXi = dense.solve_triangular(ev["RX"], np.eye(p), lower=False)
    vcov = sigma2 * (RXi @ RXi.T)
    beta = ev["beta"]
    cov = sigma2 * ev["T"] @ ev["T"].T
    variance = np.array([cov[0, 0], cov[1, 1], sigma2])
    sd = np.sqrt(variance)
    corr = cov[0, 1] / (sd[0] * sd[1]) if sd[0] * sd[1] > 0 else np.nan
    b = model.blups(theta, ev)
    fitted = X @ beta + b[codes, 0] + b[codes, 1] * x
    diag = theta[[0, 2]] if model.correlated else theta
    singular = bool(np.any(diag < SINGULAR_TOL))
    notes = [msg]
    if singular:
        notes.append("singular fit: a variance of the intercept or slope is (near) zero")
    if not converged:
        notes.append(f"the optimiser did not converge: {msg}")
    if warn:
        for note in notes[1:]:
            warnings.warn(note + ".", VarevalWarning, stacklevel=4)
    slope = f"{slope_name}|{group_name}"
    npar = p + model.n_theta + 1
    crit = ev["dev"]
    fit = MixedModelFit(
        fixed_names=tuple(fixed_names),
        coef=beta,
        se=np.sqrt(np.diag(vcov)),
        vcov=vcov,
        components=(group_name, slope, "Residual"),
        variance=variance,
        sd=sd,
        share=np.full(3, np.nan),
        icc=np.full(3, np.nan),
        theta=theta,
        sigma=float(np.sqrt(sigma2)),
        reml=bool(reml),
        **information_criteria(crit, npar, n),
        n_obs=n,
        n_fixed=p,
        n_levels=(model.m, model.m),
        blups=(b[:, 0].copy(), b[:, 1].copy()),
        level_names=(level_names, level_names),
        fitted=fitted,
        residuals=y - fitted,
        singular=singular,
        converged=converged,
        n_evaluations=nev,
        message="; ".join(notes),
        correlations=((group_name, slope, float(corr)),) if model.correlated else (),
    )
    object.__setattr__(
        fit, "_state",
        _SlopeState(model, y, X, codes, x, fixed_names, group_name, slope_name,
                    level_names),
    )  # fmt: skip
    return fit


@dataclasses.dataclass(frozen=True)
class _SlopeState:
    """What the tests need to refit or re-evaluate a slope model."""

    cp: _SlopeModel
    y: np.ndarray
    X: np.ndarray
    codes: np.ndarray
    x: np.ndarray
    fixed_names: tuple
    group_name: str
    slope_name: str
    level_names: tuple

    def refit(self, reml):
        """The same model fitted by REML or ML, without warnings."""
        return _fit(self.cp, self.y, self.X, self.codes, self.x, self.fixed_names,
                    self.group_name, self.slope_name, self.level_names, reml,
                    warn=False)  # fmt: skip
