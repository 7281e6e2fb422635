"""Tuning curves: the empirical distribution of search outcomes and its tuning curves.

A *tuning curve* says how good a model gets after ``k`` iterations of random
hyper-parameter search: the best score among ``k`` independent draws from the
distribution of search outcomes, summarised by its median (the *quantile*
tuning curve) or its mean (the *average* tuning curve, the expected best of
``k``). :class:`EmpiricalDistribution` is the distribution of search outcomes
estimated from ``n`` observed iterations (optionally weighted) on known bounds
``[a, b]``. From it come

- the quantile tuning curve ``Q(q ** (1 / k))`` (median by default), the
  curve that the simultaneous bands of :mod:`vareval.stats.tuning.bands` bound;
- the average tuning curve ``sum_i y_i (F_i ** k - F_{i-1} ** k)``;
- the V-statistic estimator of the expected best of ``k`` (Dodge et al. 2019),
  which equals the average curve of the unweighted empirical distribution;
- the U-statistic estimator (Tang et al. 2020), unbiased for ``k <= n``,
  computed by a product recurrence that is stable for any ``n``.

References
----------
Dodge, J., Gururangan, S., Card, D., Schwartz, R. and Smith, N. A. (2019).
    Show your work: improved reporting of experimental results. EMNLP.
Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y. and Lin, J. (2020). Showing your
    work doesn't always work. ACL.
Lourie, N., Cho, K. and He, H. (2023). Show your work with confidence:
    confidence bands for tuning curves. arXiv:2311.09480.
"""

from __future__ import annotations

import numbers

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._checks import MINIMIZE, as_bool, as_rng, as_scores, renamed_keywords

__all__ = ["EmpiricalDistribution"]

_WEIGHT_TOL = 1e-10


def _as_bound(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"`{name}` must be a real number; got {value!r}.")
    value = float(value)
    if np.isnan(value):
        raise ArgumentError(f"`{name}` must be a number, not NaN.")
    return value


def _as_bounds(a, b) -> tuple[float, float]:
    a, b = _as_bound(a, "a"), _as_bound(b, "b")
    if not a < b:
        raise ArgumentError(f"bounds must satisfy a < b (lower < upper); got {a:g} and {b:g}.")
    return a, b


def _as_k(k, *, integer: bool = False) -> np.ndarray:
    """Return search iterations ``k`` as a float array, all > 0 (or an int array, all >= 1).

    Real ``k`` may be below 1, as in opda: the curves are defined for any
    ``k > 0`` (``k = 1/2`` is the median of the best of "half an iteration",
    ``Q(q ** 2)``); counts of iterations (``integer=True``) are whole numbers >= 1.
    """
    what = "whole numbers >= 1" if integer else "numbers > 0"
    try:
        arr = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"`k` must be {what}; got {k!r}.") from None
    if arr.size == 0:
        raise ArgumentError(
            "`k` is empty; give at least one number of search iterations."
        )
    ok = np.isfinite(arr) & ((arr >= 1) if integer else (arr > 0))
    if not np.all(ok):
        raise ArgumentError(f"`k` must be finite {what}; got {float(arr[~ok].ravel()[0]):g}.")
    if integer:
        if np.any(arr % 1 != 0):
            raise ArgumentError(
                f"`k` must be {what} here; got {arr[arr % 1 != 0].ravel()[0]!r}."
            )
        return arr.astype(np.int64)
    return arr


def _as_q(q) -> float:
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= float(q) <= 1:
        raise ArgumentError(f"`q` must be a number between 0 and 1; got {q!r}.")
    return float(q)


def _minimizing(higher_is_better) -> bool:
    """Whether the best score is the smallest one."""
    return not as_bool(higher_is_better, "higher_is_better")


def _empirical_iv(scores, weights, a, b):
    a, b = _as_bounds(a, b)
    ys = as_scores(scores, "scores")
    low, high = ys.min(), ys.max()
    if low < a or high > b:
        bad = low if low < a else high
        raise ArgumentError(
            f"`scores` must lie within the bounds [{a:g}, {b:g}]; got {float(bad)!r}. "
            "Widen the bounds or fix the scores."
        )
    if weights is None:
        return ys, None, a, b
    try:
        ws = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError("`weights` must be numbers.") from None
    if ws.shape != ys.shape:
        raise ArgumentError(
            f"`weights` must have one weight per score ({ys.size}); "
            f"got shape {ws.shape}."
        )
    if not np.all(np.isfinite(ws)) or np.any(ws < 0):
        raise ArgumentError("`weights` must be finite and non-negative.")
    total = ws.sum()
    if abs(total - 1.0) > _WEIGHT_TOL:
        raise ArgumentError(
            f"`weights` must sum to 1 (within {_WEIGHT_TOL:g}); got a sum of {total!r}."
        )
    return ys, ws, a, b


