"""GPU devices for trials on one machine: which exist, and one set per running trial.

``--gpus 0,1,2,3`` (or ``all``: the devices ``nvidia-smi -L`` lists) and
``[resources] gpus_per_trial`` (default 1) cut the devices into *slots*, one
per concurrent trial: ``["0", "1", "2", "3"]``, or ``["0,1", "2,3"]`` with two
per trial. An engine gives each worker one slot for its whole life
(``CUDA_VISIBLE_DEVICES`` and ``HIP_VISIBLE_DEVICES``), so two trials that
run at the same time never share a device and at most ``len(slots)`` run at
once.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from vareval.errors import ExperimentError

_DEVICE = re.compile(r"^(\d+|GPU-[0-9A-Fa-f-]+|MIG-[\w/-]+)$")
_SMI_LINE = re.compile(r"^GPU (\d+):")


def detect_gpus() -> list[str]:
    """The indices of the GPUs ``nvidia-smi -L`` lists (empty without the tool or GPUs)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "-L"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [m.group(1) for ln in out.stdout.splitlines() if (m := _SMI_LINE.match(ln))]


def parse_gpus(gpus) -> list[str] | None:
    """``"0,1"``, ``"all"``, a list of indices, or None, as a list of device names.

    Raises
    ------
    ExperimentError
        For a malformed or repeated device, or ``all`` on a machine where
        ``nvidia-smi`` lists none.
    """
    if gpus is None:
        return None
    if isinstance(gpus, str) and gpus.strip().lower() == "all":
        found = detect_gpus()
        if not found:
            why = (
                "nvidia-smi is not installed"
                if shutil.which("nvidia-smi") is None
                else "nvidia-smi -L lists none"
            )
            raise ExperimentError(
                f"--gpus all: no GPU found ({why}); name the devices (--gpus 0,1) or "
                "leave --gpus out to run without GPUs."
            )
        return found
    items = gpus.split(",") if isinstance(gpus, str) else list(gpus)
    names = [str(g).strip() for g in items]
    bad = [n for n in names if not _DEVICE.match(n)]
    if not names or bad or any(isinstance(g, bool) for g in items):
        raise ExperimentError(
            f"--gpus must be 'all' or device indices such as 0,1,2,3 (or GPU-/MIG- "
            f"UUIDs); got {gpus!r}."
        )
    if len(set(names)) != len(names):
        raise ExperimentError(f"--gpus names a device twice: {gpus!r}.")
    return names


def gpu_slots(gpus, per_trial: int | None) -> list[str] | None:
    """The device set of each concurrent trial, or None when trials use no GPU.

    Parameters
    ----------
    gpus : str or sequence or None
        ``--gpus``: ``"all"``, ``"0,1"`` or a list; None with ``per_trial``
        set means every device ``nvidia-smi`` finds.
    per_trial : int or None
        ``[resources] gpus_per_trial`` (default 1 when ``gpus`` is given).
    """
    if gpus is None and per_trial is None:
        return None
    devices = parse_gpus("all" if gpus is None else gpus)
    per = per_trial or 1
    if len(devices) < per or len(devices) % per:
        raise ExperimentError(
            f"[resources] gpus_per_trial = {per} does not divide the {len(devices)} "
            f"devices ({','.join(devices)}); give a multiple of {per} with --gpus."
        )
    return [",".join(devices[i:i + per]) for i in range(0, len(devices), per)]
