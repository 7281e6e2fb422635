"""One test set: cross-validation as an evaluation protocol.

- :func:`kfold_splits` and :func:`stratified_kfold_splits`: seeded,
  repeatable index splits, repeated with independent streams;
- :func:`cross_validate`: one row per (repeat, fold) with every metric, for
  any ``fit_predict(X_train, y_train, X_test) -> y_pred`` callable;
- :func:`holdout_split` and :func:`holdout_evaluate`: the protocol of a
  fixed held-out test set, with cross-validation inside the training part
  only (Jurafsky and Martin, ch. 4: the test set is looked at once);
- :func:`corrected_resampled_ttest`: comparing two models over (repeated)
  cross-validation with the Nadeau and Bengio (2003) correction. The folds
  share training data, so their scores are positively correlated and the
  naive paired t test, which treats them as independent, is anti-conservative
  (Dietterich 1998; Bouckaert and Frank 2004).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy import special

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats._checks import (
    as_alternative,
    as_confidence,
    as_positive_int,
    as_rng,
    as_scores,
    constant_differences,
)
from vareval.stats._result import (
    ConfidenceInterval,
    LegacyIntervalMethod,
    Result,
    renamed,
    t_interval_at,
)
from vareval.stats.testset import resampling as rs


@dataclasses.dataclass(frozen=True, repr=False)
class Split(Result):
    """One train/test split: ``repeat`` and ``fold`` number, index arrays.

    No figure: a split's train and test indices.
    """

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray

    def to_frame(self):
        """One row per index: ``repeat``, ``fold``, ``part`` (train or test), ``index``."""
        import pandas as pd

        index = np.concatenate([self.train, self.test])
        part = ["train"] * self.train.size + ["test"] * self.test.size
        out = {"repeat": self.repeat, "fold": self.fold, "part": part, "index": index}
        return pd.DataFrame(out)


@dataclasses.dataclass(frozen=True, repr=False)
class CrossValidation(Result):
    """One row per (repeat, fold) of a cross-validation.

    No figure: the per-fold scores share training data, so a picture of them as
    independent runs would mislead; corrected_resampled_ttest tests them.

    Attributes
    ----------
    repeat, fold, n_train, n_test : ndarray of int, shape (rows,)
        The columns identifying each row.
    scores : dict of str to ndarray
        Each metric's score on each row's test fold.
    k : int
        Folds per repeat.
    repeats : int
        Repetitions with independent shuffles.
    stratified : bool
        Whether folds keep the class proportions.
    """

    repeat: np.ndarray
    fold: np.ndarray
    n_train: np.ndarray
    n_test: np.ndarray
    scores: dict
    k: int
    repeats: int
    stratified: bool

    def records(self) -> list[dict]:
        """One record per (repeat, fold): a tidy table's rows."""
        return [
            {
                "repeat": int(self.repeat[i]),
                "fold": int(self.fold[i]),
                "n_train": int(self.n_train[i]),
                "n_test": int(self.n_test[i]),
                **{name: float(v[i]) for name, v in self.scores.items()},
            }
            for i in range(self.repeat.size)
        ]

    def mean(self, metric: str) -> float:
        """The mean of ``metric`` over all rows (the usual CV estimate)."""
        return float(np.mean(self.scores[metric]))


@dataclasses.dataclass(frozen=True, repr=False)
class HoldoutEvaluation(Result):
    """Cross-validation inside the training part, then one look at the test set.

    No figure: the test scores of a held-out split, read from its fields (see
    CrossValidation).

    Attributes
    ----------
    cv : CrossValidation
        Cross-validation on the training part only (for model selection).
    test_scores : dict of str to float
        Metrics of the model fitted on the whole training part, on the
        held-out test set.
    train_index, test_index : ndarray of int
        The fixed split.
    """

    cv: CrossValidation
    test_scores: dict
    train_index: np.ndarray
    test_index: np.ndarray

    def to_frame(self):
        """The cross-validation rows (``part`` "cv") and the held-out row (``part`` "test")."""
        import pandas as pd

        test = {"n_train": self.train_index.size, "n_test": self.test_index.size}
        rows = [{"part": "cv", **r} for r in self.cv.records()]
        rows.append({"part": "test", **test, **self.test_scores})
        return pd.DataFrame.from_records(rows)


