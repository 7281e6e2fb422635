"""The design of an experiment, derived once for every command and the report.

What is independent (the replication unit: seeds), which factors are nested
in which (configurations in seeds; in models when each model has its own
search space), what reruns repeat, what is paired, whether the seed re-draws
the train/test split and with what sizes, and the metric's bounds. A run
store's design is read from its declaration (``df.attrs["spec"]``); a plain
table's is inferred from its labels (``seed``, ``config``, ``rerun``) and
said so; arguments override both. Every analysis states the design it
assumed in one line, :meth:`Design.statement`.

Reruns are read as the design says they are (:func:`reruns_of`), and every
command takes its rows through :func:`analysed_rows`: reruns that repeat the
same streams and are bit-identical in the analysed metric in every
(method, seed, configuration) cell are one observation (analysed once);
same-stream reruns that differ anywhere measure nondeterminism and are
nested in their cell (each cell enters as its mean, or the mixed model keeps
them as the rerun level within it); independent reruns are replications.
"""

from __future__ import annotations

import dataclasses
import numbers
import re

import numpy as np
import pandas as pd

from vareval.errors import ArgumentError
from vareval.stats._result import Result

REPEATED = ("training", "data-sampling")
# Metrics whose values lie in [0, 1] whatever the data: matched on the name's words.
_UNIT_METRICS = {
    "accuracy", "acc", "f1", "auc", "auroc", "auprc", "roc", "precision", "recall",
    "sensitivity", "specificity", "jaccard", "iou", "em", "exact", "pass",
}  # fmt: skip
_PERCENT = {"pct", "percent", "percentage"}  # "accuracy_pct", "accuracy (%)": in [0, 100]


@dataclasses.dataclass(frozen=True, repr=False)
class Design(Result):
    """The design an analysis assumed (see the module docstring).

    No figure: a design is read from its fields or :meth:`statement`.

    Attributes
    ----------
    source : {"store", "labels", "none"}
        Where it came from: a run store's declaration (read from the store,
        or carried by a file vareval wrote from it), a table's labels, or
        nowhere (rows are then treated as independent runs, and said so).
    unit : str or None
        Column of the replication unit (independent draws), e.g. ``"seed"``.
    units : int
        Number of units (0 without a unit).
    configs : {"nested", "crossed", "chosen"} or None
        Configurations sampled anew in each unit, or shared across units;
        "chosen": one per unit and method, chosen on validation (a selection's
        output, ``vareval select``).
    config_in : tuple of str
        The columns configurations are nested in (``("seed", "model")``).
    reruns : int
        Most runs one (method, unit, configuration) cell holds.
    runs_per_unit : int
        Most rows one method has in one unit (1: the runs are the units).
    rerun_mode : {"same", "independent"} or None
        Whether reruns repeat the same streams (nondeterminism only).
    rerun_reading : Reruns or None
        What is there and how it is read (:func:`reruns_of`); None without
        a metric to read it in.
    pair_on : tuple of str
        Columns matching one method's runs with another's.
    split : {"re-drawn", "fixed", "unknown"}
        Whether each unit drew its own train/test split.
    split_from : str
        Where that was read (empty when unknown).
    test_fraction : float or None
        Share of the data in each test split (for the corrected t test).
    test_fraction_from : str
        Who declared it (the store, a flag).
    train_fraction : float or None
        Share of the data each model was trained on; the corrected test uses
        ``test_fraction / train_fraction``.
    train_fraction_from : str
        Who declared it, or how it was derived (``1 - test share``).
    bounds : (float, float) or None
        The metric's range, when known.
    bounds_from : str
        Where the bounds came from.
    carried_by : str
        The file that carried the store's declaration ("" when read from the
        store itself or from labels; see :mod:`vareval.data.carried`).
    selected_on : str
        The validation metric each unit's configuration was chosen on ("").
    """

    source: str
    unit: str | None
    units: int
    configs: str | None
    config_in: tuple
    reruns: int
    runs_per_unit: int
    rerun_mode: str | None
    rerun_reading: object
    pair_on: tuple
    split: str
    split_from: str
    test_fraction: float | None
    test_fraction_from: str
    bounds: tuple | None
    bounds_from: str
    train_fraction: float | None = None
    train_fraction_from: str = ""
    carried_by: str = ""
    selected_on: str = ""

    _headline = ("source", "unit", "units")

    @property
    def clustered(self) -> bool:
        """Whether rows within a unit are several runs (configurations or reruns)."""
        return self.unit is not None and self.runs_per_unit > 1

    def statement(self) -> str:
        """The design in one line: ``design (run store): units: 6 seeds; ...``."""
        store = f"run store, carried by {self.carried_by}" if self.carried_by else "run store"
        where = {"store": store, "labels": "read from the labels"}
        if self.unit is None:
            return (
                "design: no seed column, so every row is taken as an independent run "
                "(give the seed column to pair and cluster by it)"
            )
        parts = [f"units: {self.units} {self.unit}s"]
        if self.configs == "nested":
            parts.append(f"configurations nested in {' and '.join(self.config_in)}")
        elif self.configs == "crossed":
            parts.append("configurations crossed with " + self.unit)
        elif self.configs == "chosen":
            parts.append(f"one configuration per {' and '.join(self.config_in)}, chosen on "
                         f"{self.selected_on!r}")
        if self.rerun_reading is not None:
            if self.rerun_reading.statement():
                parts.append(self.rerun_reading.statement())
        elif self.reruns > 1:
            what = {"same": " (same streams)", "independent": " (fresh streams)"}
            parts.append(f"{self.reruns} reruns each{what.get(self.rerun_mode, '')}")
        split = {"re-drawn": "splits re-drawn per seed", "fixed": "splits fixed"}
        parts.append(split.get(self.split, "splits unknown (taken as fixed)") + self._shares())
        if self.bounds is not None:
            parts.append(f"bounds [{self.bounds[0]:g}, {self.bounds[1]:g}]")
        return f"design ({where[self.source]}): " + "; ".join(parts)

    def _shares(self) -> str:
        """`` (test 0.25 / train 0.5 = 0.5)``: the ratio the corrected test uses."""
        test, train = self.test_fraction, self.train_fraction
        if self.split != "re-drawn" or test is None:
            return ""
        if train is None:
            return f" (test {test:g}, training share unknown)"
        return f" (test {test:g} / train {train:g} = {test / train:.3g})"


@dataclasses.dataclass(frozen=True, repr=False)
class Reruns(Result):
    """What the reruns of a table are and how every analysis reads them.

    No figure: read from its fields or :meth:`statement`.

    Attributes
    ----------
    cell : tuple of str
        The columns of one cell: method, unit (seed) and configuration.
    counts : (int, float, int)
        Fewest, median and most usable runs (done, finite metric) per cell.
    cells : int
        Cells holding two or more runs.
    differ : int
        Of those, the cells whose runs differ in an analysed metric.
    mode : {"same", "independent"} or None
        Whether the reruns repeat the same streams (a store's
        ``rerun_mode``; a table with a ``rerun`` column: the same); None when
        the rows are not named as reruns.
    read_as : {"once", "nested", "replications", "rows"}
        ``once``: same streams, identical in every cell: one observation per
        cell (the lowest rerun's row). ``nested``: same streams, differing in
        at least one cell: nondeterminism nested in the cell, which enters as
        its mean (or as a level of the mixed model, ``kept``). ``replications``:
        independent reruns, each a row. ``rows``: no reruns to read (one run
        per cell, or rows not named as reruns), taken as given.
    metrics : tuple of str
        The metrics the identity was checked in.
    kept : bool
        Nested reruns kept as the rerun level within the cell (the mixed model).
    """

    cell: tuple
    counts: tuple
    cells: int
    differ: int
    mode: str | None
    read_as: str
    metrics: tuple
    kept: bool = False

    _headline = ("read_as", "cells", "differ")

    def statement(self) -> str:
        """The reruns in words, e.g. ``2 reruns each (same streams), identical ...``."""
        low, median, high = self.counts
        if high <= 1:
            return ""
        noun = "reruns" if self.mode else "runs"
        count = (
            f"{high} {noun} each" if low == high
            else f"{low}-{high} {noun}, median {median:g}"
        )  # fmt: skip
        cell = ", ".join(c for c in self.cell if c in ("seed", "config"))
        if self.read_as == "rows":
            return f"{count} per method and ({cell}) cell"
        if self.read_as == "replications":
            return f"{count} (fresh streams): replications"
        if self.read_as == "once":
            return f"{count} (same streams), identical: nondeterminism 0; analysed once"
        how = (
            "kept as the rerun level within the cell" if self.kept
            else "each cell analysed as its mean"
        )  # fmt: skip
        return (
            f"{count} (same streams), differing in {self.differ} of {self.cells} cells: "
            f"nondeterminism, nested in each method's ({cell}) cell; {how}"
        )


