"""Reading a vareval run store (SQLite) as a tidy results table.

The store is written by the experiment layer's store module; this module only
reads it, so that every analysis can take a store in place of a results file.
The table has one row per trial and one column per factor, configuration key
and metric, plus the design's columns (``experiment``, ``seed``, ``config``,
``config_index``, ``rerun``) and the trial's ``status``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from vareval.errors import DataError, VarevalWarning

APPLICATION_ID = 0x56524556  # "VREV" in the SQLite header's application_id field
SCHEMA_VERSION = 5  # 2: runs, curves, artifacts, trials.run_id; 3: sequences;
# 4: trials.execution; 5: sequence_points
STATUSES = ("pending", "running", "done", "failed")
# a store table's design columns, beside its status, settings and metrics
DESIGN_COLUMNS = ("trial_id", "experiment", "seed", "config", "config_index", "rerun")


def connect(path, *, readonly: bool, create: bool = False, error=DataError):
    """Open a store's SQLite connection: the one way vareval opens a store file.

    The file is touched only through SQLite: in a process that holds a
    connection, opening and closing the file any other way (even to read its
    header) drops every POSIX lock SQLite holds on it, after which another
    process may delete the WAL under the writer and results are lost. Whether
    the file is SQLite at all is learnt from SQLite's own error. A read-only
    connection (``mode=ro``) changes nothing in the file.

    Parameters
    ----------
    path : str or path-like
        The store.
    readonly : bool
        Open with ``mode=ro``.
    create : bool, default False
        Create a missing file (read-write only).
    error : type, default DataError
        The exception raised for a missing or unusable file.

    Returns
    -------
    sqlite3.Connection
        In autocommit mode (``isolation_level=None``), usable from any thread,
        with a 60 s busy timeout. Nothing is read yet: see :func:`check_identity`.
    """
    path = Path(path)
    if path.is_dir():
        raise error(f"store '{path}' is a directory; give a file name.")
    if not path.exists() and not create:
        raise error(
            f"store '{path}' does not exist; create it with "
            "`vareval run EXPERIMENT.toml --store FILE`."
        )
    mode = "ro" if readonly else ("rwc" if create else "rw")
    try:
        con = _open(path, mode)
        if readonly:
            con = _readable(con, path, error)
    except sqlite3.Error as exc:
        raise error(f"store '{path}' could not be opened: {exc}.") from None
    return con


def _open(path: Path, mode: str, immutable: bool = False) -> sqlite3.Connection:
    con = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode={mode}" + ("&immutable=1" if immutable else ""),
        uri=True,
        timeout=60,
        isolation_level=None,
        check_same_thread=False,
    )
    con.execute("PRAGMA busy_timeout = 60000")
    return con


def _readable(con: sqlite3.Connection, path: Path, error) -> sqlite3.Connection:
    """A read-only connection that can read; on a read-only folder, an immutable one.

    A store in WAL mode is read through its ``-shm`` index, which SQLite makes
    beside the file; on a read-only mount (or where it cannot be made) the
    first read fails with "unable to open database file". A clean store (no
    ``-wal``, or an empty one: every transaction is in the file) is then read
    with ``immutable=1``, as nothing can change it there; otherwise reading
    the file alone would miss committed results, and that is said.
    """
    try:
        con.execute("PRAGMA application_id").fetchone()
        return con
    except sqlite3.DatabaseError as exc:
        if "unable to open" not in str(exc):
            return con  # probe() names what else is wrong (not SQLite, corrupt)
    con.close()
    wal = path.with_name(path.name + "-wal")
    pending = wal.stat().st_size if wal.exists() else 0
    if pending:
        raise error(
            f"store '{path}' cannot be read here: its folder is read-only (SQLite cannot make "
            f"its '{path.name}-shm' index) and '{wal.name}' holds {pending:,} bytes of results "
            "not yet in the file; copy the store with its -wal file to a writable folder."
        )
    return _open(path, "ro", immutable=True)


def probe(con: sqlite3.Connection, path, error=DataError) -> tuple[int, int, int]:
    """Read ``(application_id, user_version, number of schema objects)``.

    Only reads. A file that is not SQLite (or whose header is corrupt) is
    recognised from SQLite's own error.
    """
    try:
        app = con.execute("PRAGMA application_id").fetchone()[0]
        version = con.execute("PRAGMA user_version").fetchone()[0]
        tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        con.close()
        raise error(
            f"file '{path}' is not a vareval store (not an SQLite database, or its "
            f"header is corrupt; SQLite says: {exc}); create one with "
            "`vareval run EXPERIMENT.toml --store FILE`."
        ) from None
    return app, version, tables


def check_identity(con: sqlite3.Connection, path, error=DataError) -> int:
    """Raise ``error`` unless the open database is a vareval store we can read.

    Only reads (the connection is closed before raising). Returns the schema
    version.
    """
    app, version, tables = probe(con, path, error)
    problem = None
    if app == 0 and tables == 0 and version == 0:
        problem = (
            f"file '{path}' is an empty SQLite database, not a vareval store; "
            "create one with `vareval run EXPERIMENT.toml --store FILE`."
        )
    elif app != APPLICATION_ID:
        problem = (
            f"file '{path}' is an SQLite database from another program "
            f"(application_id {app:#x}, expected {APPLICATION_ID:#x}); not a vareval "
            "store."
        )
    elif version > SCHEMA_VERSION:
        problem = (
            f"store '{path}' has schema version {version}; this vareval reads up to "
            f"{SCHEMA_VERSION}: upgrade vareval."
        )
    elif version < 1:
        problem = (
            f"store '{path}' has no schema (user_version {version}); it is incomplete."
        )
    if problem:
        con.close()
        raise error(problem)
    return version


def connect_readonly(path, error=DataError) -> sqlite3.Connection:
    """Open an existing store read-only after checking (through SQLite) that it is one."""
    con = connect(path, readonly=True, error=error)
    check_identity(con, path, error)
    return con


def parameter_names(spec: dict) -> list[str]:
    """Every search-space parameter of a stored declaration: shared, then per level."""
    names = dict.fromkeys(spec.get("space", {}))
    for levels in spec.get("level_spaces", {}).values():
        for space in levels.values():
            names.update(dict.fromkeys(space))
    return list(names)


def sqlite_message(path, exc: sqlite3.Error) -> str:
    """One line for an SQLite failure on a store, saying what the user can do."""
    text = str(exc)
    if "disk is full" in text or "disk I/O error" in text:
        return (
            f"store '{path}': the disk is full or failing (SQLite: {text}); the "
            "results committed so far are safe: free some space and run the same "
            "command again to resume."
        )
    if "malformed" in text or "not a database" in text:
        return (
            f"store '{path}' is corrupt (SQLite: {text}); `sqlite3 {path} .recover` "
            "may save what is left."
        )
    if "locked" in text or "busy" in text:
        return (
            f"store '{path}' stayed locked by another process for 60 s (SQLite: "
            f"{text}); try again."
        )
    return f"store '{path}': SQLite error: {text}."


@contextlib.contextmanager
def sqlite_errors(path, error=DataError):
    """Turn an SQLite failure (corrupt page, full disk, lock) into one ``error`` line."""
    try:
        yield
    except sqlite3.Error as exc:
        raise error(sqlite_message(path, exc)) from None


def loads(raw, what: str, path, error=DataError):
    """Decode a JSON column of a store, naming the row when it is malformed."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise error(
            f"store '{path}': {what} holds malformed JSON ({exc}); the store was "
            "changed outside vareval."
        ) from None


