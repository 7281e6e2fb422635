"""Running ONE trial, the same way in every engine: :func:`run_trial`.

Every engine (serial, local, Ray, a scheduler's compute-node worker) calls
:func:`run_trial` in the process that runs the trial, and writes nothing
itself: the result it returns (a plain dict) goes back to the runner, the
store's only writer.

A trial is either a Python callable (``module:function``, receiving a
:class:`~vareval.experiment.streams.Trial`) or a **command** (any script):

- placeholders ``{name}`` in its arguments are filled from the trial's
  factors, configuration and ``[params]`` (and ``{trial_id}``, ``{seed}``,
  ``{config_index}``, ``{rerun}``, ``{config_label}``, ``{python}``);
- it runs in its own process group, in the experiment file's folder, with
  ``VAREVAL_TRIAL_ID``, ``VAREVAL_SEED_<SOURCE>`` (a 32-bit integer per
  source of randomness, the one ``Trial.int_seed`` gives a callable) and
  ``VAREVAL_METRICS`` (a path to write its metrics to as JSON) in its
  environment;
- its metrics are that file's JSON object, or else the last line of its
  stdout if that is a JSON object;
- its stdout and stderr are kept as the artifacts ``stdout.txt`` and
  ``stderr.txt`` (the last ``OUTPUT_LIMIT`` bytes of each); a failure (exit
  status, signal, timeout, no metrics, non-numbers) keeps the reason as the
  error and the last ``STDERR_LINES`` lines of stderr as the traceback;
- past its timeout the whole process group gets SIGTERM, then SIGKILL
  ``KILL_GRACE`` seconds later; the group is killed when the trial ends in
  any case, so a script's forked workers never outlive it.

Threads: each trial runs with ``task["threads"]`` native threads (OpenMP,
OpenBLAS, MKL, BLIS, numexpr): environment variables for a command or for
libraries a callable loads later, ``threadpoolctl`` for those already loaded.
Devices: ``task["devices"]`` (e.g. ``"1"``) becomes ``CUDA_VISIBLE_DEVICES``
and ``HIP_VISIBLE_DEVICES``. Both are recorded in the result's
``execution`` record, which the store keeps per trial.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import numbers
import os
import shlex
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping

import numpy as np

from vareval.errors import ExperimentError
from vareval.experiment.spec import resolve_function
from vareval.experiment.streams import Trial

OUTPUT_LIMIT = 1 << 20  # bytes of stdout / stderr kept per trial (the last ones)
STDERR_LINES = 50  # lines of stderr kept with a failure
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of a timed-out command
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
DEVICE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")

_HOST = socket.gethostname()
_FUNCTIONS: dict = {}
_CALLABLES: dict = {}  # label -> a trial given as a Python callable
_BROKEN: dict = {}  # label -> why its pickled callable could not be loaded
_RUNNING: dict = {}  # "group": the process group of the command running now


def register(label: str, fn) -> None:
    """Make the callable ``fn`` the trial function named ``label`` in this process."""
    _CALLABLES[label] = fn


def unregister(label: str) -> None:
    """Forget the callable registered as ``label``."""
    _CALLABLES.pop(label, None)


def mark_broken(label: str, reason: str) -> None:
    """Fail every trial of ``label`` with ``reason`` (its callable did not unpickle)."""
    _BROKEN[label] = reason


# -- what a trial gives back ------------------------------------------


class TrialTimeout(BaseException):
    """Raised by the serial engine's alarm; a BaseException so trials don't catch it."""


def check_metrics(out) -> dict[str, float]:
    """Return the trial's metrics as ``{name: float}`` or raise ExperimentError.

    A metric must be a real number (int, float or numpy scalar; not a bool);
    NaN and infinities are kept, as they are results too (a diverged run).
    """
    if not isinstance(out, Mapping) or not out:
        raise ExperimentError(
            "the trial function must return a non-empty mapping of metric names to "
            f"numbers; it returned {type(out).__name__} {_short(out)}."
        )
    metrics = {}
    for name, value in out.items():
        if not isinstance(name, str) or not name:
            raise ExperimentError(f"metric name {name!r} must be a non-empty string.")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ExperimentError(
                f"metric {name!r} is {type(value).__name__} {_short(value)}; "
                "expected a real number (int or float)."
            )
        metrics[name] = float(value)
    return metrics


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def make_trial(task: Mapping) -> Trial:
    """The :class:`Trial` a task describes."""
    return Trial(
        trial_id=task["id"],
        factors=dict(task["factors"]),
        config=dict(task["config"]),
        params=dict(task.get("params", {})),
        seed=task["seed"],
        config_index=task["config_index"],
        config_label=task["config_label"],
        rerun=task["rerun"],
        seeds=task["seeds"],
    )


def failure(task: Mapping, error: str, started: float | None = None) -> dict:
    """A failed result for a trial that did not return (timeout, dead worker)."""
    now = time.time()
    return {
        "id": task["id"],
        "status": "failed",
        "metrics": None,
        "host": _HOST,
        "started": started if started is not None else now,
        "finished": now,
        "error": error,
        "traceback": None,
        "own": 0.0,
    }


# -- threads and devices ------------------------------------------------

_LIMITED: dict = {}  # "threads": the limit threadpoolctl last applied in this process


def limit_threads(n: int | None) -> None:
    """Give this process ``n`` native threads: env for later libraries, threadpoolctl now.

    Applied once per process and value (``threadpoolctl`` inspects the loaded
    libraries, about a millisecond); libraries loaded afterwards read the
    environment variables when they start.
    """
    if not n or _LIMITED.get("threads") == n:
        return
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # then only the environment limits later libraries
        pass
    else:
        threadpool_limits(limits=int(n))
    _LIMITED["threads"] = n


def _device_env(devices: str | None) -> dict:
    return {} if devices is None else dict.fromkeys(DEVICE_VARS, devices)


def execution_record(task: Mapping) -> dict:
    """What the trial ran with: threads, visible devices (and, for a command, its argv)."""
    rec = {"threads": task.get("threads")}
    if task.get("devices") is not None:
        rec["devices"] = task["devices"]
    return rec


# -- the one entry point --------------------------------------------------


def run_trial(task: Mapping, *, alarm: bool = False, on_start=None) -> dict:
    """Run one trial (a callable or a command) and return its result; never raises.

    Parameters
    ----------
    task : mapping
        A claimed trial (``id``, ``factors``, ``config``, ``seed``,
        ``config_index``, ``config_label``, ``rerun``, ``seeds``) with the
        run's ``fn`` (callable label), ``paths``, ``params``, ``timeout`` and,
        optionally, ``command`` (a list of argument templates), ``cwd``,
        ``threads`` and ``devices``.
    alarm : bool, default False
        Enforce a callable's timeout with ``SIGALRM`` (serial and Ray engines;
        the local engine kills its worker instead). A command's timeout is
        always enforced here, by killing its process group.
    on_start : callable, optional
        Called when the trial itself starts (after importing its module).

    Returns
    -------
    dict
        ``id``, ``status`` (done or failed), ``metrics``, ``started``,
        ``finished``, ``host``, ``error``, ``traceback``, ``own`` (the trial's
        own seconds), ``execution`` and, when any, ``curves`` and ``artifacts``.
    """
    if task.get("command"):
        return _run_command(task, on_start)
    return _run_callable(task, alarm, on_start)


def _result(task: Mapping, started: float) -> dict:
    return {
        "id": task["id"],
        "host": _HOST,
        "started": started,
        "metrics": None,
        "error": None,
        "traceback": None,
        "execution": execution_record(task),
    }


def _function(path: str, paths):
    fn = _CALLABLES.get(path)
    if fn is not None:
        return fn
    if path in _BROKEN:
        raise ExperimentError(_BROKEN[path])
    key = (path, tuple(paths))
    fn = _FUNCTIONS.get(key)
    if fn is None:
        fn = _FUNCTIONS[key] = resolve_function(path, paths)
    return fn


def _run_callable(task: Mapping, alarm: bool, on_start) -> dict:
    started = time.time()
    t0 = time.perf_counter()
    result = _result(task, started)
    timeout = task.get("timeout")
    use_alarm = (
        alarm
        and timeout
        and threading.current_thread() is threading.main_thread()
        and hasattr(signal, "setitimer")
    )
    previous = None
    trial = None
    try:
        limit_threads(task.get("threads"))
        os.environ.update(_device_env(task.get("devices")))
        key = (task["fn"], tuple(task.get("paths", ())))
        if on_start is not None and key not in _FUNCTIONS:
            on_start()  # importing the trial's module is subject to the timeout too
        fn = _function(*key)
        trial = make_trial(task)
        if on_start is not None:
            on_start()
        if use_alarm:
            previous = signal.signal(signal.SIGALRM, _raise_timeout)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            out = fn(trial)
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
        result["metrics"] = check_metrics(out)
        result["status"] = "done"
    except KeyboardInterrupt:
        raise
    except TrialTimeout:
        result.update(
            status="failed",
            error=f"timed out after {timeout:g} s",
            traceback=traceback.format_exc(),
        )
    except BaseException as exc:  # the trial's own failure, SystemExit included
        text = str(exc).strip().splitlines()
        result.update(
            status="failed",
            error=f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": "),
            traceback=traceback.format_exc(),
        )
    if trial is not None and (trial._curves or trial._artifacts):
        result["curves"] = trial._curves
        result["artifacts"] = list(trial._artifacts.items())
    result["finished"] = time.time()
    result["own"] = time.perf_counter() - t0
    return result


def _raise_timeout(signum, frame):
    raise TrialTimeout


# -- command trials ------------------------------------------------------


BUILTIN_FIELDS = ("trial_id", "seed", "config_index", "rerun", "config_label", "python")


def placeholders(command) -> list[str]:
    """The ``{name}`` fields of a command's arguments, in order of appearance."""
    names = []
    for arg in command:
        for _, name, _, _ in string.Formatter().parse(arg):
            if name is not None and name not in names:
                names.append(name)
    return names


