"""Execution engines: serial (in process), local (worker processes) and Ray.

An engine takes *tasks* (one claimed trial each, a plain dict) and hands back
*results* (plain dicts: ``id``, ``status``, ``metrics``, ``started``,
``finished``, ``host``, ``error``, ``traceback``, ``own``: the trial's own
seconds, ``execution``: threads and devices). It never touches the store: the
runner claims, submits, polls and writes. Every engine runs the same
:func:`vareval.experiment.execution.run_trial` (``execute`` here), callable or
command, so a trial gives the same metrics whichever engine ran it. Each
engine sets a task's ``threads`` (its worker's share of the cores, or
``[resources] threads_per_trial``) and ``devices`` (its worker's GPU set).

- ``serial``: in this process, one at a time, for debugging; the timeout is
  enforced with ``SIGALRM`` (main thread only, and only where the trial
  returns to Python).
- ``local``: a pool of worker processes (default: one per core). A trial past
  its timeout is stopped by killing its worker process (``SIGKILL``), which is
  then replaced; a worker that dies (segfault, ``os._exit``) fails only the
  trial it was running. Trials are sent in chunks whose size adapts to the
  trials' duration, so very short trials cost little.
- ``ray``: Ray tasks on a cluster (``address``) or on a local Ray instance
  started for the run. The timeout is enforced inside the task by
  ``SIGALRM``; a task still running ``RAY_GRACE`` (30) seconds later (stuck
  in C code, or waiting for a worker) is cancelled with ``force=True``, which
  kills its worker process.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import numbers
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import wait

from vareval._interrupts import held
from vareval.errors import ExperimentError
from vareval.experiment import provenance
from vareval.experiment.execution import (
    _CALLABLES,
    DEVICE_VARS,
    KILL_GRACE,
    check_metrics,
    failure,
    kill_running_group,
    limit_threads,
    make_trial,
    mark_broken,
    register,
    run_trial,
    unregister,
)
from vareval.experiment.spec import resolve_function

execute = run_trial  # the one function every engine runs a trial with
__all__ = ["check_metrics", "execute", "failure", "make_trial", "register", "unregister"]

ENGINES = ("serial", "local", "ray", "slurm")

def pickled(fn) -> bytes:
    """``fn`` pickled for a worker: by value when it lives in ``__main__`` (cloudpickle)."""
    import cloudpickle

    return cloudpickle.dumps(fn)


def import_root(fn) -> list[str]:
    """The folder a worker needs on ``sys.path`` to import ``fn``'s module by reference."""
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    if not path or module.__name__ == "__main__":
        return []
    root = os.path.dirname(os.path.abspath(path))
    depth = module.__name__.count(".") + (os.path.basename(path) == "__init__.py")
    for _ in range(depth):
        root = os.path.dirname(root)
    return [root]


# -- serial ----------------------------------------------------------------


class SerialEngine:
    """Run trials one at a time in this process."""

    name = "serial"

    def __init__(self, workers: int | None = None, *, slots=None, threads=None):
        self.workers = 1
        self._backlog: deque = deque()
        # one trial at a time: no limit unless asked ([resources] threads_per_trial)
        self.threads = threads
        self.devices = slots[0] if slots else None

    def capacity(self) -> int:
        """How many tasks the runner should keep claimed (run one at a time)."""
        return 32

    def add_function(self, label: str, fn) -> None:
        """Use the callable ``fn`` as the trial function ``label``."""
        register(label, fn)

    def in_flight(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._backlog)

    def submit(self, tasks) -> None:
        """Queue tasks."""
        self._backlog.extend(
            {**t, "threads": self.threads, "devices": self.devices} for t in tasks
        )

    def poll(self, timeout: float) -> list[dict]:
        """Run the next task (if any) and return its result."""
        return [execute(self._backlog.popleft(), alarm=True)] if self._backlog else []

    def close(self) -> None:
        """Nothing to release."""


