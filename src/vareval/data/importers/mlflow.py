"""Import MLflow runs from a tracking store on disk, without MLflow itself.

Two stores are read: the SQLite database MLflow writes by default
(``sqlite:///mlflow.db``) and the older file store (an ``mlruns/`` folder).
Each run's metric is MLflow's *latest* value: the one logged at the largest
step, the later one on equal steps, as MLflow's own run table shows it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vareval.data.importers._tidy import tidy_runs
from vareval.errors import DataError

# MLflow's RunStatus -> vareval's status words (the file store writes the numbers)
_STATUS = {"RUNNING": "running", "SCHEDULED": "running", "FINISHED": "done",
           "FAILED": "failed", "KILLED": "failed"}
_STATUS_NUMBER = {"1": "RUNNING", "2": "SCHEDULED", "3": "FINISHED", "4": "FAILED", "5": "KILLED"}


def from_mlflow(uri: str, experiment: str | None = None):
    """Read MLflow runs into a tidy table, one row per run.

    Parameters
    ----------
    uri : str
        ``sqlite:///PATH``, an SQLite file MLflow wrote, ``file:PATH`` or an
        ``mlruns/`` folder.
    experiment : str, optional
        Keep this experiment's runs only (by name); default every experiment
        that has runs. Deleted runs and experiments are left out, as MLflow's
        UI does.

    Returns
    -------
    pandas.DataFrame
        See :mod:`vareval.data.importers`; ``experiment`` is the experiment's
        name, ``run`` the run id, ``run_name`` its name.
    """
    path = Path(uri.removeprefix("sqlite:///").removeprefix("file://").removeprefix("file:"))
    if path.is_dir():
        runs = _file_store_runs(path)
    elif path.is_file():
        runs = _sqlite_runs(path)
    else:
        raise DataError(
            f"MLflow store {uri!r} not found; give sqlite:///FILE or an mlruns/ folder."
        )
    if experiment is not None:
        found = sorted({r["experiment"] for r in runs})
        runs = [r for r in runs if r["experiment"] == experiment]
        if not runs:
            raise DataError(f"--experiment {experiment!r} has no runs in {uri!r}; experiments "
                            f"with runs: {', '.join(map(repr, found)) or 'none'}.")
    return tidy_runs(runs, f"MLflow store {uri!r}")


def _record(run_id, name, experiment, status, params, metrics) -> dict:
    return {"run": run_id, "run_name": name, "experiment": experiment,
            "status": _STATUS.get(status, "failed"), "source_status": status,
            "params": params, "metrics": metrics}


def _sqlite_runs(path: Path) -> list[dict]:
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        try:
            runs = con.execute(
                "SELECT r.run_uuid, r.name, e.name, r.status FROM runs r JOIN experiments e "
                "ON r.experiment_id = e.experiment_id WHERE r.lifecycle_stage = 'active' AND "
                "e.lifecycle_stage = 'active' ORDER BY r.start_time, r.run_uuid").fetchall()
            params = con.execute("SELECT run_uuid, key, value FROM params").fetchall()
            metrics = con.execute(
                "SELECT run_uuid, key, CASE WHEN is_nan THEN NULL ELSE value END, step, "
                "timestamp FROM metrics").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise DataError(f"'{path}' is not a readable MLflow database: {exc}.") from None
    by_run = {r[0]: _record(r[0], r[1], r[2], r[3], {}, {}) for r in runs}
    for run_id, key, value in params:
        if run_id in by_run:
            by_run[run_id]["params"][key] = value
    for run_id, key, value, _step, _timestamp in sorted(metrics, key=lambda m: (m[3], m[4])):
        if run_id in by_run:  # sorted by (step, time): the last one written is the latest
            by_run[run_id]["metrics"][key] = float("nan") if value is None else value
    return list(by_run.values())


def _file_store_runs(root: Path) -> list[dict]:
    runs = []
    for exp_meta in sorted(root.glob("*/meta.yaml")):
        exp = _meta(exp_meta)
        if exp.get("lifecycle_stage") != "active":
            continue
        for run_meta in sorted(exp_meta.parent.glob("*/meta.yaml")):
            meta = _meta(run_meta)
            if meta.get("lifecycle_stage") != "active":
                continue
            folder = run_meta.parent
            status = _STATUS_NUMBER.get(meta.get("status", ""), meta.get("status", ""))
            runs.append((int(meta.get("start_time") or 0), _record(
                meta.get("run_id", folder.name), meta.get("run_name"), exp.get("name"), status,
                {p.name: p.read_text() for p in sorted((folder / "params").glob("*"))},
                {m.name: _latest(m) for m in sorted((folder / "metrics").glob("*"))})))
    return [r for _, r in sorted(runs, key=lambda t: (t[0], t[1]["run"]))]


def _meta(path: Path) -> dict[str, str]:
    """The top-level ``key: value`` scalars of MLflow's flat meta.yaml."""
    out = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith((" ", "-")):
            out[key.strip()] = value.strip().strip("'\"")
    return out


def _latest(path: Path) -> float:
    """The latest value of a file-store metric (lines: timestamp value step)."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    timestamp, value, step = max(rows, key=lambda r: (int(r[2]), int(r[0])))
    return float(value)
