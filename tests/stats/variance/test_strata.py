"""The strata deviance of orthogonal designs against the Schur-complement one.

The bootstrap refits of a balanced nested or crossed design take the deviance
from the strata's sums of squares (vareval.stats.variance.strata); the
reference is the general path's batched deviance (_Batch), which the other
tests check against lme4 and single fits.
"""

import warnings

import numpy as np
import pytest

from vareval.errors import VarevalWarning
from vareval.stats import bootstrap_components, fit_mixed
from vareval.stats.variance import bootstrap as boot
from vareval.stats.variance.fit import _state
from vareval.stats.variance.strata import Strata


def _nested(rng):
    """Seeds > configurations, crossed with experiments (allocation's pilot)."""
    ns, nc, ne, nr = rng.integers(3, 7), rng.integers(2, 5), rng.integers(1, 4), rng.integers(1, 4)
    seed = np.repeat(np.arange(ns), nc * ne * nr)
    config = seed * nc + np.tile(np.repeat(np.arange(nc), ne * nr), ns)
    exp = np.tile(np.repeat(np.arange(ne), nr), ns * nc)
    factors = [seed, config, seed * ne + exp, config * ne + exp]
    keep = [0, 1] + ([2, 3] if ne > 1 and nr > 1 else [])
    X = np.column_stack([np.ones(seed.size)] + [exp == e for e in range(1, ne)])
    return X, [factors[j] for j in keep]


def _crossed(rng):
    """Rows x columns with reruns (and their interaction), a fixed treatment crossed."""
    nrow, ncol, nt, nr = rng.integers(3, 6), rng.integers(3, 6), rng.integers(1, 3), 2
    shape = (nrow, ncol, nt, nr)
    r, c, t, _ = (x.ravel() for x in np.indices(shape))
    X = np.column_stack([np.ones(r.size)] + [t == e for e in range(1, nt)])
    return X, [r, c, r * ncol + c]


def _random_codes(g, rng):
    """The same partition under arbitrary level labels."""
    return rng.permutation(g.max() + 1)[g]


def _batch_deviance_equals_schur(X, groups, rng, reml, batch):
    """A fit's batched deviance takes the ``batch`` path and equals the Schur complement's."""
    y = X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])
    for g in groups:
        y = y + rng.exponential() * rng.normal(size=g.max() + 1)[g]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(y, X, groups, reml=reml)
    st = _state(fit)
    (stats,) = boot._simulate_stats(fit, 9, np.random.default_rng(1), [st.cp])
    fast, old = boot._make_batch(st, stats, reml), boot._Batch(st.cp, stats, reml)
    assert isinstance(fast, batch)
    gamma = rng.exponential(2.0, (9, len(groups))) * (rng.random((9, len(groups))) > 0.3)
    f1, s1 = fast.deviance(gamma)
    f0, s0 = old.deviance(gamma)
    np.testing.assert_allclose(f1, f0, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(s1, s0, rtol=1e-9)
    rows = np.array([1, 4])
    np.testing.assert_allclose(fast.deviance(gamma[rows], rows)[0], f0[rows], atol=1e-8)


@pytest.mark.parametrize("reml", [True, False])
@pytest.mark.parametrize("make", [_nested, _crossed])
def test_strata_deviance_equals_schur_deviance(make, reml):
    rng = np.random.default_rng(11)
    for _ in range(6):
        X, groups = make(rng)
        groups = [_random_codes(g, rng) for g in groups]
        order = rng.permutation(X.shape[0])  # rows in any order
        X, groups = X[order], [g[order] for g in groups]
        _batch_deviance_equals_schur(X, groups, rng, reml, boot._StrataBatch)


def test_strata_bootstrap_equals_schur_bootstrap():
    """The same draws refitted both ways: equal to the optimiser's tolerance."""
    rng = np.random.default_rng(3)
    X, groups = _nested(np.random.default_rng(5))
    y = X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])
    for g in groups:
        y = y + 0.7 * rng.normal(size=g.max() + 1)[g]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(y, X, groups)
    new = bootstrap_components(fit, n_resamples=40, rng=2)
    boot._USE_STRATA = False
    try:
        old = bootstrap_components(fit, n_resamples=40, rng=2)
    finally:
        boot._USE_STRATA = True
    scale = new.std(axis=0)  # the bootstrap's own spread
    assert np.max(np.abs(new - old) / scale) < 0.02


def test_non_orthogonal_designs_take_the_general_path():
    rng = np.random.default_rng(0)
    X, groups = _nested(np.random.default_rng(5))
    n = X.shape[0]
    assert Strata.of(X, groups) is not None
    drop = np.arange(n) != 3  # one row missing: unbalanced
    assert Strata.of(X[drop], [g[drop] for g in groups]) is None
    covariate = np.column_stack([X, rng.normal(size=n)])  # a slope: not saturated
    assert Strata.of(covariate, groups) is None
    unequal = groups[0].copy()
    unequal[unequal == 1] = 0  # seeds of different sizes
    assert Strata.of(X, [unequal, *groups[1:]]) is None
    # balanced but not orthogonal: a second factor's levels straddle the first's
    half = np.repeat(np.arange(8), 3)
    off = (np.arange(24) + 1) % 24 // 3
    assert Strata.of(np.ones((24, 1)), [half, off]) is None
    outside = groups[0].copy()
    outside[:2] = -1
    assert Strata.of(X, [outside]) is None


