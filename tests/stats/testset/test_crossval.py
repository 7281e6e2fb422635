import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_iris
from sklearn.metrics import f1_score
from sklearn.naive_bayes import GaussianNB

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats.testset.crossval import (
    corrected_resampled_ttest,
    cross_validate,
    holdout_evaluate,
    holdout_split,
    kfold_splits,
    stratified_kfold_splits,
)


def _partition_checks(splits, n, k, repeats):
    assert len(splits) == k * repeats
    for r in range(repeats):
        tests = [s.test for s in splits if s.repeat == r]
        allt = np.concatenate(tests)
        assert np.array_equal(np.sort(allt), np.arange(n))  # each item tested once
        sizes = [t.size for t in tests]
        assert max(sizes) - min(sizes) <= 1
        for s in splits:
            assert np.intersect1d(s.train, s.test).size == 0
            assert s.train.size + s.test.size == n


def test_kfold_partition_and_repeats():
    splits = kfold_splits(23, 5, repeats=3, rng=0)
    _partition_checks(splits, 23, 5, 3)
    first = [s.test for s in splits if s.repeat == 0]
    second = [s.test for s in splits if s.repeat == 1]
    assert any(not np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    plain = kfold_splits(10, 3, shuffle=False)
    assert [s.test.tolist() for s in plain] == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]


def test_stratified_keeps_proportions(rng):
    y = np.array(["a"] * 50 + ["b"] * 30 + ["c"] * 13)
    splits = stratified_kfold_splits(y, 5, repeats=2, rng=rng)
    _partition_checks(splits, y.size, 5, 2)
    for s in splits:
        for c, total in (("a", 50), ("b", 30), ("c", 13)):
            got = np.sum(y[s.test] == c)
            assert total // 5 <= got <= -(-total // 5)


def test_splits_deterministic_and_global_seed_ignored():
    np.random.seed(0)  # noqa: NPY002
    a = stratified_kfold_splits(np.arange(40) % 3, 4, repeats=2, rng=9)
    np.random.seed(1)  # noqa: NPY002
    b = stratified_kfold_splits(np.arange(40) % 3, 4, repeats=2, rng=9)
    assert all(np.array_equal(x.test, z.test) for x, z in zip(a, b, strict=True))


def test_small_class_warns():
    with pytest.warns(VarevalWarning, match="fewer than k"):
        stratified_kfold_splits([0] * 10 + [1] * 2, 5, rng=0)


def _fit(model):
    def fit_predict(X_train, y_train, X_test):
        return model().fit(X_train, y_train).predict(X_test)

    return fit_predict


def test_cross_validate_rows_and_metrics():
    X, y = load_iris(return_X_y=True)
    gnb = _fit(GaussianNB)
    cv = cross_validate(
        gnb, X, y, metrics=["accuracy", "macro-f1"], k=5, repeats=2, rng=0
    )
    assert cv.repeat.tolist() == [0] * 5 + [1] * 5
    assert cv.fold.tolist() == list(range(5)) * 2
    assert (cv.n_test == 30).all() and (cv.n_train == 120).all()
    rows = cv.records()
    assert len(rows) == 10 and set(rows[0]) >= {
        "repeat",
        "fold",
        "accuracy",
        "macro-f1",
    }
    # Each row's metric is the metric of that fold's predictions (sklearn).
    s = stratified_kfold_splits(y, 5, repeats=2, rng=0)[3]
    pred = gnb(X[s.train], y[s.train], X[s.test])
    assert cv.scores["macro-f1"][3] == pytest.approx(
        f1_score(y[s.test], pred, average="macro")
    )
    assert 0.9 < cv.mean("accuracy") <= 1


def test_cross_validate_custom_metric_and_bad_predictions():
    X, y = load_iris(return_X_y=True)
    cv = cross_validate(
        _fit(GaussianNB),
        X,
        y,
        metrics={"err": lambda g, p: np.mean(g != p)},
        k=3,
        stratified=False,
        rng=1,
    )
    assert set(cv.scores) == {"err"}
    with pytest.raises(ArgumentError, match="one prediction per test item"):
        cross_validate(lambda a, b, c: [0], X, y, k=3)
    with pytest.raises(ArgumentError, match="rows"):
        cross_validate(_fit(GaussianNB), X[:10], y, k=3)
    with pytest.raises(ArgumentError, match="k"):
        kfold_splits(5, 6)


