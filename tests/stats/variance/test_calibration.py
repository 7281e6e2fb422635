"""Slow tier: recovery of known components and the level of the tests by simulation."""

import warnings

import numpy as np
import pytest
from scipy import stats as sst

from vareval.errors import VarevalWarning
from vareval.stats import equal_variance_lrt, f_test, fit_mixed, random_effect_lrt

pytestmark = pytest.mark.slow


def _design(seeds=8, configs=4, reruns=2, experiments=4):
    e, s, c = np.meshgrid(np.arange(experiments), np.arange(seeds),
                          np.arange(configs), indexing="ij")
    e = np.repeat(e.ravel(), reruns)
    s = np.repeat(s.ravel(), reruns)
    c = np.repeat(c.ravel(), reruns)
    cfg = s * configs + c  # configurations nested in seeds
    X = np.zeros((e.size, experiments))
    X[:, 0] = 1
    X[np.arange(e.size), e] = 1
    return X, e, s, cfg


def _draw(rng, X, e, s, cfg, beta, sds):
    return (X @ beta + rng.normal(0, sds[0], s.max() + 1)[s]
            + rng.normal(0, sds[1], cfg.max() + 1)[cfg]
            + rng.normal(0, sds[2], s.size))


def test_unbiased_recovery(rng, scaled):
    n_sim = scaled(600)
    X, e, s, cfg = _design()
    beta = np.array([0.8, 0.01, -0.02, 0.005])
    sds = np.array([0.02, 0.015, 0.01])
    est, coef = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for _ in range(n_sim):
            f = fit_mixed(_draw(rng, X, e, s, cfg, beta, sds), X, [s, cfg])
            est.append(f.variance)
            coef.append(f.coef)
    est, coef = np.array(est), np.array(coef)
    for values, truth in ((est, sds**2), (coef, beta)):
        mean = values.mean(axis=0)
        se = values.std(axis=0, ddof=1) / np.sqrt(n_sim)
        # REML variance estimates are unbiased unless truncated at 0 (rare here)
        assert np.all(np.abs(mean - truth) < 4 * se), (mean, truth, se)


def test_boundary_lrt_type_one_error(rng, scaled):
    n_sim = scaled(800)
    X, e, s, cfg = _design()
    beta = np.array([0.8, 0.0, 0.0, 0.0])
    sds = np.array([0.0, 0.015, 0.01])  # no seed variance
    reject = reject_naive = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for _ in range(n_sim):
            f = fit_mixed(_draw(rng, X, e, s, cfg, beta, sds), X, [s, cfg],
                          group_names=["seed", "config"])
            (t,) = random_effect_lrt(f, terms=["seed"])
            reject += t.pvalue < 0.05
            reject_naive += t.pvalue_naive < 0.05
    # at or below alpha: not above the 99.9% binomial upper bound
    assert reject <= sst.binom.ppf(0.999, n_sim, 0.05)
    assert reject_naive <= reject


def test_satterthwaite_level(rng, scaled):
    n_sim = scaled(800)
    X, e, s, cfg = _design(seeds=6, configs=3, reruns=2)
    beta = np.array([0.8, 0.0, 0.0, 0.0])  # null: experiments equal
    sds = np.array([0.02, 0.015, 0.01])
    L = np.column_stack([np.zeros(3), np.eye(3)])
    pv = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for _ in range(n_sim):
            f = fit_mixed(_draw(rng, X, e, s, cfg, beta, sds), X, [s, cfg])
            pv.append(f_test(f, L).pvalue)
    rejections = int(np.sum(np.array(pv) < 0.05))
    lo, hi = sst.binom.ppf([0.0005, 0.9995], n_sim, 0.05)
    assert lo <= rejections <= hi


def test_per_group_configuration_sds_recovered(rng, scaled):
    """A variance per model (by_group): known configuration SDs 0.05, 0.02 and
    0, seed SD 0.01 shared, residual 0.01; REML variances are unbiased away
    from 0, and the common-variance LRT rejects."""
    n_sim = scaled(200, minimum=50)
    n_models, n_seeds, n_configs, n_reruns = 3, 6, 12, 2
    sd_config = np.array([0.05, 0.02, 0.0])
    m, s, c, _ = (a.ravel() for a in np.meshgrid(
        np.arange(n_models), np.arange(n_seeds), np.arange(n_configs),
        np.arange(n_reruns), indexing="ij"))  # fmt: skip
    X = np.column_stack([np.ones(m.size), m == 1, m == 2]).astype(float)
    # one configuration factor per model: code -1 outside the model
    groups = [s] + [np.where(m == k, c, -1) for k in range(n_models)]
    names = ["seed", "config[a]", "config[b]", "config[c]"]
    est, reject = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for _ in range(n_sim):
            y = (X @ [0.8, 0.01, -0.01] + rng.normal(0, 0.01, n_seeds)[s]
                 + rng.normal(0, 1, (n_models, n_configs))[m, c] * sd_config[m]
                 + rng.normal(0, 0.01, m.size))  # fmt: skip
            f = fit_mixed(y, X, groups, group_names=names)
            est.append(f.variance)
            t = equal_variance_lrt(f, names[1:])
            reject += t.pvalue < 0.05
    est = np.array(est)
    mean = est.mean(axis=0)
    se = est.std(axis=0, ddof=1) / np.sqrt(n_sim)
    truth = np.array([0.01**2, *sd_config**2, 0.01**2])
    for j in (0, 1, 2, 4):  # away from the boundary
        assert abs(mean[j] - truth[j]) < 4 * se[j] + 0.02 * truth[j], (j, mean, truth)
    # at the boundary (true SD 0) the estimate is small: RMS SD below 0.003
    assert np.sqrt(mean[3]) < 0.003
    assert reject / n_sim > 0.95
