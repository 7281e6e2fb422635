"""The base of vareval's result objects: one protocol for every result.

Every result is a frozen dataclass deriving from :class:`Result`, which gives

- a short ``repr`` (one line per field, arrays and nested results summarised,
  never more than 25 lines) and ``_repr_html_`` (a small table) for notebooks;
- ``to_dict()`` (plain values for ``json.dumps``) and ``to_frame()`` (one tidy
  pandas DataFrame; pandas is imported only then);
- ``plot(**kw)``, a matplotlib figure from :mod:`vareval.plots.figures`;
- scipy's vocabulary: the effect or point estimate is ``estimate``, a test
  statistic ``statistic``, then ``pvalue`` and ``df``, and
  ``confidence_interval(confidence_level=None)`` returns a
  :class:`ConfidenceInterval` ``(low, high)`` where the result has one.

The repr shows the answer first: ``estimate``, the interval, ``se``,
``statistic``, ``df``, ``pvalue`` and the test's name lead (or the fields a
class names in ``_headline``), then the rest in declaration order, so the
cut at 25 lines only ever hides detail.

A subclass declares its interval with ``_interval = ("low", "high")`` (the two
fields holding it, computed at the level in the field ``confidence``) and, if
it can recompute the interval cheaply at another level, overrides
``_interval_at``. Renamed attributes stay readable for one release through
``_deprecated``: ``{old name: (new spelling, getter)}``; reading one raises a
:class:`DeprecationWarning` that names the new spelling.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import ClassVar, NamedTuple

import numpy as np

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence
from vareval.stats._lazy import _OnFirstUse, special

html = _OnFirstUse("html")  # for notebooks only: its entity table costs ~2 ms at every start

MAX_REPR_LINES = 25
HTML_HEAD_ROWS = 8  # rows a notebook shows before the details are folded
# The fields a repr shows first, in this order, when a result has them.
PROTOCOL_FIELDS = ("estimate", "confidence", "se", "statistic", "df", "pvalue", "test", "kind")


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)``; arrays for a result with many rows."""

    low: float
    high: float


def _interval(low, high) -> ConfidenceInterval:
    """A ``ConfidenceInterval`` of Python floats, or of arrays for many rows."""
    if np.ndim(low) == 0 and np.ndim(high) == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(np.asarray(low), np.asarray(high))


