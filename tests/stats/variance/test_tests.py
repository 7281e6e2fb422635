"""LRTs, Satterthwaite and Kenward-Roger tests against lmerTest / pbkrtest.

Reference numbers (tests/data/lme4/README.md: R 4.2.2, lme4 1.1-31,
lmerTest 3.1-3, pbkrtest 0.5.2) on decovac_small_unbal.csv:

    m <- lmer(y ~ model * optimizer + (1 | seed) + (1 | config), d)
    anova(m, type = 3)                         # Satterthwaite
    anova(m, type = 3, ddf = "Kenward-Roger")
    ranova(m)
    m0 <- lmer(y ~ 0 + experiment + (1 | seed) + (1 | config), d)
    contest(m0, L, joint = FALSE); difflsmeans(m0)
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats import contrast, f_test, fit_mixed, pairwise, random_effect_lrt
from vareval.stats.variance import tests as tests_mod
from vareval.stats.variance.tests import _KenwardRoger, holm

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"
RTOL = 1e-5
EXPERIMENTS = ["mA_adam", "mA_sgd", "mB_adam", "mB_sgd", "mC_adam", "mC_sgd"]


def _codes(s):
    levels, codes = np.unique(s.astype(str), return_inverse=True)
    return codes, list(levels)


@pytest.fixture(scope="module")
def decovac():
    return pd.read_csv(DATA / "decovac_small_unbal.csv")


def _treatment(codes, k):
    return np.column_stack([(codes == i).astype(float) for i in range(1, k)])


def _sum(codes, k):
    return np.column_stack(
        [(codes == i).astype(float) - (codes == k - 1) for i in range(k - 1)]
    )


@pytest.fixture(scope="module")
def factorial(decovac):
    """The model * optimizer fit with R's default (treatment) coding."""
    n = len(decovac)
    mo, _ = _codes(decovac["model"])
    op, _ = _codes(decovac["optimizer"])
    s, _ = _codes(decovac["seed"])
    c, _ = _codes(decovac["config"])
    Mm, Mo = _treatment(mo, 3), _treatment(op, 2)
    X = np.column_stack([np.ones(n), Mm, Mo, Mm * Mo])
    Sm, So = _sum(mo, 3), _sum(op, 2)
    Xs = np.column_stack([np.ones(n), Sm, So, Sm * So])
    T = np.linalg.lstsq(Xs, X, rcond=None)[0]  # beta_sum = T beta_treatment
    f = fit_mixed(decovac["y"].to_numpy(), X, [s, c], group_names=["seed", "config"])
    hyp = {"model": T[[1, 2]], "optimizer": T[[3]], "model:optimizer": T[[4, 5]]}
    return f, hyp


@pytest.fixture(scope="module")
def cellmeans(decovac):
    e, levels = _codes(decovac["experiment"])
    assert levels == EXPERIMENTS
    s, _ = _codes(decovac["seed"])
    c, _ = _codes(decovac["config"])
    return fit_mixed(
        decovac["y"].to_numpy(),
        np.eye(6)[e],
        [s, c],
        group_names=["seed", "config"],
        fixed_names=EXPERIMENTS,
    )


def test_criterion_and_components(factorial):
    f, _ = factorial
    assert f.criterion == pytest.approx(-1777.7102, rel=1e-7)
    assert f.loglik == pytest.approx(888.855, rel=1e-6)
    assert f.variance == pytest.approx(
        [0.00027126161, 0.00056172138, 0.00010793671], rel=RTOL
    )


def test_lrt(factorial):
    seed, config = random_effect_lrt(factorial[0])
    assert seed.statistic == pytest.approx(2.145, abs=5e-4)
    assert seed.pvalue_naive == pytest.approx(0.14304, abs=5e-6)
    assert seed.pvalue == pytest.approx(0.0715, abs=5e-5)
    assert seed.pvalue == pytest.approx(seed.pvalue_naive / 2)
    assert config.statistic == pytest.approx(417.981, rel=RTOL)


