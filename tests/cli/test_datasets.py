"""vareval datasets: list the bundled files, copy one (and its note) out."""

from __future__ import annotations

import re

from click.testing import CliRunner

from vareval import datasets
from vareval.cli import main
from vareval.cli.datasets import bundled


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_list_shows_every_bundled_file_with_a_line_of_its_note():
    out = _run("datasets").stdout.splitlines()
    assert out == _run("datasets", "list").stdout.splitlines()
    names = set(bundled())
    assert {"digits_runs.csv", "digits_predictions.csv", "hedwig.tsv"} <= names
    for name in names:
        (line,) = [row for row in out if row.startswith(name + " ")]
        assert len(line.split(None, 1)[1]) > 20  # a description, from the note
    expected = r"decovac_sim.csv +Simulated data, not real training runs\."
    assert any(re.fullmatch(expected, row) for row in out)


def test_copy_writes_the_file_and_its_note_byte_for_byte(tmp_path):
    r = _run("datasets", "copy", "digits_runs.csv", tmp_path)
    assert r.exit_code == 0, r.output
    for name in ("digits_runs.csv", "digits_runs.md"):
        assert (tmp_path / name).read_bytes() == datasets.path(name).read_bytes()


def test_copy_refuses_to_overwrite_and_unknown_names(tmp_path):
    (tmp_path / "digits_runs.md").write_text("mine")
    r = _run("datasets", "copy", "digits_runs.csv", tmp_path)
    assert r.exit_code == 2
    assert "digits_runs.md already exists; nothing copied" in r.stderr
    assert (tmp_path / "digits_runs.md").read_text() == "mine"
    assert not (tmp_path / "digits_runs.csv").exists()
    r = _run("datasets", "copy", "digits.csv", tmp_path)
    assert r.exit_code == 2 and "bundled: " in r.stderr and "digits_runs.csv" in r.stderr
    r = _run("datasets", "copy", "digits_runs.csv", tmp_path / "absent")
    assert r.exit_code == 2 and "not an existing folder" in r.stderr