def test_holdout_protocol_keeps_test_set_out_of_cv():
    X, y = load_iris(return_X_y=True)
    seen = []

    def fit_predict(X_train, y_train, X_test):
        seen.append(X_train)
        return GaussianNB().fit(X_train, y_train).predict(X_test)

    res = holdout_evaluate(fit_predict, X, y, test_size=0.2, k=4, rng=3)
    assert res.test_index.size == 30 and res.train_index.size == 120
    assert np.bincount(y[res.test_index]).tolist() == [10, 10, 10]
    test_rows = {tuple(r) for r in X[res.test_index]}
    train_rows = {tuple(r) for r in X[res.train_index]}
    only_test = test_rows - train_rows  # duplicates across the split aside
    for X_train in seen:
        assert not ({tuple(r) for r in X_train} & only_test)
    assert set(res.test_scores) == {"accuracy"} and res.cv.n_train.max() == 90
    tr, te = holdout_split(np.arange(50), 0.3, stratified=False, rng=0)
    assert te.size == 15 and np.intersect1d(tr, te).size == 0
    with pytest.raises(ArgumentError, match="test_size"):
        holdout_split(y, 1.5)


def test_corrected_t_reduces_to_paired_t_and_corrects():
    rng = np.random.default_rng(5)
    a = 0.8 + rng.normal(0, 0.02, 10)
    b = a - 0.01 + rng.normal(0, 0.01, 10)
    naive = stats.ttest_rel(a, b)
    tiny = corrected_resampled_ttest(a, b, n_train=10**9, n_test=1)
    assert tiny.statistic == pytest.approx(naive.statistic, rel=1e-6)
    assert tiny.pvalue == pytest.approx(naive.pvalue, rel=1e-5)
    # 10-fold CV: n_test / n_train = 1/9; t shrinks by sqrt((1/J) / (1/J + 1/9)).
    res = corrected_resampled_ttest(a, b, n_train=900, n_test=100)
    shrink = np.sqrt((1 / 10) / (1 / 10 + 1 / 9))
    assert res.statistic == pytest.approx(naive.statistic * shrink)
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(res.statistic), 9))
    assert res.pvalue > naive.pvalue and res.se > res.naive_se
    lo, hi = res.confidence_interval()
    assert lo < res.estimate < hi
    g = corrected_resampled_ttest(a, b, n_train=900, n_test=100, alternative="greater")
    assert g.pvalue == pytest.approx(res.pvalue / 2)
    with pytest.raises(ArgumentError, match="paired by fold"):
        corrected_resampled_ttest(a, b[:5], n_train=9, n_test=1)


@pytest.mark.slow
def test_corrected_t_is_closer_to_level_than_naive(scaled):
    """Two equally good models, 5 x 10-fold CV: the naive t rejects far too often.

    Here (1,000 simulations) the naive paired t test rejected 24.7 % at 0.05,
    the corrected test 0.5 %.
    """
    rng = np.random.default_rng(20261129)
    sims = scaled(1000, minimum=250)
    naive = corrected = 0

    def lr(X_train, y_train, X_test):  # least-squares linear classifier: fast
        design = np.c_[np.ones(len(X_train)), X_train]
        w = np.linalg.lstsq(design, 2.0 * y_train - 1, rcond=None)[0]
        return (np.c_[np.ones(len(X_test)), X_test] @ w > 0).astype(int)

    for _ in range(sims):
        X = rng.normal(size=(120, 3))
        y = (X[:, 0] + rng.normal(0, 1.5, 120) > 0).astype(int)
        cv_seed = int(rng.integers(2**31))
        # A and B: the same learner on different noise features (equal skill).
        ca = cross_validate(lr, X[:, [0, 1]], y, k=10, repeats=5, rng=cv_seed).scores[
            "accuracy"
        ]
        cb = cross_validate(lr, X[:, [0, 2]], y, k=10, repeats=5, rng=cv_seed).scores[
            "accuracy"
        ]
        if np.ptp(ca - cb) == 0:
            continue
        naive += stats.ttest_rel(ca, cb).pvalue <= 0.05
        corrected += (
            corrected_resampled_ttest(ca, cb, n_train=108, n_test=12).pvalue <= 0.05
        )
    print(f"rejections at 0.05 over {sims}: naive {naive}, corrected {corrected}")
    assert corrected <= naive
    # Over 5 x 10-fold CV the naive paired t test is far above its level.
    assert naive > stats.binom.ppf(0.999, sims, 0.05)
    assert corrected <= stats.binom.ppf(0.999, sims, 0.05)


def test_corrected_ttest_refuses_constant_differences_like_paired_t():
    """Constant fold differences printed t = inf, p = 0 and a zero-width interval."""
    from vareval.stats import paired_t

    a = np.array([0.81, 0.83, 0.80, 0.84, 0.82])
    with pytest.raises(ArgumentError, match="all 5 fold differences equal \\+0.02"):
        corrected_resampled_ttest(a, a - 0.02, n_train=90, n_test=10)
    with pytest.raises(ArgumentError, match="all 5 differences equal"):
        paired_t(a, a - 0.02)
    with pytest.raises(ArgumentError, match="SD is 0"):
        corrected_resampled_ttest(a, a, n_train=90, n_test=10)
