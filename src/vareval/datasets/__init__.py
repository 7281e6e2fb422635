"""Bundled example data, each file with a provenance note beside it (``<name>.md``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def path(name: str) -> Path:
    """Return the path of a bundled data file, e.g. ``path("digits_runs.csv")``."""
    return Path(str(resources.files("vareval.datasets").joinpath(name)))


def load(name: str):
    """Read a bundled data file into a DataFrame (see :func:`vareval.read_table`)."""
    from vareval.data.io import read_table

    return read_table(path(name))
