"""MCC, balanced accuracy, sensitivity and specificity against scikit-learn.

Both as plain classifier metrics and as resampling metrics (per-item TP/FP/FN
rows plus a combine), on every subset of the items a resample can be.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from vareval.errors import ArgumentError
from vareval.stats.testset import resampling as rs
from vareval.stats.testset.classification import (
    balanced_accuracy,
    classification_metrics,
    matthews_corrcoef,
    sensitivity_specificity,
)
from vareval.stats.testset.significance import paired_bootstrap, paired_randomization


def _sk_balanced(g, p, adjusted=False):
    """scikit-learn's balanced accuracy, with its -inf/NaN for one gold class as NaN."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = skm.balanced_accuracy_score(g, p, adjusted=adjusted)
    return value if math.isfinite(value) else math.nan


def _sk_recall(g, p, pos):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return skm.recall_score(g, p, pos_label=pos, average="binary", zero_division=0)


SK = {
    "mcc": lambda g, p: skm.matthews_corrcoef(g, p),
    "balanced_accuracy": _sk_balanced,
    "adjusted_balanced_accuracy": lambda g, p: _sk_balanced(g, p, adjusted=True),
}

multi = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=n),
    )
)
binary = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(["neg", "pos"]), min_size=n, max_size=n),
        st.lists(st.sampled_from(["neg", "pos"]), min_size=n, max_size=n),
        st.lists(st.sampled_from(["neg", "pos"]), min_size=n, max_size=n),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=n),
    )
)