# -- local process pool ----------------------------------------------


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent exits (PR_SET_PDEATHSIG).

    A worker's parent is the forkserver, which exits when the runner does; the
    signal reaches a worker even while its trial holds the GIL in C code.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _watch_runner(lifeline) -> None:
    """Exit this process as soon as the runner is gone, even in the middle of a trial.

    The runner holds the only other end of ``lifeline`` and never writes to it:
    the read returns (EOF) exactly when the runner closes it or dies.
    """
    _die_with_parent()

    def watch():
        try:
            lifeline.recv()
        except (EOFError, OSError):
            pass
        kill_running_group()  # a command trial's processes go with the worker
        os._exit(1)

    threading.Thread(target=watch, name="vareval-lifeline", daemon=True).start()


def _worker_main(conn, lifeline, devices=None, threads=None) -> None:
    """A worker process: receive lists of tasks, send back one result per task.

    Interrupts go to the runner, which stops the workers itself: a Ctrl-C or a
    SIGTERM sent to the whole process group must not fail the running trials.
    A SIGTERM does stop a running command trial's process group: the runner
    sends it to a worker it is about to kill, so that no process of the
    command outlives it. The worker's devices and thread limit are set before
    any trial imports anything.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda signum, frame: kill_running_group())
    _watch_runner(lifeline)
    if devices is not None:
        os.environ.update(dict.fromkeys(DEVICE_VARS, devices))
    limit_threads(threads)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        if isinstance(msg, tuple):  # ("fn", label, pickled function, paths)
            _, label, blob, paths = msg
            _add_paths(paths)
            try:
                register(label, pickle.loads(blob))
            except Exception as exc:  # noqa: BLE001 - reported per trial below
                mark_broken(label, f"the trial function could not be unpickled: {exc!r}")
            continue
        for task in msg:
            # with a timeout, say when the trial function starts (after imports)
            tid = task["id"]
            start = (
                (lambda t=tid: conn.send(("start", t))) if task.get("timeout") else None
            )
            try:
                conn.send(execute(task, on_start=start))
            except (BrokenPipeError, OSError):  # the runner is gone
                return


def _add_paths(paths) -> None:
    for p in reversed(tuple(paths)):
        if p not in sys.path:
            sys.path.insert(0, p)


class _Worker:
    def __init__(self, ctx, devices=None, threads=None):
        parent, child = ctx.Pipe(duplex=True)
        lifeline_r, self.lifeline = ctx.Pipe(duplex=False)
        self.devices, self.threads = devices, threads
        self.process = ctx.Process(
            target=_worker_main, args=(child, lifeline_r, devices, threads), daemon=True
        )
        self.conn = parent
        try:
            with held():  # a Ctrl-C halfway through the hand-over: the forkserver's traceback
                self.process.start()
        except BaseException:  # the interrupt held over the hand-over: this worker goes too
            self.stop_unregistered()
            raise
        finally:
            child.close()
            lifeline_r.close()
        self.queue: deque = deque()
        self.known: set = set()  # trial callables already sent to this worker
        self.since = time.monotonic()
        self.running = False  # the current trial's function has started (timeouts only)

    def stop_unregistered(self) -> None:
        """Kill a worker no engine holds yet and close the runner's ends of its pipes.

        Nothing else would: the worker ignores SIGTERM and waits for its lifeline
        to close, and Python's exit waits for it, so a command interrupted while
        this worker was started would never end.
        """
        if self.process.pid is not None:
            self.process.kill()
            self.process.join(5)
        self.conn.close()
        self.lifeline.close()


class LocalEngine:
    """Run trials in a pool of worker processes on this machine.

    Parameters
    ----------
    workers : int, optional
        Number of worker processes; default ``os.cpu_count()``.
    start_method : str, optional
        The multiprocessing start method. Default ``forkserver`` where
        available (a clean server process that has imported vareval forks each
        worker, so starting and replacing workers is fast and safe with
        threads in the runner), else ``spawn``. Workers import the trial
        module once.
    slots : list of str, optional
        GPU devices, one entry per concurrent trial (``["0", "1"]``, or
        ``["0,1", "2,3"]`` for two devices per trial). Worker ``i`` sees only
        ``slots[i]`` for its whole life, so two trials never share a device;
        there are at most ``len(slots)`` workers.
    threads : int, optional
        Native threads per trial; default the worker's share of the cores
        (``os.cpu_count() // workers``, at least 1).
    """

    name = "local"

    def __init__(
        self,
        workers: int | None = None,
        *,
        start_method: str | None = None,
        slots=None,
        threads: int | None = None,
    ):
        self.workers = int(workers or (len(slots) if slots else os.cpu_count()) or 1)
        if slots:
            self.workers = min(self.workers, len(slots))
        self.threads = threads or max(1, (os.cpu_count() or 1) // self.workers)
        self._slots = list(slots) if slots else [None] * self.workers
        self._ctx = _context(start_method)
        self._pool = []
        try:
            for i in range(self.workers):
                self._pool.append(_Worker(self._ctx, self._slots[i], self.threads))
        except BaseException:  # interrupted while starting: the workers started go too
            self.close()
            raise
        self._backlog: deque = deque()
        self._depth = 1
        self._mean = None
        self._blobs: dict = {}

    def add_function(self, label: str, fn) -> None:
        """Ship the callable ``fn`` to every worker as the trial function ``label``."""
        self._blobs[label] = (pickled(fn), import_root(fn))

    def capacity(self) -> int:
        """How many tasks the runner should keep submitted."""
        return self.workers * self._depth * 2

    def in_flight(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._backlog) + sum(len(w.queue) for w in self._pool)

    def submit(self, tasks) -> None:
        """Queue tasks and send them to workers with room."""
        self._backlog.extend(tasks)
        self._dispatch()

    def _dispatch(self) -> None:
        now = time.monotonic()
        # the least busy first, so work does not queue behind a long trial
        for w in sorted(self._pool, key=lambda w: len(w.queue)):
            room = self._depth - len(w.queue)
            if room <= 0 or not self._backlog:
                continue
            chunk = [
                {**self._backlog.popleft(), "threads": w.threads, "devices": w.devices}
                for _ in range(min(room, len(self._backlog)))
            ]
            if not w.queue:
                w.since = now
            w.queue.extend(chunk)
            try:
                for label in {t["fn"] for t in chunk} & (self._blobs.keys() - w.known):
                    w.conn.send(("fn", label, *self._blobs[label]))
                    w.known.add(label)
                w.conn.send(chunk)
            except (BrokenPipeError, OSError):
                pass  # the worker died; poll() notices and requeues

    def _replace(self, w: _Worker, results: list, error: str | None) -> None:
        """Kill ``w``, fail its current trial, requeue the rest, start a new worker."""
        _stop(w)
        w.process.join(5)
        w.conn.close()
        w.lifeline.close()
        if w.queue:
            current = w.queue.popleft()
            started = time.time() - (time.monotonic() - w.since)
            results.append(failure(current, error, started))
            self._backlog.extendleft(reversed(w.queue))
            w.queue.clear()
        self._pool[self._pool.index(w)] = _Worker(self._ctx, w.devices, w.threads)

    def poll(self, timeout: float) -> list[dict]:
        """Wait up to ``timeout`` seconds and return the results that arrived."""
        results: list[dict] = []
        deadline = self._next_deadline()
        wait_for = timeout if deadline is None else max(0.0, min(timeout, deadline))
        wait(
            [w.conn for w in self._pool] + [w.process.sentinel for w in self._pool],
            wait_for,
        )
        now = time.monotonic()
        for w in list(self._pool):
            try:
                while w.conn.poll():
                    res = w.conn.recv()
                    w.since = now
                    if isinstance(res, tuple):  # ("start", trial id)
                        w.running = True
                        continue
                    w.queue.popleft()
                    w.running = False
                    results.append(res)
                    own = res.get("own", 0.0)
                    self._mean = (
                        own if self._mean is None else 0.9 * self._mean + 0.1 * own
                    )
            except (EOFError, OSError):
                pass
            if not w.process.is_alive():
                code = w.process.exitcode
                self._replace(
                    w,
                    results,
                    f"the worker process died (exit code {code}) "
                    "while running this trial",
                )
            elif w.queue and w.running:
                limit = _limit(w.queue[0])
                if limit and now - w.since > limit:
                    self._replace(
                        w,
                        results,
                        f"timed out after {limit:g} s; its worker process was killed",
                    )
        if self._mean is not None:
            # about 20 ms of work per message; at least 1, at most 128 trials
            self._depth = int(min(128, max(1, math.ceil(0.02 / max(self._mean, 1e-6)))))
        self._dispatch()
        return results

    def _next_deadline(self):
        now = time.monotonic()
        left = [
            _limit(w.queue[0]) - (now - w.since)
            for w in self._pool
            if w.queue and w.running and w.queue[0].get("timeout")
        ]
        return min(left) if left else None

    def close(self) -> None:
        """Stop the workers (kill any that do not exit within a second)."""
        for w in self._pool:
            try:
                w.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        end = time.monotonic() + 1.0
        for w in self._pool:
            w.process.join(max(0.0, end - time.monotonic()))
            _stop(w)
            w.conn.close()
            w.lifeline.close()


def _limit(task) -> float | None:
    """When the engine kills a trial's worker: a command's own timeout acts first."""
    limit = task.get("timeout")
    return limit + COMMAND_GRACE if limit and task.get("command") else limit


COMMAND_GRACE = KILL_GRACE + 5.0  # the worker kills a command's group itself before


def _stop(w: _Worker) -> None:
    """End a worker: SIGKILL; a worker running a command first gets SIGTERM.

    On SIGTERM the worker kills its command's process group, which would
    outlive a worker killed outright (the command runs in its own session).
    """
    process = w.process
    if process.is_alive() and w.queue and w.queue[0].get("command"):
        process.terminate()
        process.join(0.5)
    if process.is_alive():
        process.kill()
    process.join(5)


def _context(start_method: str | None = None):
    """The multiprocessing context of worker processes (forkserver where available)."""
    if start_method is None:
        methods = mp.get_all_start_methods()
        start_method = "forkserver" if "forkserver" in methods else "spawn"
    ctx = mp.get_context(start_method)
    if start_method == "forkserver":
        # _forkserver: a worker whose runner was killed mid-start ends without a traceback
        ctx.set_forkserver_preload([__name__, "vareval.experiment._forkserver"])
    return ctx


def check_function(path: str, paths=(), timeout: float | None = None) -> dict:
    """Import the trial function in a separate worker process, never in the runner.

    A module that raises, calls ``sys.exit`` or ``os._exit``, or hangs while
    being imported (longer than the trial ``timeout``) is then one clear error
    before any trial runs, and the runner (which may hold the store open) is
    unharmed.

    Returns
    -------
    dict
        The run's provenance, captured in that process after the import (so
        the packages the trial module imports are among those recorded; see
        :func:`vareval.experiment.provenance.capture`).

    Raises
    ------
    ExperimentError
        If the function cannot be imported in a fresh process.
    """
    ctx = _context()
    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_check_main, args=(writer, path, list(paths)), daemon=True
    )
    with held():
        proc.start()
    writer.close()
    try:
        if not reader.poll(timeout):
            raise ExperimentError(
                f"trial function {path!r}: importing it took longer than the trial "
                f"timeout ({timeout:g} s); its process was killed."
            )
        message = reader.recv()
    except EOFError:
        proc.join(5)
        message = (
            f"trial function {path!r}: importing it ended the process (exit code "
            f"{proc.exitcode}) without an error; does the module call sys.exit or "
            "os._exit when imported?"
        )
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        reader.close()
    if isinstance(message, str):
        raise ExperimentError(message)
    return message


def _check_main(writer, path: str, paths) -> None:
    """The process of :func:`check_function`: send the provenance or the error's one line."""
    _die_with_parent()
    try:
        message = provenance.capture(resolve_function(path, paths))
    except ExperimentError as exc:
        message = str(exc)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt at import
        message = (
            f"trial function {path!r}: importing it raised {type(exc).__name__}"
            f"({exc}); a trial module must not exit when imported."
        )
    try:
        writer.send(message)
        writer.close()
    except OSError:  # the runner stopped (Ctrl-C, SIGTERM) while this process imported
        pass


