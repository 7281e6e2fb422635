"""``vareval select`` and ``vareval selection-curve``: choose on validation, report on test."""

from __future__ import annotations

import click

from vareval.cli._common import (
    aligned,
    by_option,
    check_output,
    confidence_option,
    emit,
    json_option,
    lower_is_better_option,
    parse_floats,
    parse_ints,
    results_file,
    split_columns,
    with_design,
    writing,
)
from vareval.cli._paths import output_path
from vareval.errors import ArgumentError


def _metric_pair(f):
    f = click.option(
        "--test", "test", required=True,
        help="Metric column reported for the chosen configuration (never used to choose).",
    )(f)  # fmt: skip
    return click.option(
        "--validation", "validation", required=True,
        help="Metric column the configuration is chosen on.",
    )(f)  # fmt: skip


def _numbers(df, *columns):
    from vareval.data.validate import numbers_where_possible

    return numbers_where_possible(df, [c for c in columns if c in df.columns])


def render_selected(res) -> str:
    """The chosen configurations as a table, the procedure beside it."""
    from vareval.data.tables import table_text

    shown = res.table.drop(columns=["selected_on", "selection"])
    return "\n".join(
        [
            f"Chosen on validation, reported on test: {len(shown)} "
            f"{' x '.join([*res.by, *res.unit]) or 'method'} units.",
            f"selection: {res.procedure}.",
            "",
            table_text(shown, index=False),
            *([res.design.statement()] if res.design is not None else []),
        ]
    )


@click.command("select")
@results_file
@_metric_pair
@by_option
@click.option(
    "--unit", default="seed", show_default=True,
    help="Column(s) of one replication unit, e.g. seed or seed,rerun; '' for one choice "
    "per method.",
)  # fmt: skip
@click.option("--config", default="config", show_default=True, help="Configuration column.")
@lower_is_better_option(help="The smallest validation score wins (a loss, an error).")
@click.option(
    "--ties", type=click.Choice(("first", "average")), default="first", show_default=True,
    help="A tie in validation: keep the first configuration in table order, or report "
    "the tied configurations' mean test score.",
)  # fmt: skip
@click.option(
    "-o", "--output", type=output_path(allow_dash=True), default=None,
    help="Write the chosen configurations' results table here (.csv, .tsv, .jsonl, "
    ".parquet; - for CSV on stdout), for summarize, paired, report ...; a store's design "
    "travels with a file (Parquet metadata, else FILE.design.json), not with stdout.",
)  # fmt: skip
@json_option
def select(results, validation, test, by, unit, config, lower_is_better, ties, output, as_json):
    """Choose each unit's configuration on validation; report its test score.

    RESULTS is the search table (a store from `vareval run`, or any table with
    one row per trial). For each method and replication unit (a seed, or seed
    and rerun) the configuration with the best VALIDATION score is chosen, and
    its TEST score becomes one row of the results table that the other commands
    read. The procedure (configurations searched per unit, on which metric, the
    tie rule) is printed and written beside the numbers.
    """
    from vareval.data.io import write_table
    from vareval.data.selection import select as select_df

    if output not in (None, "-"):
        check_output(output, "-o")
    res = select_df(
        _numbers(results, validation, test), validation=validation, test=test,
        by=split_columns(by), unit=split_columns(unit) if unit else [], config=config,
        higher_is_better=not lower_is_better, ties=ties,
    )  # fmt: skip
    if output == "-":
        click.echo(write_table(res.table), nl=False)
        return
    text = render_selected(res)
    if output:
        with writing(output, "-o"):
            write_table(res.table, output)
        text += f"\nwrote {output}: {len(res.table)} rows"
    emit(as_json, res.to_dict(), text)