def store_rows(con: sqlite3.Connection) -> list[tuple]:
    """Every trial row, in id order (the columns the tidy table needs)."""
    return con.execute(
        "SELECT id, factors, experiment, seed, config_label, config_index, rerun, "
        "config, "
        "metrics, status, attempts, started, finished, host, error FROM trials ORDER "
        "BY id"
    ).fetchall()


def config_label(levels: dict, label: str, own_space) -> str:
    """A trial's configuration label, prefixed with its levels of the ``own_space`` factors.

    With per-level search spaces, ``s0_c0`` of ``logreg`` and of ``forest``
    are different settings; ``logreg/s0_c0`` names one.
    """
    if not own_space:
        return label
    return "/".join(str(levels.get(f)) for f in own_space) + f"/{label}"


def tidy_frame(
    rows: list[tuple],
    factor_names,
    config_names,
    *,
    own_space=(),
    path="store",
    error=DataError,
) -> pd.DataFrame:
    """Turn trial rows into the tidy table (see :func:`read_store_table`).

    ``own_space`` names the factors whose levels have their own search spaces:
    a configuration label (``s0_c0``) then means a different setting at each
    level, so the table's ``config`` is prefixed with the levels
    (``logreg/s0_c0``) and one label identifies one setting, for any tool
    that reads the table. A malformed JSON column raises ``error`` naming the
    trial and the column.
    """
    records = []
    metric_names: dict[str, None] = {}
    types: dict[str, set] = {}  # per parameter, the Python types of its values
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
        error_text,
    ) in rows:
        levels = loads(factors, f"trial {tid}'s `factors`", path, error)
        rec = {
            "trial_id": tid,
            **levels,
            "experiment": experiment,
            "seed": seed,
            "config": config_label(levels, label, own_space),
            "config_index": cidx,
            "rerun": rerun,
        }
        conf = loads(config, f"trial {tid}'s `config`", path, error)
        rec.update(("\0c" + k, v) for k, v in conf.items())
        for k, v in conf.items():
            types.setdefault(k, set()).add(type(v))
        m = loads(metrics, f"trial {tid}'s `metrics`", path, error) if metrics else {}
        for k in m:
            metric_names.setdefault(k, None)
        rec.update(("\0m" + k, v) for k, v in m.items())
        rec.update(
            status=status,
            attempts=attempts,
            started=started,
            finished=finished,
            host=host,
            error=error_text,
        )
        records.append(rec)
    taken = (
        set(DESIGN_COLUMNS)
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
    for k in config_names:  # an integer parameter some trials lack stays integer
        col = rename["\0c" + k]
        if types.get(k) == {int} and df[col].isna().any():
            df[col] = df[col].astype("Int64")
    df.attrs["metrics"] = [rename["\0m" + k] for k in metric_names]
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
        ``config`` (the configuration's label, one per setting: prefixed with
        the levels that have their own search space, ``logreg/s0_c0``),
        ``config_index``, ``rerun``,
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
        with sqlite_errors(path):
            raw = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
            rows = store_rows(con)
    finally:
        con.close()
    if raw is None:
        raise DataError(f"store '{path}' holds no experiment yet.")
    spec = loads(raw[0], "the experiment's declaration (meta `spec`)", path)
    if not isinstance(spec, dict) or not {"factors", "space"} <= set(spec):
        raise DataError(
            f"store '{path}': the experiment's declaration (meta `spec`) lacks "
            "`factors` or `space`; the store was changed outside vareval."
        )
    df = tidy_frame(
        rows,
        list(spec["factors"]),
        parameter_names(spec),
        own_space=list(spec.get("level_spaces") or {}),
        path=path,
    )
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
        not_done = df.loc[~keep].to_dict("records")
        df = df.loc[keep].reset_index(drop=True)
        df.attrs["not_done"] = not_done  # counted by vareval.data.runs
    df.attrs["spec"] = spec
    df.attrs["rerun_mode"] = spec.get("rerun_mode", "same")
    return df
