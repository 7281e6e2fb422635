"""One plot style for every figure of the report.

matplotlib is imported inside the functions and figures are bare ``Figure``
objects rendered straight to SVG (no pyplot, no backend switch), so importing
vareval never pays for it and a notebook's plotting is left alone. The SVG is
inlined into the page: text stays text (``svg.fonttype = 'none'``), ids are
unique per figure, and nothing refers to a file or a network address. Large
scatters are rasterised inside the SVG (an embedded PNG) so a report with many
runs stays small.
"""

from __future__ import annotations

import contextlib
import io
import re

# Okabe & Ito (2008), "Color Universal Design": distinguishable with the common
# forms of colour-vision deficiency. Black is kept for the reference lines.
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow (used last: low contrast on white)
    "#000000",
)
SELECTED = "#D55E00"  # vermillion marks a selected (best) run
NEUTRAL = "#555555"

RC = {
    "axes.prop_cycle": None,  # filled in lazily (needs matplotlib's cycler)
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "lines.linewidth": 1.6,
}

# Width of every figure in inches; the page scales SVGs to its column width.
WIDTH = 7.5
MAX_POINTS_VECTOR = 4000  # above this many points a scatter is rasterised


# Colours for groups (methods, comparisons): the palette without vermillion
# (kept for selected runs), yellow (too pale on white) and black (intervals).
CYCLE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9")


def colour(i: int) -> str:
    """The i-th group colour (cycling through CYCLE)."""
    return CYCLE[i % len(CYCLE)]


def rc_params(name: str) -> dict:
    """The report's matplotlib settings (for figures drawn by other modules too)."""
    from cycler import cycler

    rc = dict(RC)
    rc["axes.prop_cycle"] = cycler(color=list(CYCLE))
    rc["svg.hashsalt"] = f"vareval-{name}"
    return rc


@contextlib.contextmanager
def figure(name: str, width: float = WIDTH, height: float = 3.2, **subplots):
    """Yield ``(fig, ax)`` under the report style (render it inside the block).

    The figure is a bare :class:`matplotlib.figure.Figure`, not a pyplot one:
    no backend is switched and no global figure list is touched, so building
    a report from a notebook leaves the notebook's plotting alone. ``name``
    makes the ids inside the SVG unique to this figure.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(rc_params(name)):
        fig = Figure(figsize=(width, height), layout="constrained")
        ax = fig.subplots(**subplots)
        yield fig, ax


_HEADER = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>", re.DOTALL)
# Inside a tag (text content is escaped by matplotlib, so it holds no "<").
_FORBIDDEN = re.compile(
    r"<\s*(?:script|foreignObject|iframe|object|embed)"
    r"|<[^>]*\son[a-z]+\s*="
    r"|<[^>]*href\s*=\s*\"(?!#|data:image/png;base64,)",
    re.IGNORECASE,
)


def to_svg(fig, name: str) -> str:
    """Render ``fig`` as an inline ``<svg>`` element (a string of trusted markup).

    The XML header, comments and metadata are removed; ids are prefixed with
    ``name`` so several figures can share a page. Raises ``RuntimeError`` if
    the markup holds anything active (a script, an event handler or a link to
    anything but the figure itself or an embedded PNG), so that user text can
    never become markup.
    """
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = _HEADER.sub("", svg, count=1)
    svg = _COMMENT.sub("", svg)
    svg = _METADATA.sub("", svg)
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", name)
    svg = re.sub(r'id="([^"]+)"', rf'id="{safe}-\1"', svg)
    svg = re.sub(r'(href=")#([^"]+)"', rf'\1#{safe}-\2"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{safe}-\1)", svg)
    # Let the page size the figure: keep the aspect ratio through the viewBox.
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", svg, count=1)
    svg = svg.replace(
        "<svg", f'<svg role="img" class="figure-svg" data-figure="{safe}"', 1
    )
    if _FORBIDDEN.search(svg):
        raise RuntimeError(
            f"figure {name!r}: SVG output holds active content; refusing it"
        )
    return svg.strip()


def plain_log_axis(axis) -> None:
    """Label a log axis with plain numbers (0.001, 10, 100), not mathtext powers.

    Mathtext is slow to lay out and renders as a string of glyphs in SVG.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def short_label(text: str, width: int = 28) -> str:
    """Shorten a long method name for an axis label (the tables keep it whole)."""
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "\u2026"
