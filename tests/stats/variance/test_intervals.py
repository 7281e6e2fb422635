"""Profile-likelihood intervals against lme4's confint(method = "profile").

Reference values: tests/data/lme4/reference_intervals.R (R 4.2.2, lme4 1.1-31)
wrote profile_confint.csv (lme4's confint) and ratio_profile.csv (ICC and share
intervals by root-finding on lme4's own profiled ML deviance).
"""

import functools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats import fit_mixed
from vareval.stats.variance.intervals import profile_intervals

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"
PROFILE = pd.read_csv(DATA / "profile_confint.csv")
RATIO = pd.read_csv(DATA / "ratio_profile.csv")


def _codes(s):
    return np.unique(s.astype(str), return_inverse=True)[1]


@functools.cache
def _fit(name, reml=True):
    d = pd.read_csv(DATA / f"{name}.csv")
    if name == "Dyestuff":
        y, X, g = d["Yield"], np.ones((len(d), 1)), {"Batch": d["Batch"]}
    elif name == "Penicillin":
        y, X = d["diameter"], np.ones((len(d), 1))
        g = {"plate": d["plate"], "sample": d["sample"]}
    elif name == "Pastes":
        y, X = d["strength"], np.ones((len(d), 1))
        g = {"sample": d["sample"], "batch": d["batch"]}
    else:
        mo, op = _codes(d["model"]), _codes(d["optimizer"])
        Mm = np.column_stack([mo == 1, mo == 2]).astype(float)
        Mo = (op == 1).astype(float)[:, None]
        X = np.column_stack([np.ones(len(d)), Mm, Mo, Mm * Mo])
        y, g = d["y"], {"config": d["config"], "seed": d["seed"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return fit_mixed(
            y.to_numpy(float),
            X,
            [_codes(v) for v in g.values()],
            group_names=list(g),
            reml=reml,
        )


@functools.cache
def _profile(name, reml=True):
    return profile_intervals(_fit(name, reml))


@pytest.mark.parametrize(
    ("name", "reml"),
    [
        ("Dyestuff", True),
        ("Dyestuff", False),
        ("Penicillin", True),
        ("Pastes", True),
        ("decovac_small_unbal", True),
    ],
)
def test_profile_matches_lme4(name, reml):
    f = _fit(name, reml)
    ci = _profile(name, reml)
    ref = PROFILE[PROFILE.fit == f"{name}_{'REML' if reml else 'ML'}"]
    for comp, lo, hi in zip(ci.components, ci.sd_low, ci.sd_high, strict=True):
        key = "sigma" if comp == "Residual" else f"sd_(Intercept)|{comp}"
        row = ref[ref.parameter == key].iloc[0]
        assert f.sd[ci.components.index(comp)] == pytest.approx(row.estimate, rel=1e-3)
        if row.lower == 0:
            assert lo == 0
        else:
            assert lo == pytest.approx(row.lower, rel=1e-3)
        assert hi == pytest.approx(row.upper, rel=1e-3)
    np.testing.assert_allclose(ci.variance_low, ci.sd_low**2)
    assert np.all(ci.sd_low <= ci.sd) and np.all(ci.sd <= ci.sd_high)


def test_ratio_profiles_match_lme4_deviance():
    ci = _profile("Dyestuff", reml=False)
    row = RATIO[RATIO.quantity == "icc Batch"].iloc[0]
    assert ci.icc[0] == pytest.approx(row.estimate, rel=1e-4)
    assert ci.icc_low[0] == pytest.approx(row.lower, rel=1e-4)
    assert ci.icc_high[0] == pytest.approx(row.upper, rel=1e-4)
    ci = profile_intervals(_fit("Penicillin", reml=False))
    row = RATIO[RATIO.quantity == "share sample"].iloc[0]
    assert ci.share_low[1] == pytest.approx(row.lower, rel=1e-4)
    assert ci.share_high[1] == pytest.approx(row.upper, rel=1e-4)
    # shares of a fit and their intervals are ordered and within [0, 1]
    assert np.all((0 <= ci.share_low) & (ci.share_low <= ci.share))
    assert np.all((ci.share <= ci.share_high) & (ci.share_high <= 1))


def test_nested_icc_includes_outer_factor():
    ci = _profile("Pastes")
    # sample (cask within batch): its ICC adds the batch variance
    assert ci.icc[0] > ci.share[0]
    assert ci.icc_low[0] >= ci.share_low[0] - 1e-9
    assert np.isnan(ci.icc_low[-1])


def test_wider_at_higher_confidence():
    f = _fit("Dyestuff")
    a, b = profile_intervals(f, confidence=0.8), _profile("Dyestuff")
    assert np.all(b.sd_low <= a.sd_low) and np.all(a.sd_high <= b.sd_high)


def test_no_random_effects_refused():
    f = _fit("Dyestuff")
    with pytest.raises(ArgumentError, match="confidence"):
        profile_intervals(f, confidence=1.5)


def _crossed30(terms):
    """bench_profile.py's crossed 30 x 30 design (crossed30.csv), REML."""
    d = pd.read_csv(DATA / "crossed30.csv")
    ex = _codes(d["experiment"])
    X = np.column_stack([np.ones(len(d))] + [ex == i for i in range(1, 6)]).astype(float)
    key = {"seed:experiment": d["seed"] + ":" + d["experiment"]}
    codes = [_codes(key.get(t, d.get(t))) for t in terms]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return fit_mixed(d["y"].to_numpy(float), X, codes, group_names=list(terms))


# Rscript tests/data/lme4/reference_profile_crossed30.R (R 4.2.2, lme4 1.1-31):
# confint(lmer(y ~ experiment + (1 | seed) + (1 | config) [+ (1 | seed:experiment)]),
#         method = "profile", parm = "theta_"); the seed:experiment upper end is
# the root of lme4's own ML deviance at (theta, sigma) with the others minimised
# (confint's spline gives 0.001669743588 there, warning of a bad spline fit)
CROSSED30 = {
    ("seed", "config"): [
        (0.006890851745, 0.01179064389),
        (0.018533748800, 0.03094831878),
        (0.009250866332, 0.01017895276),
    ],
    ("seed", "config", "seed:experiment"): [
        (0.006891002245, 0.011790600650),
        (0.018533771990, 0.030948261380),
        (0.0, 0.001673110773),
        (0.009250876335, 0.010178937440),
    ],
}


@pytest.mark.parametrize("terms", list(CROSSED30))
def test_crossed30_matches_lme4(terms):
    ci = profile_intervals(_crossed30(terms))
    ref = np.array(CROSSED30[terms])
    np.testing.assert_allclose(ci.sd_low, ref[:, 0], rtol=5e-5)
    np.testing.assert_allclose(ci.sd_high, ref[:, 1], rtol=5e-5)
    if len(terms) == 2:
        # config's share: uniroot on lme4's profiled ML deviance (same script)
        assert ci.share_low[1] == pytest.approx(0.6485250687, rel=1e-6)
        assert ci.share_high[1] == pytest.approx(0.8530736088, rel=1e-6)


def _constrained_min(pr, j, c):
    """min ML deviance with component j's SD at c, by Nelder-Mead from several starts.

    An optimiser independent of the profiler's Newton steps, on the fit's own
    deviance (free: the other relative SDs on a log scale and log sigma).
    """
    import scipy.optimize as sopt

    k, th0, lsig0 = pr.k, np.sqrt(pr.s), pr.tau / 2

    def dev(x):
        if j == k:
            th, sig = np.exp(x), c
        else:
            sig = np.exp(x[-1])
            th = np.insert(np.exp(x[:-1]), j, c / sig)
        ev = pr.cp.evaluate(th, reml=False)
        return ev["logdetA"] + pr.n * (np.log(2 * np.pi * sig**2)) + ev["r2"] / sig**2

    x0 = np.log(th0) if j == k else np.append(np.log(np.delete(th0, j)), lsig0)
    best = np.inf
    for shift in (0.0, 0.3, -0.3):
        r = sopt.minimize(dev, x0 + shift, method="Nelder-Mead",
                          options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})  # fmt: skip
        best = min(best, r.fun)
    return best - pr.dmin


@pytest.mark.parametrize("rng", [0, 1, 2])
def test_each_end_is_where_the_profile_crosses_the_cut(rng):
    """On random crossed designs every SD end is the chi-square cut-off of the profile."""
    from vareval.stats.variance.intervals import _Profiler

    g = np.random.default_rng(rng)
    ns, nc = g.integers(6, 15, 2)
    s, c = np.repeat(np.arange(ns), nc), np.tile(np.arange(nc), ns)
    keep = g.random(s.size) < 0.8
    s, c = s[keep], c[keep]
    y = g.normal(size=ns)[s] * g.uniform(0.3, 2) + g.normal(size=nc)[c] + g.normal(size=s.size)
    X = np.column_stack([np.ones(s.size), g.normal(size=s.size)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        f = fit_mixed(y, X, [_codes(s), _codes(c)], group_names=["seed", "config"])
    ci = profile_intervals(f)
    pr = _Profiler(f)
    cut = 3.841458820694124
    for j in range(3):
        for end in (ci.sd_low[j], ci.sd_high[j]):
            if end > 0:
                assert _constrained_min(pr, j, end) == pytest.approx(cut, abs=2e-5)


@pytest.mark.parametrize("design", [10, 40])
def test_residual_share_end_is_the_profiles_cut(design):
    """The residual's share sums two variances, split freely along its profile.

    Small lme4 designs where the split's best point jumps between its ends (all
    of the total on seed, or on config); the profile at each end, by a grid over
    the split refined by a bounded scalar search, is the chi-square cut-off.
    """
    import scipy.optimize as sopt

    import vareval
    from vareval.stats.variance.intervals import _Profiler

    d = pd.read_csv(DATA / "small_designs.csv")
    d = d[d.design == design].astype({"seed": str})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        fit = vareval.variance(d, metric="y", seed_by_experiment=False).fit
    ci = profile_intervals(fit)
    pr = _Profiler(fit)

    def dev(s):
        return pr.cp.evaluate(np.sqrt(s), reml=False)["dev"]

    def profile(rho):
        t = (1.0 - rho) / rho  # s_seed + s_config
        grid = np.linspace(0.0, t, 41)
        i = int(np.argmin([dev(np.array([a, t - a])) for a in grid]))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, 40)]
        r = sopt.minimize_scalar(lambda a: dev(np.array([a, t - a])), bounds=(lo, hi),
                                 method="bounded", options={"xatol": 1e-10})  # fmt: skip
        return min(r.fun, dev(np.array([grid[i], t - grid[i]]))) - pr.dmin

    assert ci.components[-1] == "Residual"
    for end in (ci.share_low[-1], ci.share_high[-1]):
        if 0 < end < 1:
            assert profile(end) == pytest.approx(3.841458820694124, abs=1e-4)
