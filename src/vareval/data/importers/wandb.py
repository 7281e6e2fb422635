"""Import a Weights & Biases runs export (CSV), one row per run.

Two exports are read. The web UI's *Export CSV* of a project's runs table
has the fixed columns ``Name``, ``ID``, ``State``, ``Notes``, ``User``,
``Tags``, ``Created``, ``Runtime``, ``Sweep`` ... and then one column per
configuration key and summary metric, which the file does not tell apart:
``params=`` names the hyper-parameters, otherwise a column is a metric when
every value in it is a number and a hyper-parameter when not. The export of
W&B's public-API recipe has ``name``, ``config`` and ``summary`` columns
holding each run's dictionaries; those are unpacked as they say.
"""

from __future__ import annotations

import ast
import math

import pandas as pd

from vareval.data.importers._tidy import tidy_runs
from vareval.errors import DataError

_STATUS = {"finished": "done", "failed": "failed", "crashed": "failed", "killed": "failed",
           "running": "running", "preempted": "failed"}
_UI_FIXED = {"Name": "run_name", "ID": "run", "State": "status", "Notes": None, "User": None,
             "Tags": None, "Created": None, "Runtime": None, "Sweep": None, "Group": None,
             "Job Type": None, "Hostname": None, "Description": None, "Commit": None,
             "GitHub": None, "GPU Type": None, "GPU Count": None}


def from_wandb(path, params=None) -> pd.DataFrame:
    """Read a W&B runs export (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        The exported CSV file.
    params : list of str, optional
        UI export only: the columns that are hyper-parameters.

    Returns
    -------
    pandas.DataFrame
        See :mod:`vareval.data.importers`.
    """
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"W&B export '{path}' could not be read as CSV: {exc}") from None
    if {"config", "summary"} <= set(raw.columns):
        runs = [_api_run(row, i) for i, row in enumerate(raw.to_dict("records"))]
    else:
        runs = _ui_runs(raw, params, path)
    return tidy_runs(runs, f"W&B export '{path}'")


def _api_run(row: dict, i: int) -> dict:
    def unpack(column):
        try:
            value = ast.literal_eval(row[column] or "{}")
        except (ValueError, SyntaxError):
            raise DataError(f"W&B export: column {column!r} of data row {i + 1} is not a "
                            "dictionary.") from None
        return value if isinstance(value, dict) else {}

    summary = unpack("summary")
    state = str(row.get("state", "finished"))
    return {"run": row.get("id") or str(i + 1), "run_name": row.get("name"),
            "status": _STATUS.get(state, "failed"), "source_status": state,
            "params": {k: v for k, v in unpack("config").items() if not k.startswith("_")},
            "metrics": {k: v for k, v in summary.items()
                        if not k.startswith("_") and _is_number(v)}}


def _ui_runs(raw: pd.DataFrame, params, path) -> list[dict]:
    if "State" not in raw.columns or "Name" not in raw.columns:
        raise DataError(f"W&B export '{path}' has neither the UI's Name and State columns nor "
                        "the API recipe's config and summary columns.")
    rest = [c for c in raw.columns if c not in _UI_FIXED]
    if params is None:
        params = [c for c in rest if not raw[c].map(_is_number).all()]
    missing = [p for p in params if p not in rest]
    if missing:
        raise DataError(f"--params column(s) {', '.join(map(repr, missing))} not in the W&B "
                        f"export (columns: {', '.join(rest)}).")
    runs = []
    for i, row in enumerate(raw.to_dict("records")):
        state = row["State"]
        runs.append({"run": row.get("ID") or str(i + 1), "run_name": row["Name"],
                     "status": _STATUS.get(state, "failed"), "source_status": state,
                     "params": {p: row[p] for p in params if row[p] != ""},
                     "metrics": {m: _number(row[m]) for m in rest if m not in params}})
    return runs


def _is_number(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return value == ""  # an empty cell: a run that did not log this metric
    return True


def _number(text: str) -> float:
    return math.nan if text == "" else float(text)
