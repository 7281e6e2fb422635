"""The run store: one SQLite file (WAL mode), one row per trial.

Schema (version 5, ``PRAGMA user_version``; ``PRAGMA application_id`` is
``0x56524556``, "VREV", so a database from another program is recognised):

``meta(key, value)``
    ``spec`` (the experiment's declaration as JSON, with its root entropy;
    rewritten when the design grows), ``created``, ``vareval_version``,
    ``rerun_mode``, ``config_scheme`` (how configurations are drawn; absent
    in stores made before version 2, which use scheme 1).
``runs``
    One row per call of ``run``: ``id``, ``started``, ``finished``,
    ``engine``, ``provenance`` (JSON: trial code hash, git commit and dirty
    state, Python, package versions, host, CPU, GPUs).
``curves(trial_id, name, step, value)``
    What a trial reported with ``trial.report(step, **metrics)``.
``artifacts(trial_id, name, size, sha256, data, path)``
    Files a trial kept with ``trial.artifact``: ``data`` holds the bytes up
    to ``ARTIFACT_INLINE_LIMIT``, larger ones are written beside the store
    (``<store>.artifacts/<trial id>/<name>``) and ``path`` says where.
``sequences(metric, a, b, settings, status, reason, stop, sequence, updated)``
    A sequential run (:mod:`vareval.experiment.sequential`) comparing
    experiments ``a`` and ``b`` on ``metric``: its settings (JSON), whether
    it is ``running`` or ``stopped``, why and at how many pairs it stopped,
    and in ``sequence`` (JSON) the bounded sequence's method and the
    incomplete seeds. Stores of version 3 and 4 held the whole confidence
    sequence there too (lists ``n``, ``estimate``, ``low``, ``high``,
    ``looks``), rewritten at every look; such a record is still read, and the
    run's next look moves it into ``sequence_points``.
``sequence_points(metric, a, b, n, estimate, low, high, look)``
    The confidence sequence of a sequential run, one row per number of
    pairs ``n``; ``look`` is 1 where the rule looked. A look appends the rows
    of its new pairs only.
``trials``
    ``id``; the trial's identity ``(factors, seed, config_index, rerun)``
    (UNIQUE, so re-populating the grid on resume is idempotent);
    ``experiment``, ``config_label``, ``config`` (JSON), ``seeds`` (JSON: per
    source the exact ``entropy`` and ``spawn_key`` of its stream); ``status``
    (pending, running, done, failed), ``attempts``, ``metrics`` (JSON of
    numbers), ``started``, ``finished`` (Unix seconds), ``host``, ``error``,
    ``traceback`` (for a command trial, the last lines of its stderr); the
    claim: ``runner`` (a token per run), ``runner_host``, ``runner_pid`` and
    ``heartbeat``; ``run_id``, the run that wrote the result; ``execution``
    (JSON: what the trial ran with: ``threads``, ``devices``, and for a
    command its filled ``command`` and ``exit_code``).

Older stores are migrated in place, additively, when opened for writing:
version 1 (no ``runs``, ``curves``, ``artifacts``, ``run_id``) and version 2
(no ``sequences``), version 3 (no ``trials.execution``) and version 4 (no
``sequence_points``). Read-only readers
open them as they are.

Growing: a store accepts a declaration with more seeds, configurations,
reruns or factor levels and appends the new trials; every existing trial, its
streams and its configuration stay as they are. Anything that would change
an existing trial (space, sources, entropy, rerun mode, params, trial
function) is refused, naming the difference.

Concurrency: every state change is one transaction opened with ``BEGIN
IMMEDIATE`` (SQLite's write lock), so claiming a batch of trials is atomic and
two runners never hold the same trial. A runner refreshes the heartbeat of its
claims; another runner's claim whose heartbeat is older than ``stale_after``
seconds, or whose runner process on this host no longer exists, is taken back.
The file is only ever opened through SQLite, read-only for commands that only
read (see :func:`vareval.data.store_table.connect`). A result is
written only while its runner still holds the claim, so a trial is never
recorded twice.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import socket
import sqlite3
import time
from pathlib import Path

import numpy as np

from vareval.data.store_table import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    check_identity,
    config_label,
    connect,
    loads,
    parameter_names,
    probe,
    sqlite_message,
    store_rows,
    tidy_frame,
)
from vareval.errors import ExperimentError
from vareval.experiment.design import config_label as grid_label
from vareval.experiment.design import design_cells, experiment_name
from vareval.experiment.spec import ExperimentSpec
from vareval.experiment.streams import (
    CONFIG_SCHEME,
    configuration,
    configurations,
    trial_seeds,
)

ARTIFACT_INLINE_LIMIT = 1 << 20  # bytes kept inside the store; larger go beside it

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trials (
    id INTEGER PRIMARY KEY,
    factors TEXT NOT NULL,
    experiment TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_index INTEGER NOT NULL,
    config_label TEXT NOT NULL,
    config TEXT NOT NULL,
    rerun INTEGER NOT NULL,
    seeds TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    metrics TEXT,
    started REAL,
    finished REAL,
    host TEXT,
    error TEXT,
    traceback TEXT,
    runner TEXT,
    runner_host TEXT,
    runner_pid INTEGER,
    heartbeat REAL,
    run_id INTEGER,
    execution TEXT,
    UNIQUE (factors, seed, config_index, rerun)
);
CREATE INDEX trials_status ON trials (status, id);
"""

