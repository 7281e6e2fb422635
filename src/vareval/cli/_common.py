"""Options and output helpers shared by the commands."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from pathlib import Path

import click

from vareval.errors import ArgumentError

# Options that name columns: --dropna looks for empty values in these.
_ROLE_OPTIONS = ("metric", "by", "pair_on", "task", "gold", "item", "system_column",
                 "prediction", "fixed", "random")


def table_argument(name: str, predictions: bool = False):
    """A table argument (a file, a run store, or - for standard input) with --where and --dropna.

    The command receives the table, read and filtered, as a DataFrame. In a
    ``predictions`` table (one column per system, or long) ``--metric`` names
    a metric, not a column, and the system columns are what --dropna checks.
    """
    return functools.partial(_table_argument, name=name, predictions=predictions)


def _table_argument(f, name, predictions):
    @functools.wraps(f)
    def command(*args, where, dropna, **kwargs):
        kwargs[name] = load_table(kwargs[name], where, dropna, kwargs, predictions)
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


def load_table(path, where, dropna, options, predictions=False):
    """Read a table, its metric columns as numbers, then apply --where and --dropna."""
    from vareval.data import filters
    from vareval.data.io import read_table
    from vareval.data.validate import numbers_where_possible

    df = read_table(path, columns=_read_columns(where, options, predictions))
    if options.get("metric") and not predictions:
        df = numbers_where_possible(df, split_columns(options["metric"]))
    if where:
        df = filters.where(df, where)
    if dropna:
        df = filters.dropna(df, _used_columns(df, options, predictions))
    return df


# The options that name a results table's columns, by command (allocate's pilot
# also needs the design's columns and, where the file has it, a store's duration).
# A command not here (report) reads every column.
_COLUMN_OPTIONS = {
    **dict.fromkeys(("summarize", "best-of-k", "tuning-curve", "parametric-curve"),
                    ("metric", "by")),
    **dict.fromkeys(("paired", "plan", "sequential"), ("metric", "by", "pair_on")),
    **dict.fromkeys(("aggregate", "rank", "aso"), ("metric", "by", "task", "pair_on")),
    "select": ("validation", "test", "by", "unit", "config"),
    "selection-curve": ("validation", "test", "by"),
    "variance": ("metric", "fixed", "random_", "nested", "by_group", "slope", "pairs_by"),
    "allocate": ("metric",),
}
# Options whose items join two names: --nested inner:outer, --by-group [factor=]column.
_JOINED = {"nested": ":", "by_group": "="}
_OPTIONAL_COLUMNS = {"allocate": ("duration",)}  # read when the file has them


def _read_columns(where, options, predictions):
    """The columns a command reads from its table: a list, a chooser, or None for every column.

    A predictions table whose systems are named (wide: --system; long:
    --system-column) is used only through its role options, so a wide file
    costs what those columns cost. A results table is read through the
    columns its options name, the design's columns (a store table's design
    columns, status, a selection's columns, and those the carried declaration
    names: the unit of a selection, the settings configurations are nested in)
    and every column --where names.
    """
    if not predictions:
        name = click.get_current_context(silent=True)
        command = name.command.name if name else None
        named = _COLUMN_OPTIONS.get(command)
        if named is None:
            return None
        flags = [c for o in named if options.get(o) for c in _option_columns(o, options[o])]
        if command == "allocate":  # without them every column: the error lists what is there
            from vareval.data.allocation import DESIGN_COLUMNS

            flags += DESIGN_COLUMNS
        default = ["method"] if "by" in named and not options.get("by") else []  # sequential's
        return functools.partial(_results_columns, flags=flags, where=where,
                                 optional=[*default, *_OPTIONAL_COLUMNS.get(command, ())])
    if where:
        return None
    if not options.get("system_column") and not options.get("systems"):
        return None  # a wide table without --system: every other column is a system
    return list(dict.fromkeys(_used_columns(None, options, predictions)))


def _option_columns(option, value) -> list[str]:
    """The columns an option's value names (a repeated option gives a tuple of values)."""
    items = [c for v in ([value] if isinstance(value, str) else value) if v.strip()
             for c in split_columns(v)]
    joined = _JOINED.get(option)
    return [part.strip() for c in items for part in (c.split(joined) if joined else [c])]


def _results_columns(names, spec, *, flags, where, optional=()):
    """Of the file's ``names``: the flags' columns, the design's and those --where names."""
    from vareval.data.carried import SELECTION_COLUMNS
    from vareval.data.store_table import DESIGN_COLUMNS

    spec = spec or {}
    selected = spec.get("selected") or {}
    declared = [*_names(selected.get("unit")), *_names(selected.get("by")),
                *(spec.get("level_spaces") or {})]
    if not set(flags) <= set(names):
        return None  # every column: the error that follows lists what is there
    # a name that occurs in --where's text may be used by it (a superset: never one too few)
    used = {*flags, *optional, *DESIGN_COLUMNS, "status", *SELECTION_COLUMNS, *declared,
            *(n for n in names if where and n in where)}
    return [n for n in names if n in used]


