"""One plot style for every figure of the report.

Every plot function returns a bare :class:`matplotlib.figure.Figure` made
under this style (no pyplot, no backend switch, no global rcParams changed:
the style is a ``matplotlib.rc_context`` around the figure's creation and
around its rendering), so importing vareval never pays for matplotlib and a
notebook's plotting is left alone. Each takes ``width`` in inches: 3.3 (one
column of a paper) or 7 (a full page, and the HTML report); fonts shrink on
the narrow width. :func:`to_svg` turns a figure into the page's inline SVG
(text stays text, ids unique per figure, nothing refers to a file or a
network address); :func:`save` writes it as a PDF, SVG or PNG file for a
paper. Large scatters are rasterised (an embedded PNG) so a report with many
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
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 10,
    "figure.labelsize": 9,
    "legend.frameon": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "lines.linewidth": 1.6,
    # Labels are the user's text: "$x$" stays "$x$", never typeset as mathtext.
    "text.parse_math": False,
}

# Smaller type for a figure one column of a paper wide (below NARROW inches).
NARROW = 5.0
NARROW_RC = {
    "axes.titlesize": 8,
    "axes.labelsize": 7.5,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 8,
    "figure.labelsize": 7.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
}

# Width of every figure in inches (a full page); the page scales SVGs to its column.
WIDTH = 7.0
PAPER_WIDTHS = (3.3, 7.0)  # one column and a full page of a two-column paper
FORMATS = ("svg", "pdf", "png")
MAX_POINTS_VECTOR = 4000  # above this many points a scatter is rasterised


# Colours for groups (methods, comparisons): the palette without vermillion
# (kept for selected runs), yellow (too pale on white) and black (intervals).
CYCLE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9")


# The second channel once the colours run out: group i has colour i mod 5 and
# marker (hatch, line style) i // 5, so no two groups of one figure look alike.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "////", "....", "xxxx", "\\\\", "++++", "oooo", "----")
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)), (0, (3, 3)))


def colour(i: int) -> str:
    """The i-th group colour (cycling through CYCLE; see :func:`marker`)."""
    return CYCLE[i % len(CYCLE)]


def _second(i: int, options: tuple):
    return options[(i // len(CYCLE)) % len(options)]


def marker(i: int) -> str:
    """The i-th group's marker: circles for the first five groups, then squares, ..."""
    return _second(i, MARKERS)


def hatch(i: int) -> str:
    """The i-th group's bar hatch: none for the first five groups, then stripes, ..."""
    return _second(i, HATCHES)


def linestyle(i: int):
    """The i-th group's line style: solid for the first five groups, then dashed, ..."""
    return _second(i, LINESTYLES)


def series(artist, i: int):
    """Mark ``artist`` as drawing group ``i`` (the layout test checks groups look apart)."""
    artist._vareval_series = i
    return artist


def rc_params(name: str, width: float = WIDTH) -> dict:
    """The report's matplotlib settings (for figures drawn by other modules too)."""
    from cycler import cycler

    rc = dict(RC)
    rc["axes.prop_cycle"] = cycler(color=list(CYCLE))
    rc["svg.hashsalt"] = f"vareval-{name}"
    if width < NARROW:
        rc.update(NARROW_RC)
    return rc


def narrow(width: float) -> bool:
    """Whether a figure this wide (inches) is one column of a paper."""
    return width < NARROW


def check_width(width) -> float:
    """``width`` as a positive number of inches, or an error naming it."""
    from vareval.errors import ArgumentError

    try:
        value = float(width)
    except (TypeError, ValueError):
        value = float("nan")
    if not 1.5 <= value <= 20:
        raise ArgumentError(
            f"`width` must be a figure width in inches between 1.5 and 20 "
            f"(3.3 for one column, 7 for a page); got {width!r}."
        )
    return value


@contextlib.contextmanager
def figure(name: str, width: float = WIDTH, height: float = 3.2, **subplots):
    """Yield ``(fig, ax)`` made under the report style; the figure outlives the block.

    The figure is a bare :class:`matplotlib.figure.Figure` (a subclass that
    shows itself in a notebook, see :mod:`vareval.plots._figure`), not a pyplot one:
    no backend is switched and no global figure list is touched, so building
    a report from a notebook leaves the notebook's plotting alone. ``name``
    becomes the figure's label: the file name when exported, and the prefix
    that makes the ids inside its SVG unique. With ``nrows=0`` no axes are
    made (``ax`` is None).
    """
    import matplotlib

    from vareval.plots._figure import VarevalFigure

    width = check_width(width)
    with matplotlib.rc_context(rc_params(name, width)):
        # its own Agg canvas, and a PNG of itself for a notebook (any backend)
        fig = VarevalFigure(figsize=(width, height), layout="constrained")
        fig.set_label(name)
        ax = None if subplots.get("nrows") == 0 else fig.subplots(**subplots)
        yield fig, ax