def _cell_columns(df: pd.DataFrame, by, spec: dict) -> list[str]:
    """The columns of one (method, seed, configuration) cell present in ``df``."""
    by = [by] if isinstance(by, str) else list(by or [])
    method = ["experiment"] if spec and "experiment" in df.columns else []
    cols = [*by, *method, "seed", "config"]
    return [c for c in dict.fromkeys(cols) if c in df.columns]


def _usable(df: pd.DataFrame, metrics) -> np.ndarray:
    """Rows that are done (``status``) with a finite value in every metric."""
    ok = np.ones(len(df), dtype=bool)
    if "status" in df.columns:
        ok &= (df["status"].astype(str) == "done").to_numpy()
    for m in metrics:
        values = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
        ok &= np.isfinite(values)
    return ok


def _group_ids(df: pd.DataFrame, cols, memo=None) -> tuple[np.ndarray, int]:
    """Each row's group of ``cols`` as ``df.groupby(cols)`` forms them, and their number.

    Ids ``0..k-1`` (-1: a key is missing, a row groupby drops), from one
    ``pd.factorize`` per column, as pandas' grouping does. ``memo`` (a dict
    for this ``df``) keeps each column's and each grouping's ids.
    """
    memo = {} if memo is None else memo
    key = ("groups", *cols)
    if key not in memo:
        ids, k = np.zeros(len(df), dtype=np.int64), 1
        for c in cols:
            if c not in memo:
                codes, uniques = pd.factorize(df[c])
                memo[c] = (codes.astype(np.int64), len(uniques))
            codes, size = memo[c]
            if len(cols) == 1:
                ids, k = codes, size
                break
            pair = np.where((ids < 0) | (codes < 0), -1, ids * size + codes)
            ids = np.full(len(df), -1, dtype=np.int64)
            ok = pair >= 0
            ids[ok], uniques = pd.factorize(pair[ok])
            k = len(uniques)
        memo[key] = (ids, k)
    return memo[key]


def _group_sizes(df: pd.DataFrame, cols, memo=None) -> np.ndarray:
    """``df.groupby(cols).size()``'s values (in another order)."""
    ids, k = _group_ids(df, cols, memo)
    return np.bincount(ids[ids >= 0], minlength=k)


def _cells_that_differ(df: pd.DataFrame, cols, metrics, memo=None) -> int:
    """Groups of ``cols`` holding two distinct values of some metric.

    ``(df.groupby(cols)[metrics].nunique() > 1).any(axis=1).sum()``: values
    are told apart by ``pd.factorize``, as ``nunique`` does; missing ones don't count.
    """
    ids, k = _group_ids(df, cols, memo)
    differs = np.zeros(k, dtype=bool)
    for m in metrics:
        values, uniques = pd.factorize(df[m])
        ok = (ids >= 0) & (values >= 0)
        pairs = pd.unique(ids[ok] * max(len(uniques), 1) + values[ok])
        differs |= np.bincount(pairs // max(len(uniques), 1), minlength=k) > 1
    return int(differs.sum())


def reruns_of(df: pd.DataFrame, metrics, by=None) -> Reruns:
    """Read a table's reruns as its design says they are (see :class:`Reruns`).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per run; a run store's declaration in ``df.attrs["spec"]``
        (its ``rerun_mode``). A table with a ``rerun`` column and no store
        has reruns of the same streams.
    metrics : str or sequence of str
        The analysed metric(s): reruns are identical when every metric is.
    by : str or list of str, optional
        The method column(s).

    Notes
    -----
    Identical means bit-identical (``==``) in every analysed metric within
    every cell that holds two or more usable runs. When only some cells are
    identical, the reruns still measure nondeterminism (an identical cell
    is one draw of it, zero), so the whole table is read as ``nested``. The
    rule needs a cell: without a seed and a configuration column the rows
    are taken as given.
    """
    known = df.attrs.get("reruns")
    wanted = {metrics} if isinstance(metrics, str) else set(metrics or ())
    if isinstance(known, Reruns) and wanted <= set(known.metrics):
        return known  # read before, on the rows as they came (analysed_rows)
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics or ())
    metrics = tuple(m for m in metrics if m in df.columns)
    spec = df.attrs.get("spec") or {}
    cell = _cell_columns(df, by, spec)
    ok = _usable(df, metrics)
    rows = df if ok.all() else df.loc[ok]
    memo = {}
    sizes = np.ones(1, dtype=np.int64) if rows.empty or not cell else _group_sizes(rows, cell, memo)
    if sizes.size:
        ordered = np.sort(sizes)  # (np.median's partition is slow on many ties)
        half = ordered.size // 2
        median = ordered[half] if ordered.size % 2 else (ordered[half - 1] + ordered[half]) / 2
        counts = (int(ordered[0]), float(median), int(ordered[-1]))
    else:  # every row misses a key: pandas' refusal, as before
        sizes = rows.groupby(cell).size()
        counts = (int(sizes.min()), float(sizes.median()), int(sizes.max()))
    mode = spec.get("rerun_mode", "same") if spec else (
        "same" if "rerun" in df.columns else None
    )  # fmt: skip
    multi = int((sizes > 1).sum())
    named = mode is not None and bool({"seed", "config"} & set(cell))
    differ = 0
    if named and multi and metrics:
        differ = _cells_that_differ(rows, cell, metrics, memo)
    if not named or not multi:
        read_as = "rows"
    elif mode == "independent":
        read_as = "replications"
    else:
        read_as = "nested" if differ else "once"
    return Reruns(
        cell=tuple(cell), counts=counts, cells=multi, differ=differ, mode=mode,
        read_as=read_as, metrics=metrics,
    )  # fmt: skip


