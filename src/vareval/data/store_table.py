"""Reading a vareval run store (SQLite) as a tidy results table.

The store is written by the experiment layer's store module; this module only
reads it, so that every analysis can take a store in place of a results file.
The table has one row per trial and one column per factor, configuration key
and metric, plus the design's columns (``experiment``, ``seed``, ``config``,
``config_index``, ``rerun``) and the trial's ``status``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from vareval.errors import DataError, VarevalWarning
from vareval.stats._lazy import _OnFirstUse

sqlite3 = _OnFirstUse("sqlite3")  # imported when a store is opened: reading a CSV never needs it

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


# a trial row's fields, in the order store_rows gives them
FIELDS = ("id", "factors", "experiment", "seed", "config_label", "config_index", "rerun",
          "config", "metrics", "status", "attempts", "started", "finished", "host", "error")


def store_rows(con: sqlite3.Connection) -> list[tuple]:
    """Every trial row, in id order (the :data:`FIELDS` the tidy table needs)."""
    return con.execute(f"SELECT {', '.join(FIELDS)} FROM trials ORDER BY id").fetchall()


def config_label(levels: dict, label: str, own_space) -> str:
    """A trial's configuration label, prefixed with its levels of the ``own_space`` factors.

    With per-level search spaces, ``s0_c0`` of ``logreg`` and of ``forest``
    are different settings; ``logreg/s0_c0`` names one.
    """
    if not own_space:
        return label
    return "/".join(str(levels.get(f)) for f in own_space) + f"/{label}"


# the trial's bookkeeping columns, after its settings and metrics
BOOKKEEPING = ("status", "attempts", "started", "finished", "duration", "host", "error")


def tidy_frame(
    rows: list[tuple],
    factor_names,
    config_names,
    *,
    own_space=(),
    path="store",
    error=DataError,
    columns=None,
    spec=None,
) -> pd.DataFrame:
    """Turn trial rows (:func:`store_rows`) into the tidy table (see :func:`read_store_table`).

    ``own_space`` names the factors whose levels have their own search spaces:
    a configuration label (``s0_c0``) then means a different setting at each
    level, so the table's ``config`` is prefixed with the levels
    (``logreg/s0_c0``) and one label identifies one setting, for any tool
    that reads the table. ``columns`` (and ``spec``, what a callable
    ``columns`` is given) chooses the columns, as in :func:`read_store_table`.
    A malformed JSON column raises ``error`` naming the trial and the column.
    """
    fields = _fields(rows)
    metrics = _decoded(fields["metrics"], fields["id"], "metrics", path, error)
    names, params, measured = _names(factor_names, config_names, metrics)
    keep = _chosen(names, columns, spec)
    df = _tidy(fields, metrics, names, keep, factor_names, params, measured, own_space,
               path, error)
    return _only(df, keep)


def _only(df: pd.DataFrame, keep: list) -> pd.DataFrame:
    """``df``'s columns ``keep`` (it may hold more: those the table was chosen on)."""
    if list(df.columns) == keep:
        return df
    out = df[keep]
    out.attrs = dict(df.attrs)
    return out


def _fields(rows: list[tuple], fields=FIELDS) -> dict:
    """Rows of ``fields`` (those of :func:`store_rows`) as one list per field."""
    if not rows:
        return {f: [] for f in fields}
    return dict(zip(fields, map(list, zip(*rows, strict=True)), strict=True))


def _read_fields(con: sqlite3.Connection, skip) -> dict:
    """Every trial's fields but those in ``skip``, in id order, one list per field."""
    fields = [f for f in FIELDS if f not in skip]
    rows = con.execute(f"SELECT {', '.join(fields)} FROM trials ORDER BY id").fetchall()
    return _fields(rows, fields)


