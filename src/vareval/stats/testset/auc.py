"""ROC AUC as the Mann-Whitney statistic: the primitive the AUC metric and DeLong's test share."""

from __future__ import annotations

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._lazy import stats


def positive_flags(gold: np.ndarray, pos_label) -> np.ndarray:
    """Which items are positive; refuses gold labels that are not two classes with it.

    Checked without sorting (gold of resamples arrives a million labels at a
    time): the items that are not positive must all carry one label.
    """
    flags = gold == pos_label
    others = gold[~flags]
    if flags.any() and others.size and np.all(others == others.flat[0]):
        return flags
    classes = np.unique(gold)
    shown = ", ".join(repr(c.item() if isinstance(c, np.generic) else c) for c in classes[:10])
    if not flags.any():
        raise ArgumentError(
            f"the positive class {pos_label!r} does not occur in the gold labels "
            f"(classes: {shown}); name one of them."
        )
    raise ArgumentError(
        "AUC needs gold labels of exactly two classes (the positive class and one "
        f"other); got {classes.size} ({shown})."
    )


def mann_whitney_auc(positive: np.ndarray, scores: np.ndarray):
    """AUC from the midranks of all items (one sort); rows of 2-D input are data sets.

    ``positive`` and ``scores`` have the same shape ``(n,)`` or ``(rows, n)``;
    a row without a positive or a negative item is refused (AUC is undefined).
    """
    m = np.count_nonzero(positive, axis=-1)
    n = positive.shape[-1] - m
    if np.any(m * n == 0):
        raise ArgumentError(
            "AUC is undefined on a (re)sample without a positive or without a negative "
            "item; with this few of one class use DeLong's test (--test delong)."
        )
    ranks = stats.rankdata(scores, axis=-1)
    auc = (np.sum(ranks * positive, axis=-1) - m * (m + 1) / 2) / (m * n)
    return float(auc) if np.ndim(auc) == 0 else auc
