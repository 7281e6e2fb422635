"""Result tables: results keyed by group, shown as a tidy DataFrame."""

from __future__ import annotations

import dataclasses
import html

import pandas as pd

from vareval._format import formatter
from vareval.stats._result import MAX_REPR_LINES, Result, _short


def clip_lines(text: str, limit: int = MAX_REPR_LINES) -> str:
    """``text`` cut to ``limit`` lines, the last saying how many were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    cut = len(lines) - limit + 1
    return "\n".join([*lines[: limit - 1], f"... ({cut} more lines: see to_frame())"])


@dataclasses.dataclass(frozen=True, repr=False)
class FrameResult(Result):
    """A data-layer result shown as its scalar fields and its tidy table."""

    def __repr__(self) -> str:
        head = ", ".join(f"{k}={_short(v)}" for k, v in self._scalars().items())
        table = self.to_frame().to_string(index=False, max_rows=MAX_REPR_LINES - 6, max_cols=10)
        return clip_lines(f"{type(self).__name__}({head})\n{table}")

    def _repr_html_(self) -> str:
        title = html.escape(type(self).__name__)
        return f"<p><b>{title}</b></p>" + self.to_frame().to_html(max_rows=40)


@dataclasses.dataclass(frozen=True, repr=False)
class ResultTable(Result):
    """Result objects keyed by method (or comparison) and their tidy table.

    Index it like a dict (``table["mlp"]``) for the full result object; use
    ``to_frame()`` for the DataFrame; in a notebook it renders as a table.
    """

    title: str
    results: dict
    frame: pd.DataFrame

    def __getitem__(self, key):
        return self.results[key]

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

    def _formatters(self) -> dict:
        """Each float column at its own scale (see :mod:`vareval._format`)."""
        return {
            col: formatter(self.frame[col].to_numpy())
            for col in self.frame.columns
            if self.frame[col].dtype.kind == "f"
        }

    def __repr__(self) -> str:
        with pd.option_context("display.width", 120, "display.max_columns", 30):
            text = f"{self.title}\n{self.frame.to_string(formatters=self._formatters())}"
        return clip_lines(text)

    def _repr_html_(self) -> str:
        title = f"<p><b>{html.escape(self.title)}</b></p>"
        return title + self.frame.to_html(formatters=self._formatters(), max_rows=60)