def _names(value) -> list:
    """A declaration's column name or names as a list."""
    return [value] if isinstance(value, str) else list(value or [])


def _used_columns(df, options, predictions) -> list:
    """The columns --dropna checks: those the role options name."""
    roles = [o for o in _ROLE_OPTIONS if not (predictions and o == "metric")]
    columns = [c for o in roles if options.get(o) for c in split_columns(options[o])]
    if predictions:
        systems = [c for v in options.get("systems") or () for c in split_columns(v)]
        if not systems and not options.get("system_column"):
            return list(df.columns)  # a wide table without --system: every column is used
        columns += [] if options.get("system_column") else systems
    return columns


# --- one spelling per idea ------------------------------------------------------
#
# Every command takes the options below, so an idea has one flag, one meaning and
# one default everywhere (tests/cli/test_help_spellings.py checks the --help of
# every command). An old spelling keeps working, hidden from --help, with a
# one-line notice on stderr.

# Old spellings still accepted, by the flag that replaced them.
DEPRECATED = {
    "--lower-is-better": ("--minimize",),
    "--resamples": ("--n-boot", "--n-sim", "--n-resamples", "--n-samples"),
    "--system": ("--systems",),
    "--ci-method": ("--ci",),
    "--band": ("--method",),
    "--seed": ("--random-state",),
}


def shared_option(flag: str, dest: str, **attrs):
    """``click.option(flag, dest, **attrs)`` plus its hidden deprecated spellings."""
    aliases = DEPRECATED.get(flag, ())
    if attrs.get("required"):
        # click 8.2+ counts an explicit default of None as a value, which skips the check
        attrs.pop("default", None)

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **kwargs):
            ctx = click.get_current_context()
            for alias in aliases:
                value = kwargs.pop(_alias_dest(alias))
                if value is None or value is False or value == ():
                    continue
                if ctx.get_parameter_source(dest) is click.core.ParameterSource.COMMANDLINE:
                    raise ArgumentError(f"give {flag} or its old spelling {alias}, not both.")
                click.echo(
                    f"warning: {alias} is deprecated and will be removed; use {flag}.",
                    err=True,
                )
                kwargs[dest] = value
            return f(*args, **kwargs)

        for alias in aliases:
            alias_attrs = {k: v for k, v in attrs.items() if k in ("type", "is_flag", "multiple")}
            default = False if attrs.get("is_flag") else None
            command = click.option(
                alias, _alias_dest(alias), hidden=True, default=default, **alias_attrs
            )(command)
        return click.option(flag, dest, **attrs)(command)

    return decorate


def _alias_dest(alias: str) -> str:
    return "deprecated_" + alias.lstrip("-").replace("-", "_")


def metric_option(f):
    return shared_option("--metric", "metric", required=True, help="Column with the scores.")(f)


def metrics_option(f):
    """--metric taking several comma-separated columns: one block of output per metric."""
    return shared_option(
        "--metric", "metric", required=True,
        help="Column(s) with the scores, comma-separated: one block of output per metric "
        "(any correction for multiple comparisons applies within each metric).",
    )(f)  # fmt: skip


def by_option(f=None, *, required=True, help="Column(s) naming the method, comma-separated."):
    def decorate(g):
        return shared_option("--by", "by", required=required, default=None, help=help)(g)

    return decorate(f) if f is not None else decorate


def pair_on_option(required=False, help="Column(s) matching runs across methods, e.g. seed."):
    return shared_option("--pair-on", "pair_on", required=required, default=None, help=help)


def baseline_option(help="Compare every other method with this one."):
    return shared_option("--baseline", "baseline", default=None, help=help)


def lower_is_better_option(f=None, *, help="Smaller scores are better (a loss, an error)."):
    def decorate(g):
        return shared_option("--lower-is-better", "lower_is_better", is_flag=True, help=help)(g)

    return decorate(f) if f is not None else decorate


def resamples_option(default: int, help: str):
    """--resamples: the number of bootstrap, permutation, simulation or posterior draws.

    Every command refuses, before any work, a number that cannot fit (see
    :func:`vareval.stats._checks.check_size`).
    """
    return shared_option(
        "--resamples", "resamples", type=int, default=default, show_default=True, help=help,
        callback=check_resamples,
    )


def check_resamples(ctx, param, value):
    """Click callback: refuse a --resamples that exceeds the cap on draws."""
    from vareval.stats._checks import check_size

    return check_size(value, "--resamples")


