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
            from vareval.cli._common import name_flags

            _fail(name_flags(str(exc), self._command_of(args)))
        except click.UsageError as exc:  # a missing option, a bad value for a typed option
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            _fail(exc.format_message() + where)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", 1)
        sys.exit(0)

    def _command_of(self, args) -> click.Command | None:
        """The (sub)command that ``args`` invoke, to name its flags in an error."""
        command = self
        for token in sys.argv[1:] if args is None else args:
            if isinstance(command, click.Group) and token in command.commands:
                command = command.commands[token]
            elif not token.startswith("-"):
                break
        return command


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print vareval's own warnings as one line; others in Python's usual form."""
    if issubclass(category, VarevalWarning):
        from vareval.cli._common import name_flags

        click.echo(f"warning: {name_flags(str(message), _current_command())}", err=True)
    else:
        click.echo(warnings.formatwarning(message, category, filename, lineno, line), err=True)


def _current_command():
    ctx = click.get_current_context(silent=True)
    return ctx.command if ctx else None


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
        allocation,
        datasets,
        demo,
        evals,
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
        sequential, allocation, datasets, evals,
    )
    for module in modules:
        for command in module.COMMANDS:
            main.add_command(command)


_register()
