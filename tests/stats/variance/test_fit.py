"""The mixed model against lme4's fits (provenance: tests/data/lme4/README.md).

Reference values were computed with R 4.2.2, lme4 1.1-31, lmerTest 3.1-3 and
pbkrtest 0.5.2; they are copied here with the R call in each test.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.errors import ArgumentError, FitError, VarevalWarning
from vareval.stats import fit_mixed, random_effect_lrt
from vareval.stats.variance import fit as mixed
from vareval.stats.variance.fit import _Crossprods

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"
RTOL = 1e-5  # "at least 5 significant figures"


def _codes(s):
    levels, codes = np.unique(s.astype(str), return_inverse=True)
    return codes, list(levels)


def _intercept(n):
    return np.ones((n, 1))


@pytest.fixture(scope="module")
def dyestuff():
    d = pd.read_csv(DATA / "Dyestuff.csv")
    g, lev = _codes(d["Batch"])
    return d["Yield"].to_numpy(float), [g], ["Batch"], [lev]


@pytest.fixture(scope="module")
def penicillin():
    d = pd.read_csv(DATA / "Penicillin.csv")
    g1, l1 = _codes(d["plate"])
    g2, l2 = _codes(d["sample"])
    return d["diameter"].to_numpy(float), [g1, g2], ["plate", "sample"], [l1, l2]


@pytest.fixture(scope="module")
def pastes():
    d = pd.read_csv(DATA / "Pastes.csv")
    g1, l1 = _codes(d["sample"])  # cask within batch: "A:a", ...
    g2, l2 = _codes(d["batch"])
    return d["strength"].to_numpy(float), [g1, g2], ["cask:batch", "batch"], [l1, l2]


def _fit(data, reml=True):
    y, groups, names, levels = data
    return fit_mixed(
        y, _intercept(y.size), groups, group_names=names, level_names=levels, reml=reml
    )


class TestDyestuff:
    # lmer(Yield ~ 1 + (1 | Batch), Dyestuff)
    def test_reml(self, dyestuff):
        f = _fit(dyestuff)
        assert f.criterion == pytest.approx(319.6542768, rel=1e-9)
        assert f.coef[0] == pytest.approx(1527.5, rel=RTOL)
        assert f.se[0] == pytest.approx(19.3834, rel=RTOL)
        assert f.variance == pytest.approx([1764.05, 2451.25], rel=RTOL)
        assert f.sd == pytest.approx([42.0006, 49.5101], rel=RTOL)
        assert f.theta[0] == pytest.approx(0.848324, rel=RTOL)
        assert f.loglik == pytest.approx(-319.6542768 / 2, rel=1e-9)
        assert not f.singular and f.converged

    def test_ml(self, dyestuff):
        f = _fit(dyestuff, reml=False)
        assert f.criterion == pytest.approx(327.3270599, rel=1e-9)
        assert f.sd == pytest.approx([37.2603, 49.5101], rel=RTOL)
        assert f.se[0] ** 2 == pytest.approx(313.0972, rel=RTOL)


class TestPenicillin:
    # lmer(diameter ~ 1 + (1 | plate) + (1 | sample), Penicillin)
    def test_reml(self, penicillin):
        f = _fit(penicillin)
        assert f.criterion == pytest.approx(330.860589, rel=1e-8)
        assert f.coef[0] == pytest.approx(22.972222, rel=RTOL)
        assert f.variance[0] == pytest.approx(0.716905, rel=RTOL)
        assert f.variance[2] == pytest.approx(0.302415, rel=RTOL)
        assert f.sd[[0, 2]] == pytest.approx([0.846703, 0.549923], rel=RTOL)
        assert f.theta[0] == pytest.approx(1.539676, rel=RTOL)
        # lme4's bobyqa stopped 8.6e-9 deviance units above the optimum, at
        # theta_sample = 3.512519 (variance 3.731132); vareval's optimum is lower,
        # so the sample variance and the SE agree to 4 significant figures only...
        assert f.variance[1] == pytest.approx(3.731132, rel=1e-4)
        assert f.sd[1] == pytest.approx(1.931614, rel=1e-4)
        assert f.se[0] == pytest.approx(0.808595, rel=1e-4)
        cp = f._state.cp
        theta_lme4 = np.array([1.539676, 3.512519])
        ev = cp.evaluate(theta_lme4)
        assert f.criterion <= ev["dev"]
        # ... and at lme4's theta vareval's formulas give lme4's numbers.
        s2 = ev["r2"] / (144 - 1)
        assert theta_lme4**2 * s2 == pytest.approx([0.716905, 3.731132], rel=RTOL)
        se = np.sqrt(s2) * abs(np.linalg.inv(ev["RX"])[0, 0])
        assert se == pytest.approx(0.808595, rel=RTOL)

    def test_ml(self, penicillin):
        f = _fit(penicillin, reml=False)
        assert f.criterion == pytest.approx(332.188349, rel=1e-8)
        assert f.sd[:2] == pytest.approx([0.845573, 1.770647], rel=RTOL)
        assert f.variance[2] == pytest.approx(0.302425, rel=RTOL)
        assert f.se[0] == pytest.approx(0.744596, rel=RTOL)

    def test_lrt(self, penicillin):
        # lmerTest::ranova (REML) and anova() of ML refits
        reml = random_effect_lrt(_fit(penicillin))
        assert [t.statistic for t in reml] == pytest.approx(
            [105.05727, 282.39544], rel=RTOL
        )
        ml = random_effect_lrt(_fit(penicillin, reml=False))
        assert [t.statistic for t in ml] == pytest.approx(
            [105.00173, 279.4412], rel=RTOL
        )

    def test_blups_and_residuals(self, penicillin):
        y, groups, *_ = penicillin
        f = _fit(penicillin)
        rebuilt = f.coef[0] + f.blups[0][groups[0]] + f.blups[1][groups[1]]
        np.testing.assert_allclose(f.fitted, rebuilt)
        np.testing.assert_allclose(f.residuals, y - rebuilt)
        # conditional modes of a random intercept sum to ~0 with balanced data
        assert abs(np.sum(f.blups[0])) < 1e-6 * np.sum(np.abs(f.blups[0]))


class TestPastes:
    # lmer(strength ~ 1 + (1 | batch / cask), Pastes)
    def test_reml(self, pastes):
        f = _fit(pastes)
        assert f.criterion == pytest.approx(246.9907459, rel=1e-9)
        assert f.coef[0] == pytest.approx(60.053333, rel=RTOL)
        assert f.se[0] == pytest.approx(0.676870, rel=RTOL)
        assert f.variance == pytest.approx([8.433666, 1.657311, 0.678000], rel=RTOL)
        assert f.sd == pytest.approx([2.904077, 1.287366, 0.823408], rel=RTOL)
        # cask is nested in batch: its ICC includes the batch variance
        assert f.icc[0] == pytest.approx(np.sum(f.variance[:2]) / np.sum(f.variance))
        assert f.icc[1] == pytest.approx(f.share[1])

    def test_lrt(self, pastes):
        tests = random_effect_lrt(_fit(pastes))
        cask, batch = tests
        assert batch.statistic == pytest.approx(0.657656, rel=RTOL)
        assert batch.pvalue_naive == pytest.approx(0.41739, rel=RTOL)
        assert batch.pvalue == pytest.approx(0.2087, rel=1e-4)
        assert cask.statistic == pytest.approx(54.604665, rel=RTOL)

    def test_ml(self, pastes):
        f = _fit(pastes, reml=False)
        assert f.criterion == pytest.approx(247.994466, rel=1e-8)
        assert f.sd[:2] == pytest.approx([2.904069, 1.095070], rel=RTOL)
        assert f.variance[2] == pytest.approx(0.678002, rel=RTOL)
        assert f.se[0] == pytest.approx(0.642136, rel=RTOL)


def test_decovac_components():
    # lmer(y ~ model * optimizer + (1 | seed) + (1 | config)), REML
    d = pd.read_csv(DATA / "decovac_small_unbal.csv")
    s, _ = _codes(d["seed"])
    c, _ = _codes(d["config"])
    e, _ = _codes(d["experiment"])
    X = np.eye(6)[e]  # same column space as model * optimizer
    f = fit_mixed(d["y"].to_numpy(), X, [c, s], group_names=["config", "seed"])
    assert f.variance == pytest.approx(
        [0.00056172138, 0.00027126161, 0.00010793671], rel=RTOL
    )
    assert f.sd == pytest.approx([0.023700662, 0.016470022, 0.010389259], rel=RTOL)


def test_gradient_matches_differences(penicillin):
    y, groups, *_ = penicillin
    cp = _Crossprods(y, _intercept(y.size), groups, [24, 6])
    for reml in (True, False):
        th = np.array([0.7, 1.3])
        g = cp.evaluate(th, reml=reml, grad=True)["grad"]
        h = 1e-5
        num = [
            (
                cp.evaluate(th + h * e, reml)["dev"]
                - cp.evaluate(th - h * e, reml)["dev"]
            )
            / (2 * h)
            for e in np.eye(2)
        ]
        np.testing.assert_allclose(g, num, rtol=1e-6)


def test_three_factors_and_dense_paths(rng):
    # three crossed factors; the Schur block then holds two factors
    n = 400
    g = [rng.integers(0, m, n) for m in (30, 7, 5)]
    y = (
        rng.normal(size=30)[g[0]]
        + 0.5 * rng.normal(size=7)[g[1]]
        + rng.normal(size=5)[g[2]]
        + rng.normal(size=n)
    )
    f = fit_mixed(y, np.ones((n, 1)), g)
    assert f.converged
    # same fit with the factors permuted
    f2 = fit_mixed(y, np.ones((n, 1)), [g[2], g[0], g[1]])
    assert f2.criterion == pytest.approx(f.criterion, rel=1e-9)
    np.testing.assert_allclose(f2.variance[[1, 2, 0, 3]], f.variance, rtol=1e-5)


statsmodels = pytest.importorskip("statsmodels.api")


@pytest.mark.parametrize("reml", [True, False])
def test_loglik_equals_statsmodels(rng, reml):
    # random small crossed designs: statsmodels MixedLM with variance components
    import statsmodels.formula.api as smf

    for _ in range(3):
        n = int(rng.integers(60, 120))
        a = rng.integers(0, 6, n)
        b = rng.integers(0, 4, n)
        x = rng.normal(size=n)
        y = (
            1
            + 0.5 * x
            + rng.normal(size=6)[a]
            + 0.7 * rng.normal(size=4)[b]
            + rng.normal(size=n)
        )
        df = pd.DataFrame({"y": y, "x": x, "a": a, "b": b, "one": 1})
        md = smf.mixedlm(
            "y ~ x",
            df,
            groups="one",
            re_formula="0",
            vc_formula={"a": "0 + C(a)", "b": "0 + C(b)"},
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sm = md.fit(reml=reml, method=["lbfgs", "powell"])
        X = np.column_stack([np.ones(n), x])
        _, ac = np.unique(a, return_inverse=True)
        _, bc = np.unique(b, return_inverse=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            f = fit_mixed(y, X, [ac, bc], reml=reml)
        # statsmodels' log-likelihood function at vareval's estimates (its
        # vcomp are variances relative to the profiled scale, i.e. theta^2) ...
        from statsmodels.regression.mixed_linear_model import MixedLMParams

        par = MixedLMParams.from_components(
            fe_params=f.coef,
            cov_re=np.zeros((0, 0)),
            vcomp=np.maximum(f.theta**2, 1e-9),
        )
        assert md.loglike(par, profile_fe=True) == pytest.approx(f.loglik, rel=1e-9)
        # ... and vareval's optimum is at least as good as statsmodels' own
        assert f.loglik >= sm.llf - 1e-6


class TestBadInput:
    def test_one_level(self):
        with pytest.raises(FitError, match="only one level"):
            fit_mixed(np.arange(5.0), np.ones((5, 1)), [np.zeros(5, int)])

    def test_all_equal(self):
        with pytest.raises(FitError, match="all responses are equal"):
            fit_mixed(np.ones(6), np.ones((6, 1)), [np.array([0, 0, 1, 1, 2, 2])])

    def test_rank_deficient_names_columns(self):
        X = np.column_stack([np.ones(6), [1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]])
        with pytest.raises(FitError, match="rank-deficient.*(a|b)"):
            fit_mixed(
                np.arange(6.0),
                X,
                [np.array([0, 0, 1, 1, 2, 2])],
                fixed_names=["(Intercept)", "a", "b"],
            )

    def test_confounded(self):
        g = np.array([0, 0, 1, 1, 0, 1])
        X = np.column_stack([np.ones(6), g])
        with pytest.raises(FitError, match="confounded"):
            fit_mixed(np.arange(6.0), X, [g], group_names=["seed"])

    @pytest.mark.parametrize(
        "y, match",
        [
            ([1.0, np.nan, 2, 3], "NaN"),
            ([[1.0, 2.0]], "one-dimensional"),
        ],
    )
    def test_bad_y(self, y, match):
        with pytest.raises(ArgumentError, match=match):
            fit_mixed(y, np.ones((4, 1)), [np.array([0, 0, 1, 1])])

    def test_float_codes(self):
        with pytest.raises(ArgumentError, match="integer"):
            fit_mixed(np.arange(4.0), np.ones((4, 1)), [np.array([0.0, 0, 1, 1])])


def test_singular_fit_warns():
    # no between-group variance at all: the seed variance is estimated at 0
    y = np.array([1.0, 2, 3, 1, 2, 3, 1, 2, 3])
    g = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    with pytest.warns(VarevalWarning, match="singular"):
        f = fit_mixed(y, np.ones((9, 1)), [g])
    assert f.singular and f.theta[0] == 0
    assert "singular" in f.message


def test_invariances(penicillin):
    # shifting y moves only the intercept; scaling y scales variances by c^2;
    # permuting the rows changes nothing
    y, groups, names, levels = penicillin
    X = _intercept(y.size)
    base = fit_mixed(y, X, groups)
    shifted = fit_mixed(y + 100.0, X, groups)
    assert shifted.coef[0] == pytest.approx(base.coef[0] + 100.0, rel=1e-9)
    np.testing.assert_allclose(shifted.variance, base.variance, rtol=1e-6)
    scaled = fit_mixed(3.0 * y, X, groups)
    np.testing.assert_allclose(scaled.variance, 9.0 * base.variance, rtol=1e-6)
    perm = np.random.default_rng(0).permutation(y.size)
    permuted = fit_mixed(y[perm], X, [g[perm] for g in groups])
    assert permuted.criterion == pytest.approx(base.criterion, rel=1e-10)
    np.testing.assert_allclose(permuted.variance, base.variance, rtol=1e-6)


def test_many_levels_nested_and_crossed(rng):
    # thousands of levels: nested (pair-list products) and crossed (dense Schur)
    seeds, per = 400, 10
    n = seeds * per * 4
    s = np.repeat(np.arange(seeds), per * 4)
    c = np.repeat(np.arange(seeds * per), 4)
    y = (
        rng.normal(0, 1, seeds)[s]
        + rng.normal(0, 2, seeds * per)[c]
        + rng.normal(0, 1, n)
    )
    f = fit_mixed(y, np.ones((n, 1)), [s, c])
    assert f.converged and f.n_levels == (seeds, seeds * per)
    assert f.sd == pytest.approx([1, 2, 1], rel=0.2)
    a = rng.integers(0, 300, 6000)
    b = rng.integers(0, 250, 6000)
    y = rng.normal(0, 1, 300)[a] + rng.normal(0, 1, 250)[b] + rng.normal(0, 1, 6000)
    f = fit_mixed(y, np.ones((6000, 1)), [a, b])
    assert f.converged
    assert f.sd == pytest.approx([1, 1, 1], rel=0.25)


def test_non_convergence_is_reported(penicillin, monkeypatch):
    def no_polish(cp, reml, x, f, g, counter, steps=6):
        return x, f, g, np.inf, None  # as if the Newton step were unusable

    monkeypatch.setattr(mixed, "_newton_polish", no_polish)
    with pytest.warns(VarevalWarning, match="did not converge"):
        f = _fit(penicillin)
    assert not f.converged
    assert "did not converge" in f.message


def test_block_factorisation_equals_dense():
    # configurations nested in seeds: the Schur complement on the seeds splits
    # into independent blocks; factoring it by blocks changes no number
    from vareval.stats.variance.fit import _Crossprods

    rng = np.random.default_rng(7)
    n = 400
    seed = rng.integers(0, 12, n)
    config = seed * 5 + rng.integers(0, 5, n)
    other = (seed % 3) * 2 + rng.integers(0, 2, n)  # meets seeds in groups of 4
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = X @ [1.0, 0.5] + rng.normal(size=12)[seed] + rng.normal(size=n)
    groups = [np.unique(g, return_inverse=True)[1] for g in (config, seed, other)]
    cp = _Crossprods(y, X, groups, [int(g.max()) + 1 for g in groups])
    assert cp.blocks is not None and len(cp.blocks) == 1  # 3 blocks of 6 levels
    theta = np.array([0.7, 1.3, 0.4])
    for reml in (True, False):
        # _evaluate: evaluate() keeps its last result, which would make b a's copy
        a = cp._evaluate(theta, reml, grad=True)
        blocks, cp.blocks = cp.blocks, None
        b = cp._evaluate(theta, reml, grad=True)
        cp.blocks = blocks
        assert a["dev"] == pytest.approx(b["dev"], rel=1e-13)
        np.testing.assert_allclose(a["grad"], b["grad"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_log_det_traces_equal_full_inverse(seed):
    # the gradient's traces from S^-1's lower triangle on F's non-zeros (pairs
    # mode) against the full inverse, on random crossed designs and theta
    from vareval.stats.variance.fit import _Crossprods

    rng = np.random.default_rng(seed)
    n = 600
    s = rng.integers(0, 150, n)
    d = rng.integers(0, 40, n)
    dept = d % 7
    X = np.column_stack([np.ones(n), rng.integers(0, 2, n)])
    y = X @ [1.0, 0.2] + rng.normal(size=150)[s] + rng.normal(size=40)[d] + rng.normal(size=n)
    groups = [np.unique(g, return_inverse=True)[1] for g in (s, d, dept)]
    cp = _Crossprods(y, X, groups, [int(g.max()) + 1 for g in groups])
    assert cp.mode == "pairs" and cp.blocks is None
    for theta in (rng.uniform(0.05, 2.0, 3), np.array([0.3, 0.002, 1.1])):
        # E scattered on N_br' D^-1 N_br's non-zeros equals the dense product's
        tb = theta[cp.big]
        dd = tb * tb * cp.n_b + 1.0
        lam = np.repeat(theta[cp.rest], [cp.q[j] for j in cp.rest])
        E = cp.schur_factor(theta, dd, lam)[1]
        np.testing.assert_allclose(E, cp.N_rr - tb * tb * cp._ndn(1.0 / dd), rtol=1e-13, atol=1e-12)
        for reml in (True, False):
            a = cp._evaluate(theta, reml, grad=True)  # not the kept last evaluation
            cp.fast_traces = False
            b = cp._evaluate(theta, reml, grad=True)
            cp.fast_traces = True
            assert a["dev"] == b["dev"]
            np.testing.assert_allclose(a["grad"], b["grad"], rtol=1e-9, atol=1e-9)


def _average_information_by_p(y, X, groups, theta, reml):
    """The average information from the dense projection ``P`` (the oracle)."""
    n, p = X.shape
    Z = [np.eye(g.max() + 2)[g][:, :-1] for g in groups]  # code -1: a row of zeros
    V = np.eye(n) + sum(t**2 * z @ z.T for t, z in zip(theta, Z, strict=True))
    Vi = np.linalg.inv(V)
    P = Vi - Vi @ X @ np.linalg.solve(X.T @ Vi @ X, X.T @ Vi)
    Py = P @ y
    w = np.column_stack([z @ (z.T @ Py) for z in Z])  # V_j P y
    r2, q, Q = y @ Py, w.T @ Py, w.T @ P @ w
    nn = n - p if reml else n
    return (2 * nn - (n - p)) * Q / r2 - nn * np.outer(q, q) / r2**2


@pytest.mark.parametrize("reml", [True, False])
@pytest.mark.parametrize(
    "layout", ["one factor", "two crossed", "three crossed", "sparse", "rows outside", "nested"]
)
def test_average_information_equals_its_formula(layout, reml, monkeypatch):
    rng = np.random.default_rng(7)
    n = 150
    sizes = {"one factor": (12,), "two crossed": (15, 6), "three crossed": (15, 6, 4),
             "sparse": (20, 18), "rows outside": (15, 6, 6),
             "nested": (30, 10)}[layout]  # fmt: skip
    groups = [rng.integers(0, m, n) for m in sizes]
    for g, m in zip(groups, sizes, strict=True):
        g[:m] = np.arange(m)  # every level present
    if layout == "nested":  # three configurations in each seed: a block-diagonal Schur
        groups[1] = groups[0] // 3
    if layout == "rows outside":  # a variance per group: each row in one of the last two
        groups[2][groups[1] < 3] = -1
        groups[1][groups[2] >= 0] = -1
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = X @ [1.0, 0.3] + sum(
        np.append(rng.normal(size=m), 0.0)[g] for g, m in zip(groups, sizes, strict=True)
    )
    y = y + rng.normal(size=n)
    if layout == "sparse":
        monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    cp = mixed._Crossprods(y, X, groups, list(sizes), path="dense" if layout != "sparse" else None)
    assert cp.sparse == (layout == "sparse")
    assert cp.blocks is not None or layout != "nested"  # the block factor's solves too
    theta = np.linspace(0.6, 1.4, len(sizes))
    got = cp.evaluate(theta, reml=reml, information=True)["information"]
    want = _average_information_by_p(y, X, groups, theta, reml)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())


def _designs(rng):
    """(y, X, groups): crossed, nested, three factors, a variance near 0, ML-worthy."""
    out = []
    for sizes, sds in [((30, 8), (1.0, 0.5)), ((40, 12, 5), (1.0, 0.7, 0.3)),
                       ((25, 10), (0.05, 1.0)), ((60,), (0.4,))]:  # fmt: skip
        n = 400
        groups = [rng.integers(0, m, n) for m in sizes]
        y = sum(s * rng.normal(size=m)[g] for g, m, s in zip(groups, sizes, sds, strict=True))
        out.append((y + rng.normal(size=n), np.ones((n, 1)), groups))
    seed = np.repeat(np.arange(20), 12)  # configurations nested in seeds
    config = seed * 3 + np.tile(np.arange(3), 80)
    y = rng.normal(size=20)[seed] + 0.5 * rng.normal(size=60)[config] + rng.normal(size=240)
    out.append((y, np.ones((240, 1)), [seed, config]))
    return out


@pytest.mark.parametrize("reml", [True, False])
def test_average_information_newton_finds_the_bounded_optimum(reml, monkeypatch):
    """The Newton path and L-BFGS-B (forced) reach the same optimum, in fewer evaluations."""
    for y, X, groups in _designs(np.random.default_rng(3)):
        newton = fit_mixed(y, X, groups, reml=reml)
        with monkeypatch.context() as m:
            m.setattr(mixed, "_ai_newton", lambda *a, **k: None)
            bounded = fit_mixed(y, X, groups, reml=reml)
        assert newton.converged and bounded.converged
        assert newton.criterion == pytest.approx(bounded.criterion, rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(newton.theta, bounded.theta, rtol=1e-6, atol=1e-7)
        assert newton.n_evaluations <= bounded.n_evaluations


def test_average_information_newton_ends_on_the_bound(monkeypatch):
    """A variance whose optimum is 0: the projected Newton steps hold it there."""
    rng = np.random.default_rng(5)
    n = 300
    g1, g2 = rng.integers(0, 30, n), rng.integers(0, 10, n)
    y = rng.normal(size=30)[g1] + rng.normal(size=n)  # g2 has no variance
    cp = mixed._Crossprods(y, np.ones((n, 1)), [g1, g2], [30, 10])
    x, ev = mixed._ai_newton(cp, True, np.ones(2), [0])
    assert x[0] > 0 and x[1] == 0
    assert ev["grad"][1] > 0  # the deviance rises into the interior: 0 is the optimum
    assert mixed._optimise(cp, True)[0][1] == 0


@pytest.mark.parametrize("reml", [True, False])
def test_projected_newton_equals_lbfgsb_with_zero_variances(reml, monkeypatch):
    """Random designs with variances at 0, from the default and from warm starts
    holding zeros (as the LRT refits start): the projected Newton path and
    L-BFGS-B (forced) reach one optimum, Newton in fewer evaluations."""
    rng = np.random.default_rng(11)
    for _ in range(6):
        n = int(rng.integers(200, 600))
        sizes = rng.integers(5, 60, 3)
        sds = rng.choice([0.0, 0.0, 0.3, 1.0], 3)
        groups = [rng.integers(0, m, n) for m in sizes]
        y = sum(s * rng.normal(size=m)[g] for g, m, s in zip(groups, sizes, sds, strict=True))
        y = y + rng.normal(size=n)
        X = np.column_stack([np.ones(n), rng.normal(size=n)])
        starts = [None, np.where(sds > 0, 1.0, 0.0), np.where(sds > 0, 0.0, 2.0)]
        for start in starts:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", VarevalWarning)
                cp = mixed._Crossprods(y, X, groups, list(sizes))
                newton = mixed._optimise(cp, reml, start)
                with monkeypatch.context() as m:
                    m.setattr(mixed, "_ai_newton", lambda *a, **k: None)
                    cp = mixed._Crossprods(y, X, groups, list(sizes))
                    bounded = mixed._optimise(cp, reml, start)
            assert newton[1] and bounded[1]
            dev = [cp.evaluate(r[0], reml=reml)["dev"] for r in (newton, bounded)]
            assert dev[0] == pytest.approx(dev[1], rel=1e-12, abs=1e-9)
            np.testing.assert_allclose(newton[0], bounded[0], rtol=1e-6, atol=1e-6)
            assert np.array_equal(newton[0] == 0, bounded[0] == 0)
            assert newton[3] <= bounded[3]


def _minque0_by_n_by_n(y, X, groups):
    """MINQUE(0) from its definition with n x n matrices: ``tr(M V_i M V_j) s = y'M V_i M y``."""
    n = y.size
    M = np.eye(n) - X @ np.linalg.solve(X.T @ X, X.T)
    V = []
    for g in groups:
        Z = np.zeros((n, g.max() + 1))
        rows = np.flatnonzero(g >= 0)
        Z[rows, g[rows]] = 1.0
        V.append(Z @ Z.T)
    MV = [M @ v for v in V + [np.eye(n)]]
    T = np.array([[np.sum(a * b.T) for b in MV] for a in MV])
    return np.linalg.solve(T, np.array([y @ mv @ M @ y for mv in MV]))


