"""Building the tidy table every importer returns (see the package docstring)."""

from __future__ import annotations

import pandas as pd

from vareval.errors import DataError

SEED_NAMES = ("seed", "random_seed", "random_state")
_FIXED = ("run", "run_name", "experiment", "status", "source_status", "seed", "config")


def tidy_runs(runs: list[dict], source: str) -> pd.DataFrame:
    """One row per run from ``{"run", "status", "params", "metrics", ...}`` records.

    ``params`` values are kept as text exactly as logged; ``metrics`` values
    become floats. A run's seed is taken from its parameters when one of
    :data:`SEED_NAMES` is there, and removed from the configuration.
    """
    if not runs:
        raise DataError(f"{source}: no runs found; nothing to import.")
    param_names = _union(r["params"] for r in runs)
    metric_names = _union(r["metrics"] for r in runs)
    seed_name = next((s for s in SEED_NAMES if s in param_names), None)
    config_names = [p for p in param_names if p != seed_name]
    records, configs = [], {}
    for r in runs:
        rec = {k: r[k] for k in ("run", "run_name", "experiment") if k in r}
        rec["status"], rec["source_status"] = r["status"], r["source_status"]
        if seed_name is not None:
            rec["seed"] = _text(r["params"].get(seed_name))
        key = tuple(_text(r["params"].get(p)) for p in config_names)
        rec["config"] = configs.setdefault(key, str(len(configs) + 1))
        rec.update((f"param.{p}", _text(r["params"].get(p))) for p in config_names)
        rec.update((_metric_column(m), r["metrics"].get(m)) for m in metric_names)
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    for m in metric_names:
        df[_metric_column(m)] = pd.to_numeric(df[_metric_column(m)]).astype(float)
    return df


def _union(dicts) -> list[str]:
    """Keys of every dict, in order of first appearance."""
    names: dict[str, None] = {}
    for d in dicts:
        names.update(dict.fromkeys(d))
    return list(names)


def _text(value) -> str | None:
    """A parameter as text (as logged); absent stays absent, not 'None'."""
    return None if value is None else str(value)


def _metric_column(name: str) -> str:
    """A metric keeps its name unless it would shadow a role column."""
    return f"metric.{name}" if name in _FIXED or name.startswith("param.") else name
