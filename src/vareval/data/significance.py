"""Per-item prediction tables: classifier metrics and paired significance tests.

A predictions table has one row per test item and

- *wide* format: a gold column and one column per system with its output on
  that item (a label, or a per-item score for ``metric="mean"``); or
- *long* format: an item id column, a system-name column, a prediction column
  and the gold column (one row per item and system).

Nothing is dropped: missing labels, duplicate (item, system) rows, items a
system did not predict and gold labels that disagree between rows of the same
item are refused with the column and rows named.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
import pandas as pd

from vareval import datasets
from vareval.data.tables import FrameResult
from vareval.data.validate import _rows, label_text, labels, metric_values, require_columns
from vareval.errors import ArgumentError, DataError
from vareval.stats._checks import check_memory
from vareval.stats.testset import classification as cls
from vareval.stats.testset import resampling as rs
from vareval.stats.testset import roc
from vareval.stats.testset import significance as sig

EXAMPLE = "digits_predictions.csv"


def load_example() -> pd.DataFrame:
    """The bundled example: four scikit-learn classifiers on the digits test half.

    Columns ``item``, ``gold``, ``logreg``, ``knn``, ``random_forest``,
    ``naive_bayes``; see ``vareval/datasets/digits_predictions.md``.
    """
    return datasets.load(EXAMPLE)


def example_path():
    """The bundled example's file path."""
    return datasets.path(EXAMPLE)


@dataclasses.dataclass(frozen=True)
class Predictions:
    """Aligned arrays from a predictions table.

    Attributes
    ----------
    gold : ndarray or None
        Gold labels, one per item.
    systems : dict of str to ndarray
        Each system's outputs on the same items, in the same order.
    items : ndarray
        Item ids (row numbers for a wide table).
    """

    gold: np.ndarray | None
    systems: dict
    items: np.ndarray


