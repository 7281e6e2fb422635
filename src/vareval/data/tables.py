"""Result tables: results keyed by group, shown as a tidy DataFrame."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vareval._format import formatter, number, pvalue
from vareval.errors import ResultKeyError
from vareval.stats._result import HTML_HEAD_ROWS, MAX_REPR_LINES, Result, _short, fold, html


def _missing_key(key, keys: list) -> str:
    """One line for a key a result table lacks: a reversed pair is named, else the keys."""
    import re

    text = str(key)
    pair = re.fullmatch(r"(.*\()(.+) > (.+)(\))", text)
    if pair and f"{pair[1]}{pair[3]} > {pair[2]}{pair[4]}" in keys:
        flipped = f"{pair[1]}{pair[3]} > {pair[2]}{pair[4]}"
        return (f"no entry {text!r}: pairs are kept in label order; take 1 - "
                f"table[{flipped!r}] (ties count 1/2 on each side).")
    shown = ", ".join(map(repr, keys[:12])) + (", ..." if len(keys) > 12 else "")
    return f"no entry {text!r}; the entries are: {shown}."


def clip_lines(text: str, limit: int = MAX_REPR_LINES) -> str:
    """``text`` cut to ``limit`` lines, the last saying how many were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    cut = len(lines) - limit + 1
    return "\n".join([*lines[: limit - 1], f"... ({cut} more lines: see to_frame())"])


def _is_pvalue(column) -> bool:
    name = str(column)
    return name == "p" or name.startswith(("p_", "pvalue")) or name.endswith("pvalue")


def number_formatters(frame: pd.DataFrame) -> dict:
    """Formatters for a table's float columns (see :mod:`vareval._format`).

    p-value columns (``p``, ``p_*``, ``*pvalue*``) as :func:`vareval._format.pvalue`
    writes them; any other float column at its own scale, so that neither a
    p-value of 1e-275 nor a variance of 9e-5 prints as ``0.000000``.
    """
    out = {}
    for col in frame.columns:
        if frame[col].dtype.kind != "f":
            continue
        values = frame[col].to_numpy()
        if _is_pvalue(col):
            out[col] = pvalue
        elif _spread(values) > 100:
            out[col] = number  # unlike magnitudes (an LRT of 2.07 beside 1473): each its own
        else:
            out[col] = formatter(values)
    return out


def _spread(values) -> float:
    """The ratio of the largest to the smallest non-zero finite magnitude (1 if none)."""
    finite = np.abs(values[np.isfinite(values) & (values != 0)])
    return float(finite.max() / finite.min()) if finite.size else 1.0


def frame_html(frame: pd.DataFrame, rows: int = HTML_HEAD_ROWS) -> str:
    """A table's first ``rows`` rows as HTML, the whole table folded beneath if longer."""
    head = frame.head(rows).to_html(formatters=number_formatters(frame))
    if len(frame) <= rows:
        return head
    whole = frame.to_html(formatters=number_formatters(frame), max_rows=500)
    return head + fold(f"all {len(frame)} rows", whole)


def table_text(frame: pd.DataFrame, **kw) -> str:
    """``frame.to_string`` with its numbers formatted by :func:`number_formatters`."""
    return frame.to_string(formatters=number_formatters(frame), **kw)


def _design_line(result) -> list[str]:
    """The statement of the design a result assumed (a ``design`` field), or nothing."""
    design = getattr(result, "design", None)
    return [design.statement()] if hasattr(design, "statement") else []


@dataclasses.dataclass(frozen=True, repr=False)
class FrameResult(Result):
    """A data-layer result shown as its scalar fields and its tidy table."""

    def __repr__(self) -> str:
        head = ", ".join(f"{k}={_short(v)}" for k, v in self._scalars().items())
        table = table_text(
            self.to_frame(), index=False, max_rows=MAX_REPR_LINES - 6, max_cols=10
        )
        design = "".join(f"{line}\n" for line in _design_line(self))
        return clip_lines(f"{type(self).__name__}({head})\n{design}{table}")

    def _repr_html_(self) -> str:
        """The first table (the answer) in a few rows; the other parts folded beneath it."""
        title = f"<p><b>{html.escape(type(self).__name__)}</b></p>" + "".join(
            f"<p><i>{html.escape(line)}</i></p>" for line in _design_line(self)
        )
        parts = self.frames() if hasattr(self, "frames") else {"": self.to_frame()}
        parts = {name: f for name, f in parts.items() if len(f)}
        (first, answer), *others = parts.items()
        page = title + frame_html(answer)
        for name, frame in others:
            page += fold(f"{name} ({len(frame)} rows)", frame_html(frame, rows=60))
        return page


@dataclasses.dataclass(frozen=True, repr=False)
class ResultTable(Result):
    """Result objects keyed by method (or comparison) and their tidy table.

    Index it like a dict (``table["mlp"]``) for the full result object; use
    ``to_frame()`` for the DataFrame; in a notebook it renders as a table.
    ``design`` is the :class:`~vareval.data.design.Design` the analysis
    assumed (None where it has none) and ``notes`` what the reader must know.
    """

    title: str
    results: dict
    frame: pd.DataFrame
    design: object = None
    notes: tuple = ()

    def __getitem__(self, key):
        try:
            return self.results[key]
        except (KeyError, TypeError):
            raise ResultKeyError(_missing_key(key, list(self.results))) from None

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def to_frame(self) -> pd.DataFrame:
        """Return a copy of the tidy table."""
        return self.frame.copy()

    def to_dict(self) -> dict:
        """Return every result as plain Python values, keyed as the table."""
        return {str(k): v.to_dict() for k, v in self.results.items()}

    def _design_lines(self) -> tuple[list[str], list[str]]:
        """The design assumed (one line, or none) and the notes, shown around the table."""
        return _design_line(self), [f"NOTE {n}." for n in self.notes]

    def __repr__(self) -> str:
        with pd.option_context("display.width", 120, "display.max_columns", 30):
            table = table_text(self.frame)
        design, notes = self._design_lines()
        return clip_lines("\n".join([self.title, *design, table, *notes]))

    def _repr_html_(self) -> str:
        """The title, the design line, the table, then the notes."""
        design, notes = self._design_lines()
        return (
            f"<p><b>{html.escape(self.title)}</b></p>"
            + "".join(f"<p><i>{html.escape(t)}</i></p>" for t in design)
            + frame_html(self.frame)
            + "".join(f"<p>{html.escape(t)}</p>" for t in notes)
        )
