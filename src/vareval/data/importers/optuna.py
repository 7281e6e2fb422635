"""Import an Optuna study: one row per trial, its parameters and objective value(s)."""

from __future__ import annotations

from vareval.data.importers._tidy import SEED_NAMES, tidy_runs
from vareval.errors import DataError

# Optuna's TrialState names -> vareval's status words
_STATUS = {"COMPLETE": "done", "FAIL": "failed", "RUNNING": "running",
           "WAITING": "running", "PRUNED": "pruned"}


def from_optuna(storage: str, study: str | None = None):
    """Read every trial of an Optuna study into a tidy table.

    Parameters
    ----------
    storage : str
        Optuna's storage URL (``sqlite:///optuna.db``, a database URL) or
        the path of an SQLite file or a journal file Optuna wrote.
    study : str, optional
        The study's name; may be omitted when the storage holds one study.

    Returns
    -------
    pandas.DataFrame
        One row per trial (see :mod:`vareval.data.importers`): ``run`` is the
        trial number, ``experiment`` the study's name; the objective is
        ``value`` (``value_0``, ``value_1`` ... for several objectives, or
        the study's metric names when it set them); an intermediate value is
        not a metric and is left out; a user attribute named like a seed
        becomes ``seed``.
    """
    optuna = _optuna()
    storage = _storage(optuna, storage)
    name = _study_name(optuna, storage, study)
    try:
        loaded = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        raise DataError(f"--study {name!r} not found in the Optuna storage.") from None
    names = loaded.metric_names or (
        ["value"] if len(loaded.directions) == 1
        else [f"value_{i}" for i in range(len(loaded.directions))]
    )
    runs = []
    for t in loaded.get_trials(deepcopy=False):
        params = dict(t.params)
        for key in SEED_NAMES:
            if key in t.user_attrs and key not in params:
                params[key] = t.user_attrs[key]
        values = t.values or [None] * len(names)
        runs.append({
            "run": str(t.number),
            "experiment": name,
            "status": _STATUS.get(t.state.name, "failed"),
            "source_status": t.state.name,
            "params": params,
            "metrics": dict(zip(names, values, strict=True)),
        })
    return tidy_runs(runs, f"Optuna study {name!r}")


def _optuna():
    try:
        import optuna
    except ImportError:
        raise DataError(
            "importing an Optuna study needs optuna; install it with `pip install optuna`."
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _storage(optuna, storage: str):
    """A read-only storage for ``storage``: a URL, or a file (SQLite by its header, else a journal).

    Optuna's own storages create tables, run migrations and create missing
    files; what a user asks to *read* must stay byte-identical, so an SQLite
    file is opened through a read-only URI, nothing is created, and a file
    that is not Optuna's is refused in one line.
    """
    from pathlib import Path

    if storage.startswith("sqlite:///"):
        path = Path(storage.removeprefix("sqlite:///").split("?")[0])
        if not path.is_file():
            raise DataError(f"Optuna storage {storage!r}: file '{path}' not found.")
        return _sqlite_storage(optuna, path)
    if "://" in storage:
        return optuna.storages.RDBStorage(
            storage, skip_compatibility_check=True, skip_table_creation=True
        )
    path = Path(storage)
    if not path.is_file():
        raise DataError(
            f"Optuna storage {storage!r} is neither a URL (sqlite:///FILE) nor an existing file."
        )
    if _is_sqlite(path):
        return _sqlite_storage(optuna, path)
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    try:  # the journal is replayed here: a file that is not one fails now
        return JournalStorage(JournalFileBackend(str(path)))
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise DataError(
            f"Optuna storage '{path}' is neither an SQLite database nor an Optuna journal "
            f"file ({type(exc).__name__}: {_first_line(exc)})."
        ) from None


def _sqlite_storage(optuna, path):
    """Optuna's storage on a read-only URI of an SQLite file that holds Optuna's tables."""
    import sqlite3

    uri = f"file:{path.resolve()}?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise DataError(f"Optuna storage '{path}' could not be read: {exc}.") from None
    if "studies" not in tables:
        raise DataError(
            f"'{path}' is an SQLite file without Optuna's tables (no 'studies' table); give "
            "the database an Optuna study was saved to."
        )
    return optuna.storages.RDBStorage(
        f"sqlite:///{uri}&uri=true", skip_compatibility_check=True, skip_table_creation=True
    )


def _is_sqlite(path) -> bool:
    """Whether SQLite reads ``path`` (asked of SQLite, read-only, as every database file is)."""
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        try:
            con.execute("PRAGMA schema_version").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False
    return True


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _study_name(optuna, storage, study: str | None) -> str:
    try:
        names = optuna.get_all_study_names(storage)
    except Exception as exc:  # noqa: BLE001 - any storage failure is the user's file
        raise DataError(f"Optuna storage could not be read: {_first_line(exc)}") from None
    if study is not None:
        return study
    if len(names) != 1:
        listed = ", ".join(repr(n) for n in names) or "none"
        raise DataError(f"the Optuna storage holds {len(names)} studies ({listed}); name one "
                        "with --study.")
    return names[0]
