"""The sparse Schur complement (stats/variance/sparse.py) for many crossed levels.

Three checks: the sparse path gives the dense path's numbers on a design both
can fit (``mixed.FORCE_PATH`` sets the path, which is otherwise chosen by
estimated cost); it gives lme4/lmerTest/pbkrtest's numbers on a crossed design
(``tests/data/lme4/crossed_sparse.R`` -> ``crossed_sparse_ref.csv``, R 4.2.2,
lme4 1.1-31, lmerTest 3.1-3, pbkrtest 0.5.2); and a crossed design of 20,000
levels, which the dense path refused, is analysed (slow tier).
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.data.variance import variance
from vareval.errors import FitError, VarevalWarning
from vareval.stats import bootstrap_intervals, fit_mixed, pairwise, random_effect_lrt
from vareval.stats.variance import fit as mixed
from vareval.stats.variance.fit import _Crossprods
from vareval.stats.variance.tests import _Schur

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "lme4"


def _make_crossed(sweeps, rng):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_mixed import make_crossed
    finally:
        sys.path.pop(0)
    return make_crossed(sweeps, rng=rng)


def _analyse(d, reml=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return variance(
            d,
            metric="y",
            fixed=["experiment"],
            random=["seed", "config"],
            seed_by_experiment=False,
            reml=reml,
        )


def _numbers(a):
    """Every number of an analysis that the dense and sparse paths must share."""
    out = [a.fit.coef, a.fit.se, a.fit.sd, [a.fit.criterion]]
    out += [[t.statistic for t in a.lrt]]
    for tests in a.f_tests.values():
        out += [[t.statistic for t in tests], [t.ddf for t in tests]]
    out += [a.pairs.estimate, a.pairs.se, a.pairs.df]
    return np.concatenate([np.ravel(x) for x in out])


@pytest.fixture
def small():
    return _make_crossed(8, rng=5)  # 200 seeds x 200 configurations, 1,200 rows


@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_sparse_path_equals_dense_path(small, monkeypatch, reml):
    monkeypatch.setattr(mixed, "FORCE_PATH", "dense")
    dense = _analyse(small, reml)
    assert dense.fit._state.cp.mode != "sparse-schur"
    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    sparse = _analyse(small, reml)
    assert sparse.fit._state.cp.mode == "sparse-schur"
    # ~1e-6: the two fits stop at optima ~1e-9 apart in theta, and the
    # Satterthwaite df (a derivative of vcov) magnify that most
    np.testing.assert_allclose(_numbers(sparse), _numbers(dense), rtol=2e-6)


def test_sparse_evaluation_and_traces_equal_dense(small, monkeypatch):
    # the deviance and gradient to rounding; Kenward-Roger's traces (central
    # differences of complex-step derivatives) to ~1e-7, at the boundary too
    codes = [np.unique(small[c], return_inverse=True)[1] for c in ("seed", "config")]
    X = np.ones((len(small), 1))
    y = small["y"].to_numpy()
    levels = [int(g.max()) + 1 for g in codes]
    dense = _Crossprods(y, X, codes, levels, path="dense")
    sparse = _Crossprods(y, X, codes, levels, path="sparse")
    for theta in ([0.7, 1.9], [0.0, 1.4], [1.1, 0.0]):
        theta = np.array(theta)
        a = dense.evaluate(theta, reml=True, grad=True)
        b = sparse.evaluate(theta, reml=True, grad=True)
        assert b["dev"] == pytest.approx(a["dev"], rel=1e-12)
        np.testing.assert_allclose(b["grad"], a["grad"], rtol=1e-9, atol=1e-9)
        ta = _Schur(dense, theta).traces(len(y), 1.7)
        tb = _Schur(sparse, theta).traces(len(y), 1.7)
        np.testing.assert_allclose(tb, ta, rtol=1e-6)


def test_sparse_path_against_lme4(monkeypatch):
    d = pd.read_csv(DATA / "crossed_sparse.csv")
    r = pd.read_csv(DATA / "crossed_sparse_ref.csv", keep_default_na=False)
    ref = {(q, t): v for q, t, v in r.itertuples(index=False)}
    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")  # 300 levels outside the largest
    for reml, tag in ((True, "reml"), (False, "ml")):
        a = _analyse(d, reml)
        assert a.fit._state.cp.mode == "sparse-schur"
        crit = ref[f"crit_{tag}", ""]
        assert a.fit.criterion == pytest.approx(crit, abs=1e-9 * abs(crit))
        unit = ref[f"sd_{tag}", "Residual"]
        for comp, sd in zip(a.fit.components, a.fit.sd, strict=True):
            assert sd == pytest.approx(ref[f"sd_{tag}", comp], abs=1e-5 * unit)
        for t in a.lrt:
            assert t.statistic == pytest.approx(ref[f"lrt_{tag}", t.term], rel=1e-8)
        if not reml:
            continue
        sat = a.f_tests["satterthwaite"][0]
        kr = a.f_tests["kenward-roger"][0]
        # lme4 and vareval agree to ~2e-7 relative here (lme4's optimum is
        # ~1e-7 off in theta)
        assert sat.statistic == pytest.approx(ref["sat_F", "experiment"], rel=1e-5)
        assert sat.ddf == pytest.approx(ref["sat_ddf", "experiment"], rel=1e-5)
        assert kr.statistic == pytest.approx(ref["kr_F", "experiment"], rel=1e-5)
        assert kr.ddf == pytest.approx(ref["kr_ddf", "experiment"], rel=1e-5)
        for lab, est, se, df in zip(
            a.pairs.labels, a.pairs.estimate, a.pairs.se, a.pairs.df, strict=True
        ):
            assert est == pytest.approx(ref["pair_est", lab], rel=1e-5, abs=1e-8)
            assert se == pytest.approx(ref["pair_se", lab], rel=1e-5)
            assert df == pytest.approx(ref["pair_df", lab], rel=1e-5)
        # the same pairs with Kenward-Roger's adjusted covariance and df
        means = np.hstack([np.ones((6, 1)), np.eye(6)[:, 1:]])  # treatment coding
        kr_pairs = pairwise(
            a.fit, means, labels=[f"e{i}" for i in range(1, 7)], method="kenward-roger"
        )
        for lab, se, df in zip(kr_pairs.labels, kr_pairs.se, kr_pairs.df, strict=True):
            assert se == pytest.approx(ref["pair_se_kr", lab], rel=1e-5)
            assert df == pytest.approx(ref["pair_df_kr", lab], rel=1e-5)


def test_bootstrap_refuses_the_sparse_path(small, monkeypatch):
    # past SPARSE_LEVELS; below it the bootstrap refits on a dense complement
    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    monkeypatch.setattr(mixed, "SPARSE_LEVELS", 10)
    codes = [np.unique(small[c], return_inverse=True)[1] for c in ("seed", "config")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(small["y"].to_numpy(), np.ones((len(small), 1)), codes)
    with pytest.raises(FitError, match="levels outside its largest grouping factor"):
        bootstrap_intervals(fit, n_resamples=19, rng=0)


@pytest.mark.slow
def test_twenty_thousand_crossed_levels_are_analysed():
    # 10,000 seeds crossed with 10,000 configurations (60,000 rows): 10,000
    # levels outside the largest factor, which the dense path refused above 6,000
    d = _make_crossed(400, rng=0)
    a = _analyse(d)
    assert a.fit._state.cp.mode == "sparse-schur"
    assert a.fit.converged
    # the simulated SDs (seed 0.01, configuration 0.02, residual 0.01)
    np.testing.assert_allclose(a.fit.sd, [0.01, 0.02, 0.01], rtol=0.08)
    kr = a.f_tests["kenward-roger"][0]
    sat = a.f_tests["satterthwaite"][0]
    assert np.isfinite(kr.ddf) and np.isfinite(sat.ddf)
    assert kr.ddf == pytest.approx(sat.ddf, rel=0.05)
    assert np.all(np.isfinite(a.pairs.df)) and len(a.pairs.labels) == 15


@pytest.mark.parametrize("size", [50, 10_000, 9_000_000, 2**32, 2**40])
def test_unique_inverse_equals_numpy(size):
    # the marking table, past its limit the radix sort, past 2**32 np.unique: as np.unique
    from vareval.stats.variance.sparse import unique_inverse

    rng = np.random.default_rng(size)
    key = rng.integers(0, size, 5000).astype(np.int64)
    key = rng.permutation(np.concatenate([key, key[:2000], [0, size - 1]]))  # repeats, ends
    uniq, inv = unique_inverse(key, size)
    ref_u, ref_inv = np.unique(key, return_inverse=True)
    np.testing.assert_array_equal(uniq, ref_u)
    np.testing.assert_array_equal(inv, ref_inv)
    assert uniq.dtype == key.dtype


def test_row_pairs_sum_to_the_weighted_cross_product():
    # N' diag(w) N from the pairs of non-zeros sharing a row, for rows of every
    # length (0 included) and counts above 1, against scipy's product
    import scipy.sparse as sp

    from vareval.stats.variance.sparse import row_pairs

    rng = np.random.default_rng(3)
    for shape, density in (((60, 30), 0.2), ((200, 7), 0.5), ((40, 40), 0.0), ((3, 5), 1.0)):
        N = sp.random(*shape, density=density, format="csr", random_state=rng)
        N.data = rng.integers(1, 4, N.nnz).astype(float)
        w = rng.random(shape[0])
        key, value, row = row_pairs(N)
        got = np.bincount(key, value * w[row], minlength=shape[1] ** 2)
        ref = (N.T @ sp.diags(w) @ N).toarray()
        np.testing.assert_allclose(got.reshape(shape[1], shape[1]), ref, rtol=1e-12)
        key, value, row = row_pairs(N, upper=True)  # its upper triangle (a <= b)
        got = np.bincount(key, value * w[row], minlength=shape[1] ** 2)
        np.testing.assert_allclose(got.reshape(shape[1], shape[1]), np.triu(ref), rtol=1e-12)


def test_three_factors_sparse_path_equals_dense_path(monkeypatch):
    # two factors outside the largest: the gradient's cross terms between them and
    # Kenward-Roger's traces (also with one variance at 0) as on the dense path
    rng = np.random.default_rng(2)
    n = 1500
    a = rng.integers(0, 120, n)
    b = (a // 10 * 7 + rng.integers(0, 14, n)) % 90
    c = rng.integers(0, 25, n)
    y = rng.normal(size=120)[a] * 0.3 + rng.normal(size=90)[b] * 0.5 + rng.normal(size=n)
    codes = [a, b, c]
    levels = [120, 90, 25]
    X = np.column_stack([np.ones(n), np.arange(n) % 3 == 1]).astype(float)
    dense = _Crossprods(y, X, codes, levels, path="dense")
    sparse = _Crossprods(y, X, codes, levels, path="sparse")
    assert sparse.mode == "sparse-schur" and len(sparse.rest) == 2
    for theta in ([0.4, 0.6, 0.3], [0.0, 0.6, 0.3], [0.4, 0.6, 0.0], [0.4, 0.0, 0.2]):
        theta = np.array(theta)
        ga = dense.evaluate(theta, grad=True)["grad"]
        gb = sparse.evaluate(theta, grad=True)["grad"]
        np.testing.assert_allclose(gb, ga, rtol=1e-9, atol=1e-9)
        ta = _Schur(dense, theta).traces(n, 1.3)
        tb = _Schur(sparse, theta).traces(n, 1.3)
        np.testing.assert_allclose(tb, ta, rtol=1e-6, atol=1e-6 * np.abs(ta).max())


def test_too_dense_a_crossing_is_refused_before_any_factorisation(small, monkeypatch):
    # the factor's size is known from the pattern's analysis: past the cap the
    # design is refused with one clear line, and no numeric factorisation runs
    from vareval.stats.variance import sparse, supernodal

    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    monkeypatch.setattr(sparse, "MAX_FACTOR_NNZ", 1_000)

    def no_factor(*args, **kwargs):
        raise AssertionError("a numeric factorisation ran")

    monkeypatch.setattr(supernodal.SparseCholesky, "factor", no_factor)
    with pytest.raises(FitError, match=r"cross so densely that their sparse factor would hold"):
        _analyse(small)


def _make_banded(n, links, rng):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_mixed import make_banded
    finally:
        sys.path.pop(0)
    return make_banded(n, links=links, rng=rng)


def _random_design(kind, rng):
    """Random crossings on which both paths must give one answer."""
    if kind == "banded":
        return _make_banded(120, 0.0, rng), ["seed", "config", "task"]
    if kind == "banded with links":
        return _make_banded(150, 0.05, rng), ["seed", "config", "task"]
    g = np.random.default_rng(rng)  # seeds crossed at random with configurations
    n = 900
    seed, config = g.integers(0, 140, n), g.integers(0, 110, n)
    y = 0.02 * g.normal(size=140)[seed] + 0.01 * g.normal(size=110)[config]
    return pd.DataFrame(
        {"seed": seed.astype(str), "config": config.astype(str),
         "y": y + 0.01 * g.normal(size=n)}
    ), ["seed", "config"]  # fmt: skip


@pytest.mark.parametrize("kind", ["banded", "banded with links", "random crossing"])
@pytest.mark.parametrize("rng", [0, 1])
def test_both_paths_give_one_analysis_on_random_designs(kind, rng, monkeypatch):
    # the criterion, every LRT, the Kenward-Roger and Satterthwaite ddf (an
    # intercept-only model: the F test of a random fixed factor) and the SDs
    d, random = _random_design(kind, rng)
    d["arm"] = np.array(["a", "b", "c"])[np.arange(len(d)) % 3]
    out = {}
    for path in ("dense", "sparse"):
        monkeypatch.setattr(mixed, "FORCE_PATH", path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            a = variance(d, metric="y", fixed=["arm"], random=random,
                         seed_by_experiment=False)  # fmt: skip
        assert (a.fit._state.cp.mode == "sparse-schur") == (path == "sparse")
        out[path] = a
    dense, sparse = out["dense"], out["sparse"]
    assert sparse.fit.criterion == pytest.approx(dense.fit.criterion, rel=1e-10, abs=1e-7)
    np.testing.assert_allclose(sparse.fit.sd, dense.fit.sd, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose([t.statistic for t in sparse.lrt],
                               [t.statistic for t in dense.lrt], rtol=1e-6, atol=1e-6)  # fmt: skip
    for method in ("satterthwaite", "kenward-roger"):
        a, b = dense.f_tests[method][0], sparse.f_tests[method][0]
        assert b.statistic == pytest.approx(a.statistic, rel=1e-5)
        assert b.ddf == pytest.approx(a.ddf, rel=1e-5)


def test_the_path_is_chosen_by_estimated_cost():
    # a band of seeds x configurations factors sparsely with almost no fill: the
    # sparse path although its 612 levels are few; a small crossing stays dense
    # (no sparse analysis run)
    def crossprods(d, random):
        codes = [pd.factorize(d[c])[0] for c in random]
        levels = [int(c.max()) + 1 for c in codes]
        return _Crossprods(d["y"].to_numpy(), np.ones((len(d), 1)), codes, levels)

    band = crossprods(_make_banded(600, 0.0, 0), ["seed", "config", "task"])
    assert band.r == 612 and band.sparse
    dense_cost = mixed._DENSE_CUBE * band.r**3 + mixed._DENSE_ENTRY * band.r**2
    assert band.schur.chol.seconds() < dense_cost
    small = crossprods(_make_banded(60, 0.0, 0), ["seed", "config", "task"])
    assert not small.sparse and not hasattr(small, "schur")


def test_bootstrap_of_a_sparse_fit_equals_the_dense_fits(small, monkeypatch):
    # below SPARSE_LEVELS the parametric bootstrap refits on a dense complement
    codes = [np.unique(small[c], return_inverse=True)[1] for c in ("seed", "config")]
    y, X = small["y"].to_numpy(), np.ones((len(small), 1))
    got = {}
    for path in ("dense", "sparse"):
        monkeypatch.setattr(mixed, "FORCE_PATH", path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            fit = fit_mixed(y, X, codes)
            got[path] = bootstrap_intervals(fit, n_resamples=19, rng=0).to_frame()
    num = got["dense"].select_dtypes("number").columns
    np.testing.assert_allclose(got["sparse"][num].to_numpy(float),
                               got["dense"][num].to_numpy(float), rtol=1e-5)  # fmt: skip


@pytest.mark.parametrize("rng", [0, 1, 2])
def test_gradient_in_s_at_zero_equals_extrapolation(rng):
    # d log|A| / d s_j at s_j = 0 from one gradient at theta_j = sparse.AT_ZERO equals
    # the quadratic extrapolation from s_j = h, 2h, 3h (exact to O(h^3))
    g = np.random.default_rng(rng)
    n = 1200
    a, b, c = g.integers(0, 150, n), g.integers(0, 90, n), g.integers(0, 40, n)
    y = g.normal(size=150)[a] + 0.5 * g.normal(size=90)[b] + g.normal(size=n)
    cp = _Crossprods(y, np.ones((n, 1)), [a, b, c], [150, 90, 40], path="sparse")
    schur = cp.schur
    for zero in range(3):
        s = g.uniform(0.2, 2.0, 3)
        s[zero] = 0.0
        got = schur._grad_in_s(s)
        at = []
        for h in (1e-6, 2e-6, 3e-6):
            theta = np.sqrt(np.where(np.arange(3) == zero, h, s))
            at.append(schur.grad_logdet_a(theta)[zero] / (2.0 * theta[zero]))
        want = 3.0 * at[0] - 3.0 * at[1] + at[2]
        assert got[zero] == pytest.approx(want, rel=1e-9)
        free = np.arange(3) != zero  # the others as at exactly 0
        theta = np.sqrt(s)
        np.testing.assert_allclose(
            got[free], schur.grad_logdet_a(theta)[free] / (2.0 * theta[free]), rtol=1e-10
        )


def test_fit_jacobians_with_a_zero_variance_equal_fresh_differences(monkeypatch):
    # a variance fitted at 0: Satterthwaite's Hessian and Kenward-Roger's traces
    # from the fit's Newton-polish Jacobians (the zero's column from one
    # gradient next to 0) equal those from fresh differences at the optimum
    from vareval.stats.variance.tests import _Satterthwaite

    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    g = np.random.default_rng(9)
    n = 1500
    a, b, c = g.integers(0, 150, n), g.integers(0, 90, n), g.integers(0, 40, n)
    y = g.normal(size=150)[a] + 0.5 * g.normal(size=90)[b] + g.normal(size=n)  # c: none
    X = np.column_stack([np.ones(n), g.normal(size=n)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(y, X, [a, b, c])
    st = fit._state
    assert st.cp.sparse and fit.theta[2] == 0 and st.jacobians.near(fit.theta)
    sat = _Satterthwaite(fit)
    ev = st.cp.evaluate(fit.theta, reml=True, grad=True)
    sigma = fit.sigma / np.sqrt(sat.unit2)
    fresh = sat._hessian_vp(st.cp, fit.theta, sigma, ev)
    reused = sat._hessian_vp(st.cp, fit.theta, sigma, ev, st.jacobians)
    np.testing.assert_allclose(reused, fresh, rtol=1e-6, atol=1e-6 * np.abs(fresh).max())
    schur = _Schur(st.cp, fit.theta)
    fresh = schur.traces(n, 1.3)
    reused = schur.traces(n, 1.3, st.jacobians)
    np.testing.assert_allclose(reused, fresh, rtol=1e-6, atol=1e-6 * np.abs(fresh).max())


@pytest.mark.parametrize("reml", [True, False])
def test_a_dropped_factor_at_zero_is_the_reduced_model(monkeypatch, reml):
    """An LRT refit dropping a small factor runs on the full model at theta_j = 0:
    its evaluations and its refit equal those of the reduced model's own cross-products."""
    rng = np.random.default_rng(31)
    n = 900
    seed, config, task = rng.integers(0, 120, n), rng.integers(0, 90, n), rng.integers(0, 6, n)
    y = (rng.normal(size=120)[seed] + 0.8 * rng.normal(size=90)[config]
         + 0.5 * rng.normal(size=6)[task] + rng.normal(size=n))  # fmt: skip
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    cp = _Crossprods(y, X, [seed, config, task], [120, 90, 6])
    assert mixed._Dropped.worthwhile(cp, 2) and not mixed._Dropped.worthwhile(cp, cp.big)
    dropped = mixed._Dropped(cp, 2)
    own = _Crossprods(y, X, [seed, config], [120, 90])
    theta = np.array([0.9, 0.6])
    got = dropped.evaluate(theta, reml=reml, information=True)
    want = own.evaluate(theta, reml=reml, information=True)
    for part in ("dev", "beta", "grad", "dlogdetA", "dr2", "dlogdetRX2", "information"):
        np.testing.assert_allclose(got[part], want[part], rtol=1e-10, atol=1e-10)
    for a, b in zip(dropped.blups(theta, got), own.blups(theta, want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(y, X, [seed, config, task], group_names=["seed", "config", "task"],
                        reml=reml)  # fmt: skip
        lrt = random_effect_lrt(fit)
        monkeypatch.setattr(mixed._Dropped, "worthwhile", staticmethod(lambda cp, j: False))
        fresh = random_effect_lrt(fit)
    for a, b in zip(lrt, fresh, strict=True):
        assert a.loglik_reduced == pytest.approx(b.loglik_reduced, rel=1e-11, abs=1e-8)
