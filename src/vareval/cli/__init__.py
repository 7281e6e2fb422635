"""The ``vareval`` command: a thin layer over the data and statistics layers.

Each command lives in the module named for its job and imports the heavy
libraries inside its function, so ``vareval --help`` stays fast; a command's
module is imported when it runs (``_MODULE_OF``), so ``vareval variance`` does
not load the other commands' modules (``--help`` lists, and so loads, all). A user's
mistake (:class:`~vareval.errors.VarevalError`) prints one ``error:`` line
and exits with status 2, never a traceback.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import signal
import sys
import threading
import warnings

import click

from vareval import __version__, _interrupts
from vareval._interrupts import as_keyboard_interrupt
from vareval.errors import VarevalError, VarevalWarning

# command -> its module in vareval.cli (a test holds this to the modules' COMMANDS)
_MODULE_OF = {
    "summarize": "repeated", "best-of-k": "repeated", "paired": "repeated", "plan": "repeated",
    "significance": "significance", "metrics": "significance", "tuning-curve": "tuning",
    "parametric-curve": "tuning", "variance": "variance", "aggregate": "aggregate",
    "aso": "ranking", "rank": "ranking", "run": "run", "status": "run", "export": "run",
    "replay": "run", "report": "report", "import": "importers", "demo": "demo",
    "sequential": "sequential", "allocate": "allocation", "datasets": "datasets",
    "select": "selection", "selection-curve": "selection", "evals": "evals",
}  # fmt: skip


class _Group(click.Group):
    """A command group whose user errors are one ``error:`` line and exit status 2.

    Its commands are registered when first looked up (:func:`_load`): running
    one imports its module only; ``commands`` (listing, ``--help``) imports all.
    """

    @property
    def commands(self) -> dict:
        for module in dict.fromkeys(_MODULE_OF.values()):
            _load(module)
        return self._commands

    @commands.setter
    def commands(self, value):
        self._commands = value

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self._commands and cmd_name in _MODULE_OF:
            _load(_MODULE_OF[cmd_name])
        return self._commands.get(cmd_name)

    def add_command(self, cmd, name=None):
        self._commands[name or cmd.name] = cmd  # without listing (loading) every command

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)
        if _interrupts.COMMAND:
            _pause_collector()
            _defer_numpy_extras()
        try:
            # from its first line on, SIGTERM stops a command as Ctrl-C does (vareval._interrupts)
            with warnings.catch_warnings(), as_keyboard_interrupt(signal.SIGINT, signal.SIGTERM):
                warnings.showwarning = _show_warning
                super().main(args, prog_name, standalone_mode=False, **extra)
            _say_held()
        except _Interrupted:
            _fail("aborted", 1)
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
        except OSError as exc:  # a file the checks could not foresee (a full disk, /proc)
            where = f"'{exc.filename}': " if exc.filename else ""
            _fail(f"{where}{exc.strerror or exc}.")
        _leave(0)

    def invoke(self, ctx):
        # click would print an empty line before its Abort; an interrupt is one line
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None

    def _command_of(self, args) -> click.Command | None:
        """The (sub)command that ``args`` invoke, to name its flags in an error."""
        command = self
        for token in sys.argv[1:] if args is None else args:
            sub = command.get_command(None, token) if isinstance(command, click.Group) else None
            if sub is not None:
                command = sub
            elif not token.startswith("-"):
                break
        return command


class _Interrupted(Exception):
    """Ctrl-C or SIGTERM reached the command (its work, such as a run's claims, is cleaned up)."""


_HELD: list[str] = []  # numerical warnings, said only if the command answers


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print vareval's own warnings as one line; hold a library's numerical ones.

    A RuntimeWarning (numpy's overflow in a sum) is said after the answer it
    concerns, in one line; before a refusal it would only bury the error line.
    """
    if issubclass(category, VarevalWarning):
        from vareval.cli._common import name_flags

        click.echo(f"warning: {name_flags(str(message), _current_command())}", err=True)
    elif issubclass(category, RuntimeWarning):
        where = filename.replace("\\", "/").rsplit("site-packages/", 1)[-1]
        _HELD.append(f"warning: {message} ({where}:{lineno}); the numbers may be inf or nan")
    else:
        click.echo(warnings.formatwarning(message, category, filename, lineno, line), err=True)


def _say_held():
    for text in dict.fromkeys(_HELD):
        click.echo(text, err=True)
    _HELD.clear()


def _current_command():
    ctx = click.get_current_context(silent=True)
    return ctx.command if ctx else None


_LONGEST = 2000  # characters of an error line: a message quoting a 50 MB label is cut


def _fail(message: str, status: int = 2):
    line = " ".join(message.split())
    if len(line) > _LONGEST:
        line = f"{line[:_LONGEST]} ... ({len(line) - _LONGEST:,} more characters cut)"
    click.echo(f"error: {line}", err=True)
    _leave(status)


def _pause_collector(seconds: float = 2.0) -> None:
    """Turn Python's cyclic garbage collector off for the command's first ``seconds``.

    Importing numpy, pandas and scipy and a short analysis create some 10^5
    objects that mostly live to the end, and the collector walks the survivors
    again and again (~50 ms, 5-10 % of a one-second command; reference
    counting frees the rest meanwhile). A command that runs longer gets it back, so its
    cycles are freed as usual. Only in a ``vareval`` process, never in a
    program that calls :func:`main`.
    """
    gc.disable()
    timer = threading.Timer(seconds, gc.enable)
    timer.daemon = True
    timer.start()


def _defer_numpy_extras() -> None:
    """Load ``numpy.f2py`` and ``numpy.testing`` at their first use, not with scipy.

    scipy's array-API layer (``scipy/_lib/array_api_compat/numpy/__init__.py``,
    through ``_internal.clone_module``, scipy >= 1.15) walks ``dir(numpy)``
    with ``hasattr``, and numpy's module ``__getattr__`` imports every
    submodule so named: f2py (with charset_normalizer) and testing (unittest,
    importlib.metadata, email), ~50 ms of CPU that no command uses. So, as
    scipy is first imported, each becomes a lazy module (executed at its first
    attribute access) in ``sys.modules`` and on ``numpy``: without the
    attribute, numpy's ``__getattr__`` would recurse. Only in a ``vareval``
    process; nothing if scipy is already imported.
    """
    if "scipy" in sys.modules or any(isinstance(f, _BeforeScipy) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _BeforeScipy())


class _BeforeScipy:
    """A finder that finds nothing: as scipy is first imported, it defers numpy's extras.

    It stays on ``sys.meta_path``, idle after that: removing itself there
    would shift the list the import system is walking and skip the next finder.
    """

    done = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "scipy" and not self.done:
            self.done = True
            try:
                import numpy  # scipy's first import, a moment early
            except ImportError:  # scipy will say so itself
                return None
            for name in ("f2py", "testing"):
                _lazy_submodule(numpy, name)
        return None


def _lazy_submodule(parent, name: str) -> None:
    """Make ``parent.name`` a lazy module, unless it is loaded or cannot be found."""
    fullname = f"{parent.__name__}.{name}"
    if fullname in sys.modules or name in vars(parent):
        return
    try:
        spec = importlib.util.find_spec(fullname)
        spec.loader = importlib.util.LazyLoader(spec.loader)
    except (ImportError, ValueError, AttributeError, TypeError):  # no such module, no loader
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[fullname] = module
    spec.loader.exec_module(module)  # lazily: the code runs at the first attribute access
    setattr(parent, name, module)


def _leave(status: int):
    """End the command with ``status``, its own signal handlers in place to the last moment.

    Python's exit turns signal handling off before it frees its modules (a
    second or more after numpy, scipy and pandas), and a Ctrl-C or SIGTERM
    then would end the process by the signal. So the command does what that
    exit does that matters (wait for threads, run ``atexit``, flush) and
    leaves at once; a signal until then still ends in ``error: aborted``.
    In-process callers (tests, ``CliRunner``) get the usual ``SystemExit``.
    """
    if not _interrupts.COMMAND:
        sys.exit(status)
    import atexit
    import os
    import threading

    threading._shutdown()  # as Python's exit: join the threads that are not daemons
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (| head): nothing more can be said
            pass
    os._exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="vareval")
def main():
    """Honest numbers from noisy machine-learning experiments."""


_LOADED: set[str] = set()


def _load(module: str) -> None:
    """Import ``vareval.cli.<module>`` once and register its commands on ``main``."""
    if module in _LOADED:
        return
    _LOADED.add(module)
    for command in importlib.import_module(f"vareval.cli.{module}").COMMANDS:
        _guard_paths(command)
        main.add_command(command)


def _guard_paths(command: click.Command) -> None:
    """Check every command's path arguments before it runs (see :mod:`vareval.cli._paths`)."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _guard_paths(sub)
        return
    import functools

    from vareval.cli._paths import check_paths

    callback = command.callback

    @functools.wraps(callback)
    def checked(*args, **kwargs):
        check_paths(click.get_current_context())
        return callback(*args, **kwargs)

    command.callback = checked