@pytest.mark.parametrize("layout", ["two crossed", "three crossed", "nested", "rows outside"])
def test_moment_start_is_minque0(layout):
    """The fit's start: MINQUE(0) from the cross-products equals its n x n definition."""
    rng = np.random.default_rng(17)
    n = 160
    sizes = {"two crossed": (15, 6), "three crossed": (15, 6, 4), "nested": (30, 10),
             "rows outside": (15, 6, 6)}[layout]  # fmt: skip
    groups = [rng.integers(0, m, n) for m in sizes]
    for g, m in zip(groups, sizes, strict=True):
        g[:m] = np.arange(m)
    if layout == "nested":
        groups[1] = groups[0] // 3
    if layout == "rows outside":
        groups[2][groups[1] < 3] = -1
        groups[1][groups[2] >= 0] = -1
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    sds = (0.8, 1.5, 0.4)[: len(sizes)]
    y = X @ [1.0, 0.3, -0.5] + rng.normal(size=n)
    for g, m, s in zip(groups, sizes, sds, strict=True):
        y = y + s * np.append(rng.normal(size=m), 0.0)[g]
    cp = _Crossprods(y, X, groups, list(sizes))
    want = _minque0_by_n_by_n(y, X, groups)
    np.testing.assert_allclose(mixed._minque0(cp), want, rtol=1e-9)
    start = mixed._moment_start(cp)
    np.testing.assert_allclose(start, np.sqrt(np.clip(want[:-1] / want[-1], 1e-2, 1e2)))
    # the same optimum from it as from theta = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        ones = mixed._optimise(_Crossprods(y, X, groups, list(sizes)), True, np.ones(len(sizes)))
        moment = mixed._optimise(cp, True)
    np.testing.assert_allclose(moment[0], ones[0], rtol=1e-6, atol=1e-7)


