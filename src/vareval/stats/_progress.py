"""A tqdm progress bar for long work, shown on a terminal (stderr) by default.

``show=None`` (what the commands pass) shows the bar only when stderr is a
terminal: never in a pipe, a file, or a notebook's captured stream. The
environment variable ``VAREVAL_PROGRESS`` overrides that: ``1`` shows the
bar wherever stderr goes, ``0`` never shows it. ``show=True`` (asked for in
Python) shows it always, as a widget in a notebook; ``False`` never.
"""

from __future__ import annotations

import os
import sys

_ON, _OFF = ("1", "always", "on", "yes", "true"), ("0", "never", "off", "no", "false")


def drawn(show=None) -> bool:
    """Whether a bar with this ``show`` setting is drawn (see the module's note)."""
    if show is not None:
        return bool(show)
    forced = os.environ.get("VAREVAL_PROGRESS", "").strip().lower()
    if forced in _ON or forced in _OFF:
        return forced in _ON
    stream = sys.stderr
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()


def progress_bar(total: int | None, desc: str, show=None):
    """A tqdm bar of ``total`` steps on stderr (None: a counter); drawn when :func:`drawn`.

    A bar that is not drawn is :class:`_Hidden`, without tqdm's import and
    lock (about 10 ms of a command's start-up).
    """
    if not drawn(show):
        return _Hidden()
    if show is True:
        from tqdm.auto import tqdm  # asked for: a widget in a notebook
    else:
        from tqdm import tqdm

    return tqdm(total=total, desc=desc, leave=False)


class _Hidden:
    """A bar that is not drawn: tqdm's methods the work calls, doing nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass

    def reset(self, total=None):
        pass

    def set_description(self, desc=None, refresh=True):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass
