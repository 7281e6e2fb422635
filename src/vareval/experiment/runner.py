"""Run an experiment into a store: claim, execute, write, resume; replay one trial.

The loop: claim a batch of trials atomically, hand them to the engine, collect
results, write them in one transaction, refresh the heartbeat of the claims
still held, repeat until nothing is left to claim. Results are written at the
latest ``flush_every`` seconds (0.25 s) after a trial finishes, so a crash of
the runner loses at most the trials in flight and those finished in that last
fraction of a second: they are still marked *running* under the dead runner's
claim and the next run takes them back and runs them again (as does a runner
still working on the same store on this host, before it finishes). Nothing is
ever written twice: a result is written only while its runner holds the claim,
and a runner never takes back its own claims. The store is opened only
through SQLite (see :func:`vareval.data.store_table.connect`).

Resuming: ``run`` on an existing store skips every trial that is done, runs
the pending ones, and retries failed ones only when ``retry_failed`` is true.

Growing: ``run`` with more seeds, configurations, reruns or factor levels
appends the new trials and runs them; existing trials are left as they are.

Provenance: each run records, once, the trial code's hash, the git commit,
the versions of Python and of the imported packages and the machine
(:mod:`vareval.experiment.provenance`). A run whose trial code differs from
the previous run's is refused unless ``accept_code_change``; ``replay``
compares the record with the present and says what differs.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import sys
import threading
import time
import uuid

from vareval._interrupts import as_keyboard_interrupt
from vareval.data.store_table import connect, sqlite_errors
from vareval.errors import ExperimentError
from vareval.experiment import provenance
from vareval.experiment.devices import gpu_slots
from vareval.experiment.engines import (
    ENGINES,
    check_function,
    execute,
    make_engine,
    register,
    unregister,
)
from vareval.experiment.slurm import check_options, need_sbatch, run_dir
from vareval.experiment.spec import ExperimentSpec, load_spec, resolve_function
from vareval.experiment.store import Store, beat
from vareval.stats._result import Result


@dataclasses.dataclass(frozen=True, repr=False)
class RunReport(Result):
    """What one call of :func:`run` did.

    No figure: counts of the trials a run did, read from its fields.

    Attributes
    ----------
    store : str
        The store's path.
    engine : str
        The engine that ran the trials.
    workers : int
        Its parallel workers.
    trials : int
        Trials in the design.
    skipped : int
        Trials already done before this run.
    ran : int
        Trials this run finished (done + failed).
    done, failed : int
        Of those, how many succeeded and failed.
    not_written : int
        Results dropped because another runner had taken the claim back.
    held_elsewhere : list
        Trials still running under other live runners' claims when this run
        ended: ``(host, pid, count)`` each.
    seconds : float
        Wall time of the run.
    counts : dict
        Trials per status in the store after the run.
    entropy : int
        The experiment's root entropy.
    added : int
        Trials this call appended to an existing store (growing its design).
    changes : tuple of str
        What differs from the previous run's provenance (packages, host ...).
    threads : int or None
        Native threads each trial was given (None: not limited, serial engine).
    slots : tuple of str
        The GPU devices of each concurrent trial (empty without GPUs).
    """

    store: str
    engine: str
    workers: int
    trials: int
    skipped: int
    ran: int
    done: int
    failed: int
    not_written: int
    held_elsewhere: list
    seconds: float
    counts: dict
    entropy: int
    added: int = 0
    changes: tuple = ()
    threads: int | None = None
    slots: tuple = ()


@dataclasses.dataclass(frozen=True, repr=False)
class ReplayResult(Result):
    """A stored trial run again from its recorded streams.

    No figure: a record of a replayed trial, compared with the stored one field by
    field.

    Attributes
    ----------
    trial_id : int
        The trial.
    stored, replayed : dict
        Its metrics in the store and from the replay.
    identical : bool
        Whether every metric is bit-identical (NaN equal to NaN) *and* the
        trial's code is the one that ran (never true when it changed).
    status : str
        The replay's status (``done`` or ``failed``).
    error : str or None
        The replay's error if it failed.
    comparable : bool or None
        Whether the trial code is unchanged since the run; None when the run
        recorded no provenance (a store made before provenance was kept).
    differences : tuple of str
        What differs between the run's provenance and now (code, git commit,
        Python, packages, host, CPU, GPUs).
    """

    trial_id: int
    stored: dict
    replayed: dict
    identical: bool
    status: str
    error: str | None
    comparable: bool | None = None
    differences: tuple = ()


def _as_spec(spec) -> ExperimentSpec:
    if isinstance(spec, ExperimentSpec):
        return spec
    if isinstance(spec, str | os.PathLike):
        return load_spec(spec)
    raise ExperimentError(
        f"`spec` must be an ExperimentSpec or the path of an experiment.toml; "
        f"got {type(spec).__name__}."
    )


def _spec_of_store(store) -> ExperimentSpec:
    with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
        spec = st.spec()
    if spec is None:
        raise ExperimentError(f"store '{store}' holds no experiment yet; give its declaration.")
    return spec


def _run_iv(spec, store, trial, engine, workers, address, stale_after, heartbeat_every,
            flush_every, checked=None):
    spec = _spec_of_store(store) if spec is None else _as_spec(spec)
    if trial is not None:
        if not callable(trial):
            raise ExperimentError(f"`trial` must be a callable; got {type(trial).__name__}.")
        spec = spec.with_trial(trial)
    if engine not in ENGINES:
        raise ExperimentError(
            f"unknown engine {engine!r}; accepted: {', '.join(ENGINES)}."
        )
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ExperimentError(f"`workers` must be an integer >= 1; got {workers!r}.")
    if address is not None and engine != "ray":
        raise ExperimentError(
            "`address` applies to the ray engine only (--engine ray)."
        )
    for name, value in (
        ("stale_after", stale_after),
        ("heartbeat_every", heartbeat_every),
        ("flush_every", flush_every),
    ):
        if not isinstance(value, int | float) or not value > 0:
            raise ExperimentError(
                f"`{name}` must be a positive number of seconds; got {value!r}."
            )
    # an unknown or misbehaving function fails here, before any trial; it is
    # imported in a worker process, never in the runner, and its provenance
    # (code hash, imported packages) is taken there. A callable given in
    # Python already lives in this process. A caller running batch after batch
    # (the sequential mode) checks it once and passes its provenance.
    if checked is not None:
        return spec, checked
    return spec, trial_provenance(spec)


def trial_provenance(spec: ExperimentSpec) -> dict:
    """Check that the trial function imports (in a worker) and return its provenance.

    For a command trial: check that its program exists, and hash the command
    and the files it names.
    """
    if spec.command is not None:
        _check_program(spec.command[0], spec.cwd)
        return provenance.capture(None, command=spec.command, cwd=spec.cwd)
    if spec.callable is not None:
        return provenance.capture(spec.callable)
    return check_function(spec.trial, spec.paths, spec.timeout)


def _check_program(program: str, cwd: str | None) -> None:
    """Refuse before any trial a command whose program cannot be found."""
    import shutil

    if "{" in program:
        return  # filled per trial
    where = os.path.join(cwd or os.getcwd(), program) if os.sep in program else None
    found = os.access(where, os.X_OK) if where else shutil.which(program) is not None
    if not found:
        raise ExperimentError(
            f"`trial` command: program {program!r} "
            + (f"is not an executable file in '{cwd or os.getcwd()}'" if where
               else "is not on PATH")
            + "; give its full path, or \"{python}\" for this Python."
        )


def run(
    spec,
    store,
    *,
    trial=None,
    seeds: int | None = None,
    configs: int | None = None,
    reruns: int | None = None,
    accept_code_change: bool = False,
    engine: str = "local",
    workers: int | None = None,
    address: str | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
    stale_after: float = 120.0,
    heartbeat_every: float = 10.0,
    flush_every: float = 0.25,
    slurm=None,
    gpus=None,
    _provenance: dict | None = None,
) -> RunReport:
    """Run (or resume) an experiment into a store.

    Parameters
    ----------
    spec : ExperimentSpec or path or None
        The experiment, or the path of its ``experiment.toml``; None takes
        the declaration the store holds (to grow or resume it).
    store : str or path-like
        The SQLite store; created if missing, resumed if it holds this
        experiment, grown if the declaration asks for more trials.
    trial : callable, optional
        The trial function as a Python callable (e.g. defined in a notebook),
        in place of ``spec.trial``. The local engine's workers receive it
        pickled with cloudpickle: by value when it lives in ``__main__`` (a
        script or notebook), by reference otherwise. A script that runs with
        the local engine on a platform whose workers are spawned (macOS,
        Windows) must call ``run`` under ``if __name__ == "__main__":``.
    seeds, configs, reruns : int, optional
        Grow the design to this many (more seeds, configurations or reruns);
        existing trials stay exactly as they are.
    accept_code_change : bool, default False
        Run although the trial's code differs from the previous run's (its
        results would then mix two versions of the code).
    engine : {"local", "serial", "ray", "slurm"}, default "local"
        Where trials run (see :mod:`vareval.experiment.engines` and
        :mod:`vareval.experiment.slurm`).
    workers : int, optional
        Parallel workers; default one per core.
    address : str, optional
        A Ray cluster's address (ray engine only).
    retry_failed : bool, default False
        Run failed trials again (otherwise they stay failed and are skipped).
    progress : bool, optional
        Show a progress bar (counts, failures, ETA); default: when stderr is a terminal.
    stale_after : float, default 120
        Seconds without a heartbeat after which another runner's claim is
        considered crashed and taken back (a runner never takes back its own).
    heartbeat_every : float, default 10
        Seconds between heartbeats of this runner's claims; at most a quarter
        of ``stale_after``, so a live runner's claim never looks stale.
    flush_every : float, default 0.25
        Longest time a finished trial waits before it is written.
    slurm : mapping, optional
        Options of the slurm engine, over the spec's ``[slurm]`` table
        (``partition``, ``time``, ``gpus_per_trial``, ``trials_per_task`` ...).
        Its submissions live in ``<store>.slurm/`` beside the store.
    gpus : str or sequence, optional
        GPU devices for the serial and local engines: ``"0,1,2,3"``, a list,
        or ``"all"`` (what ``nvidia-smi -L`` lists). Each running trial gets
        ``[resources] gpus_per_trial`` (default 1) of them through
        ``CUDA_VISIBLE_DEVICES``; never two running trials on one device.

    Returns
    -------
    RunReport
        Counts of what ran, failed and was skipped.

    Notes
    -----
    SIGTERM stops the run as Ctrl-C does (when called from the main thread):
    finished results are written, unfinished claims released, and
    ``KeyboardInterrupt`` is raised.
    """
    slurm = _slurm_options(engine, slurm)  # before any work: a wrong flag is one line
    spec, now = _run_iv(
        spec, store, trial, engine, workers, address, stale_after, heartbeat_every,
        flush_every, _provenance,
    )
    spec = spec.grown(seeds=seeds, configs=configs, reruns=reruns)
    if engine == "slurm":
        slurm = {**spec.slurm, **slurm, "folder": run_dir(store), "name": spec.name}
    slots = None
    if engine in ("serial", "local"):
        slots = gpu_slots(gpus, spec.resources.get("gpus_per_trial"))
    elif gpus is not None:
        slots = gpu_slots(gpus, None)  # refused by the Ray and Slurm engines, with what to do
    heartbeat_every = min(heartbeat_every, stale_after / 4)
    t_start = time.monotonic()
    token = uuid.uuid4().hex
    with as_keyboard_interrupt(signal.SIGTERM), sqlite_errors(store, ExperimentError):
        st = Store(store, create=True)
        try:
            changes = _check_code(st, now, accept_code_change)
            before = sum(st.counts().values())
            spec = st.prepare(spec)
            added = sum(st.counts().values()) - before if before else 0
            st.recover()
            if retry_failed:
                st.reset_failed()
            skipped = st.counts()["done"]
            total = st.claimable(stale_after, token)
            eng = None
            stats = {"done": 0, "failed": 0, "lost": 0}
            run_id = st.begin_run(now, engine)
            if total:
                eng = make_engine(
                    engine,
                    workers,
                    address,
                    resources=spec.resources,
                    runtime_env=spec.runtime_env,
                    slots=slots,
                    slurm=slurm,
                )
                if spec.callable is not None:
                    eng.add_function(spec.trial, spec.callable)
                stats = _loop(
                    st,
                    eng,
                    spec,
                    token,
                    total,
                    progress,
                    stale_after,
                    heartbeat_every,
                    flush_every,
                )
            st.end_run(run_id)
            counts = st.counts()
            held = st.held_elsewhere(token)
        finally:
            st.close()
            if spec.callable is not None:
                unregister(spec.trial)  # the serial engine registered it in this process
    return RunReport(
        store=str(store),
        engine=engine,
        workers=eng.workers if eng else 0,
        trials=spec.n_trials,
        skipped=skipped,
        ran=stats["done"] + stats["failed"],
        done=stats["done"],
        failed=stats["failed"],
        not_written=stats["lost"],
        held_elsewhere=[tuple(h) for h in held],
        seconds=time.monotonic() - t_start,
        counts=counts,
        entropy=spec.entropy,
        added=added,
        changes=tuple(changes),
        threads=getattr(eng, "threads", None),
        slots=tuple(slots or ()),
    )


def _slurm_options(engine: str, options) -> dict:
    """Check the slurm engine's options (and that ``sbatch`` is there) before any work."""
    options = check_options(options)
    if engine != "slurm" and options:
        raise ExperimentError(
            f"Slurm options ({', '.join(options)}) apply to the slurm engine only "
            "(--engine slurm)."
        )
    if engine == "slurm":
        need_sbatch()
    return options


def _check_code(st: Store, now: dict, accept: bool) -> list[str]:
    """Refuse a changed trial code (unless accepted); return the other differences."""
    then = st.provenance()
    if then is None:
        return []
    same_code, lines = provenance.compare(then, now)
    if not same_code and not accept:
        raise ExperimentError(
            f"store '{st.path}': {lines[0]}; its trials would mix two versions of the "
            "code. Use a new --store, or --accept-code-change to run anyway."
        )
    return lines


def _loop(
    st, eng, spec, token, total, progress, stale_after, heartbeat_every, flush_every
):
    """Claim, run and write until nothing is left; then release unfinished claims."""
    extra = task_fields(spec)
    if progress is None:
        progress = sys.stderr.isatty() or in_notebook()
    bar = progress_bar(
        total=total,
        disable=not progress,
        dynamic_ncols=True,
        unit="trial",
        desc=f"{spec.name} [{eng.name}]",
    )
    stats = {"done": 0, "failed": 0, "lost": 0}
    buffer: list[dict] = []
    first_buffered = None
    exhausted = False
    beat = _Heartbeat(st.path, token, heartbeat_every)
    beat.start()
    try:
        while True:
            cap = eng.capacity()
            if not exhausted and eng.in_flight() <= cap // 2:
                tasks = st.claim(cap - eng.in_flight(), token, stale_after=stale_after)
                if tasks:
                    eng.submit([{**t, **extra} for t in tasks])
                else:
                    exhausted = True
            if exhausted and eng.in_flight() == 0:
                if st.recover():  # a runner on this host died: run its trials too
                    exhausted = False
                    continue
                break
            wait = (
                0.2
                if first_buffered is None
                else max(0.0, flush_every - (time.monotonic() - first_buffered))
            )
            results = eng.poll(min(wait, 0.2))
            if results:
                if first_buffered is None:
                    first_buffered = time.monotonic()
                buffer.extend(results)
                n_failed = sum(r["status"] == "failed" for r in results)
                stats["failed"] += n_failed
                stats["done"] += len(results) - n_failed
                bar.update(len(results))
                bar.set_postfix(
                    done=stats["done"], failed=stats["failed"], refresh=False
                )
            now = time.monotonic()
            if buffer and (
                now - first_buffered >= flush_every
                or eng.in_flight() == 0
                or len(buffer) >= 2000
            ):
                stats["lost"] += len(buffer) - st.complete(buffer, token)
                buffer, first_buffered = [], None
        stats["lost"] += len(buffer) - st.complete(buffer, token)
        failing = False
    except BaseException:
        # already failing (interrupt, full disk): save what can be saved; a
        # second failure must not hide the first
        failing = True
        if st.con.in_transaction:  # interrupted inside a transaction
            _quietly(lambda: st.con.execute("ROLLBACK"))
        _quietly(lambda: st.complete(buffer, token))
        raise
    finally:
        beat.stop()
        eng.close()
        if failing:
            _quietly(lambda: st.release(token))
        else:
            st.release(token)
        bar.close()
    return stats


