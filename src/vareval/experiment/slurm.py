"""The Slurm engine: trials as job arrays; results come back through files.

The runner submits claimed trials with ``sbatch --array``, a batch of
``trials_per_task`` trials per array task, and stays the store's only writer:
compute nodes never open the SQLite store (its locks are not reliable over
NFS, and one writer keeps every commit short). Each submission is a folder of
the run directory ``<store>.slurm/`` on the shared filesystem:

- ``manifest.json``: the job id, the trial ids of every array index, the runner;
- ``tasks.pkl``: the tasks (and any trial callable, pickled), read by the nodes;
- ``results/<trial id>.pkl``: one result per trial, written by the node
  (to a temporary name, then renamed, so a result is whole or absent), and
  renamed to ``.taken`` by the runner once it has read it;
- ``started/<trial id>``: a marker the node writes as a trial starts;
- ``logs/<index>.out``: the array task's output.

On a compute node, ``python -m vareval.experiment.slurm FOLDER`` runs its
batch through :func:`vareval.experiment.engines.execute`, the function every
engine runs a trial with, so a trial gives the same metrics on any engine.

An array task that ends before writing every result (preempted, node failure,
``scancel``, its time limit) gives its trials back: the one that had started
is submitted again alone, the others together, each up to ``max_attempts``
times in all; then it fails with the task's state and the end of its log.
After the runner itself was killed, the next run on the same store finds its
submissions again: a result already written is taken as it is, a trial whose
array task is still queued or running is waited for, and only the rest are
submitted anew, so a trial is never counted twice. Ctrl-C (or SIGTERM)
cancels (``scancel``) the jobs still running and says so.

The engine calls Slurm's own commands (``sbatch``, ``squeue``, ``scancel``)
rather than a library: see docs/runner.md, "Clusters: Slurm".
"""

from __future__ import annotations

import json
import numbers
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from vareval.errors import ExperimentError

# [slurm] keys: name -> (kind, what is accepted)
OPTIONS = {
    "partition": (str, "a partition name"),
    "time": (str, "a time limit per array task such as '01:00:00'"),
    "account": (str, "an account name"),
    "qos": (str, "a quality of service name"),
    "mem": (str, "memory per array task such as '8G'"),
    "cpus_per_trial": (int, "an integer >= 1"),
    "gpus_per_trial": (int, "an integer >= 0"),
    "trials_per_task": (int, "an integer >= 1"),
    "max_running": (int, "an integer >= 1 (array tasks running at once)"),
    "max_attempts": (int, "an integer >= 1"),
    "sbatch_args": (list, "a list of extra sbatch arguments"),
    "setup": (list, "a list of shell lines run before the trials (module load ...)"),
    "python": (str, "the Python interpreter on the compute nodes"),
}
# an array task in one of these states may still write results
_ALIVE = {
    "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
    "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
}
MAX_ARRAY = 1000  # array indices per submission (Slurm's default MaxArraySize is 1001)
SCAN_EVERY = 0.5  # seconds between listings of the result folders
STATE_EVERY = 3.0  # seconds between squeue calls (gentle on slurmctld)


def check_options(raw) -> dict:
    """Validate a ``[slurm]`` table (or the CLI's flags); return it as a plain dict."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ExperimentError(f"[slurm] must be a table; got {raw!r}.")
    out = {}
    for key, value in raw.items():
        if value is None:
            continue
        if key not in OPTIONS:
            raise ExperimentError(
                f"[slurm] unknown key {key!r}; accepted: {', '.join(OPTIONS)}."
            )
        kind, accepted = OPTIONS[key]
        if kind is list and isinstance(value, str):
            value = [value]
        low = 0 if key == "gpus_per_trial" else 1
        ok = (
            (kind is int and isinstance(value, numbers.Integral)
             and not isinstance(value, bool) and value >= low)
            or (kind is str and isinstance(value, str) and value.strip() != "")
            or (kind is list and isinstance(value, list | tuple)
                and all(isinstance(v, str) for v in value))
        )
        if not ok:
            raise ExperimentError(f"[slurm] {key} must be {accepted}; got {value!r}.")
        out[key] = list(value) if kind is list else value
    return out


def need_sbatch() -> None:
    """Raise ExperimentError unless Slurm's ``sbatch`` is on PATH."""
    if shutil.which("sbatch") is None:
        raise ExperimentError(
            "the slurm engine needs Slurm's `sbatch` on PATH (run on a login node "
            "of the cluster), or use --engine local."
        )


def run_dir(store) -> Path:
    """The run directory of a store's Slurm submissions: ``<store>.slurm/``."""
    path = Path(store).resolve()
    return path.with_name(path.name + ".slurm")


