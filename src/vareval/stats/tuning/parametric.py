"""Parametric tuning curves: the quadratic distribution of search outcomes (as opda's).

When random search optimises a function that is close to quadratic near its
optimum, the tail of the score distribution approaches the *quadratic
distribution* ``Q(a, b, c)`` (Lourie et al. 2024): on ``[a, b]``, with ``c``
the effective number of hyper-parameters,

- concave form (maximising): ``F(y) = 1 - ((b - y) / (b - a)) ** (c / 2)``;
- convex form (minimising): ``F(y) = ((y - a) / (b - a)) ** (c / 2)``.

Its quantile and average tuning curves are closed forms, so a fitted
quadratic extrapolates the tuning curve beyond the ``n`` iterations run. That
is a *model-based extrapolation*: it holds only as far as the quadratic form
fits, which :meth:`QuadraticDistribution.goodness_of_fit` checks against the
data's simultaneous CDF band. :func:`parametric_tuning_curve` gives the
extrapolated curve with bootstrap uncertainty and says, in every field that
leaves it, which ``k`` lie beyond the data.

The fit is maximum product spacing (Cheng and Amin 1983; Ranneby 1984) in the
variant of opda that handles ties and censoring: observations outside the
left-open interval ``limits = (lo, hi]`` count only as below or above it, tied
values share one spacing weighted by their count, and the loss is
``-sum_j k_j log((n + 1) dF_j / k_j) / (n + 1)`` over the buckets ``j``.
vareval profiles the far end (``a`` of the concave form) out in closed form
and minimises over the near end for every allowed ``(c, convex)``, roughly,
then the three best finely (:func:`_profiled_fits`); with many scores the
narrow buckets far from the near end are summed from binned moments
(:class:`_FarBuckets`). The former bounded Nelder-Mead search over ``(a, b)``
remains as ``_fit(..., search=True)``, the tests' reference. opda uses
differential evolution.

References
----------
Cheng, R. C. H. and Amin, N. A. K. (1983). Estimating parameters in
    continuous univariate distributions with a shifted origin. JRSS B 45(3).
Ranneby, B. (1984). The maximum spacing method. Scandinavian Journal of
    Statistics 11(2).
Lourie, N., Cho, K. and He, H. (2024). Show your work with confidence:
    confidence bands for tuning curves. NAACL.
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers

import numpy as np
from scipy import optimize, special

from vareval.errors import ArgumentError, VarevalError
from vareval.stats._checks import as_bool, as_confidence, as_positive_int, as_rng, as_scores
from vareval.stats._result import Result
from vareval.stats.tuning.bands import order_statistic_band
from vareval.stats.tuning.curves import _as_k, _as_q

__all__ = [
    "GoodnessOfFit",
    "NoisyQuadraticDistribution",
    "ParametricTuningCurve",
    "QuadraticDistribution",
    "parametric_tuning_curve",
]

C_MIN, C_MAX = 1, 10


def _repr_fields(dist) -> str:
    """``Name(a=..., b=..., ...)`` over the distribution's parameters."""
    args = ", ".join(f"{f}={getattr(dist, f)!r}" for f in dist._FIELDS)
    return f"{type(dist).__name__}({args})"


def _eq_fields(dist, other):
    """Equal when of the same type with the same parameters."""
    if type(other) is not type(dist):
        return NotImplemented
    return all(getattr(dist, f) == getattr(other, f) for f in dist._FIELDS)


def _as_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ArgumentError(f"`{name}` must be a finite number; got {value!r}.")
    return float(value)


class QuadraticDistribution:
    r"""The quadratic distribution ``Q(a, b, c)`` of search outcomes (opda's definition).

    Parameters
    ----------
    a, b : float
        The support ``[a, b]``, finite, ``a <= b``.
    c : int
        Effective number of hyper-parameters, 1 to 10.
    convex : bool, default False
        The convex form (the tail when minimising) instead of the concave one
        (maximising).

    Notes
    -----
    :math:`Y \sim Q_{\max}(a, b, c) \iff -Y \sim Q_{\min}(-b, -a, c)`, and
    ``a + (b - a) Y`` maps ``Q(0, 1, c)`` onto ``Q(a, b, c)``. ``c = 2`` is
    the uniform law on ``[a, b]`` in either form.
    """

    C_MIN, C_MAX = C_MIN, C_MAX

    def __init__(self, a, b, c, convex: bool = False):
        a, b = _as_real(a, "a"), _as_real(b, "b")
        if a > b:
            raise ArgumentError(f"`a` must be <= `b`; got a={a!r}, b={b!r}.")
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or c % 1 or not (
            C_MIN <= c <= C_MAX
        ):
            raise ArgumentError(f"`c` must be a whole number from 1 to 10; got {c!r}.")
        self.a, self.b, self.c = a, b, int(c)
        self.convex = as_bool(convex, "convex")
        r = b - a
        self.mean = a + r * c / (c + 2) if self.convex else a + r * 2 / (c + 2)
        self.variance = r**2 * 4 * c / ((c + 2) ** 2 * (c + 4))

    _FIELDS = ("a", "b", "c", "convex")

    def __repr__(self) -> str:
        return _repr_fields(self)

    def __eq__(self, other):
        return _eq_fields(self, other)

    def _standard(self, ys):
        """``(y - a) / (b - a)`` (convex) or ``(b - y) / (b - a)`` (concave), in [0, 1]."""
        z = (ys - self.a) if self.convex else (self.b - ys)
        return np.clip(z / (self.b - self.a), 0.0, 1.0)

    def pdf(self, y):
        """Return the probability density at ``y`` (``inf`` at ``a`` when ``a == b``)."""
        ys = np.asarray(y, dtype=float)
        if self.a == self.b:
            return np.where(ys == self.a, np.inf, 0.0)[()]
        r = self.b - self.a
        z = ((ys - self.a) if self.convex else (self.b - ys)) / r
        with np.errstate(divide="ignore", invalid="ignore"):  # outside [a, b]: set to 0 below
            p = (self.c / (2 * r)) * z ** (self.c / 2 - 1)
        return np.where((ys < self.a) | (ys > self.b), 0.0, p)[()]

    def cdf(self, y):
        """Return ``F(y) = P(Y <= y)``."""
        ys = np.asarray(y, dtype=float)
        if self.a == self.b:
            return np.where(ys < self.a, 0.0, 1.0)[()]
        z = self._standard(ys) ** (self.c / 2)
        return (z if self.convex else 1.0 - z)[()]

    def ppf(self, p):
        """Return the quantile ``Q(p)``, ``p`` in ``[0, 1]`` (1e-10 of slack)."""
        p = np.asarray(p, dtype=float)
        if np.any(np.isnan(p)) or np.any((p < -1e-10) | (p > 1 + 1e-10)):
            raise ArgumentError("probabilities passed to `ppf` must lie in [0, 1].")
        p = np.clip(p, 0.0, 1.0)
        r = self.b - self.a
        if self.convex:
            return (self.a + r * p ** (2 / self.c))[()]
        return (self.b - r * (1 - p) ** (2 / self.c))[()]

    def sample(self, size=None, *, rng=None):
        """Draw ``size`` outcomes by inversion (``rng``: SPEC 7)."""
        return self.ppf(as_rng(rng).uniform(0.0, 1.0, size=size))

    def _minimize(self, higher_is_better):
        return self.convex if higher_is_better is None else not as_bool(
            higher_is_better, "higher_is_better"
        )

    def quantile_tuning_curve(self, k, q: float = 0.5, *, higher_is_better=None):
        """Return the ``q``-quantile of the best of ``k`` draws (any real ``k > 0``).

        ``higher_is_better=None`` follows the form, as opda: the convex form
        minimises, the concave one maximises.
        """
        k, q = _as_k(k), _as_q(q)
        minimize = self._minimize(higher_is_better)
        return self.ppf(1 - (1 - q) ** (1 / k) if minimize else q ** (1 / k))

    def average_tuning_curve(self, k, *, higher_is_better=None):
        """Return the expected best of ``k`` draws (any real ``k > 0``), in closed form.

        The best of ``k`` has ``F(best) ~ Beta(k, 1)`` (or ``Beta(1, k)`` for
        the minimum), so ``E[best]`` is ``E[W ** (2 / c)]`` of a Beta variable:
        ``k / (k + 2 / c)`` or ``Gamma(k + 1) Gamma(1 + 2 / c) / Gamma(k + 1 + 2 / c)``.
        """
        k = _as_k(k)
        minimize = self._minimize(higher_is_better)
        r, e = self.b - self.a, 2 / self.c
        near = np.exp(special.gammaln(k + 1) + special.gammaln(1 + e) - special.gammaln(k + 1 + e))
        far = k / (k + e)
        if self.convex:
            return (self.a + r * (near if minimize else far))[()]
        return (self.b - r * (far if minimize else near))[()]

    # -- fitting -------------------------------------------------------------------

    @classmethod
    def fit(cls, scores, limits=(-np.inf, np.inf), constraints=None) -> QuadraticDistribution:
        """Fit by maximum product spacing, with censoring and constraints (as opda's ``fit``).

        Parameters
        ----------
        scores : array_like
            The search outcomes.
        limits : (float, float), default (-inf, inf)
            Left-open interval ``(lo, hi]`` fitted; scores outside it are
            censored (only their count below or above is used). Fit the right
            tail when maximising, e.g. ``(median, inf)``.
        constraints : dict, optional
            ``"a"``, ``"b"``, ``"c"``: a number (fixed) or a pair ``(low,
            high)``; ``"convex"``: a bool or a list of bools.
        """
        return _fit(cls, scores, limits, constraints)[0]

    def spacing_loss(self, scores, limits=(-np.inf, np.inf)) -> float:
        """The maximum-spacing loss that :meth:`fit` minimises, at these parameters."""
        zs, ks, n = _buckets(as_scores(scores, "scores"), *_as_limits(limits))
        return _loss(self, zs, ks, n)

    def goodness_of_fit(self, scores, limits=(-np.inf, np.inf), confidence: float = 0.95):
        """Check whether this distribution lies inside the data's simultaneous CDF band.

        Returns a :class:`GoodnessOfFit`: with ``U_(i) = F(y_(i))`` the fitted
        CDF at the sorted scores, the form is rejected where some ``U_(i)``
        of a score inside ``limits`` leaves its Learned-Miller-DeStefano
        highest-density interval at simultaneous level ``confidence``. For a
        distribution fixed in advance that is a test at level
        ``1 - confidence``; fitted to the same data it is conservative, so a
        rejection means the quadratic form does not fit.
        """
        ys = np.sort(as_scores(scores, "scores"))
        lo, hi = _as_limits(limits)
        band = order_statistic_band(ys.size, as_confidence(confidence), "ld-hd")
        u = np.asarray(self.cdf(ys), dtype=float)
        inside = (ys > lo) & (ys <= hi)
        excess = np.maximum(band.lower - u, u - band.upper) * inside
        worst = int(np.argmax(excess))
        fits = bool(excess[worst] <= 0)
        return GoodnessOfFit(
            fits=fits,
            statistic=float(max(excess[worst], 0.0)),
            worst_score=float(ys[worst]),
            n_checked=int(inside.sum()),
            confidence=band.confidence,
            message=(
                "the quadratic form is not contradicted by the data's "
                f"{band.confidence:.0%} simultaneous CDF band"
                if fits
                else "the quadratic form does NOT fit: its CDF leaves the data's "
                f"{band.confidence:.0%} simultaneous CDF band by {excess[worst]:.3g} "
                f"at score {ys[worst]:.6g}; do not extrapolate with it"
            ),
        )