def analysed_rows(df: pd.DataFrame, metrics, by=None, *, keep_reruns: bool = False, bounds=None):
    """The rows an analysis takes, its reruns read as the design says (:func:`reruns_of`).

    Identical same-stream reruns leave one row per cell (the lowest
    rerun's); differing same-stream reruns leave one row per cell with the
    cell's mean in each metric, unless ``keep_reruns`` (the mixed model, which
    keeps them as the rerun level within the cell); independent reruns and
    rows not named as reruns are returned as given. Rows that are not usable
    (failed, non-finite) are left in place for the analysis to count. The
    reading travels in ``attrs["reruns"]`` (read on the rows as they came),
    and collapsed rows carry ``attrs["reruns_read"]``: reading again changes
    nothing. Every rerun is held to the metric's bounds (``bounds``, or known
    from its name) before a cell's mean is taken.
    """
    reading = reruns_of(df, metrics, by)
    if df.attrs.get("reruns_read"):
        return df  # already one row per cell
    out = df.copy(deep=False)
    out.attrs = {**df.attrs, "reruns": reading}
    if not (reading.read_as == "once" or (reading.read_as == "nested" and not keep_reruns)):
        return out
    ok = _usable(df, reading.metrics)
    rows = df.loc[ok]
    if "rerun" in rows.columns:
        rows = rows.sort_values("rerun", kind="stable")
    if reading.read_as == "nested":
        from vareval.data.validate import metric_values  # every rerun within the bounds

        values = pd.DataFrame(
            {m: metric_values(rows, m, bounds) for m in reading.metrics}, index=rows.index
        )
        means = values.groupby([rows[c] for c in reading.cell], sort=False).transform("mean")
        rows = rows.assign(**{m: means[m] for m in reading.metrics})
    first = ~rows.duplicated(list(reading.cell), keep="first")
    keep = pd.concat([rows.loc[first], df.loc[~ok]]).sort_index(kind="stable")
    keep.attrs = {**out.attrs, "reruns_read": True}
    return keep


def metric_bounds(metric: str | None, bounds=None) -> tuple[tuple | None, str]:
    """The metric's bounds and where they came from: given, or known from its name."""
    if bounds is not None:
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ArgumentError(
                f"`bounds` must be two numbers (low, high); got {bounds!r}."
            ) from None
        if not low < high:
            raise ArgumentError(f"`bounds` must have low < high; got {bounds!r}.")
        return (low, high), "given"
    name = str(metric or "").lower()
    words = set(re.split(r"[^a-z0-9]+", name))
    hit = sorted(words & _UNIT_METRICS)
    if hit and (words & _PERCENT or "%" in name):
        return (0.0, 100.0), f"{metric!r} is a percentage ({hit[0]})"
    if hit:
        return (0.0, 1.0), f"{metric!r} is a proportion ({hit[0]})"
    return None, ""


