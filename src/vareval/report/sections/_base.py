"""What a section is made of, the data every section reads, and number formatting.

A section is a title, one or two sentences on the estimand its numbers
target, one or two on how to read it, and blocks (paragraphs, tables,
figures). Every string here is plain text: the template escapes it. A figure
is a function of the width that draws a matplotlib Figure; the builder turns
it into inline SVG (the only trusted markup, checked by
:func:`vareval.plots._style.to_svg`) or writes it to a file.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any

import numpy as np

from vareval._format import number


@dataclasses.dataclass
class Paragraph:
    text: str
    kind: str = "paragraph"


@dataclasses.dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] | None = None  # right-align these columns
    row_classes: list[str] | None = None  # e.g. "selected", "good", "warn"
    kind: str = "table"


@dataclasses.dataclass
class Figure:
    """A figure of the page: ``draw(width)`` returns a matplotlib Figure.

    ``name`` is its file name when exported (``tuning-curves.pdf``) and the
    prefix of the ids inside its SVG; ``svg`` is filled in by the builder.
    """

    draw: Any  # callable: width in inches -> matplotlib.figure.Figure
    caption: str
    name: str = "figure"
    kind: str = "figure"
    svg: str = ""  # trusted markup, made by the builder from draw()


@dataclasses.dataclass
class Section:
    id: str
    title: str
    estimand: str
    how_to_read: str
    blocks: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class ChecklistItem:
    topic: str
    text: str
    status: str  # "ok" (reported), "warn" (needs the author's attention), "info"


@dataclasses.dataclass
class ReportData:
    """The inputs of a report, validated, and what sections leave for the checklist."""

    df: Any  # pandas.DataFrame, one row per run
    metric: str
    by: list[str]
    groups: dict[str, np.ndarray]
    runs: dict = dataclasses.field(default_factory=dict)  # method -> RunCount
    failures: Any = None  # the failed runs' rows (status "failed"), with their error text
    pair_on: list[str] | None = None
    higher_is_better: bool = True
    confidence: float = 0.95
    title: str = "vareval report"
    source: str = ""
    test_set: bool | None = None
    repeated: str | None = None  # "training" or "data-sampling": given, else declared
    test_fraction: float | None = None  # share of data in each re-drawn test split
    train_fraction: float | None = None  # share of data each model trained on
    repeated_given: str | None = None  # what the caller said (None: the design decides)
    search_effort: str | None = None
    baseline: str | None = None
    seed: int = 0
    n_resamples: int = 10_000  # paired bootstrap
    best_of_k_resamples: int = 20_000
    randomness: list[dict] | None = None  # from a run store: name, varied, note
    extras: dict = dataclasses.field(default_factory=dict)
    facts: dict = dataclasses.field(default_factory=dict)  # filled by sections

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


def optional(module: str, *names: str):
    """Return ``module``'s attributes ``names``, or None when any is missing.

    Sections built on analyses that may not be installed (or not merged yet)
    use this to disappear quietly instead of failing the whole report.
    """
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    found = tuple(getattr(mod, n, None) for n in names)
    if any(f is None for f in found):
        return None
    return found if len(found) > 1 else found[0]


_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def num(x, sig: int = 4, scale=None) -> str:
    """Typeset a number as :func:`vareval._format.number` formats it.

    ``sig`` significant figures at ``scale``; NaN as n/a, infinities as signs,
    powers of ten raised.
    """
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "\u221e" if x > 0 else "\u2212\u221e"
    if x == 0:
        return "0"
    text = number(x, scale, digits=sig)
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}\u00d710{str(int(exp)).translate(_SUPERSCRIPT)}"
    return text.replace("-", "\u2212")


def interval(ci, sig: int = 4) -> str:
    lo, hi = ci
    return f"[{num(lo, sig)}, {num(hi, sig)}]"


def pct(x, digits: int = 1) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "n/a"
    return f"{100 * x:.{digits}f}%"


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def conf(level: float) -> str:
    """95% rather than 95.0%."""
    return f"{100 * level:g}%"
