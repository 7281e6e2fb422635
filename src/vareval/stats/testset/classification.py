"""One test set: classifier metrics from gold and predicted labels.

The confusion matrix (binary or multi-class), accuracy, and precision, recall
and F-beta per class with their macro, micro and weighted averages, as
defined in Jurafsky and Martin, *Speech and Language Processing* (3rd ed.,
ch. 4, "Evaluation: precision, recall, F-measure") and van Rijsbergen (1979)
for F-beta; the Matthews correlation coefficient (Matthews 1975; Gorodkin
2004 for more than two classes), balanced accuracy (Brodersen et al. 2010;
Kelleher et al. 2015 for the adjusted form), and sensitivity and specificity
of a named positive class.

Zero division (0/0), stated once for every function here
-------------------------------------------------------------
- *precision* of a class that is never predicted is ``0/0``;
- *recall* of a class that never occurs in the gold labels is ``0/0``;
- *F-beta* is ``(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)``, which is ``0/0``
  only when the class is neither in the gold labels nor predicted (possible
  only when ``labels`` names it explicitly).

Every ``0/0`` is replaced by ``zero_division`` (default 0.0; 1.0 and
``nan`` are accepted). With ``nan`` those classes are left out of the macro
and weighted averages. This is scikit-learn's convention
(``precision_recall_fscore_support``), so the numbers agree with it.
Sensitivity (recall of the positive class) and specificity (recall of the
other class) follow it too (``recall_score(pos_label=...)``).

The other zero denominators, also scikit-learn's conventions:

- *MCC* is 0 when gold or predictions hold a single class (its denominator
  ``sqrt(cov(y, y) cov(p, p))`` is 0), as ``matthews_corrcoef``;
- *balanced accuracy* averages the recall of the classes present in the gold
  labels only (a class only predicted has no recall), as
  ``balanced_accuracy_score``; its *adjusted* form
  ``(score - 1/K) / (1 - 1/K)`` over ``K`` gold classes is undefined for one
  gold class and NaN here (scikit-learn gives NaN or -inf there).

Labels: when ``labels`` is not given, the classes are the sorted union of the
gold and predicted labels; a predicted label that never occurs in the gold
labels is a class with support 0 (its predictions count as false positives).
``labels`` chooses the classes reported and averaged, exactly as in
scikit-learn: every item still counts (an item whose gold label is a reported
class but whose prediction is not is a false negative of that class, and the
reverse a false positive), a class in ``labels`` that never occurs has
support 0, and accuracy is over all items. Labels are all text or all
numbers; a mix, or a missing (NaN, None) label, is refused, as scikit-learn
does (text read from a table is always text: ``"1"`` and ``"1.0"`` are two
classes).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._checks import as_labels, check_memory
from vareval.stats._result import Result

AVERAGES = ("macro", "micro", "weighted")


@dataclasses.dataclass(frozen=True, repr=False)
class ConfusionMatrix(Result):
    """A confusion matrix.

    Attributes
    ----------
    matrix : ndarray of int, shape (C, C)
        ``matrix[i, j]`` counts items whose gold label is ``labels[i]`` and
        whose predicted label is ``labels[j]`` (rows gold, columns predicted,
        as scikit-learn).
    labels : ndarray, shape (C,)
        The classes, in the order of the rows and columns.
    """

    matrix: np.ndarray
    labels: np.ndarray

    @property
    def n(self) -> int:
        """The number of items counted."""
        return int(self.matrix.sum())

    def records(self) -> list[dict]:
        """One record per (gold, predicted) cell: a tidy table's rows."""
        return [
            {"gold": _py(g), "predicted": _py(p), "count": int(self.matrix[i, j])}
            for i, g in enumerate(self.labels)
            for j, p in enumerate(self.labels)
        ]


