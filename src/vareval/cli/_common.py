"""Options and output helpers shared by the commands."""

from __future__ import annotations

import contextlib
import functools
import json
import math
from pathlib import Path

import click

from vareval.errors import ArgumentError

# Options that name columns: --dropna looks for empty values in these.
_ROLE_OPTIONS = ("metric", "by", "pair_on", "task", "gold", "item", "system_column",
                 "prediction", "fixed", "random")


def table_argument(name: str):
    """A table argument (a file, a run store, or - for standard input) with --where and --dropna.

    The command receives the table, read and filtered, as a DataFrame.
    """
    return functools.partial(_table_argument, name=name)


def _table_argument(f, name):
    @functools.wraps(f)
    def command(*args, where, dropna, **kwargs):
        kwargs[name] = load_table(kwargs[name], where, dropna, kwargs)
        return f(*args, **kwargs)

    command = click.option(
        "--dropna", is_flag=True,
        help="Drop rows with an empty or non-finite value in the columns used (counted and "
        "named on stderr); without it such rows are an error.",
    )(command)
    command = click.option(
        "--where", default=None, metavar="EXPR",
        help="Keep the rows where EXPR holds (pandas query syntax; labels are text: "
        "\"model == 'svc'\").",
    )(command)
    return click.argument(name, type=click.Path(dir_okay=False, allow_dash=True))(command)


results_file = table_argument("results")


def load_table(path, where, dropna, options):
    """Read a table, its metric columns as numbers, then apply --where and --dropna."""
    from vareval.data import filters
    from vareval.data.io import read_table
    from vareval.data.validate import numbers_where_possible

    df = read_table(path)
    if options.get("metric"):
        df = numbers_where_possible(df, split_columns(options["metric"]))
    if where:
        df = filters.where(df, where)
    if dropna:
        columns = [c for o in _ROLE_OPTIONS if options.get(o) for c in split_columns(options[o])]
        df = filters.dropna(df, columns)
    return df


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