def _decoded(raw: list, ids: list, what: str, path, error) -> list:
    """Each trial's JSON column ``what`` decoded (no ``metrics``: ``{}``).

    Every row is decoded in one call, so 10^6 trials cost the parsing, not a
    Python call per trial; when a row is not one JSON object, decoding row
    by row finds it and names the trial.
    """
    empty = "{}" if what == "metrics" else ""
    # a trial's levels and configuration are shared with others: each text is decoded once
    texts = list(dict.fromkeys(raw)) if what != "metrics" else raw
    try:
        out = json.loads("[" + ",".join([r or empty for r in texts]) + "]")
    except (TypeError, ValueError):
        out = None
    if out is None or len(out) != len(texts) or not set(map(type, out)) <= {dict}:
        return [loads(r, f"trial {t}'s `{what}`", path, error) if r or not empty else {}
                for t, r in zip(ids, raw, strict=True)]
    if texts is raw:
        return out
    decoded = dict(zip(texts, out, strict=True))
    return [decoded[r] for r in raw]


def _names(factor_names, config_names, metrics: list) -> tuple[list, dict, dict]:
    """The table's columns in order, and the column of each parameter and metric.

    A parameter or metric named like another column gets a ``config_`` or
    ``metric_`` prefix; metrics come in order of first appearance.
    """
    taken = set(DESIGN_COLUMNS) | set(factor_names) | set(BOOKKEEPING)
    params = {k: k if k not in taken else f"config_{k}" for k in config_names}
    taken |= set(params.values())
    measured = {k: k if k not in taken else f"metric_{k}"
                for k in dict.fromkeys(itertools.chain.from_iterable(metrics))}
    names = ["trial_id", *factor_names, "experiment", "seed", "config", "config_index",
             "rerun", *params.values(), *measured.values(), *BOOKKEEPING]
    return names, params, measured


def _chosen(names: list, columns, spec) -> list:
    """The columns to build: ``columns`` (or what a callable chooses), else every column.

    As for a file (:func:`vareval.data.io.read_table`), naming a column the
    store lacks builds every column, so the error that follows lists them.
    """
    if callable(columns):
        columns = columns(list(names), spec)
    if columns is None or not set(columns) <= set(names):
        return names
    return [n for n in names if n in set(columns)]


def _skipped(keep, factor_names, params: dict, own_space) -> set:
    """The fields of :func:`store_rows` that ``keep``'s columns do not need."""
    needed = {"id", "status", *keep}  # a table of finished trials is chosen on status
    if "duration" in needed:
        needed |= {"started", "finished"}
    if "config" in needed:
        needed.add("config_label")
        if own_space:
            needed.add("factors")
    if set(factor_names) & needed:
        needed.add("factors")
    if set(params.values()) & needed:
        needed.add("config")
    return set(FIELDS) - needed


def _tidy(fields, metrics, names, keep, factor_names, params, measured, own_space, path,
          error) -> pd.DataFrame:
    """The table's ``keep`` columns (and ``status``) from the trials' fields."""
    built = set(keep) | {"status"}
    if "duration" in built:
        built |= {"started", "finished"}
    ids, nan = fields["id"], np.nan
    levels = confs = None
    if set(factor_names) & built or ("config" in built and own_space):
        levels = _decoded(fields["factors"], ids, "factors", path, error)
    if set(params.values()) & built:
        confs = _decoded(fields["config"], ids, "config", path, error)
    columns = {"trial_id": ids}
    columns.update((f, [lv.get(f, nan) for lv in levels]) for f in factor_names if f in built)
    columns.update((k, fields[k]) for k in ("experiment", "seed", "config_index", "rerun",
                                            *BOOKKEEPING) if k in fields and k in built)
    if "config" in built:
        columns["config"] = fields["config_label"] if not own_space else [
            config_label(lv, label, own_space)
            for lv, label in zip(levels, fields["config_label"], strict=True)]
    columns.update((col, [c.get(k, nan) for c in confs]) for k, col in params.items()
                   if col in built)
    columns.update((col, [m.get(k, nan) for m in metrics]) for k, col in measured.items()
                   if col in built)
    order = [n for n in names if n in columns]
    records = list(zip(*(columns[n] for n in order), strict=True))
    df = pd.DataFrame.from_records(records, columns=order)
    for col in measured.values():
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    for k, col in params.items():  # an integer parameter some trials lack stays integer
        if col in df and df[col].isna().any() and {type(c[k]) for c in confs if k in c} == {int}:
            df[col] = df[col].astype("Int64")
    if "duration" in built:
        df.insert(
            df.columns.get_loc("finished") + 1,
            "duration",
            (df["finished"] - df["started"]).where(df["status"] == "done", np.nan),
        )
    df.attrs["metrics"] = list(measured.values())
    return df


