"""The bundled example data: list it, copy a file (with its provenance note) out."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import click

from vareval.cli._paths import output_path
from vareval.errors import ArgumentError


def bundled() -> dict[str, Path]:
    """Each bundled data file by name, with a provenance note ``<stem>.md`` beside it."""
    from vareval import datasets

    folder = datasets.path("__init__.py").parent
    return {
        p.name: p
        for p in sorted(folder.iterdir())
        if p.suffix not in (".md", ".py", ".pyc") and p.is_file()
    }


_WIDTH = 100


def _note(path: Path) -> Path:
    return path.with_suffix(".md")


def first_line(path: Path) -> str:
    """The first sentence of a data file's note, without markdown emphasis."""
    note = _note(path)
    if not note.is_file():
        return "(no provenance note)"
    text = note.read_text(encoding="utf-8").split("\n\n")
    para = next((p for p in text if p.strip() and not p.lstrip().startswith("#")), "")
    para = re.sub(r"[*`]", "", " ".join(para.split()))
    # the first full stop that ends a sentence (not "et al." or "e.g.")
    end = re.search(r"(?<!\bal)(?<!\be\.g)(?<!\bi\.e)\.(\s+[A-Z(]|$)", para)
    sentence = para[: end.start() + 1] if end else para
    return textwrap.shorten(sentence, _WIDTH, placeholder=" ...")


@click.group(invoke_without_command=True)
@click.pass_context
def datasets(ctx):
    """The bundled example data: list it, or copy a file out to run the examples.

    Every example in the README starts from these files, e.g.
    'vareval datasets copy digits_runs.csv .'.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_)


@datasets.command("list")
def list_():
    """One line per bundled file, from its provenance note."""
    files = bundled()
    width = max(map(len, files))
    for name, path in files.items():
        click.echo(f"{name:<{width}}  {first_line(path)}")
    click.echo("copy one out (with its note NAME.md) by: vareval datasets copy NAME [DIR]")


@datasets.command()
@click.argument("name")
@click.argument("folder", default=".", type=output_path("folder"))
def copy(name, folder):
    """Copy the bundled file NAME and its note NAME.md into FOLDER (default: here).

    Refuses to overwrite a file that exists.
    """
    files = bundled()
    if name not in files:
        raise ArgumentError(
            f"NAME {name!r} is not a bundled file; bundled: {', '.join(files)}."
        )
    target = Path(folder)
    if not target.is_dir():
        raise ArgumentError(f"DIR '{folder}' is not an existing folder.")
    sources = [p for p in (files[name], _note(files[name])) if p.is_file()]
    clash = [str(target / p.name) for p in sources if (target / p.name).exists()]
    if clash:
        raise ArgumentError(
            f"{' and '.join(clash)} already exist{'s' if len(clash) == 1 else ''}; "
            "nothing copied (remove or rename it first)."
        )
    for p in sources:
        try:
            shutil.copyfile(p, target / p.name)
        except OSError as exc:
            raise ArgumentError(
                f"DIR '{folder}': {p.name} could not be written: {exc.strerror or exc}."
            ) from None
    click.echo(f"copied {', '.join(p.name for p in sources)} to {target}")


COMMANDS = [datasets]
