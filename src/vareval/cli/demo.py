"""``vareval demo``: every job run on the bundled example data."""

from __future__ import annotations

import click


@click.command()
@click.option(
    "--force", is_flag=True, help="Replace an existing vareval-demo/report.html (else refused)."
)
def demo(force):
    """Run vareval's analyses on bundled example data and print what to report."""
    from pathlib import Path

    from vareval.cli import repeated, report, run, significance, tuning, variance
    from vareval.errors import ArgumentError

    page = Path(report.DEMO_FOLDER) / "report.html"
    if page.exists() and not force:
        raise ArgumentError(
            f"'{page}' exists and the demo would replace it; pass --force to replace it, or run "
            "the demo in another folder."
        )
    sections = (repeated, significance, tuning, variance, run, report)
    for section in (module.demo_section for module in sections):
        click.echo(section())
        click.echo("")


COMMANDS = [demo]
