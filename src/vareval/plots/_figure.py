"""The Figure every plot returns: a matplotlib Figure that shows itself in a notebook.

IPython draws a matplotlib figure only through a backend's formatter
(``%matplotlib inline``); a bare Figure made without pyplot would print as
``<Figure size 700x236 with 1 Axes>``. This one renders itself as a PNG
(``_repr_png_``) with its own Agg canvas, whatever the backend.
"""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator

NOTEBOOK_DPI = 110  # a 7-inch figure is 770 pixels wide in a notebook


class VarevalFigure(Figure):
    """A :class:`matplotlib.figure.Figure` with ``_repr_png_`` for notebooks."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        FigureCanvasAgg(self)  # its own canvas: renders without pyplot's backend

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=NOTEBOOK_DPI)
        return buffer.getvalue()


class PlainLogLocator(LogLocator):
    """Log ticks at 1, 2, 5 x 10^n where the axis has room for their labels, else fewer.

    The subdivisions are chosen at draw time from the axis' length in pixels
    per decade, so ``500`` and ``1000`` never run into each other (``5001000``)
    on a narrow figure.
    """

    def __init__(self, label_px: float = 34.0):
        super().__init__(base=10, subs=(1.0, 2.0, 5.0))
        self.label_px = label_px

    def tick_values(self, vmin, vmax):
        import numpy as np

        lo, hi = sorted((vmin, vmax))
        axis = self.axis
        if axis is None or lo <= 0:
            return super().tick_values(vmin, vmax)
        box = axis.axes.bbox
        horizontal = axis.axis_name == "x"
        length = box.width if horizontal else box.height
        room = self.label_px if horizontal else 0.45 * self.label_px
        per_decade = length / max(np.log10(hi / lo), 1e-9)
        if per_decade * 0.3 >= room:
            self._subs = np.array([1.0, 2.0, 5.0])
        elif per_decade * 0.48 >= room:
            self._subs = np.array([1.0, 3.0])
        else:
            self._subs = np.array([1.0])
        self.numticks = max(2, int(length / room))
        return super().tick_values(vmin, vmax)