# -- Ray ---------------------------------------------------------------


class RayEngine:
    """Run trials as Ray tasks.

    Parameters
    ----------
    workers : int, optional
        CPUs of the local Ray instance started when there is no ``address``
        (default: all cores); ignored with an address.
    address : str, optional
        A running cluster (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``).
        Without it a local Ray instance is started and shut down after the run.
    resources : mapping, optional
        Per-trial ``num_cpus`` (default 1), ``num_gpus`` and ``memory`` (bytes
        or ``"8GB"``), passed to every Ray task.
    runtime_env : mapping, optional
        Ray's ``runtime_env`` for the run (merged with ``PYTHONPATH``).
    """

    name = "ray"

    def __init__(
        self,
        workers: int | None = None,
        address: str | None = None,
        resources=None,
        runtime_env=None,
        threads=None,
    ):
        try:
            import ray
        except ImportError:
            raise ExperimentError(
                "the ray engine needs Ray, which is not installed; "
                "pip install 'vareval[ray]' (or use --engine local)."
            ) from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            kwargs = {"include_dashboard": False, "log_to_driver": True}
            env = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
            runtime_env = dict(runtime_env or {})
            if env:
                runtime_env["env_vars"] = {**env, **runtime_env.get("env_vars", {})}
            if runtime_env:
                kwargs["runtime_env"] = runtime_env
            if address:
                kwargs["address"] = address
            else:
                kwargs["num_cpus"] = int(workers or os.cpu_count() or 1)
            start_ray(ray, address, kwargs)
            self._started = True
        options = ray_options(resources or {})
        self.threads = threads or max(1, int(options["num_cpus"]))
        total = ray.cluster_resources()
        per = [total.get("CPU", 1) / max(options["num_cpus"], 1e-9)]
        if options.get("num_gpus"):
            per.append(total.get("GPU", 0) / options["num_gpus"])
        if options.get("memory"):
            per.append(total.get("memory", 0) / options["memory"])
        if min(per) < 1:
            if self._started:
                ray.shutdown()
            raise ExperimentError(
                f"the Ray cluster cannot run one trial with [resources] {dict(resources)} "
                f"(it has {total.get('CPU', 0):g} CPUs, {total.get('GPU', 0):g} GPUs)."
            )
        self.workers = max(1, int(min(per)))
        self._remote = ray.remote(max_retries=0, **options)(_ray_execute)
        self._refs: dict = {}
        self._backlog: deque = deque()
        self._fn_refs: dict = {}

    def add_function(self, label: str, fn) -> None:
        """Send the callable ``fn`` (once, to the object store) as the trial ``label``."""
        self._fn_refs[label] = self._ray.put(pickled(fn))

    def capacity(self) -> int:
        """How many tasks the runner should keep submitted."""
        return self.workers * 2

    def in_flight(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._backlog) + len(self._refs)

    def submit(self, tasks) -> None:
        """Queue tasks; at most one runs per CPU, so a timeout counts from its start."""
        self._backlog.extend(tasks)
        self._dispatch()

    def _dispatch(self) -> None:
        while self._backlog and len(self._refs) < self.workers:
            task = {**self._backlog.popleft(), "threads": self.threads}
            ref = self._remote.remote(task, self._fn_refs.get(task["fn"]))
            self._refs[ref] = (
                task,
                time.monotonic(),
                time.time(),
            )

    def poll(self, timeout: float) -> list[dict]:
        """Wait up to ``timeout`` seconds and return the results that arrived."""
        ray = self._ray
        results: list[dict] = []
        if self._refs:
            refs = list(self._refs)
            ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
            if ready:
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                task, _, started = self._refs.pop(ref)
                try:
                    results.append(ray.get(ref))
                except Exception as exc:  # worker crash, cancelled, unpicklable result
                    first = (str(exc).strip().splitlines() or [""])[0]
                    results.append(
                        failure(
                            task,
                            f"Ray task failed: {type(exc).__name__}: {first}",
                            started,
                        )
                    )
            now = time.monotonic()
            for ref, (task, t0, started) in list(self._refs.items()):
                limit = task.get("timeout")
                if limit and now - t0 > limit + RAY_GRACE:
                    ray.cancel(ref, force=True)
                    del self._refs[ref]
                    results.append(
                        failure(
                            task,
                            f"timed out after {limit:g} s; its Ray worker was killed",
                            started,
                        )
                    )
        else:
            time.sleep(min(timeout, 0.05))
        self._dispatch()
        return results

    def close(self) -> None:
        """Cancel what still runs; shut down the Ray instance this engine started."""
        for ref in list(self._refs):
            self._ray.cancel(ref, force=True)
        self._refs.clear()
        if self._started:
            self._ray.shutdown()


