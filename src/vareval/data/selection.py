"""DataFrame-level API for choosing on validation and reporting on test.

``vareval.select`` turns a search table (one row per trial, with a validation
and a test metric) into the *results table* of the chosen configurations:
one row per method and replication unit, holding the chosen configuration's
test score, which every other command then reads (``summarize``, ``paired``,
the report) like any results table. The selection procedure travels with
the numbers, in the columns ``n_searched``, ``n_tied``, ``selected_on`` and
``selection``.

``vareval.selection_curve`` gives, per method, the tuning curve of the
chosen configuration's test score beside the validation curve.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vareval.data.design import analysed_rows, design_of, metric_bounds
from vareval.data.tables import FrameResult
from vareval.data.tuning import default_ks
from vareval.data.validate import labels, metric_values, require_columns, shown
from vareval.errors import ArgumentError, DataError
from vareval.stats._checks import as_bool
from vareval.stats._progress import progress_bar
from vareval.stats.tuning.selection import TIES, choose_on_validation, selection_curve

__all__ = ["SelectedTable", "SelectionCurves", "select", "selection_curves"]



def _columns(value, role: str) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _distinct_roles(by, unit, config) -> None:
    """Refuse a column in two roles: a unit lies within a method, a configuration within a unit."""
    roles = {"method (by)": by, "unit": unit, "config": [config]}
    seen = {}
    for role, columns in roles.items():
        for column in columns:
            if column in seen:
                raise ArgumentError(
                    f"column {column!r} is both the {seen[column]} and the {role}; each role "
                    "needs its own column (a unit lies within a method, a configuration within "
                    "a unit; an empty unit, '' on the command line or [] in Python, chooses "
                    "once per method)."
                )
            seen[column] = role


@dataclasses.dataclass(frozen=True, repr=False)
class SelectedTable(FrameResult):
    """The configurations chosen on validation, one per method and unit, with test scores.

    No figure: a results table; summarize or paired on it draw the figures.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method and replication unit: the ``by`` and ``unit``
        columns, ``config`` (the chosen configuration), the validation and
        test metrics (under their own names), ``n_searched``, ``n_tied``,
        ``selected_on`` (the validation column) and ``selection`` (the
        procedure in words). Read it like any results
        table, e.g. ``vareval.summarize(t.table, metric=test, by=by)``.
    validation, test : str
        The metric columns: chosen on ``validation``, reported on ``test``.
    by, unit : list of str
        Method columns, and the columns of one replication unit.
    config : str
        The configuration column.
    higher_is_better : bool
    ties : str
        ``"first"`` (the first tied configuration in table order) or
        ``"average"`` (the tied winners' mean test score).
    rows_per_config : int
        Rows averaged into each configuration's scores (its reruns when
        ``rerun`` is not part of the unit); 1 when there is one row each.
    procedure : str
        The whole selection procedure in one sentence.
    design : Design or None
        The design of the chosen table (:func:`vareval.data.design.design_of`):
        a run store's, carried with the table, or read from its labels.
    """

    table: pd.DataFrame
    validation: str
    test: str
    by: list
    unit: list
    config: str
    higher_is_better: bool
    ties: str
    rows_per_config: int
    procedure: str
    design: object = None

    def to_frame(self) -> pd.DataFrame:
        """The results table of the chosen configurations (a copy)."""
        return self.table.copy()

    def to_dict(self) -> dict:
        """JSON-ready: the procedure and the chosen rows."""
        fields = {f: getattr(self, f) for f in ("validation", "test", "by", "unit", "config",
                                                 "higher_is_better", "ties", "rows_per_config",
                                                 "procedure")}  # fmt: skip
        rows = self.table.astype(object).where(self.table.notna(), None)
        design = {} if self.design is None else {"design": self.design.statement()}
        return {**fields, **design, "chosen": rows.to_dict(orient="records")}


def _procedure(validation, test, unit, config, hib, ties, searched, per_config) -> str:
    counts = sorted(set(searched))
    n_text = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    rule = {
        "first": "ties broken by the first configuration in table order",
        "average": "ties reported as the mean test score of the tied configurations",
    }[ties]
    reruns = (
        f"; each configuration's scores are the mean of its {per_config} rows (reruns)"
        if per_config > 1
        else ""
    )
    return (
        f"chosen on {validation!r} ({'highest' if hib else 'lowest'} wins) among {n_text} "
        f"{config!r} values per {' x '.join(unit) or 'table'}{reruns}; {rule}; reported on "
        f"{test!r}, which took no part in the choice"
    )


def _selected_spec(attrs: dict, by, unit, config, validation, per_config) -> dict:
    """A store's declaration amended for its selection output (empty for a plain table).

    The selected table holds one configuration per method and unit, chosen
    on ``validation``: the declaration says so (``selected``), and a
    configuration's reruns averaged into one row leave one rerun each. The
    rest (seeds, split and its sizes) is the store's, and travels with the
    table (:mod:`vareval.data.carried`).
    """
    spec = attrs.get("spec")
    if not spec:
        return {}
    averaged = per_config > 1 and "rerun" not in unit
    selected = {"validation": validation, "by": by, "unit": unit, "config": config,
                "reruns_averaged": per_config if averaged else 1}  # fmt: skip
    out = {"spec": {**spec, "selected": selected, **({"reruns": 1} if averaged else {})}}
    return out | {k: attrs[k] for k in ("carried_by",) if k in attrs}


def select(
    df: pd.DataFrame,
    *,
    validation: str,
    test: str,
    by,
    unit=("seed",),
    config: str = "config",
    higher_is_better: bool = True,
    ties: str = "first",
) -> SelectedTable:
    """Choose each unit's configuration on validation and report its test score.

    Estimand: per method and replication unit, the test score of the
    configuration with the best validation score among the configurations
    searched in that unit (:func:`vareval.stats.choose_on_validation`). When
    several rows share method, unit and configuration (reruns, when
    ``rerun`` is not in ``unit``), the configuration's validation and test
    scores are their means, and the choice is made on those means.

    Parameters
    ----------
    df : pandas.DataFrame
        The search table: one row per trial (e.g. ``vareval.read_store_table``).
    validation, test : str
        Metric columns: the one to choose on, the one to report.
    by : str or list of str
        Column(s) naming the method (the search space each unit searches).
    unit : str or list of str, default ("seed",)
        Columns of one replication unit: ``"seed"``, or ``["seed", "rerun"]``
        to choose separately in each rerun; ``[]`` chooses once per method.
    config : str, default "config"
        The column naming the configuration.
    higher_is_better : bool, default True
        False when the smallest validation score wins (a loss).
    ties : {"first", "average"}, default "first"
        How a tie in validation is resolved (see :class:`SelectedTable`).

    Returns
    -------
    SelectedTable
    """
    by, unit = _columns(by, "method"), _columns(unit, "unit")
    hib = as_bool(higher_is_better, "higher_is_better")
    if ties not in TIES:
        raise ArgumentError(f"`ties` must be 'first' or 'average'; got {ties!r}.")
    if validation == test:
        raise ArgumentError(
            f"`validation` and `test` are the same column {test!r}; choosing on the "
            "metric that is reported makes the reported score optimistic."
        )
    require_columns(df, by, "method")
    if unit:  # none: one choice per method
        require_columns(df, unit, "unit")
    require_columns(df, [config], "config")
    _distinct_roles(by, unit, config)
    if "rerun" not in unit:  # reruns read as the design says; [seed, rerun] keeps them apart
        df = analysed_rows(df, [validation, test], by)
    if df.empty:
        raise DataError("the search table has no rows; expected one row per trial.")
    work = pd.DataFrame(
        {"_val": metric_values(df, validation), "_test": metric_values(df, test)}
    )
    keys = [*by, *unit, config]
    for col in keys:
        work[col] = labels(df, [col], "config" if col == config else "unit").to_numpy()
    grouped = work.groupby(keys, sort=False)
    per = grouped.agg(_val=("_val", "mean"), _test=("_test", "mean"), _rows=("_val", "size"))
    per = per.reset_index()
    per_config = int(per["_rows"].max())
    unit_label = labels(per, [*by, *unit], "unit") if by or unit else pd.Series(0, per.index)
    chosen = choose_on_validation(
        per["_val"], per["_test"], unit_label.to_numpy(), higher_is_better=hib, ties=ties
    )
    out = per.iloc[chosen.chosen][[*by, *unit, config]].reset_index(drop=True)
    out[validation] = chosen.validation
    out[test] = chosen.test
    out["n_searched"] = chosen.n_searched
    out["n_tied"] = chosen.n_tied
    out["selected_on"] = validation
    procedure = _procedure(
        validation, test, unit, config, hib, ties, chosen.n_searched.tolist(), per_config
    )
    reading = df.attrs.get("reruns")
    if reading is not None and reading.read_as in ("once", "nested"):
        procedure += f"; reruns: {reading.statement()}"
    out["selection"] = procedure
    # one row per unit: its reruns were read when choosing, not to be read again
    out.attrs = {**_selected_spec(df.attrs, by, unit, config, validation, per_config),
                 "reruns_read": True}
    return SelectedTable(
        table=out,
        validation=validation,
        test=test,
        by=by,
        unit=unit,
        config=config,
        higher_is_better=hib,
        ties=ties,
        rows_per_config=per_config,
        procedure=procedure,
        design=design_of(out, by=by, metric=test),
    )


@dataclasses.dataclass(frozen=True, repr=False)
class SelectionCurves(FrameResult):
    """Per method, the test-score tuning curve of the configuration chosen on validation.

    Attributes
    ----------
    validation, test : str
        The metric columns.
    methods : list of str
    k : ndarray
    curves : dict
        Method -> :class:`~vareval.stats.SelectionCurve`.
    confidence : float
    higher_is_better : bool
    bounds : (float, float) or None
        The test metric's bounds the intervals are cut to.
    bounds_from : str
        Where they came from (given, or the metric's name).
    """

    validation: str
    test: str
    methods: list
    k: np.ndarray
    curves: dict
    confidence: float
    higher_is_better: bool
    bounds: tuple | None = None
    bounds_from: str = ""

    def to_frame(self) -> pd.DataFrame:
        """One row per method and ``k``: test curve (U, V), interval, validation curve, optimism."""
        frames = []
        for name in self.methods:
            f = self.curves[name].to_frame()
            f.insert(0, "n", self.curves[name].n)
            f.insert(0, "method", name)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict:
        """JSON-ready dictionary of every curve."""
        return {
            "validation": self.validation,
            "test": self.test,
            "confidence": self.confidence,
            "higher_is_better": self.higher_is_better,
            "ties": "average over the tied winners",
            "bounds": None if self.bounds is None else list(self.bounds),
            "bounds_from": self.bounds_from,
            "k": self.k.tolist(),
            "curves": {name: self.curves[name].to_dict() for name in self.methods},
        }


def selection_curves(
    df: pd.DataFrame,
    *,
    validation: str,
    test: str,
    by,
    ks=None,
    higher_is_better: bool = True,
    confidence: float = 0.95,
    bounds=None,
    progress=False,
) -> SelectionCurves:
    """The tuning curve of the test score of the configuration chosen on validation, per method.

    Each row of ``df`` is one random-search iteration with a validation and
    a test score; per method (``by``) this is
    :func:`vareval.stats.selection_curve`: U and V estimates of the expected
    test score of the best-on-validation configuration among ``k``, ties in
    validation averaged over the tied winners, a jackknife interval, and the
    validation curve and the optimism of selection beside it.

    Parameters
    ----------
    df : pandas.DataFrame
    validation, test : str
        Metric columns.
    by : str or list of str
        Method column(s).
    ks : array_like of int, optional
        Search iterations; default every ``k`` up to 30, then a sparse grid.
    higher_is_better : bool, default True
    confidence : float, default 0.95
        Level of the pointwise intervals.
    bounds : (float, float), optional
        The test metric's range; default known from its name (accuracy, F1,
        ... lie in [0, 1]), else none. The intervals are cut to it.
    progress : bool or None, default False
        With several methods, show a tqdm bar over them (None: on a terminal
        only).

    Returns
    -------
    SelectionCurves
    """
    if validation == test:
        raise ArgumentError(
            f"`validation` and `test` are the same column {test!r}; give two metrics."
        )
    df = analysed_rows(df, [validation, test], by)  # one search result per cell
    val, tst = metric_values(df, validation), metric_values(df, test)
    names = labels(df, by, "method")
    methods = [str(m) for m in pd.unique(names)]
    if not methods:
        raise DataError("the search table has no rows; expected one row per trial.")
    masks = {m: (names == m).to_numpy() for m in methods}
    for m, mask in masks.items():
        if mask.sum() < 2:
            raise DataError(
                f"method {shown([m])} has {mask.sum()} search iteration(s); this needs at least 2."
            )
    if ks is None:
        ks = default_ks(max(int(mask.sum()) for mask in masks.values()))
    limits, limits_from = metric_bounds(test, bounds)
    curves = {}
    with progress_bar(len(masks), "methods", progress if len(masks) > 1 else False) as bar:
        for m, mask in masks.items():
            curves[m] = selection_curve(
                val[mask], tst[mask], ks, higher_is_better=higher_is_better,
                confidence=confidence, bounds=limits,
            )
            bar.update()
    first = next(iter(curves.values()))
    return SelectionCurves(
        validation=validation,
        test=test,
        methods=methods,
        k=first.k,
        curves=curves,
        confidence=first.confidence,
        higher_is_better=first.higher_is_better,
        bounds=limits,
        bounds_from=limits_from,
    )
