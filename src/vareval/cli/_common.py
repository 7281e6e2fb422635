"""Options and output helpers shared by the commands."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import click

from vareval.errors import ArgumentError


def results_file(f):
    """The RESULTS argument: a results table (csv, tsv, jsonl, parquet)."""
    return click.argument("results", type=click.Path(dir_okay=False))(f)


def metric_option(f):
    return click.option("--metric", required=True, help="Column with the scores.")(f)


def by_option(f):
    return click.option(
        "--by", required=True, help="Column(s) naming the method, comma-separated."
    )(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def split_columns(text: str) -> list[str]:
    """Split a comma-separated list of column names, refusing empty names."""
    names = [c.strip() for c in text.split(",")]
    if any(not c for c in names):
        raise ArgumentError(f"column list {text!r} has an empty name; separate names with commas.")
    return names


def parse_ints(text: str, option: str) -> list[int]:
    """Parse '1,3,5' into integers, naming the option when it fails."""
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise ArgumentError(f"{option} must be comma-separated integers; got {text!r}.") from None


def parse_floats(text: str, option: str) -> list[float]:
    """Parse '0.5,0.9' into floats, naming the option when it fails."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise ArgumentError(f"{option} must be comma-separated numbers; got {text!r}.") from None


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def emit(as_json: bool, payload: dict, text: str) -> None:
    """Print ``payload`` as JSON (NaN becomes null) or ``text`` for a person."""
    if as_json:
        click.echo(json.dumps(_json_safe(payload), indent=2))
    else:
        click.echo(text)


def check_output(path, option: str, *, plot: bool = False) -> None:
    """Refuse an output file before any work: its folder must exist; a plot's format known."""
    if path is None:
        return
    folder = Path(path).parent
    if not folder.is_dir():
        raise ArgumentError(f"{option} '{path}': folder '{folder}' does not exist.")
    if plot:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        suffix = Path(path).suffix.lower().lstrip(".")
        if suffix not in formats:
            raise ArgumentError(
                f"{option} '{path}': unknown image format {suffix!r}; accepted: "
                f"{', '.join(sorted(formats))}."
            )


@contextlib.contextmanager
def writing(path, option: str):
    """Turn a failure to write ``path`` (full disk, permissions) into one line."""
    try:
        yield
    except OSError as exc:
        raise ArgumentError(
            f"{option} '{path}' could not be written: {exc.strerror or exc}."
        ) from None