_TEST_KEYS = ("test_fraction", "test_size")
_TRAIN_KEYS = ("train_fraction", "train_size")
_VAL_KEYS = ("val_fraction", "val_size", "validation_fraction", "validation_size")


@dataclasses.dataclass(frozen=True)
class Split:
    """Whether each unit re-drew the split, and its test and training shares, each with who said so.

    ``test``/``train`` are shares of the data (or, both read from a store,
    counts of examples); only ``test / train`` enters the corrected test.
    """

    split: str
    split_from: str
    test: float | None
    test_from: str
    train: float | None
    train_from: str


def _declared(params: dict, keys):
    """The first of ``keys`` in a store's ``[params]``: (value, who declared it)."""
    key = next((k for k in keys if params.get(k) is not None), None)
    if key is None:
        return None, ""
    return params[key], f"the store's [params] {key} = {params[key]!r}"


def split_of(spec: dict, repeated=None, test_fraction=None, train_fraction=None) -> Split:
    """Whether the split was re-drawn, its test and training shares, each with who declared it.

    A flag or argument wins; else the store's declaration (``[randomness]
    split``, ``[params]`` sizes: ``test_size``/``test_fraction``,
    ``train_size``/``train_fraction``, ``val_size``/``validation_size``, all
    shares of the whole data set); a training share declared nowhere is
    ``1 - test - validation`` when a validation share is declared, else
    ``1 - test`` (and said so).
    """  # fmt: skip
    if repeated not in (None, *REPEATED):
        raise ArgumentError(
            f"`repeated` must be 'training', 'data-sampling' or None; got {repeated!r}."
        )
    params = spec.get("params") or {}
    if test_fraction is not None and not (
        isinstance(test_fraction, numbers.Real) and not isinstance(test_fraction, bool)
        and 0 < test_fraction < 1
    ):  # fmt: skip
        raise ArgumentError(f"`test_fraction` must be a number in (0, 1); got {test_fraction!r}.")
    if repeated is not None:
        flag = "corrected" if repeated == "data-sampling" else "t"
        split, where = ("re-drawn" if repeated == "data-sampling" else "fixed"), (
            f"given by the caller: --test {flag}"
        )
    elif spec.get("split"):
        source = spec["split"]
        varied = source not in set(spec.get("fixed") or [])
        split = "re-drawn" if varied else "fixed"
        where = f"the store's [randomness] split = {source!r}" + (
            "" if varied else ", a fixed source"
        )
    else:
        split, where = "unknown", ""
    test, test_from = test_fraction, "given by the caller: --test-fraction"
    if test is None:
        test, test_from = _declared(params, _TEST_KEYS)
    train, train_from = train_fraction, "given by the caller: --train-fraction"
    if train is None:
        train, train_from = _declared(params, _TRAIN_KEYS)
    if train is None and is_share(test):
        val, val_from = _declared(params, _VAL_KEYS)
        if is_share(val) and test + val < 1:
            train, train_from = 1 - test - val, f"1 - test - validation ({val_from})"
        elif val is None:
            train, train_from = 1 - test, "assumed 1 - test share: no training share declared"
    return Split(split, where, test, test_from, train, train_from)