def task_fields(spec: ExperimentSpec) -> dict:
    """What every task of a run carries besides its trial's own fields."""
    extra = {
        "fn": spec.trial,
        "paths": list(spec.paths),
        "params": dict(spec.params),
        "timeout": spec.timeout,
    }
    if spec.command is not None:
        extra.update(command=list(spec.command), cwd=spec.cwd)
    return extra


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where stderr is not a terminal)."""
    shell = sys.modules.get("IPython")
    try:
        ip = shell.get_ipython() if shell is not None else None
    except Exception:  # noqa: BLE001 - IPython half-initialised
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def progress_bar(**kwargs):
    """tqdm.auto's bar (a widget in Jupyter); the text bar when the widget cannot show.

    tqdm's notebook bar needs ipywidgets; without it, it raises on creation,
    so fall back to the text bar on stderr, which Jupyter shows as output.
    """
    from tqdm.auto import tqdm

    try:
        return tqdm(**kwargs)
    except ImportError:
        from tqdm.std import tqdm as text_tqdm

        return text_tqdm(file=sys.stderr, **kwargs)


def _quietly(step) -> None:
    try:
        step()
    except sqlite3.Error:
        pass


class _Heartbeat(threading.Thread):
    """Refresh this runner's claims every ``every`` seconds on its own connection.

    A thread, so that the heartbeat goes on while the main thread is busy
    (the serial engine runs a long trial in process).
    """

    def __init__(self, path, token: str, every: float):
        super().__init__(name="vareval-heartbeat", daemon=True)
        self.path, self.token, self.every = path, token, every
        self._stop_event = threading.Event()

    def run(self) -> None:
        # a second connection of this process, opened only through SQLite (the
        # store was checked by the runner's own connection)
        con = connect(self.path, readonly=False, error=ExperimentError)
        try:
            while not self._stop_event.wait(self.every):
                try:
                    beat(con, self.token)
                except sqlite3.Error:  # busy beyond the timeout: try again next beat
                    pass
        finally:
            con.close()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def replay(store, trial_id: int, *, trial=None) -> ReplayResult:
    """Run one stored trial again, in this process, from its recorded streams.

    The trial function, configuration, parameters and the exact entropy and
    spawn key of every source come from the store, so a deterministic trial
    gives bit-identical metrics. The provenance of the run that wrote the
    trial is compared with the present: when the trial's code has changed,
    the replay is *not comparable* and never reported identical.

    Parameters
    ----------
    store : str or path-like
        The store.
    trial_id : int
        The trial's id (``trial_id`` in ``vareval export``).
    trial : callable, optional
        The trial function, for a store made with a callable (a notebook's
        function); otherwise it is imported by the name the store records.

    Returns
    -------
    ReplayResult
        Stored and replayed metrics, whether they are identical and
        comparable, and what differs since the run.
    """
    with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
        spec = st.spec()
        if spec is None:
            raise ExperimentError(f"store '{store}' holds no experiment yet.")
        rec = st.trial(trial_id)
        then = st.provenance(rec["run_id"]) if rec.get("run_id") else None
    if spec.command is not None:
        fn = None
    elif trial is not None:
        register(spec.trial, trial)
        fn = trial
    else:
        try:
            fn = resolve_function(spec.trial, spec.paths)
        except ExperimentError as exc:
            raise ExperimentError(
                f"{exc} (a trial given as a Python callable replays with "
                "replay(store, id, trial=fn))"
            ) from None
    task = {
        "id": rec["id"],
        "factors": rec["factors"],
        "config": rec["config"],
        "seed": rec["seed"],
        "config_index": rec["config_index"],
        "config_label": rec["config_label"],
        "rerun": rec["rerun"],
        "seeds": rec["seeds"],
        **task_fields(spec),
        **_execution_fields(rec),
    }
    try:
        res = execute(task, alarm=True)
    finally:
        if trial is not None:
            unregister(spec.trial)
    comparable, differences = None, []
    if then is not None:
        now = (
            provenance.capture(None, command=spec.command, cwd=spec.cwd)
            if spec.command is not None
            else provenance.capture(fn)
        )
        comparable, differences = provenance.compare(then, now)
    stored = rec["metrics"] or {}
    replayed = res["metrics"] or {}
    identical = (
        comparable is not False
        and res["status"] == "done"
        and rec["status"] == "done"
        and stored.keys() == replayed.keys()
        and all(_same(stored[k], replayed[k]) for k in stored)
    )
    return ReplayResult(
        trial_id=int(trial_id),
        stored=stored,
        replayed=replayed,
        identical=identical,
        status=res["status"],
        error=res["error"],
        comparable=comparable,
        differences=tuple(differences),
    )


def _execution_fields(rec: dict) -> dict:
    """The threads and devices a stored trial ran with, to replay it the same way."""
    ran = rec.get("execution") or {}
    return {"threads": ran.get("threads"), "devices": ran.get("devices")}


def _same(a, b) -> bool:
    import math
    import struct

    if (
        isinstance(a, float)
        and isinstance(b, float)
        and math.isnan(a)
        and math.isnan(b)
    ):
        return True
    return struct.pack("<d", float(a)) == struct.pack("<d", float(b))
