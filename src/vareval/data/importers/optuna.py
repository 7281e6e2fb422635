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
    """A storage URL as given, or an existing file: SQLite by its header, else a journal."""
    from pathlib import Path

    if "://" in storage:
        return storage
    path = Path(storage)
    if not path.is_file():
        raise DataError(
            f"Optuna storage {storage!r} is neither a URL (sqlite:///FILE) nor an existing file."
        )
    if _is_sqlite(path):
        return f"sqlite:///{path.resolve()}"
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    return JournalStorage(JournalFileBackend(str(path)))


def _is_sqlite(path) -> bool:
    """Whether SQLite reads ``path`` (asked of SQLite, as every database file is here)."""
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


def _study_name(optuna, storage, study: str | None) -> str:
    try:
        names = optuna.get_all_study_names(storage)
    except Exception as exc:  # noqa: BLE001 - any storage failure is the user's file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"Optuna storage could not be read: {first}") from None
    if study is not None:
        return study
    if len(names) != 1:
        listed = ", ".join(repr(n) for n in names) or "none"
        raise DataError(f"the Optuna storage holds {len(names)} studies ({listed}); name one "
                        "with --study.")
    return names[0]
