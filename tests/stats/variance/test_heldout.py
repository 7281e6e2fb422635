"""Held-out designs: random DECoVaC-shaped fits against lme4 / lmerTest.

``tests/data/lme4/make_random_designs.py`` made 42 random designs (2-6
experiments, 2-12 seeds, 1-9 configurations per seed, 1-4 reruns, rows
dropped, a third without seed variance, responses scaled by 10^-3 .. 10^3;
the last six with a different number of seeds per experiment);
``tests/data/lme4/random_designs.R`` fitted them with R 4.2.2, lme4 1.1-31,
lmerTest 3.1-3 and pbkrtest 0.5.2 (``y ~ experiment + (1 | seed) +
(1 | config)``, REML and ML; ``ranova``-style refits; ``anova(m)``;
``difflsmeans(m)``) and stored the numbers in ``random_designs_ref.csv``.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.data.variance import design_arrays, variance
from vareval.errors import VarevalWarning
from vareval.stats import f_test, fit_mixed, pairwise, random_effect_lrt

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"
RAGGED = 36  # first design with a different number of seeds per experiment


@pytest.fixture(scope="module")
def designs():
    d = pd.read_csv(
        DATA / "random_designs.csv",
        dtype={"experiment": str, "config": str, "seed": str},
    )
    return dict(tuple(d.groupby("design")))


@pytest.fixture(scope="module")
def ref():
    r = pd.read_csv(DATA / "random_designs_ref.csv", keep_default_na=False)
    return {(k, q, t): v for k, q, t, v in r.itertuples(index=False)}


def _analyse(d, reml):
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


@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_fit_and_lrt_against_lme4(designs, ref, reml):
    tag = "reml" if reml else "ml"
    for k, d in designs.items():
        x = design_arrays(
            d, metric="y", fixed=["experiment"], random=["seed", "config"], seed_by_experiment=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            f = fit_mixed(x.y, x.X, x.groups, group_names=x.group_names, reml=reml)
            lrt = random_effect_lrt(f)
        assert f.converged
        crit = ref[k, f"crit_{tag}", ""]
        # never worse than lme4's optimum; at most 1e-7 deviance units better
        assert f.criterion - crit < 1e-6 * max(1.0, abs(crit)), k
        assert f.criterion - crit > -1e-6 * max(1.0, abs(crit)), k
        sd = dict(zip(f.components, f.sd, strict=True))
        unit = ref[k, f"sd_{tag}", "Residual"]
        for comp in ("seed", "config", "Residual"):
            # SDs to 1e-3 of the residual SD: lme4's bobyqa stops ~1e-6 in theta
            # from the optimum, where the deviance is flat
            assert sd[comp] == pytest.approx(ref[k, f"sd_{tag}", comp], abs=1e-3 * unit)
        for t in lrt:
            # the warm-started refit once stalled here, 1.6-15 LRT units too large
            assert t.statistic == pytest.approx(ref[k, f"lrt_{tag}", t.term], abs=1e-5)
        zero = f.theta == 0
        assert np.all(f.variance[:-1][zero] == 0)
        assert not np.any((f.theta > 0) & (f.theta < 1e-6))


def test_satterthwaite_against_lmertest(designs, ref):
    for k, d in designs.items():
        x = design_arrays(
            d, metric="y", fixed=["experiment"], random=["seed", "config"], seed_by_experiment=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            fit = fit_mixed(x.y, x.X, x.groups, group_names=x.group_names)
            cache = {}
            t = f_test(fit, x.hyp["experiment"], _cache=cache)
            p = pairwise(fit, x.cell_means, labels=x.cell_labels, _cache=cache)
        # lmerTest's anova() basis for one term (type I, Doolittle)
        assert t.ndf == ref[k, "sat_ndf", "experiment"]
        assert t.statistic == pytest.approx(ref[k, "sat_F", "experiment"], rel=1e-4)
        # ragged designs (36-41): lmerTest's basis matters (the sum-coded basis
        # was off by up to 2e-3 there); elsewhere lme4's optimum is ~1e-5 off
        rel = 1e-6 if k >= RAGGED else 1e-4
        assert t.ddf == pytest.approx(ref[k, "sat_ddf", "experiment"], rel=rel), k
        for lab, est, se, df in zip(p.labels, p.estimate, p.se, p.df, strict=True):
            se_r = ref[k, "pair_se", lab]
            # to 1e-3 SE: lme4's theta is ~1e-6 from the optimum
            assert est == pytest.approx(ref[k, "pair_est", lab], abs=1e-3 * se_r)
            assert se == pytest.approx(se_r, rel=1e-4)
            assert df == pytest.approx(ref[k, "pair_df", lab], rel=1e-4)


@pytest.mark.parametrize("k", [12, 39])
def test_every_df_invariant_to_units_of_y(designs, k):
    """Fit, LRTs and every df are the same for y x 10^e, e = -9 .. 9."""
    d = designs[k]
    base = _analyse(d, True)
    for e in range(-9, 10):
        a = _analyse(d.assign(y=d["y"] * 10.0**e), True)
        assert a.fit.converged
        np.testing.assert_allclose(a.fit.theta, base.fit.theta, rtol=1e-5, atol=1e-7)
        for t, t0 in zip(a.lrt, base.lrt, strict=True):
            assert t.statistic == pytest.approx(t0.statistic, rel=1e-5, abs=1e-7)
        for method, tests in a.f_tests.items():
            for t, t0 in zip(tests, base.f_tests[method], strict=True):
                assert t.ddf == pytest.approx(t0.ddf, rel=1e-5), (e, method)
                assert t.statistic == pytest.approx(t0.statistic, rel=1e-5)
        np.testing.assert_allclose(a.pairs.df, base.pairs.df, rtol=1e-5)
        np.testing.assert_allclose(a.pairs.se, base.pairs.se * 10.0**e, rtol=1e-5)


def test_missing_cell_against_lme4_and_lmertest():
    """An empty cell: lme4 drops the interaction column; lmerTest's type III
    tests then test what is estimable (tests/data/lme4/missing_cell.R)."""
    d = pd.read_csv(DATA / "decovac_small_unbal.csv")
    d = d[~((d["model"] == "mC") & (d["optimizer"] == "sgd"))]
    r = pd.read_csv(DATA / "missing_cell_ref.csv", keep_default_na=False)
    ref = {(q, t): v for q, t, v in r.itertuples(index=False)}
    with pytest.warns(VarevalWarning, match=r"model\[mC\]:optimizer\[sgd\]"):
        a = variance(
            d,
            metric="y",
            fixed=["model", "optimizer"],
            random=["seed", "config"],
            seed_by_experiment=False,
        )
    f = a.fit
    assert f.criterion == pytest.approx(ref["crit", ""], rel=1e-8)
    r_names = [t for q, t in ref if q == "coef"]
    assert [n.replace("[", "").replace("]", "") for n in f.fixed_names] == r_names
    np.testing.assert_allclose(f.coef, [ref["coef", t] for t in r_names], rtol=1e-4)
    np.testing.assert_allclose(f.sd, [ref["sd", c] for c in f.components], rtol=1e-4)
    for t in a.f_tests["satterthwaite"][:3]:
        assert t.ndf == ref["sat_ndf", t.term]
        assert t.statistic == pytest.approx(ref["sat_F", t.term], rel=1e-5)
        assert t.ddf == pytest.approx(ref["sat_ddf", t.term], rel=1e-5)
    # the five observed cells' means are all estimable and compared
    assert len(a.pairs.labels) == 10


def test_no_lrt_from_a_fit_that_did_not_converge():
    d = pd.read_csv(DATA / "Dyestuff.csv")
    codes = pd.factorize(d["Batch"], sort=True)[0]
    fit = fit_mixed(d["Yield"], np.ones((len(d), 1)), [codes], group_names=["Batch"])
    object.__setattr__(fit, "converged", False)  # as if the optimiser had failed
    with pytest.warns(VarevalWarning, match="no likelihood-ratio test for 'Batch'"):
        (t,) = random_effect_lrt(fit)
    assert np.isnan(t.statistic) and np.isnan(t.pvalue)