def _show(value) -> str:
    """An item id as a person reads it (no numpy type in the text)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _label_array(series: pd.Series, column: str, role: str) -> np.ndarray:
    """A label column as text (classes are compared as written; see ``label_text``)."""
    if series.dtype.kind in "iu":  # no empty cell; numpy writes each int as label_text does
        values = series.to_numpy()
        width = max(len(str(values.min())), len(str(values.max()))) if values.size else 1
        return values.astype(f"U{width}")
    if series.dtype == object:
        text = series.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
        number = series.map(lambda v: isinstance(v, numbers.Number)).to_numpy(dtype=bool)
        if text.any() and number.any():
            raise DataError(
                f"{role} column {column!r} mixes text and number labels (text in data row "
                f"{int(np.argmax(text)) + 1}, a number in data row {int(np.argmax(number)) + 1}); "
                "as scikit-learn, vareval refuses a mix (is 1 the class '1'?): make every label "
                "text (or every one a number)."
            )
    text = label_text(series, column, role).to_numpy(dtype=object)
    width = max(map(len, text), default=1)  # numpy's text arrays are fixed-width: 4 B a character
    what = f"{role} column {column!r} as text ({text.size:,} labels, longest {width:,} characters)"
    check_memory(4.0 * width * text.size, what, "a class label is a short name: check the column")
    return text.astype(str)


def _refuse_id_columns(df, gold, candidates, item=None) -> None:
    """Refuse a column taken as a system by default that looks like an item id.

    A system's predictions repeat classes and agree with gold sometimes; a
    column that is different in every row of five or more (while gold is not)
    or never equals gold in twenty or more rows is far more likely an id than
    a system. Systems named explicitly are taken as given.
    """
    gold_text = None if gold is None else _label_array(df[gold], gold, "gold")
    for col in candidates:
        text = label_text(df[col], col, "system")
        unique = len(df) >= 5 and text.nunique() == len(df)
        if unique and (gold_text is None or np.unique(gold_text).size < len(df)):
            why = "has a different value in every row"
        elif gold_text is not None and len(df) >= 20 and not np.any(text.to_numpy() == gold_text):
            why = f"never equals the gold column {gold!r}"
        else:
            continue
        hint = ("the systems (--system, systems=)" if item is not None else
                "the item column (--item, item=) or the systems (--system, systems=)")
        looks = "an id or a score" if item is not None else "an item id"
        raise DataError(
            f"column {col!r} {why}, so it looks like {looks}, not a system's predictions; "
            f"name {hint}."
        )


def read_predictions(
    df: pd.DataFrame,
    *,
    gold: str | None,
    systems=None,
    metric="accuracy",
    item: str | None = None,
    system_column: str | None = None,
    prediction: str | None = None,
    positive: str | None = None,
) -> Predictions:
    """Turn a wide or long predictions table into aligned arrays.

    Parameters
    ----------
    df : DataFrame
    gold : str or None
        The gold label column (None only for ``metric="mean"``).
    systems : list of str, optional
        Wide: the system columns (default: every column but ``gold`` and
        ``item``). Long: the system names to keep (default: all, in order of
        appearance).
    metric : str or metric object
        Decides whether outputs are labels or numeric scores.
    item, system_column, prediction : str, optional
        Long format: give all three (item id, system name, output columns).
    positive : str, optional
        The positive class, for the metrics that need one.

    Raises
    ------
    DataError
        Missing columns or values, duplicate or unmatched rows, conflicting gold.
    """
    metric = rs.get_metric(metric, positive=_positive(positive))
    scores = rs.reads_scores(metric)
    long = system_column is not None or prediction is not None
    if long:
        if not (item and system_column and prediction):
            raise DataError(
                "long format needs the item, system and prediction columns; "
                "give all three (--item, --system-column, --prediction)."
            )
        df = _pivot(df, gold, systems, item, system_column, prediction)
        item = "__item__"
        systems = [c for c in df.columns if c not in ("__item__", "__gold__")]
        gold = "__gold__" if gold is not None else None
    defaulted = systems is None
    if item is not None:  # before the systems it decides (a misspelt item is not a system)
        require_columns(df, [item], "item")
    if systems is None:
        systems = [c for c in df.columns if c not in (gold, item)]
    systems = [str(s) for s in systems]
    if len(set(systems)) != len(systems):
        raise DataError(f"systems {', '.join(systems)} name a column twice.")
    require_columns(df, systems, "system")
    if gold is not None:
        require_columns(df, [gold], "gold")
        if gold in systems:
            raise DataError(
                f"column {gold!r} is the gold column and cannot be a system."
            )
    if metric.needs_gold and gold is None:
        raise DataError(f"metric {metric.name!r} needs a gold column (--gold).")
    if defaulted and not scores and not long:
        _refuse_id_columns(df, gold, systems, item)
    if scores:
        outputs = {s: metric_values(df, s) for s in systems}
        gold_arr = None if gold is None else _label_array(df[gold], gold, "gold")
    else:
        arrays = {
            "__gold__": None if gold is None else _label_array(df[gold], gold, "gold")
        }
        arrays.update({s: _label_array(df[s], s, "system") for s in systems})
        gold_arr = arrays.pop("__gold__")
        outputs = arrays
    items = (
        label_text(df[item], item, "item").to_numpy() if item is not None else np.arange(len(df))
    )
    if item is not None and not long:
        dup = pd.Series(items).duplicated(keep=False).to_numpy()
        if dup.any():
            raise DataError(
                f"item column {item!r} repeats ids in data row(s) {_rows(dup)}; "
                "a wide table has one row per item."
            )
    return Predictions(gold=gold_arr, systems=outputs, items=items)


def _positive(positive):
    """The positive class as text, as the labels are read (``"1"``, not 1)."""
    if positive is not None and not isinstance(positive, str):
        raise DataError(
            f"the positive class must be given as text, as labels are read as text "
            f"({str(positive)!r}, not {positive!r}; --positive, positive=)."
        )
    return positive


def _pivot(df, gold, systems, item, system_column, prediction) -> pd.DataFrame:
    """Long table to wide: one row per item, one column per system."""
    require_columns(df, [item, system_column, prediction], "long-format")
    names = labels(df, system_column, "system")
    df = pd.DataFrame(
        {
            item: labels(df, item, "item"),
            prediction: label_text(df[prediction], prediction, "prediction"),
            **({} if gold is None else {gold: labels(df, gold, "gold")}),
        }
    )
    keep = np.ones(len(df), bool)
    if systems is not None:
        systems = [str(s) for s in systems]
        present = set(names)
        for s in systems:
            if s not in present:
                raise DataError(
                    f"system {s!r} not found in column {system_column!r} "
                    f"(systems: {', '.join(map(str, pd.unique(names)))})."
                )
        keep = names.isin(systems).to_numpy()
    sub = df.loc[keep]
    sub_names = names[keep]
    key = pd.DataFrame({"item": sub[item].to_numpy(), "system": sub_names.to_numpy()})
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.zeros(len(df), bool)
        rows[np.flatnonzero(keep)[dup]] = True
        raise DataError(
            f"(item, system) pairs repeat in data row(s) {_rows(rows)}; "
            "each system predicts each item once."
        )
    wide = pd.DataFrame(
        {
            "item": key["item"],
            "system": key["system"],
            "pred": sub[prediction].to_numpy(),
        }
    ).pivot(index="item", columns="system", values="pred")
    order = systems if systems is not None else list(pd.unique(sub_names))
    wide = wide[order]
    holes = wide.isna().any(axis=1).to_numpy()
    if holes.any():
        first = wide.index[holes][0]
        lacking = [s for s in order if pd.isna(wide.loc[first, s])]
        raise DataError(
            f"item {_show(first)} has no prediction from system(s) "
            f"{', '.join(lacking)} ({int(holes.sum())} item(s) incomplete); "
            "every system must predict every item."
        )
    out = wide.reset_index().rename(columns={"item": "__item__"})
    out.columns = [str(c) for c in out.columns]
    if gold is not None:
        require_columns(df, [gold], "gold")
        g = sub[[item, gold]].drop_duplicates()
        clash = g[item].duplicated(keep=False)
        if clash.any():
            raise DataError(
                f"gold column {gold!r} gives different labels for item "
                f"{_show(g.loc[clash, item].iloc[0])}; each item has one gold label."
            )
        out["__gold__"] = out["__item__"].map(dict(zip(g[item], g[gold], strict=True)))
    return out


@dataclasses.dataclass(frozen=True, repr=False)
class SignificanceReport(FrameResult):
    """The result of :func:`significance`, with tidy tables.

    Attributes
    ----------
    comparison : SystemComparison or AUCComparison
        The statistics-layer result (every test's full result); an
        ``AUCComparison`` for DeLong's test.
    test : str
        The test used: ``"bootstrap"``, ``"randomization"``, ``"delong"``,
        ``"mcnemar"``, ``"wilcoxon"`` or ``"t"``.
    n_items : int
    seed : int or None
    """

    comparison: sig.SystemComparison | roc.AUCComparison
    test: str
    n_items: int
    seed: object = None

    def to_frame(self) -> pd.DataFrame:
        """One row per comparison: system, versus, scores, estimate, CI, p, adjusted p."""
        return pd.DataFrame.from_records(self.comparison.records())

    def scores_frame(self) -> pd.DataFrame:
        """One row per system: its metric on the whole test set."""
        return pd.DataFrame(
            {
                "system": list(self.comparison.scores),
                "score": list(self.comparison.scores.values()),
            }
        )

    def to_dict(self) -> dict:
        """Plain values for JSON."""
        return {
            "test": self.test,
            "test_reason": self.comparison.test_reason,
            "n_items": self.n_items,
            "seed": self.seed,
            **self.comparison.to_dict(),
        }


@dataclasses.dataclass(frozen=True, repr=False)
class MetricsReport(FrameResult):
    """The result of :func:`metrics`: per-system classifier metrics."""

    systems: dict

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, class or average): precision, recall, F, support."""
        frames = [
            pd.DataFrame.from_records(m.records()).assign(system=name)
            for name, m in self.systems.items()
        ]
        out = pd.concat(frames, ignore_index=True)
        return out[["system"] + [c for c in out.columns if c != "system"]]

    def summary_frame(self) -> pd.DataFrame:
        """One row per system: accuracy, MCC, balanced accuracy (and sensitivity, specificity)."""
        rows = []
        for name, m in self.systems.items():
            row = {
                "system": name,
                "accuracy": m.accuracy,
                "mcc": m.mcc,
                "balanced_accuracy": m.balanced_accuracy,
            }
            if m.positive is not None:
                row.update(
                    positive=m.positive,
                    sensitivity=m.sensitivity,
                    specificity=m.specificity,
                )
            rows.append(row)
        return pd.DataFrame.from_records(rows)

    def confusion_frame(self, system: str) -> pd.DataFrame:
        """The confusion matrix of one system: rows gold, columns predicted."""
        cm = self.systems[system].confusion
        return pd.DataFrame(
            cm.matrix,
            index=pd.Index(cm.labels, name="gold"),
            columns=pd.Index(cm.labels, name="predicted"),
        )

    def to_dict(self) -> dict:
        """Plain values for JSON."""
        return {name: m.to_dict() for name, m in self.systems.items()}


def significance(
    df: pd.DataFrame,
    *,
    gold: str | None,
    systems=None,
    metric="accuracy",
    test: str = "auto",
    baseline: str | None = None,
    all_pairs: bool = False,
    correction: str = "holm",
    n_resamples: int = 10_000,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    ci: str = "auto",
    smooth: bool = True,
    rng=None,
    item: str | None = None,
    system_column: str | None = None,
    prediction: str | None = None,
    positive: str | None = None,
) -> SignificanceReport:
    """Paired significance tests between systems on one test set, from a table.

    Each system is compared with ``baseline`` (default: the first system), or
    every pair with ``all_pairs=True``, by the paired bootstrap or approximate
    randomization test of :mod:`vareval.stats.testset.significance` (by default the
    one that holds its level at this many items), with Holm
    (default) or Bonferroni adjusted p-values. ``delta = M(system) -
    M(versus)`` with its bootstrap CI is reported beside every p-value.

    Parameters
    ----------
    df : DataFrame
        A wide or long predictions table (see :func:`read_predictions`).
    gold, systems, item, system_column, prediction
        Column roles, as for :func:`read_predictions`.
    metric, test, baseline, all_pairs, correction, n_resamples, alternative,
    confidence, ci, smooth, rng
        As for :func:`vareval.stats.compare_systems`; besides, ``test="delong"``
        compares ROC AUCs by DeLong's test (:func:`vareval.stats.compare_aucs`;
        the system columns hold per-item scores, ``metric`` must be ``"auc"``),
        and ``metric="auc"`` with ``test="auto"`` chooses it.
    positive : str, optional
        The positive class (text, as the labels are read) for
        ``sensitivity``, ``specificity`` and ``auc``.

    Returns
    -------
    SignificanceReport
        ``.to_frame()`` gives one row per comparison.

    Examples
    --------
    >>> import vareval
    >>> from vareval.data.significance import load_example
    >>> rep = vareval.significance(load_example(), gold="gold", item="item",
    ...                            systems=["logreg", "knn"], metric="macro-f1", rng=0)
    >>> rep.to_frame()[["system", "versus"]].values.tolist()
    [['knn', 'logreg']]
    """
    preds = read_predictions(
        df,
        gold=gold,
        systems=systems,
        metric=metric,
        item=item,
        system_column=system_column,
        prediction=prediction,
        positive=positive,
    )
    if len(preds.systems) < 2:
        raise DataError(
            "need at least two systems to compare; "
            f"got {', '.join(preds.systems) or 'none'}."
        )
    resolved = rs.get_metric(metric, positive=positive)
    if test == "delong" or (test == "auto" and resolved.name == "auc"):
        return _delong(preds, resolved, test, baseline, all_pairs, correction,
                       alternative, confidence, positive)
    comparison = sig.compare_systems(
        preds.gold,
        preds.systems,
        metric=resolved,
        test=test,
        baseline=baseline,
        all_pairs=all_pairs,
        correction=correction,
        n_resamples=n_resamples,
        alternative=alternative,
        confidence=confidence,
        ci=ci,
        smooth=smooth,
        rng=rng,
        progress=None,
    )
    first = comparison.results[0].test
    if test not in sig.CLASSICAL_TESTS:
        test = "bootstrap" if first == "paired bootstrap" else "randomization"
    return SignificanceReport(
        comparison=comparison,
        test=test,
        n_items=preds.items.size,
        seed=rng if isinstance(rng, int) else None,
    )


def _delong(preds, metric, test, baseline, all_pairs, correction, alternative,
            confidence, positive) -> SignificanceReport:
    """DeLong's test of every comparison: the systems' columns are scores."""
    if metric.name != "auc":
        raise DataError(
            f"DeLong's test (--test delong) compares ROC AUCs of per-item scores; "
            f"use --metric auc, not {metric.name!r}."
        )
    comparison = roc.compare_aucs(
        preds.gold,
        preds.systems,
        pos_label=positive,
        baseline=baseline,
        all_pairs=all_pairs,
        correction=correction,
        alternative=alternative,
        confidence=confidence,
    )
    if test == "auto":
        comparison = dataclasses.replace(
            comparison,
            test_reason="DeLong's test: the AUCs of scores on the same items have an "
            "estimated covariance (DeLong et al. 1988), so no resampling is needed",
        )
    return SignificanceReport(
        comparison=comparison, test="delong", n_items=preds.items.size
    )


def metrics(
    df: pd.DataFrame,
    *,
    gold: str,
    systems=None,
    beta: float = 1.0,
    zero_division: float = 0.0,
    item: str | None = None,
    system_column: str | None = None,
    prediction: str | None = None,
    positive: str | None = None,
) -> MetricsReport:
    """Confusion matrix, accuracy, MCC, balanced accuracy and per-class P/R/F-beta.

    For each system the classes are the sorted union of the gold labels and
    that system's predictions (scikit-learn's default), so a label the system
    predicts but gold never contains is a class with support 0 whose
    predictions are false positives. See
    :func:`vareval.stats.classification_metrics`. With ``positive`` (text, as
    the labels are read), binary data also get sensitivity and specificity.

    Returns
    -------
    MetricsReport
        ``.to_frame()`` gives one row per (system, class or average).
    """
    preds = read_predictions(
        df,
        gold=gold,
        systems=systems,
        metric="accuracy",
        item=item,
        system_column=system_column,
        prediction=prediction,
    )
    positive = _positive(positive)
    out = {}
    for name, p in preds.systems.items():
        try:
            out[name] = cls.classification_metrics(
                preds.gold, p, beta=beta, zero_division=zero_division, pos_label=positive
            )
        except ArgumentError as err:  # say which system's predictions break the binary rule
            if positive is None:
                raise
            raise type(err)(f"system {name!r}: {err}") from None
    return MetricsReport(systems=out)
