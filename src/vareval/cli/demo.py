"""``vareval demo``: every job run on the bundled example data."""

from __future__ import annotations

import click


@click.command()
def demo():
    """Run vareval's analyses on bundled example data and print what to report."""
    from vareval.cli import repeated, report, run, significance, tuning, variance

    sections = (repeated, significance, tuning, variance, run, report)
    for section in (module.demo_section for module in sections):
        click.echo(section())
        click.echo("")


COMMANDS = [demo]
