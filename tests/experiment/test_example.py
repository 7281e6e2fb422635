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


COMMAND_EXAMPLE = EXAMPLE.parent / "command_sklearn"


def test_command_example_runs_on_the_local_engine(tmp_path):
    """A plain argparse + scikit-learn train.py, run as command trials, then replayed."""
    pytest.importorskip("sklearn")
    script = (COMMAND_EXAMPLE / "train.py").read_text()
    assert "import vareval" not in script and "from vareval" not in script
    spec = load_spec(COMMAND_EXAMPLE / "experiment.toml")
    assert spec.command is not None and spec.n_trials == 24
    small = dataclasses.replace(spec, seeds=1, configs=1)
    rep = run(small, tmp_path / "cancer.db", engine="local", workers=2, progress=False)
    assert (rep.done, rep.failed) == (3, 0), rep
    with Store(tmp_path / "cancer.db") as st:
        df = st.frame()
        assert st.artifact(1, "stdout.txt").decode().strip().startswith('{"accuracy"')
    assert df["auc"].between(0.9, 1).all() and df["accuracy"].between(0.8, 1).all()
    assert replay(tmp_path / "cancer.db", 2).identical
