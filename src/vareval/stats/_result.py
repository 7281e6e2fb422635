"""The base of vareval's result objects: frozen dataclasses that read well."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np


def _plain(value):
    """Turn numpy values and nested results into JSON-ready Python values."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _short(value) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:.6g}"
    if isinstance(value, np.ndarray):
        if value.size > 6:
            return f"array(shape={value.shape})"
        return np.array2string(value, precision=6, separator=", ")
    if isinstance(value, tuple) and all(isinstance(v, float | np.floating) for v in value):
        return "(" + ", ".join(f"{v:.6g}" for v in value) + ")"
    return repr(value)


@dataclasses.dataclass(frozen=True)
class Result:
    """Base class: ``to_dict()`` for JSON and a one-field-per-line ``repr``."""

    def to_dict(self) -> dict:
        """Return the fields as plain Python values, ready for ``json.dumps``."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def __repr__(self) -> str:
        fields = dataclasses.fields(self)
        body = "\n".join(f"    {f.name}={_short(getattr(self, f.name))}," for f in fields)
        return f"{type(self).__name__}(\n{body}\n)"


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)``."""

    low: float
    high: float
