"""Tests of the DataFrame-level tuning-curve API."""

import numpy as np
import pandas as pd
import pytest

import vareval
from vareval.errors import ArgumentError, DataError, VarevalWarning
from vareval.stats import EmpiricalDistribution, cdf_band


@pytest.fixture
def df():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "model": ["a"] * 30 + ["b"] * 20,
            "acc": np.concatenate([rng.beta(2, 5, 30), rng.beta(5, 2, 20)]),
        }
    )


def test_tuning_curve_frame(df):
    res = vareval.tuning_curve(
        df, metric="acc", by="model", bounds=(0, 1), ks=[1, 2, 5]
    )
    frame = res.to_frame()
    assert list(frame.columns) == [
        "method", "n", "k", "median", "lower", "upper", "v_statistic", "u_statistic",
    ]  # fmt: skip
    assert len(frame) == 6
    a = df.loc[df.model == "a", "acc"].to_numpy()
    band = cdf_band(a, 0.95, a=0, b=1).tuning_curve([1, 2, 5])
    rows = frame[frame.method == "a"]
    np.testing.assert_array_equal(rows["lower"], band.lower)
    np.testing.assert_array_equal(rows["upper"], band.upper)
    dist = EmpiricalDistribution(a, a=0, b=1)
    np.testing.assert_allclose(rows["u_statistic"], dist.u_statistic([1, 2, 5]))
    verdicts = res.comparison_frame()
    assert set(verdicts["verdict"]) <= {"a better", "b better", "need more data"}
    assert verdicts["verdict"].iloc[0] == "b better"
    payload = res.to_dict()
    assert payload["curves"]["a"]["exact_coverage"] == pytest.approx(0.95, abs=1e-9)


def test_default_ks_and_minimize(df):
    res = vareval.tuning_curve(
        df, metric="acc", by="model", bounds=(0, 1), higher_is_better=False
    )
    assert res.k[0] == 1 and res.k[-1] == 30
    assert res.comparison_frame()["verdict"].iloc[0] == "a better"


def test_ties_warning_names_the_method(df):
    df = df.copy()
    df.loc[df.model == "b", "acc"] = df.loc[df.model == "b", "acc"].round(1)
    with pytest.warns(VarevalWarning, match="method 'b' has .* tied"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(0, 1))


def test_bad_inputs(df):
    with pytest.raises(ArgumentError, match="bounds"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(0,))
    with pytest.raises(ArgumentError, match="a < b"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(1, 0))
    with pytest.raises(DataError, match="18 value.* outside the bounds .* data row"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(0, 0.5))
    with pytest.raises(ArgumentError, match="confidence"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(0, 1), confidence=1)
    with pytest.raises(ArgumentError, match="k"):
        vareval.tuning_curve(df, metric="acc", by="model", bounds=(0, 1), ks=[0, 1])
    bad = df.copy()
    bad.loc[3, "acc"] = np.nan
    with pytest.raises(DataError, match="missing"):
        vareval.tuning_curve(bad, metric="acc", by="model", bounds=(0, 1))
    with pytest.raises(DataError, match="not found"):
        vareval.tuning_curve(df, metric="accuracy", by="model", bounds=(0, 1))
    with pytest.raises(DataError, match="no rows"):
        vareval.tuning_curve(df.iloc[:0], metric="acc", by="model", bounds=(0, 1))
