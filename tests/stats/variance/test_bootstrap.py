"""Parametric bootstrap of mixed models: batched refits, intervals, the PB LRT.

pbmodcomp.csv: tests/data/lme4/reference_intervals.R (R 4.2.2, lme4 1.1-31,
pbkrtest 0.5.2): the LRT of dropping a variance component and its parametric
bootstrap p-value over 1500 responses simulated from the reduced model.
"""

import functools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats import bootstrap_intervals, bootstrap_lrt, fit_mixed
from vareval.stats.variance.bootstrap import _Batch, _simulate_stats, _zt
from vareval.stats.variance.fit import _state

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"


def _codes(s):
    return np.unique(s.astype(str), return_inverse=True)[1]


@functools.cache
def _pastes(reml=True):
    d = pd.read_csv(DATA / "Pastes.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return fit_mixed(
            d["strength"].to_numpy(float),
            np.ones((len(d), 1)),
            [_codes(d["sample"]), _codes(d["batch"])],
            group_names=["sample", "batch"],
            reml=reml,
        )


@pytest.mark.parametrize("reml", [True, False])
def test_batched_refits_equal_single_fits(reml):
    f = _pastes(reml)
    st = _state(f)
    B = 6
    (stats,) = _simulate_stats(f, B, np.random.default_rng(3), [st.cp])
    gamma, s2 = _Batch(st.cp, stats, reml).fit(f.theta**2)
    # the same responses, rebuilt as _simulate_stats draws them
    rng = np.random.default_rng(3)
    n = st.X.shape[0]
    Y = (st.X @ f.coef)[:, None] + f.sigma * rng.standard_normal((n, B))
    for Zt, sd in zip(_zt(st.codes, f.n_levels, n), f.sd[:-1], strict=True):
        Y += Zt.T @ (sd * rng.standard_normal((Zt.shape[0], B)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for i in range(B):
            one = fit_mixed(Y[:, i], st.X, st.codes, reml=reml)
            np.testing.assert_allclose(gamma[i], one.theta**2, rtol=1e-4, atol=1e-6)
            # the batched refit's difference steps (3e-3 relative) stop it
            # within ~3e-6 of the single fit's sigma^2
            assert s2[i] == pytest.approx(one.sigma**2, rel=5e-6)


@pytest.mark.parametrize(
    ("case", "term"), [("Pastes batch", "batch"), ("decovac_small_unbal seed", "seed")]
)
def test_bootstrap_lrt_matches_pbkrtest(case, term):
    ref = pd.read_csv(DATA / "pbmodcomp.csv").set_index("case").loc[case]
    if term == "batch":
        f = _pastes(reml=False)
    else:
        d = pd.read_csv(DATA / "decovac_small_unbal.csv")
        mo, op = _codes(d["model"]), _codes(d["optimizer"])
        Mm = np.column_stack([mo == 1, mo == 2]).astype(float)
        Mo = (op == 1).astype(float)[:, None]
        X = np.column_stack([np.ones(len(d)), Mm, Mo, Mm * Mo])
        f = fit_mixed(
            d["y"].to_numpy(float),
            X,
            [_codes(d["seed"]), _codes(d["config"])],
            group_names=["seed", "config"],
            reml=False,
        )
    B = 500
    res = bootstrap_lrt(f, term, n_resamples=B, rng=11)
    assert res.statistic == pytest.approx(ref.LRT, rel=1e-4)
    assert res.pvalue_chibar == pytest.approx(ref.p_chisq / 2, rel=1e-4)
    # the two Monte Carlo estimates of one p-value differ by sampling error only
    se = np.sqrt(ref.p_all * (1 - ref.p_all) * (1 / B + 1 / ref.nsim))
    assert abs(res.pvalue - ref.p_all) < 4 * se
    assert res.null_statistics.shape == (B,) and np.all(res.null_statistics >= 0)


def test_bootstrap_is_reproducible_and_ignores_global_seed():
    f = _pastes()
    np.random.seed(0)
    a = bootstrap_intervals(f, n_resamples=60, rng=5)
    np.random.seed(1)
    b = bootstrap_intervals(f, n_resamples=60, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.sd_high, b.sd_high)
    c = bootstrap_intervals(f, n_resamples=60, rng=6)
    assert not np.array_equal(a.sd_high, c.sd_high)
    assert a.method == "bootstrap" and a.n_resamples == 60
    assert np.all(a.sd_low <= a.sd_high) and np.all(a.share_low <= a.share_high)
    np.testing.assert_allclose(a.sd_low**2, a.variance_low)


def test_bad_arguments():
    f = _pastes()
    with pytest.raises(ArgumentError, match="n_resamples"):
        bootstrap_intervals(f, n_resamples=5)
    with pytest.raises(ArgumentError, match="term"):
        bootstrap_lrt(f, "cask")


@pytest.mark.slow
def test_bootstrap_interval_coverage(scaled):
    # one factor, 25 levels x 4 runs: the percentile intervals of the SDs and
    # the ICC cover the truth at about the nominal rate
    rng = np.random.default_rng(2024)
    n_sim = scaled(400, minimum=100)
    g = np.repeat(np.arange(25), 4)
    X = np.ones((g.size, 1))
    hits = np.zeros((n_sim, 3), bool)
    for i in range(n_sim):
        y = 1.0 + rng.normal(0, 1.0, 25)[g] + rng.normal(0, 1.0, g.size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            f = fit_mixed(y, X, [g])
        ci = bootstrap_intervals(f, n_resamples=400, confidence=0.9, rng=rng)
        hits[i, :2] = (ci.sd_low <= 1.0) & (1.0 <= ci.sd_high)
        hits[i, 2] = ci.icc_low[0] <= 0.5 <= ci.icc_high[0]
    lo, hi = sst.binomtest(int(0.9 * n_sim), n_sim).proportion_ci(0.999)
    rate = hits.mean(axis=0)
    assert np.all((lo <= rate) & (rate <= hi)), rate


def test_block_refit_equals_dense_refit():
    """The batched deviance on independent Schur blocks equals the dense one."""
    import pandas as pd

    from vareval.stats.variance import bootstrap as boot
    from vareval.stats.variance.fit import fit_mixed

    rng = np.random.default_rng(5)
    seed = np.repeat(np.arange(8), 12)
    config = seed * 3 + rng.integers(0, 3, seed.size)  # nested in seed
    exp = np.tile([0, 1], seed.size // 2)
    y = 0.1 * exp + rng.normal(size=8)[seed] + rng.normal(size=24)[config]
    y = y + rng.normal(size=seed.size)
    X = np.column_stack([np.ones(seed.size), exp])
    se = seed * 2 + exp
    fit = fit_mixed(y, X, [seed, config, se], reml=True)
    st = fit._state
    assert st.cp.blocks is not None
    (stats,) = boot._simulate_stats(fit, 7, np.random.default_rng(1), [st.cp])
    gamma = rng.uniform(0.0, 3.0, (7, 3))
    gamma[0, 1] = 0.0
    blocks = boot._Batch(st.cp, stats, True)
    assert blocks.blocks is not None
    try:
        boot._USE_BLOCKS = False
        dense = boot._Batch(st.cp, stats, True)
    finally:
        boot._USE_BLOCKS = True
    f1, s1 = blocks.deviance(gamma)
    f2, s2 = dense.deviance(gamma)
    np.testing.assert_allclose(f1, f2, rtol=1e-11)
    np.testing.assert_allclose(s1, s2, rtol=1e-10)
    assert pd.notna(f1).all()


def test_batched_refits_converge_on_allocation_design():
    """Allocation's pilot model (4 nested/crossed intercepts): the batched refit
    reaches each single fit's optimum (deviance no higher, variances equal to
    the single fit's tolerance). With steps of 1e-4 (g + 0.01) its difference
    Hessian was rounding noise and refits stopped up to 5 % away."""
    rng = np.random.default_rng(2)
    n_seed, n_conf, n_exp, reps = 12, 4, 4, 3
    seed = np.repeat(np.arange(n_seed), n_conf * n_exp * reps)
    config = seed * n_conf + np.tile(np.repeat(np.arange(n_conf), n_exp * reps), n_seed)
    exp = np.tile(np.repeat(np.arange(n_exp), reps), n_seed * n_conf)
    se, ce = seed * n_exp + exp, config * n_exp + exp
    y = (0.01 * exp + 0.01 * rng.normal(size=n_seed)[seed]
         + 0.02 * rng.normal(size=config.max() + 1)[config]
         + 0.003 * rng.normal(size=se.max() + 1)[se]
         + 0.002 * rng.normal(size=ce.max() + 1)[ce]
         + 0.01 * rng.normal(size=seed.size))  # fmt: skip
    X = np.column_stack([np.ones(seed.size)] + [exp == e for e in range(1, n_exp)])
    codes = [seed, config, se, ce]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        f = fit_mixed(y, X, codes)
        st = _state(f)
        B = 6
        (stats,) = _simulate_stats(f, B, np.random.default_rng(4), [st.cp])
        batch = _Batch(st.cp, stats, True)
        gamma, _ = batch.fit(f.theta**2)
        rng = np.random.default_rng(4)
        n = st.X.shape[0]
        Y = (st.X @ f.coef)[:, None] + f.sigma * rng.standard_normal((n, B))
        for Zt, sd in zip(_zt(st.codes, f.n_levels, n), f.sd[:-1], strict=True):
            Y += Zt.T @ (sd * rng.standard_normal((Zt.shape[0], B)))
        single = np.array([fit_mixed(Y[:, i], st.X, codes).theta ** 2 for i in range(B)])
    dev_batch, dev_single = batch.deviance(gamma)[0], batch.deviance(single)[0]
    assert np.all(dev_batch <= dev_single + 1e-6)
    np.testing.assert_allclose(gamma, single, rtol=2e-3, atol=2e-4)
