"""Numbers as text for people: significant figures from the data's scale.

Every text table (the commands, result reprs) and the HTML report format
numbers here, so that a score near 1e-5 never prints as ``0.0000`` and one
near 1e308 never as ``inf``. The rule: the *scale* of a group of numbers
shown together (a table's column, or the scores a summary describes) is their
largest finite magnitude. On an ordinary scale (1e-3 to 1e6) numbers get the
fixed number of decimals that gives ``digits`` significant figures to a
number of the scale's order (scale in (0.1, 1]: four decimals, so 0.9722,
1.0000 and 0.0058 line up); a non-zero
number that would round to zero there is written in scientific notation.
Outside that range every number is written in scientific notation.
"""

from __future__ import annotations

import math

_LOW, _HIGH = 1e-3, 1e6


def scale_of(*groups) -> float:
    """The largest finite magnitude among the numbers given (scalars, arrays, nested lists)."""
    import numpy as np  # lazily: the command's --help imports this module

    best = 0.0
    for g in groups:
        try:
            values = np.asarray(g, dtype=float).ravel()
        except ValueError:  # ragged: several arrays of different lengths
            best = max(best, scale_of(*g))
            continue
        finite = np.abs(values[np.isfinite(values)])
        if finite.size:
            best = max(best, float(finite.max()))
    return best


def _decimals(scale: float, digits: int) -> int | None:
    """Decimals for fixed-point numbers on this scale, or None for scientific notation."""
    if scale == 0:
        return digits - 1
    if not _LOW <= scale < _HIGH:
        return None
    return max(0, digits - math.ceil(math.log10(scale)))


def number(x, scale=None, *, digits: int = 4, signed: bool = False) -> str:
    """Format ``x`` with ``digits`` significant figures at ``scale`` (default: ``|x|``).

    Examples
    --------
    >>> number(0.97222, 0.97), number(0.00582, 0.97), number(1.2e-5), number(1.4e308)
    ('0.9722', '0.0058', '1.200e-05', '1.400e+308')
    """
    x = float(x)
    sign = "+" if signed else ""
    if not math.isfinite(x):
        return f"{x:{sign}}"
    d = _decimals(abs(x) if scale is None else float(scale), digits)
    if d is not None:
        text = f"{x:{sign}.{d}f}"
        if x == 0 or float(text) != 0:
            return text
        return f"{x:{sign}.1e}"
    return f"{x:{sign}.{digits - 1}e}"


def formatter(*groups, digits: int = 4, signed: bool = False):
    """A one-argument formatter for numbers shown with ``groups`` (their shared scale)."""
    scale = scale_of(*groups)
    return lambda x: number(x, scale, digits=digits, signed=signed)


def pvalue(p: float) -> str:
    """A p-value: four decimals, or two significant figures below 0.001.

    A p-value of exactly 0 is one too small for a double: written ``<1e-300``.
    """
    p = float(p)
    if not math.isfinite(p):
        return "nan"
    if p == 0:
        return "<1e-300"
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.1e}"
