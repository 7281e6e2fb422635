"""``vareval demo``: every job run on the bundled example data."""

from __future__ import annotations

import click


@click.command()
def demo():
    """Run vareval's analyses on bundled example data and print what to report."""
    from vareval.cli import repeated, report

    for section in (repeated.demo_section, report.demo_section):
        click.echo(section())
        click.echo("")


COMMANDS = [demo]
