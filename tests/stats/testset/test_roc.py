"""ROC AUC and DeLong's test: scikit-learn, an O(n^2) computation, pROC, calibration."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import roc_auc_score

from vareval import datasets
from vareval.errors import ArgumentError
from vareval.stats.testset import resampling as rs
from vareval.stats.testset.roc import (
    delong_covariance,
    delong_difference,
    delong_test,
    roc_auc,
)
from vareval.stats.testset.significance import paired_bootstrap, paired_randomization

DATA = Path(__file__).parents[2] / "data" / "delong"

scored = st.integers(min_value=2, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(["neg", "pos"]), min_size=n, max_size=n),
        st.lists(st.integers(0, 6), min_size=n, max_size=n),
        st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n),
    )
)


def _naive(gold, scores, positive):
    """DeLong et al. (1988) by their definition: psi over every (positive, negative) pair."""
    x = np.asarray(scores, float)[:, np.asarray(gold) == positive]
    y = np.asarray(scores, float)[:, np.asarray(gold) != positive]
    psi = (x[:, :, None] > y[:, None, :]) + 0.5 * (x[:, :, None] == y[:, None, :])
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    s10 = np.atleast_2d(np.cov(v10)) if x.shape[1] > 1 else 0.0
    s01 = np.atleast_2d(np.cov(v01)) if y.shape[1] > 1 else 0.0
    return psi.mean(axis=(1, 2)), s10 / x.shape[1] + s01 / y.shape[1]


@settings(max_examples=80, deadline=None)
@given(scored)
def test_auc_equals_sklearn_and_covariance_equals_the_pairwise_definition(data):
    gold, ties, smooth = data
    if len(set(gold)) < 2:
        with pytest.raises(ArgumentError, match="exactly two classes|does not occur"):
            roc_auc(gold, ties, pos_label=gold[0])
        return
    y = np.asarray(gold) == "pos"
    for s in (ties, smooth):
        assert roc_auc(gold, s, pos_label="pos") == pytest.approx(roc_auc_score(y, s))
        assert roc_auc(gold, s, pos_label="neg") == pytest.approx(roc_auc_score(~y, s))
    if min(y.sum(), (~y).sum()) < 2:  # a class of one item: no variance (pROC: NaN)
        with pytest.raises(ArgumentError, match="DeLong's variance needs at least 2"):
            delong_covariance(gold, [ties, smooth], pos_label="pos")
        return
    auc, cov = delong_covariance(gold, [ties, smooth], pos_label="pos")
    want_auc, want_cov = _naive(gold, [ties, smooth], "pos")
    np.testing.assert_allclose(auc, want_auc, atol=1e-12)
    np.testing.assert_allclose(cov, want_cov, atol=1e-12)


def test_against_proc():
    """pROC 1.18.0 roc.test(method = "delong"); made by tests/data/delong/make_reference.R."""
    ref = pd.read_csv(DATA / "reference.csv", skipinitialspace=True)
    assert len(ref) == 5
    for row in ref.itertuples():
        where = DATA if (DATA / row.file).exists() else datasets.path(row.file).parent
        df = pd.read_csv(where / row.file, dtype={row.gold: str})
        gold = df[row.gold].to_numpy(str)
        t = delong_test(gold, df[row.a], df[row.b], pos_label=row.positive)
        assert (t.auc_a, t.auc_b) == pytest.approx((row.auc_a, row.auc_b), abs=1e-13)
        assert t.statistic == pytest.approx(row.z, abs=1e-12)
        assert t.pvalue == pytest.approx(row.p, abs=1e-13)
        assert t.confidence_interval() == pytest.approx(
            (row.ci95_low, row.ci95_high), abs=1e-13
        )
        assert t.confidence_interval(0.90) == pytest.approx(
            (row.ci90_low, row.ci90_high), abs=1e-13
        )
        greater = delong_test(
            gold, df[row.a], df[row.b], pos_label=row.positive, alternative="greater"
        )
        assert greater.pvalue == pytest.approx(row.p_greater, abs=1e-13)
        _, cov = delong_covariance(gold, [df[row.a], df[row.b]], pos_label=row.positive)
        assert cov == pytest.approx(
            np.array([[row.var_a, row.cov_ab], [row.cov_ab, row.var_b]]), abs=1e-15
        )
        assert t.correlation == pytest.approx(
            row.cov_ab / math.sqrt(row.var_a * row.var_b)
        )


def test_identical_systems_and_zero_variance():
    gold = ["a", "b"] * 10
    s = np.arange(20.0)
    t = delong_test(gold, s, s, pos_label="b")
    assert (t.estimate, t.se, t.statistic, t.pvalue) == (0.0, 0.0, 0.0, 1.0)
    # a perfect ranking against all-tied scores: every component equal
    with pytest.raises(ArgumentError, match="variance of the AUC difference"):
        delong_test(["a"] * 5 + ["b"] * 5, np.arange(10.0), np.zeros(10), pos_label="b")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y_true": ["a", "b", "c"], "y_score": [1, 2, 3], "pos_label": "a"},
         "exactly two classes"),
        ({"y_true": ["a", "b"], "y_score": [1, 2], "pos_label": "z"},
         "does not occur in the gold labels"),
        ({"y_true": ["a", "b"], "y_score": [1, np.nan], "pos_label": "a"}, "NaN"),
        ({"y_true": ["a", "b"], "y_score": [1, 2, 3], "pos_label": "a"},
         "one score per item"),
        ({"y_true": ["0", "1"], "y_score": [1, 2], "pos_label": 1}, "labels mix kinds"),
        ({"y_true": ["0", "1"], "y_score": [1, 2], "pos_label": None},
         "needs the positive class"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        roc_auc(**kwargs)


def test_auc_in_the_resampling_tests_is_a_vectorized_callable():
    df = pd.read_csv(DATA / "random.csv")
    gold, a, b = df["gold"].to_numpy(str), df["a"].to_numpy(), df["b"].to_numpy()
    metric = rs.get_metric("auc", positive="pos")
    assert isinstance(metric, rs.CallableMetric) and rs.reads_scores(metric)
    assert metric.vectorized
    fast = paired_bootstrap(gold, a, b, metric=metric, n_resamples=300, rng=0)
    t = delong_test(gold, a, b, pos_label="pos")
    assert fast.path == "vectorized" and fast.statistic == pytest.approx(t.estimate)
    # the same function called once per resample draws the same indices
    loop = rs.CallableMetric(metric.fn, name="auc", scores=True)
    slow = paired_bootstrap(gold, a, b, metric=loop, n_resamples=300, rng=0, progress=False)
    assert slow.path == "loop"
    np.testing.assert_allclose(fast.distribution, slow.distribution, atol=1e-14)
    assert fast.confidence_interval() == pytest.approx(slow.confidence_interval())
    # each resample's AUC is sklearn's on that resample
    idx = np.random.default_rng(1).integers(0, gold.size, (5, gold.size))
    want = [roc_auc_score(gold[i] == "pos", a[i]) for i in idx]
    np.testing.assert_allclose(metric.fn(gold[idx], a[idx]), want, atol=1e-14)
    # the bootstrap SE of the difference is close to DeLong's
    assert np.std(fast.distribution, ddof=1) == pytest.approx(t.se, rel=0.25)
    r = paired_randomization(gold, a, b, metric=metric, n_resamples=400, rng=0)
    s = paired_randomization(gold, a, b, metric=loop, n_resamples=400, rng=0, progress=False)
    assert (r.path, s.path) == ("vectorized", "loop")
    np.testing.assert_allclose(r.distribution, s.distribution, atol=1e-14)


def test_a_resample_without_negatives_is_refused():
    gold = np.array(["pos"] * 11 + ["neg"])
    with pytest.raises(ArgumentError, match="without a positive or without a negative"):
        paired_bootstrap(
            gold, np.arange(12.0), -np.arange(12.0),
            metric=rs.get_metric("auc", positive="pos"), n_resamples=2000, rng=0,
        )


def _null_data_sets(rng, sims, n, rho=0.6):
    """Correlated scores of two equally good systems, many data sets at once.

    Fixed gold (40 % positive); each system's score is a shared latent part
    plus independent noise of the same size, so AUC_A = AUC_B.
    """
    positive = np.arange(n) < int(0.4 * n)
    shared = rng.standard_normal((sims, 1, n)) + positive
    noise = rng.standard_normal((sims, 2, n))
    return positive, math.sqrt(rho) * shared + math.sqrt(1 - rho) * noise


def _rejections(rng, sims, n, alpha=0.05):
    positive, scores = _null_data_sets(rng, sims, n)
    est, var = delong_difference(positive, scores)
    z = est / np.sqrt(var)
    return int(np.count_nonzero(2 * stats.norm.sf(np.abs(z)) <= alpha))


def _check_level(rejected, sims, alpha=0.05):
    lo, hi = stats.binom.ppf([0.0005, 0.9995], sims, alpha)
    assert lo <= rejected <= hi, f"{rejected}/{sims} rejections at level {alpha}"


def test_delong_holds_its_level_under_the_null():
    sims = 2000
    _check_level(_rejections(np.random.default_rng(11), sims, 100), sims)


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 200, 1000])
def test_delong_holds_its_level_under_the_null_slow(n, rng, scaled):
    sims = scaled(20_000, minimum=2000)
    _check_level(_rejections(rng, sims, n), sims)


def test_delong_rejects_a_real_difference():
    rng = np.random.default_rng(3)
    positive, scores = _null_data_sets(rng, 500, 300)
    scores[:, 1] += 1.5 * rng.standard_normal((500, 300))  # B noisier: lower AUC
    est, var = delong_difference(positive, scores)
    power = np.mean(2 * stats.norm.sf(np.abs(est / np.sqrt(var))) <= 0.05)
    assert power > 0.5 and np.mean(est) > 0
