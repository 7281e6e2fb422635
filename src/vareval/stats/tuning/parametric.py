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
vareval minimises it for every allowed ``(c, convex)`` by bounded Nelder-Mead
searches, roughly, then refines the three best finely (the best also from a
second start far from the sample's range), in coordinates ``a = y_min - R e^u``,
``b = y_max + R e^v`` where the loss is finite; opda uses differential
evolution.

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
    "ParametricTuningCurve",
    "QuadraticDistribution",
    "parametric_tuning_curve",
]

C_MIN, C_MAX = 1, 10


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

    def __repr__(self) -> str:
        return (
            f"QuadraticDistribution(a={self.a!r}, b={self.b!r}, c={self.c!r}, "
            f"convex={self.convex!r})"
        )

    def __eq__(self, other):
        if not isinstance(other, QuadraticDistribution):
            return NotImplemented
        return (self.a, self.b, self.c, self.convex) == (other.a, other.b, other.c, other.convex)

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
    cdf = z if convex else 1.0 - z
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


def _fit(cls, scores, limits, constraints):
    ys = as_scores(scores, "scores")
    lo, hi = _as_limits(limits)
    constraints = dict(constraints or {})
    unknown = set(constraints) - {"a", "b", "c", "convex"}
    if unknown:
        raise ArgumentError(f"unknown constraint(s) {sorted(unknown)}; accepted: a, b, c, convex.")
    zs, ks, n = _buckets(ys, lo, hi)
    observed = ys[(ys > lo) & (ys <= hi)]
    if observed.size < 2 or np.unique(observed).size < 2:
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
    coarse = []  # every allowed (c, convex), searched roughly; then the best few finely
    for c, convex in itertools.product(cs, _constraint(constraints, "convex", [False, True])):
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
        Percentile-bootstrap interval of ``estimate`` (refits on resampled
        scores), pointwise, at ``confidence``.
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

    _interval = ("lower", "upper")
    _rows = ("k", "estimate", "lower", "upper", "average", "extrapolated", "label")

    @property
    def distribution(self) -> QuadraticDistribution:
        """The fitted quadratic distribution."""
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
) -> ParametricTuningCurve:
    """Fit a quadratic distribution to the search outcomes and extrapolate its tuning curve.

    Estimand: the ``q``-quantile (and mean) of the best score after ``k``
    iterations *under the fitted quadratic model*; for ``k > n`` this is a
    model-based extrapolation, marked so in ``extrapolated`` and ``label``.
    The fit is to the right tail (above the median) when maximising and the
    left tail when minimising, with the concave or convex form, as opda
    recommends, unless ``limits`` / ``constraints`` say otherwise. The
    interval is the percentile bootstrap over ``n_resamples`` refits on
    scores resampled with replacement (one optimisation per resample); it
    reflects sampling uncertainty of the fit, not doubt about the model.

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
    """
    ys = as_scores(scores, "scores", min_n=3)
    hib = as_bool(higher_is_better, "higher_is_better")
    k, q, confidence = np.atleast_1d(_as_k(k)), _as_q(q), as_confidence(confidence)
    n_resamples = as_positive_int(n_resamples, "n_resamples")
    median = float(np.median(ys))
    limits = ((median, np.inf) if hib else (-np.inf, median)) if limits is None else limits
    constraints = {"convex": not hib, **(constraints or {})}
    dist, _ = _fit(QuadraticDistribution, ys, limits, constraints)
    gen = as_rng(rng)
    draws = gen.integers(0, ys.size, size=(n_resamples, ys.size))
    boot = np.full((n_resamples, k.size), np.nan)
    for i, idx in enumerate(draws):  # each resample is one refit (an optimisation)
        try:
            fit_i, _ = _fit(QuadraticDistribution, ys[idx], limits, constraints)
        except VarevalError:
            continue  # a resample with too few distinct tail scores: no refit (counted below)
        boot[i] = fit_i.quantile_tuning_curve(k, q, higher_is_better=hib)
    ok = ~np.isnan(boot[:, 0])
    if ok.sum() < max(10, n_resamples // 2):
        raise VarevalError(
            f"only {ok.sum()} of {n_resamples} bootstrap refits succeeded; too few "
            "distinct scores in the fitted tail for an interval."
        )
    tail = (1 - confidence) / 2
    lower, upper = np.quantile(boot[ok], [tail, 1 - tail], axis=0)
    extrapolated = k > ys.size
    return ParametricTuningCurve(
        k=k,
        estimate=np.atleast_1d(dist.quantile_tuning_curve(k, q, higher_is_better=hib)),
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
        goodness_of_fit=dist.goodness_of_fit(ys, limits, confidence),
        q=q,
        confidence=confidence,
        higher_is_better=hib,
        n_resamples=n_resamples,
    )
