"""Variance per group (lme4's diagonal ``(0 + model || g)``) against lme4.

``tests/data/lme4/by_group_store.csv`` (made by ``make_by_group.py``: three
models with configuration SDs 0.05, 0.02, 0.002) was fitted by
``tests/data/lme4/by_group.R`` (R 4.2.2, lme4 1.1-31, lmerTest 3.1-3) with a
variance per model for seed and for configuration.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.data.variance import variance
from vareval.errors import ArgumentError, DataError, VarevalWarning
from vareval.stats import equal_variance_lrt, fit_mixed

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"


@pytest.fixture(scope="module")
def store():
    return pd.read_csv(DATA / "by_group_store.csv")


@pytest.fixture(scope="module")
def by_group(store):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return variance(
            store, metric="y", fixed=["model"], random=["seed", "config"],
            by_group="model",
        )  # fmt: skip


def test_by_group_against_lme4(by_group):
    r = pd.read_csv(DATA / "by_group_ref.csv", keep_default_na=False)
    ref = {(q, t): v for q, t, v in r.itertuples(index=False)}
    f = by_group.fit
    assert f.criterion == pytest.approx(ref["crit", ""], rel=1e-8)
    for comp, sd in zip(f.components, f.sd, strict=True):
        assert sd == pytest.approx(ref["sd", comp], abs=1e-5), comp
    g = {t.term: t.statistic for t in by_group.group_lrt}
    assert g["seed: one variance"] == pytest.approx(ref["group_lrt", "seed"], abs=1e-5)
    assert g["config: one variance"] == pytest.approx(
        ref["group_lrt", "config"], abs=1e-5
    )
    assert all(t.df == 2 for t in by_group.group_lrt)
    lrt = {t.term: t.statistic for t in by_group.lrt}
    for m in ("forest", "mlp", "svc"):
        assert lrt[f"config[{m}]"] == pytest.approx(ref["lrt", f"config[{m}]"], abs=1e-5)
    for method, tag in (("satterthwaite", "sat"), ("kenward-roger", "kr")):
        (t,) = by_group.f_tests[method]
        assert t.statistic == pytest.approx(ref[f"{tag}_F", "model"], rel=1e-4)
        assert t.ddf == pytest.approx(ref[f"{tag}_ddf", "model"], rel=1e-4)


def test_one_group_equals_the_common_model(store):
    """Merging the per-group factors back gives the common-variance fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        common = variance(
            store, metric="y", fixed=["model"], random=["seed", "config"],
            by_group="seed=model",
        )  # fmt: skip
        split = variance(
            store, metric="y", fixed=["model"], random=["seed", "config"],
            by_group="model",
        )  # fmt: skip
    assert common.fit.group_names == ("seed[forest]", "seed[mlp]", "seed[svc]", "config")
    t = equal_variance_lrt(split.fit, ["config[forest]", "config[mlp]", "config[svc]"])
    assert t.loglik_reduced == pytest.approx(common.fit.loglik, abs=1e-6)


def test_shares_are_per_observation_of_the_group(by_group):
    f = by_group.fit
    v = dict(zip(f.components, f.variance, strict=True))
    total_svc = v["seed[svc]"] + v["config[svc]"] + v["Residual"]
    share = dict(zip(f.components, f.share, strict=True))
    assert share["config[svc]"] == pytest.approx(v["config[svc]"] / total_svc)