def _slurm(*args: str, check: bool = True) -> str:
    """Run a Slurm command; its stdout, or ExperimentError with its one-line complaint."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ExperimentError(f"`{args[0]}` could not run: {exc}.") from None
    if check and done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or [""]
        raise ExperimentError(f"`{args[0]}` failed: {lines[-1]}")
    return done.stdout


class _Submission:
    """One array job: its folder, the trial ids of each index, the trials awaited."""

    def __init__(self, folder: Path, job: str, batches: list[list[int]]):
        self.folder, self.job, self.batches = folder, job, batches
        self.index = {tid: i for i, batch in enumerate(batches) for tid in batch}
        self.waiting: dict[int, dict] = {}  # trial id -> task, results not read yet
        self.states: dict[int, str] = {}  # array index -> last state seen

    def result(self, tid: int) -> Path:
        return self.folder / "results" / f"{tid}.pkl"


class SlurmEngine:
    """Run trials as Slurm job arrays; the runner reads results from files.

    Parameters
    ----------
    workers : int, optional
        Array tasks running at once (``--array=...%N``); default no limit.
    folder : path-like
        The run directory on the shared filesystem (``<store>.slurm/``).
    name : str
        The job name's suffix (``vareval-<name>``).
    **options
        The ``[slurm]`` table (see :data:`OPTIONS`).
    """

    name = "slurm"

    def __init__(self, workers: int | None = None, *, folder, name="experiment", threads=None,
                 **options):
        need_sbatch()
        if workers is not None:
            options["max_running"] = workers  # --workers over the spec's max_running
        self.options = check_options(options)
        # each trial's native threads: [resources] threads_per_trial, else its task's CPUs
        self.threads = threads or self.options.get("cpus_per_trial", 1)
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.job_name = f"vareval-{name}"[:64]
        self.workers = self.options.get("max_running", 0)
        self.max_attempts = self.options.get("max_attempts", 3)
        self._subs: list[_Submission] = []
        self._old = self._previous()  # submissions of runs that ended without closing
        self._ready: list[dict] = []
        self._tries: dict[int, int] = {}  # trial id -> array tasks that ended without it
        self._functions: dict = {}
        self._scanned = self._stated = 0.0
        self.tasks_submitted = 0
        self._adopted: set = set()  # (job, index) of a previous run's live array tasks

    # -- the engine protocol ---------------------------------------------
    def add_function(self, label: str, fn) -> None:
        """Send the callable ``fn`` to the nodes (pickled in each submission)."""
        from vareval.experiment.engines import import_root, pickled

        self._functions[label] = (pickled(fn), import_root(fn))

    def capacity(self) -> int:
        """Claim everything: Slurm queues it."""
        return MAX_ARRAY * self.options.get("trials_per_task", 1)

    def in_flight(self) -> int:
        """Trials submitted whose results were not returned yet."""
        return len(self._ready) + sum(len(s.waiting) for s in self._subs)

    def submit(self, tasks) -> None:
        """Adopt what a previous run left (results, live array tasks); submit the rest."""
        fresh = []
        alive = self._alive_old(tasks)
        for task in tasks:
            sub = self._old.get(task["id"])
            if sub is not None and self._take(sub, task):
                continue
            if sub is not None and alive.get((sub.job, sub.index[task["id"]])):
                sub.waiting[task["id"]] = task
                if sub not in self._subs:
                    self._subs.append(sub)
                self._adopted.add((sub.job, sub.index[task["id"]]))
                continue
            fresh.append(task)
        self._submit(fresh)
        self.workers = self.options.get("max_running", self.tasks_submitted + len(self._adopted))

    def poll(self, timeout: float) -> list[dict]:
        """Wait up to ``timeout`` seconds; return the results read from the nodes."""
        if not self._ready:
            time.sleep(max(0.0, min(timeout, self._scanned + SCAN_EVERY - time.monotonic())))
        now = time.monotonic()
        if now - self._scanned >= SCAN_EVERY:
            self._scanned = now
            self._scan()
        if now - self._stated >= STATE_EVERY and any(s.waiting for s in self._subs):
            self._stated = now
            self._check_ended()
        out, self._ready = self._ready, []
        return out

    def close(self) -> None:
        """Cancel the jobs still running (an interrupted run) and tidy the run directory."""
        live = [s for s in self._subs if s.waiting]
        if live:
            jobs = sorted({s.job for s in live})
            n = sum(len(s.waiting) for s in live)
            try:
                _slurm("scancel", *jobs)
                said = f"cancelled Slurm job{'s' * (len(jobs) > 1)} {', '.join(jobs)}"
            except ExperimentError as exc:
                said = f"could not cancel Slurm jobs {', '.join(jobs)} ({exc})"
            print(f"note: {said}; their {n} unfinished trials are pending again.",
                  file=sys.stderr)
            return
        self._tidy()

    # -- submitting --------------------------------------------------------
    def _submit(self, tasks: list[dict], per: int | None = None) -> None:
        per = per or self.options.get("trials_per_task", 1)
        tasks = [{**task, "threads": self.threads} for task in tasks]
        batches = [tasks[i:i + per] for i in range(0, len(tasks), per)]
        for k in range(0, len(batches), MAX_ARRAY):
            self._sbatch(batches[k:k + MAX_ARRAY])

    def _sbatch(self, batches: list[list[dict]]) -> None:
        from vareval._interrupts import held

        if not batches:
            return
        folder = self.folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
        for sub in ("results", "started", "logs"):
            (folder / sub).mkdir(parents=True)
        with open(folder / "tasks.pkl", "wb") as f:
            pickle.dump({"batches": batches, "functions": self._functions}, f)
        script = folder / "job.sh"
        python = self.options.get("python", sys.executable)
        script.write_text(
            "#!/bin/sh\n"
            + "".join(f"{line}\n" for line in self.options.get("setup", []))
            + f"exec {_quote(python)} -m vareval.experiment.slurm {_quote(str(folder))}\n"
        )
        args = ["sbatch", "--parsable", f"--job-name={self.job_name}",
                f"--output={folder}/logs/%a.out", "--open-mode=append",
                f"--cpus-per-task={self.options.get('cpus_per_trial', 1)}"]
        limit = self.options.get("max_running")
        args.append(f"--array=0-{len(batches) - 1}" + (f"%{limit}" if limit else ""))
        for key in ("partition", "time", "account", "qos", "mem"):
            if key in self.options:
                args.append(f"--{key}={self.options[key]}")
        if self.options.get("gpus_per_trial"):
            args.append(f"--gres=gpu:{self.options['gpus_per_trial']}")
        args += self.options.get("sbatch_args", [])
        ids = [[t["id"] for t in batch] for batch in batches]
        with held():  # a job submitted is a job recorded
            try:
                job = _slurm(*args, str(script)).strip().split(";")[0]
            except ExperimentError as exc:
                shutil.rmtree(folder, ignore_errors=True)
                why = re.sub(r"^`sbatch` failed: (sbatch: error: )?(Batch job submission "
                             r"failed: )?", "", str(exc))
                raise ExperimentError(
                    f"Slurm refused the array job: {why.rstrip('.')}; check the partition, "
                    "time limit, GPUs, memory and extra sbatch arguments asked for."
                ) from None
            _write_json(folder / "manifest.json", {
                "job": job, "batches": ids, "host": socket.gethostname(),
                "pid": os.getpid(),
            })
        sub = _Submission(folder, job, ids)
        sub.waiting = {t["id"]: t for batch in batches for t in batch}
        self._subs.append(sub)
        self.tasks_submitted += len(batches)
        self.workers = self.options.get("max_running", self.tasks_submitted + len(self._adopted))

    # -- collecting ----------------------------------------------------------
    def _take(self, sub: _Submission, task: dict) -> bool:
        """Read ``task``'s result from ``sub`` if the node wrote it; mark it taken."""
        path = sub.result(task["id"])
        try:
            with open(path, "rb") as f:
                res = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError):
            return False
        os.replace(path, path.with_suffix(".taken"))
        sub.waiting.pop(task["id"], None)
        self._ready.append(res)
        return True

    def _scan(self) -> None:
        for sub in self._subs:
            if not sub.waiting:
                continue
            try:
                names = os.listdir(sub.folder / "results")
            except OSError:
                continue
            for name in names:
                stem, _, ext = name.partition(".")
                if ext == "pkl" and stem.isdigit() and int(stem) in sub.waiting:
                    self._take(sub, sub.waiting[int(stem)])

    def _check_ended(self) -> None:
        """Give back the trials of array tasks that ended without writing their results."""
        live = [s for s in self._subs if s.waiting]
        try:
            states = _states({s.job for s in live})
        except ExperimentError:
            return  # slurmctld busy or restarting: look again later
        self._scan()  # results written just before their task ended
        retry, alone = [], []
        for sub in live:
            ended: dict[int, str] = {}
            for tid in list(sub.waiting):
                i = sub.index[tid]
                state = states.get((sub.job, i))
                if state is not None:
                    sub.states[i] = state
                # opened by name: on NFS a fresh lookup sees a file that a cached
                # listing may not show yet
                if state in _ALIVE or self._take(sub, sub.waiting[tid]):
                    continue
                ended[tid] = sub.states.get(i) or "ended"
            for tid, state in ended.items():
                task = sub.waiting.pop(tid)
                started = (sub.folder / "started" / str(tid)).exists()
                tries = self._tries[tid] = self._tries.get(tid, 0) + 1
                if tries >= self.max_attempts:
                    self._ready.append(self._failure(sub, task, state, started))
                else:
                    (alone if started else retry).append(task)
        self._submit(retry)
        self._submit(alone, per=1)  # a trial that may have killed its task runs by itself

    def _failure(self, sub: _Submission, task: dict, state: str, started: bool) -> dict:
        from vareval.experiment.engines import failure

        i = sub.index[task["id"]]
        log = sub.folder / "logs" / f"{i}.out"
        try:
            tail = log.read_text(errors="replace").splitlines()[-50:]
        except OSError:
            tail = []
        res = failure(
            task,
            f"its Slurm array task {sub.job}_{i} ended ({state}) "
            f"{'while running it' if started else 'before running it'}, "
            f"{self._tries[task['id']]} times; see {log}",
        )
        res["traceback"] = "\n".join(tail) or None
        res["host"] = f"{res['host']} (slurm {sub.job}_{i})"
        return res

    # -- a previous run's submissions -----------------------------------------
    def _previous(self) -> dict[int, _Submission]:
        """Trial id -> the submission of an earlier run that holds it."""
        found: dict[int, _Submission] = {}
        for folder in sorted(self.folder.iterdir()):
            try:
                m = json.loads((folder / "manifest.json").read_text())
            except (OSError, ValueError):
                continue
            sub = _Submission(folder, str(m["job"]), m["batches"])
            for tid in sub.index:
                found[tid] = sub
        return found

    def _alive_old(self, tasks) -> dict:
        jobs = {self._old[t["id"]].job for t in tasks if t["id"] in self._old}
        if not jobs:
            return {}
        try:
            states = _states(jobs)
        except ExperimentError:
            states = {}  # cannot tell: submit again (results already written are kept)
        return {key: state in _ALIVE for key, state in states.items()}

    def _tidy(self) -> None:
        """Remove finished submissions: every result read, or no array task alive."""
        subs = {s.folder: s for s in self._subs}
        subs.update({s.folder: s for s in self._old.values()})
        try:
            states = _states({s.job for s in subs.values()}) if subs else {}
        except ExperimentError:
            return
        for sub in subs.values():
            if sub.waiting:
                continue
            done = all(sub.result(t).with_suffix(".taken").exists() for t in sub.index)
            if not done and any(j == sub.job and st in _ALIVE for (j, _), st in states.items()):
                continue
            try:
                m = json.loads((sub.folder / "manifest.json").read_text())
            except (OSError, ValueError):
                continue
            if m.get("host") != socket.gethostname() or (
                m.get("pid") != os.getpid() and _pid_alive(m.get("pid"))
            ):
                continue  # another runner's, still alive
            shutil.rmtree(sub.folder, ignore_errors=True)
        try:
            self.folder.rmdir()  # only if empty
        except OSError:
            pass


