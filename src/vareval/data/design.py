"""The design of an experiment, derived once for every command and the report.

What is independent (the replication unit: seeds), which factors are nested
in which (configurations in seeds; in models when each model has its own
search space), what reruns repeat, what is paired, whether the seed re-draws
the train/test split and with what sizes, and the metric's bounds. A run
store's design is read from its declaration (``df.attrs["spec"]``); a plain
table's is inferred from its labels (``seed``, ``config``, ``rerun``) and
said so; arguments override both. Every analysis states the design it
assumed in one line, :meth:`Design.statement`.
"""

from __future__ import annotations

import dataclasses
import numbers
import re

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
        Where it came from: a run store's declaration, a table's labels, or
        nowhere (rows are then treated as independent runs, and said so).
    unit : str or None
        Column of the replication unit (independent draws), e.g. ``"seed"``.
    units : int
        Number of units (0 without a unit).
    configs : {"nested", "crossed"} or None
        Configurations sampled anew in each unit, or shared across units.
    config_in : tuple of str
        The columns configurations are nested in (``("seed", "model")``).
    reruns : int
        Runs of each (unit, configuration, method).
    runs_per_unit : int
        Most rows one method has in one unit (1: the runs are the units).
    rerun_mode : {"same", "independent"} or None
        Whether reruns repeat the same streams (nondeterminism only).
    pair_on : tuple of str
        Columns matching one method's runs with another's.
    split : {"re-drawn", "fixed", "unknown"}
        Whether each unit drew its own train/test split.
    split_from : str
        Where that was read (empty when unknown).
    test_fraction : float or None
        Share of the data in each test split (for the corrected t test).
    test_fraction_from : str
        Where it was read.
    bounds : (float, float) or None
        The metric's range, when known.
    bounds_from : str
        Where the bounds came from.
    """

    source: str
    unit: str | None
    units: int
    configs: str | None
    config_in: tuple
    reruns: int
    runs_per_unit: int
    rerun_mode: str | None
    pair_on: tuple
    split: str
    split_from: str
    test_fraction: float | None
    test_fraction_from: str
    bounds: tuple | None
    bounds_from: str

    _headline = ("source", "unit", "units")

    @property
    def clustered(self) -> bool:
        """Whether rows within a unit are several runs (configurations or reruns)."""
        return self.unit is not None and self.runs_per_unit > 1

    def statement(self) -> str:
        """The design in one line: ``design (run store): units: 6 seeds; ...``."""
        where = {"store": "run store", "labels": "read from the labels"}
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
        if self.reruns > 1:
            what = {"same": " (same streams)", "independent": " (fresh streams)"}
            parts.append(f"{self.reruns} reruns each{what.get(self.rerun_mode, '')}")
        split = {"re-drawn": "splits re-drawn per seed", "fixed": "splits fixed"}
        parts.append(split.get(self.split, "splits unknown (taken as fixed)"))
        if self.bounds is not None:
            parts.append(f"bounds [{self.bounds[0]:g}, {self.bounds[1]:g}]")
        return f"design ({where[self.source]}): " + "; ".join(parts)


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


def split_of(spec: dict, repeated=None, test_fraction=None) -> tuple[str, str, float | None, str]:
    """Whether the split was re-drawn and its test share, each with where it was read."""
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
        split, where = ("re-drawn" if repeated == "data-sampling" else "fixed"), "you said"
    elif spec.get("split"):
        source = spec["split"]
        varied = source not in set(spec.get("fixed") or [])
        split = "re-drawn" if varied else "fixed"
        where = f"the store's [randomness] split = {source!r}" + (
            "" if varied else ", a fixed source"
        )
    else:
        split, where = "unknown", ""
    frac_from = "you gave it"
    if test_fraction is None:
        key = next((k for k in ("test_fraction", "test_size") if k in params), None)
        test_fraction = params.get(key)
        frac_from = f"the store's [params] {key} = {test_fraction!r}" if key else ""
    return split, where, test_fraction, frac_from


def _nested_in(df: pd.DataFrame, inner: str, outer) -> bool:
    """Whether every label of ``inner`` occurs within one level of ``outer`` only."""
    cols = [outer] if isinstance(outer, str) else list(outer)
    return bool(df.groupby(inner, sort=False)[cols].nunique().le(1).all(axis=None))


def design_of(
    df: pd.DataFrame,
    *,
    by=None,
    metric: str | None = None,
    pair_on=None,
    repeated=None,
    test_fraction=None,
    bounds=None,
) -> Design:
    """Derive the design of a results table or run store (see :class:`Design`).

    Parameters
    ----------
    df : pandas.DataFrame
        A tidy table, one row per run; a run store's (``read_store_table``)
        carries its declaration in ``df.attrs["spec"]``.
    by : str or list of str, optional
        The method column(s) (a store: ``experiment``).
    metric : str, optional
        The metric, for its bounds.
    pair_on : str or list of str, optional
        Columns pairing the methods' runs (default: the unit).
    repeated : {"training", "data-sampling"}, optional
        Overrides whether each unit re-drew the train/test split.
    test_fraction : float, optional
        Overrides the test share of each split.
    bounds : (float, float), optional
        Overrides the metric's bounds (``--bounds``).
    """
    spec = df.attrs.get("spec") or {}
    by = [by] if isinstance(by, str) else list(by or [])
    unit = "seed" if "seed" in df.columns else None
    source = "store" if spec else ("labels" if unit else "none")
    units = int(df[unit].nunique()) if unit else 0
    configs, config_in = None, ()
    if unit and "config" in df.columns and df["config"].nunique() > 1:
        if spec:
            nested = bool(spec.get("nested", True))
            owners = tuple(spec.get("level_spaces") or {})
        else:
            nested = _nested_in(df, "config", unit)
            owners = tuple(c for c in by if c in df.columns and _nested_in(df, "config", c))
            owners = owners if df[by].drop_duplicates().shape[0] > 1 else ()
        configs = "nested" if nested else "crossed"
        config_in = ((unit,) if nested else ()) + owners
        if not nested and owners:
            configs = "nested"  # each method's own settings, shared across seeds
    keys = [c for c in (*by, unit, "config") if c and c in df.columns]
    if spec:
        reruns = int(spec.get("reruns", 1))
    elif "rerun" in df.columns:
        reruns = int(df["rerun"].nunique())
    else:
        reruns = int(df.groupby(keys).size().max()) if keys and len(df) else 1
    per_unit = [c for c in (*by, unit) if c and c in df.columns]
    runs_per_unit = int(df.groupby(per_unit).size().max()) if unit and len(df) else 1
    if pair_on is None:
        pair_on = (unit,) if unit else ()
    pair_on = (pair_on,) if isinstance(pair_on, str) else tuple(pair_on)
    split, split_from, frac, frac_from = split_of(spec, repeated, test_fraction)
    b, b_from = metric_bounds(metric, bounds)
    return Design(
        source=source,
        unit=unit,
        units=units,
        configs=configs,
        config_in=config_in,
        reruns=max(reruns, 1),
        runs_per_unit=runs_per_unit,
        rerun_mode=spec.get("rerun_mode", "same") if spec else None,
        pair_on=pair_on,
        split=split,
        split_from=split_from,
        test_fraction=frac,
        test_fraction_from=frac_from,
        bounds=b,
        bounds_from=b_from,
    )