def read_store_table(path, *, status: str | None = "done", columns=None) -> pd.DataFrame:
    """Read a vareval run store as a tidy DataFrame, one row per trial.

    Parameters
    ----------
    path : str or path-like
        A store written by ``vareval run`` (``.db``, ``.sqlite``).
    status : {"done", "all"} or None, default "done"
        ``"done"`` keeps the finished trials (those with metrics) and warns
        with the count of trials left out; ``"all"`` (or None) keeps every
        trial, with NaN metrics for the unfinished and failed ones.
    columns : sequence of str or callable, optional
        Build only these columns (in the table's order), so a command costs
        what the columns it uses cost. A callable is given the table's column
        names and the store's declaration and returns the columns (None:
        every column). When one of them is not in the table, every column is
        built, so the error that follows lists them. Default: every column.

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
        (seconds), ``host`` and ``error`` (those ``columns`` chooses).
        ``df.attrs`` holds the experiment's declaration (``spec``),
        ``rerun_mode`` and the store's metric columns (``metrics``).

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
        with sqlite_errors(path), _paused_gc():
            con.execute("BEGIN")  # one snapshot: a run may be writing the store
            raw = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
            spec = _declaration(raw, path)
            # the metrics first: their names are columns to choose from
            rows = con.execute("SELECT id, metrics FROM trials ORDER BY id").fetchall()
            metrics = _decoded([r[1] for r in rows], [r[0] for r in rows], "metrics", path,
                               DataError)
            del rows
            factor_names = list(spec["factors"])
            own_space = list(spec.get("level_spaces") or {})
            names, params, measured = _names(factor_names, parameter_names(spec), metrics)
            keep = _chosen(names, columns, spec)
            skip = _skipped(keep, factor_names, params, own_space) | {"metrics"}
            fields = _read_fields(con, skip)
            con.execute("COMMIT")
    finally:
        con.close()
    with _paused_gc():
        df = _tidy(fields, metrics, names, keep, factor_names, params, measured, own_space,
                   path, DataError)
    if status == "done":
        keep_rows = df["status"] == "done"
        left = df.loc[~keep_rows, "status"].value_counts()
        if len(left):
            what = ", ".join(f"{n} {s}" for s, n in left.items())
            warnings.warn(
                f"store '{path}': {int((~keep_rows).sum())} of {len(df)} trials are not "
                "done "
                f"({what}) and are left out; see `vareval status {path}`.",
                VarevalWarning,
                stacklevel=2,
            )
        not_done = df.loc[~keep_rows].to_dict("records")
        df = df.loc[keep_rows].reset_index(drop=True)
        df.attrs["not_done"] = not_done  # counted by vareval.data.runs
    df = _only(df, keep)
    df.attrs["spec"] = spec
    df.attrs["rerun_mode"] = spec.get("rerun_mode", "same")
    return df


@contextlib.contextmanager
def _paused_gc():
    """No cyclic garbage collection while a store's rows become columns.

    The millions of row tuples and values made there hold no cycles, yet each
    allocation burst sets off a collection that walks them all (a third of the
    reading time at 10^5 trials).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _declaration(raw, path) -> dict:
    """The experiment's declaration stored in the ``meta`` table, checked."""
    if raw is None:
        raise DataError(f"store '{path}' holds no experiment yet.")
    spec = loads(raw[0], "the experiment's declaration (meta `spec`)", path)
    if not isinstance(spec, dict) or not {"factors", "space"} <= set(spec):
        raise DataError(
            f"store '{path}': the experiment's declaration (meta `spec`) lacks "
            "`factors` or `space`; the store was changed outside vareval."
        )
    return spec