def _pid_alive(pid) -> bool:
    from vareval.experiment.store import _pid_alive as alive

    return isinstance(pid, int) and alive(pid)


def _states(jobs) -> dict:
    """``{(job, index): state}`` of the array tasks Slurm still knows (one line each)."""
    if not jobs:
        return {}
    # all of this user's jobs, filtered here: `squeue -j` fails on an id it forgot
    import getpass

    out = _slurm("squeue", "-h", "-r", "--states=all", "-o", "%i|%T",
                 "-u", getpass.getuser())
    states = {}
    for line in out.splitlines():
        ident, _, state = line.strip().partition("|")
        job, _, index = ident.partition("_")
        if job in jobs and index.isdigit():
            states[(job, int(index))] = state.split()[0] if state else ""
    return states


def _write_json(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


# -- on the compute node -------------------------------------------------------


def work(folder: str | os.PathLike, index: int, job: str) -> int:
    """Run batch ``index`` of the submission in ``folder``; return how many trials ran.

    A trial whose result exists already (the task was requeued) is skipped.
    Each result is written whole (a temporary name, then renamed).
    """
    from vareval.experiment.engines import _add_paths, execute, register

    folder = Path(folder)
    with open(folder / "tasks.pkl", "rb") as f:
        payload = pickle.load(f)
    for label, (blob, paths) in payload["functions"].items():
        _add_paths(paths)
        register(label, pickle.loads(blob))
    ran = 0
    for task in payload["batches"][index]:
        out = folder / "results" / f"{task['id']}.pkl"
        if out.exists() or out.with_suffix(".taken").exists():
            continue
        (folder / "started" / str(task["id"])).touch()
        res = execute(task, alarm=True)
        res["host"] = f"{res['host']} (slurm {job})"
        res["slurm_job"] = job
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as f:
            pickle.dump(res, f)
        os.replace(tmp, out)
        ran += 1
    return ran


def _main(argv) -> None:
    index = int(os.environ["SLURM_ARRAY_TASK_ID"])
    job = f"{os.environ.get('SLURM_ARRAY_JOB_ID', '?')}_{index}"
    work(argv[0], index, job)


if __name__ == "__main__":
    _main(sys.argv[1:])
