"""Import scalars from TensorBoard event files, without TensorFlow or TensorBoard.

An event file is a sequence of records (length, CRC, an ``Event`` protocol
buffer, CRC). Scalars are read from both forms writers use: ``simple_value``
(PyTorch's and tensorboardX's ``add_scalar``) and a one-element tensor whose
summary metadata names the ``scalars`` plugin (TensorFlow 2's
``tf.summary.scalar``). Images, histograms and text are skipped.
"""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import pandas as pd

from vareval.errors import DataError, VarevalWarning

_PATTERN = "events.out.tfevents.*"


def from_tensorboard(logdir, final: bool = False) -> pd.DataFrame:
    """Read every scalar under ``logdir`` into a tidy table.

    Parameters
    ----------
    logdir : str or path-like
        A folder; each folder below it holding event files is one run,
        named by its path relative to ``logdir`` (``.`` for ``logdir`` itself).
    final : bool, default False
        False: the learning curves, one row per (run, tag, step) with
        columns ``run``, ``tag``, ``step``, ``wall_time``, ``value``.
        True: one row per run and one column per tag holding the value at the
        run's last step of that tag (the later write on equal steps).

    Returns
    -------
    pandas.DataFrame
    """
    root = Path(logdir)
    if not root.is_dir():
        raise DataError(f"TensorBoard log folder '{logdir}' does not exist.")
    files = sorted(root.rglob(_PATTERN))
    if not files:
        raise DataError(f"no TensorBoard event files ({_PATTERN}) under '{logdir}'.")
    rows = []
    for path in files:
        run = path.parent.relative_to(root).as_posix()
        rows.extend((run, *scalar) for scalar in _scalars(path))
    if not rows:
        raise DataError(f"the event files under '{logdir}' hold no scalars.")
    curves = pd.DataFrame(rows, columns=["run", "tag", "step", "wall_time", "value"])
    curves = curves.sort_values(["run", "tag", "step", "wall_time"], kind="stable")
    if not final:
        return curves.reset_index(drop=True)
    last = curves.groupby(["run", "tag"], sort=False).tail(1)
    wide = last.pivot(index="run", columns="tag", values="value")
    return wide.rename_axis(columns=None).reset_index()


def _scalars(path: Path):
    """Yield (tag, step, wall_time, value) for each scalar in one event file."""
    data = path.read_bytes()
    plugin: dict[str, str] = {}  # a tag's plugin is written with its first value only
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            break
        (length,) = struct.unpack_from("<Q", data, pos)
        end = pos + 12 + length + 4
        if end > len(data):
            break
        try:
            yield from _event_scalars(data[pos + 12 : pos + 12 + length], plugin)
        except (IndexError, struct.error, UnicodeDecodeError):
            raise DataError(f"event file '{path}' is corrupt at byte {pos}.") from None
        pos = end
    if pos < len(data):
        warnings.warn(f"event file '{path}': the last {len(data) - pos} bytes are an incomplete "
                      "record (a writer still running?) and are not read.", VarevalWarning,
                      stacklevel=3)


def _event_scalars(event: bytes, plugin: dict[str, str]):
    fields = _fields(event)
    summary = fields.get(5)
    if summary is None:
        return
    step = _signed(fields.get(2, [0])[-1])
    wall_time = struct.unpack("<d", fields[1][-1])[0] if 1 in fields else float("nan")
    for raw in summary:
        for value in _fields(raw).get(1, []):
            v = _fields(value)
            tag = v[1][-1].decode() if 1 in v else ""
            if 9 in v:  # SummaryMetadata.plugin_data.plugin_name
                data = _fields(v[9][-1]).get(1)
                plugin[tag] = _fields(data[-1]).get(1, [b""])[-1].decode() if data else ""
            if 2 in v:
                yield tag, step, wall_time, struct.unpack("<f", v[2][-1])[0]
            elif 8 in v and plugin.get(tag) == "scalars":
                yield tag, step, wall_time, _tensor_scalar(v[8][-1])


def _tensor_scalar(raw: bytes) -> float:
    """The single number in a TensorProto (float, double, int32 or int64)."""
    t = _fields(raw)
    dtype = t.get(1, [1])[-1]
    if 4 in t:  # tensor_content: the raw little-endian bytes
        fmt = {1: "<f", 2: "<d", 3: "<i", 9: "<q"}[dtype]
        return float(struct.unpack(fmt, t[4][-1][: struct.calcsize(fmt)])[0])
    for field, fmt in ((5, "<f"), (6, "<d")):
        if field in t:
            return float(struct.unpack_from(fmt, t[field][-1])[0])
    for field in (7, 10):
        if field in t:
            packed = t[field][-1]
            return float(_signed(_varint(packed, 0)[0]) if isinstance(packed, bytes) else packed)
    raise IndexError("no value in tensor")


def _fields(buf: bytes) -> dict[int, list]:
    """Decode one protocol-buffer message: field number -> list of raw values."""
    out: dict[int, list] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise IndexError(f"wire type {wire}")
        if pos > len(buf):
            raise IndexError("truncated field")
        out.setdefault(number, []).append(value)
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return result, pos
        shift += 7


def _signed(value: int) -> int:
    """A varint int64 as a signed number (negative steps are two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value
