"""Every example in README.md and docs/*.md runs as written.

Each markdown file's examples run in document order in one fresh folder (so a
``vareval datasets copy`` line, or a store made by ``vareval run``, serves
the examples after it), with the repository's ``examples/`` and ``tests/``
folders linked in for the examples that name them:

- in ``console`` and ``text`` blocks and blocks without a language, each ``$ vareval ...``
  line (with its ``\\`` continuations) runs in a shell; in ``bash``/``sh``
  blocks, each line starting with ``vareval``. The exit status must be 0
  (or 2 when the shown output is an ``error:`` line), and every output line
  the doc shows must appear in the real output (whitespace-normalised;
  durations and file sizes masked; a line with ``...`` marks an elision and
  is not compared);
- ``python`` blocks run in one namespace per file, ``>>>`` blocks as doctests.

A block preceded by ``<!-- no-run: reason -->`` is skipped (it needs a
cluster, a network or logs of the reader's own). The examples run in the slow
tier (the README's experiment alone trains 48 models); the parser's own tests
are fast.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_MARKER = re.compile(r"<!--\s*no-run\s*:\s*(.*?)\s*-->\s*$", re.S)
_SHELL = ("console", "text", "", "bash", "sh", "shell")


@dataclass
class Example:
    """One thing to run: a shell command with the output the doc shows, or Python."""

    line: int
    kind: str  # "shell", "python" or "doctest"
    source: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Doc:
    path: Path
    examples: list[Example]
    skipped: list[tuple[int, str]]


def parse(path: Path) -> Doc:
    """The examples of one markdown file, in document order."""
    text = path.read_text(encoding="utf-8")
    examples, skipped = [], []
    for m in _BLOCK.finditer(text):
        lang, body = m.group(1).lower(), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip().rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        found = _examples(lang, body, line)
        if not found:
            continue
        if marker:
            skipped.append((line, marker.group(1)))
            continue
        examples += found
    return Doc(path, examples, skipped)


def _examples(lang: str, body: str, line: int) -> list[Example]:
    if lang == "python":
        kind = "doctest" if body.lstrip().startswith(">>>") else "python"
        return [Example(line, kind, body)]
    if lang not in _SHELL:
        return []
    out, lines = [], body.splitlines()
    prompt = lang in ("console", "text", "")
    i = 0
    while i < len(lines):
        text = lines[i]
        command = text[2:] if prompt and text.startswith("$ ") else None
        if not prompt and text.startswith("vareval "):
            command = text
        if command is None or not command.startswith("vareval"):
            if out and prompt and not text.startswith("$ "):
                out[-1].shown.append(text)
            i += 1
            continue
        start = line + 1 + i
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        out.append(Example(start, "shell", command))
        i += 1
    return out


def _normal(text: str) -> str:
    text = re.sub(r"\d+(\.\d+)? s\b", "<secs>", text)
    text = re.sub(r"\d+ KiB", "<size>", text)
    return " ".join(text.split())


def _run_shell(example: Example, folder: Path, env: dict) -> list[str]:
    """What differs from the doc: a wrong exit status, or a shown line not printed."""
    done = subprocess.run(
        example.source, shell=True, cwd=folder, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    where = f"line {example.line}: {example.source}"
    shown = [s for s in example.shown if s.strip()]
    expect_error = bool(shown) and shown[0].startswith("error:")
    wanted = 2 if expect_error else 0
    if done.returncode != wanted:
        return [f"{where}\nexit status {done.returncode}\n{done.stderr[-2000:]}"]
    real = {_normal(x) for x in (done.stdout + done.stderr).splitlines()}
    missing = [
        s for s in shown
        if "..." not in s and not s.lstrip().startswith("#") and _normal(s) not in real
    ]  # fmt: skip
    if missing:
        return [
            f"{where}\nthe doc shows\n" + "\n".join(missing)
            + f"\nbut the output is\n{done.stdout}{done.stderr}"
        ]
    return []


def _run_python(example: Example, namespace: dict) -> None:
    if example.kind == "python":
        code = compile(example.source, f"<example at line {example.line}>", "exec")
        exec(code, namespace)  # noqa: S102 - the documented example is the test
        return
    test = doctest.DocTestParser().get_doctest(
        example.source, namespace, f"line {example.line}", None, example.line
    )
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    runner.run(test, out=lambda s: pytest.fail(s, pytrace=False))
    assert runner.failures == 0


def _shell_env(tmp_path: Path) -> dict:
    """A PATH whose `vareval` is this interpreter's vareval (the tested source tree)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "vareval"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vareval "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p
    )
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("doc", [pytest.param(parse(p), id=p.name) for p in DOCS])
def test_every_example_runs_as_written(doc: Doc, tmp_path, monkeypatch):
    if not doc.examples:
        pytest.skip(f"{doc.path.name} has no examples")
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("examples", "tests"):
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    env = _shell_env(tmp_path)
    monkeypatch.chdir(folder)
    # a real module, so the examples can define dataclasses as a reader's script would
    module = types.ModuleType("__docs__")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    problems = []
    for example in doc.examples:
        if example.kind == "shell":
            problems += _run_shell(example, folder, env)
        else:
            try:
                _run_python(example, namespace)
            except Exception as exc:  # noqa: BLE001 - reported with the others below
                problems.append(f"python block at line {example.line}: {exc!r}")
    assert not problems, "\n\n".join(problems)


def test_skipped_examples_say_why():
    for path in DOCS:
        for line, reason in parse(path).skipped:
            assert len(reason) > 10, f"{path.name} line {line}: say why it cannot run"


def test_the_parser_finds_commands_output_and_markers(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "```console\n$ vareval summarize r.csv \\\n    --metric a --by m\nhead\n  row 1\n"
        "$ vareval datasets\n```\n\n<!-- no-run: needs a Ray cluster -->\n```bash\n"
        "vareval run x.toml --engine ray\n```\n\n```python\nx = 1\n```\n"
    )
    doc = parse(md)
    assert [e.source for e in doc.examples] == [
        "vareval summarize r.csv  --metric a --by m", "vareval datasets", "x = 1\n",
    ]  # fmt: skip
    assert doc.examples[0].shown == ["head", "  row 1"]
    assert doc.skipped == [(10, "needs a Ray cluster")]