# version 2: added to version 1 stores by _migrate (additive only)
_SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    finished REAL,
    engine TEXT,
    provenance TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS curves (
    trial_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    step INTEGER NOT NULL,
    value REAL,
    PRIMARY KEY (trial_id, name, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifacts (
    trial_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BLOB,
    path TEXT,
    PRIMARY KEY (trial_id, name)
);
"""

# version 3: added to older stores by _migrate (additive only)
_SCHEMA_3 = """
CREATE TABLE IF NOT EXISTS sequences (
    metric TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    settings TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped')),
    reason TEXT,
    stop INTEGER,
    sequence TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (metric, a, b)
);
"""

# version 5: a sequential run's sequence as rows, appended look by look
_SCHEMA_5 = """
CREATE TABLE IF NOT EXISTS sequence_points (
    metric TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    n INTEGER NOT NULL,
    estimate REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    look INTEGER NOT NULL,
    PRIMARY KEY (metric, a, b, n)
) WITHOUT ROWID;
"""

# pending, or claimed by another runner whose heartbeat is older than the limit
_CLAIMABLE = (
    "status = 'pending' OR (status = 'running' AND heartbeat < ? AND runner IS NOT ?)"
)
_TASK_COLUMNS = "id, factors, config, seed, config_index, config_label, rerun, seeds"


def _now() -> float:
    return time.time()


def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (zombies count as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _retry_while_locked(step, attempts: int = 200, pause: float = 0.05):
    """Run ``step``, retrying while another process holds the lock.

    Switching a new file to WAL mode takes an exclusive lock that SQLite's busy
    handler does not wait for, so two runners creating one store at once need
    this loop.
    """
    for _ in range(attempts - 1):
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            time.sleep(pause)
    return step()


class Store:
    """An open run store.

    Parameters
    ----------
    path : str or path-like
        The SQLite file.
    create : bool, default False
        Create the file (and schema) when it does not exist or is an empty
        database; otherwise a missing file is an error.
    readonly : bool, default False
        Open with SQLite's ``mode=ro``: nothing in the file changes (no WAL
        switch, no schema), for commands that only read.

    The file is opened only through SQLite (see
    :func:`vareval.data.store_table.connect`); a file that is not a vareval
    store is refused before anything is written to it.

    Raises
    ------
    ExperimentError
        If the file is missing (and ``create`` is false), not SQLite, an SQLite
        database of another program, corrupt, or of a newer schema.
    """

    def __init__(self, path, *, create: bool = False, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self.con = connect(
            self.path, readonly=readonly, create=create, error=ExperimentError
        )
        try:
            empty = probe(self.con, self.path, ExperimentError) == (0, 0, 0)
            if empty and create and not readonly:
                _retry_while_locked(self._create)
            version = check_identity(self.con, self.path, ExperimentError)
            if not readonly:
                _retry_while_locked(self._use_wal)
                if version < SCHEMA_VERSION:
                    _retry_while_locked(self._migrate)
        except sqlite3.Error as exc:
            self.con.close()
            raise ExperimentError(sqlite_message(self.path, exc)) from None
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.run_id = None  # set by begin_run

    # -- plumbing ------------------------------------------------------
    def _use_wal(self) -> None:
        mode = self.con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            self.con.close()
            raise ExperimentError(
                f"store '{self.path}': SQLite refused WAL mode (got {mode!r}); "
                "put the store on a local file system."
            )
        self.con.execute("PRAGMA synchronous = NORMAL")

    def _create(self) -> None:
        """Write the schema into an empty database (checked again under the lock)."""
        self._use_wal()
        with self.transaction():
            if probe(self.con, self.path, ExperimentError) != (0, 0, 0):
                return  # another runner created it first
            for statement in (_SCHEMA + _SCHEMA_2 + _SCHEMA_3 + _SCHEMA_5).split(";"):
                if statement.strip():
                    self.con.execute(statement)
            self.con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            from vareval import __version__

            self.con.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("created", repr(_now())),
                    ("vareval_version", __version__),
                    ("config_scheme", str(CONFIG_SCHEME)),
                ],
            )

    def _migrate(self) -> None:
        """Bring an older store to this version: new tables and a column, nothing rewritten."""
        with self.transaction():
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return  # another runner migrated it first
            if version < 2:
                self.con.execute("ALTER TABLE trials ADD COLUMN run_id INTEGER")
                self.con.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('config_scheme', '1')"
                )
            for statement in (_SCHEMA_2 + _SCHEMA_3 + _SCHEMA_5).split(";"):
                if statement.strip():
                    self.con.execute(statement)
            columns = {r[1] for r in self.con.execute("PRAGMA table_info(trials)")}
            if "execution" not in columns:
                self.con.execute("ALTER TABLE trials ADD COLUMN execution TEXT")
            self.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _has_table(self, name: str) -> bool:
        """Whether the store has this table (a read-only version 1 store lacks the new ones)."""
        return bool(
            self.con.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            ).fetchone()[0]
        )

    def transaction(self):
        """A context manager: ``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK``)."""
        return _Immediate(self.con)

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the experiment --------------------------------------------------
    def meta(self, key: str):
        """The value stored under ``key`` in the meta table (None if absent)."""
        row = self.con.execute(
            "SELECT value FROM meta WHERE key = ?", (key,)
        ).fetchone()
        return row[0] if row else None

    def spec(self) -> ExperimentSpec | None:
        """The experiment this store was created for (None for a fresh store)."""
        return _decode_spec(self.meta("spec"), self.path)

    def config_scheme(self) -> int:
        """How this store draws configurations (1: before version 2; 2: prefix-stable)."""
        return int(self.meta("config_scheme") or 1)

    def prepare(self, spec: ExperimentSpec) -> ExperimentSpec:
        """Record the experiment and insert its grid as pending trials (idempotent).

        A fresh store takes the spec (drawing a root entropy when it has none).
        A store that already holds an experiment grows to the larger of the
        two designs (seeds, configurations, reruns, factor levels), appending
        the new trials; it refuses a spec that would change an existing trial
        (space, sources, entropy, rerun mode, params, trial function), naming
        the difference. It supplies its entropy to a spec that has none.

        Returns
        -------
        ExperimentSpec
            The store's design after this call, with its root entropy set.
        """
        with self.transaction():
            raw = self.meta("spec")
            stored = None
            if raw is None:
                if spec.entropy is None:
                    spec = spec.with_entropy(int(np.random.SeedSequence().entropy))
                self.con.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("spec", json.dumps(spec.to_dict())),
                        ("rerun_mode", spec.rerun_mode),
                    ],
                )
            else:
                stored = _decode_spec(raw, self.path)
                spec = self._grow(stored, spec)
                self.con.execute(
                    "UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps(spec.to_dict()),)
                )
            self.con.executemany(
                "INSERT OR IGNORE INTO trials (factors, experiment, seed, "
                "config_index, "
                "config_label, config, rerun, seeds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _grid_rows(spec, self.config_scheme(), self._complete(stored)),
            )
        return spec

    def _complete(self, stored: ExperimentSpec | None) -> ExperimentSpec | None:
        """``stored`` if the store holds all its trials (so only new ones need inserting)."""
        if stored is None:
            return None
        have = self.con.execute("SELECT count(*) FROM trials").fetchone()[0]
        return stored if have == stored.n_trials else None

    def _grow(self, stored: ExperimentSpec, spec: ExperimentSpec) -> ExperimentSpec:
        """The union of the stored design and ``spec``, or an error naming what differs."""
        if spec.entropy is None:
            spec = spec.with_entropy(stored.entropy)
        old, new = stored.identity(), spec.identity()
        growable = ("seeds", "configs", "reruns", "factors", "level_spaces")
        diff = [k for k in new if k not in growable and old.get(k) != new[k]]
        if list(stored.factors) != list(spec.factors):
            diff.insert(0, "factors")
        elif any(  # a new level may bring its own space; existing levels keep theirs
            _level_space(stored, f, v) != _level_space(spec, f, v)
            for f, levels in stored.factors.items()
            for v in levels
        ):
            diff.append("level_spaces")
        if diff:
            raise ExperimentError(
                f"store '{self.path}' holds a different experiment ({', '.join(diff)} "
                f"differ{'s' if len(diff) == 1 else ''}), and existing trials would "
                "change; resume with the same declaration (more seeds, configs, reruns "
                "or factor levels are fine) or use a new --store."
            )
        if spec.configs > stored.configs and self.config_scheme() == 1:
            raise ExperimentError(
                f"store '{self.path}' was made by a vareval whose configurations "
                "depend on `configs`; adding configurations would redraw them. "
                "Seeds, reruns and factor levels can grow; for more configurations "
                "use a new --store."
            )
        factors = {
            name: tuple(levels)
            + tuple(v for v in spec.factors[name] if str(v) not in set(map(str, levels)))
            for name, levels in stored.factors.items()
        }
        return dataclasses.replace(
            spec,
            factors=factors,
            seeds=max(spec.seeds, stored.seeds),
            configs=max(spec.configs, stored.configs),
            reruns=max(spec.reruns, stored.reruns),
        )

    # -- runs and their provenance ------------------------------------------
    def begin_run(self, provenance: dict, engine: str) -> int:
        """Record the start of a run with its provenance; returns the run's id.

        Results written by :meth:`complete` from now on belong to this run.
        """
        with self.transaction():
            self.run_id = self.con.execute(
                "INSERT INTO runs (started, engine, provenance) VALUES (?, ?, ?)",
                (_now(), engine, json.dumps(provenance)),
            ).lastrowid
        return self.run_id

    def end_run(self, run_id: int) -> None:
        """Record when a run finished."""
        with self.transaction():
            self.con.execute("UPDATE runs SET finished = ? WHERE id = ?", (_now(), run_id))

    def provenance(self, run_id: int | None = None) -> dict | None:
        """The provenance of run ``run_id`` (default: the latest run); None if unrecorded."""
        if not self._has_table("runs"):
            return None
        if run_id is None:
            row = self.con.execute(
                "SELECT provenance FROM runs ORDER BY id DESC LIMIT 1"
            ).fetchone()
        else:
            row = self.con.execute(
                "SELECT provenance FROM runs WHERE id = ?", (int(run_id),)
            ).fetchone()
        return None if row is None else loads(row[0], "a run's provenance", self.path,
                                              ExperimentError)

    # -- claiming and writing ---------------------------------------------
    def recover(self) -> int:
        """Release the claims of runner processes on this host that no longer exist."""
        rows = self.con.execute(
            "SELECT DISTINCT runner, runner_pid FROM trials "
            "WHERE status = 'running' AND runner_host = ?",
            (self.host,),
        ).fetchall()
        dead = [r for r, pid in rows if pid is not None and not _pid_alive(pid)]
        n = 0
        if dead:
            with self.transaction():
                for token in dead:
                    n += self.con.execute(
                        "UPDATE trials SET status = 'pending', runner = NULL, "
                        "heartbeat = NULL "
                        "WHERE status = 'running' AND runner = ?",
                        (token,),
                    ).rowcount
        return n

    def reset_failed(self) -> int:
        """Mark every failed trial pending again (for ``retry_failed``)."""
        with self.transaction():
            return self.con.execute(
                "UPDATE trials SET status = 'pending' WHERE status = 'failed'"
            ).rowcount

    def claimable(self, stale_after: float, token: str | None = None) -> int:
        """How many trials the runner ``token`` could claim now."""
        return self.con.execute(
            f"SELECT count(*) FROM trials WHERE {_CLAIMABLE}",
            (_now() - stale_after, token),
        ).fetchone()[0]

    def claim(self, n: int, token: str, *, stale_after: float = 120.0) -> list[dict]:
        """Atomically claim up to ``n`` trials: pending or with a stale heartbeat.

        A claim of this runner itself (``token``) is never stale: it is alive,
        since it is asking.

        Returns
        -------
        list of dict
            One task per claimed trial: ``id``, ``factors``, ``config``,
            ``seed``, ``config_index``, ``config_label``, ``rerun``, ``seeds``.
        """
        now = _now()
        with self.transaction():
            rows = self.con.execute(
                f"SELECT {_TASK_COLUMNS} FROM trials WHERE {_CLAIMABLE} "
                "ORDER BY id LIMIT ?",
                (now - stale_after, token, int(n)),
            ).fetchall()
            self.con.executemany(
                "UPDATE trials SET status = 'running', runner = ?, runner_host = ?, "
                "runner_pid = ?, heartbeat = ?, started = ?, attempts = attempts + 1 "
                "WHERE id = ?",
                [(token, self.host, self.pid, now, now, r[0]) for r in rows],
            )
        return [
            {
                "id": r[0],
                "factors": self._loads(r[1], r[0], "factors"),
                "config": self._loads(r[2], r[0], "config"),
                "seed": r[3],
                "config_index": r[4],
                "config_label": r[5],
                "rerun": r[6],
                "seeds": self._loads(r[7], r[0], "seeds"),
            }
            for r in rows
        ]

    def _loads(self, raw, trial_id, column):
        return loads(raw, f"trial {trial_id}'s `{column}`", self.path, ExperimentError)

    def held_elsewhere(self, token: str) -> list[tuple]:
        """Trials running under other runners' claims: ``(host, pid, count)`` each."""
        return self.con.execute(
            "SELECT runner_host, runner_pid, count(*) FROM trials "
            "WHERE status = 'running' AND runner IS NOT ? "
            "GROUP BY runner_host, runner_pid ORDER BY runner_host, runner_pid",
            (token,),
        ).fetchall()

    def heartbeat(self, token: str) -> None:
        """Refresh the heartbeat of every trial this runner holds."""
        beat(self.con, token)

    def complete(self, results: list[dict], token: str) -> int:
        """Write finished trials in one transaction; returns how many were written.

        A result is written only if this runner still holds the trial's claim
        (a trial taken back as stale and finished elsewhere is not overwritten).
        Its learning curves and artifacts replace any from an earlier attempt;
        it is marked with the run begun by :meth:`begin_run`.
        """
        if not results:
            return 0
        written = 0
        with self.transaction():
            for r in results:
                n = self.con.execute(
                    "UPDATE trials SET status = ?, metrics = ?, started = ?, finished = ?, "
                    "host = ?, error = ?, traceback = ?, heartbeat = NULL, run_id = ?, "
                    "execution = ? WHERE id = ? AND status = 'running' AND runner = ?",
                    (
                        r["status"],
                        None if r.get("metrics") is None else json.dumps(r["metrics"]),
                        r.get("started"),
                        r.get("finished"),
                        r.get("host"),
                        r.get("error"),
                        r.get("traceback"),
                        self.run_id,
                        None if r.get("execution") is None else json.dumps(r["execution"]),
                        r["id"],
                        token,
                    ),
                ).rowcount
                written += n
                if n:
                    self._write_extras(r)
        return written

    def _write_extras(self, r: dict) -> None:
        tid = r["id"]
        curves, artifacts = r.get("curves") or (), r.get("artifacts") or ()
        if not curves and not artifacts and not self._has_extras(tid):
            return
        self.con.execute("DELETE FROM curves WHERE trial_id = ?", (tid,))
        self.con.execute("DELETE FROM artifacts WHERE trial_id = ?", (tid,))
        self.con.executemany(
            "INSERT OR REPLACE INTO curves (trial_id, name, step, value) VALUES (?, ?, ?, ?)",
            [(tid, name, step, value) for step, name, value in curves],
        )
        for name, data in artifacts:
            digest = hashlib.sha256(data).hexdigest()
            path = None
            if len(data) > ARTIFACT_INLINE_LIMIT:
                target = self.artifact_dir / str(tid) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                path, data = str(target.relative_to(self.path.parent)), None
            self.con.execute(
                "INSERT OR REPLACE INTO artifacts (trial_id, name, size, sha256, data, path) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (tid, name, len(data) if data is not None else target.stat().st_size,
                 digest, data, path),
            )

    def _has_extras(self, tid: int) -> bool:
        return bool(
            self.con.execute(
                "SELECT EXISTS (SELECT 1 FROM curves WHERE trial_id = ?) "
                "OR EXISTS (SELECT 1 FROM artifacts WHERE trial_id = ?)",
                (tid, tid),
            ).fetchone()[0]
        )

    @property
    def artifact_dir(self) -> Path:
        """Where artifacts above the inline limit are kept: ``<store>.artifacts/``."""
        return self.path.with_name(self.path.name + ".artifacts")

    def release(self, token: str) -> int:
        """Give back this runner's unfinished claims (status pending again)."""
        with self.transaction():
            return self.con.execute(
                "UPDATE trials SET status = 'pending', runner = NULL, heartbeat = NULL "
                "WHERE status = 'running' AND runner = ?",
                (token,),
            ).rowcount

    # -- sequential runs -------------------------------------------------
    def record_sequence(self, metric: str, a: str, b: str, record: dict, points=None,
                        start: int = 0) -> None:
        """Write (or replace) the record of the sequential run comparing ``a`` and ``b``.

        ``record`` holds ``settings`` (dict), ``status`` (``running`` or
        ``stopped``), ``reason``, ``stop`` and ``sequence`` (dict). ``points``,
        when given, are the sequence's rows past ``start`` pairs as arrays
        ``(n, estimate, low, high, look)``: the stored rows past ``start`` are
        replaced by them and those up to ``start`` kept, so a look writes its
        new pairs only. One transaction.
        """
        with self.transaction():
            if points is not None:
                self.con.execute(
                    "DELETE FROM sequence_points WHERE metric = ? AND a = ? AND b = ? AND n > ?",
                    (metric, a, b, int(start)),
                )
                columns = [np.asarray(c).tolist() for c in points[:4]]
                columns.append(np.asarray(points[4], dtype=int).tolist())
                k = len(columns[0])
                self.con.executemany(
                    "INSERT INTO sequence_points (metric, a, b, n, estimate, low, high, look) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    zip([metric] * k, [a] * k, [b] * k, *columns, strict=True),
                )
            self.con.execute(
                "INSERT OR REPLACE INTO sequences (metric, a, b, settings, status, reason, "
                "stop, sequence, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    metric, a, b, json.dumps(record["settings"]), record["status"],
                    record["reason"], record["stop"], json.dumps(record["sequence"]), _now(),
                ),
            )

    def sequences(self) -> list[dict]:
        """Every recorded sequential run (none in a store made before them).

        Each record's ``sequence`` is a dict of lists ``n``, ``estimate``,
        ``low``, ``high``, ``looks`` (and ``incomplete``, ``method``), read
        from ``sequence_points`` or, in a record an older version wrote, from
        its JSON.
        """
        if not self._has_table("sequences"):
            return []
        rows = self.con.execute(
            "SELECT metric, a, b, settings, status, reason, stop, sequence, updated "
            "FROM sequences ORDER BY updated"
        ).fetchall()
        keys = ("metric", "a", "b", "settings", "status", "reason", "stop", "sequence",
                "updated")
        out = []
        for row in rows:
            rec = dict(zip(keys, row, strict=True))
            for key in ("settings", "sequence"):
                rec[key] = loads(rec[key], f"the sequence's `{key}`", self.path, ExperimentError)
            if "n" not in rec["sequence"]:
                rec["sequence"] = {**self._sequence_points(rec["metric"], rec["a"], rec["b"]),
                                   "incomplete": rec["sequence"].get("incomplete", []),
                                   "method": rec["sequence"].get("method")}
            out.append(rec)
        return out

    def _sequence_points(self, metric: str, a: str, b: str) -> dict:
        """The stored sequence of one comparison as lists (empty without the table)."""
        points = [] if not self._has_table("sequence_points") else self.con.execute(
            "SELECT n, estimate, low, high, look FROM sequence_points "
            "WHERE metric = ? AND a = ? AND b = ? ORDER BY n", (metric, a, b)
        ).fetchall()
        n, estimate, low, high, look = ([r[i] for r in points] for i in range(5))
        return {"n": n, "estimate": estimate, "low": low, "high": high,
                "looks": [k for k, flag in zip(n, look, strict=True) if flag]}

    # -- reading -----------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Trials per status."""
        out = dict.fromkeys(("pending", "running", "done", "failed"), 0)
        out.update(
            self.con.execute("SELECT status, count(*) FROM trials GROUP BY status")
        )
        return out

    def trial(self, trial_id: int) -> dict:
        """Every stored field of one trial, JSON columns decoded."""
        in_range = -(2**63) <= int(trial_id) < 2**63  # SQLite's integers
        cur = self.con.execute(
            "SELECT * FROM trials WHERE id = ?", (int(trial_id) if in_range else 0,)
        )
        row = cur.fetchone()
        if row is None:
            n = self.con.execute("SELECT max(id) FROM trials").fetchone()[0] or 0
            raise ExperimentError(
                f"trial {trial_id} is not in store '{self.path}' (ids run from 1 to "
                f"{n})."
            )
        rec = dict(zip([c[0] for c in cur.description], row, strict=True))
        for key in ("factors", "config", "seeds", "metrics", "execution"):
            if rec.get(key) is not None:
                rec[key] = self._loads(rec[key], trial_id, key)
        return rec

    def failures(self, limit: int = 10) -> list[dict]:
        """The first failed trials: id, experiment, seed, config, rerun, error."""
        rows = self.con.execute(
            "SELECT id, experiment, seed, config_label, rerun, error FROM trials "
            "WHERE status = 'failed' ORDER BY id LIMIT ?",
            (limit,),
        ).fetchall()
        keys = ("id", "experiment", "seed", "config", "rerun", "error")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def frame(self, *, status: str | None = None):
        """The tidy table of trials (see :func:`vareval.data.read_store_table`)."""
        spec = self.spec()
        if spec is None:
            raise ExperimentError(f"store '{self.path}' holds no experiment yet.")
        df = tidy_frame(
            store_rows(self.con),
            list(spec.factors),
            parameter_names(spec.to_dict()),
            own_space=list(spec.level_spaces),
            path=self.path,
            error=ExperimentError,
        )
        if status is not None:
            df = df.loc[df["status"] == status].reset_index(drop=True)
        df.attrs["spec"] = spec.to_dict()
        df.attrs["rerun_mode"] = spec.rerun_mode
        return df

    def curves(self):
        """Every reported learning curve as a tidy table.

        One row per (trial, step): ``trial_id``, the factors, ``experiment``,
        ``seed``, ``config``, ``rerun``, ``step``, then one column per
        reported metric (NaN where a trial did not report it at that step).
        """
        import pandas as pd

        spec = self.spec()
        factors = list(spec.factors) if spec else []
        if not self._has_table("curves"):
            return pd.DataFrame(columns=["trial_id", *factors, "experiment", "seed", "config",
                                         "rerun", "step"])
        columns = ["trial_id", *factors, "experiment", "seed", "config", "rerun", "step"]
        long = pd.read_sql_query(
            "SELECT trial_id, step, name, value FROM curves ORDER BY trial_id, step", self.con
        )
        if long.empty:
            return pd.DataFrame(columns=columns)
        names = list(dict.fromkeys(long["name"]))
        # (trial, step, name) is the table's key: one value per cell, NaN kept
        wide = long.pivot(index=["trial_id", "step"], columns="name", values="value")
        wide = wide.reset_index()
        wide.columns.name = None
        trials = pd.read_sql_query(
            "SELECT id AS trial_id, factors, experiment, seed, config_label AS config, rerun "
            "FROM trials WHERE id IN (SELECT DISTINCT trial_id FROM curves)",
            self.con,
        )
        levels = trials["factors"].map(json.loads)
        for f in factors:
            trials[f] = levels.map(lambda d, f=f: d.get(f))
        # the trial table's labels: one label, one setting (per-level spaces)
        own = list(spec.level_spaces) if spec else []
        trials["config"] = [
            config_label(d, c, own) for d, c in zip(levels, trials["config"], strict=True)
        ]
        out = trials.drop(columns="factors").merge(wide, on="trial_id", how="right")
        return out[[*columns, *names]].sort_values(["trial_id", "step"], ignore_index=True)

    def artifact(self, trial_id: int, name: str) -> bytes:
        """The bytes of artifact ``name`` of trial ``trial_id``."""
        if not self._has_table("artifacts"):
            raise ExperimentError(f"store '{self.path}' keeps no artifacts (made before them).")
        row = self.con.execute(
            "SELECT data, path, sha256 FROM artifacts WHERE trial_id = ? AND name = ?",
            (int(trial_id), name),
        ).fetchone()
        if row is None:
            have = [r[0] for r in self.con.execute(
                "SELECT name FROM artifacts WHERE trial_id = ? ORDER BY name", (int(trial_id),)
            )]
            raise ExperimentError(
                f"trial {trial_id} has no artifact {name!r}; it has: "
                f"{', '.join(have) or 'none'}."
            )
        data, path, digest = row
        if data is None:
            data = (self.path.parent / path).read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise ExperimentError(
                    f"artifact {name!r} of trial {trial_id} at '{path}' has changed since "
                    "it was stored (sha256 differs)."
                )
        return bytes(data)

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" when the file is sound)."""
        return self.con.execute("PRAGMA integrity_check").fetchone()[0]