def is_share(x) -> bool:
    """Whether ``x`` is a share of a data set: a number in (0, 1)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and 0 < x < 1


def _nested_in(df: pd.DataFrame, inner: str, outer, memo=None) -> bool:
    """Whether every label of ``inner`` occurs within one level of ``outer`` only.

    ``df.groupby(inner)[outer].nunique() <= 1`` everywhere (missing labels don't count).
    """
    cols = [outer] if isinstance(outer, str) else list(outer)
    i, k = _group_ids(df, [inner], memo)
    for col in cols:
        o, _ = _group_ids(df, [col], memo)
        ok = (i >= 0) & (o >= 0)
        level = np.empty(k, dtype=np.int64)
        level[i[ok]] = o[ok]  # one level of outer per inner label, if it is nested
        if not np.array_equal(level[i[ok]], o[ok]):
            return False
    return True


def _most_rows(df: pd.DataFrame, cols, memo=None) -> int:
    """``int(df.groupby(cols).size().max())``."""
    sizes = _group_sizes(df, cols, memo)
    return int(sizes.max()) if sizes.size else int(df.groupby(cols).size().max())


def design_of(
    df: pd.DataFrame,
    *,
    by=None,
    metric: str | None = None,
    pair_on=None,
    repeated=None,
    test_fraction=None,
    train_fraction=None,
    bounds=None,
    rerun_level: bool = False,
) -> Design:
    """Derive the design of a results table or run store (see :class:`Design`).

    Parameters
    ----------
    df : pandas.DataFrame
        A tidy table, one row per run; a run store's (``read_store_table``)
        carries its declaration in ``df.attrs["spec"]``.
    by : str or list of str, optional
        The method column(s) (a store: ``experiment``).
    metric : str or list of str, optional
        The metric(s): the first for its bounds, all for reading the reruns
        (:func:`reruns_of`).
    pair_on : str or list of str, optional
        Columns pairing the methods' runs (default: the unit).
    repeated : {"training", "data-sampling"}, optional
        Overrides whether each unit re-drew the train/test split.
    test_fraction : float, optional
        Overrides the test share of each split.
    train_fraction : float, optional
        Overrides the training share of each split (default: the store's
        ``[params]`` sizes, else ``1 - test - validation``, else ``1 - test``).
    bounds : (float, float), optional
        Overrides the metric's bounds (``--bounds``).
    rerun_level : bool, default False
        The analysis keeps differing same-stream reruns as a level (the
        mixed model) rather than as each cell's mean: said so in the statement.
    """
    spec = df.attrs.get("spec") or {}
    by = [by] if isinstance(by, str) else list(by or [])
    unit = "seed" if "seed" in df.columns else None
    source = "store" if spec else ("labels" if unit else "none")
    memo = {}  # column -> its codes, for every grouping below
    units = _group_ids(df, [unit], memo)[1] if unit else 0  # nunique: labels, not missing
    configs, config_in = None, ()
    selected = spec.get("selected") or {}
    if unit and selected:
        configs = "chosen"  # a selection's output: the search's nesting is behind it
        config_in = tuple(dict.fromkeys([*selected.get("unit", [unit]), *by]))
    elif unit and "config" in df.columns and _group_ids(df, ["config"], memo)[1] > 1:
        if spec:
            nested = bool(spec.get("nested", True))
            owners = tuple(spec.get("level_spaces") or {})
        else:
            nested = _nested_in(df, "config", unit, memo)
            owners = tuple(
                c for c in by if c in df.columns and _nested_in(df, "config", c, memo)
            )
            if owners and df[by].drop_duplicates().shape[0] <= 1:
                owners = ()
        configs = "nested" if nested else "crossed"
        config_in = ((unit,) if nested else ()) + owners
        if not nested and owners:
            configs = "nested"  # each method's own settings, shared across seeds
    metrics = [metric] if isinstance(metric, str) else list(metric or [])
    reading = reruns_of(df, metrics, by) if metrics else None
    if reading is not None:
        reading = dataclasses.replace(reading, kept=rerun_level and reading.read_as == "nested")
    keys = [c for c in (*by, unit, "config") if c and c in df.columns]
    if reading is not None:
        reruns = reading.counts[2]
    elif spec:
        reruns = int(spec.get("reruns", 1))
    elif "rerun" in df.columns:
        reruns = int(df["rerun"].nunique())
    else:
        reruns = _most_rows(df, keys, memo) if keys and len(df) else 1
    per_unit = [c for c in (*by, unit) if c and c in df.columns]
    runs_per_unit = _most_rows(df, per_unit, memo) if unit and len(df) else 1
    if pair_on is None:
        pair_on = (unit,) if unit else ()
    pair_on = (pair_on,) if isinstance(pair_on, str) else tuple(pair_on)
    carrier = df.attrs.get("carried_by", "") if spec else ""
    sp = split_of(spec, repeated, test_fraction, train_fraction)
    b, b_from = metric_bounds(metrics[0] if metrics else None, bounds)
    return Design(
        source=source,
        unit=unit,
        units=units,
        configs=configs,
        config_in=config_in,
        reruns=max(reruns, 1),
        runs_per_unit=runs_per_unit,
        rerun_mode=spec.get("rerun_mode", "same") if spec else (
            "same" if "rerun" in df.columns else None
        ),
        rerun_reading=reading,
        pair_on=pair_on,
        split=sp.split,
        split_from=sp.split_from,
        test_fraction=sp.test,
        test_fraction_from=sp.test_from,
        bounds=b,
        bounds_from=b_from,
        train_fraction=sp.train,
        train_fraction_from=sp.train_from,
        carried_by=carrier,
        selected_on=str(selected.get("validation", "")),
    )