class EmpiricalDistribution:
    r"""The (weighted) empirical distribution of search outcomes on ``[a, b]``.

    Each of ``n`` random-search iterations gave a score ``y_i``; the
    distribution puts mass ``w_i`` (``1 / n`` by default) on each score and
    no mass on the bounds ``a`` and ``b``, which are part of its support so
    that quantiles stay inside ``[a, b]``.

    Parameters
    ----------
    scores : array_like
        One score per search iteration, finite and within ``[a, b]``.
    weights : array_like, optional
        Probability mass of each score: non-negative, summing to 1 (within
        1e-10). ``None`` gives every score mass ``1 / n``.
    a, b : float, default -inf, inf
        Bounds of the support, ``a < b`` (e.g. 0 and 1 for accuracy).

    Notes
    -----
    The CDF is right-continuous, :math:`F(y) = P(Y \le y)`; the quantile
    function is its left-continuous inverse on ``[a, b]``,
    :math:`Q(p) = \inf\{y \in [a, b] : p \le F(y)\}`, so ``Q(0) = a``
    (Lourie et al. 2023). The tuning curves follow the same conventions as
    optimal design analysis (the ``opda`` package).
    """

    def __init__(self, scores, weights=None, a=-np.inf, b=np.inf):
        ys, ws, a, b = _empirical_iv(scores, weights, a, b)
        self.scores, self.weights, self.a, self.b = ys, ws, a, b
        self.n = ys.size
        self._sorted = np.sort(ys)
        order = np.argsort(ys, kind="stable")
        sorted_ws = None if ws is None else ws[order]
        if ws is None:
            cum = np.arange(1, self.n + 1, dtype=float)
        else:
            cum = np.cumsum(sorted_ws)
        self._set_support(self._sorted, cum / cum[-1])

    # -- construction ---------------------------------------------------------

    def _set_support(self, points, cum, cum_a=0.0):
        """Store the support ``[a, points..., b]`` and its cumulative masses.

        ``points`` is sorted (ties allowed; a tied value keeps the cumulative
        mass of its last occurrence), ``cum`` is the CDF at each point and
        ``cum_a`` the CDF at ``a``; the CDF at ``b`` is 1.
        """
        pts = np.concatenate([[self.a], points, [self.b]])
        cw = np.concatenate([[cum_a], cum, [1.0]])
        keep = np.concatenate([pts[1:] != pts[:-1], [True]])
        self._xs = pts[keep]
        self._cw = np.minimum(np.maximum.accumulate(cw[keep]), 1.0)
        self._cw_prev = np.concatenate([[0.0], self._cw[:-1]])

    @classmethod
    def _from_cdf(cls, points, cum_a, cum, a, b):
        """Build a distribution from sorted ``points`` and its CDF at ``a`` and each.

        Used for the edges of confidence bands, whose mass outside the sample
        sits on the bounds ``a`` and ``b``.
        """
        self = cls.__new__(cls)
        self.scores, self.a, self.b = np.asarray(points, float), float(a), float(b)
        self.n = self.scores.size
        self._sorted = self.scores
        cum = np.asarray(cum, dtype=float)
        self.weights = np.diff(np.concatenate([[cum_a], cum, [1.0]]))
        self._set_support(self.scores, cum, float(cum_a))
        return self

    def __repr__(self) -> str:
        w = "None" if self.weights is None else f"array(shape={self.weights.shape})"
        bounds = f"a={self.a:g}, b={self.b:g}"
        return f"EmpiricalDistribution(n={self.n}, weights={w}, {bounds})"

    # -- distribution functions ----------------------------------------------

    @property
    def support(self) -> np.ndarray:
        """Sorted distinct points of the support, including ``a`` and ``b``."""
        return self._xs.copy()

    def pmf(self, y):
        """Return the probability mass at ``y`` (any array shape)."""
        y = np.asarray(y, dtype=float)
        idx = np.clip(np.searchsorted(self._xs, y, side="left"), 0, self._xs.size - 1)
        mass = self._cw - self._cw_prev
        return np.where(self._xs[idx] == y, mass[idx], 0.0)[()]

    def cdf(self, y):
        """Return ``F(y) = P(Y <= y)`` (right-continuous; any array shape)."""
        y = np.asarray(y, dtype=float)
        idx = np.searchsorted(self._xs, y, side="right") - 1
        return np.where(idx >= 0, self._cw[np.maximum(idx, 0)], 0.0)[()]

    def ppf(self, p):
        """Return the left-continuous quantile ``Q(p) = inf{y in [a, b]: p <= F(y)}``.

        ``Q(0) = a``. Probabilities must lie in ``[0, 1]`` (1e-10 of slack).
        """
        p = np.asarray(p, dtype=float)
        if np.any(np.isnan(p)) or np.any((p < -1e-10) | (p > 1 + 1e-10)):
            raise ArgumentError("probabilities passed to `ppf` must lie in [0, 1].")
        p = np.clip(p, 0.0, 1.0)
        idx = np.minimum(np.searchsorted(self._cw, p, side="left"), self._xs.size - 1)
        return np.maximum(self._xs[idx], self.a)[()]

    def sample(self, size=None, *, rng=None):
        """Draw ``size`` search outcomes (with replacement) from the distribution.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape; ``None`` gives one float.
        rng : None, int or numpy.random.Generator
            Source of randomness (SPEC 7).
        """
        gen = as_rng(rng)
        mass = self._cw - self._cw_prev
        return gen.choice(self._xs, size=size, p=mass / mass.sum())

    @property
    def mean(self) -> float:
        """The distribution's mean."""
        mass = self._cw - self._cw_prev
        return float(np.sum(mass * np.where(mass > 0, self._xs, 0.0)))

    # -- tuning curves ---------------------------------------------------------

    @renamed_keywords(minimize=MINIMIZE)
    def quantile_tuning_curve(self, k, q: float = 0.5, *, higher_is_better: bool = True):
        r"""Return the ``q``-quantile of the best score after ``k`` iterations.

        Estimand: the ``q``-quantile (median by default) of
        :math:`\max(Y_1, \dots, Y_k)` (or the minimum when not ``higher_is_better``), which
        is :math:`Q(q^{1/k})` (or :math:`Q(1 - (1 - q)^{1/k})`) for the
        distribution's quantile function ``Q`` (Lourie et al. 2023).

        Parameters
        ----------
        k : float or array_like
            Numbers of search iterations, real and > 0 (as in opda), any shape.
        q : float, default 0.5
            Which quantile of the best-of-``k`` score.
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, q, minimize = _as_k(k), _as_q(q), _minimizing(higher_is_better)
        p = 1.0 - (1.0 - q) ** (1.0 / k) if minimize else q ** (1.0 / k)
        return self.ppf(p)

    @renamed_keywords(minimize=MINIMIZE)
    def average_tuning_curve(self, k, *, higher_is_better: bool = True):
        r"""Return the expected best score after ``k`` iterations.

        Estimand: :math:`E[\max(Y_1, \dots, Y_k)]` (or the minimum) for
        ``Y`` drawn from this distribution, computed exactly as
        :math:`\sum_j y_j (F_j^k - F_{j-1}^k)`. For the unweighted empirical
        distribution this equals the V-statistic estimator.

        Parameters
        ----------
        k : float or array_like
            Numbers of search iterations, real and > 0 (as in opda), any shape.
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, minimize = _as_k(k), _minimizing(higher_is_better)
        kk = k[..., None]
        if minimize:
            w = (1.0 - self._cw_prev) ** kk - (1.0 - self._cw) ** kk
        else:
            w = self._cw**kk - self._cw_prev**kk
        return np.sum(w * np.where(w != 0, self._xs, 0.0), axis=-1)[()]

    def _unweighted_sorted(self, name: str, minimize: bool) -> np.ndarray:
        if self.weights is not None:
            raise ArgumentError(
                f"the {name} estimator needs equally weighted scores; "
                "this distribution has `weights`."
            )
        return self._sorted[::-1] if minimize else self._sorted

    @renamed_keywords(minimize=MINIMIZE)
    def v_statistic(self, k, *, higher_is_better: bool = True):
        r"""Return the V-statistic estimate of the expected best of ``k``.

        Estimand: :math:`E[\max(Y_1, \dots, Y_k)]`. The estimate is the
        expected best of ``k`` draws *with* replacement from the ``n`` scores
        (Dodge et al. 2019), :math:`\sum_i y_{(i)}[(i/n)^k - ((i-1)/n)^k]`;
        consistent but biased downwards for maximisation. ``k`` may be real.

        Parameters
        ----------
        k : float or array_like
            Numbers of search iterations, real and > 0, any shape.
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, minimize = _as_k(k), _minimizing(higher_is_better)
        ys = self._unweighted_sorted("V-statistic", minimize)
        return _weighted_sums(_v_weights, self.n, k, ys)

    @renamed_keywords(minimize=MINIMIZE)
    def naive_tuning_curve(self, k, *, higher_is_better: bool = True):
        """Return the naive tuning curve: the best of the *first* ``k`` scores, in order.

        Estimand: none beyond this one search; it is the best score seen after
        ``k`` iterations of the search as it was run (opda's
        ``naive_tuning_curve``), a single noisy path, unlike the V and U
        estimates of the expected best of ``k``. ``k`` above ``n`` gives the
        best of all ``n``.

        Parameters
        ----------
        k : int or array_like of int
            Numbers of search iterations, whole numbers >= 1, any shape.
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, minimize = _as_k(k, integer=True), _minimizing(higher_is_better)
        self._unweighted_sorted("naive tuning-curve", minimize)
        path = (np.minimum if minimize else np.maximum).accumulate(self.scores)
        return path[np.minimum(k, self.n) - 1][()]

    @renamed_keywords(minimize=MINIMIZE)
    def u_statistic(self, k, *, higher_is_better: bool = True):
        r"""Return the U-statistic estimate of the expected best of ``k``.

        Estimand: :math:`E[\max(Y_1, \dots, Y_k)]`. The estimate is the
        expected best of ``k`` draws *without* replacement from the ``n``
        scores (Tang et al. 2020), unbiased for ``k <= n``:
        :math:`\sum_i y_{(i)} \binom{i-1}{k-1} / \binom{n}{k}`. For ``k > n``
        it returns the best score (``k`` is clipped to ``n``).

        The weights are built by the recurrence ``w_n = k / n``,
        ``w_{i-1} = w_i (i - k) / (i - 1)``, so no binomial coefficient is
        ever formed and the estimate is finite and accurate for any ``n``.

        Parameters
        ----------
        k : int or array_like of int
            Numbers of search iterations, whole numbers >= 1, any shape.
        higher_is_better : bool, default True
            False when lower scores are better.
        """
        k, minimize = _as_k(k, integer=True), _minimizing(higher_is_better)
        ys = self._unweighted_sorted("U-statistic", minimize)
        return _weighted_sums(_u_weights, self.n, k, ys)