@pytest.mark.parametrize(
    "method, expected",
    [
        (
            "satterthwaite",
            {
                "model": (207.0637, 2, 281.071),
                "optimizer": (21.5611, 1, 281.078),
                "model:optimizer": (44.4452, 2, 281.046),
            },
        ),
        (
            "kenward-roger",
            {
                "model": (207.0561, 2, 281.064),
                "optimizer": (21.5603, 1, 281.071),
                "model:optimizer": (44.4441, 2, 281.039),
            },
        ),
    ],
)
def test_type3_f_tests(factorial, method, expected):
    f, hyp = factorial
    cache = {}
    for term, (F, ndf, ddf) in expected.items():
        r = f_test(f, hyp[term], method=method, term=term, _cache=cache)
        assert r.statistic == pytest.approx(F, rel=RTOL)
        assert r.ndf == ndf
        assert r.ddf == pytest.approx(ddf, rel=RTOL)
        assert r.pvalue == pytest.approx(sst.f.sf(r.statistic, ndf, r.ddf))
    opt = f_test(f, hyp["optimizer"], method=method, _cache=cache)
    p = 5.2675e-06 if method == "satterthwaite" else 5.2697e-06
    assert opt.pvalue == pytest.approx(p, rel=RTOL)


def test_f_test_invariant_to_coding(factorial, cellmeans):
    # the hypothesis "all six experiment means equal" in two parameterisations
    f, _ = factorial
    L_cells = np.column_stack([-np.ones(5), np.eye(5)])
    # map the cell means to the treatment coding: rows of the cell-mean design
    M = np.array(
        [
            [1, b, c, o, b * o, c * o]
            for b, c in ((0, 0), (1, 0), (0, 1))
            for o in (0, 1)
        ],
        float,
    )
    order = [0, 1, 2, 3, 4, 5]  # mA_adam, mA_sgd, mB_adam, mB_sgd, mC_adam, mC_sgd
    L_trt = L_cells @ M[order]
    for method in ("satterthwaite", "kenward-roger"):
        a = f_test(cellmeans, L_cells, method=method)
        b = f_test(f, L_trt, method=method)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-6)
        assert a.ddf == pytest.approx(b.ddf, rel=1e-5)


def test_cell_means_satterthwaite(cellmeans):
    r = contrast(cellmeans, np.eye(6), labels=EXPERIMENTS)
    assert r.estimate == pytest.approx(
        [0.79919272, 0.80840360, 0.81621879, 0.79819172, 0.83510766, 0.82728473],
        rel=RTOL,
    )
    assert r.se == pytest.approx(
        [
            0.0091986570,
            0.0091884150,
            0.0091862268,
            0.0091884042,
            0.0091936610,
            0.0091910502,
        ],
        rel=RTOL,
    )
    assert r.df == pytest.approx(
        [4.1862309, 4.1676225, 4.1636563, 4.1676034, 4.1771444, 4.1724032], rel=RTOL
    )


def test_contrasts(cellmeans):
    # the reference's second contrast is (1,1,1,-1,-1,-1)/3 in EXPERIMENTS order
    L = np.array([[-1, 1, 0, 0, 0, 0], np.array([1, 1, 1, -1, -1, -1]) / 3])
    s = contrast(cellmeans, L)
    assert s.estimate == pytest.approx([0.0092108811, -0.012256333], rel=RTOL)
    assert s.se == pytest.approx([0.0020862462, 0.0011942127], rel=RTOL)
    assert s.df == pytest.approx([281.05122, 281.0643], rel=RTOL)
    assert s.ci_low[0] == pytest.approx(0.0051042295, rel=RTOL)
    assert s.ci_high[0] == pytest.approx(0.013317533, rel=RTOL)
    k = contrast(cellmeans, L, method="kenward-roger")
    assert k.se == pytest.approx([0.002086272, 0.0011942364], rel=RTOL)
    assert k.df == pytest.approx([281.04412, 281.05721], rel=RTOL)
    assert k.ci_low[0] == pytest.approx(0.0051041782, rel=RTOL)
    assert k.ci_high[0] == pytest.approx(0.013317584, rel=RTOL)


