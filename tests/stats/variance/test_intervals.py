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