def beat(con: sqlite3.Connection, token: str) -> None:
    """Refresh the heartbeat of every trial the runner ``token`` holds."""
    with _Immediate(con):
        con.execute(
            "UPDATE trials SET heartbeat = ? WHERE status = 'running' AND runner = ?",
            (_now(), token),
        )


def _decode_spec(raw, path) -> ExperimentSpec | None:
    """The stored declaration as a spec (None if absent); one line if unreadable."""
    if raw is None:
        return None
    data = loads(raw, "the experiment's declaration (meta `spec`)", path, ExperimentError)
    try:
        return ExperimentSpec.from_dict(data)
    except (TypeError, AttributeError, ExperimentError) as exc:
        raise ExperimentError(
            f"store '{path}': the experiment's declaration (meta `spec`) is invalid "
            f"({exc}); the store was changed outside vareval."
        ) from None


class _Immediate:
    def __init__(self, con):
        self.con = con

    def __enter__(self):
        self.con.execute("BEGIN IMMEDIATE")
        return self.con

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.con.execute("COMMIT")
        else:
            self.con.execute("ROLLBACK")
        return False


def _grid_rows(spec: ExperimentSpec, scheme: int = CONFIG_SCHEME,
               stored: ExperimentSpec | None = None):
    """The design's trials as rows for the trials table; with ``stored``, only those it lacks."""
    outside = None
    if stored is not None:
        outside = (stored.factors, stored.seeds, stored.configs, stored.reruns)
    names = list(spec.factors)
    configs_of: dict[tuple, object] = {}  # per search space (experiments may differ)
    seeds_json: dict[tuple[int, int], str] = {}
    for levels, seed, cidx, rerun in design_cells(
        spec.factors, spec.seeds, spec.configs, spec.reruns, outside=outside
    ):
        factors = {n: _plain(v) for n, v in zip(names, levels, strict=True)}
        space_key = tuple(str(factors[f]) for f in spec.level_spaces)
        if space_key not in configs_of:
            configs_of[space_key] = _config_json(spec, factors, scheme)
        key = (seed, rerun)
        if key not in seeds_json:
            seeds_json[key] = json.dumps(trial_seeds(spec, seed, rerun))
        yield (
            json.dumps(factors),
            experiment_name(levels),
            seed,
            cidx,
            grid_label(seed, cidx, spec.nested),
            configs_of[space_key](seed, cidx),
            rerun,
            seeds_json[key],
        )


def _config_json(spec: ExperimentSpec, factors: dict, scheme: int):
    """``(seed, j) -> JSON`` of configuration ``j``, drawn on first use (scheme 2)."""
    if scheme != CONFIG_SCHEME:  # scheme 1 draws each seed's configurations as one sequence
        table = configurations(spec, factors, scheme=scheme)
        return lambda seed, j: json.dumps(table[seed][j])
    return functools.cache(lambda seed, j: json.dumps(configuration(spec, seed, j, factors)))


def _level_space(spec: ExperimentSpec, factor: str, level) -> dict:
    """The parameters level ``level`` of ``factor`` adds to the shared space."""
    space = spec.level_spaces.get(factor, {}).get(str(level), {})
    return {k: d.to_dict() for k, d in space.items()}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