def test_pairwise(cellmeans):
    r = pairwise(cellmeans, np.eye(6), labels=EXPERIMENTS)
    assert len(r.labels) == 15
    got = dict(
        zip(r.labels, zip(r.estimate, r.se, r.df, r.pvalue, strict=True), strict=True)
    )
    ref = {
        "mA_adam - mB_adam": (-0.0170260725, 0.0020787278, 281.06851, None),
        "mA_adam - mB_sgd": (0.0010009999, 0.0020917390, 281.08799, 0.63263),
        "mA_adam - mC_adam": (-0.0359149437, 0.0021125666, 281.09069, None),
    }
    for label, (est, se, df, p) in ref.items():
        e, s, d, pv = got[label]
        assert e == pytest.approx(est, rel=RTOL)
        assert s == pytest.approx(se, rel=RTOL)
        assert d == pytest.approx(df, rel=RTOL)
        if p is not None:
            assert pv == pytest.approx(p, rel=RTOL)
    np.testing.assert_allclose(r.pvalue_holm, holm(r.pvalue))


def test_holm_against_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.04])
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1])


def _dense_kr(f, X, groups):
    """pbkrtest's vcovAdj written with n x n matrices (only for small n)."""
    n = X.shape[0]
    Zs = [np.eye(g.max() + 1)[g] for g in groups]
    G = [Z @ Z.T for Z in Zs] + [np.eye(n)]
    Sig = sum(v * Gi for v, Gi in zip(f.variance, G, strict=True))
    Si = np.linalg.inv(Sig)
    Phi = np.linalg.inv(X.T @ Si @ X)
    H = [Gi @ Si for Gi in G]
    O = [h @ X for h in H]  # noqa: E741
    P = [-(o.T @ Si @ X) for o in O]
    ng = len(G)
    Q = {(i, j): O[i].T @ Si @ O[j] for i in range(ng) for j in range(ng)}
    IE2 = np.array(
        [
            [
                np.sum(H[i].T * H[j])
                - 2 * np.sum(Phi * Q[i, j])
                + np.sum((Phi @ P[i]) * (P[j] @ Phi))
                for j in range(ng)
            ]
            for i in range(ng)
        ]
    )
    W = 2 * np.linalg.inv(IE2)
    U = np.zeros_like(Phi)
    for i in range(ng - 1):
        for j in range(i + 1, ng):
            U += W[i, j] * (Q[i, j] - P[i] @ Phi @ P[j])
    U = U + U.T
    for i in range(ng):
        U += W[i, i] * (Q[i, i] - P[i] @ Phi @ P[i])
    return Phi + 2 * Phi @ U @ Phi


def test_kenward_roger_woodbury_equals_dense(rng):
    n = 90
    g = [rng.integers(0, 9, n), rng.integers(0, 4, n)]
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x, rng.integers(0, 2, n)])
    y = (
        X @ [1, 0.3, 0.5]
        + rng.normal(size=9)[g[0]]
        + rng.normal(size=4)[g[1]]
        + rng.normal(size=n)
    )
    g = [np.unique(gi, return_inverse=True)[1] for gi in g]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        f = fit_mixed(y, X, g)
    if f.singular:
        pytest.skip("singular draw")
    np.testing.assert_allclose(
        _KenwardRoger(f).PhiA, _dense_kr(f, X, g), rtol=1e-7, atol=1e-12
    )


def test_bad_arguments(cellmeans):
    with pytest.raises(ArgumentError, match="method"):
        f_test(cellmeans, np.eye(6), method="wald")
    with pytest.raises(ArgumentError, match="6 columns"):
        contrast(cellmeans, np.eye(5))
    with pytest.raises(ArgumentError, match="not a grouping factor"):
        random_effect_lrt(cellmeans, terms=["rerun"])
    with pytest.raises(ArgumentError, match="two groups"):
        pairwise(cellmeans, np.eye(6)[:1])


def test_kenward_roger_of_ml_fit_uses_reml_refit(decovac, factorial):
    # pbkrtest refits an ML model by REML before the adjustment
    f, hyp = factorial
    ml = fit_mixed(
        f._state.y, f._state.X, f._state.codes, group_names=f.group_names, reml=False
    )
    a = f_test(ml, hyp["model"], method="kenward-roger")
    b = f_test(f, hyp["model"], method="kenward-roger")
    assert a.statistic == pytest.approx(b.statistic, rel=1e-7)
    assert a.ddf == pytest.approx(b.ddf, rel=1e-7)


