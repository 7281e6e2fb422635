"""The bundled eval benchmark ``digits_eval.csv``: the shape its note states, and
``examples/make_eval_benchmark.py`` regenerates it byte for byte (with the library
versions the note records; a few seconds)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from vareval import datasets

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "make_eval_benchmark.py"
MODELS = ["knn", "logreg", "random_forest", "mlp_seed0", "mlp_seed1", "naive_bayes"]
VARIANTS = ["original", "rot+10", "rot-10", "noise"]


def test_the_benchmark_has_the_shape_its_note_states():
    df = datasets.load("digits_eval.csv")
    assert list(df.columns) == [
        "model", "question", "image", "variant", "digit", "epoch", "answer", "correct"
    ]
    assert len(df) == 24_000 and list(df["model"].unique()) == MODELS
    assert df["question"].nunique() == 800 and df["image"].nunique() == 200
    assert set(df["correct"]) == {0, 1}
    assert (df["correct"] == (df["answer"] == df["digit"])).all()
    # every model answers every question five times; four variants of each image
    assert df.groupby(["model", "question"]).size().size == 6 * 800
    assert set(df["epoch"]) == {1, 2, 3, 4, 5}
    assert (df.groupby(["model", "question"])["epoch"].nunique() == 5).all()
    per_image = df[df["model"] == "knn"].groupby("image")["variant"].unique()
    assert all(list(v) == VARIANTS for v in per_image)
    assert (df["question"] == df["image"].astype(str) + "/" + df["variant"]).all()
    # one digit per image; the mean scores the note gives
    assert (df.groupby("image")["digit"].nunique() == 1).all()
    means = df.groupby("model", sort=False)["correct"].mean()
    note = " ".join(datasets.path("digits_eval.md").read_text().split())
    for model, mean in means.items():
        assert f"{model} {mean:.4f}" in note
    assert datasets.path("digits_eval.csv").stat().st_size < 2_000_000


def _recorded_versions() -> dict[str, str]:
    note = " ".join(datasets.path("digits_eval.md").read_text().split())
    m = re.search(r"scikit-learn (\S+), numpy (\S+) and scipy (\S+?) ", note)
    return dict(zip(["sklearn", "numpy", "scipy"], m.groups(), strict=True))


def test_the_script_regenerates_the_file_byte_for_byte(tmp_path, monkeypatch, capsys):
    import scipy
    import sklearn

    now = {"sklearn": sklearn.__version__, "numpy": np.__version__, "scipy": scipy.__version__}
    if now != _recorded_versions():
        pytest.skip(f"the file was made with {_recorded_versions()}, here {now}")
    spec = importlib.util.spec_from_file_location("make_eval_benchmark", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "OUT", tmp_path / "digits_eval.csv")
    script.main()
    assert "wrote 24000 rows" in capsys.readouterr().out
    assert script.OUT.read_bytes() == datasets.path("digits_eval.csv").read_bytes()
