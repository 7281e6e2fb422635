"""One test set: the resampling engine behind the paired significance tests.

The metric protocol
-------------------
A metric is *per-item sufficient statistics plus a vectorised combine*
(:class:`SumMetric`): each system's output on each item becomes a short row of
numbers (accuracy: ``[correct, 1]``; precision/recall/F: per-class TP, FP and
FN; a BLEU-like metric: n-gram matches and lengths; a mean score: ``[score,
1]``), and the metric of any multiset of items is ``combine(sum of their
rows)``. ``combine`` takes an array of shape ``(..., d)`` and returns shape
``(...)``, so the metric of every resample in a chunk is one call.

Compression
-----------
Two items whose rows are identical for both systems are interchangeable in
every resample. The engine groups the ``n`` items into ``T`` distinct *types*
with counts ``c_t``. A bootstrap resample (``n`` items drawn with
replacement) is then, in distribution exactly, a multinomial draw of type
counts ``Multinomial(n, c / n)``; a randomization (swap the two systems'
outputs on each item with probability 1/2) is a ``Binomial(c_t, 1/2)`` draw of
swapped items per type. The metric of a resample is
``combine(counts @ type_rows)``: ``O(b T)`` work instead of ``O(b n)``, and
for label metrics ``T <= C^3`` (gold, prediction A, prediction B) whatever
``n`` is. When ``T`` is close to ``n`` (continuous scores), the engine falls
back to drawing item indices; with many types (many classes) the bootstrap
splits them, frequent types as a multinomial and rare ones by item index.
Label metrics' rows are mostly zeros, so the sums run over the nonzero
entries only. All paths process the resample axis in chunks so memory stays
bounded for any ``n`` and ``b``.

The compiled kernel
-------------------
Where the optional C extension ``_bootkernel`` was built at install, the
bootstrap's index and split paths draw their items in it instead: one pass
per draw (a uniform integer, its type, a count) and each resample's sums
from its type counts, with the random words taken from the same numpy
Generator (:func:`compiled_sums`). For precision/recall/F-type label
metrics with many classes the types are label triples and no rows are
summed: each drawn item adds 1 to its one to three label counts
(:func:`label_slots`), and precision, recall, F-beta, MCC and balanced
accuracy are combined from the counts in C too, with the numpy combine's
bits (:func:`count_deltas`). The paths' names then end in
``-compiled``. Without it (no compiler at install, or ``VAREVAL_NO_KERNEL``
set) the numpy paths run; both draw from the same distribution, so their
results agree within Monte Carlo error, not draw for draw.

An arbitrary Python function of (gold, predictions) that is not of this form
is supported by :class:`CallableMetric`, which loops over resamples (slow, with
a progress bar), or, when the function takes 2-D arrays (resamples x items),
evaluates a chunk of resamples per call (``vectorized=True``; ROC AUC ships
this way, since it is a sum over pairs of items, not over items).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import sys
from collections.abc import Callable

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._checks import as_scores, check_memory
from vareval.stats._compiled import compiled
from vareval.stats._progress import progress_bar
from vareval.stats.testset.auc import mann_whitney_auc, positive_flags
from vareval.stats.testset.classification import (
    balanced_accuracy_from_counts,
    binary_indicators,
    mcc_from_counts,
)

# Elements (of the largest temporary array) per chunk of resamples: ~32 MB of float64.
CHUNK_ELEMENTS = 1 << 22


@dataclasses.dataclass(frozen=True)
class SumMetric:
    """A metric given by per-item sufficient statistics and a vectorised combine.

    Parameters
    ----------
    name : str
        Shown in results.
    stats : callable
        For ``labels=True``: ``stats(gold, pred, n_classes) -> (n, d)`` where
        ``gold`` and ``pred`` are integer class codes ``0 .. n_classes - 1``
        (codes follow the sorted union of all labels). For ``labels=False``:
        ``stats(gold, pred) -> (n, d)`` on the arrays as given (``gold`` may be
        None).
    combine : callable
        ``combine(sums)`` with ``sums`` of shape ``(..., d)`` returns the metric
        of each sum, shape ``(...)``.
    labels : bool, default False
        Whether the inputs are class labels. Label metrics are compressed on
        the (gold, A, B) label triples directly, which is fastest.
    needs_gold : bool, default True
        Whether ``gold`` is required.
    positive : label, optional
        For a label metric of binary data with a named positive class
        (sensitivity, specificity): the labels are then coded 1 for this
        class and 0 for the other (``n_classes`` is 2), and data with more
        than two classes, or without this class, are refused.

    Examples
    --------
    A mean of per-item scores, written by hand:

    >>> mean = SumMetric(
    ...     "mean",
    ...     stats=lambda gold, pred: np.column_stack([pred, np.ones(len(pred))]),
    ...     combine=lambda s: s[..., 0] / s[..., 1],
    ...     needs_gold=False,
    ... )
    """

    name: str
    stats: Callable
    combine: Callable
    labels: bool = False
    needs_gold: bool = True
    positive: object = None


@dataclasses.dataclass(frozen=True)
class CallableMetric:
    """Any Python function ``fn(gold, pred) -> float`` on a subset of items.

    The slow, generic path: each resample calls ``fn`` twice (system A and B)
    in a Python loop with a progress bar. Prefer a :class:`SumMetric`.
    ``scores=True`` says the systems' outputs are numeric scores (as for
    AUC), not labels. ``vectorized=True`` says ``fn`` also takes 2-D arrays
    ``(resamples, items)`` and returns one value per row (as
    ``scipy.stats.bootstrap``'s ``vectorized``): then a chunk of resamples
    is one call, with no Python loop.
    """

    fn: Callable
    name: str = "custom"
    needs_gold: bool = True
    scores: bool = False
    vectorized: bool = False


def reads_scores(metric) -> bool:
    """Whether the systems' outputs are numbers (scores) rather than labels."""
    if isinstance(metric, SumMetric):
        return not metric.labels
    return metric.scores


# --- shipped metrics -------------------------------------------------------


def _accuracy_stats(gold, pred, n_classes):
    correct = (gold == pred).astype(float)
    return np.column_stack([correct, np.ones_like(correct)])


def _accuracy_combine(s):
    return s[..., 0] / s[..., 1]


def _prf_stats(gold, pred, n_classes):
    """Rows ``[TP_0..TP_{C-1}, FP_0.., FN_0..]`` of one item each."""
    n = gold.size
    check_memory(8.0 * n * 3 * n_classes, f"per-item counts of {n:,} items x {n_classes:,} classes",
                 "a macro average over this many classes needs fewer classes or items")  # fmt: skip
    out = np.zeros((n, 3 * n_classes))
    rows = np.arange(n)
    hit = gold == pred
    out[rows[hit], gold[hit]] = 1.0
    out[rows[~hit], n_classes + pred[~hit]] = 1.0
    out[rows[~hit], 2 * n_classes + gold[~hit]] = 1.0
    return out


def _prf_combine(average: str, which: str, beta: float):
    """Combine for precision/recall/F-beta averaged macro, micro or weighted.

    Macro and weighted averages run over the classes *present* for that
    system in that (re)sample: in the gold labels or predicted. This equals
    scikit-learn's default on the resample (labels inferred from the gold
    and predicted labels, ``zero_division=0``).
    """
    if math.isinf(beta):
        which = "recall"
    elif beta == 0:
        which = "precision"
    b2 = beta * beta if which == "fbeta" else 0.0

    def combine(s):
        # Few passes over (resamples x classes): with many classes the
        # combine is a large share of a bootstrap's time.
        s = np.asarray(s, dtype=float)
        c = s.shape[-1] // 3
        tp, fp, fn = s[..., :c], s[..., c : 2 * c], s[..., 2 * c :]
        if average == "micro":
            tp, fp, fn = tp.sum(-1), fp.sum(-1), fn.sum(-1)
        if which == "precision":
            num, den = tp, tp + fp
        elif which == "recall":
            num, den = tp, tp + fn
        else:
            num = tp * (1 + b2)
            den = num + fp
            den += fn if b2 == 1 else b2 * fn
        defined = den > 0
        value = np.divide(num, den, out=np.zeros(den.shape), where=defined)  # 0/0 -> 0
        if average == "micro":
            return value
        if average == "weighted":
            w = tp + fn
            return np.einsum("...c,...c->...", value, w) / w.sum(-1)
        # macro: value is 0 off the classes present (in gold or predicted)
        present = defined if which == "fbeta" else (tp + fp + fn) > 0
        return value.sum(-1) / np.count_nonzero(present, axis=-1)

    # the same combine in the compiled kernel (``prf_deltas``): its codes
    combine.compiled = (
        ("macro", "micro", "weighted").index(average),
        ("precision", "recall", "fbeta").index(which),
        b2,
    )
    return combine


def _mcc_combine(s):
    s = np.asarray(s, dtype=float)
    c = s.shape[-1] // 3
    return mcc_from_counts(s[..., :c], s[..., c : 2 * c], s[..., 2 * c :])


_mcc_combine.compiled = (3, 0, 0.0)  # the kernel's code (``prf_deltas``): the same bits

# Below this many items MCC's sums (at most n**2) are exact in doubles, so the
# kernel's integer sums give numpy's bits; past it numpy's rounding is kept.
MCC_EXACT_ITEMS = math.isqrt(2**53 - 1)


def _balanced_accuracy_combine(adjusted: bool):
    def combine(s):
        s = np.asarray(s, dtype=float)
        c = s.shape[-1] // 3
        return balanced_accuracy_from_counts(
            s[..., :c], s[..., 2 * c :], adjusted=adjusted
        )

    combine.compiled = (4, int(adjusted), 0.0)  # the kernel's code: numpy's pairwise sum
    return combine


def _compiled_combine(metric, n_items: int):
    """The kernel's code for ``metric``'s combine of label counts, or None (numpy's)."""
    spec = getattr(metric.combine, "compiled", None)
    if spec is _mcc_combine.compiled and n_items > MCC_EXACT_ITEMS:  # past exact int sums
        return None
    return spec


def _class_recall_combine(code: int):
    """Recall of class ``code`` of binary data (1: sensitivity, 0: specificity), 0/0 -> 0."""

    def combine(s):
        s = np.asarray(s, dtype=float)
        tp, fn = s[..., code], s[..., 4 + code]
        den = tp + fn
        return np.divide(tp, den, out=np.zeros(np.shape(den)), where=den > 0)

    return combine


def _mean_stats(gold, pred):
    x = as_scores(pred, "scores")
    return np.column_stack([x, np.ones_like(x)])


def mean_metric() -> SumMetric:
    """The mean of per-item scores (gold not needed)."""
    return SumMetric(
        "mean", _mean_stats, _accuracy_combine, labels=False, needs_gold=False
    )


def accuracy_metric() -> SumMetric:
    """Accuracy: share of items predicted correctly."""
    return SumMetric("accuracy", _accuracy_stats, _accuracy_combine, labels=True)


def prf_metric(
    average: str = "macro", which: str = "fbeta", beta: float = 1.0
) -> SumMetric:
    """Precision, recall or F-beta averaged ``macro``, ``micro`` or ``weighted``."""
    short = {"precision": "precision", "recall": "recall", "fbeta": f"f{beta:g}"}[which]
    return SumMetric(
        f"{average}-{short}",
        _prf_stats,
        _prf_combine(average, which, beta),
        labels=True,
    )


def mcc_metric() -> SumMetric:
    """The Matthews correlation coefficient (binary or multi-class).

    Rows are per-class TP, FP and FN increments (``3 C`` numbers), from which
    the gold and predicted class counts and the trace follow; 0 on a resample
    with a single gold or predicted class, as scikit-learn.
    """
    return SumMetric("mcc", _prf_stats, _mcc_combine, labels=True)


def balanced_accuracy_metric(adjusted: bool = False) -> SumMetric:
    """Balanced accuracy, the mean recall over the classes in the (resampled) gold labels.

    With ``adjusted=True`` chance scores 0; undefined (NaN, refused by the
    tests) on a resample with a single gold class.
    """
    name = "adjusted_balanced_accuracy" if adjusted else "balanced_accuracy"
    return SumMetric(
        name, _prf_stats, _balanced_accuracy_combine(bool(adjusted)), labels=True
    )


def sensitivity_metric(positive) -> SumMetric:
    """Sensitivity: recall of the ``positive`` class of binary data."""
    return SumMetric(
        "sensitivity", _prf_stats, _class_recall_combine(1), labels=True,
        positive=positive,
    )


def specificity_metric(positive) -> SumMetric:
    """Specificity: recall of the class other than ``positive`` in binary data."""
    return SumMetric(
        "specificity", _prf_stats, _class_recall_combine(0), labels=True,
        positive=positive,
    )


_NAME = re.compile(r"^(macro|micro|weighted)-(precision|recall|f(\d+(?:\.\d+)?))$")
METRIC_NAMES = (
    "accuracy, mean, mcc, balanced_accuracy, adjusted_balanced_accuracy, "
    "sensitivity, specificity, auc, {macro,micro,weighted}-{precision,recall,f1}, "
    "or {macro,micro,weighted}-f<beta> such as macro-f0.5"
)
# Metrics of binary data that need the positive class named.
POSITIVE_METRICS = ("sensitivity", "specificity", "auc")


def _auc_metric(positive) -> CallableMetric:
    """ROC AUC as a vectorized callable metric: one midrank sort per resample row.

    AUC is a sum over (positive, negative) *pairs*, not over items, so it has
    no per-item sufficient statistics; the resampled items themselves are
    ranked, ``O(n log n)`` per resample, a chunk of resamples at a time.
    """
    def auc(gold, scores):
        flags = positive_flags(np.asarray(gold), positive)
        return mann_whitney_auc(flags, np.asarray(scores, dtype=float))

    return CallableMetric(auc, name="auc", scores=True, vectorized=True)


def get_metric(metric, *, positive=None) -> SumMetric | CallableMetric:
    """Resolve a metric name, a :class:`SumMetric` or a plain callable.

    Names: ``accuracy``, ``mean`` (mean of per-item scores), ``mcc``,
    ``balanced_accuracy`` (``adjusted_balanced_accuracy``), ``sensitivity``
    and ``specificity`` (binary data; need ``positive``), ``auc`` (ROC AUC of
    per-item scores; needs ``positive``; a :class:`CallableMetric`, since AUC
    is not a sum over items), ``macro-f1``, ``micro-f1``, ``weighted-f1``,
    ``macro-f0.5`` (any beta), ``macro-precision``, ``micro-recall`` and so
    on; ``f1`` means ``macro-f1``. Hyphens and underscores are
    interchangeable in names. A plain callable ``fn(gold, pred) -> float``
    becomes a :class:`CallableMetric`.
    """
    if isinstance(metric, SumMetric | CallableMetric):
        return metric
    if callable(metric):
        return CallableMetric(metric, name=getattr(metric, "__name__", "custom"))
    if not isinstance(metric, str):
        raise ArgumentError(
            f"`metric` must be a name or a metric object; got {metric!r}."
        )
    name = metric.strip().lower()
    snake = name.replace("-", "_")
    if snake in POSITIVE_METRICS:
        if positive is None:
            raise ArgumentError(
                f"metric {snake!r} needs the positive class (--positive, pos_label=)."
            )
        if snake == "auc":
            return _auc_metric(positive)
        return (sensitivity_metric if snake == "sensitivity" else specificity_metric)(
            positive
        )
    if snake == "mcc":
        return mcc_metric()
    if snake in ("balanced_accuracy", "adjusted_balanced_accuracy"):
        return balanced_accuracy_metric(snake.startswith("adjusted"))
    if name == "accuracy":
        return accuracy_metric()
    if name in ("mean", "mean-of-scores", "mean-score"):
        return mean_metric()
    if name == "f1":
        name = "macro-f1"
    m = _NAME.match(name)
    if m is None:
        raise ArgumentError(
            f"`metric` {metric!r} is unknown; accepted: {METRIC_NAMES}."
        )
    average, which, beta = m.group(1), m.group(2), m.group(3)
    if which.startswith("f"):
        return prf_metric(average, "fbeta", float(beta))
    return prf_metric(average, which)


# --- inputs and compression -------------------------------------------------


def encode_labels(*arrays) -> tuple[list[np.ndarray], np.ndarray]:
    """Encode label arrays jointly as integer codes into their sorted union.

    Returns
    -------
    (codes, classes)
        ``codes[i][j]`` is the index of ``arrays[i][j]`` in ``classes``.
    """
    arrays = [np.asarray(a) for a in arrays]
    arrays = [a.astype(np.int64) if a.dtype.kind == "b" else a for a in arrays]
    if all(a.dtype.kind in "iu" for a in arrays):
        lo = min(int(a.min()) for a in arrays)
        hi = max(int(a.max()) for a in arrays)
        if hi - lo < 1 << 20:
            present = np.zeros(hi - lo + 1, dtype=bool)
            for a in arrays:
                present[np.bincount(a - lo, minlength=hi - lo + 1) > 0] = True
            lookup = np.cumsum(present) - 1
            classes = np.flatnonzero(present) + lo
            return [lookup[a - lo] for a in arrays], classes
    if all(a.dtype.kind == "U" for a in arrays) and max(a.itemsize for a in arrays) <= 12:
        # Short texts (up to 3 characters, e.g. class ids) as integer keys
        # in the same order: code points of 21 bits, first character highest.
        width = max(a.itemsize for a in arrays) // 4
        codes, keys = encode_labels(*(_text_key(a, width) for a in arrays))
        shifts = 21 * np.arange(width - 1, -1, -1)
        points = ((keys[:, None] >> shifts) & ((1 << 21) - 1)).astype(np.uint32)
        return codes, np.ascontiguousarray(points).view(f"U{width}").reshape(-1)
    classes, inverse = np.unique(np.concatenate(arrays), return_inverse=True)
    bounds = np.cumsum([0] + [a.size for a in arrays])
    return [inverse[bounds[i] : bounds[i + 1]] for i in range(len(arrays))], classes


def _text_key(a: np.ndarray, width: int) -> np.ndarray:
    """Texts of at most ``width`` (<= 3) characters as int64 keys ordered as the texts."""
    points = np.ascontiguousarray(a.astype(f"U{width}")).view(np.uint32).reshape(-1, width)
    shifts = 21 * np.arange(width - 1, -1, -1)
    return (points.astype(np.int64) << shifts).sum(axis=1)


def _codes(metric: SumMetric, *arrays) -> tuple[list[np.ndarray], int]:
    """Integer class codes for a label metric, and the number of classes.

    A metric with a ``positive`` class codes it 1 and the other class 0.
    """
    if metric.positive is None:
        codes, classes = encode_labels(*arrays)
        return codes, classes.size
    gold, *outputs = arrays
    binary_indicators(gold, np.concatenate(outputs), metric.positive)
    return [(np.asarray(x) == metric.positive).astype(np.int64) for x in arrays], 2


class PairedTypes:
    """Items of a paired comparison grouped into distinct types.

    Attributes
    ----------
    stats_a, stats_b : ndarray, shape (T, d)
        Each type's sufficient-statistic row for system A and system B.
        Given ``rows`` instead, they are built on first use.
    counts : ndarray of int, shape (T,)
        Items of each type; they sum to ``n``.
    item_type : ndarray of int, shape (n,)
        The type of each item (used by the index-sampling path).
    labels : ndarray of int, shape (T, 3), or None
        For a label metric whose rows are per-class TP, FP and FN counts
        (``_prf_stats``): each type's (gold, A, B) class codes, which
        determine its rows; ``n_classes`` is then the number of classes.
        The compiled path counts from these, so with many classes the
        ``(T, 3 C)`` rows are never built unless another path asks for them.
    """

    def __init__(self, stats_a, stats_b, counts, item_type, *, rows=None, labels=None,
                 n_classes=0):
        self._stats = None if rows is not None else (stats_a, stats_b)
        self._rows = rows  # () -> (stats_a, stats_b), for the lazy form
        self.counts, self.item_type = counts, item_type
        self.labels, self.n_classes = labels, n_classes

    def _built(self):
        if self._stats is None:
            self._stats = self._rows()
        return self._stats

    @property
    def stats_a(self) -> np.ndarray:
        """A's rows, shape (T, d)."""
        return self._built()[0]

    @property
    def stats_b(self) -> np.ndarray:
        """B's rows, shape (T, d)."""
        return self._built()[1]

    @property
    def n(self) -> int:
        """Items."""
        return int(self.counts.sum())

    @property
    def n_types(self) -> int:
        """Distinct types ``T``."""
        return int(self.counts.size)

    def both(self) -> np.ndarray:
        """A's and B's rows side by side, shape (T, 2d); no copy when they already are."""
        a, b = self.stats_a, self.stats_b
        base = a.base
        if (
            base is not None and base is b.base and base.shape == (a.shape[0], 2 * a.shape[1])
            and a.strides == base.strides and b.strides == base.strides
            and a.ctypes.data == base.ctypes.data
            and b.ctypes.data == base.ctypes.data + a.shape[1] * base.itemsize
        ):
            return base  # a wide table of many classes: a copy costs more than the draws
        return np.hstack([a, b])

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Column sums of the rows of all items, for A and for B."""
        if self._stats is None and self.labels is not None:
            c = self.n_classes
            slots = label_slots(self.labels, c)
            sums = np.bincount(slots.reshape(-1), weights=np.repeat(self.counts, 3),
                               minlength=slots_width(c))
            return prf_counts(sums, c)
        c = self.counts.astype(float)
        return c @ self.stats_a, c @ self.stats_b


def slots_width(n_classes: int) -> int:
    """Columns of a table of label counts (:func:`label_slots`): 6 C counts, 16 spare."""
    return 6 * n_classes + 16


def label_slots(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """The count columns each (gold, A, B) label triple adds 1 to, shape (T, 3), int32.

    Six blocks of ``C`` columns: the items of each gold class that both
    systems got right, only A, only B, neither; then A's and B's false
    positives of each predicted class (:func:`prf_counts` turns them into
    each system's TP, FP and FN). An item adds 1 to its gold class's
    column of its block, and to each wrong system's FP column: one to
    three counts (the two systems' ``_prf_stats`` rows have two to four
    nonzeros). Unused slots
    point at one of 16 spare columns past ``6 C`` (by the triple's row),
    so that no column is incremented at every draw.
    """
    c = n_classes
    g, a, b = (labels[:, i].astype(np.int64) for i in range(3))
    hit_a, hit_b = a == g, b == g
    spare = 6 * c + np.arange(g.size) % 16
    out = np.empty((g.size, 3), dtype=np.int64)
    block = np.where(hit_a, np.where(hit_b, 0, 1), np.where(hit_b, 2, 3))
    out[:, 0] = block * c + g
    out[:, 1] = np.where(hit_a, np.where(hit_b, spare, 5 * c + b), 4 * c + a)
    out[:, 2] = np.where(hit_a | hit_b, spare, 5 * c + b)
    return out.astype(np.int32)


def prf_counts(counts: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """A's and B's ``_prf_stats`` sums (TP, FP, FN of each class) from label counts."""
    c = n_classes
    counts = np.asarray(counts, dtype=float)
    both, only_a, only_b, neither, fp_a, fp_b = (
        counts[..., i * c : (i + 1) * c] for i in range(6)
    )
    return (
        np.concatenate([both + only_a, fp_a, only_b + neither], axis=-1),
        np.concatenate([both + only_b, fp_b, only_a + neither], axis=-1),
    )


def _check_rows(rows, n, name):
    rows = np.asarray(rows, dtype=float)
    if rows.ndim != 2 or rows.shape[0] != n:
        raise ArgumentError(
            f"metric {name!r}: `stats` must return an array of shape "
            f"(n, d) = ({n}, d); "
            f"got shape {rows.shape}."
        )
    if not np.isfinite(rows).all():
        raise ArgumentError(
            f"metric {name!r}: `stats` returned NaN or infinite values."
        )
    return rows


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)``, by a hash of each row.

    Sorting wide rows (hundreds of per-class counts) is slow; two random
    projections group them instead, and the grouping is verified exactly
    (falling back to the sort if two different rows ever collide).
    """
    if rows.shape[1] > 8:
        proj = rows @ np.random.default_rng(0).standard_normal((rows.shape[1], 2))
        _, first, inv = np.unique(
            proj.view(np.complex128).reshape(-1), return_index=True, return_inverse=True
        )
        inv = inv.reshape(-1)
        # only rows that are not their group's first can differ from it
        other = np.flatnonzero(first[inv] != np.arange(inv.size))
        if np.array_equal(rows[other], rows[first[inv[other]]]):
            # The sort's (lexicographic) order, so the draws stay the same:
            # the groups in the order of their rows' first place in it.
            in_order = inv[_lexicographic_order(rows)]
            _, at = np.unique(in_order, return_index=True)
            order = in_order[np.sort(at)]
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            return rows[first[order]], rank[inv]
    uniq, inv = np.unique(rows, axis=0, return_inverse=True)
    return uniq, inv.reshape(-1)


def _lexicographic_order(rows: np.ndarray) -> np.ndarray:
    """``np.lexsort(rows.T[::-1])`` (column 0 first), from each row's nonzeros.

    Wide rows with few nonzeros (per-class counts) compare at their first
    differing nonzero: a nonzero ``v`` in column ``c`` where the other row
    has 0 makes the row larger if ``v > 0``. So each nonzero becomes the key
    ``(sign v, -c if v > 0 else c, v)``, a row the sequence of its nonzeros'
    keys padded by ``(0, 0, 0)`` (a row that ended is 0 from there on), and
    the rows sort lexicographically by these few keys instead of by every
    column.
    """
    if rows.shape[1] <= 64 or rows.shape[0] < 2:
        return np.lexsort(rows.T[::-1])
    r, c = np.nonzero(rows)  # row-major: a row's columns ascending
    v = rows[r, c]
    nnz = np.bincount(r, minlength=rows.shape[0])
    slot = np.arange(r.size) - np.repeat(np.cumsum(nnz) - nnz, nnz)
    keys = np.zeros((3, rows.shape[0], int(nnz.max()) + 1))
    keys[0, r, slot] = np.sign(v)
    keys[1, r, slot] = np.where(v > 0, -c, c)
    keys[2, r, slot] = v
    # slot 0's sign, column and value first, then slot 1's ...; np.lexsort's primary key is its last
    return np.lexsort(keys.transpose(2, 0, 1).reshape(-1, rows.shape[0])[::-1])


def _merge_rows(both, d, counts, item_type):
    """Merge types whose rows ``both`` (A's ``d`` columns, then B's) coincide."""
    if both.shape[1] > 64:
        # Wide rows (many classes' counts) are rarely equal: when a random
        # projection already tells every row apart, nothing merges, and the
        # types keep their order without sorting or copying the rows.
        proj = both @ np.random.default_rng(0).standard_normal((both.shape[1], 2))
        if np.unique(proj.view(np.complex128).reshape(-1)).size == both.shape[0]:
            return PairedTypes(both[:, :d], both[:, d:], counts.astype(np.int64), item_type)
    uniq, inv = _unique_rows(both)
    merged = np.bincount(inv, weights=counts, minlength=uniq.shape[0]).astype(np.int64)
    return PairedTypes(uniq[:, :d], uniq[:, d:], merged, inv[item_type])


def _label_rows(metric, gt, at, bt, c):
    """A's and B's rows of each (gold, A, B) label triple side by side, in one array.

    Computed a block of triples at a time: with many classes the rows are
    wide, and whole-array temporaries of them cost more than the bootstrap.
    """
    t = gt.size
    first = _check_rows(metric.stats(gt[:1], at[:1], c), 1, metric.name)
    d = first.shape[1]
    check_memory(16.0 * t * d, f"the rows of {t:,} item types x {d:,} statistics",
                 "fewer classes or a metric with fewer statistics")  # fmt: skip
    both = np.empty((t, 2 * d))
    step = max(1, (1 << 16) // max(1, d))
    for i in range(0, t, step):
        j = min(t, i + step)
        both[i:j, :d] = _check_rows(metric.stats(gt[i:j], at[i:j], c), j - i, metric.name)
        both[i:j, d:] = _check_rows(metric.stats(gt[i:j], bt[i:j], c), j - i, metric.name)
    return both, d


def paired_types(metric: SumMetric, gold, pred_a, pred_b) -> PairedTypes:
    """Group the items of a paired comparison into types with counts.

    For label metrics the items are first grouped by their (gold, A, B) label
    triple (``T <= C^3``), then types with equal statistic rows are merged.
    Otherwise the items are grouped by their rows directly.
    """
    a, b = np.asarray(pred_a), np.asarray(pred_b)
    n = a.size
    if metric.labels:
        (g, a, b), c = _codes(metric, gold, a, b)
        key = (g * c + a) * c + b
        if c**3 <= max(4 * n, 1 << 16):
            counts = np.bincount(key, minlength=c**3)
            keys = np.flatnonzero(counts)
            lookup = np.zeros(c**3, dtype=np.int64)
            lookup[keys] = np.arange(keys.size)
            item_type = lookup[key]
            counts = counts[keys]
        else:
            keys, item_type, counts = np.unique(
                key, return_inverse=True, return_counts=True
            )
            item_type = item_type.reshape(-1)
        gt, at, bt = keys // (c * c), (keys // c) % c, keys % c
        if metric.stats is _prf_stats and 6 * c > 64:
            # Distinct triples have distinct rows, so no types merge, and wide
            # rows keep the triples' order (as _merge_rows does): the rows are
            # built only if a path asks for them.
            def rows():
                both, d = _label_rows(metric, gt, at, bt, c)
                return both[:, :d], both[:, d:]

            return PairedTypes(None, None, counts.astype(np.int64), item_type, rows=rows,
                               labels=np.column_stack([gt, at, bt]), n_classes=c)
        both, d = _label_rows(metric, gt, at, bt, c)
        return _merge_rows(both, d, counts, item_type)
    sa = _check_rows(metric.stats(gold, a), n, metric.name)
    sb = _check_rows(metric.stats(gold, b), n, metric.name)
    return _merge_rows(np.hstack([sa, sb]), sa.shape[1], np.ones(n), np.arange(n))


def check_combine(metric: SumMetric, rows: np.ndarray) -> None:
    """Refuse a ``combine`` that does not return one finite value per sum."""
    probe = np.vstack([rows.sum(0), rows[:1].sum(0) if rows.shape[0] else rows.sum(0)])
    out = np.asarray(metric.combine(probe))
    if out.shape != (2,):
        raise ArgumentError(
            f"metric {metric.name!r}: `combine` must return one value per row of sums, "
            f"shape (2,) for a (2, {rows.shape[1]}) input; got shape {out.shape}."
        )


def metric_value(metric: SumMetric, rows: np.ndarray, counts=None) -> float:
    """The metric of a set of items from their rows (weighted by ``counts``)."""
    sums = rows.sum(0) if counts is None else np.asarray(counts, float) @ rows
    return float(np.asarray(metric.combine(sums[None, :])).reshape(-1)[0])


def score(metric, gold, pred) -> float:
    """The metric of one system on all items (any metric :func:`get_metric` accepts)."""
    metric = get_metric(metric)
    pred = np.asarray(pred)
    if isinstance(metric, CallableMetric):
        return float(metric.fn(gold, pred))
    if metric.labels:
        (g, p), c = _codes(metric, gold, pred)
        rows = metric.stats(g, p, c)
    else:
        rows = metric.stats(gold, pred)
    rows = _check_rows(rows, pred.size, metric.name)
    return metric_value(metric, rows)


def _chunks(total: int, width: int):
    size = max(1, min(total, CHUNK_ELEMENTS // max(1, width)))
    start = 0
    while start < total:
        stop = min(total, start + size)
        yield stop - start
        start = stop


def choose_path(types: PairedTypes, method: str = "auto") -> str:
    """``compressed`` when there are at most n/2 types, else ``index``."""
    if method not in ("auto", "compressed", "index"):
        raise ArgumentError(
            f"`method` must be 'auto', 'compressed' or 'index'; got {method!r}."
        )
    if method != "auto":
        return method
    return "compressed" if 2 * types.n_types <= types.n else "index"


# A multinomial category costs numpy about as much as drawing this many item
# indices (one binomial per type per resample, ~150 ns, against ~4 ns an item:
# the draw, its type and its count), so with many types the rarer ones are
# cheaper to resample by item index.
HEAVY_TYPE = 40


# With the compiled kernel, drawing items beats the multinomial of the
# compressed path from 4 classes (64 types) on (measured: 0.030 s against
# 0.063 s for 10^4 resamples of 10^4 items; at 3 classes too, 0.017 against
# 0.039 s, but 3 classes, at most 27 types, keep the compressed path and its draws).
COMPRESSED_TYPES_COMPILED = 27


def _bootstrap_path(types: PairedTypes, method: str, compiled: bool = False) -> str:
    """The bootstrap's path: ``split`` when many types mix frequent and rare ones."""
    path = choose_path(types, method)
    most = COMPRESSED_TYPES_COMPILED if compiled else 256
    if method != "auto" or (path == "compressed" and types.n_types <= most):
        return path
    heavy = np.count_nonzero(types.counts >= HEAVY_TYPE)
    if heavy == types.n_types:
        return "compressed"
    return "split" if heavy else "index"


def _summer(both: np.ndarray):
    """``f(counts) -> counts.T @ both`` for ``counts`` of shape (T, resamples).

    Label metrics' rows are mostly zeros (an item touches its gold class and
    each system's predicted class): then the product runs over the nonzero
    entries only (``O(b nnz)`` instead of ``O(b T d)``), same sums.
    """
    if both.size < 4096 or np.count_nonzero(both) * 8 > both.size:
        return lambda counts: counts.T.astype(float) @ both
    from scipy import sparse

    rows_t = sparse.csr_matrix(both).T.tocsr()  # not from both.T: a strided scan
    return lambda counts: (rows_t @ counts.astype(float)).T


def _delta(metric, sums_a, sums_b):
    out = np.asarray(metric.combine(sums_a)) - np.asarray(metric.combine(sums_b))
    if out.shape != sums_a.shape[:-1]:
        raise ArgumentError(
            f"metric {metric.name!r}: `combine` returned shape {out.shape} for "
            f"{sums_a.shape[0]} resamples; it must return one value per resample."
        )
    return out


def uniform_integers(rng, high: int, size: int) -> np.ndarray:
    """``size`` independent integers uniform on ``[0, high)``, exactly, as int64.

    The distribution of ``rng.integers(0, high, size)`` at about half its
    cost: Lemire's multiply-shift on 32 random bits, ``(u * high) >> 32``,
    redrawing the ``u`` whose low product bits fall below ``2**32 mod high``
    (probability ``high / 2**32``), which makes it exact. The bits come from
    the generator's 64-bit raw output; a generator without 64-bit output
    (MT19937) uses ``rng.integers``.
    """
    bits = rng.bit_generator
    if not 0 < high < 1 << 31 or isinstance(bits, np.random.MT19937):
        return rng.integers(0, high, size=size)
    x = np.multiply(bits.random_raw((size + 1) // 2).view(np.uint32)[:size], high,
                    dtype=np.int64)
    low = (1 << 32) % high
    if low and size:
        low_words = x.view(np.uint32)[0 if np.little_endian else 1 :: 2]
        # a rejection is rare (high / 2**32 a draw): a minimum finds out cheaper than a mask
        bad = np.flatnonzero(low_words < low) if low_words.min() < low else low_words[:0]
        while bad.size:
            x[bad] = rng.integers(0, 1 << 32, size=bad.size) * high
            bad = bad[(x[bad] & 0xFFFFFFFF) < low]
    x >>= 32
    return x


def bootstrap_deltas(
    metric: SumMetric, types: PairedTypes, n_resamples: int, rng, method: str = "auto"
) -> tuple[np.ndarray, str]:
    """Draw ``delta = M(A, x*) - M(B, x*)`` on ``n_resamples`` bootstrap test sets.

    Each bootstrap test set ``x*`` draws ``n`` items with replacement. The
    compressed path draws type counts from ``Multinomial(n, counts / n)``;
    the index path draws item indices; the split path (many types, chosen
    by ``method="auto"``) draws how many of the ``n`` land on the frequent
    types, ``Binomial(n, n_frequent / n)``, their type counts as a
    multinomial and the rest as item indices among the rare types. All give
    the same distribution.

    With the compiled kernel the index and split paths draw in it
    (:func:`compiled_sums`, or for label types :func:`_label_deltas`): the
    split path's multinomial then covers the frequent types and the number
    of rare draws at once, and from 4 classes (more than 27 types) on it
    draws items instead of the compressed path's multinomial.

    Returns
    -------
    (deltas, path)
    """
    kernel = _kernel()
    compiled = kernel is not None and hasattr(rng.bit_generator, "capsule") and types.n < 1 << 31
    path = _bootstrap_path(types, method, compiled)
    if compiled and path != "compressed":
        draw = _label_deltas if types.labels is not None else _compiled_deltas
        return draw(kernel, metric, types, n_resamples, rng, path), path + "-compiled"
    n, t_count = types.n, types.n_types
    d = types.stats_a.shape[1]
    summed = _summer(types.both())
    heavy = types.counts >= HEAVY_TYPE if path == "split" else np.full(t_count, path != "index")
    heavy_types = np.flatnonzero(heavy)
    pvals = types.counts[heavy] / types.counts[heavy].sum()
    light_types = types.item_type[~heavy[types.item_type]]  # one entry per rare item
    out = np.empty(n_resamples)
    pos = filled = 0
    held = np.empty((min(n_resamples, max(1, CHUNK_ELEMENTS // (2 * d))), 2 * d))
    # Small chunks keep the count table (T x chunk) in cache while counting;
    # a type's counts over the chunk's resamples are adjacent.
    width = max(CHUNK_ELEMENTS >> 4, 2 * (light_types.size + t_count), 2 * d)
    for size in _chunks(n_resamples, width if path != "compressed" else max(t_count, 2 * d)):
        if path == "compressed":
            counts = rng.multinomial(n, pvals, size=size).T
        elif path == "index":
            # the draws of rng.integers(0, n, (size, n)), by the cheaper route
            idx = uniform_integers(rng, n, size * n)
            np.take(types.item_type * size, idx, out=idx, mode="clip")
            idx.reshape(size, n)[...] += np.arange(size)[:, None]
            counts = np.bincount(idx, minlength=size * t_count).reshape(t_count, size)
        else:
            n_heavy = rng.binomial(n, 1 - light_types.size / n, size=size)
            idx = uniform_integers(rng, light_types.size, int(size * n - n_heavy.sum()))
            np.take(light_types * size, idx, out=idx, mode="clip")  # in range: no check
            idx += np.repeat(np.arange(size), n - n_heavy)
            counts = np.bincount(idx, minlength=size * t_count).reshape(t_count, size)
            counts[heavy_types] += rng.multinomial(n_heavy, pvals).T
        held[filled : filled + size] = summed(counts)
        filled += size
        if filled + size > held.shape[0] or pos + filled == n_resamples:
            # one combine for many chunks: its per-call overhead dominated them
            out[pos : pos + filled] = _delta(metric, held[:filled, :d], held[:filled, d:])
            pos, filled = pos + filled, 0
    return out, path


KERNEL_ELEMENTS = 1 << 17  # sums per kernel call: ~1 MB, in the cache for the combine


@functools.cache
def _kernel():
    """The compiled bootstrap kernel, or None (not built, or ``VAREVAL_NO_KERNEL`` is set)."""
    return compiled("vareval.stats.testset._bootkernel")


def padded_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's nonzeros as (columns, values), shape (T, K), padded with zeros.

    ``K`` is the most nonzeros of any row (at least 1); a padding entry has
    value 0 at the row's first nonzero column (or column 0), so it changes
    no sum.
    """
    r, c = np.nonzero(rows)
    nnz = np.bincount(r, minlength=rows.shape[0])
    k = max(1, int(nnz.max(initial=0)))
    slot = np.arange(r.size) - np.repeat(np.cumsum(nnz) - nnz, nnz)
    cols = np.zeros((rows.shape[0], k), dtype=np.int32)
    cols[r[slot == 0], :] = c[slot == 0, None]
    cols[r, slot] = c
    vals = np.zeros((rows.shape[0], k))
    vals[r, slot] = rows[r, c]
    return cols, vals


def pcg64_state(bits) -> bytes | None:
    """A PCG64's state (state, inc) as it lies in memory, else None.

    The kernel steps numpy's PCG64 itself (the same words as its
    ``next_uint64``, without a call per word) when the generator's memory
    holds exactly these bytes; any other bit generator (or a layout that
    does not match) is called word by word.
    """
    if type(bits) is not np.random.PCG64:
        return None
    state = bits.state["state"]
    return b"".join(state[key].to_bytes(16, sys.byteorder) for key in ("state", "inc"))


def compiled_sums(kernel, rng, lookup, cols, vals, given_types, given, width):
    """Each resample's sums of its types' rows, in the compiled kernel.

    Resample ``r`` has ``given[r, h]`` items of type ``given_types[h]`` and
    draws ``given[r, -1]`` more uniformly from ``lookup`` (the type of each
    item that can be drawn); its sums are its type counts times the rows
    ``(cols, vals)`` (:func:`padded_rows`). The draws are a function of the
    Generator: 64-bit words from its bit generator, each giving ``k`` base-
    ``high`` digits by Lemire's multiply-shift with rejection (exact; the
    source, ``_bootkernel.c``, gives the definition).

    Returns
    -------
    ndarray, shape (resamples, width)
    """
    sums = np.empty((given.shape[0], width))
    bits = rng.bit_generator
    with bits.lock:
        kernel.resample_sums(bits.capsule, pcg64_state(bits), lookup, cols, vals, given_types,
                             given, sums)
    return sums


def _compiled_deltas(kernel, metric, types, n_resamples, rng, path):
    """The index and split paths' deltas, drawn by the compiled kernel."""
    n, d = types.n, types.stats_a.shape[1]
    cols, vals = padded_rows(types.both())
    heavy = types.counts >= HEAVY_TYPE if path == "split" else np.zeros(types.n_types, bool)
    given_types = np.flatnonzero(heavy).astype(np.int32)
    lookup = types.item_type[~heavy[types.item_type]].astype(np.int32)  # one entry per rare item
    shares = np.append(types.counts[heavy], lookup.size) / n
    out = np.empty(n_resamples)
    step = max(1, KERNEL_ELEMENTS // (2 * d))
    for pos in range(0, n_resamples, step):
        size = min(step, n_resamples - pos)
        if given_types.size:
            given = rng.multinomial(n, shares, size=size)  # frequent types, then the rare draws
        else:
            given = np.full((size, 1), n, dtype=np.int64)
        sums = compiled_sums(kernel, rng, lookup, cols, vals, given_types, given, 2 * d)
        out[pos : pos + size] = _delta(metric, sums[:, :d], sums[:, d:])
    return out


# Frequent types of the label path are drawn as a multinomial: one category
# costs numpy about as much as this many item draws in the kernel (an item of
# a type both systems got right adds to one count, any other to two or three).
LABEL_HEAVY_TYPE = 40
LABEL_HEAVY_ONE = 100


def _label_deltas(kernel, metric, types, n_resamples, rng, path):
    """The index and split paths' deltas for label types, counted as each item is drawn.

    Each resample's label counts (:func:`label_slots`) are accumulated in
    the kernel (``label_counts``: one to three counts a drawn item, ``O(n)``
    a resample whatever the number of classes) and combined from them
    (:func:`count_deltas`), so no type rows are summed or built. A
    multinomial gives each resample's counts of the frequent types and how
    many of its items are drawn among the rare items that add to one count
    (both systems right), two (one right) and three (neither). For the
    metrics the kernel combines (:func:`count_deltas`) the whole bootstrap
    is one kernel call (``label_deltas``), which calls the multinomial
    between blocks itself: the same words as a call a block.
    """
    n, c = types.n, types.n_classes
    slots = label_slots(types.labels, c)
    gold, a, b = types.labels.T
    adds = 3 - (a == gold) - (b == gold)  # counts an item adds to: its first slots
    heavy = types.counts >= np.where(adds == 1, LABEL_HEAVY_ONE, LABEL_HEAVY_TYPE)
    heavy &= path == "split"
    given_slots = np.ascontiguousarray(slots[heavy])
    items = types.item_type[~heavy[types.item_type]]  # one entry per rare item
    tables = [np.ascontiguousarray(slots[items[adds[items] == k], :k]) for k in (1, 2, 3)]
    tables[0] = tables[0].ravel()
    shares = np.append(types.counts[heavy], [len(t) for t in tables]) / n
    out = np.empty(n_resamples)
    step = min(n_resamples, max(1, KERNEL_ELEMENTS // slots_width(c)))
    bits = rng.bit_generator
    spec = _compiled_combine(metric, n)
    if spec is not None:
        def draw(size):
            # the multinomial between blocks, called from the kernel (the same words as a
            # call a block), takes the generator's lock itself: not reentrant before numpy 2.4
            bits.lock.release()
            try:
                return rng.multinomial(n, shares, size=size)
            finally:
                bits.lock.acquire()

        with bits.lock:  # every block drawn and combined in one call
            kernel.label_deltas(bits.capsule, pcg64_state(bits), *tables, given_slots, draw,
                                n_resamples, step, c, *spec, out)
        return out
    held = np.empty((step, slots_width(c)), dtype=np.int32)  # one table, reused: no page faults
    for pos in range(0, n_resamples, step):
        size = min(step, n_resamples - pos)
        given = rng.multinomial(n, shares, size=size)
        with bits.lock:
            kernel.label_counts(bits.capsule, pcg64_state(bits), *tables, given_slots, given,
                                held[:size])
        out[pos : pos + size] = count_deltas(kernel, metric, held[:size], c, n)
    return out


def count_deltas(kernel, metric, counts, n_classes, n_items):
    """``delta`` of each row of label counts (the columns of :func:`label_slots`).

    In the kernel (``prf_deltas``) for precision, recall, F-beta, MCC and
    balanced accuracy (MCC up to ``MCC_EXACT_ITEMS`` items a row, ``n_items``
    at most), with numpy's bits; other metrics of these counts in numpy.
    """
    spec = _compiled_combine(metric, n_items)
    if kernel is not None and spec is not None:
        out = np.empty(counts.shape[0])
        kernel.prf_deltas(counts, n_classes, *spec, out)
        return out
    return _delta(metric, *prf_counts(counts, n_classes))


def _label_jackknife(metric, types):
    """Leave-one-item-out deltas of label types, from the counts without the rows."""
    c, t_count = types.n_classes, types.n_types
    slots = label_slots(types.labels, c)
    total = np.bincount(slots.reshape(-1), weights=np.repeat(types.counts, 3),
                        minlength=slots_width(c)).astype(np.int32)
    kernel = _kernel()
    out = np.empty(t_count)
    step = max(1, CHUNK_ELEMENTS // (8 * slots_width(c)))
    for i in range(0, t_count, step):
        j = min(t_count, i + step)
        counts = np.repeat(total[None, :], j - i, axis=0)
        counts[np.arange(j - i)[:, None], slots[i:j]] -= 1  # a spare slot twice: no matter
        out[i:j] = count_deltas(kernel, metric, counts, c, types.n - 1)
    return out


def randomization_deltas(
    metric: SumMetric, types: PairedTypes, n_resamples: int, rng, method: str = "auto"
) -> tuple[np.ndarray, str]:
    """Draw ``delta`` after swapping A's and B's outputs per item with probability 1/2.

    The compressed path draws the number of swapped items of each type from
    ``Binomial(c_t, 1/2)``; the index path draws a swap mask per item. Items
    whose rows are equal for A and B are unaffected by a swap and skipped.

    Returns
    -------
    (deltas, path)
    """
    path = choose_path(types, method)
    base_a, base_b = types.totals()
    out = np.empty(n_resamples)
    pos = 0
    if path == "compressed":
        differ = (types.stats_a != types.stats_b).any(axis=1)
        diff = (types.stats_b - types.stats_a)[differ]
        counts = types.counts[differ]
        summed = _summer(diff)
        for size in _chunks(n_resamples, max(counts.size, diff.shape[1])):
            moved = summed(rng.binomial(counts, 0.5, size=(size, counts.size)).T)
            out[pos : pos + size] = _delta(metric, base_a + moved, base_b - moved)
            pos += size
        return out, path
    # A swap mask per item whose rows differ, counted by type.
    diff = types.stats_b - types.stats_a
    differ_type = (diff != 0).any(axis=1)
    items = types.item_type[differ_type[types.item_type]]
    m = items.size
    t_count = types.n_types
    summed = _summer(diff)
    for size in _chunks(n_resamples, 2 * max(m, t_count)):
        mask = rng.random((size, m)) < 0.5
        swapped = (items[None, :] * size + np.arange(size)[:, None])[mask]
        counts = np.bincount(swapped, minlength=size * t_count)
        moved = summed(counts.reshape(t_count, size))
        out[pos : pos + size] = _delta(metric, base_a + moved, base_b - moved)
        pos += size
    return out, path


def discordant_items(types: PairedTypes) -> int:
    """Items whose rows differ between A and B: the only ones a swap changes."""
    differ = (types.stats_a != types.stats_b).any(axis=1)
    return int(types.counts[differ].sum())


def all_randomization_deltas(metric: SumMetric, types: PairedTypes) -> np.ndarray:
    """``delta`` under every one of the ``2^m`` swap patterns of the ``m`` discordant items.

    The exact randomization distribution (each pattern has probability
    ``2^-m``); meant for small ``m``, where it is cheaper than sampling.
    """
    base_a, base_b = types.totals()
    diff = types.stats_b - types.stats_a
    items = types.item_type[(diff != 0).any(axis=1)[types.item_type]]
    m = items.size
    masks = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(float)
    moved = masks @ diff[items]
    return _delta(metric, base_a + moved, base_b - moved)


def jackknife_deltas(metric: SumMetric, types: PairedTypes) -> np.ndarray:
    """Leave-one-item-out ``delta`` for each type (one value per type, shape (T,))."""
    if types.labels is not None:
        return _label_jackknife(metric, types)
    total_a, total_b = types.totals()
    return _delta(
        metric, total_a[None, :] - types.stats_a, total_b[None, :] - types.stats_b
    )


# --- the slow generic path --------------------------------------------------


def loop_bootstrap_deltas(
    metric: CallableMetric, gold, pred_a, pred_b, n_resamples: int, rng, progress=None
) -> np.ndarray:
    """The slow path: a Python loop calling ``metric.fn`` on each bootstrap test set."""
    n = pred_a.size
    fn = metric.fn
    out = np.empty(n_resamples)
    with progress_bar(n_resamples, "bootstrap", progress) as bar:
        for i in range(n_resamples):
            idx = rng.integers(0, n, size=n)
            g = None if gold is None else gold[idx]
            out[i] = float(fn(g, pred_a[idx])) - float(fn(g, pred_b[idx]))
            bar.update(1)
    return out


def loop_randomization_deltas(
    metric: CallableMetric, gold, pred_a, pred_b, n_resamples: int, rng, progress=None
) -> np.ndarray:
    """The slow path: a Python loop over random swaps of A's and B's outputs."""
    n = pred_a.size
    fn = metric.fn
    out = np.empty(n_resamples)
    with progress_bar(n_resamples, "randomization", progress) as bar:
        for i in range(n_resamples):
            swap = rng.random(n) < 0.5
            a = np.where(swap, pred_b, pred_a)
            b = np.where(swap, pred_a, pred_b)
            out[i] = float(fn(gold, a)) - float(fn(gold, b))
            bar.update(1)
    return out


def loop_jackknife_deltas(metric: CallableMetric, gold, pred_a, pred_b, progress=None):
    """Leave-one-out deltas by ``n`` calls of ``metric.fn``."""
    n = pred_a.size
    out = np.empty(n)
    keep = np.ones(n, dtype=bool)
    with progress_bar(n, "jackknife", progress) as bar:
        for i in range(n):
            keep[i] = False
            g = None if gold is None else gold[keep]
            out[i] = float(metric.fn(g, pred_a[keep])) - float(
                metric.fn(g, pred_b[keep])
            )
            keep[i] = True
            bar.update(1)
    return out


# --- the vectorized callable path: chunks of resampled copies of the items ---


def _row_deltas(metric: CallableMetric, gold, a, b) -> np.ndarray:
    return np.asarray(metric.fn(gold, a), dtype=float) - np.asarray(
        metric.fn(gold, b), dtype=float
    )


def rows_bootstrap_deltas(
    metric: CallableMetric, gold, pred_a, pred_b, n_resamples: int, rng
) -> np.ndarray:
    """Bootstrap deltas of a vectorized callable metric, a chunk of resamples per call.

    Draws the same item indices as :func:`loop_bootstrap_deltas` for the same ``rng``.
    """
    n = pred_a.size
    out = np.empty(n_resamples)
    pos = 0
    for size in _chunks(n_resamples, 4 * n):
        idx = rng.integers(0, n, size=(size, n))
        g = None if gold is None else gold[idx]
        out[pos : pos + size] = _row_deltas(metric, g, pred_a[idx], pred_b[idx])
        pos += size
    return out


def rows_randomization_deltas(
    metric: CallableMetric, gold, pred_a, pred_b, n_resamples: int, rng
) -> np.ndarray:
    """Randomization deltas of a vectorized callable metric, a chunk of swaps per call."""
    n = pred_a.size
    out = np.empty(n_resamples)
    pos = 0
    for size in _chunks(n_resamples, 4 * n):
        swap = rng.random((size, n)) < 0.5
        g = None if gold is None else np.broadcast_to(gold, (size, n))
        out[pos : pos + size] = _row_deltas(
            metric, g, np.where(swap, pred_b, pred_a), np.where(swap, pred_a, pred_b)
        )
        pos += size
    return out


def rows_jackknife_deltas(metric: CallableMetric, gold, pred_a, pred_b) -> np.ndarray:
    """Leave-one-out deltas of a vectorized callable metric, a chunk of items per call."""
    n = pred_a.size
    out = np.empty(n)
    start = 0
    for size in _chunks(n, 4 * n):
        left_out = np.arange(start, start + size)[:, None]
        keep = np.arange(n - 1)[None, :]
        idx = keep + (keep >= left_out)  # every item but the left-out one
        g = None if gold is None else gold[idx]
        out[start : start + size] = _row_deltas(metric, g, pred_a[idx], pred_b[idx])
        start += size
    return out


def finite_or_raise(value: float, what: str) -> float:
    """Refuse a NaN metric value with a message naming it."""
    if not math.isfinite(value):
        raise ArgumentError(
            f"{what} is not a finite number ({value}); check the metric."
        )
    return value