def _nan_equal(got, want):
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@settings(max_examples=120, deadline=None)
@given(multi, st.sampled_from(sorted(SK)))
def test_combine_of_sums_equals_sklearn_on_any_subset(data, name):
    """MCC and balanced accuracy of a resample (a multiset of items) are sklearn's.

    Includes one-class subsets (MCC 0, adjusted balanced accuracy undefined)
    and predicted classes absent from gold.
    """
    gold, a, b, subset = (np.asarray(v) for v in data)
    metric = rs.get_metric(name)
    types = rs.paired_types(metric, gold, a, b)
    counts = np.bincount(types.item_type[subset], minlength=types.n_types)
    _nan_equal(
        rs.metric_value(metric, types.stats_a, counts), SK[name](gold[subset], a[subset])
    )
    _nan_equal(
        rs.metric_value(metric, types.stats_b, counts), SK[name](gold[subset], b[subset])
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=120, deadline=None)
@given(binary, st.sampled_from(["neg", "pos"]))
def test_sensitivity_specificity_of_any_subset_equal_sklearn_recall(data, positive):
    gold, a, b, subset = (np.asarray(v) for v in data)
    assume(positive in set(gold) | set(a) | set(b))
    other = "neg" if positive == "pos" else "pos"
    for name, pos in (("sensitivity", positive), ("specificity", other)):
        metric = rs.get_metric(name, positive=positive)
        types = rs.paired_types(metric, gold, a, b)
        counts = np.bincount(types.item_type[subset], minlength=types.n_types)
        for stats, pred in ((types.stats_a, a), (types.stats_b, b)):
            want = _sk_recall(gold[subset], pred[subset], pos)
            assert rs.metric_value(metric, stats, counts) == pytest.approx(want, abs=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@settings(max_examples=80, deadline=None)
@given(
    st.integers(min_value=1, max_value=60).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.integers(0, 5), min_size=n, max_size=n),
        )
    ),
    st.booleans(),
)
def test_plain_functions_equal_sklearn(pair, adjusted):
    y_true, y_pred = pair
    assert matthews_corrcoef(y_true, y_pred) == pytest.approx(
        skm.matthews_corrcoef(y_true, y_pred), abs=1e-12
    )
    _nan_equal(
        balanced_accuracy(y_true, y_pred, adjusted=adjusted),
        _sk_balanced(y_true, y_pred, adjusted),
    )
    m = classification_metrics(y_true, y_pred)
    assert m.mcc == pytest.approx(skm.matthews_corrcoef(y_true, y_pred), abs=1e-12)
    _nan_equal(m.balanced_accuracy, _sk_balanced(y_true, y_pred))


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=120, deadline=None)
@given(
    st.integers(min_value=1, max_value=40).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(["no", "yes"]), min_size=n, max_size=n),
            st.lists(st.sampled_from(["no", "yes"]), min_size=n, max_size=n),
        )
    ),
    st.sampled_from([0.0, 1.0]),
)
def test_sensitivity_specificity_equal_sklearn(pair, zero_division):
    y_true, y_pred = pair
    present = set(y_true) | set(y_pred)
    for positive in present:
        other = ({"no", "yes"} - {positive}).pop()
        sens, spec = sensitivity_specificity(
            y_true, y_pred, pos_label=positive, zero_division=zero_division
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_sens = skm.recall_score(
                y_true, y_pred, pos_label=positive, zero_division=zero_division
            )
            want_spec = skm.recall_score(
                y_true, y_pred, labels=[other], average="macro",
                zero_division=zero_division,
            )
        assert sens == pytest.approx(want_sens, abs=1e-12)
        assert spec == pytest.approx(want_spec, abs=1e-12)
        m = classification_metrics(
            y_true, y_pred, pos_label=positive, zero_division=zero_division
        )
        assert (m.positive, m.sensitivity, m.specificity) == (positive, sens, spec)


def test_worked_binary_example():
    # TP 3, FN 1, FP 2, TN 4: sensitivity 3/4, specificity 4/6,
    # MCC (3*4 - 2*1) / sqrt(5 * 5 * 4 * 6).
    gold = ["p"] * 4 + ["n"] * 6
    pred = ["p", "p", "p", "n", "p", "p", "n", "n", "n", "n"]
    assert sensitivity_specificity(gold, pred, pos_label="p") == (0.75, 4 / 6)
    assert matthews_corrcoef(gold, pred) == pytest.approx(10 / math.sqrt(600))
    assert balanced_accuracy(gold, pred) == pytest.approx((0.75 + 4 / 6) / 2)
    assert balanced_accuracy(gold, pred, adjusted=True) == pytest.approx(
        (0.75 + 4 / 6) - 1
    )


def test_zero_denominators_follow_sklearn():
    # one class in gold and predictions: MCC 0, specificity 0/0 -> zero_division
    assert matthews_corrcoef(["a", "a"], ["a", "a"]) == 0.0
    assert sensitivity_specificity(["a", "a"], ["a", "a"], pos_label="a") == (1.0, 0.0)
    assert sensitivity_specificity(
        ["a", "a"], ["a", "a"], pos_label="a", zero_division=1.0
    ) == (1.0, 1.0)
    assert math.isnan(balanced_accuracy(["a", "a"], ["a", "b"], adjusted=True))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sensitivity_specificity(["a", "b"], ["a", "b"], pos_label="c"),
         "positive class 'c' occurs in neither"),
        (lambda: sensitivity_specificity(["a", "b"], ["a", "c"], pos_label="a"),
         "need two classes"),
        (lambda: sensitivity_specificity(["1", "0"], ["1", "0"], pos_label=1),
         "labels mix kinds"),
        (lambda: rs.get_metric("sensitivity"), "needs the positive class"),
        (lambda: paired_bootstrap(
            ["a", "b"] * 10, ["a", "b"] * 10, ["a", "c"] * 10,
            metric=rs.get_metric("specificity", positive="a"), rng=0),
         "need two classes"),
        (lambda: paired_bootstrap(
            ["a", "b"] * 10, ["a", "b"] * 10, ["a", "b"] * 10,
            metric=rs.get_metric("sensitivity", positive="x"), rng=0),
         "occurs in neither"),
    ],
)
def test_refusals(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()


def test_names_and_aliases():
    assert rs.get_metric("balanced-accuracy").name == "balanced_accuracy"
    assert rs.get_metric("MCC").name == "mcc"
    assert rs.get_metric("adjusted_balanced_accuracy").name == "adjusted_balanced_accuracy"
    assert rs.get_metric("specificity", positive="yes").positive == "yes"


@pytest.mark.parametrize("name", ["mcc", "balanced_accuracy", "sensitivity", "specificity"])
def test_paired_tests_run_vectorised_and_match_a_plain_loop(name):
    """The compressed engine's deltas have the distribution of a plain loop's.

    Same seeds are not comparable across paths, so the p-values are compared
    within Monte Carlo error and the observed scores exactly.
    """
    rng = np.random.default_rng(5)
    n = 300
    gold = rng.choice(["neg", "pos"], n, p=[0.6, 0.4])
    flip_a, flip_b = rng.random(n) < 0.2, rng.random(n) < 0.28
    other = np.where(gold == "pos", "neg", "pos")
    a, b = np.where(flip_a, other, gold), np.where(flip_b, other, gold)
    metric = rs.get_metric(name, positive="pos")
    fast = paired_bootstrap(gold, a, b, metric=metric, n_resamples=4000, rng=1)
    assert fast.path == "compressed" and fast.n_types <= 8

    def fn(g, p):
        return rs.score(metric, g, p)

    slow = paired_bootstrap(
        gold, a, b, metric=rs.CallableMetric(fn), n_resamples=1500, rng=2, progress=False
    )
    assert fast.score_a == slow.score_a and fast.score_b == slow.score_b
    se = math.sqrt(0.25 / 1500 + 0.25 / 4000)
    assert abs(fast.pvalue - slow.pvalue) < 4 * se
    r = paired_randomization(gold, a, b, metric=metric, n_resamples=2000, rng=3)
    assert 0 <= r.pvalue <= 1 and r.n_types == fast.n_types


@pytest.mark.slow
@pytest.mark.parametrize("test", [paired_bootstrap, paired_randomization])
@pytest.mark.parametrize("name", ["mcc", "balanced_accuracy", "sensitivity"])
def test_level_under_exchangeable_systems(test, name, rng, scaled):
    """Two systems right on each item with probability 0.8, independently: no real gap.

    At 200 items (80 positive) the rejection rate at alpha = 0.05 stays below
    the binomial 99.9 % point around alpha.
    """
    from scipy import stats

    sims, n, alpha = scaled(1000), 200, 0.05
    metric = rs.get_metric(name, positive="pos")
    gold = np.where(np.arange(n) < 80, "pos", "neg")
    other = np.where(gold == "pos", "neg", "pos")
    wrong = rng.random((sims, 2, n)) > 0.8
    rejected = sum(
        test(
            gold, np.where(w[0], other, gold), np.where(w[1], other, gold),
            metric=metric, n_resamples=499, rng=rng, ci="percentile",
        ).pvalue <= alpha
        for w in wrong
    )
    assert rejected <= stats.binom.ppf(0.999, sims, alpha), f"{rejected}/{sims}"