def test_dyestuff_lrt():
    # lmerTest::ranova(lmer(Yield ~ 1 + (1 | Batch), Dyestuff)): LRT 6.3690, p 0.01161
    d = pd.read_csv(DATA / "Dyestuff.csv")
    g, _ = _codes(d["Batch"])
    (t,) = random_effect_lrt(
        fit_mixed(d["Yield"].to_numpy(float), np.ones((30, 1)), [g])
    )
    assert t.statistic == pytest.approx(6.3690, abs=5e-5)
    assert t.pvalue_naive == pytest.approx(0.01161, abs=5e-6)


def test_penicillin_satterthwaite_df(monkeypatch):
    # lmerTest: Satterthwaite df of the intercept 5.4866, at lme4's theta
    # (1.539676, 3.512519). lme4's optimiser stopped slightly short of the
    # optimum (see test_mixed.py), so the df is checked at lme4's theta and,
    # to 4 figures, at vareval's own optimum.
    import vareval.stats.variance.fit as mixed

    d = pd.read_csv(DATA / "Penicillin.csv")
    g1, _ = _codes(d["plate"])
    g2, _ = _codes(d["sample"])
    y = d["diameter"].to_numpy(float)
    f = fit_mixed(y, np.ones((144, 1)), [g1, g2])
    assert contrast(f, [[1.0]]).df[0] == pytest.approx(5.4866, rel=2e-4)
    monkeypatch.setattr(
        mixed,
        "_optimise",
        lambda cp, reml, start=None, polish=True: (
            np.array([1.539676, 3.512519]), True, "", 0, None
        ),
    )
    st = f._state
    at_lme4 = mixed._fit_from_crossprods(
        st.cp,
        st.y,
        st.X,
        st.codes,
        f.fixed_names,
        f.group_names,
        st.level_names,
        True,
    )
    assert at_lme4.se[0] == pytest.approx(0.808595, rel=1e-5)
    assert contrast(at_lme4, [[1.0]]).df[0] == pytest.approx(5.4866, rel=1e-5)


def test_kenward_roger_scaled_f_on_disjoint_seed_sets():
    # Experiments on disjoint seeds, where the scaled and unscaled KR F differ
    # (tests/data/lme4/reference_intervals.R: pbkrtest::KRmodcomp and
    # lmerTest::anova(m, ddf = "Kenward-Roger") both give the scaled F).
    from vareval.data.variance import variance

    ref = pd.read_csv(DATA / "kr_disjoint.csv").iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        a = variance(
            pd.read_csv(DATA / "disjoint_seeds.csv"),
            metric="y",
            fixed=["experiment"],
            random=["seed", "config"],
        )
    (t,) = a.f_tests["kenward-roger"]
    assert ref.scaling < 0.98  # the design separates the two statistics
    assert t.statistic == pytest.approx(ref.F_scaled, rel=1e-4)
    assert t.statistic == pytest.approx(ref.lmerTest_F, rel=1e-4)
    assert t.pvalue == pytest.approx(ref.p_scaled, rel=1e-4)
    assert t.statistic_unscaled == pytest.approx(ref.F_unscaled, rel=1e-4)
    assert t.pvalue_unscaled == pytest.approx(ref.p_unscaled, rel=1e-4)
    assert t.scaling == pytest.approx(ref.scaling, rel=1e-5)
    assert t.ddf == pytest.approx(ref.ddf, rel=1e-5)


@pytest.mark.parametrize("case", range(6))
def test_kenward_roger_block_form_equals_dense(case):
    # The Schur-complement Kenward-Roger equals the dense (q + p)-matrix one on
    # crossed, nested and three-factor designs, with and without zero variances.
    rng = np.random.default_rng(case)
    n = 150 + 40 * case
    k = 1 + case % 3
    g = [rng.integers(0, m, n) for m in rng.integers(3, 20, k)]
    if case in (1, 4):  # the first factor nested in the second
        g[0] = g[1] * 10 + rng.integers(0, 3, n)
    g = [np.unique(gi, return_inverse=True)[1] for gi in g]
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    sds = [0.0 if case == 5 and j == 0 else 0.8 for j in range(k)]
    y = X @ [1, 0.3, 0.5] + rng.normal(size=n)
    for s, gi in zip(sds, g, strict=True):
        y = y + rng.normal(0, s, gi.max() + 1)[gi]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        f = fit_mixed(y, X, g)
    np.testing.assert_allclose(
        _KenwardRoger(f).PhiA, _dense_kr(f, X, g), rtol=1e-8, atol=1e-14
    )


