"""A tqdm progress bar for long work (shown on a terminal by default)."""

from __future__ import annotations


def progress_bar(total: int, desc: str, show=None):
    """A tqdm bar of ``total`` steps; ``show`` None: only on a terminal, False: never."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=None if show is None else not show, leave=False)