@dataclasses.dataclass(frozen=True, repr=False)
class CorrectedTTestResult(Result):
    """Nadeau-Bengio corrected resampled t test.

    No figure: one corrected t test with its interval, read from its fields.

    Attributes
    ----------
    statistic : float
        The corrected t statistic.
    pvalue : float
    estimate : float
        Mean difference ``mean(a - b)`` over the folds (formerly ``delta``).
    low, high : float
        Corrected two-sided t interval for the expected difference at
        ``confidence``; ``confidence_interval(level)`` recomputes it at any level.
    se, naive_se : float
        Corrected and naive standard errors of ``estimate``.
    df : int
        ``J - 1`` for ``J`` (repeat, fold) rows.
    test_train_ratio : float
        ``n_test / n_train``, the correction's term.
    alternative : str
    confidence : float
    n : int
        Rows ``J``.
    """

    statistic: float
    pvalue: float
    estimate: float
    low: float
    high: float
    se: float
    naive_se: float
    df: int
    test_train_ratio: float
    alternative: str
    confidence: float
    n: int

    _interval = ("low", "high")
    _deprecated = {"delta": renamed("estimate")}
    confidence_interval = LegacyIntervalMethod()

    def _interval_at(self, level: float) -> ConfidenceInterval:
        return t_interval_at(self.estimate, self.se, self.df, level)


def _k_iv(k, n):
    k = as_positive_int(k, "k", minimum=2)
    if k > n:
        raise ArgumentError(f"`k` ({k}) cannot exceed the number of items ({n}).")
    return k


def kfold_splits(
    n: int, k: int = 5, *, repeats: int = 1, shuffle: bool = True, rng=None
) -> list[Split]:
    """K-fold index splits of ``n`` items, optionally repeated.

    Each repeat partitions the items into ``k`` folds whose sizes differ by
    at most one; each fold is the test set once. With ``shuffle`` (default)
    the items are permuted first, each repeat with its own independent stream
    (``SeedSequence.spawn`` of ``rng``); without it, folds are contiguous
    blocks and every repeat is the same.

    Returns
    -------
    list of Split
        Ordered by repeat, then fold.
    """
    n = as_positive_int(n, "n", minimum=2)
    k = _k_iv(k, n)
    repeats = as_positive_int(repeats, "repeats")
    out = []
    for r, stream in enumerate(as_rng(rng).spawn(repeats)):
        if shuffle:
            fold = np.empty(n, dtype=np.int64)
            fold[stream.permutation(n)] = np.arange(n) % k
        else:
            fold = np.repeat(
                np.arange(k), np.diff(np.linspace(0, n, k + 1).astype(int))
            )
        out.extend(_from_folds(fold, k, r))
    return out


