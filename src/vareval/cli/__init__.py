"""The ``vareval`` command: a thin layer over the data and statistics layers.

Each command lives in the module named for its job and imports the heavy
libraries inside its function, so ``vareval --help`` stays fast. A user's
mistake (:class:`~vareval.errors.VarevalError`) prints one ``error:`` line
and exits with status 2, never a traceback.
"""

from __future__ import annotations

import sys
import warnings

import click

from vareval import __version__
from vareval.errors import VarevalError, VarevalWarning


class _Group(click.Group):
    """A command group whose user errors are one ``error:`` line and exit status 2."""

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                super().main(args, prog_name, standalone_mode=False, **extra)
        except VarevalError as exc:
            _fail(str(exc))
        except click.UsageError as exc:  # a missing option, a bad value for a typed option
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            _fail(exc.format_message() + where)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", 1)
        sys.exit(0)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print vareval's own warnings as one line; others in Python's usual form."""
    if issubclass(category, VarevalWarning):
        click.echo(f"warning: {message}", err=True)
    else:
        click.echo(warnings.formatwarning(message, category, filename, lineno, line), err=True)


def _fail(message: str, status: int = 2):
    click.echo(f"error: {' '.join(message.split())}", err=True)
    sys.exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="vareval")
def main():
    """Honest numbers from noisy machine-learning experiments."""


def _register():
    from vareval.cli import (
        aggregate,
        allocate,
        demo,
        importers,
        ranking,
        repeated,
        report,
        run,
        sequential,
        significance,
        tuning,
        variance,
    )

    modules = (
        repeated, significance, tuning, variance, aggregate, ranking, run, report, importers, demo,
        sequential, allocate,
    )
    for module in modules:
        for command in module.COMMANDS:
            main.add_command(command)


_register()
