"""The example notebook runs under ``jupyter nbconvert --execute`` and shows every result.

No ``%matplotlib inline``: a result cell must show an HTML table (the result's
answer first) or an image (a figure renders itself as PNG with any backend).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).parents[1] / "docs" / "notebook.ipynb"


@pytest.mark.slow
def test_the_notebook_shows_every_result_as_a_table_or_an_image(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbconvert")
    pytest.importorskip("ipykernel")
    out = tmp_path / "executed.ipynb"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    env.pop("MPLBACKEND", None)  # the kernel's own default, as a user gets it
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=600", "--output", str(out), str(NOTEBOOK)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cells = [c for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"]
    results = cells[1:]  # the first cell only loads the data
    assert len(results) >= 8
    for cell in results:
        kinds = {kind for o in cell.outputs for kind in o.get("data", {})}
        assert kinds & {"image/png", "text/html"}, (cell.source, kinds)
        if ".plot(" in cell.source:  # a figure, not "<Figure size 700x236 with 1 Axes>"
            assert "image/png" in kinds, cell.source