def _weighted_sums(weights, n: int, k: np.ndarray, ys: np.ndarray):
    """``sum_i weights(n, k)_i y_(i)`` for each ``k``, a few ``k`` at a time.

    The weights of all ``k`` at once are ``k.size x n`` numbers: gigabytes at
    a million scores, so they are formed in blocks of about 2^22.
    """
    flat = np.ravel(k)
    per = max(1, (1 << 22) // max(n, 1))
    out = np.concatenate(
        [weights(n, flat[j : j + per]) @ ys for j in range(0, flat.size, per)]
    )
    return out.reshape(np.shape(k))[()]


def _v_weights(n: int, k: np.ndarray) -> np.ndarray:
    """V-statistic weights ``(i/n)^k - ((i-1)/n)^k``, shape ``k.shape + (n,)``."""
    kk = np.asarray(k, dtype=float)[..., None]
    cdf = (np.arange(n + 1) / n) ** kk  # one power per point: (i-1)/n's is the previous one's
    return np.diff(cdf, axis=-1)


def _u_weights(n: int, k: np.ndarray) -> np.ndarray:
    """U-statistic weights ``C(i-1, k-1) / C(n, k)``, shape ``k.shape + (n,)``.

    Built by the recurrence ``w_n = k / n``, ``w_{i-1} = w_i (i - k) / (i - 1)``
    (``k`` clipped to ``n``): no binomial coefficient is formed, so nothing
    overflows and the relative error stays near ``n`` ulps.
    """
    kk = np.minimum(np.asarray(k), n).astype(float)[..., None]
    j = np.arange(n, 1, -1, dtype=float)  # j = n, n-1, ..., 2
    ratios = np.clip((j - kk) / (j - 1.0), 0.0, None)  # w_{j-1} / w_j
    top = np.broadcast_to(kk / n, kk.shape)
    w = np.concatenate([top, top * np.cumprod(ratios, axis=-1)], axis=-1)
    return w[..., ::-1]
