from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import vareval
from vareval.data.variance import design_arrays, variance
from vareval.errors import ArgumentError, DataError, FitError, VarevalWarning

DATA = Path(__file__).resolve().parent / "lme4"


@pytest.fixture(scope="module")
def decovac():
    return pd.read_csv(DATA / "decovac_small_unbal.csv")


@pytest.fixture(scope="module")
def analysis(decovac):
    return variance(
        decovac,
        metric="y",
        fixed=["model", "optimizer"],
        random=["seed", "config"],
        seed_by_experiment=False,
    )


def test_matches_reference(analysis):
    # lmer(y ~ model * optimizer + (1 | seed) + (1 | config)); lmerTest / pbkrtest
    f = analysis.fit
    assert f.criterion == pytest.approx(-1777.7102, rel=1e-7)
    comp = analysis.components_frame().set_index("component")
    assert comp.loc["config", "variance"] == pytest.approx(0.00056172138, rel=1e-5)
    assert comp.loc["seed", "variance"] == pytest.approx(0.00027126161, rel=1e-5)
    ft = analysis.f_frame().set_index(["term", "method"])
    assert ft.loc[("model", "satterthwaite"), "F"] == pytest.approx(207.0637, rel=1e-5)
    assert ft.loc[("model", "satterthwaite"), "ddf"] == pytest.approx(281.071, rel=1e-5)
    assert ft.loc[("model:optimizer", "kenward-roger"), "ddf"] == pytest.approx(281.039, rel=1e-5)
    assert ft.loc[("optimizer", "kenward-roger"), "p"] == pytest.approx(5.2697e-06, rel=1e-4)
    lrt = analysis.lrt_frame().set_index("term")
    assert lrt.loc["seed", "lrt"] == pytest.approx(2.145, abs=5e-4)
    pairs = analysis.pairs_frame().set_index("contrast")
    row = pairs.loc["mA_adam - mB_sgd"]
    assert row["estimate"] == pytest.approx(0.0010009999, rel=1e-5)
    assert row["se"] == pytest.approx(0.0020917390, rel=1e-5)
    assert row["df"] == pytest.approx(281.08799, rel=1e-5)
    assert row["p"] == pytest.approx(0.63263, rel=1e-4)


def test_sum_contrasts_give_same_tests(decovac, analysis):
    b = variance(
        decovac,
        metric="y",
        fixed=["model", "optimizer"],
        random=["seed", "config"],
        seed_by_experiment=False,
        contrasts="sum",
    )
    pd.testing.assert_frame_equal(analysis.f_frame(), b.f_frame(), rtol=1e-5)
    pd.testing.assert_frame_equal(analysis.pairs_frame(), b.pairs_frame(), rtol=1e-5)


def test_experiment_column_and_tables(decovac):
    a = vareval.variance(
        decovac,
        metric="y",
        fixed=["experiment"],
        random=["seed", "config"],
        seed_by_experiment=False,
    )
    tables = a.frames()
    assert set(tables) == {
        "components",
        "fixed",
        "lrt",
        "f_tests",
        "pairwise",
        "blups",
        "group_lrt",
    }
    assert len(tables["pairwise"]) == 15
    assert len(tables["blups"]) == 5 + 20
    stacked = a.to_frame()
    assert (stacked["table"] == "pairwise").sum() == 15 and not stacked["table"].isna().any()
    assert set(a.to_dict()) >= {"criterion", "components", "pairwise"}


def test_nested_grouping():
    df = pd.DataFrame(
        {
            "y": np.random.default_rng(0).normal(size=24),
            "seed": np.repeat([0, 1, 2, 3], 6),
            "config": np.tile(np.repeat(["a", "b", "c"], 2), 4),
            "method": np.tile(["x", "y"], 12),
        }
    )
    d = design_arrays(
        df,
        metric="y",
        fixed=["method"],
        random=["seed", "config"],
        seed_by_experiment=False,
        nested="config:seed",
    )
    assert d.group_names == ("seed", "config:seed")
    assert len(d.level_names[1]) == 12
    crossed = design_arrays(df, metric="y", fixed=["method"], random=["config"])
    assert len(crossed.level_names[0]) == 3


def test_no_interaction_columns(decovac):
    d = design_arrays(
        decovac,
        metric="y",
        fixed=["model", "optimizer"],
        random=["seed"],
        interaction=False,
    )
    assert d.fixed_names == ("(Intercept)", "model[mB]", "model[mC]", "optimizer[sgd]")


