"""What a run ran on: the trial's code, the packages, the machine.

Captured once per run (not per trial), in the runner's process after the
trial function has been imported, so the packages it imports are among the
versions recorded. Everything here is read from memory, ``/proc`` and one
``git`` call; it costs a few milliseconds (``bench/bench_runner.py``).

:func:`compare` says what differs between two records; a changed trial code
hash makes a replay not comparable (its metrics may differ for that reason
alone), the rest is reported as context.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import platform
import socket
import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

_GIT_TIMEOUT = 2.0


def code_hash(fn) -> dict:
    """The hash of the trial's source: its module file, else the function's source or code.

    Returns
    -------
    dict
        ``{"hash": sha256 hex, "of": what was hashed (a file path, "source" or "bytecode")}``.
    """
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file() and getattr(module, "__name__", "") != "__main__":
        return {"hash": hashlib.sha256(Path(path).read_bytes()).hexdigest(), "of": path}
    try:
        text = inspect.getsource(fn)
        return {"hash": hashlib.sha256(text.encode()).hexdigest(), "of": "source"}
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        blob = repr((code.co_code, code.co_consts, code.co_names)) if code else repr(fn)
        return {"hash": hashlib.sha256(blob.encode()).hexdigest(), "of": "bytecode"}


def command_hash(command, cwd: str | None) -> dict:
    """The hash of a command trial: its argument templates and every file they name.

    An argument that is an existing file (relative to ``cwd``), such as
    ``train.py``, is hashed by content, so editing the script changes the
    hash as editing a trial module does.

    Returns
    -------
    dict
        ``{"hash": sha256 hex, "of": the files hashed (or "command")}``.
    """
    digest = hashlib.sha256("\0".join(command).encode())
    files = []
    for arg in command:
        path = Path(cwd or os.getcwd(), arg)
        if "{" not in arg and path.is_file() and path.stat().st_size < 1 << 26:
            digest.update(path.read_bytes())
            files.append(str(path.resolve()))
    return {"hash": digest.hexdigest(), "of": ", ".join(files) or "command"}


def _git(folder: str) -> dict | None:
    """The commit and dirty state of the repository holding ``folder`` (None outside one).

    One ``git status --porcelain=v2 --branch`` call gives both.
    """
    try:
        out = subprocess.run(
            ["git", "-C", folder, "status", "--porcelain=v2", "--branch",
             "--untracked-files=no"],
            capture_output=True, text=True, timeout=_GIT_TIMEOUT, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    lines = out.stdout.splitlines()
    commit = next((ln.split()[2] for ln in lines if ln.startswith("# branch.oid")), None)
    if commit is None:
        return None
    return {"commit": commit, "dirty": any(not ln.startswith("#") for ln in lines)}


def _packages() -> dict[str, str]:
    """``{name: version}`` of every imported top-level package that states a version."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some packages deprecate __version__ (click)
        for name, module in list(sys.modules.items()):
            if "." in name or name.startswith("_") or module is None:
                continue
            version = getattr(module, "__version__", None)
            if isinstance(version, str):
                out[name] = version
    return dict(sorted(out.items()))


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpus() -> list[str]:
    """GPU models the NVIDIA driver lists in /proc (no subprocess), else torch's if imported."""
    names = []
    root = Path("/proc/driver/nvidia/gpus")
    try:
        for info in sorted(root.glob("*/information")):
            for line in info.read_text().splitlines():
                if line.startswith("Model:"):
                    names.append(line.split(":", 1)[1].strip())
    except OSError:
        pass
    torch = sys.modules.get("torch")
    if not names and torch is not None:
        try:
            if torch.cuda.is_available():
                names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        except Exception:  # a broken CUDA set-up must not stop the run
            names = []
    return names


def capture(fn, *, command=None, cwd: str | None = None) -> dict:
    """The provenance record of a run of the trial function ``fn`` (or of ``command``).

    Returns
    -------
    dict
        ``trial`` (``{"hash", "of"}``), ``git`` (``{"commit", "dirty"}`` or
        None), ``python``, ``platform``, ``packages`` (``{name: version}``),
        ``host``, ``cpu``, ``cpus``, ``gpus``.
    """
    if command is not None:
        code = command_hash(command, cwd)
        folder = cwd or os.getcwd()
    else:
        code = code_hash(fn)
        folder = os.path.dirname(code["of"]) if os.path.isabs(code["of"]) else os.getcwd()
    return {
        "trial": code,
        "git": _git(folder),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "packages": _packages(),
        "host": socket.gethostname(),
        "cpu": _cpu(),
        "cpus": os.cpu_count(),
        "gpus": _gpus(),
    }


def compare(then: Mapping, now: Mapping) -> tuple[bool, list[str]]:
    """Compare two provenance records.

    Returns
    -------
    (bool, list of str)
        Whether the trial's code is the same, and one line per difference
        (code, git commit or dirty state, Python, packages both recorded,
        host, CPU, GPUs).
    """
    lines = []
    same_code = then["trial"]["hash"] == now["trial"]["hash"]
    if not same_code:
        lines.append(
            f"trial code changed since the run (sha256 {then['trial']['hash'][:12]} -> "
            f"{now['trial']['hash'][:12]}, {now['trial']['of']})"
        )
    g0, g1 = then.get("git"), now.get("git")
    if g0 and g1 and (g0["commit"], g0["dirty"]) != (g1["commit"], g1["dirty"]):
        lines.append(
            f"git {g0['commit'][:10]}{' (dirty)' if g0['dirty'] else ''} -> "
            f"{g1['commit'][:10]}{' (dirty)' if g1['dirty'] else ''}"
        )
    for key in ("python", "host", "cpu", "gpus"):
        if then.get(key) != now.get(key):
            lines.append(f"{key} {then.get(key)} -> {now.get(key)}")
    p0, p1 = then.get("packages", {}), now.get("packages", {})
    for name in sorted(set(p0) & set(p1)):
        if p0[name] != p1[name]:
            lines.append(f"{name} {p0[name]} -> {p1[name]}")
    return same_code, lines
