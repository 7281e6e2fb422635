"""The ``vareval`` command: a thin layer over the data and statistics layers.

Each command lives in the module named for its job and imports the heavy
libraries inside its function, so ``vareval --help`` stays fast. A user's
mistake (:class:`~vareval.errors.VarevalError`) prints one ``error:`` line
and exits with status 2, never a traceback.
"""

from __future__ import annotations

import sys

import click

from vareval.errors import VarevalError


class _Group(click.Group):
    """A command group that turns user errors into one line and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except VarevalError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vareval")
def main():
    """Honest numbers from noisy machine-learning experiments."""


def _register():
    from vareval.cli import demo, repeated, report

    for module in (repeated, report, demo):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