@contextlib.contextmanager
def small_multiples(name: str, m: int, width: float = WIDTH, panel_height: float = 2.5):
    """Yield ``(fig, axes)``: one panel per group on shared axes, in a grid for ``width``.

    Up to three panels a row on a page (four of four), two on a column of a paper; unused
    cells are hidden and the panel above each keeps its x tick labels.
    """
    cols = min(m, 2 if narrow(width) else 4 if m == 4 else 3)
    rows = -(-m // cols)
    with figure(
        name, width=width, height=rows * panel_height + 0.6, nrows=rows, ncols=cols,
        sharex=True, sharey=True, squeeze=False,
    ) as (fig, grid):  # fmt: skip
        for i, ax in enumerate(grid.flat):
            if i >= m:
                ax.set_visible(False)
                grid.flat[i - cols].xaxis.set_tick_params(labelbottom=True)
        yield fig, list(grid.flat[:m])


def key(fig, handles, width: float, where: str = "upper") -> None:
    """The figure's legend outside the axes, in as many columns as fit the width.

    The figure grows by the legend's extra rows, so a long key never squeezes
    the axes. A handle may be a tuple of artists (one marker per group's
    colour: the key's "one run" looks like the dots it explains); its label
    is the first's.
    """
    import matplotlib
    from matplotlib.legend_handler import HandlerTuple

    labels = [(h[0] if type(h) is tuple else h).get_label() for h in handles]
    size = matplotlib.rcParams["legend.fontsize"]
    size = size if isinstance(size, int | float) else 8
    chars = max((len(line) for text in labels for line in text.split("\n")), default=1)
    entry = (0.6 * chars + 3.5) * size / 72  # inches: handle, gap and text
    cols = max(1, min(len(handles), int((width - 0.3) // entry)))
    rows = -(-len(handles) // cols)
    lines = max((text.count("\n") + 1 for text in labels), default=1)
    row = lines * 1.3 * size / 72 + 0.03
    fig.set_figheight(fig.get_figheight() + max(0.0, rows * row - (1.3 * size / 72 + 0.03)))
    fig.legend(
        handles, labels, loc=f"outside {where} center", ncol=cols,
        handletextpad=0.4, columnspacing=1.0, handlelength=1.5,
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.1)},
    )  # fmt: skip


def group_marker(m: int, label: str, **kw) -> tuple:
    """A key entry of the first groups' colours and markers (up to three): "one run"."""
    from matplotlib.lines import Line2D

    return tuple(
        Line2D([], [], linestyle="", marker=marker(i), color=colour(i), label=label, **kw)
        for i in range(min(m, 3))
    )


def few_ticks(axis, n: int = 5) -> None:
    """At most ``n`` ticks on ``axis``: long numbers (-0.0075) never run into each other."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=n, steps=[1, 2, 2.5, 5, 10]))


def save(fig, path, format: str | None = None) -> None:
    """Write ``fig`` as a file for a paper: PDF (TrueType fonts), SVG or PNG (300 dpi).

    The format comes from ``format`` or the path's suffix. The style's
    rendering settings apply only while the file is written.
    """
    import matplotlib

    from vareval.errors import ArgumentError

    fmt = (format or str(path).rsplit(".", 1)[-1]).lower()
    if fmt not in FORMATS:
        raise ArgumentError(f"`format` must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    rc = {"pdf.fonttype": 42, "svg.fonttype": "path", "svg.hashsalt": "vareval"}
    with matplotlib.rc_context(rc):
        fig.savefig(path, format=fmt, dpi=300, metadata=_METADATA_NONE.get(fmt))


# No creation date or tool version inside the files: the same figure, the same bytes.
_METADATA_NONE = {
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
    "png": {"Software": None},
}


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


def to_svg(fig, name: str | None = None) -> str:
    """Render ``fig`` as an inline ``<svg>`` element (a string of trusted markup).

    The XML header, comments and metadata are removed; ids are prefixed with
    ``name`` so several figures can share a page. Raises ``RuntimeError`` if
    the markup holds anything active (a script, an event handler or a link to
    anything but the figure itself or an embedded PNG), so that user text can
    never become markup. ``name`` defaults to the figure's label.
    """
    import matplotlib

    name = name or fig.get_label() or "figure"
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"vareval-{name}"}):
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
    Ticks at 1, 2, 5 x 10^n thin out to 1, 3 or 1 x 10^n where their labels
    would collide (:class:`vareval.plots._figure.PlainLogLocator`).
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from vareval.plots._figure import PlainLogLocator

    axis.set_major_locator(PlainLogLocator())
    axis.set_minor_locator(LogLocator(base=10, subs="auto"))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


_BREAKS = re.compile(r"(?<=[ _/.,:;|+\-\u2212])")  # break after a separator


def short_label(text, width: int = 28, lines: int = 2) -> str:
    """A user's label wrapped to lines of at most ``width`` characters, kept whole.

    Lines break after a space, ``_``, ``-``, ``/``, ``.`` (``protonet_adam −``
    / ``tadam_sgd``), or inside a word when it has none. Only a label longer
    than ``lines`` lines loses its middle (``…``): the start and the end, which
    tell labels apart, stay; the tables keep every label whole. A comparison
    ``"A − B"`` keeps both sides, each up to ``lines`` lines.
    """
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    for sep in (" \u2212 ", " - ", " > "):
        if sep in text and lines >= 2:
            a, b = text.split(sep, 1)
            return short_label(a, width, lines) + sep.rstrip() + "\n" + short_label(b, width, lines)
    if len(text) <= width:
        return text
    if lines == 1:  # the start and the end, which tell labels apart
        return text[: width - width // 2 - 1] + "\u2026" + text[len(text) - width // 2 :]
    out = _wrap(text, width)
    if len(out) > lines:  # the start, then the end after an ellipsis
        out = out[: lines - 1] + ["\u2026" + text[len(text) - width + 1 :]]
    return "\n".join(out)


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, broken after separators where possible."""
    out, line = [], ""
    for piece in _BREAKS.split(text):
        while len(piece) > width:  # a word longer than a line: cut it
            room = width - len(line)
            out.append(line + piece[:room])
            line, piece = "", piece[room:]
        if len(line) + len(piece) > width:
            out.append(line.rstrip())
            line = ""
        line += piece
    if line.strip():
        out.append(line.rstrip())
    return [x for x in out if x] or [""]
