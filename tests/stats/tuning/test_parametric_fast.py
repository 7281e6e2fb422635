"""The parametric fit's fast paths against the old ones.

The fit profiles ``a`` out in closed form and sums the narrow buckets far from
the fitted end from binned moments; the Nelder-Mead search over ``(a, b)``
(``_fit(..., search=True)``) is the old path. The losses are compared by a
long-double evaluation of the spacing loss straight from its definition: the
float64 loss of either path carries rounding of up to about 1e-11 at 10^4
scores (the spacings are differences of nearby CDF values), which the search
can settle into.
"""

import numpy as np
import pytest

from vareval.stats.tuning import parametric as module
from vareval.stats.tuning.parametric import QuadraticDistribution as Q


def _exact_loss(dist, scores, limits):
    """``-sum k log((n + 1) dF / k) / (n + 1)``, the CDF in long double."""
    zs, ks, n = module._buckets(np.asarray(scores, float), *limits)
    a, b, e = np.longdouble(dist.a), np.longdouble(dist.b), np.longdouble(dist.c) / 2
    z = zs.astype(np.longdouble)
    u = np.clip(((z - a) if dist.convex else (b - z)) / (b - a), 0, 1) ** e
    cdf = u if dist.convex else 1 - u
    k = ks.astype(np.longdouble)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = k * np.log(np.diff(cdf) * (n + 1) / k)
    return float(-np.sum(terms[ks > 0]) / (n + 1))


def _case(rng, i, sizes):
    n = int(rng.integers(*sizes))
    ys = Q(0.2, 0.9, int(rng.integers(1, 11)), bool(rng.integers(2))).sample(n, rng=rng)
    if i % 3 == 2:
        ys = np.round(ys, 2)  # ties
    med = np.median(ys)
    limits = [(med, np.inf), (-np.inf, med), (-np.inf, np.inf),
              (np.quantile(ys, 0.2), np.quantile(ys, 0.9))][i % 4]  # fmt: skip
    constraints = [None, {"a": (0, np.inf), "b": (-np.inf, 1)}, {"convex": bool(i % 2)},
                   {"c": (2, 5), "a": 0.1}, {"b": 0.95}][i % 5]  # fmt: skip
    return ys, limits, constraints


def _compare(ys, limits, constraints):
    new, value = module._fit(Q, ys, limits, constraints)
    old, _ = module._fit(Q, ys, limits, constraints, search=True)
    exact_new, exact_old = _exact_loss(new, ys, limits), _exact_loss(old, ys, limits)
    assert value == pytest.approx(exact_new, rel=0, abs=1e-11)  # the loss it reports
    assert exact_new <= exact_old + 1e-12  # never a worse optimum than the search's
    if exact_old - exact_new < 1e-9:  # the same optimum: the same law
        assert new.c == old.c
        assert new.convex == old.convex or new.c == 2  # c = 2: the uniform law in either form
        spread = np.ptp(ys)
        np.testing.assert_allclose([new.a, new.b], [old.a, old.b], rtol=0, atol=1e-5 * spread)


def test_profiled_fit_reaches_the_search_s_optimum_on_random_samples(rng):
    for i in range(30):
        _compare(*_case(rng, i, (5, 400)))


def test_profiled_fit_with_the_far_buckets_by_series(rng):
    # past 2,000 narrow buckets the far ones are summed from binned moments
    for i in (0, 3, 5):
        _compare(*_case(rng, i, (6_000, 9_000)))


def test_far_buckets_equal_the_exact_sum(rng):
    z = np.unique(rng.beta(8, 2, 30_000))
    d = z[-1] - z
    k = rng.integers(1, 3, z.size - 1).astype(float)
    far = (d[:-1] - d[1:]) < module._FAR * d[:-1]
    lo, hi, kf = d[:-1][far], d[1:][far], k[far]
    terms = module._FarBuckets(lo, hi, kf)
    assert terms.delta.size < far.sum() / 100
    for e in (0.5, 1.0, 1.5, 2.5, 5.0):
        for beta in (1e-12, 1e-6, 1e-3, 0.1, 10.0, 1e4):
            x = beta + lo  # log(x^e - (x - h)^e), without cancellation
            exact = np.sum(kf * (e * np.log(x) + np.log(-np.expm1(e * np.log1p(-(lo - hi) / x)))))
            got = terms(np.array([beta]), e)[0]
            assert abs(got - exact) <= 5e-14 * kf.sum(), (e, beta)


@pytest.mark.parametrize("bootstrap", ["parametric", "nonparametric"])
def test_resamples_drawn_in_blocks_give_the_same_refits(monkeypatch, bootstrap):
    ys = Q(0.3, 0.85, 3).sample(41, rng=5)
    whole = module.parametric_tuning_curve(ys, [1, 10, 100], n_resamples=17, rng=8,
                                           bootstrap=bootstrap)  # fmt: skip
    monkeypatch.setattr(module, "_BLOCK_CELLS", 3 * 41)  # three resamples a block, then two
    blocks = module.parametric_tuning_curve(ys, [1, 10, 100], n_resamples=17, rng=8,
                                            bootstrap=bootstrap)  # fmt: skip
    np.testing.assert_array_equal(blocks.bootstrap_distribution, whole.bootstrap_distribution)
    np.testing.assert_array_equal(blocks.lower, whole.lower)
