"""Result tables: results keyed by group, shown as a tidy DataFrame."""

from __future__ import annotations

import dataclasses

import pandas as pd

from vareval._format import formatter


@dataclasses.dataclass(frozen=True, repr=False)
class ResultTable:
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
            return f"{self.title}\n{self.frame.to_string(formatters=self._formatters())}"

    def _repr_html_(self) -> str:
        return f"<p><b>{self.title}</b></p>" + self.frame.to_html(formatters=self._formatters())