def _plain(value):
    """Turn numpy values and nested results into JSON-ready Python values."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return _plain(value.tolist()) if value.dtype == object else value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, str | bool | int | float | np.generic)


def _short(value, width: int = 72) -> str:
    """One line for a field: scalars in full, containers summarised."""
    if isinstance(value, Result):
        return f"{type(value).__name__}(...)"
    if isinstance(value, float | np.floating):
        return f"{value:.6g}"
    if isinstance(value, np.ndarray):
        if value.size > 6 or value.ndim > 1:
            return f"array(shape={value.shape}, dtype={value.dtype})"
        text = np.array2string(value, precision=6, separator=", ")
    elif isinstance(value, dict):
        if len(value) > 4 or not all(_is_scalar(v) for v in value.values()):
            return f"dict({len(value)} entries: {', '.join(map(str, list(value)[:4]))}...)"
        text = "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"
    elif isinstance(value, tuple | list) and not all(_is_scalar(v) for v in value):
        kinds = sorted({type(v).__name__ for v in value})
        return f"{type(value).__name__}({len(value)} x {'/'.join(kinds)})"
    elif isinstance(value, tuple | list):
        text = "(" + ", ".join(_short(v) for v in value) + (",)" if len(value) == 1 else ")")
        if isinstance(value, list):
            text = "[" + text[1:-1] + "]"
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _rows(pairs) -> str:
    return "".join(
        f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
        f"<td style='text-align:left'>{html.escape(text)}</td></tr>"
        for name, text in pairs
    )


def fold(summary: str, body: str) -> str:
    """HTML details folded under a one-line summary (open it with a click)."""
    return f"<details><summary>{html.escape(summary)}</summary>{body}</details>"


def _warn_renamed(cls: type, old: str, new: str) -> None:
    warnings.warn(
        f"{cls.__name__}.{old} is deprecated and will be removed in the next release; "
        f"use .{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


@dataclasses.dataclass(frozen=True, repr=False)
class Result:
    """Base class of every vareval result (see the module docstring)."""

    # The two fields holding the result's confidence interval, or None.
    _interval: ClassVar[tuple[str, str] | None] = None
    # Renamed attributes: old name -> (new spelling, getter of the same value).
    _deprecated: ClassVar[dict] = {}
    # Fields that become the rows of ``to_frame()`` (equal-length 1-D sequences).
    _rows: ClassVar[tuple[str, ...]] = ()
    # The fields the repr shows first; default: the protocol's (``PROTOCOL_FIELDS``).
    _headline: ClassVar[tuple[str, ...]] = ()

    def __getattr__(self, name: str):
        # Called only when ordinary lookup fails: the old spellings live here.
        renamed = type(self)._deprecated.get(name)
        if renamed is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        new, getter = renamed
        _warn_renamed(type(self), name, new)
        return getter(self)

    # --- plain values ------------------------------------------------------------

    def to_dict(self) -> dict:
        """Return the fields as plain Python values, ready for ``json.dumps``."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_frame(self):
        """Return one tidy :class:`pandas.DataFrame`.

        By default one row of the scalar fields; results with rows (per item,
        per level, per ``k`` ...) give one row per row instead.
        """
        import pandas as pd

        if self._rows:
            columns = {name: getattr(self, name) for name in self._rows}
            return pd.DataFrame({k: list(v) for k, v in columns.items() if v is not None})
        if hasattr(self, "records"):
            return pd.DataFrame.from_records(self.records())
        return pd.DataFrame([self._scalars()])

    def _scalars(self) -> dict:
        """The scalar fields as plain values."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if _is_scalar(value):
                out[f.name] = _plain(value)
        return out

    # --- display -----------------------------------------------------------------

    def _lines(self) -> list[tuple[str, str]]:
        """``(field, short value)`` pairs, cut to fit ``MAX_REPR_LINES``."""
        pairs = [(name, _short(getattr(self, name))) for name in self._field_order()]
        room = MAX_REPR_LINES - 3  # the head and closing lines make it MAX_REPR_LINES - 1
        if len(pairs) > room:
            more = len(pairs) - room + 1
            pairs = pairs[: room - 1] + [("...", f"{more} more fields: see to_dict()")]
        return pairs

    def _field_order(self) -> list[str]:
        """Field names, the headline (the answer) first: see ``_headline``."""
        names = [f.name for f in dataclasses.fields(self)]
        head = self._headline
        if not head:
            estimate, *rest = PROTOCOL_FIELDS
            head = (estimate, *(self._interval or ()), *rest)
        first = [name for name in head if name in names]
        return first + [name for name in names if name not in first]

    def __repr__(self) -> str:
        body = "\n".join(
            f"    {name}={text}," if name != "..." else f"    # {text}"
            for name, text in self._lines()
        )
        return f"{type(self).__name__}(\n{body}\n)"

    def _repr_html_(self) -> str:
        """The answer first, as in the repr (``HTML_HEAD_ROWS`` rows); the rest folded."""
        lines = self._lines()
        head, rest = lines[:HTML_HEAD_ROWS], lines[HTML_HEAD_ROWS:]
        title = html.escape(type(self).__name__)
        caption = f"<caption style='text-align:left'><b>{title}</b></caption>"
        page = f"<table>{caption}{_rows(head)}</table>"
        if rest:
            page += fold(f"{len(rest)} more fields", f"<table>{_rows(rest)}</table>")
        return page

    def plot(self, **kw):
        """Return a matplotlib ``Figure`` of this result (:mod:`vareval.plots.figures`)."""
        from vareval.plots.figures import figure_for

        return figure_for(self, **kw)

    # --- the interval ------------------------------------------------------------

    @classmethod
    def has_interval(cls) -> bool:
        """Whether this kind of result carries a confidence interval."""
        own_method = cls.confidence_interval is not Result.confidence_interval
        return cls._interval is not None or own_method

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """Return the confidence interval ``(low, high)`` of ``estimate``.

        Parameters
        ----------
        confidence_level : float, optional
            Default: the level the result was computed at (its ``confidence``).
            Another level is recomputed where that is cheap (t intervals, stored
            resamples); otherwise it is refused with the way to get it.
        """
        if self._interval is None:
            raise TypeError(f"{type(self).__name__} has no confidence interval.")
        stored = float(self.confidence)
        if confidence_level is None:
            level = stored
        else:
            level = as_confidence(confidence_level, "confidence_level")
        if math.isclose(level, stored, rel_tol=0, abs_tol=1e-12):
            return _interval(*(getattr(self, name) for name in self._interval))
        interval = self._interval_at(level)
        if interval is None:
            raise ArgumentError(
                f"this {type(self).__name__}'s interval was computed at confidence {stored:g} "
                f"and cannot be recomputed from the result; got confidence_level={level:g}. "
                "Rerun the analysis with that confidence."
            )
        return interval

    def _interval_at(self, level: float) -> ConfidenceInterval | None:
        """The interval at another ``level``, or None when the result cannot give it."""
        return None


def t_interval_at(estimate, se, df, level: float) -> ConfidenceInterval:
    """``estimate -/+ t_{df, (1 + level) / 2} se``: a t interval at any level."""
    half = special.stdtrit(df, (1 + level) / 2) * np.asarray(se)
    return _interval(estimate - half, estimate + half)


def renamed(new: str) -> tuple[str, object]:
    """A ``_deprecated`` entry for an attribute now spelled ``new``."""
    return new, lambda self: getattr(self, new)


def renamed_opposite(new: str) -> tuple[str, object]:
    """A ``_deprecated`` entry for a flag now spelled as its opposite, ``new``."""
    return f"{new} (the opposite value)", lambda self: not getattr(self, new)


def renamed_interval(low: str, high: str) -> tuple[str, object]:
    """A ``_deprecated`` entry for an interval tuple now stored as two fields."""
    return (
        f"{low}, .{high}",
        lambda self: _interval(getattr(self, low), getattr(self, high)),
    )


def interval_method() -> tuple[str, object]:
    """A ``_deprecated`` entry for an interval now given by ``confidence_interval()``."""
    return "confidence_interval()", lambda self: self.confidence_interval()


class _CallableInterval(ConfidenceInterval):
    """The stored interval that is also ``confidence_interval(...)``.

    Results whose interval used to be a tuple field named
    ``confidence_interval`` return this from the attribute: calling it is the
    method; unpacking or indexing it reads the old field with a warning.
    """

    def __call__(self, confidence_level: float | None = None) -> ConfidenceInterval:
        return Result.confidence_interval(self._owner, confidence_level)

    def _warn(self) -> None:
        cls = type(self._owner)
        warnings.warn(
            f"{cls.__name__}.confidence_interval as a tuple is deprecated and will be removed "
            "in the next release; call .confidence_interval() instead.",
            DeprecationWarning,
            stacklevel=3,
        )

    def __iter__(self):
        self._warn()
        return tuple.__iter__(self)

    def __getitem__(self, index):
        self._warn()
        return tuple.__getitem__(self, index)


class LegacyIntervalMethod:
    """``confidence_interval`` for results where it used to be a tuple field."""

    def __get__(self, obj, cls=None):
        if obj is None:
            return Result.confidence_interval
        low, high = Result.confidence_interval(obj)
        out = _CallableInterval(low, high)
        out._owner = obj
        return out