def seed_option(help="Seed of the random draws (printed with the output)."):
    return shared_option("--seed", "seed", type=int, default=0, show_default=True, help=help)


def confidence_option(f=None, *, help="Level of the confidence intervals, e.g. 0.95."):
    def decorate(g):
        return shared_option(
            "--confidence", "confidence", type=float, default=0.95, show_default=True, help=help
        )(g)

    return decorate(f) if f is not None else decorate


def alpha_option(help="Significance level of the tests."):
    return shared_option(
        "--alpha", "alpha", type=float, default=0.05, show_default=True, help=help
    )


def ci_method_option(choices, default: str):
    return shared_option(
        "--ci-method", "ci_method", type=click.Choice(choices), default=default,
        show_default=True, help="How the intervals are computed.",
    )  # fmt: skip


def system_option(f=None, *, help="System column (wide) or system name (long); repeat or "
                  "comma-separate. Default: every other column."):
    def decorate(g):
        return shared_option("--system", "systems", multiple=True, help=help)(g)

    return decorate(f) if f is not None else decorate


_PAIRED_TESTS = {"t": "training", "corrected": "data-sampling"}


def paired_test_options(f):
    """--test t|corrected, --test-fraction and --train-fraction, shared by paired, plan, report.

    The command receives ``repeated`` as the Python layer names it
    (``"training"``, ``"data-sampling"`` or None).
    The old spelling ``--repeated training|data-sampling`` still works, hidden.
    """

    @functools.wraps(f)
    def command(*args, test, **kwargs):
        old = kwargs.pop("repeated")
        if old is not None:
            new = {v: k for k, v in _PAIRED_TESTS.items()}[old]
            if test is not None:
                raise ArgumentError("give --test or its old spelling --repeated, not both.")
            click.echo(
                f"warning: --repeated {old} is deprecated and will be removed; use --test {new}.",
                err=True,
            )
            test = new
        return f(*args, repeated=_PAIRED_TESTS.get(test), **kwargs)

    command = click.option(
        "--train-fraction", type=float, default=None,
        help="Share of the data each model trained on (for --test corrected, which uses "
        "test/train; default: the run store's train_size, else 1 - test - val_size, else "
        "1 - test share).",
    )(command)  # fmt: skip
    command = click.option(
        "--test-fraction", type=float, default=None,
        help="Share of the data in each re-drawn test split (for --test corrected; "
        "default: the run store's test_fraction or test_size parameter).",
    )(command)  # fmt: skip
    command = click.option(
        "--repeated", type=click.Choice(list(_PAIRED_TESTS.values())), default=None, hidden=True
    )(command)
    return click.option(
        "--test", type=click.Choice(list(_PAIRED_TESTS)), default=None,
        help="t: the paired t test over replications; corrected: the corrected resampled t "
        "test (Nadeau and Bengio 2003) for replications that each re-drew the train/test "
        "split (needs --test-fraction). Default: from a run store's declaration, else t.",
    )(command)  # fmt: skip


# Python parameter names that reach the command line in error messages, and the
# flag a person typed instead.
FLAG_OF_PARAMETER = {
    "a": "--compare",
    "b": "--compare",
    "baseline": "--baseline",
    "systems": "--system",
    "metric": "--metric",
    "by": "--by",
    "n_resamples": "--resamples",
    "n_boot": "--resamples",
    "n_sim": "--resamples",
    "n_samples": "--resamples",
    "higher_is_better": "--lower-is-better",
    "minimize": "--lower-is-better",
    "confidence_level": "--confidence",
    "confidence": "--confidence",
    "rng": "--seed",
    "pair_on": "--pair-on",
    "test_fraction": "--test-fraction",
    "train_fraction": "--train-fraction",
    "all_pairs": "--all-pairs",
    "ci": "--ci-method",
    "target_se": "--target-se",
    "target_halfwidth": "--target-halfwidth",
    "system_column": "--system-column",
    "pairs_by": "--pairs-by",
    "by_group": "--by-group",
    "resample_tasks": "--resample-tasks",
    "reference_low": "--reference-low",
    "reference_high": "--reference-high",
    "pos_label": "--positive",
    "item": "--item",
    "gold": "--gold",
    "k": "--ks",
}


