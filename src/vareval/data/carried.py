"""The design a table file carries: written beside the data, restored on reading.

A table vareval writes from a run store (``vareval export``, ``vareval select
-o``, :func:`vareval.data.io.write_table` on a frame with ``attrs["spec"]``)
carries the store's declaration, so that whatever path the data took (store,
export, selection output, a notebook) every analysis reads one design
(:func:`vareval.data.design.design_of`):

- Parquet: in the file's schema metadata, under the key ``vareval.design``.
- CSV, TSV, JSON Lines: in a sidecar ``FILE.design.json`` beside ``FILE`` (the
  table itself stays plain, for every other tool). The sidecar records the
  table's SHA-256: a table changed after vareval wrote it is recognised, and
  its sidecar is ignored with a warning (its labels then decide).

The payload is ``{"format": "vareval design", "version": 1, "spec": {...}}``:
the store's declaration (``df.attrs["spec"]``), which a selection output
amends with what selection changed (see :func:`vareval.data.selection.select`).
Reading restores it into ``df.attrs["spec"]`` and names the file it came from
in ``df.attrs["carried_by"]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

from vareval.errors import VarevalWarning

KEY = b"vareval.design"
SIDECAR = ".design.json"
FORMAT = "vareval design"
VERSION = 1
# the columns a selection output adds to the table (vareval.data.selection.select):
# here, so that reading a table need not import the selection module
SELECTION_COLUMNS = ("n_searched", "n_tied", "selected_on", "selection")


def payload(df) -> dict | None:
    """The design ``df`` carries (its store's declaration), or None for a plain table."""
    spec = df.attrs.get("spec")
    return {"format": FORMAT, "version": VERSION, "spec": spec} if spec else None


def sidecar(path) -> Path:
    """The sidecar of a text table: ``results.csv`` -> ``results.csv.design.json``."""
    return Path(f"{path}{SIDECAR}")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_sidecar(design: dict | None, path, data: bytes) -> None:
    """Write (or, for a table without a design, remove) the sidecar of the text table ``path``."""
    side = sidecar(path)
    if not Path(path).is_file():
        return  # a device or pipe (-o /dev/stdout) has no "beside"
    if design is None:
        side.unlink(missing_ok=True)  # a sidecar left from an earlier table is not this one's
        return
    entry = {**design, "table": Path(path).name, "sha256": _digest(data)}
    side.write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_sidecar(path) -> dict | None:
    """The design in the sidecar of the text table ``path``; None without (or with a stale) one."""
    if not os.path.isfile(f"{path}{SIDECAR}"):  # most tables have none: no Path made
        return None
    side = sidecar(path)
    try:
        entry = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return _ignored(side, f"it is not readable JSON ({exc})")
    if not _valid(entry):
        return _ignored(side, f"it is not a {FORMAT} version {VERSION}")
    if entry.get("sha256") != _digest(Path(path).read_bytes()):
        return _ignored(side, f"'{Path(path).name}' changed after vareval wrote it")
    return entry


def parquet_metadata(design: dict | None) -> dict:
    """The schema metadata entry carrying ``design`` (empty without one)."""
    return {} if design is None else {KEY: json.dumps(design, sort_keys=True).encode()}


def read_parquet_design(metadata: dict | None, path) -> dict | None:
    """The design in a Parquet file's schema metadata, or None."""
    raw = (metadata or {}).get(KEY)
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
    except ValueError as exc:
        return _ignored(path, f"its metadata {KEY.decode()!r} is not JSON ({exc})")
    return entry if _valid(entry) else _ignored(path, f"it holds no {FORMAT} v{VERSION}")


def restore(df, design: dict | None, path):
    """Put a file's design into ``df.attrs`` (``spec``, ``rerun_mode``, ``carried_by``)."""
    if design is not None:
        spec = design["spec"]
        df.attrs["spec"] = spec
        df.attrs["rerun_mode"] = spec.get("rerun_mode", "same")
        df.attrs["carried_by"] = Path(path).name
    return df


def _valid(entry) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("format") == FORMAT
        and entry.get("version") == VERSION
        and isinstance(entry.get("spec"), dict)
    )


def _ignored(where, why: str) -> None:
    warnings.warn(
        f"the design carried by '{where}' is ignored: {why}; the design is read from "
        "the table's labels instead.",
        VarevalWarning,
        stacklevel=3,
    )
    return None