RAY_GRACE = 30.0
RAY_START_ATTEMPTS = 3  # a local Ray instance that times out starting gets two more waits


def start_ray(ray, address, kwargs) -> None:
    """``ray.init``, with a longer wait for a slow start and one line when it fails.

    Ray gives up on a node that takes too long to start ("The current node
    timed out during startup"), which happens on a loaded machine: such a
    start is tried ``RAY_START_ATTEMPTS`` times in all, so it gets that many
    times Ray's own wait. Any other failure, or the last, is one
    ``ExperimentError`` saying what to try.
    """
    for attempt in range(1, RAY_START_ATTEMPTS + 1):
        try:
            ray.init(**kwargs)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises plain Exception here
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            slow = "timed out" in first.lower()
            _quiet_shutdown(ray)
            if slow and attempt < RAY_START_ATTEMPTS:
                continue
            if address:
                raise ExperimentError(
                    f"could not connect to Ray at {address!r}: {first} Check that the "
                    "cluster is up (`ray status`), or use --engine local."
                ) from None
            raise ExperimentError(
                f"the local Ray instance did not start ({first}"
                + (f"; tried {attempt} times" if slow else "")
                + "): the machine may be too loaded; try again, start Ray yourself "
                "(`ray start --head`) and pass --address auto, or use --engine local."
            ) from None


