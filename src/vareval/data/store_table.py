"""Reading a vareval run store (SQLite) as a tidy results table.

The store is written by :mod:`vareval.experiment.store`; this module only
reads it, so that every analysis can take a store in place of a results file.
The table has one row per trial and one column per factor, configuration key
and metric, plus the design's columns (``experiment``, ``seed``, ``config``,
``config_index``, ``rerun``) and the trial's ``status``.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from vareval.errors import DataError, VarevalWarning

APPLICATION_ID = 0x56524556  # "VREV" in the SQLite header's application_id field
SCHEMA_VERSION = 2  # 2 added runs, curves, artifacts and trials.run_id
SQLITE_HEADER = b"SQLite format 3\x00"
STATUSES = ("pending", "running", "done", "failed")
_DESIGN = ("trial_id", "experiment", "seed", "config", "config_index", "rerun")


def check_header(path, error=DataError) -> None:
    """Raise ``error`` unless ``path`` is an SQLite file (the first 16 bytes say so)."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head != SQLITE_HEADER:
        raise error(
            f"file '{path}' is not a vareval store (not an SQLite database); "
            "create one with `vareval run EXPERIMENT.toml --store FILE`."
        )


def check_identity(con: sqlite3.Connection, path, error=DataError) -> int:
    """Raise ``error`` unless the open database is a vareval store we can read.

    Returns the schema version.
    """
    try:
        app = con.execute("PRAGMA application_id").fetchone()[0]
        version = con.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise error(
            f"file '{path}' is not a readable SQLite database: {exc}."
        ) from None
    if app != APPLICATION_ID:
        raise error(
            f"file '{path}' is an SQLite database from another program "
            f"(application_id {app:#x}, expected {APPLICATION_ID:#x}); not a vareval "
            "store."
        )
    if version > SCHEMA_VERSION:
        raise error(
            f"store '{path}' has schema version {version}; this vareval reads up to "
            f"{SCHEMA_VERSION}: upgrade vareval."
        )
    if version < 1:
        raise error(
            f"store '{path}' has no schema (user_version {version}); it is incomplete."
        )
    return version


def connect_readonly(path, error=DataError) -> sqlite3.Connection:
    """Open an existing store read-only after checking that it is one."""
    path = Path(path)
    if not path.is_file():
        raise error(f"store '{path}' does not exist or is not a regular file.")
    check_header(path, error)
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as exc:
        raise error(f"store '{path}' could not be opened: {exc}.") from None
    check_identity(con, path, error)
    return con


def parameter_names(spec: dict) -> list[str]:
    """Every search-space parameter of a stored declaration: shared, then per level."""
    names = dict.fromkeys(spec.get("space", {}))
    for levels in spec.get("level_spaces", {}).values():
        for space in levels.values():
            names.update(dict.fromkeys(space))
    return list(names)


def store_rows(con: sqlite3.Connection) -> list[tuple]:
    """Every trial row, in id order (the columns the tidy table needs)."""
    return con.execute(
        "SELECT id, factors, experiment, seed, config_label, config_index, rerun, "
        "config, "
        "metrics, status, attempts, started, finished, host, error FROM trials ORDER "
        "BY id"
    ).fetchall()


def tidy_frame(rows: list[tuple], factor_names, config_names) -> pd.DataFrame:
    """Turn trial rows into the tidy table (see :func:`read_store_table`)."""
    records = []
    metric_names: dict[str, None] = {}
    for (
        tid,
        factors,
        experiment,
        seed,
        label,
        cidx,
        rerun,
        config,
        metrics,
        status,
        attempts,
        started,
        finished,
        host,
        error,
    ) in rows:
        rec = {
            "trial_id": tid,
            **json.loads(factors),
            "experiment": experiment,
            "seed": seed,
            "config": label,
            "config_index": cidx,
            "rerun": rerun,
        }
        rec.update(("\0c" + k, v) for k, v in json.loads(config).items())
        m = json.loads(metrics) if metrics else {}
        for k in m:
            metric_names.setdefault(k, None)
        rec.update(("\0m" + k, v) for k, v in m.items())
        rec.update(
            status=status,
            attempts=attempts,
            started=started,
            finished=finished,
            host=host,
            error=error,
        )
        records.append(rec)
    taken = (
        set(_DESIGN)
        | set(factor_names)
        | {"status", "attempts", "started", "finished", "duration", "host", "error"}
    )
    rename = {}
    for k in config_names:
        rename["\0c" + k] = k if k not in taken else f"config_{k}"
    taken |= set(rename.values())
    for k in metric_names:
        rename["\0m" + k] = k if k not in taken else f"metric_{k}"
    columns = (
        [
            "trial_id",
            *factor_names,
            "experiment",
            "seed",
            "config",
            "config_index",
            "rerun",
        ]
        + ["\0c" + k for k in config_names]
        + ["\0m" + k for k in metric_names]
        + ["status", "attempts", "started", "finished", "host", "error"]
    )
    df = pd.DataFrame.from_records(records, columns=columns).rename(columns=rename)
    for k in metric_names:
        col = rename["\0m" + k]
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df.insert(
        df.columns.get_loc("finished") + 1,
        "duration",
        (df["finished"] - df["started"]).where(df["status"] == "done", np.nan),
    )
    return df


def read_store_table(path, *, status: str | None = "done") -> pd.DataFrame:
    """Read a vareval run store as a tidy DataFrame, one row per trial.

    Parameters
    ----------
    path : str or path-like
        A store written by ``vareval run`` (``.db``, ``.sqlite``).
    status : {"done", "all"} or None, default "done"
        ``"done"`` keeps the finished trials (those with metrics) and warns
        with the count of trials left out; ``"all"`` (or None) keeps every
        trial, with NaN metrics for the unfinished and failed ones.

    Returns
    -------
    pandas.DataFrame
        Columns ``trial_id``, one per factor, ``experiment``, ``seed``,
        ``config`` (the configuration's label), ``config_index``, ``rerun``,
        one per configuration key, one per metric (a name that collides with
        another column gets a ``config_``/``metric_`` prefix), then
        ``status``, ``attempts``, ``started``, ``finished``, ``duration``
        (seconds), ``host`` and ``error``. ``df.attrs`` holds the experiment's
        declaration (``spec``) and ``rerun_mode``.

    Raises
    ------
    DataError
        If the file is missing, not SQLite, from another program, corrupt or
        of a newer schema.
    """
    if status not in ("done", "all", None):
        raise DataError(f"`status` must be 'done' or 'all'; got {status!r}.")
    con = connect_readonly(path)
    try:
        spec = json.loads(
            con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0]
        )
        rows = store_rows(con)
    except (sqlite3.DatabaseError, TypeError, json.JSONDecodeError) as exc:
        raise DataError(f"store '{path}' could not be read: {exc}.") from None
    finally:
        con.close()
    df = tidy_frame(rows, list(spec["factors"]), parameter_names(spec))
    if status == "done":
        keep = df["status"] == "done"
        left = df.loc[~keep, "status"].value_counts()
        if len(left):
            what = ", ".join(f"{n} {s}" for s, n in left.items())
            warnings.warn(
                f"store '{path}': {int((~keep).sum())} of {len(df)} trials are not "
                "done "
                f"({what}) and are left out; see `vareval status {path}`.",
                VarevalWarning,
                stacklevel=2,
            )
        df = df.loc[keep].reset_index(drop=True)
    df.attrs["spec"] = spec
    df.attrs["rerun_mode"] = spec.get("rerun_mode", "same")
    return df