@dataclasses.dataclass(frozen=True, repr=False)
class ClassificationMetrics(Result):
    """Accuracy and precision, recall and F-beta per class and averaged.

    Attributes
    ----------
    labels : ndarray, shape (C,)
        The classes.
    precision, recall, fbeta : ndarray of float, shape (C,)
        Per-class values; ``0/0`` replaced by ``zero_division``.
    support : ndarray of int, shape (C,)
        Gold occurrences of each class.
    predicted : ndarray of int, shape (C,)
        How often each class was predicted.
    accuracy : float
        Share of items whose prediction equals the gold label.
    averages : dict
        ``{"macro" | "micro" | "weighted": {"precision", "recall", "fbeta"}}``.
        Macro: unweighted mean over classes. Micro: computed from the pooled
        TP, FP and FN of all classes. Weighted: mean weighted by support.
    beta : float
        The F-beta parameter (1 gives F1).
    zero_division : float
        The value used for ``0/0``.
    confusion : ConfusionMatrix
        The underlying confusion matrix.
    mcc : float
        The Matthews correlation coefficient over all items (binary or
        multi-class).
    balanced_accuracy : float
        Mean recall over the classes present in the gold labels.
    positive : object or None
        The positive class, when one was named (``pos_label``).
    sensitivity, specificity : float or None
        Recall of the positive class and of the other class (binary data,
        ``pos_label`` given); None otherwise.
    """

    labels: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    fbeta: np.ndarray
    support: np.ndarray
    predicted: np.ndarray
    accuracy: float
    averages: dict
    beta: float
    zero_division: float
    confusion: ConfusionMatrix
    mcc: float = math.nan
    balanced_accuracy: float = math.nan
    positive: object = None
    sensitivity: float | None = None
    specificity: float | None = None

    def records(self) -> list[dict]:
        """One record per class, then one per average: a tidy table's rows."""
        rows = [
            {
                "class": _py(c),
                "precision": float(self.precision[i]),
                "recall": float(self.recall[i]),
                "fbeta": float(self.fbeta[i]),
                "support": int(self.support[i]),
                "predicted": int(self.predicted[i]),
            }
            for i, c in enumerate(self.labels)
        ]
        total = int(self.support.sum())
        for name in AVERAGES:
            rows.append(
                {
                    "class": f"{name} avg",
                    **self.averages[name],
                    "support": total,
                    "predicted": int(self.predicted.sum()),
                }
            )
        return rows


def _py(value):
    return value.item() if isinstance(value, np.generic) else value


def _labels_iv(y_true, y_pred, labels):
    """Return gold and predicted labels as equal-length 1-D arrays, and the classes."""
    arrays = as_labels(y_true=y_true, y_pred=y_pred, labels=labels)
    y_true, y_pred = arrays["y_true"], arrays["y_pred"]
    if y_true.size != y_pred.size:
        raise ArgumentError(
            f"`y_true` and `y_pred` must have the same length; got {y_true.size} and "
            f"{y_pred.size}."
        )
    if y_true.size == 0:
        raise ArgumentError("`y_true` and `y_pred` are empty; need at least one item.")
    if labels is None:
        classes = np.unique(np.concatenate([y_true, y_pred]))
    else:
        classes = arrays["labels"]
        if classes.size == 0:
            raise ArgumentError("`labels` must be a non-empty list of class labels.")
        if np.unique(classes).size != classes.size:
            raise ArgumentError("`labels` has duplicates; name each class once.")
    return y_true, y_pred, classes