def _drop_rows(X, groups, rng, share):
    """The design less ``share`` of its rows (at least one), chosen at random."""
    n = X.shape[0]
    keep = np.ones(n, bool)
    keep[rng.choice(n, max(1, round(share * n)), replace=False)] = False
    return X[keep], [g[keep] for g in groups]


def _with_reruns(make, rng):
    while True:  # a missing row of a design without reruns is a missing cell
        X, groups = make(rng)
        cells = np.unique(np.column_stack([X, *groups]), axis=0).shape[0]
        if cells < X.shape[0] and X.shape[0] >= 40:
            return X, groups


@pytest.mark.parametrize("reml", [True, False])
@pytest.mark.parametrize("make", [_nested, _crossed])
def test_missing_rows_deviance_equals_schur_deviance(make, reml):
    # a few rows short of an orthogonal design: the strata with the exact correction
    rng = np.random.default_rng(12)
    for _ in range(6):
        X, groups = _drop_rows(*_with_reruns(make, rng), rng, rng.uniform(0.01, 0.08))
        _batch_deviance_equals_schur(X, groups, rng, reml, boot._MissingRowsBatch)


def _pilot_short(rng, share=0.02):
    """Allocation's pilot (30 seeds > 3 configurations, 2 experiments, 3 reruns), rows missing."""
    ns, nc, ne, nr = 30, 3, 2, 3
    seed = np.repeat(np.arange(ns), nc * ne * nr)
    config = seed * nc + np.tile(np.repeat(np.arange(nc), ne * nr), ns)
    exp = np.tile(np.repeat(np.arange(ne), nr), ns * nc)
    X = np.column_stack([np.ones(seed.size), exp == 1])
    X, groups = _drop_rows(X, [seed, config, seed * ne + exp, config * ne + exp], rng, share)
    y = X @ [0.8, 0.01] + 0.01 * rng.normal(size=X.shape[0])
    for g, sd in zip(groups, [0.01, 0.02, 0.003, 0.005], strict=True):
        y = y + sd * rng.normal(size=g.max() + 1)[g]
    return y, X, groups


def test_missing_rows_bootstrap_equals_schur_bootstrap():
    """Random pilots with 2 % of rows missing: the same draws refitted both ways.

    Equal to the optimiser's tolerance: each replicate's optimum has the same
    deviance (by the exact path's function) to 1e-6, and the draws agree to a
    thousandth of their spread.
    """
    rng = np.random.default_rng(4)
    for trial in range(3):
        y, X, groups = _pilot_short(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            fit = fit_mixed(y, X, groups)
        st = _state(fit)
        (stats,) = boot._simulate_stats(fit, 60, np.random.default_rng(trial), [st.cp])
        new, old = boot._make_batch(st, stats, True), boot._Batch(st.cp, stats, True)
        assert isinstance(new, boot._MissingRowsBatch)
        # from the fit's variances to 6 decimals: a replicate with a variance at 0
        # can end 1e-4 deviance units apart on the two paths when the start moves
        # by 1e-11 (the batch optimisers' stopping rule), which the fit's last
        # digits should not decide
        gamma0 = np.round(fit.theta**2, 6)
        (gn, sn), (go, so) = new.fit(gamma0), old.fit(gamma0)
        np.testing.assert_allclose(old.deviance(gn)[0], old.deviance(go)[0], atol=1e-6)
        vn, vo = (np.column_stack([g * s[:, None], s]) for g, s in ((gn, sn), (go, so)))
        assert np.max(np.abs(vn - vo) / vo.std(axis=0)) < 1e-3
    # and through the public function, which takes the new path by default
    new = bootstrap_components(fit, n_resamples=30, rng=5)
    boot._USE_STRATA = False
    try:
        old = bootstrap_components(fit, n_resamples=30, rng=5)
    finally:
        boot._USE_STRATA = True
    assert np.max(np.abs(new - old) / old.std(axis=0)) < 1e-3


def test_missing_cells_and_many_missing_rows_take_the_general_path():
    rng = np.random.default_rng(2)
    X, groups = _with_reruns(_nested, rng)
    assert boot._completed(X, groups) is None  # nothing missing
    X2, groups2 = _drop_rows(X, groups, rng, 0.3)
    assert boot._completed(X2, groups2) is None  # more than a tenth missing
    cells = np.unique(np.column_stack([X, *groups]), axis=0, return_inverse=True)[1].ravel()
    keep = cells != 0  # a whole cell gone: no row left to fill it from
    assert boot._completed(X[keep], [g[keep] for g in groups]) is None
    one = np.arange(X.shape[0]) != 0
    full = boot._completed(X[one], [g[one] for g in groups])
    assert full is not None and full[2] == 1 and Strata.of(*full[:2]) is not None