def _small():
    return pd.DataFrame(
        {
            "y": [0.1, 0.2, 0.3, 0.25, 0.15, 0.35, 0.3, 0.2],
            "seed": [0, 0, 1, 1, 2, 2, 3, 3],
            "method": ["a", "b"] * 4,
            "const": ["k"] * 8,
        }
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"fixed": ["method"], "random": ["const"]}, DataError, "one level"),
        ({"fixed": ["const"], "random": ["seed"]}, DataError, "one level"),
        (
            {"fixed": ["seed"], "random": ["seed"]},
            ArgumentError,
            "both fixed and random",
        ),
        ({"fixed": ["method"], "random": []}, ArgumentError, "at least one grouping"),
        ({"fixed": ["method"], "random": ["sede"]}, DataError, "did you mean"),
        (
            {"fixed": ["method"], "random": ["seed"], "nested": "seed"},
            ArgumentError,
            "inner:outer",
        ),
        (
            {"fixed": ["method"], "random": ["seed"], "contrasts": "helmert"},
            ArgumentError,
            "contrasts",
        ),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        variance(_small(), metric="y", **kwargs)


def test_nan_in_factor():
    df = _small()
    df.loc[3, "seed"] = np.nan
    with pytest.raises(DataError, match="'seed' has missing values in data row"):
        variance(df, metric="y", fixed=["method"], random=["seed"])


def test_all_equal():
    df = _small().assign(y=0.5)
    with pytest.raises(FitError, match="all responses are equal"):
        variance(df, metric="y", fixed=["method"], random=["seed"])