def stratified_kfold_splits(
    y, k: int = 5, *, repeats: int = 1, rng=None
) -> list[Split]:
    """Stratified k-fold splits: each fold keeps the class proportions of ``y``.

    Items are shuffled within each class (independently per repeat), the
    classes are laid end to end, and folds are dealt round robin; so each
    class's count per fold, and each fold's size, differ by at most one.
    Warns when a class has fewer than ``k`` items (some folds miss it).
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ArgumentError(f"`y` must be one-dimensional; got {y.ndim} dimensions.")
    n = y.size
    k = _k_iv(k, n)
    repeats = as_positive_int(repeats, "repeats")
    (codes,), classes = rs.encode_labels(y)
    small = np.bincount(codes) < k
    if small.any():
        warnings.warn(
            f"class(es) {', '.join(map(str, classes[small][:5]))} have "
            f"fewer than k={k} "
            "items; some test folds will not contain them.",
            VarevalWarning,
            stacklevel=2,
        )
    out = []
    for r, stream in enumerate(as_rng(rng).spawn(repeats)):
        perm = stream.permutation(n)
        order = perm[np.argsort(codes[perm], kind="stable")]
        fold = np.empty(n, dtype=np.int64)
        fold[order] = np.arange(n) % k
        out.extend(_from_folds(fold, k, r))
    return out


def _from_folds(fold, k, repeat):
    idx = np.arange(fold.size)
    return [Split(repeat, f, idx[fold != f], idx[fold == f]) for f in range(k)]


def _take(X, idx):
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    if isinstance(X, np.ndarray):
        return X[idx]
    return [X[i] for i in idx]


def _metrics_iv(metrics) -> dict[str, Callable]:
    if isinstance(metrics, str) or callable(metrics):
        metrics = [metrics]
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    elif isinstance(metrics, Sequence) and metrics:
        items = [
            (m if isinstance(m, str) else getattr(m, "__name__", "metric"), m)
            for m in metrics
        ]
    else:
        raise ArgumentError(
            "`metrics` must be a metric name, a callable, or a list of them."
        )
    out = {}
    for name, m in items:
        metric = rs.get_metric(m)
        out[str(name)] = lambda g, p, metric=metric: rs.score(metric, g, p)
    return out


def cross_validate(
    fit_predict: Callable,
    X,
    y,
    *,
    metrics=("accuracy",),
    k: int = 5,
    repeats: int = 1,
    stratified: bool = True,
    rng=None,
) -> CrossValidation:
    """Evaluate a model by (repeated, stratified) k-fold cross-validation.

    Estimand: the expected score of a model trained on ``(k-1)/k`` of the
    data. The rows are not independent (training sets overlap), so compare
    two models with :func:`corrected_resampled_ttest`, not a plain t test.

    Parameters
    ----------
    fit_predict : callable
        ``fit_predict(X_train, y_train, X_test) -> y_pred``: trains a fresh
        model and predicts the test items.
    X : array_like or DataFrame
        Features, indexed by item (``X[idx]`` or ``X.iloc[idx]``).
    y : array_like
        Gold labels (or targets), one per item.
    metrics : str, callable, list or dict, default ("accuracy",)
        Names as for :func:`vareval.stats.testset.resampling.get_metric` or callables
        ``fn(y_true, y_pred) -> float``; a dict names them.
    k, repeats : int
        Folds, and repetitions with fresh shuffles.
    stratified : bool, default True
        Use :func:`stratified_kfold_splits` (else :func:`kfold_splits`).
    rng : None, int or Generator
        Seeds the splits (the model's own randomness is ``fit_predict``'s).

    Returns
    -------
    CrossValidation
    """
    y = np.asarray(y)
    if len(X) != y.size:
        raise ArgumentError(f"`X` has {len(X)} rows but `y` has {y.size} labels.")
    scorers = _metrics_iv(metrics)
    if stratified:
        splits = stratified_kfold_splits(y, k, repeats=repeats, rng=rng)
    else:
        splits = kfold_splits(y.size, k, repeats=repeats, rng=rng)
    scores = {name: np.empty(len(splits)) for name in scorers}
    for i, s in enumerate(splits):
        pred = np.asarray(fit_predict(_take(X, s.train), y[s.train], _take(X, s.test)))
        if pred.shape != (s.test.size,):
            raise ArgumentError(
                "`fit_predict` must return one prediction per test item "
                f"({s.test.size}); "
                f"got shape {pred.shape}."
            )
        for name, fn in scorers.items():
            scores[name][i] = fn(y[s.test], pred)
    return CrossValidation(
        repeat=np.array([s.repeat for s in splits]),
        fold=np.array([s.fold for s in splits]),
        n_train=np.array([s.train.size for s in splits]),
        n_test=np.array([s.test.size for s in splits]),
        scores=scores,
        k=int(k),
        repeats=int(repeats),
        stratified=bool(stratified),
    )


def holdout_split(y, test_size: float = 0.2, *, stratified: bool = True, rng=None):
    """A fixed held-out test set: ``(train_index, test_index)``.

    ``test_size`` is a fraction in (0, 1); with ``stratified`` each class
    contributes its share (rounded, items dealt round robin after a shuffle
    within classes), so the test set keeps the class proportions.
    """
    y = np.asarray(y)
    n = y.size
    if not isinstance(test_size, float | int) or not 0 < test_size < 1:
        raise ArgumentError(
            f"`test_size` must be a fraction in (0, 1); got {test_size!r}."
        )
    n_test = int(round(test_size * n))
    if not 1 <= n_test <= n - 1:
        raise ArgumentError(
            f"`test_size`={test_size} leaves {n_test} of {n} items for testing; "
            "need at least one item on each side."
        )
    gen = as_rng(rng)
    perm = gen.permutation(n)
    if stratified:
        (codes,), _ = rs.encode_labels(y)
        order = perm[np.argsort(codes[perm], kind="stable")]
        # Spread test positions evenly along the class-sorted order.
        pos = np.floor((np.arange(n_test) + gen.random()) * n / n_test).astype(int)
        test = np.sort(order[np.minimum(pos, n - 1)])
    else:
        test = np.sort(perm[:n_test])
    train = np.setdiff1d(np.arange(n), test)
    return train, test


def holdout_evaluate(
    fit_predict: Callable,
    X,
    y,
    *,
    test_size: float = 0.2,
    metrics=("accuracy",),
    k: int = 5,
    repeats: int = 1,
    stratified: bool = True,
    rng=None,
) -> HoldoutEvaluation:
    """Held-out test set plus cross-validation inside the training part.

    The protocol of Jurafsky and Martin (ch. 4): fix a test set once;
    cross-validate on the rest (for model choice and an estimate of
    variability); fit on the whole training part and score the test set
    once. The test items never enter any cross-validation fold.
    """
    y = np.asarray(y)
    split_rng, cv_rng = as_rng(rng).spawn(2)
    train, test = holdout_split(y, test_size, stratified=stratified, rng=split_rng)
    cv = cross_validate(
        fit_predict,
        _take(X, train),
        y[train],
        metrics=metrics,
        k=k,
        repeats=repeats,
        stratified=stratified,
        rng=cv_rng,
    )
    pred = np.asarray(fit_predict(_take(X, train), y[train], _take(X, test)))
    scorers = _metrics_iv(metrics)
    return HoldoutEvaluation(
        cv=cv,
        test_scores={name: float(fn(y[test], pred)) for name, fn in scorers.items()},
        train_index=train,
        test_index=test,
    )


def corrected_resampled_ttest(
    scores_a,
    scores_b,
    *,
    n_train: int,
    n_test: int,
    alternative: str = "two-sided",
    confidence: float = 0.95,
) -> CorrectedTTestResult:
    """Nadeau and Bengio's (2003) corrected resampled t test of two models.

    Estimand: the expected difference in score between models A and B
    trained on ``n_train`` items. With ``d_j = a_j - b_j`` over ``J``
    (repeat, fold) rows,

    ``t = mean(d) / sqrt((1/J + n_test/n_train) s_d^2)``, ``df = J - 1``.

    The naive paired t test uses ``1/J`` alone, which ignores the correlation
    between rows that share training data and rejects too often (Nadeau and
    Bengio 2003; Bouckaert and Frank 2004). For k-fold CV,
    ``n_test / n_train = 1 / (k - 1)``.

    Parameters
    ----------
    scores_a, scores_b : array_like, shape (J,)
        The two models' scores on the same (repeat, fold) rows.
    n_train, n_test : int
        Training and test items per fold (typical sizes).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: A better.
    confidence : float, default 0.95

    Returns
    -------
    CorrectedTTestResult
    """
    a = as_scores(scores_a, "scores_a", min_n=2)
    b = as_scores(scores_b, "scores_b", min_n=2)
    if a.size != b.size:
        raise ArgumentError(
            "`scores_a` and `scores_b` must be paired by fold; "
            f"got {a.size} and {b.size} rows."
        )
    n_train = as_positive_int(n_train, "n_train")
    n_test = as_positive_int(n_test, "n_test")
    alternative = as_alternative(alternative)
    confidence = as_confidence(confidence)
    d = a - b
    if constant_differences(a, b):  # as paired_t: an SD of 0 makes t infinite or 0/0
        raise ArgumentError(
            f"the corrected resampled t test is undefined: all {d.size} fold differences "
            f"equal {d[0]:+.6g}, so their SD is 0 (t = inf, p = 0, a zero-width interval); "
            "compare per-item predictions with a paired test on one test set instead."
        )
    j = d.size
    ratio = n_test / n_train
    var = float(np.var(d, ddof=1))
    se = math.sqrt((1 / j + ratio) * var)
    mean = float(d.mean())
    df = j - 1
    t = mean / se
    if alternative == "greater":
        p = float(special.stdtr(df, -t))
    elif alternative == "less":
        p = float(special.stdtr(df, t))
    else:
        p = float(2 * special.stdtr(df, -abs(t)))
    half = float(special.stdtrit(df, (1 + confidence) / 2)) * se
    return CorrectedTTestResult(
        statistic=float(t),
        pvalue=min(p, 1.0),
        estimate=mean,
        low=mean - half,
        high=mean + half,
        se=se,
        naive_se=math.sqrt(var / j),
        df=df,
        test_train_ratio=ratio,
        alternative=alternative,
        confidence=confidence,
        n=j,
    )
