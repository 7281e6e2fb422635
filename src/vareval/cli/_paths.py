"""Which path arguments a command writes, and the checks that keep every other file safe.

An output is declared with :func:`output_path` (a ``click.Path`` that knows it
is written); every other path a command is given (a ``click.Path`` argument
or option, or any positional argument naming an existing file, such as an
Optuna storage) is an input. Before a command does any work,
:func:`check_paths` refuses, in one line:

- an output that is one of the inputs (the same file by any path or link);
- an output that is an existing SQLite database (a run store is never
  overwritten by a table or a page);
- an output that is a folder, a named pipe, or not writable, or whose folder
  does not exist (no command creates folders a user did not ask for);
- an input that is a named pipe (a pipe is read as ``-``, standard input).

A folder is writable when the kernel lets this process create an unnamed
temporary file in it (``O_TMPFILE``: nothing appears), so a read-only mount
or ``/proc`` is refused up front even to root, who passes permission bits;
a write that still fails (a full disk) is one line too
(:func:`vareval.cli._common.writing`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from vareval.errors import ArgumentError

_SQLITE_HEADER = b"SQLite format 3\x00"


class OutputPath(click.Path):
    """A path the command writes: ``kind`` is "file", "store" or "folder"."""

    def __init__(self, kind: str = "file", **attrs):
        self.kind = kind
        attrs.setdefault("dir_okay", kind == "folder")
        attrs.setdefault("file_okay", kind != "folder")
        super().__init__(**attrs)


def output_path(kind: str = "file", **attrs) -> OutputPath:
    return OutputPath(kind, **attrs)


def check_paths(ctx: click.Context) -> None:
    """Refuse, before any work, a path argument of ``ctx``'s command that could harm a file."""
    inputs, outputs = [], []
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(v, str) or v in ("", "-"):
                continue
            name = _flag(param)
            if isinstance(param.type, OutputPath):
                outputs.append((name, v, param.type.kind))
            elif isinstance(param.type, click.Path) or isinstance(param, click.Argument):
                inputs.append((name, _file_of(v)))
    for name, path in inputs:
        if _is_named_pipe(path):
            raise ArgumentError(
                f"{name} '{path}' is a named pipe; give a file, or - to read standard input."
            )
    for name, path, kind in outputs:
        _check_output(name, path, kind, [(n, p) for n, p in inputs if os.path.lexists(p)])


def _check_output(name: str, path: str, kind: str, inputs) -> None:
    p = Path(path)
    for other, source in inputs:
        if _same_file(p, Path(source)):
            raise ArgumentError(
                f"{name} '{path}' is the input {other} '{source}'; give another file to write "
                "(vareval never writes over what it reads)."
            )
    if _is_named_pipe(path):
        raise ArgumentError(f"{name} '{path}' is a named pipe; give a file to write.")
    if kind == "folder":
        if p.exists() and not p.is_dir():
            raise ArgumentError(f"{name} '{path}' is a file; give a folder.")
        _check_writable_folder(name, path, p if p.is_dir() else p.parent)
        return
    if p.is_dir():
        raise ArgumentError(f"{name} '{path}' is a folder; give a file name.")
    if kind == "file" and p.is_file() and _is_sqlite_file(p):
        raise ArgumentError(
            f"{name} '{path}' is an existing database (a run store?); vareval never writes "
            "over one: give a new file name."
        )
    if p.exists() and not os.access(p, os.W_OK):
        raise ArgumentError(f"{name} '{path}' is not writable.")
    if not p.exists():
        _check_writable_folder(name, path, p.parent)


def _check_writable_folder(name: str, path: str, folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise ArgumentError(
            f"{name} '{path}' cannot be written: '{folder}' is a file, not a folder."
        )
    if not folder.is_dir():
        raise ArgumentError(f"{name} '{path}': folder '{folder}' does not exist.")
    import tempfile

    try:  # asked of the kernel: root passes permissions, not a read-only mount or /proc
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise ArgumentError(
            f"{name} '{path}': folder '{folder}' is not writable ({exc.strerror or exc})."
        ) from None


def _flag(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return param.human_readable_name
    return max(param.opts, key=len)


def _file_of(value: str) -> str:
    """The file a value names: an SQLite URL's path, else the value itself."""
    for prefix in ("sqlite:///", "file://", "file:"):
        if value.startswith(prefix):
            return value.removeprefix(prefix).split("?")[0]
    return value


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _is_named_pipe(path: str) -> bool:
    """A FIFO on disk (``/dev/fd/N`` of a shell's ``<(...)`` is a link, and stays allowed)."""
    try:
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_sqlite_file(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False


def write_figure(fig, path: str, option: str, dpi: int = 150) -> None:
    """Save ``fig`` to ``path``; a write that fails (a full disk, ``/dev/full``) is one line.

    The image is drawn in memory and written here, so the failure of the
    write itself, which a library can leave unreported, reaches the user.
    """
    import io

    suffix = Path(path).suffix.lower().lstrip(".")
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=suffix or "png", dpi=dpi)
        with open(path, "wb") as fh:
            fh.write(buffer.getvalue())
    except ValueError as exc:  # an unknown format
        raise ArgumentError(f"{option} '{path}': {exc}") from None
    except OSError as exc:
        raise ArgumentError(
            f"{option} '{path}' could not be written: {exc.strerror or exc}."
        ) from None