def _encode(values: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Index of each value in ``classes``; -1 where it is not a class."""
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    pos = np.searchsorted(sorted_classes, values)
    pos = np.clip(pos, 0, sorted_classes.size - 1)
    found = sorted_classes[pos] == values
    return np.where(found, order[pos], -1)


def confusion_matrix(y_true, y_pred, *, labels=None) -> ConfusionMatrix:
    """Cross-tabulate gold against predicted labels.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,)
        Gold and predicted labels (numbers or strings), one per item.
    labels : array_like, optional
        The classes and their order. Default: the sorted union of the gold
        and predicted labels. Items whose gold or predicted label is not in
        ``labels`` are not counted (as scikit-learn).

    Returns
    -------
    ConfusionMatrix
        Rows are gold classes, columns predicted classes.

    Examples
    --------
    >>> confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2]).matrix
    array([[1, 0, 0],
           [0, 1, 1],
           [0, 0, 1]])
    """
    y_true, y_pred, classes = _labels_iv(y_true, y_pred, labels)
    c = classes.size
    check_memory(16.0 * c * c, f"the confusion matrix of {c:,} classes ({c:,} x {c:,})",
                 "name the classes to report (labels=) or merge rare ones")  # fmt: skip
    g = _encode(y_true, classes)
    p = _encode(y_pred, classes)
    keep = (g >= 0) & (p >= 0)
    matrix = np.bincount(g[keep] * c + p[keep], minlength=c * c).reshape(c, c)
    return ConfusionMatrix(matrix=matrix.astype(np.int64), labels=classes)


def accuracy(y_true, y_pred) -> float:
    """Share of items whose predicted label equals the gold label."""
    y_true, y_pred, _ = _labels_iv(y_true, y_pred, None)
    return float(np.mean(y_true == y_pred))


def matthews_corrcoef(y_true, y_pred) -> float:
    """The Matthews correlation coefficient of predicted against gold labels.

    Estimand (on the given items): the correlation between the one-hot
    encodings of gold and predicted labels (Matthews 1975; Gorodkin 2004 for
    more than two classes), in ``[-1, 1]``; 0 when either side holds a single
    class. Equals scikit-learn's ``matthews_corrcoef``; see
    :func:`mcc_from_counts`.

    Examples
    --------
    >>> round(matthews_corrcoef([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]), 6)
    0.166667
    """
    tp, fp, fn = _class_counts(y_true, y_pred)
    return float(mcc_from_counts(tp, fp, fn))


def balanced_accuracy(y_true, y_pred, *, adjusted: bool = False) -> float:
    """Balanced accuracy: the mean of the per-class recalls.

    Estimand (on the given items): the average over the classes present in
    the gold labels of the share of that class's items predicted correctly
    (Brodersen et al. 2010); with ``adjusted=True``, rescaled so that chance
    (``1/K`` for ``K`` gold classes) scores 0 (Kelleher et al. 2015). Equals
    scikit-learn's ``balanced_accuracy_score``; see
    :func:`balanced_accuracy_from_counts` for the single-class case.
    """
    tp, _, fn = _class_counts(y_true, y_pred)
    return float(balanced_accuracy_from_counts(tp, fn, adjusted=bool(adjusted)))


def _class_counts(y_true, y_pred):
    """Per-class TP, FP and FN over the sorted union of gold and predicted labels."""
    cm = confusion_matrix(y_true, y_pred).matrix
    tp = np.diag(cm)
    return tp, cm.sum(0) - tp, cm.sum(1) - tp


def binary_indicators(y_true, y_pred, pos_label):
    """Gold and predicted labels as booleans "is the positive class".

    Refuses a positive class that occurs in neither the gold labels nor the
    predictions, and data with more than two classes (sensitivity and
    specificity are defined for two classes: the positive and the other one).
    """
    arrays = as_labels(positive=np.asarray([pos_label]), y_true=y_true, y_pred=y_pred)
    y_true, y_pred = arrays["y_true"], arrays["y_pred"]
    present = np.unique(np.concatenate([y_true, y_pred]))
    shown = ", ".join(repr(_py(c)) for c in present[:10]) + (
        " ..." if present.size > 10 else ""
    )
    if not np.any(present == pos_label):
        raise ArgumentError(
            f"the positive class {pos_label!r} occurs in neither the gold labels nor "
            f"the predictions (classes: {shown}); name one of them."
        )
    if present.size > 2:
        raise ArgumentError(
            f"sensitivity and specificity need two classes (the positive class and one "
            f"other); the gold labels and predictions hold {present.size} ({shown})."
        )
    return y_true == pos_label, y_pred == pos_label


def sensitivity_specificity(
    y_true, y_pred, *, pos_label, zero_division: float = 0.0
) -> tuple[float, float]:
    """Sensitivity and specificity of binary predictions with a named positive class.

    Estimands (on the given items): sensitivity ``TP / (TP + FN)``, the share
    of positive items predicted positive (recall of the positive class), and
    specificity ``TN / (TN + FP)``, the share of the other items predicted
    negative (recall of the other class). ``0/0`` (no positive, or no
    negative, gold item) becomes ``zero_division``, as scikit-learn's
    ``recall_score(pos_label=...)``.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,)
        Gold and predicted labels holding at most two classes.
    pos_label : label
        The positive class, of the labels' kind (text for labels read as text).
    zero_division : {0.0, 1.0, nan}, default 0.0

    Returns
    -------
    (sensitivity, specificity) : tuple of float

    Examples
    --------
    >>> sensitivity_specificity(["a", "a", "b", "b"], ["a", "b", "b", "b"], pos_label="a")
    (0.5, 1.0)
    """
    _, zero_division = _metrics_iv(1.0, zero_division)
    y_true, y_pred, _ = _labels_iv(y_true, y_pred, None)
    g, p = binary_indicators(y_true, y_pred, pos_label)
    sens = _divide(np.sum(g & p), np.sum(g), zero_division)
    spec = _divide(np.sum(~g & ~p), np.sum(~g), zero_division)
    return float(sens), float(spec)


def _divide(num, den, zero_division):
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den == 0, zero_division, out)


def prf_from_counts(tp, fp, fn, *, beta: float = 1.0, zero_division: float = 0.0):
    """Precision, recall and F-beta from TP, FP and FN counts, elementwise.

    Works on arrays of any shape (for example resamples x classes). ``0/0``
    becomes ``zero_division``; see the module notes.

    Returns
    -------
    (precision, recall, fbeta) : tuple of ndarray
    """
    tp = np.asarray(tp, dtype=float)
    fp = np.asarray(fp, dtype=float)
    fn = np.asarray(fn, dtype=float)
    precision = _divide(tp, tp + fp, zero_division)
    recall = _divide(tp, tp + fn, zero_division)
    if math.isinf(beta):
        fbeta = recall
    elif beta == 0:
        fbeta = precision
    else:
        b2 = beta * beta
        fbeta = _divide((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)
    return precision, recall, fbeta


def mcc_from_counts(tp, fp, fn):
    """The Matthews correlation coefficient from per-class TP, FP and FN counts.

    The counts have shape ``(..., C)``; the result has shape ``(...)``.
    Gorodkin's (2004) multi-class form, as scikit-learn's
    ``matthews_corrcoef``: with ``t_k = TP_k + FN_k`` (gold count),
    ``p_k = TP_k + FP_k`` (predicted count), ``c = sum TP_k`` and
    ``s = sum t_k``, MCC = ``(c s - t.p) / sqrt((s^2 - p.p)(s^2 - t.t))``,
    and 0 when the denominator is 0 (a single gold or predicted class).
    For two classes it is Matthews' (1975) ``(TP TN - FP FN) / sqrt(...)``.
    """
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    t, p = tp + fn, tp + fp
    s = t.sum(-1)
    cov_tp = tp.sum(-1) * s - np.einsum("...c,...c->...", t, p)
    cov_pp = s * s - np.einsum("...c,...c->...", p, p)
    cov_tt = s * s - np.einsum("...c,...c->...", t, t)
    den = cov_pp * cov_tt
    return np.divide(
        cov_tp, np.sqrt(den), out=np.zeros(np.shape(den)), where=den > 0
    )


def balanced_accuracy_from_counts(tp, fn, *, adjusted: bool = False):
    """Balanced accuracy from per-class TP and FN counts, shape ``(..., C)``.

    The mean recall over the classes with gold support (as scikit-learn's
    ``balanced_accuracy_score``); ``adjusted`` rescales it so chance level
    ``1/K`` (``K`` gold classes) is 0 and perfect is 1, NaN for ``K = 1``.
    """
    tp, fn = np.asarray(tp, dtype=float), np.asarray(fn, dtype=float)
    support = tp + fn
    present = support > 0
    recall = np.divide(tp, support, out=np.zeros(np.shape(support)), where=present)
    k = present.sum(-1)
    score = recall.sum(-1) / k
    if adjusted:
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(k > 1, (score - 1 / k) / (1 - 1 / k), np.nan)
    return score


def _average(values: np.ndarray, weights=None) -> float:
    """Mean over classes ignoring NaN (NaN means 0/0 with zero_division=nan)."""
    keep = ~np.isnan(values)
    if not keep.any():
        return math.nan
    if weights is None or np.sum(np.asarray(weights)[keep]) == 0:
        return float(np.mean(values[keep]))
    return float(np.average(values[keep], weights=np.asarray(weights)[keep]))


def _metrics_iv(beta, zero_division):
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not beta >= 0:
        raise ArgumentError(f"`beta` must be a number >= 0 (1 gives F1); got {beta!r}.")
    if not (
        isinstance(zero_division, int | float) and not isinstance(zero_division, bool)
    ) or (zero_division not in (0, 1) and not math.isnan(zero_division)):
        raise ArgumentError(
            "`zero_division` must be 0, 1 or nan (the value of 0/0); "
            f"got {zero_division!r}."
        )
    return float(beta), float(zero_division)


def classification_metrics(
    y_true,
    y_pred,
    *,
    labels=None,
    beta: float = 1.0,
    zero_division: float = 0.0,
    pos_label=None,
) -> ClassificationMetrics:
    """Accuracy, and precision, recall and F-beta per class and averaged.

    Estimands (on the given items): per class ``k``, precision
    ``TP_k / (TP_k + FP_k)``, recall ``TP_k / (TP_k + FN_k)`` and F-beta, their
    weighted harmonic mean ``(1 + b^2) P R / (b^2 P + R)`` (van Rijsbergen
    1979). Macro averages weight classes equally; micro averages pool the
    counts of all classes (for single-label multi-class data, micro P = R =
    F = accuracy when ``labels`` covers every class); weighted averages weight
    classes by their support (Jurafsky and Martin, ch. 4).

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,)
        Gold and predicted labels.
    labels : array_like, optional
        The classes to report and average over. Default: the sorted union of
        gold and predicted labels.
    beta : float, default 1.0
        ``beta > 1`` favours recall, ``beta < 1`` precision.
    zero_division : {0.0, 1.0, nan}, default 0.0
        The value of ``0/0`` (see the module notes).
    pos_label : label, optional
        The positive class of binary data: adds sensitivity and specificity
        (see :func:`sensitivity_specificity`; refused for more than two
        classes).

    Returns
    -------
    ClassificationMetrics
        MCC and balanced accuracy are over all items, whatever ``labels``.

    Examples
    --------
    >>> m = classification_metrics([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    >>> m.precision, m.averages["macro"]["fbeta"]
    (array([0.5       , 0.66666667]), 0.5833333333333333)
    """
    beta, zero_division = _metrics_iv(beta, zero_division)
    cm = confusion_matrix(y_true, y_pred, labels=labels)
    y_true, y_pred, classes = _labels_iv(y_true, y_pred, labels)
    g = _encode(y_true, classes)
    p = _encode(y_pred, classes)
    c = classes.size
    # every item counts, also those outside ``labels`` (scikit-learn's semantics)
    tp = np.bincount(g[(g == p) & (g >= 0)], minlength=c)
    support = np.bincount(g[g >= 0], minlength=c)
    predicted = np.bincount(p[p >= 0], minlength=c)
    fp = predicted - tp
    fn = support - tp
    precision, recall, fbeta = prf_from_counts(
        tp, fp, fn, beta=beta, zero_division=zero_division
    )
    mp, mr, mf = prf_from_counts(
        tp.sum(), fp.sum(), fn.sum(), beta=beta, zero_division=zero_division
    )
    all_tp, all_fp, all_fn = _class_counts(y_true, y_pred)
    sens = spec = None
    if pos_label is not None:
        sens, spec = sensitivity_specificity(
            y_true, y_pred, pos_label=pos_label, zero_division=zero_division
        )
    averages = {
        "macro": {
            "precision": _average(precision),
            "recall": _average(recall),
            "fbeta": _average(fbeta),
        },
        "micro": {"precision": float(mp), "recall": float(mr), "fbeta": float(mf)},
        "weighted": {
            "precision": _average(precision, support),
            "recall": _average(recall, support),
            "fbeta": _average(fbeta, support),
        },
    }
    return ClassificationMetrics(
        labels=cm.labels,
        precision=precision,
        recall=recall,
        fbeta=fbeta,
        support=support,
        predicted=predicted,
        accuracy=float(np.mean(y_true == y_pred)),
        averages=averages,
        beta=beta,
        zero_division=zero_division,
        confusion=cm,
        mcc=float(mcc_from_counts(all_tp, all_fp, all_fn)),
        balanced_accuracy=float(balanced_accuracy_from_counts(all_tp, all_fn)),
        positive=_py(pos_label) if pos_label is not None else None,
        sensitivity=sens,
        specificity=spec,
    )