def _text(value) -> str:
    """An argument's text: strings as written, numbers exactly, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def fill_command(task: Mapping) -> list[str]:
    """The command of ``task`` with its placeholders filled (see the module notes).

    Raises
    ------
    ExperimentError
        If a placeholder has no value in this trial (e.g. a conditional
        parameter whose ``when`` does not hold here).
    """
    values = {
        **{k: _text(v) for k, v in task.get("params", {}).items()},
        **{k: _text(v) for k, v in task["factors"].items()},
        **{k: _text(v) for k, v in task["config"].items()},
        "trial_id": str(task["id"]),
        "seed": str(task["seed"]),
        "config_index": str(task["config_index"]),
        "rerun": str(task["rerun"]),
        "config_label": str(task["config_label"]),
        "python": sys.executable,
    }
    try:
        return [arg.format_map(values) for arg in task["command"]]
    except KeyError as exc:
        raise ExperimentError(
            f"command placeholder {{{exc.args[0]}}} has no value in this trial (its "
            f"factors, configuration and params: {', '.join(sorted(values))})."
        ) from None


def seed_environment(task: Mapping) -> dict[str, str]:
    """``VAREVAL_TRIAL_ID`` and ``VAREVAL_SEED_<SOURCE>`` of a trial, as strings."""
    env = {"VAREVAL_TRIAL_ID": str(task["id"])}
    for source, record in task["seeds"].items():
        ss = np.random.SeedSequence(
            int(record["entropy"]), spawn_key=tuple(record["spawn_key"])
        )
        env[f"VAREVAL_SEED_{source.upper()}"] = str(
            int(ss.generate_state(1, dtype=np.uint32)[0])
        )
    return env


def kill_running_group() -> None:
    """SIGKILL the process group of the command this process runs now (if any)."""
    group = _RUNNING.get("group")
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _run_command(task: Mapping, on_start) -> dict:
    started = time.time()
    t0 = time.perf_counter()
    result = _result(task, started)
    timeout = task.get("timeout")
    with tempfile.TemporaryDirectory(prefix="vareval-trial-") as tmp:
        out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        metrics_path = os.path.join(tmp, "metrics.json")
        try:
            argv = fill_command(task)
        except ExperimentError as exc:
            result.update(status="failed", error=str(exc))
            result.update(finished=time.time(), own=time.perf_counter() - t0)
            return result
        result["execution"]["command"] = argv
        threads = task.get("threads")
        env = {
            **os.environ,
            **(dict.fromkeys(THREAD_VARS, str(threads)) if threads else {}),
            **_device_env(task.get("devices")),
            **seed_environment(task),
            "VAREVAL_METRICS": metrics_path,
        }
        if on_start is not None:
            on_start()
        reason = None
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    cwd=task.get("cwd") or None,
                    start_new_session=True,  # its own process group, killed as one
                )
            except OSError as exc:
                result.update(
                    status="failed",
                    error=f"command {shlex.join(argv)!r} could not start: {exc}",
                )
                result.update(finished=time.time(), own=time.perf_counter() - t0)
                return result
            _RUNNING["group"] = proc.pid
            try:
                with _no_parent_death_signal():
                    code = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                reason = f"timed out after {timeout:g} s; its process group was killed"
                _stop_group(proc)
                code = proc.returncode
            finally:
                kill_running_group()  # workers it forked must not outlive it
                _RUNNING.pop("group", None)
        result["execution"]["exit_code"] = code
        stdout, stderr = _tail(out_path), _tail(err_path)
        result["artifacts"] = [
            (name, data) for name, data in (("stdout.txt", stdout), ("stderr.txt", stderr))
            if data
        ]
        if reason is None and code != 0:
            reason = (
                f"the command was killed by signal {signal.Signals(-code).name}"
                if code < 0 and -code in signal.valid_signals()
                else f"the command exited with status {code}"
            )
        if reason is None:
            try:
                result["metrics"] = check_metrics(_metrics(metrics_path, stdout))
                result["status"] = "done"
            except ExperimentError as exc:
                reason = str(exc)
        if reason is not None:
            lines = stderr.decode("utf-8", "replace").splitlines()[-STDERR_LINES:]
            last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
            result.update(
                status="failed",
                error=reason + (f"; stderr ends: {last[:200]}" if last else ""),
                traceback="\n".join(lines) or None,
            )
    result["finished"] = time.time()
    result["own"] = time.perf_counter() - t0
    return result


@contextlib.contextmanager
def _no_parent_death_signal():
    """Lift this process's parent-death SIGKILL while it waits for a command.

    A local worker is SIGKILLed when its parent dies (``PR_SET_PDEATHSIG``),
    which would leave its command's process group running. While it only
    waits (the GIL released), its lifeline thread sees the runner go and
    kills the group first (:func:`kill_running_group`), so the signal is
    not needed then; it is restored afterwards.
    """
    prctl = _prctl()
    if prctl is None:
        yield
        return
    previous = ctypes.c_int(0)
    prctl(2, ctypes.byref(previous))  # PR_GET_PDEATHSIG
    if previous.value:
        prctl(1, 0)  # PR_SET_PDEATHSIG
    try:
        yield
    finally:
        if previous.value:
            prctl(1, previous.value)


@functools.cache
def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _stop_group(proc) -> None:
    """SIGTERM the command's process group, SIGKILL it ``KILL_GRACE`` seconds later."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        pass
    kill_running_group()
    proc.wait()


