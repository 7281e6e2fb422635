import dataclasses
from pathlib import Path

import pytest

from vareval.experiment import Store, load_spec, replay, run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "decovac_sklearn"


def test_example_declaration_loads():
    spec = load_spec(EXAMPLE / "experiment.toml")
    assert spec.n_trials == 48
    assert spec.fixed == ("data_split",)


def test_example_trial_runs_and_replays(tmp_path):
    pytest.importorskip("sklearn")
    spec = load_spec(EXAMPLE / "experiment.toml")
    small = dataclasses.replace(
        spec,
        factors={"model": ["logreg", "mlp"], "optimizer": ["adam"]},
        seeds=1,
        configs=1,
        reruns=2,
        params={"epochs": 1},
    )
    rep = run(small, tmp_path / "digits.db", engine="serial", progress=False)
    assert rep.done == 4, rep
    with Store(tmp_path / "digits.db") as st:
        df = st.frame()
    assert df["accuracy"].between(0, 1).all()
    # reruns repeat seed and configuration exactly: identical on CPU
    assert df.groupby("experiment")["accuracy"].nunique().eq(1).all()
    assert replay(tmp_path / "digits.db", 2).identical