def _as_limits(limits):
    try:
        lo, hi = (float(v) for v in limits)
    except (TypeError, ValueError):
        raise ArgumentError(f"`limits` must be a pair (lo, hi); got {limits!r}.") from None
    if np.isnan(lo) or np.isnan(hi) or not lo < hi:
        raise ArgumentError(f"`limits` must satisfy lo < hi; got {limits!r}.")
    return lo, hi


def _buckets(ys, lo, hi):
    """The spacing buckets: sorted edges and counts (opda's variant for ties and censoring)."""
    n = ys.size
    observed = ys[(ys > lo) & (ys <= hi)]
    n_lower, n_upper = int(np.sum(ys <= lo)), int(np.sum(ys > hi))
    points = np.concatenate(
        [[-np.inf], [lo] if n_lower else [], observed, [hi] if n_upper else [], [np.inf]]
    )
    zs, ks = np.unique(points, return_counts=True)
    ks = ks[1:].astype(float)  # bucket j ends at zs[j + 1] and holds its multiplicity
    if n_lower:
        ks[0] = n_lower
    if n_upper:
        ks[-2] -= 1
        ks[-1] = n_upper + 1
    return zs, ks, n


def _loss(dist, zs, ks, n) -> float:
    return _spacing(dist.a, dist.b, dist.c, dist.convex, zs, ks, n)


def _spacing(a, b, c, convex, zs, ks, n) -> float:
    """The spacing loss of ``Q(a, b, c)`` on the buckets (the CDF inlined: it runs per step)."""
    z = np.clip(((zs - a) if convex else (b - zs)) / (b - a), 0.0, 1.0) ** (c / 2)
    return _spacing_of(z if convex else 1.0 - z, ks, n)