def _tail(path: str) -> bytes:
    """The last ``OUTPUT_LIMIT`` bytes of a file, marked when the start was cut."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if size <= OUTPUT_LIMIT:
            return fh.read()
        fh.seek(size - OUTPUT_LIMIT)
        return f"[vareval: the first {size - OUTPUT_LIMIT} bytes were cut]\n".encode() + (
            fh.read()
        )


def _metrics(path: str, stdout: bytes):
    """The JSON object written to ``VAREVAL_METRICS``, else the last line of stdout."""
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, "rb") as fh:
            raw = fh.read()
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ExperimentError(
                f"the metrics file ($VAREVAL_METRICS) is not JSON ({exc}): "
                f"{_short(raw.decode('utf-8', 'replace'))}"
            ) from None
    lines = [ln for ln in stdout.decode("utf-8", "replace").splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else ""
    try:
        out = json.loads(last) if last.startswith("{") else None
    except ValueError:
        out = None
    if out is None:
        raise ExperimentError(
            "the command reported no metrics: it wrote nothing to $VAREVAL_METRICS and "
            "the last line of its stdout is not a JSON object"
            + (f" ({_short(last)})" if last else " (stdout is empty)")
            + "."
        )
    return out


def trial_seeds(environ: Mapping | None = None) -> dict[str, int]:
    """The seeds of the running trial, for a script run as a command trial.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read (default ``os.environ``).

    Returns
    -------
    dict of str to int
        ``{source: seed}`` from the ``VAREVAL_SEED_<SOURCE>`` variables, the
        source names in lower case (``{"init": 123, "data_split": 456}``):
        32-bit integers for ``random_state=``, ``torch.manual_seed`` and alike.

    Raises
    ------
    ExperimentError
        When no such variable is set (the script was not started by vareval).
    """
    env = os.environ if environ is None else environ
    prefix = "VAREVAL_SEED_"
    seeds = {k[len(prefix):].lower(): int(v) for k, v in env.items() if k.startswith(prefix)}
    if not seeds:
        raise ExperimentError(
            "no VAREVAL_SEED_<SOURCE> variable is set: trial_seeds() reads the seeds "
            "vareval gives a command trial; run the script through `vareval run`."
        )
    return seeds
