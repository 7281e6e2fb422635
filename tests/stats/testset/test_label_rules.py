"""One label rule for the metrics and the tests: scikit-learn's, checked against it."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats import classification_metrics, mcnemar_exact, paired_bootstrap
from vareval.stats.repeated.paired import paired_difference
from vareval.stats.testset.significance import paired_t, paired_wilcoxon

metrics = pytest.importorskip("sklearn.metrics")

CLASSES = ["a", "b", "c", "d"]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 25),
    zero_division=st.sampled_from([0.0, 1.0]),
)
def test_labels_subsets_and_supersets_match_sklearn(data, n, zero_division):
    y_true = data.draw(st.lists(st.sampled_from(CLASSES[:3]), min_size=n, max_size=n))
    y_pred = data.draw(st.lists(st.sampled_from(CLASSES[:3]), min_size=n, max_size=n))
    labels = data.draw(
        st.one_of(
            st.none(),
            st.lists(st.sampled_from(CLASSES), min_size=1, max_size=4, unique=True),
        )
    )
    ours = classification_metrics(y_true, y_pred, labels=labels, zero_division=zero_division)
    kw = {"labels": labels, "zero_division": zero_division}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, s = metrics.precision_recall_fscore_support(y_true, y_pred, **kw)
        np.testing.assert_allclose(ours.precision, p)
        np.testing.assert_allclose(ours.recall, r)
        np.testing.assert_allclose(ours.fbeta, f)
        np.testing.assert_array_equal(ours.support, s)
        for avg in ("macro", "micro", "weighted"):
            want = metrics.precision_recall_fscore_support(y_true, y_pred, average=avg, **kw)
            got = ours.averages[avg]
            np.testing.assert_allclose(
                [got["precision"], got["recall"], got["fbeta"]], want[:3], err_msg=avg
            )
    assert ours.accuracy == pytest.approx(metrics.accuracy_score(y_true, y_pred))
    if labels is None or set(labels) & set(y_true):  # else scikit-learn raises
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "a single label was found"
            cm = metrics.confusion_matrix(y_true, y_pred, labels=labels)
        np.testing.assert_array_equal(ours.confusion.matrix, cm)


def test_issue_example_subset():
    # one item of class 0 predicted 0, one of class 1 predicted 0; report class 0 only
    m = classification_metrics([0, 1], [0, 0], labels=[0])
    assert m.support.tolist() == [1]
    assert m.precision.tolist() == [0.5]  # the class-1 item still is a false positive
    assert m.averages["macro"]["fbeta"] == pytest.approx(
        metrics.f1_score([0, 1], [0, 0], labels=[0], average="macro")
    )
    sup = classification_metrics([0, 1], [0, 1], labels=[0, 1, 2])
    assert sup.support.tolist() == [1, 1, 0]


def test_mixed_text_and_number_labels_are_refused_everywhere():
    with pytest.raises(ArgumentError, match="mix"):
        classification_metrics([1, 2, 1], ["1", "2", "1"])
    with pytest.raises(ArgumentError, match="mix"):
        classification_metrics([1, "2", 1], [1, 2, 1])
    with pytest.raises(ArgumentError, match="mix"):
        paired_bootstrap([1, 2, 1, 2], ["1", "2", "1", "2"], [1, 2, 2, 2], rng=0)
    with pytest.raises(ArgumentError, match="mix"):
        mcnemar_exact(["1", "2"], [1, 2], [1, 1])
    with pytest.raises(ValueError, match="Mix of label input types"):
        metrics.accuracy_score([1, "2", 1], [1, 2, 1])  # what scikit-learn does


@pytest.mark.parametrize("bad", [[0.0, np.nan, 1.0], ["a", None, "b"]])
def test_missing_labels_are_refused_by_every_test(bad):
    good = [0.0, 1.0, 1.0] if isinstance(bad[0], float) else ["a", "b", "b"]
    with pytest.raises(ArgumentError, match="missing"):
        mcnemar_exact(bad, good, good)
    with pytest.raises(ArgumentError, match="missing"):
        mcnemar_exact(good, good, np.array(bad, dtype=object))
    with pytest.raises(ArgumentError, match="missing"):
        paired_bootstrap(good, bad, good, rng=0)
    with pytest.raises(ArgumentError, match="missing"):
        classification_metrics(good, bad)


def test_paired_t_refuses_constant_nonzero_differences():
    from scipy import stats

    a, b = [0.5, 0.6, 0.7], [0.49, 0.58, 0.69]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert stats.ttest_rel(a, np.subtract(a, 0.01)).pvalue == 0  # scipy's answer
    with pytest.raises(ArgumentError, match="SD is 0"):
        paired_t(a, np.subtract(a, 0.01))
    with pytest.raises(ArgumentError, match="SD is 0"):
        paired_t(a, a)
    with pytest.raises(ArgumentError, match="SD is 0"):
        paired_t(a, [0.49, 0.59, 0.69])  # equal up to rounding: 0.5 - 0.49 != 0.6 - 0.59
    w = paired_wilcoxon(a, np.subtract(a, 0.01))  # the exact alternative still answers
    assert w.pvalue == pytest.approx(stats.wilcoxon(np.full(3, 0.01)).pvalue)
    assert paired_t(a, b).pvalue == pytest.approx(stats.ttest_rel(a, b).pvalue)


def test_paired_difference_gives_no_p_for_constant_differences():
    with pytest.warns(VarevalWarning, match="SD 0"):
        r = paired_difference([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], rng=0)
    assert np.isnan(r.pvalue) and np.isnan(r.statistic)
    assert r.estimate == pytest.approx(0.1)