def _quiet_shutdown(ray) -> None:
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - nothing was started
        pass


def _ray_execute(task, blob=None):
    """Run a trial as a Ray task, its timeout enforced inside by SIGALRM.

    The driver cancels the task (killing its worker) ``RAY_GRACE`` seconds
    after the timeout as a backstop. ``blob`` is a trial callable pickled by
    the driver (resolved from the object store by Ray).
    """
    if blob is not None and task["fn"] not in _CALLABLES:
        register(task["fn"], pickle.loads(blob))
    return execute(task, alarm=True)


def ray_options(resources) -> dict:
    """Ray task options from ``[resources]``: num_cpus (default 1), num_gpus, memory bytes."""
    from vareval.experiment.spec import memory_bytes

    options = {"num_cpus": resources.get("num_cpus", 1)}
    gpus = resources.get("num_gpus") or resources.get("gpus_per_trial")
    if gpus:
        options["num_gpus"] = gpus
    if "memory" in resources:
        options["memory"] = memory_bytes(resources["memory"])
    return options


def make_engine(
    engine: str,
    workers: int | None = None,
    address: str | None = None,
    *,
    resources=None,
    runtime_env=None,
    slots=None,
    slurm=None,
):
    """Build the named engine (``runtime_env``: Ray; ``slots``: serial and local; ``slurm``: Slurm).

    ``resources`` gives ``threads_per_trial`` (default: each worker's share of
    the cores) and, for Ray, the per-trial ``num_cpus``, ``num_gpus`` (or
    ``gpus_per_trial``) and ``memory``; ``slots`` are GPU devices per
    concurrent trial (see :class:`LocalEngine`); ``slurm`` the Slurm engine's
    options (see :mod:`vareval.experiment.slurm`).
    """
    resources = resources or {}
    threads = resources.get("threads_per_trial")
    if workers is not None and (
        isinstance(workers, bool)
        or not isinstance(workers, numbers.Integral)
        or workers < 1
    ):
        raise ExperimentError(f"`workers` must be an integer >= 1; got {workers!r}.")
    if address is not None and engine != "ray":
        raise ExperimentError(
            "`address` applies to the ray engine only (--engine ray)."
        )
    if slots is not None and engine in ("ray", "slurm"):
        raise ExperimentError(
            "--gpus applies to the local and serial engines; Ray and Slurm assign devices "
            "themselves: set [resources] gpus_per_trial (Ray) or --gpus-per-trial (Slurm)."
        )
    if engine == "serial":
        return SerialEngine(workers, slots=slots, threads=threads)
    if engine == "local":
        return LocalEngine(workers, slots=slots, threads=threads)
    if engine == "ray":
        return RayEngine(workers, address, resources, runtime_env, threads=threads)
    if engine == "slurm":
        from vareval.experiment.slurm import SlurmEngine

        return SlurmEngine(workers, threads=threads, **(slurm or {}))
    raise ExperimentError(f"unknown engine {engine!r}; accepted: {', '.join(ENGINES)}.")