def render_curves(res) -> str:
    """Per method: the test-score curve with its interval, the validation curve, the gap."""
    from vareval._format import formatter

    c = f"{res.confidence:.0%}"
    lines = [
        f"Tuning curve of {res.test!r} for the configuration chosen on {res.validation!r} "
        f"after k search iterations ({'higher' if res.higher_is_better else 'lower'} is "
        "better):",
        f"  test U: expected test score of the best-on-validation of k (unbiased "
        f"U-statistic; ties in validation averaged over the tied winners), {c} jackknife "
        "interval (pointwise, k < n);",
        "  test V: the V-statistic; validation: expected best validation score; optimism: "
        "validation minus test, the gain that selection on validation does not carry to "
        "test.",
        "",
    ]
    for name in res.methods:
        cur = res.curves[name]
        fmt = formatter(cur.estimate, cur.validation)
        header = ["k", "test U", f"{c} interval", "test V", "validation", "optimism"]
        rows = [
            [
                f"{k:g}", fmt(cur.estimate[j]), _cell(cur, j, fmt),
                fmt(cur.v_statistic[j]), fmt(cur.validation[j]), fmt(cur.optimism[j]),
            ]
            for j, k in enumerate(cur.k)
        ]  # fmt: skip
        ties = (
            "" if cur.n_tie_groups == cur.n
            else f", {cur.n_tie_groups} distinct validation scores"
        )  # fmt: skip
        lines.append(f"{name} (n={cur.n}{ties}):")
        lines.extend(aligned(header, rows))
        lines.append("")
    cells = {_cell(res.curves[m], j, str)[-1] for m in res.methods for j in range(len(res.k))}
    marks = {
        "*": "* coverage below nominal: the interval rests on the few best configurations; in "
        "simulation it covered 0.83-0.93 for k > n / 10 (docs/tuning.md).",
        "a": "n/a: no spread (the jackknife SE is 0): no interval can be given.",
        "-": "-: k >= n, beyond the configurations observed.",
    }
    lines += [text for last, text in marks.items() if last in cells]
    if res.bounds is not None:
        lines.append(
            f"Intervals cut to [{res.bounds[0]:g}, {res.bounds[1]:g}] ({res.bounds_from})."
        )
    return "\n".join(lines).rstrip()


def _cell(cur, j: int, fmt) -> str:
    """One row's interval: '-' beyond n, 'n/a' without spread, '*' below nominal coverage."""
    if cur.k[j] >= cur.n:
        return "-"
    if cur.lower[j] != cur.lower[j]:
        return "n/a"
    star = " *" if cur.below_nominal[j] else ""
    return f"[{fmt(cur.lower[j])}, {fmt(cur.upper[j])}]{star}"


@click.command("selection-curve")
@results_file
@_metric_pair
@by_option
@lower_is_better_option
@confidence_option(help="Level of the pointwise intervals.")
@click.option("--ks", "ks_text", help="Search iterations to show, e.g. 1,2,5,10.")
@click.option("--bounds", default=None,
              help="The test metric's range LOW,HIGH (default: [0, 1] for a proportion "
              "named accuracy, F1, ...).")  # fmt: skip
@json_option
def selection_curve(results, validation, test, by, lower_is_better, confidence, ks_text,
                    bounds, as_json):  # fmt: skip
    """The test score of the configuration chosen on validation, after k search iterations.

    RESULTS has one row per random-search iteration with a VALIDATION and a TEST
    score. Per method: the expected test score of the best-on-validation
    configuration among k (U and V estimates), a jackknife interval, and the
    validation curve beside it; their gap is the optimism of selection.
    """
    from vareval.data.selection import selection_curves

    res = selection_curves(
        _numbers(results, validation, test), validation=validation, test=test,
        by=split_columns(by), ks=parse_ints(ks_text, "--ks") if ks_text else None,
        higher_is_better=not lower_is_better, confidence=confidence,
        bounds=_bounds(bounds), progress=None,
    )  # fmt: skip
    emit(as_json, *with_design(results, res.to_dict(), render_curves(res),
                               by=split_columns(by), metric=[test, validation]))


def _bounds(text):
    if text is None:
        return None
    limits = parse_floats(text, "--bounds")
    if len(limits) != 2:
        raise ArgumentError(f"--bounds takes LOW,HIGH; got {text!r}.")
    return limits


COMMANDS = [select, selection_curve]
