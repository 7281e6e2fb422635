"""The optimiser on 40 small designs near the boundary, against lme4.

``tests/data/lme4/make_small_designs.py`` made 40 designs with 3-4 seeds and
3-4 configurations per seed whose variances are mostly at or next to zero (SDs
of 0, 1e-3, 0.03, 0.3 or 1 residual SD); every third also has a seed x
experiment intercept; design 40 is the 36-row design whose ML fit was once
reported as not converged. ``small_designs.R`` fitted them with lme4 1.1-31 (REML
and ML, and each model without one term) and stored the numbers in
``small_designs_ref.csv``. A variance heading to zero is on the boundary, not
a failed fit: every fit must converge and give its tests.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.errors import VarevalWarning
from vareval.stats import fit_mixed, random_effect_lrt

DATA = Path(__file__).resolve().parents[2] / "data" / "lme4"


@pytest.fixture(scope="module")
def designs():
    d = pd.read_csv(
        DATA / "small_designs.csv",
        dtype={"experiment": str, "config": str, "seed": str},
    )
    return dict(tuple(d.groupby("design")))


@pytest.fixture(scope="module")
def ref():
    r = pd.read_csv(DATA / "small_designs_ref.csv", keep_default_na=False)
    return {(k, q, t): v for k, q, t, v in r.itertuples(index=False)}


def _arrays(d):
    terms = ["seed", "config"] + (["seed:experiment"] if d["three"].iloc[0] else [])
    cols = {
        "seed": d["seed"],
        "config": d["config"],
        "seed:experiment": d["seed"] + ":" + d["experiment"],
    }
    groups = [pd.factorize(cols[t])[0].astype(np.intp) for t in terms]
    e = pd.factorize(d["experiment"], sort=True)[0]
    X = np.column_stack([np.ones(len(d))] + [(e == i) * 1.0 for i in range(1, e.max() + 1)])
    return d["y"].to_numpy(), X, groups, terms


@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_small_designs_against_lme4(designs, ref, reml):
    tag = "reml" if reml else "ml"
    for k, d in designs.items():
        y, X, groups, terms = _arrays(d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            f = fit_mixed(y, X, groups, group_names=terms, reml=reml)
            lrt = random_effect_lrt(f)
        assert f.converged, (k, f.message)
        crit = ref[k, f"crit_{tag}", ""]
        # never worse than lme4's optimum by more than its own stopping error
        assert f.criterion - crit < 1e-6, (k, f.criterion, crit)
        sd = dict(zip(f.components, f.sd, strict=True))
        unit = ref[k, f"sd_{tag}", "Residual"]
        for comp in [*terms, "Residual"]:
            # where the deviance is flat in an SD, lme4 and vareval stop at
            # different points of equal deviance (to 1e-6): SDs to 1e-3 sigma
            assert sd[comp] == pytest.approx(
                ref[k, f"sd_{tag}", comp], abs=1e-3 * unit
            ), (k, comp)
        for t in lrt:
            assert np.isfinite(t.statistic), (k, t.term)
            # lme4's refits stop up to ~1e-5 deviance units off the optimum
            assert t.statistic == pytest.approx(
                max(ref[k, f"lrt_{tag}", t.term], 0.0), abs=1e-5
            ), (k, t.term)


def test_boundary_design_through_the_command():
    # the design: lme4 fits it by ML with the seed variance at the
    # boundary (theta 5.6e-4) and a configuration LRT of 6.090949
    import json

    from click.testing import CliRunner

    from vareval.cli import main

    res = CliRunner().invoke(
        main,
        ["variance", str(DATA / "boundary_ml.csv"), "--metric", "y", "--ml", "--json"],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["converged"] and out["withheld"] is None
    lrt = {r["term"]: r["lrt"] for r in out["lrt"]}
    assert lrt["config"] == pytest.approx(6.090949, abs=1e-5)
    assert lrt["seed"] == pytest.approx(0.0, abs=1e-6)
    assert out["criterion"] == pytest.approx(-202.937956, abs=1e-6)
    assert all(np.isfinite(r["p"]) for r in out["pairwise"])


def test_a_newton_step_too_long_is_shortened():
    # a simulated table (tests/data/_mixed_coverage.py) whose first Newton step
    # went to theta ~ 5000, where X'V^-1 X is numerically singular: that was
    # once reported as a zero residual variance. lme4 (REML) for
    # y ~ model + (1 | seed) + (1 | config) + (1 | seed:model):
    from vareval.data.variance import design_arrays

    d = pd.read_csv(DATA / "long_newton_step.csv")
    x = design_arrays(d, metric="y", fixed=["model"], random=["seed", "config"])
    assert x.group_names == ("seed", "config", "seed:model")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        f = fit_mixed(x.y, x.X, x.groups, group_names=x.group_names)
    assert f.converged
    assert f.criterion == pytest.approx(-454.360520129, abs=1e-6)
    assert f.sd == pytest.approx([0.013624924, 0.007819206, 0.018898502, 0.005817177], rel=1e-4)