def name_flags(message: str, command: click.Command | None = None) -> str:
    """An error message with each Python parameter name replaced by its flag.

    The names are those of :data:`FLAG_OF_PARAMETER` and, for ``command``,
    each of its options under its Python name (``alpha`` for ``--alpha``).
    Backticked names (`n_resamples` in backticks), bare names with an
    underscore (``test_fraction``) and any name followed by ``=`` (``item=``)
    are replaced; plain words such as 'confidence' in a sentence are left alone.
    """
    flags = dict(FLAG_OF_PARAMETER)
    for param in getattr(command, "params", ()):
        for opt in param.opts:
            if opt.startswith("--"):
                flags.setdefault(opt[2:].replace("-", "_"), opt)
    names = sorted(flags, key=len, reverse=True)
    pattern = re.compile(
        r"`(" + "|".join(map(re.escape, names)) + r")`"
        r"|\b(" + "|".join(re.escape(k) for k in names if "_" in k) + r")\b=?"
        r"|\b(" + "|".join(map(re.escape, names)) + r")="
    )

    def flag(m):
        return flags[m.group(1) or m.group(2) or m.group(3)]

    # "(test_fraction=, --test-fraction)" would read "--test-fraction, --test-fraction"
    named = pattern.sub(flag, message).replace("--compare and --compare", "--compare a,b")
    return re.sub(r"(--[\w-]+), \1\b", r"\1", named)


def parse_bounds(text: str | None, option: str = "--bounds") -> tuple[float, float] | None:
    """Parse 'LOW,HIGH' into the metric's bounds (None when not given)."""
    if text is None:
        return None
    limits = parse_floats(text, option)
    if len(limits) != 2 or not limits[0] < limits[1]:
        raise ArgumentError(f"{option} takes LOW,HIGH with LOW < HIGH; got {text!r}.")
    return limits[0], limits[1]


def bounds_option(help="The metric's range LOW,HIGH: a score outside it is refused (default: "
                  "[0, 1] for accuracy, F1, AUC ... by the name; [0, 100] for 'accuracy_pct')."):
    return click.option("--bounds", "bounds", default=None, help=help,
                        callback=lambda ctx, param, value: parse_bounds(value))  # fmt: skip


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def per_metric(metrics: list[str], payloads: list[dict], texts: list[str]) -> tuple[dict, str]:
    """One metric: its payload and text; several: payloads keyed by metric, one block each."""
    if len(metrics) == 1:
        return payloads[0], texts[0]
    return dict(zip(metrics, payloads, strict=True)), "\n\n".join(texts)


def split_columns(text: str) -> list[str]:
    """Split a comma-separated list of column names, refusing empty names."""
    names = [c.strip() for c in text.split(",")]
    if any(not c for c in names):
        raise ArgumentError(f"column list {text!r} has an empty name; separate names with commas.")
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise ArgumentError(f"column list {text!r} names {', '.join(twice)} more than once.")
    return names


def split_labels(text: str, option: str) -> list[str]:
    """A flag's labels, exactly as written: comma-separated, nothing stripped.

    A label holding a comma or starting with a double quote is written in
    CSV quotes, inner quotes doubled, as in a CSV file: ``'"a,b",c'`` names
    ``a,b`` and ``c``.
    """
    import csv

    try:
        rows = list(csv.reader([text], strict=True))
    except csv.Error as exc:
        raise ArgumentError(
            f"{option} {text!r} is not a comma-separated list ({exc}); quote a label holding "
            'a comma as in a CSV file: \'"a,b",c\'.'
        ) from None
    labels = rows[0] if rows else []
    if not labels or any(label == "" for label in labels):
        raise ArgumentError(
            f"{option} {text!r} has an empty label; separate labels with commas (labels are "
            "read exactly as written, spaces included)."
        )
    return labels


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
    """JSON has no NaN or infinity: NaN (no value) is null, an infinity the string "inf"/"-inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a plain text table, every column right-aligned to its widest cell."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)).rstrip()
            for r in [header, *rows]]  # fmt: skip


def emit(as_json: bool, payload: dict, text: str) -> None:
    """Print ``payload`` as JSON (NaN becomes null, +/-inf "inf"/"-inf") or ``text``."""
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


def needs(owner: str, present, *dests: str) -> None:
    """Refuse flags (their ``dests``) given on the command line that do nothing without ``owner``.

    A flag silently ignored would let a user believe it took effect.
    """
    if present:
        return
    from click.core import ParameterSource

    ctx = click.get_current_context()
    given = [
        p.opts[0] for p in ctx.command.params
        if p.name in dests and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    ]  # fmt: skip
    if given:
        it = "them" if len(given) > 1 else "it"
        raise ArgumentError(
            f"{', '.join(given)} {'do' if len(given) > 1 else 'does'} nothing without {owner}; "
            f"give {owner}, or leave {it} out."
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


def with_design(
    df, payload: dict, text: str, *, by=None, metric=None, rerun_level=False
) -> tuple[dict, str]:
    """The output with the design it assumed: a ``design`` key and a last line."""
    from vareval.data.design import design_of

    line = design_of(df, by=by, metric=metric, rerun_level=rerun_level).statement()
    return {**payload, "design": line}, f"{text}\n{line}"