def test_nesting_equals_its_pairs_definition():
    """The O(n) nesting and same-grouping checks against counting distinct level pairs."""
    rng = np.random.default_rng(23)
    for _ in range(40):
        n = int(rng.integers(5, 60))
        a = rng.integers(0, int(rng.integers(1, 8)), n)
        b = [a // 2, a % 3, rng.integers(0, 4, n), a.copy(), (a * 7 + 1) % 5][rng.integers(0, 5)]
        if rng.random() < 0.3:
            b = b.copy()
            b[rng.integers(0, n)] = 9  # one observation breaks the nesting
        codes, levels = [a, b], [int(a.max()) + 1, int(b.max()) + 1]
        inside = mixed._nesting(codes, levels)
        for j, m in [(0, 1), (1, 0)]:
            pairs = np.unique(codes[j] * levels[m] + codes[m])
            assert inside[j, m] == (np.unique(pairs // levels[m]).size == pairs.size)
        same = np.unique(a * levels[1] + b).size == np.unique(a).size == np.unique(b).size
        if same:
            with pytest.raises(FitError, match="confounded"):
                mixed._check_same_grouping(codes, levels, ["a", "b"])
        else:
            mixed._check_same_grouping(codes, levels, ["a", "b"])


def _zero_designs(rng, count=6):
    """Random crossed designs, some variances 0 (as in the projected-Newton test)."""
    out = []
    for _ in range(count):
        n = int(rng.integers(200, 600))
        sizes = rng.integers(5, 60, 3)
        sds = rng.choice([0.0, 0.0, 0.3, 1.0], 3)
        groups = [rng.integers(0, m, n) for m in sizes]
        y = sum(s * rng.normal(size=m)[g] for g, m, s in zip(groups, sizes, sds, strict=True))
        X = np.column_stack([np.ones(n), rng.normal(size=n)])
        out.append((y + rng.normal(size=n), X, groups, list(sizes)))
    return out


@pytest.mark.parametrize("path", ["dense", "sparse"])
def test_an_evaluation_at_at_zero_serves_for_zero(path):
    """The kept evaluation at theta_j = AT_ZERO answers for theta_j = 0, as a fresh
    evaluation at 0 would (to rounding; the zero's gradient components exactly 0)."""
    from vareval.stats.variance.sparse import AT_ZERO

    for y, X, groups, sizes in _zero_designs(np.random.default_rng(41), 3):
        cp = _Crossprods(y, X, groups, sizes, path=path)
        theta = np.array([0.7, 0.0, 1.3])
        kept = cp.evaluate(np.where(theta > 0, theta, AT_ZERO), gram=True)
        served = cp.evaluate(theta, gram=True)
        fresh = cp._evaluate(theta, True, True, gram=True)
        assert served["dev"] == kept["dev"]  # no new evaluation
        assert served["dev"] == pytest.approx(fresh["dev"], rel=1e-13, abs=1e-10)
        for part in ("grad", "dlogdetA", "dr2", "dlogdetRX2"):
            assert served[part][1] == 0.0  # (the sparse selected inverse leaves ~1e-8 there)
            scale = np.max(np.abs(fresh[part]))
            np.testing.assert_allclose(served[part], fresh[part], rtol=1e-9, atol=1e-7 * scale)
        np.testing.assert_allclose(served["beta"], fresh["beta"], rtol=1e-12)
        np.testing.assert_allclose(served["gram"][0], fresh["gram"][0], rtol=1e-12)


def test_the_predicted_last_newton_step_is_the_confirmed_one():
    """Without its confirming evaluation the Newton steps return the point the
    confirming evaluation returns (to 1e-9), in fewer evaluations."""
    predicted = 0
    for reml in (True, False):
        for y, X, groups, sizes in _zero_designs(np.random.default_rng(43)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", VarevalWarning)
                out = {}
                for confirm in (True, False):
                    cp = _Crossprods(y, X, groups, sizes)
                    counter = [0]
                    found = mixed._ai_newton(
                        cp, reml, mixed._moment_start(cp), counter, confirm=confirm
                    )
                    out[confirm] = (found, counter[0])
            (x1, _), n1 = out[True]
            (x0, ev0), n0 = out[False]
            np.testing.assert_allclose(x0, x1, rtol=1e-9, atol=1e-12)
            assert np.array_equal(x0 == 0, x1 == 0)
            assert n0 <= n1 and (ev0 is not None or n0 < n1)
            predicted += ev0 is None
    assert predicted >= 3  # the prediction is exercised


def test_level_sums_equal_the_sparse_product():
    """Z'[X y] by bincount is bitwise the sparse product's (rows outside a factor too)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(47)
    for it in range(6):
        n, q = int(rng.integers(10, 5000)), int(rng.integers(2, 300))
        g = rng.integers(-1 if it % 2 else 0, q, n)
        Xy = rng.normal(size=(n, 4)) * [1.0, 1e3, 1e-3, 7.0]
        m = g >= 0
        Zt = sp.csr_matrix((np.ones(int(m.sum())), (g[m], np.flatnonzero(m))), shape=(q, n))
        assert np.array_equal(mixed._level_sums(g, m, Xy, q), Zt @ Xy)