def test_confounded_fixed_and_random():
    df = _small().assign(block=lambda d: d["seed"] // 2)
    # 'half' is a fixed factor determined by the random 'block' factor
    df["half"] = np.where(df["block"] == 0, "first", "second")
    with pytest.raises(FitError, match="confounded"):
        variance(df, metric="y", fixed=["half"], random=["block"])


def test_aliased_column_dropped_and_named():
    df = _small()
    df["copy"] = df["method"].map({"a": "p", "b": "q"})
    with pytest.warns(VarevalWarning, match=r"copy\[q\] are linear combinations"):
        a = variance(df, metric="y", fixed=["method", "copy"], random=["seed"], interaction=False)
    assert a.fit.fixed_names == ("(Intercept)", "method[b]")
    assert [t.term for t in a.f_tests["satterthwaite"]] == ["method", "all experiments"]


def test_pairs_by_factor_are_marginal_means(decovac, analysis):
    a = variance(
        decovac,
        metric="y",
        fixed=["model", "optimizer"],
        random=["seed", "config"],
        seed_by_experiment=False,
        pairs_by="model",
    )
    assert a.pairs.labels == ("mA - mB", "mA - mC", "mB - mC")
    cells = dict(
        zip(
            ["mA_adam", "mA_sgd", "mB_adam", "mB_sgd", "mC_adam", "mC_sgd"],
            [0.79919272, 0.80840360, 0.81621879, 0.79819172, 0.83510766, 0.82728473],
            strict=True,
        )
    )
    mA = (cells["mA_adam"] + cells["mA_sgd"]) / 2
    mB = (cells["mB_adam"] + cells["mB_sgd"]) / 2
    assert a.pairs.estimate[0] == pytest.approx(mA - mB, rel=1e-5)
    with pytest.raises(ArgumentError, match="pairs_by"):
        variance(decovac, metric="y", fixed=["model"], random=["seed"], pairs_by="optimizer")


def test_profile_intervals_in_the_analysis():
    df = pd.read_csv(Path(__file__).parent / "lme4" / "decovac_small_unbal.csv")
    a = variance(
        df,
        metric="y",
        fixed=["model", "optimizer"],
        random=["seed", "config"],
        seed_by_experiment=False,
        intervals="profile",
    )
    comp = a.components_frame()
    assert list(comp.columns[:8]) == [
        "component",
        "levels",
        "variance",
        "variance_low",
        "variance_high",
        "sd",
        "sd_low",
        "sd_high",
    ]
    # lme4's confint(method = "profile") (tests/data/lme4/profile_confint.csv)
    assert comp.sd_high.iloc[1] == pytest.approx(0.0357037222, rel=1e-3)
    assert "sd_low" in a.to_dict()["components"][0]
    with pytest.raises(ArgumentError, match="intervals"):
        variance(df, metric="y", fixed=["model"], random=["seed"], intervals="boot")


def test_bootstrap_intervals_and_lrt_in_the_analysis():
    df = pd.read_csv(Path(__file__).parent / "lme4" / "decovac_small_unbal.csv")
    kw = {
        "metric": "y",
        "fixed": ["model"],
        "random": ["seed", "config"],
        "seed_by_experiment": False,
    }
    a = variance(df, intervals="bootstrap", bootstrap_lrt=True, n_resamples=40, rng=3, **kw)
    b = variance(df, intervals="bootstrap", bootstrap_lrt=True, n_resamples=40, rng=3, **kw)
    assert a.intervals.method == "bootstrap" and a.intervals.n_resamples == 40
    pd.testing.assert_frame_equal(a.components_frame(), b.components_frame())
    lrt = a.lrt_frame()
    assert list(lrt["term"]) == ["seed", "config"]
    # config's variance is overwhelming: no simulated null statistic reaches it
    assert lrt["p_bootstrap"].iloc[1] == pytest.approx(1 / 41)


def _never_converge(monkeypatch):
    """Make every fit report non-convergence (as if the Newton step were unusable)."""
    import vareval.stats.variance.fit as mixed

    def no_polish(cp, reml, x, f, g, counter, steps=6):
        return x, f, g, np.inf, None

    monkeypatch.setattr(mixed, "_newton_polish", no_polish)


def test_no_f_tests_or_pairs_from_a_fit_that_did_not_converge(decovac, analysis, monkeypatch):
    from vareval.data.variance import WITHHELD

    assert analysis.fit.converged and analysis.withheld is None
    assert analysis.to_dict()["withheld"] is None
    _never_converge(monkeypatch)
    with pytest.warns(VarevalWarning) as caught:
        a = variance(
            decovac,
            metric="y",
            fixed=["model", "optimizer"],
            random=["seed", "config"],
            seed_by_experiment=False,
        )
    assert not a.fit.converged
    messages = [str(w.message) for w in caught]
    assert messages.count(WITHHELD) == 1
    assert a.withheld == WITHHELD
    assert "F tests and pairwise differences are not reported" in a.withheld
    # the same tests and pairs as from the converged fit, every value withheld
    ft, ref = a.f_frame(), analysis.f_frame()
    assert list(ft["term"]) == list(ref["term"])
    assert list(ft["method"]) == list(ref["method"])
    assert ft[["F", "ddf", "p"]].isna().all().all()
    assert list(ft["ndf"]) == list(ref["ndf"])  # from the design, not the fit
    pairs = a.pairs_frame()
    assert list(pairs["contrast"]) == list(analysis.pairs_frame()["contrast"])
    assert pairs.drop(columns="contrast").isna().all().all()
    assert a.to_dict()["withheld"] == WITHHELD


def test_no_pairs_by_level_from_a_fit_that_did_not_converge(decovac, monkeypatch):
    _never_converge(monkeypatch)
    with pytest.warns(VarevalWarning, match="F tests and pairwise differences"):
        a = variance(
            decovac,
            metric="y",
            fixed=["model", "optimizer"],
            random=["seed", "config"],
            seed_by_experiment=False,
            pairs_by="model",
        )
    assert list(a.pairs.labels) == ["mA - mB", "mA - mC", "mB - mC"]
    assert np.isnan(a.pairs.pvalue_holm).all() and np.isnan(a.pairs.estimate).all()


def test_cells_equal_numpys_unique_rows():
    # the cells of the fixed factors by one integer key per row, as np.unique(axis=0)
    from vareval.data.variance import _cells

    rng = np.random.default_rng(0)
    for sizes in ([3], [2, 5], [4, 1, 3], [7, 7]):
        codes = [rng.integers(0, s, 300) for s in sizes]
        cells, first = _cells(codes, sizes)
        ref, ref_first = np.unique(np.column_stack(codes), axis=0, return_index=True)
        np.testing.assert_array_equal(cells, ref)
        np.testing.assert_array_equal(first, ref_first)


@pytest.mark.parametrize("dtype", ["str", object])
def test_factor_levels_sort_the_same_for_text_and_objects(dtype):
    # pandas' sort of one-type columns and Python's sort of objects give one order
    from vareval.data.variance import _factor

    values = ["b", "a", "1.10", "01", "NA", "é", "É", "a", "10", "9"]
    codes, levels = _factor(pd.DataFrame({"c": pd.Series(values, dtype=dtype)}), "c", "x")
    assert levels == sorted(set(values))
    assert [levels[c] for c in codes] == values


LME4 = Path(__file__).resolve().parents[1] / "data" / "lme4"


def _identical_reruns_per_model_spaces():
    # configurations of their own per experiment and seed, reruns identical
    d = pd.read_csv(LME4 / "boundary_ml.csv")
    d["y"] = d.groupby(["experiment", "config"])["y"].transform("first")
    d["config"] = d["experiment"] + "_" + d["config"]
    return d


def test_zero_residual_variance_is_named():
    d = _identical_reruns_per_model_spaces()
    with pytest.raises(FitError, match="residual variance is zero") as e:
        variance(d, metric="y")  # read once, one row per cell: config is the residual
    assert "identical reruns" in str(e.value) and "rank-deficient" not in str(e.value)
    assert "analysed once" in str(e.value)
    # the same design with reruns that differ fits
    d["y"] = pd.read_csv(LME4 / "boundary_ml.csv")["y"]
    assert variance(d, metric="y").fit.converged


def _seed_confounded_with_config():
    d = pd.read_csv(LME4 / "boundary_ml.csv")
    d["config"] = "c" + d["seed"].astype(str)  # each seed its own configuration
    return d


def test_configuration_confounded_with_seed_is_refused():
    with pytest.raises(FitError, match="'seed' and 'config' are confounded"):
        variance(
            _seed_confounded_with_config(),
            metric="y",
            random=["seed", "config"],
            seed_by_experiment=False,
        )
