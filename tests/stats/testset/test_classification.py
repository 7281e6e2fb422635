import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from vareval.errors import ArgumentError
from vareval.stats.testset.classification import (
    accuracy,
    classification_metrics,
    confusion_matrix,
    prf_from_counts,
)

labels_st = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
    )
)


def _close(a, b):
    np.testing.assert_allclose(
        np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=150, deadline=None)
@given(
    labels_st, st.sampled_from([0.0, 1.0, math.nan]), st.sampled_from([0.5, 1.0, 2.0])
)
def test_matches_sklearn_every_average(pair, zero_division, beta):
    y_true, y_pred = pair
    m = classification_metrics(y_true, y_pred, beta=beta, zero_division=zero_division)
    _close(m.confusion.matrix, skm.confusion_matrix(y_true, y_pred))
    p, r, f, s = skm.precision_recall_fscore_support(
        y_true, y_pred, beta=beta, average=None, zero_division=zero_division
    )
    _close(m.precision, p)
    _close(m.recall, r)
    _close(m.fbeta, f)
    _close(m.support, s)
    for avg in ("macro", "micro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(
            y_true, y_pred, beta=beta, average=avg, zero_division=zero_division
        )
        _close(
            [m.averages[avg][k] for k in ("precision", "recall", "fbeta")], [p, r, f]
        )
        _close(
            m.averages[avg]["fbeta"],
            skm.fbeta_score(
                y_true, y_pred, beta=beta, average=avg, zero_division=zero_division
            ),
        )
    assert m.accuracy == pytest.approx(skm.accuracy_score(y_true, y_pred))


@settings(max_examples=100, deadline=None)
@given(labels_st, st.sampled_from([0.0, 1.0]))
def test_absent_classes_given_as_labels_match_sklearn(pair, zero_division):
    # Classes 6 and 7 never occur: 0/0 everywhere for them.
    y_true, y_pred = pair
    labels = [7, 0, 1, 2, 3, 4, 5, 6]
    m = classification_metrics(
        y_true, y_pred, labels=labels, zero_division=zero_division
    )
    _close(m.confusion.matrix, skm.confusion_matrix(y_true, y_pred, labels=labels))
    for avg in (None, "macro", "micro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=avg, zero_division=zero_division
        )
        if avg is None:
            _close(np.c_[m.precision, m.recall, m.fbeta], np.c_[p, r, f])
        else:
            _close(
                [m.averages[avg][k] for k in ("precision", "recall", "fbeta")],
                [p, r, f],
            )


def test_string_labels_and_binary():
    y_true = ["spam", "ham", "spam", "spam", "ham"]
    y_pred = ["spam", "spam", "ham", "spam", "ham"]
    cm = confusion_matrix(y_true, y_pred)
    assert list(cm.labels) == ["ham", "spam"]
    _close(cm.matrix, skm.confusion_matrix(y_true, y_pred))
    assert cm.n == 5
    assert accuracy(y_true, y_pred) == pytest.approx(0.6)


def test_reference_text_spam_example():
    # 40 flagged, 30 truly spam, 20 spam missed: P = 0.75, R = 0.60, F1 = 0.667.
    p, r, f = prf_from_counts(30, 10, 20)
    assert (p, r) == (0.75, 0.6)
    assert f == pytest.approx(2 / 3)
    assert prf_from_counts(10, 10 / 3, 40)[2] == pytest.approx(0.3157894736842105)


def test_records_tidy():
    m = classification_metrics([0, 1, 2, 2], [0, 2, 2, 2])
    rows = m.records()
    assert [r["class"] for r in rows] == [
        0,
        1,
        2,
        "macro avg",
        "micro avg",
        "weighted avg",
    ]
    assert len(m.confusion.records()) == 9
    assert m.to_dict()["accuracy"] == 0.75


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"y_true": [0, 1], "y_pred": [0]}, "same length"),
        ({"y_true": [], "y_pred": []}, "empty"),
        ({"y_true": [0.0, math.nan], "y_pred": [0, 1]}, "NaN"),
        ({"y_true": [0, 1], "y_pred": [0, 1], "beta": -1}, "beta"),
        ({"y_true": [0, 1], "y_pred": [0, 1], "zero_division": 0.5}, "zero_division"),
        ({"y_true": [0, 1], "y_pred": [0, 1], "labels": [0, 0]}, "duplicates"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        classification_metrics(**kwargs)