def test_codes_outside_a_factor_equal_zero_columns(rng):
    """Code -1 (outside the factor) is the same model as a zero row of Z."""
    n = 120
    g = rng.integers(0, 6, n)
    half = rng.random(n) < 0.5
    y = rng.normal(size=n) + np.where(half, rng.normal(0, 2, 6)[g], 0)
    X = np.column_stack([np.ones(n), half])
    s = rng.integers(0, 5, n)
    inside = np.where(half, g, -1)
    f1 = fit_mixed(y, X, [inside, s])
    # the same model by brute force: the deviance at f1's theta equals a direct
    # n x n Gaussian likelihood with V = s1 Z1 Z1' + s2 Z2 Z2' + s I (REML)
    Z1 = np.zeros((n, 6))
    Z1[np.flatnonzero(half), g[half]] = 1
    Z2 = np.eye(5)[s]
    V = (f1.variance[0] * Z1 @ Z1.T + f1.variance[1] * Z2 @ Z2.T
         + f1.variance[2] * np.eye(n))  # fmt: skip
    Vi = np.linalg.inv(V)
    XVX = X.T @ Vi @ X
    beta = np.linalg.solve(XVX, X.T @ Vi @ y)
    r = y - X @ beta
    crit = (np.linalg.slogdet(V)[1] + np.linalg.slogdet(XVX)[1] + r @ Vi @ r
            + (n - 2) * np.log(2 * np.pi))  # fmt: skip
    assert f1.criterion == pytest.approx(crit, rel=1e-9)
    np.testing.assert_allclose(f1.coef, beta, rtol=1e-7)


@pytest.mark.parametrize(
    ("by", "err", "match"),
    [
        ("seed", ArgumentError, "not a random factor"),
        ("lr=model", ArgumentError, "must name a random factor"),
        ("nope", Exception, "nope"),
    ],
)
def test_by_group_bad_input(store, by, err, match):
    with pytest.raises(err, match=match):
        variance(store, metric="y", fixed=["model"], random=["seed", "config"],
                 by_group=by)  # fmt: skip


def test_by_group_needs_two_levels_per_group(store):
    one = store[~((store["model"] == "svc") & (store["config"] != "svc_c0"))]
    with pytest.raises(DataError, match="'config' has 1 level.*'svc'"):
        variance(one, metric="y", fixed=["model"], random=["seed", "config"],
                 by_group="config=model")  # fmt: skip


# --------------------------------------------------------------------------
# random slopes: sleepstudy against lme4/lmerTest/pbkrtest
# (tests/data/lme4/sleepstudy.R; published: Bates et al. 2015, section 2)


@pytest.fixture(scope="module")
def sleep_ref():
    r = pd.read_csv(DATA / "sleepstudy_ref.csv", keep_default_na=False)
    return {(f, q, t): v for f, q, t, v in r.itertuples(index=False)}


def _sleep(correlated, reml):
    d = pd.read_csv(DATA / "sleepstudy.csv")
    return variance(d, metric="Reaction", fixed=[], random=["Subject"], slope="Days",
                    correlated=correlated, reml=reml)  # fmt: skip


@pytest.mark.parametrize("correlated", [True, False], ids=["corr", "uncorr"])
@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_sleepstudy_against_lme4(sleep_ref, correlated, reml):
    tag = ("corr" if correlated else "uncorr") + ("_reml" if reml else "_ml")
    a = _sleep(correlated, reml)
    f = a.fit
    crit = sleep_ref[tag, "crit", ""]
    # vareval's optimum is 1.5e-9 (ML correlated: 2.6e-8) deviance units below
    # lme4's (bobyqa stops ~1e-5 from it in theta), so the SDs agree to 5
    # significant figures
    assert -1e-7 < f.criterion - crit < 1e-9
    v = [sleep_ref[tag, "variance", t] for t in ("(Intercept)", "Days", "Residual")]
    np.testing.assert_allclose(f.sd, np.sqrt(v), rtol=5e-5)
    np.testing.assert_allclose(
        f.coef, [sleep_ref[tag, "coef", t] for t in ("(Intercept)", "Days")], rtol=1e-9
    )
    np.testing.assert_allclose(
        f.se, [sleep_ref[tag, "se", t] for t in ("(Intercept)", "Days")], rtol=5e-5
    )
    if correlated:
        assert f.correlations[0][2] == pytest.approx(sleep_ref[tag, "corr", ""], rel=5e-5)
    # at lme4's own theta, vareval's criterion equals lme4's to 1e-10
    theta = [sleep_ref[tag, "theta", str(i)] for i in range(1, len(f.theta) + 1)]
    dev = f._state.cp.evaluate(theta, reml)["dev"]
    assert dev == pytest.approx(crit, rel=1e-12)
    if reml:
        # lmerTest's ranova: the slope, and with independent effects the intercept too
        *intercept, lrt = a.lrt
        terms = ["Days|Subject"] if correlated else ["Subject", "Days|Subject"]
        assert [t.term for t in a.lrt] == terms
        assert lrt.df == (2 if correlated else 1)
        assert lrt.statistic == pytest.approx(sleep_ref[tag, "lrt", "Days"], abs=1e-6)
        if not correlated:
            (icpt,) = intercept
            assert icpt.df == 1
            assert icpt.statistic == pytest.approx(sleep_ref[tag, "lrt", "(Intercept)"], abs=1e-6)
            p_ref = sleep_ref[tag, "lrt_p", "(Intercept)"]
            assert icpt.pvalue_naive == pytest.approx(p_ref, rel=1e-6)
            assert icpt.pvalue == pytest.approx(icpt.pvalue_naive / 2)