def test_a_variance_fitted_at_zero_is_tested_without_a_refit():
    # the full fit at sigma_j = 0 is the reduced model: LRT 0, p 1, the same
    # log-likelihood, and the refit it spares finds no better criterion
    from vareval.stats.variance.tests import _refit

    rng = np.random.default_rng(5)
    n = 600
    seed, config, extra = rng.integers(0, 30, n), rng.integers(0, 20, n), rng.integers(0, 40, n)
    y = rng.normal(size=30)[seed] + 0.5 * rng.normal(size=20)[config] + rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = fit_mixed(y, np.ones((n, 1)), [seed, config, extra],
                        group_names=["seed", "config", "extra"])  # fmt: skip
        assert fit.converged and fit.variance[2] == 0  # no variance between extra's levels
        lrt = random_effect_lrt(fit)
        refit = _refit(fit, [0, 1], start=fit.theta[[0, 1]])
    t = lrt[2]
    assert t.statistic == 0 and t.pvalue == 1 and t.loglik_reduced == fit.loglik
    assert refit.criterion == pytest.approx(fit.criterion, abs=1e-6)
    assert lrt[0].statistic > 0 and lrt[1].statistic > 0  # the others refitted


@pytest.mark.parametrize("reml", [True, False])
def test_unpolished_refits_give_the_polished_lrt(reml, monkeypatch):
    # the LRT refits stop at the Newton steps' optimum (last step < 1e-7
    # relative) without the difference-Hessian polish: the same statistics, on
    # random designs with variances at 0 and not, warm starts holding zeros
    import vareval.stats.variance.tests as vt

    real = vt._fit_from_crossprods

    def polished_fit(*a, **k):
        return real(*a, **{**k, "polish": True})

    rng = np.random.default_rng(21)
    for _ in range(5):
        n = int(rng.integers(300, 700))
        sizes = rng.integers(6, 50, 3)
        sds = rng.choice([0.0, 0.4, 1.0], 3)
        groups = [rng.integers(0, m, n) for m in sizes]
        y = sum(s * rng.normal(size=m)[g] for g, m, s in zip(groups, sizes, sds, strict=True))
        y = y + rng.normal(size=n)
        X = np.column_stack([np.ones(n), rng.normal(size=n)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            fit = fit_mixed(y, X, groups, reml=reml)
            fast = random_effect_lrt(fit)
            with monkeypatch.context() as m:
                m.setattr(vt, "_fit_from_crossprods", polished_fit)
                polished = random_effect_lrt(fit)
        for a, b in zip(fast, polished, strict=True):
            assert a.statistic == pytest.approx(b.statistic, rel=1e-7, abs=1e-6)
            assert a.loglik_reduced == pytest.approx(b.loglik_reduced, rel=1e-11, abs=1e-7)


def test_lrt_refits_from_the_moved_start_equal_refits_from_the_default_start():
    """Each reduced model started where its variance went (seed:experiment takes the
    seed's when seed is dropped) ends where a refit from the default start ends."""
    rng = np.random.default_rng(29)
    n_seed, n = 40, 480
    seed = np.repeat(np.arange(n_seed), n // n_seed)
    exp = rng.integers(0, 3, n)
    config = rng.integers(0, 25, n)
    sxe = seed * 3 + exp
    y = (0.1 * exp + rng.normal(size=n_seed)[seed] + 0.7 * rng.normal(size=25)[config]
         + 0.5 * rng.normal(size=3 * n_seed)[sxe] + rng.normal(size=n))  # fmt: skip
    X = np.column_stack([np.ones(n), exp == 1, exp == 2]).astype(float)
    fit = fit_mixed(y, X, [seed, config, sxe], group_names=["seed", "config", "sxe"])
    start = tests_mod._reduced_start(fit, 0)  # seed dropped: sxe carries its variance
    v = fit.variance
    np.testing.assert_allclose(start, np.sqrt([v[1] / v[3], (v[2] + v[0]) / v[3]]))
    lrt = random_effect_lrt(fit)
    for j, res in enumerate(lrt):
        keep = [m for m in range(3) if m != j]
        default = tests_mod._refit(fit, keep, start=None)
        assert default.converged
        assert -2 * res.loglik_reduced == pytest.approx(default.criterion, rel=1e-11, abs=1e-8)
