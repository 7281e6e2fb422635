"""Commands for repeated runs (jobs 1-3): summarize, best-of-k, paired, plan."""

from __future__ import annotations

import click

from vareval.cli._common import by_option, emit, json_option, metric_option, results_file, split_columns


@click.command()
@results_file
@metric_option
@by_option
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--lower-is-better", is_flag=True, help="The best run is the smallest score.")
@json_option
def summarize(results, metric, by, confidence, lower_is_better, as_json):
    """Per-method summary of repeated runs: centre, spread, CIs, the selected best run."""
    from vareval.data import groups, read_table
    from vareval.stats import summarize as summarize_scores

    table = groups(read_table(results), metric, split_columns(by), min_runs=2)
    out = {
        name: summarize_scores(x, confidence=confidence, higher_is_better=not lower_is_better)
        for name, x in table.items()
    }
    emit(as_json, {k: v.to_dict() for k, v in out.items()}, "\n".join(map(repr, out.values())))


def demo_section() -> str:
    return "(repeated runs: to be written)"


COMMANDS = [summarize]