def _spacing_of(cdf, ks, n) -> float:
    """``-sum_j k_j log((n + 1) dF_j / k_j) / (n + 1)``, ``inf`` where a spacing is empty."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = ks * np.log(np.diff(cdf) * (n + 1) / ks)
    value = -float(np.sum(terms[ks > 0])) / (n + 1)
    return value if np.isfinite(value) else np.inf


def _constraint(constraints, name, default):
    value = constraints.get(name, default)
    if name == "convex":
        values = [value] if isinstance(value, bool) else list(value)
        if not values or not all(isinstance(v, bool) for v in values):
            raise ArgumentError(
                f"the constraint on `convex` must be a bool or bools; got {value!r}."
            )
        return sorted(set(values))
    pair = np.atleast_1d(np.asarray(value, dtype=float))
    if pair.size == 1:
        pair = np.repeat(pair, 2)
    if pair.size != 2 or np.isnan(pair).any() or pair[0] > pair[1]:
        raise ArgumentError(
            f"the constraint on `{name}` must be a number or a pair (low, high); got {value!r}."
        )
    return float(pair[0]), float(pair[1])


def _fit(cls, scores, limits, constraints, search=False):
    """``(fitted, loss)``: ``a`` profiled out, or (``search=True``) Nelder-Mead over ``(a, b)``."""
    ys = as_scores(scores, "scores")
    lo, hi = _as_limits(limits)
    constraints = dict(constraints or {})
    unknown = set(constraints) - {"a", "b", "c", "convex"}
    if unknown:
        raise ArgumentError(f"unknown constraint(s) {sorted(unknown)}; accepted: a, b, c, convex.")
    zs, ks, n = _buckets(ys, lo, hi)
    observed = ys[(ys > lo) & (ys <= hi)]
    if observed.size < 2 or observed.min() == observed.max():
        raise VarevalError(
            "the fit needs at least 2 distinct scores inside `limits`; "
            f"got {np.unique(observed).size}."
        )
    y_min, y_max = observed.min(), observed.max()
    spread = y_max - y_min
    a_c = _constraint(constraints, "a", (-np.inf, np.inf))
    b_c = _constraint(constraints, "b", (-np.inf, np.inf))
    c_c = _constraint(constraints, "c", (C_MIN, C_MAX))
    cs = [c for c in range(C_MIN, C_MAX + 1) if c_c[0] <= c <= c_c[1]]
    if not cs:
        raise ArgumentError(f"the constraint on `c` allows no whole number from 1 to 10: {c_c}.")
    # free a lies below y_min, free b above y_max: a = y_min - R e^u, b = y_max + R e^v
    def to_u(bound, edge, sign):
        gap = sign * (edge - bound)
        return np.log(gap / spread) if gap > 0 else -np.inf

    free_a, free_b = a_c[0] < a_c[1], b_c[0] < b_c[1]
    u_bounds = (max(to_u(a_c[1], y_min, 1), -40.0), min(to_u(a_c[0], y_min, 1), 12.0))
    v_bounds = (max(to_u(b_c[0], y_max, -1), -40.0), min(to_u(b_c[1], y_max, -1), 12.0))
    forms = _constraint(constraints, "convex", [False, True])
    if not search:
        a_range = ((y_min - spread * np.exp(u_bounds[1]), y_min - spread * np.exp(u_bounds[0]))
                   if free_a else (a_c[0], a_c[0]))  # fmt: skip
        b_range = ((y_max + spread * np.exp(v_bounds[0]), y_max + spread * np.exp(v_bounds[1]))
                   if free_b else (b_c[0], b_c[0]))  # fmt: skip
        found = [fit for convex in forms
                 for fit in _profiled_fits(zs, ks, n, cs, convex, a_range, b_range, spread)]
        if not found:
            raise VarevalError(
                "the fit found no parameters with a finite loss under the constraints."
            )
        value, a, b, c, convex = min(found, key=lambda t: t[0])
        return cls(a, b, c, convex), value
    coarse = []  # every allowed (c, convex), searched roughly; then the best few finely
    for c, convex in itertools.product(cs, forms):
        def params(x):
            a = y_min - spread * np.exp(x[0]) if free_a else a_c[0]
            b = y_max + spread * np.exp(x[int(free_a)]) if free_b else b_c[0]
            return a, b

        def loss(x, c=c, convex=convex, params=params):
            a, b = params(x)
            return np.inf if not a < b else _spacing(a, b, c, convex, zs, ks, n)

        bounds = [u_bounds] * free_a + [v_bounds] * free_b
        if any(lo_ > hi_ for lo_, hi_ in bounds):
            continue
        if not bounds:
            coarse.append((loss([]), [], loss, params, c, convex))
            continue
        for s0 in (-1.5, 0.5, 2.5):  # the next start only if censoring makes this one infinite
            value, x = _nelder_mead(loss, [np.clip(s0, *bd) for bd in bounds], bounds, 1e-3)
            if np.isfinite(value):
                break
        coarse.append((value, x, loss, params, c, convex))
    coarse = [t for t in coarse if np.isfinite(t[0])]
    if not coarse:
        raise VarevalError("the fit found no parameters with a finite loss under the constraints.")
    coarse.sort(key=lambda t: t[0])
    best = (np.inf, None)
    bounds = [u_bounds] * free_a + [v_bounds] * free_b
    for rank, (value, x, loss, params, c, convex) in enumerate(coarse[:3]):
        # refine finely; the leader also from a second start far from the sample's range
        far = np.clip(np.full(len(x), 0.5), *np.transpose(bounds)) if len(x) else x
        starts = [x, far] if rank == 0 else [x]
        for x0 in starts if len(x) else []:
            v_new, x_new = _nelder_mead(loss, x0, bounds, 1e-10)
            if v_new < value:
                value, x = v_new, x_new
        if value < best[0]:
            best = (value, cls(*params(x), c, convex))
    return best[1], best[0]


def _profiled_fits(zs, ks, n, cs, convex, a_range, b_range, spread):
    """The best ``(loss, a, b, c, convex)`` for each ``c`` of one form, ``a`` profiled out.

    Concave form, buckets ending at the finite points ``z_1 < ... < z_m``:
    with ``a < z_1 < z_m < b`` (elsewhere the lowest or the highest bucket is
    empty and the loss infinite), ``e = c / 2``, ``s = ((b - z_1) / (b - a))^e``
    and ``M`` the weight of every bucket but the lowest (``k_0``), the sum
    ``sum_j k_j log dF_j`` is
    ``sum_mid k_j log((b - z_j)^e - (b - z_(j+1))^e) + k_last e log(b - z_m)
    - M e log(b - z_1) + k_0 log(1 - s) + M log s``.
    Only the last two terms depend on ``a``: they are largest at
    ``s = M / (M + k_0)`` (cut to the ``a`` allowed), so the fit is one
    dimensional in ``b``: a grid over ``log(b - z_m)``, then bounded Brent
    near the best grid point for the three best ``c``. The convex form is the
    mirror image (``z -> -z``, ``(a, b) -> (-b, -a)``).
    """
    if convex:  # F_convex(z; a, b) = 1 - F_concave(-z; -b, -a): the buckets mirrored
        zs, ks = -zs[::-1], ks[::-1]
        a_range, b_range = (-b_range[1], -b_range[0]), (-a_range[1], -a_range[0])
    z = zs[1:-1]
    top, bottom = z[-1], z[0]
    a_hi = min(a_range[1], bottom)
    if a_range[0] >= bottom or b_range[1] <= top:
        return []
    tiny = spread * np.exp(-40.0)
    w_lo = np.log(max(b_range[0] - top, tiny))
    w_hi = np.log(b_range[1] - top)
    fixed_b = b_range[0] == b_range[1]
    steps = max(2, int(w_hi - w_lo) * 2 + 1)  # half a unit of log(b - z_m) apart
    grid = np.array([w_hi]) if fixed_b else np.linspace(w_lo, w_hi, steps)
    terms = _ProfiledSpacing(z, ks, n, a_range[0], a_hi)

    def brent(e, lo, hi, xatol):  # the loss over log(b - z_m) in [lo, hi]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            res = optimize.minimize_scalar(
                lambda w: terms(np.exp([w]), e)[0], method="bounded", bounds=(lo, hi),
                options={"xatol": xatol},
            )  # fmt: skip
        return float(res.fun), float(res.x)

    coarse = []
    for c in cs:  # roughly for every c, then finely for the three best (as the search)
        values = terms(np.exp(grid), c / 2)
        i = int(np.argmin(values))
        value, w = values[i], grid[i]
        bracket = (grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)])
        if not fixed_b and np.isfinite(value):
            value, w = min((value, w), brent(c / 2, *bracket, 1e-3))
        coarse.append((value, c, w, bracket))
    out = []
    for value, c, w, bracket in sorted(t for t in coarse if np.isfinite(t[0]))[:3]:
        if not fixed_b:
            value, w = min((value, w), brent(c / 2, *bracket, 1e-10))
        b = top + np.exp(w) if not fixed_b else b_range[0]
        a = terms.best_a(b - top, c / 2)
        out.append((float(value), *((-b, -a) if convex else (a, b)), c, convex))
    return out


class _ProfiledSpacing:
    """The concave form's spacing loss with ``a`` profiled out.

    A function of ``beta = b - z_m`` and ``e = c / 2`` (see :func:`_profiled_fits`).
    """

    def __init__(self, z, ks, n, a_lo, a_hi):
        self.top, self.bottom, self.a_lo, self.a_hi = z[-1], z[0], a_lo, a_hi
        d = z[-1] - z  # distances to the highest point, falling to 0
        kmid = ks[1:-1]
        j = np.flatnonzero(kmid > 0)  # empty buckets add nothing (as in _spacing_of)
        far = (d[j] - d[j + 1]) < _FAR * d[j]  # narrow for every b: summed by series
        if far.sum() < _MIN_FAR:
            far[:] = False
        self.far = _FarBuckets(d[j[far]], d[j[far] + 1], kmid[j[far]]) if far.any() else None
        near = j[~far]
        self.d_lo, self.d_hi, self.kmid = d[near], d[near + 1], kmid[near]
        self.span = d[0]  # z_m - z_1
        self.k0, self.klast = ks[0], ks[-1]
        self.m = kmid.sum() + self.klast
        self.s_free = self.m / (self.m + self.k0)
        held = ks[ks > 0]
        self.const = float(np.sum(held * np.log((n + 1) / held)))
        self.n = n

    def _s_range(self, beta, e):
        span = beta + self.span  # b - z_1
        b = self.top + beta
        with np.errstate(divide="ignore", invalid="ignore"):
            s_lo = np.where(np.isfinite(self.a_lo), (span / (b - self.a_lo)) ** e, 0.0)
            s_hi = np.where(self.a_hi < self.bottom, (span / (b - self.a_hi)) ** e, 1.0)
        return s_lo, s_hi

    def best_a(self, beta, e):
        """The ``a`` that maximises the loss's ``a`` terms at this ``b``."""
        s_lo, s_hi = self._s_range(beta, e)
        if self.s_free <= s_lo:
            return self.a_lo
        if self.s_free >= s_hi:
            return self.a_hi
        return float(self.top + beta - (beta + self.span) * self.s_free ** (-1 / e))

    def __call__(self, beta, e):
        """The loss at each ``beta`` (1-d) for one ``e``."""
        beta = np.asarray(beta, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            b = beta[:, None]
            mid = np.log((b + self.d_lo) ** e - (b + self.d_hi) ** e) @ self.kmid
            if self.far is not None:
                mid = mid + self.far(beta, e)
            s_lo, s_hi = self._s_range(beta, e)
            s = np.clip(self.s_free, s_lo, s_hi)
            total = (mid + self.klast * e * np.log(beta) - self.m * e * np.log(beta + self.span)
                     + self.k0 * np.log1p(-s) + self.m * np.log(s))  # fmt: skip
        loss = -(total + self.const) / (self.n + 1)
        return np.where(np.isnan(loss), np.inf, loss)


_FAR = 1e-3  # buckets narrower than this share of their distance to z_m: by series
_MIN_FAR = 2_000  # fewer such buckets: all exactly
_BIN = 0.02  # relative width of a bin of distances
_ORDERS = (8, 8, 6, 4, 2)  # powers of the offset kept, per power of t (0: the log term)


class _FarBuckets:
    r"""``sum_j k_j log((beta + d_j)^e - (beta + d'_j)^e)`` over many narrow buckets.

    ``O(bins)`` per evaluation instead of ``O(buckets)``. With ``h = d - d'`` and
    ``t = h / (beta + d) <= h / d <= 1e-3``, each term is
    ``(e - 1) log(beta + d) + log(e h) + g_e(t)``, ``g_e(t) = log((1 - (1 - t)^e) / (e t))
    = sum_p c_p(e) t^p`` (kept to ``p = 4``: ``1e-3^5``). The distances are
    binned geometrically (width 2 %): in a bin ``d = delta + eps`` (``delta`` the
    bin's weighted mean) with ``|eps| < 0.02 (beta + delta)`` for every ``beta >= 0``,
    so ``log(beta + d)``
    and ``(beta + d)^-p`` are power series in ``eps / (beta + delta)`` whose
    moments ``sum k h^p eps^q`` are summed once. The orders kept leave each term
    within about 1e-16 of its exact value; the tests hold the sum to 5e-14 per
    unit weight of a cancellation-free direct sum.
    """

    def __init__(self, d, d_next, k):
        h = d - d_next
        edges = np.floor(np.log(d) / np.log1p(_BIN))
        first = np.flatnonzero(np.r_[True, edges[1:] != edges[:-1]])  # d falls: bins are runs
        width = np.add.reduceat(k, first)
        self.delta = np.add.reduceat(k * d, first) / width  # eps sums to 0 in every bin
        eps = d - np.repeat(self.delta, np.diff(np.r_[first, d.size]))
        self.weight, self.log_h = width, float(np.sum(k * np.log(h)))
        self.total = float(k.sum())
        top = max(p + q for p, q_max in enumerate(_ORDERS) for q in range(q_max + 1))
        self.moments = np.zeros((len(_ORDERS), width.size, top + 1))  # [p, bin, p + q]
        for p, q_max in enumerate(_ORDERS):
            term = k * h**p
            for q in range(q_max + 1):
                if p or q:  # log(1 + x) = sum (-1)^(q+1) x^q / q; (1 + x)^-p = sum C(-p, q) x^q
                    coef = (-1.0) ** (q + 1) / q if p == 0 else (-1.0) ** q * special.comb(
                        p + q - 1, q)
                    self.moments[p, :, p + q] = coef * np.add.reduceat(term, first)
                term = term * eps
        self._powers, self._coef = np.arange(top + 1), {}

    def __call__(self, beta, e):
        if e not in self._coef:  # per bin, the coefficient of each power of 1 / (beta + delta)
            c = np.r_[e - 1.0, _log_series(e, len(_ORDERS) - 1)]
            self._coef[e] = np.tensordot(c, self.moments, axes=1)
        r = 1.0 / (beta[:, None] + self.delta)  # (points, bins)
        series = np.sum(r[..., None] ** self._powers * self._coef[e], axis=(1, 2))
        logs = (e - 1.0) * (np.log(beta[:, None] + self.delta) @ self.weight)
        return logs + series + self.total * np.log(e) + self.log_h


def _log_series(e, order):
    """``c_1 .. c_order`` of ``log((1 - (1 - t)^e) / (e t)) = sum_p c_p t^p``."""
    binom = np.cumprod([1.0] + [(e - i) / (i + 1) for i in range(order + 1)])  # C(e, i)
    a = np.array([-binom[j + 1] * (-1.0) ** (j + 1) / e for j in range(order + 1)])  # a_0 = 1
    c = np.zeros(order + 1)
    for p in range(1, order + 1):  # log of a power series with a_0 = 1
        c[p] = a[p] - sum(j * c[j] * a[p - j] for j in range(1, p)) / p
    return c[1:]


def _nelder_mead(loss, x0, bounds, xatol):
    with np.errstate(invalid="ignore"):
        res = optimize.minimize(
            loss, np.asarray(x0, float), method="Nelder-Mead", bounds=bounds,
            options={"xatol": xatol, "fatol": 1e-14},
        )  # fmt: skip
    return float(res.fun), res.x


@dataclasses.dataclass(frozen=True, repr=False)
class GoodnessOfFit(Result):
    """Whether a fitted parametric form stays inside the data's simultaneous CDF band.

    No figure: one verdict; the parametric curve's figure shows it in its title.

    Attributes
    ----------
    fits : bool
        False where the form's CDF leaves the band: it does not fit.
    statistic : float
        How far it leaves the band (0 when inside).
    worst_score : float
        The score where it comes closest to, or goes furthest past, the band.
    n_checked : int
        Scores inside the fitted limits that were checked.
    confidence : float
    message : str
    """

    fits: bool
    statistic: float
    worst_score: float
    n_checked: int
    confidence: float
    message: str


EXTRAPOLATION = "model-based extrapolation"
_BLOCK_CELLS = 2**22  # resampled scores held at once (32 MB)
_MIN_REFITS = 10  # successful refits an interval needs


@dataclasses.dataclass(frozen=True, repr=False)
class ParametricTuningCurve(Result):
    """A tuning curve from a fitted quadratic distribution, extrapolated beyond ``n``.

    Attributes
    ----------
    k : ndarray
    estimate : ndarray
        The fitted distribution's ``q``-quantile (median) tuning curve.
    average : ndarray
        Its average tuning curve (the expected best of ``k``).
    lower, upper : ndarray
        Bootstrap interval of ``estimate``, pointwise, at ``confidence``:
        with ``bootstrap="parametric"`` the basic interval
        ``(2 est - q_high, 2 est - q_low)`` over refits to samples drawn from
        the fitted distribution; with ``"nonparametric"`` the percentile
        interval over refits to resampled scores.
    extrapolated : ndarray of bool
        ``k > n``: a *model-based extrapolation*, beyond the iterations run;
        it is only as good as the quadratic form's fit.
    label : ndarray of str
        ``"observed range"`` or ``"model-based extrapolation"`` per ``k``.
    n : int
    a, b, c, convex
        The fitted distribution.
    goodness_of_fit : GoodnessOfFit
    q, confidence, higher_is_better, n_resamples
    bootstrap : {"parametric", "nonparametric"}
    bootstrap_distribution : ndarray, shape (successful refits, k)
        The refits' curves.
    """

    k: np.ndarray
    estimate: np.ndarray
    average: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    extrapolated: np.ndarray
    label: np.ndarray
    n: int
    a: float
    b: float
    c: int
    convex: bool
    goodness_of_fit: GoodnessOfFit
    q: float
    confidence: float
    higher_is_better: bool
    n_resamples: int
    o: float = 0.0
    family: str = "quadratic"
    bootstrap: str = "parametric"
    bootstrap_distribution: np.ndarray | None = None

    _interval = ("lower", "upper")

    def to_dict(self) -> dict:
        """Fields as plain values, without the refits."""
        out = super().to_dict()
        out.pop("bootstrap_distribution", None)
        return out
    _rows = ("k", "estimate", "lower", "upper", "average", "extrapolated", "label")

    @property
    def distribution(self):
        """The fitted (noisy) quadratic distribution."""
        if self.family == "noisy-quadratic":
            return NoisyQuadraticDistribution(self.a, self.b, self.c, self.o, self.convex)
        return QuadraticDistribution(self.a, self.b, self.c, self.convex)


def parametric_tuning_curve(
    scores,
    k,
    *,
    higher_is_better: bool = True,
    q: float = 0.5,
    limits=None,
    constraints=None,
    confidence: float = 0.95,
    n_resamples: int = 100,
    rng=None,
    family: str = "quadratic",
    bootstrap: str = "parametric",
) -> ParametricTuningCurve:
    """Fit a quadratic distribution to the search outcomes and extrapolate its tuning curve.

    Estimand: the ``q``-quantile (and mean) of the best score after ``k``
    iterations *under the fitted quadratic model*; for ``k > n`` this is a
    model-based extrapolation, marked so in ``extrapolated`` and ``label``.
    The fit is to the right tail (above the median) when maximising and the
    left tail when minimising, with the concave or convex form, as opda
    recommends, unless ``limits`` / ``constraints`` say otherwise.

    The interval reflects sampling uncertainty of the fit *given the model*,
    not doubt about the model. By default it is a parametric bootstrap:
    ``n_resamples`` samples of ``n`` drawn from the fitted distribution, each
    refitted exactly as the data were (its own median as the tail's limit),
    and the basic interval ``(2 est - q_high, 2 est - q_low)``. The
    percentile interval over refits to resampled scores (``"nonparametric"``,
    the former default) under-covers when the model is exactly right: a
    resample never holds a score above the sample's maximum, so the refits
    under-state how far the upper end ``b`` can lie (0.76 coverage at
    ``k = 60`` for Q(0.3, 0.85, 3), n = 60; docs/tuning.md).

    Parameters
    ----------
    scores : array_like
    k : array_like
        Search iterations (real, > 0), typically past ``n``.
    higher_is_better : bool, default True
    q : float, default 0.5
    limits : (float, float), optional
        Default ``(median, inf)`` when maximising, ``(-inf, median)`` when not.
    constraints : dict, optional
        As in :meth:`QuadraticDistribution.fit`; ``convex`` defaults to
        ``not higher_is_better``.
    confidence : float, default 0.95
    n_resamples : int, default 100
    rng : None, int or numpy.random.Generator
    family : {"quadratic", "noisy-quadratic"}, default "quadratic"
        :class:`QuadraticDistribution` or :class:`NoisyQuadraticDistribution`
        (each evaluation with normal noise; its fit is about 50 times slower).
    bootstrap : {"parametric", "nonparametric"}, default "parametric"
        See above; at least 10 refits must succeed (``n_resamples >= 10``).
    """
    fits = {"quadratic": lambda *a: _fit(QuadraticDistribution, *a),
            "noisy-quadratic": lambda *a: _fit_noisy(NoisyQuadraticDistribution, *a)}
    if family not in fits:
        raise ArgumentError(f"`family` must be 'quadratic' or 'noisy-quadratic'; got {family!r}.")
    fit = fits[family]
    ys = as_scores(scores, "scores", min_n=3)
    hib = as_bool(higher_is_better, "higher_is_better")
    k, q, confidence = np.atleast_1d(_as_k(k)), _as_q(q), as_confidence(confidence)
    if bootstrap not in ("parametric", "nonparametric"):
        raise ArgumentError(
            f"`bootstrap` must be 'parametric' or 'nonparametric'; got {bootstrap!r}."
        )
    if isinstance(n_resamples, numbers.Integral) and not isinstance(n_resamples, bool):
        if n_resamples < _MIN_REFITS:
            raise ArgumentError(
                f"`n_resamples` must be at least {_MIN_REFITS}: the interval needs "
                f"{_MIN_REFITS} successful refits (and half of those asked for); "
                f"got {n_resamples}."
            )
    n_resamples = as_positive_int(n_resamples, "n_resamples", minimum=_MIN_REFITS)
    chosen = limits is not None

    def tail_limits(sample):  # the fit's own choice, repeated on every resample
        if chosen:
            return limits
        median = float(np.median(sample))
        return (median, np.inf) if hib else (-np.inf, median)

    constraints = {"convex": not hib, **(constraints or {})}
    dist, _ = fit(ys, tail_limits(ys), constraints)
    gen = as_rng(rng)

    def resamples(rows):
        if bootstrap == "parametric":  # fresh samples from the fit: the model's own law
            return dist.sample((rows, ys.size), rng=gen)
        return ys[gen.integers(0, ys.size, size=(rows, ys.size))]

    # a block of resamples at a time: the same stream as all at once (tested), except
    # the noisy law's, which draws all uniforms before the noise
    rows = n_resamples if family == "noisy-quadratic" else max(1, _BLOCK_CELLS // ys.size)
    boot = np.full((n_resamples, k.size), np.nan)
    for first in range(0, n_resamples, rows):
        block = resamples(min(rows, n_resamples - first))
        for i, sample in enumerate(block, first):  # each resample is one refit
            try:
                fit_i, _ = fit(sample, tail_limits(sample), constraints)
            except VarevalError:
                continue  # too few distinct tail scores: no refit (counted below)
            boot[i] = fit_i.quantile_tuning_curve(k, q, higher_is_better=hib)
    ok = ~np.isnan(boot[:, 0])
    if ok.sum() < max(_MIN_REFITS, n_resamples // 2):
        raise VarevalError(
            f"only {ok.sum()} of {n_resamples} bootstrap refits succeeded (at least "
            f"{max(_MIN_REFITS, n_resamples // 2)} are needed); too few distinct scores in "
            "the fitted tail for an interval."
        )
    tail = (1 - confidence) / 2
    low_q, high_q = np.quantile(boot[ok], [tail, 1 - tail], axis=0)
    estimate = np.atleast_1d(dist.quantile_tuning_curve(k, q, higher_is_better=hib))
    if bootstrap == "parametric":  # basic interval: the refits' bias about the fit reflected
        # kept inside the range the constraints allow (a reflected end could leave it)
        floor = _constraint(constraints, "a", (-np.inf, np.inf))[0]
        ceiling = _constraint(constraints, "b", (-np.inf, np.inf))[1]
        lower = np.clip(2 * estimate - high_q, floor, ceiling)
        upper = np.clip(2 * estimate - low_q, floor, ceiling)
    else:
        lower, upper = low_q, high_q
    extrapolated = k > ys.size
    return ParametricTuningCurve(
        k=k,
        estimate=estimate,
        average=np.atleast_1d(dist.average_tuning_curve(k, higher_is_better=hib)),
        lower=lower,
        upper=upper,
        extrapolated=extrapolated,
        label=np.where(extrapolated, EXTRAPOLATION, "observed range"),
        n=ys.size,
        a=dist.a,
        b=dist.b,
        c=dist.c,
        convex=dist.convex,
        goodness_of_fit=dist.goodness_of_fit(ys, tail_limits(ys), confidence),
        q=q,
        confidence=confidence,
        higher_is_better=hib,
        n_resamples=n_resamples,
        o=getattr(dist, "o", 0.0),
        family=family,
        bootstrap=bootstrap,
        bootstrap_distribution=boot[ok],
    )


# -- the noisy quadratic distribution ------------------------------------------------

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)
_PANEL_NODES = np.polynomial.legendre.leggauss(12)
_REACH = 9.0  # the normal's mass beyond 9 sd is 2e-19: the moments ignore it


def _partial_moment(loc, scale, p):
    """``E[X^(p/2); 0 < X < 1]`` for ``X ~ N(loc, scale^2)`` and whole ``p >= -1``.

    Even ``p``: :func:`_integer_moment`. Odd ``p``: exact up to rounding
    (64-node Gauss-Legendre after ``x = t^2``, which makes
    the integrand ``2 t^(p+1) phi((t^2 - loc) / scale) / scale`` smooth), over
    ``loc -+ 9 scale`` clipped to [0, 1]; ``t^2 - loc`` is formed as
    ``(t - sqrt(loc)) (t + sqrt(loc))`` when ``loc > 0``, so small scales
    lose no digits.
    """
    if p >= 0 and p % 2 == 0:
        return _integer_moment(np.asarray(loc, dtype=float), scale, p // 2)
    loc = np.asarray(loc, dtype=float)[..., None]
    reach = _REACH * scale
    lo, hi = np.clip(loc - reach, 0.0, 1.0), np.clip(loc + reach, 0.0, 1.0)
    root = np.sqrt(np.maximum(loc, 0.0))
    t_lo, t_hi = np.sqrt(lo), np.sqrt(hi)
    with np.errstate(divide="ignore", invalid="ignore"):  # loc <= 0: the plain form below
        d_lo = np.where(loc > 0, np.maximum(-reach, -loc) / (t_lo + root), t_lo)
        d_hi = np.where(loc > 0, np.minimum(reach, 1.0 - loc) / (t_hi + root), t_hi)
    half = np.maximum(d_hi - d_lo, 0.0) / 2  # an interval beyond [0, 1] has no mass
    dt = (d_lo + d_hi) / 2 + half * _NODES  # t - sqrt(loc)
    t = root + dt
    z = (dt * (t + root) - np.minimum(loc, 0.0)) / scale
    f = t ** (p + 1) * np.exp(-0.5 * z * z)
    return (f @ _WEIGHTS) * half[..., 0] * (2 / (scale * np.sqrt(2 * np.pi)))


# Odd p on many points: Chebyshev pieces of M_p(loc) for the distribution's fixed
# scale, built once from the exact quadrature at their nodes. Pieces three scales wide
# near 0 and 1 (where M_p turns within a few scales), tripling in width between.
_CHEB_DEGREE = 22
_CHEB_ANGLES = (np.arange(_CHEB_DEGREE) + 0.5) * np.pi / _CHEB_DEGREE
_CHEB_DCT = np.cos(np.outer(np.arange(_CHEB_DEGREE), _CHEB_ANGLES)) * (2.0 / _CHEB_DEGREE)
_CHEB_DCT[0] /= 2
_TABLE_POINTS = 512  # below this many points the quadrature is cheaper than a table


class _MomentTable:
    """``M_p(loc)`` for one scale and odd ``p`` by piecewise Chebyshev interpolation.

    Each piece interpolates the exact values (:func:`_partial_moment`) at
    22 Chebyshev nodes; the pieces are three scales wide within 9 scales of 0
    and 1 and triple in width away from them, where M_p is a power of loc
    smoothed by the noise. Measured against the quadrature on 30,000 points
    per case (scales 1e-6 to 10, p = -1 to 9): the difference is below 1e-13
    for scales >= 1e-3 and at the rounding of ``loc`` itself (about
    ``1e-16 / scale``) below; the tests hold it to that.
    """

    def __init__(self, scale, p):
        reach = _REACH * scale
        steps = np.arange(-9, 10, 3) * scale
        widening = reach * 3.0 ** np.arange(1, 40)
        widening = widening[widening < 1 - reach]
        edges = np.concatenate([steps, 1 + steps, widening, 1 - widening])
        self.edges = np.unique(np.clip(edges, -reach, 1 + reach))
        self.mid = (self.edges[:-1] + self.edges[1:]) / 2
        self.half = (self.edges[1:] - self.edges[:-1]) / 2
        nodes = self.mid[:, None] + self.half[:, None] * np.cos(_CHEB_ANGLES)
        self.coef = np.ascontiguousarray((_partial_moment(nodes, scale, p) @ _CHEB_DCT.T).T)

    def __call__(self, loc):
        i = np.clip(np.searchsorted(self.edges, loc, side="right") - 1, 0, self.mid.size - 1)
        u = (loc - self.mid[i]) / self.half[i]  # loc - mid is exact within a piece
        c = self.coef[:, i]
        two_u, b1, b2, tmp = 2 * u, np.zeros_like(u), np.zeros_like(u), np.empty_like(u)
        for k in range(_CHEB_DEGREE - 1, 0, -1):  # Clenshaw's recurrence, in place:
            np.subtract(c[k], b2, out=b2)  # b2 <- c_k + 2 u b1 - b2, then swap
            b2 += np.multiply(two_u, b1, out=tmp)
            b1, b2 = b2, b1
        out = c[0] + u * b1 - b2
        return np.where((loc >= self.edges[0]) & (loc <= self.edges[-1]), out, 0.0)


def _integer_moment(loc, scale, j):
    """``E[X^j; 0 < X < 1]``, whole ``j >= 0``, by the upward recursion (Winkler et al. 1972).

    ``M_i = loc M_(i-1) + (i - 1) scale^2 M_(i-2) - scale phi((1 - loc) / scale)``
    for ``i >= 2``; ``M_0`` and ``M_1`` from the normal CDF and density.
    """
    lo, hi = -loc / scale, (1 - loc) / scale
    phi_lo, phi_hi = np.exp(-0.5 * lo * lo), np.exp(-0.5 * hi * hi)
    prev, cur = None, special.ndtr(hi) - special.ndtr(lo)
    if j >= 1:
        prev, cur = cur, loc * cur + scale * (phi_lo - phi_hi) / np.sqrt(2 * np.pi)
    term = -scale * phi_hi / np.sqrt(2 * np.pi)
    for i in range(2, j + 1):  # at most 5 steps (c <= 10)
        prev, cur = cur, loc * cur + (i - 1) * scale**2 * prev + term
    return cur


class NoisyQuadraticDistribution:
    r"""The noisy quadratic distribution ``Q(a, b, c, o)``: a quadratic plus normal noise.

    ``Y = X + E`` with ``X ~ Q(a, b, c)`` (:class:`QuadraticDistribution`)
    and ``E ~ N(0, o^2)`` independent: the tail of random-search scores when
    each evaluation carries normal noise (opda's definition). ``o = 0`` is the
    quadratic distribution.

    Parameters
    ----------
    a, b : float
        Support of the noiseless part, ``a <= b``.
    c : int
        Effective number of hyper-parameters, 1 to 10.
    o : float
        Standard deviation of the noise, ``>= 0``.
    convex : bool, default False

    Notes
    -----
    With ``r = b - a``, ``loc = (y - a) / r`` (convex) or ``(b - y) / r``
    (concave), ``s = o / r`` and ``M_p = E[Z^(p/2); 0 < Z < 1]`` for
    ``Z ~ N(loc, s^2)``: the density is ``c / (2 r) M_(c-2)`` and the CDF
    ``Phi((y - b) / o) + M_c`` (convex) or ``Phi((y - a) / o) - M_c``
    (concave). vareval computes ``M_p`` exactly (to rounding, see
    ``_partial_moment``); opda approximates the half-integer moments (odd
    ``c``) by minimax polynomials with a stated error up to about 1e-5. As
    opda, for ``o < 1e-6 r`` the noise is ignored (the quadratic law), and for
    ``o >= 10 r`` the law is the normal one with the same mean and variance.
    """

    C_MIN, C_MAX = C_MIN, C_MAX

    def __init__(self, a, b, c, o, convex: bool = False):
        self._quadratic = QuadraticDistribution(a, b, c, convex)
        self.o = _as_real(o, "o")
        if self.o < 0:
            raise ArgumentError(f"`o` must be >= 0; got {o!r}.")
        self.a, self.b, self.c, self.convex = (
            self._quadratic.a, self._quadratic.b, self._quadratic.c, self._quadratic.convex
        )  # fmt: skip
        r = self.b - self.a
        self.mean = self._quadratic.mean
        self.variance = self.o**2 + self._quadratic.variance
        self._tables = {}  # odd-p moment tables, built on first use on many points
        self._regime = (
            "noiseless" if self.o == 0 or self.o < 1e-6 * r else "noisy" if self.o < 10 * r
            else "normal"
        )  # fmt: skip

    _FIELDS = ("a", "b", "c", "o", "convex")

    def __repr__(self) -> str:
        return _repr_fields(self)

    def __eq__(self, other):
        return _eq_fields(self, other)

    def _loc(self, ys):
        r = self.b - self.a
        return ((ys - self.a) if self.convex else (self.b - ys)) / r, self.o / r

    def pdf(self, y):
        """Return the probability density at ``y``."""
        ys = np.asarray(y, dtype=float)
        if self._regime == "noiseless":
            return self._quadratic.pdf(ys)
        sd = np.sqrt(self.variance)
        if self._regime == "normal":
            return (np.exp(-0.5 * ((ys - self.mean) / sd) ** 2) / (sd * np.sqrt(2 * np.pi)))[()]
        loc, s = self._loc(self._inside(ys))
        p = self.c / (2 * (self.b - self.a)) * self._moment(loc, s, self.c - 2)
        return np.where(self._inside(ys) == ys, np.maximum(p, 0.0), 0.0)[()]

    def _moment(self, loc, s, p):
        """``M_p(loc)``: exact, or for odd ``p`` on many points from a cached table."""
        if p % 2 == 0 or (np.size(loc) < _TABLE_POINTS and p not in self._tables):
            return _partial_moment(loc, s, p)
        if p not in self._tables:
            self._tables[p] = _MomentTable(s, p)
        return self._tables[p](np.asarray(loc, dtype=float))

    def _inside(self, ys):
        """``ys`` clipped to ``a - 40 o, b + 40 o``: beyond, F is 0 or 1 and f is 0 in floats."""
        return np.clip(ys, self.a - 40 * self.o, self.b + 40 * self.o)

    def cdf(self, y):
        """Return ``F(y) = P(Y <= y)``."""
        ys = np.asarray(y, dtype=float)
        if self._regime == "noiseless":
            return self._quadratic.cdf(ys)
        if self._regime == "normal":
            return special.ndtr((ys - self.mean) / np.sqrt(self.variance))[()]
        ys = self._inside(ys)
        loc, s = self._loc(ys)
        moment = self._moment(loc, s, self.c)
        if self.convex:
            f = special.ndtr((ys - self.b) / self.o) + moment
        else:
            f = special.ndtr((ys - self.a) / self.o) - moment
        return np.clip(f, 0.0, 1.0)[()]

    def ppf(self, p):
        """Return the quantile ``Q(p) = inf {y: F(y) >= p}`` (to about 1e-15 of the range).

        Bisection on ``[a - 40 o, b + 40 o]`` until the bracket is 2^-20 of
        it, then regula falsi (Illinois) to rounding; opda bisects 30 times
        on ``[a - 6 o, b + 6 o]`` (so agrees to ``(b - a + 12 o) 2^-31``).
        """
        p = np.asarray(p, dtype=float)
        if np.any(np.isnan(p)) or np.any((p < -1e-10) | (p > 1 + 1e-10)):
            raise ArgumentError("probabilities passed to `ppf` must lie in [0, 1].")
        p = np.clip(p, 0.0, 1.0)
        if self._regime == "noiseless":
            return self._quadratic.ppf(p)
        if self._regime == "normal":
            return (self.mean + np.sqrt(self.variance) * special.ndtri(p))[()]
        flat = p.ravel()
        lo = np.full(flat.shape, self.a - 40 * self.o)
        hi = np.full(flat.shape, self.b + 40 * self.o)
        for _ in range(20):
            mid = (lo + hi) / 2
            below = self.cdf(mid) < flat
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        f_lo, f_hi = self.cdf(lo) - flat, self.cdf(hi) - flat
        side = np.zeros(flat.shape)
        for _ in range(40):  # Illinois: halve the stale end's value when one end repeats
            width = hi - lo
            x = np.where(f_hi > f_lo, lo - f_lo * width / (f_hi - f_lo), (lo + hi) / 2)
            x = np.clip(x, lo, hi)
            fx = self.cdf(x) - flat
            below = fx < 0
            lo, f_lo = np.where(below, x, lo), np.where(below, fx, f_lo)
            hi, f_hi = np.where(below, hi, x), np.where(below, f_hi, fx)
            f_hi = np.where(below & (side < 0), f_hi / 2, f_hi)
            f_lo = np.where(~below & (side > 0), f_lo / 2, f_lo)
            side = np.where(below, -1.0, 1.0)
            if np.all((hi - lo <= 4e-16 * (np.abs(lo) + np.abs(hi)) + 1e-300)
                      | (np.abs(fx) <= 2e-16)):  # fmt: skip
                break
        ys = np.where(flat == 0, -np.inf, np.where(flat == 1, np.inf, x))
        return ys.reshape(p.shape)[()]

    def sample(self, size=None, *, rng=None):
        """Draw ``size`` outcomes: the quadratic by inversion plus normal noise (``rng``: SPEC 7).

        The same stream gives the same draws as opda's ``sample`` with that
        generator (uniforms first, then normals).
        """
        gen = as_rng(rng)
        return self._quadratic.ppf(gen.uniform(0.0, 1.0, size=size)) + gen.normal(
            0.0, self.o, size=size
        )

    _minimize = QuadraticDistribution._minimize

    def quantile_tuning_curve(self, k, q: float = 0.5, *, higher_is_better=None):
        """Return the ``q``-quantile of the best of ``k`` draws (any real ``k > 0``)."""
        k, q = _as_k(k), _as_q(q)
        minimize = self._minimize(higher_is_better)
        return self.ppf(1 - (1 - q) ** (1 / k) if minimize else q ** (1 / k))

    def average_tuning_curve(self, k, *, higher_is_better=None):
        """Return the expected best of ``k`` draws (any real ``k > 0``).

        ``E[best] = y_0 + int_{y_0}^{y_1} (1 - G(y)) dy`` with ``G = F^k``
        (``1 - (1 - F)^k`` for the minimum) over ``y_0 = a - R o`` to
        ``y_1 = b + R o``, by Gauss-Legendre on panels ending at quantiles of
        the noiseless part (geometrically dense towards both ends) and at steps
        of ``o`` around ``a`` and ``b``. ``R = 10``, or up to 37 for ``k < 1``,
        whose best-of-k has a heavier tail (``F^k``): opda integrates over
        ``a -+ 6 o`` to ``1e-6`` of ``b - a + 12 o``, so its curve at ``k < 1``
        misses that tail.
        opda integrates by trapezoids to ``1e-6`` of ``b - a + 12 o``.
        """
        k = np.asarray(_as_k(k), dtype=float)
        minimize = self._minimize(higher_is_better)
        if self._regime == "noiseless":
            return self._quadratic.average_tuning_curve(k, higher_is_better=not minimize)
        grid = special.expit(np.linspace(-36.0, 36.0, 49))
        reach = np.ceil(np.clip(np.sqrt(90 / np.min(k, initial=1.0)), 10, 37))
        steps = self.o * np.linspace(-reach, reach, int(2 * reach + 1))
        ends = np.unique(np.concatenate([
            self._quadratic.ppf(grid), self.a + steps, self.b + steps,
        ]))  # fmt: skip
        nodes, weights = _PANEL_NODES
        mid, half = (ends[1:] + ends[:-1]) / 2, (ends[1:] - ends[:-1]) / 2
        ys = (mid[:, None] + half[:, None] * nodes).ravel()
        w = (half[:, None] * weights).ravel()
        f = np.asarray(self.cdf(ys))
        g = 1 - (1 - f) ** k[..., None] if minimize else f ** k[..., None]
        return (ends[0] + (1 - g) @ w)[()]

    # -- fitting -------------------------------------------------------------------

    @classmethod
    def fit(cls, scores, limits=(-np.inf, np.inf), constraints=None) -> NoisyQuadraticDistribution:
        """Fit by maximum product spacing, with censoring and constraints (as opda's ``fit``).

        As :meth:`QuadraticDistribution.fit`, with ``"o"`` too among the
        ``constraints`` (a number or a pair, ``>= 0``). For every allowed
        ``(c, convex)`` the loss is minimised over ``a``, ``b`` and ``log o``
        (scores scaled to [0, 1]) by bounded Nelder-Mead from the best two of
        32 starts, roughly; then the three best ``(c, convex)`` finely. ``o`` fixed at 0 is
        the quadratic fit. opda uses differential evolution.
        """
        return _fit_noisy(cls, scores, limits, constraints)[0]

    def spacing_loss(self, scores, limits=(-np.inf, np.inf)) -> float:
        """The maximum-spacing loss that :meth:`fit` minimises, at these parameters."""
        zs, ks, n = _buckets(as_scores(scores, "scores"), *_as_limits(limits))
        return _spacing_of(self.cdf(zs), ks, n)

    goodness_of_fit = QuadraticDistribution.goodness_of_fit


def _fit_noisy(cls, scores, limits, constraints):
    constraints = dict(constraints or {})
    unknown = set(constraints) - {"a", "b", "c", "o", "convex"}
    if unknown:
        raise ArgumentError(
            f"unknown constraint(s) {sorted(unknown)}; accepted: a, b, c, o, convex."
        )
    o_c = _constraint(constraints, "o", (0.0, np.inf))
    if o_c[0] < 0:
        raise ArgumentError(f"the constraint on `o` must be >= 0; got {constraints['o']!r}.")
    rest = {key: v for key, v in constraints.items() if key != "o"}
    if o_c[1] == 0:  # no noise: the quadratic fit
        dist, value = _fit(QuadraticDistribution, scores, limits, rest)
        return cls(dist.a, dist.b, dist.c, 0.0, dist.convex), value
    ys = as_scores(scores, "scores")
    lo, hi = _as_limits(limits)
    zs, ks, n = _buckets(ys, lo, hi)
    observed = ys[(ys > lo) & (ys <= hi)]
    if np.unique(observed).size < 2:
        raise VarevalError(
            "the fit needs at least 2 distinct scores inside `limits`; "
            f"got {np.unique(observed).size}."
        )
    y0, spread = observed.min(), np.ptp(observed)
    a_c = _constraint(constraints, "a", (-np.inf, np.inf))
    b_c = _constraint(constraints, "b", (-np.inf, np.inf))
    c_c = _constraint(constraints, "c", (C_MIN, C_MAX))
    cs = [c for c in range(C_MIN, C_MAX + 1) if c_c[0] <= c <= c_c[1]]
    if not cs:
        raise ArgumentError(f"the constraint on `c` allows no whole number from 1 to 10: {c_c}.")
    # free coordinates, scores scaled to [0, 1]: a' = (a - y0) / R, b' likewise, w = log(o / R)
    scaled = [(np.clip((v[0] - y0) / spread, -100, 100), np.clip((v[1] - y0) / spread, -100, 100))
              for v in (a_c, b_c)]  # fmt: skip
    w_c = tuple(np.log(np.clip(np.array(o_c) / spread, np.exp(-25), 100.0)))
    free = [a_c[0] < a_c[1], b_c[0] < b_c[1], o_c[0] < o_c[1]]
    bounds = [bd for bd, f in zip([*scaled, w_c], free, strict=True) if f]
    if any(lo_ > hi_ for lo_, hi_ in bounds):
        raise ArgumentError("the constraints on `a`, `b` and `o` leave no parameters to fit.")
    fixed = np.array([a_c[0], b_c[0], o_c[0]])

    def params(x):
        values, it = fixed.copy(), iter(x)
        for j in range(3):
            if free[j]:
                v = next(it)
                values[j] = y0 + spread * v if j < 2 else spread * np.exp(v)
        return values

    coarse = []
    for c, convex in itertools.product(cs, _constraint(constraints, "convex", [False, True])):
        def loss(x, c=c, convex=convex):
            a, b, o = params(x)
            if not a <= b or (a == b and o == 0):
                return np.inf
            return _spacing_of(NoisyQuadraticDistribution(a, b, c, o, convex).cdf(zs), ks, n)

        # with much noise the support sits inside the scores' range: starts there too
        grid = itertools.product([0.2, -0.05, -0.4], [0.8, 1.05, 1.4, 1.8],
                                 [-6.0, -3.5, -2.0, -0.7])
        starts = {tuple(np.clip(v, *bd) for v, bd in zip(
            [g for g, f in zip(pt, free, strict=True) if f], bounds, strict=True))
            for pt in grid}  # fmt: skip
        tried = sorted(((loss(x), x) for x in starts), key=lambda t: t[0])[:3]
        if bounds:  # the three best starts, roughly: the noise level has local optima
            tried = [_nelder_mead(loss, list(x), bounds, 1e-3) for v, x in tried if np.isfinite(v)]
        value, x = min(tried, key=lambda t: t[0], default=(np.inf, None))
        coarse.append((value, x, loss, c, convex))
    coarse = sorted((t for t in coarse if np.isfinite(t[0])), key=lambda t: t[0])
    if not coarse:
        raise VarevalError("the fit found no parameters with a finite loss under the constraints.")
    best = (np.inf, None)
    for value, x, loss, c, convex in coarse[:3]:
        if bounds:
            for _ in range(3):  # restart where the simplex stopped, until it no longer moves
                v_new, x_new = _nelder_mead(loss, x, bounds, 1e-10)
                done = v_new >= value - 1e-15
                if v_new < value:
                    value, x = v_new, x_new
                if done:
                    break
        if value < best[0]:
            a, b, o = params(x)
            best = (value, cls(a, b, c, o, convex))
    return best[1], best[0]