@pytest.mark.parametrize("correlated", [True, False], ids=["corr", "uncorr"])
def test_sleepstudy_satterthwaite_and_kenward_roger(sleep_ref, correlated):
    from vareval.stats import contrast

    tag = "corr_reml" if correlated else "uncorr_reml"
    a = _sleep(correlated, True)
    names = ("(Intercept)", "Days")
    sat = contrast(a.fit, np.eye(2))
    np.testing.assert_allclose(sat.df, [sleep_ref[tag, "sat_df", t] for t in names], rtol=2e-5)
    kr = contrast(a.fit, np.eye(2), method="kenward-roger")
    np.testing.assert_allclose(kr.df, [sleep_ref[tag, "kr_df", t] for t in names], rtol=1e-5)
    np.testing.assert_allclose(kr.se, [sleep_ref[tag, "kr_se", t] for t in names], rtol=5e-5)
    (f_sat,) = a.f_tests["satterthwaite"]
    assert f_sat.statistic == pytest.approx(sleep_ref[tag, "sat_F", "Days"], rel=5e-5)
    assert f_sat.ddf == pytest.approx(sleep_ref[tag, "sat_ddf", "Days"], rel=2e-5)


def test_slope_df_invariant_to_units_of_y():
    d = pd.read_csv(DATA / "sleepstudy.csv")
    base = _sleep(True, True)
    for e in (-8, -3, 4, 8):
        a = variance(d.assign(Reaction=d["Reaction"] * 10.0**e), metric="Reaction",
                     fixed=[], random=["Subject"], slope="Days")  # fmt: skip
        for m in ("satterthwaite", "kenward-roger"):
            assert a.f_tests[m][0].ddf == pytest.approx(base.f_tests[m][0].ddf, rel=1e-5)


def test_slope_needs_one_random_factor():
    d = pd.read_csv(DATA / "sleepstudy.csv").assign(batch=lambda x: x["Days"] % 2)
    with pytest.raises(ArgumentError, match="exactly one random factor"):
        variance(d, metric="Reaction", fixed=[], random=["Subject", "batch"], slope="Days")


def test_slope_with_a_fixed_factor_type_iii(sleep_ref):
    """A between-subject factor beside the slope: lmerTest's type III tests."""
    d = pd.read_csv(DATA / "sleepstudy.csv")
    subjects = sorted(d["Subject"].astype(str).unique())
    d["group"] = ["a" if subjects.index(str(s)) < 9 else "b" for s in d["Subject"]]
    a = variance(d, metric="Reaction", fixed=["group"], random=["Subject"], slope="Days")
    for method, tag in (("satterthwaite", "sat"), ("kenward-roger", "kr")):
        tests = {t.term: t for t in a.f_tests[method]}
        assert set(tests) == {"group", "Days"}
        for term, t in tests.items():
            assert t.statistic == pytest.approx(
                sleep_ref["group_reml", f"{tag}_F", term], rel=5e-5
            )
            assert t.ddf == pytest.approx(sleep_ref["group_reml", f"{tag}_ddf", term], rel=2e-5)
