"""Importers read files written by the real libraries and keep every run."""

import math
import os

import numpy as np
import pandas as pd
import pytest

from vareval.data.importers import from_mlflow, from_optuna, from_tensorboard, from_wandb
from vareval.errors import DataError


def _optuna_study(tmp_path, n=50, journal=False):
    optuna = pytest.importorskip("optuna", reason="writing a real study needs optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if journal:  # Optuna's file storage: a path, not a URL
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        url = str(tmp_path / "optuna.log")
        storage = JournalStorage(JournalFileBackend(url))
    else:
        url = storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    study = optuna.create_study(study_name="svc", storage=storage,
                                sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial):
        c = trial.suggest_float("C", 1e-3, 1e3, log=True)
        kernel = trial.suggest_categorical("kernel", ["rbf", "linear", "1.10"])
        trial.set_user_attr("seed", trial.number % 5)
        if trial.number == 7:
            raise RuntimeError("diverged")
        if trial.number == 9:
            raise optuna.TrialPruned()
        return math.log(c) + (kernel == "rbf")

    study.optimize(objective, n_trials=n, catch=(RuntimeError,))
    return url, study


def test_optuna_study_imports_every_trial(tmp_path):
    url, study = _optuna_study(tmp_path, journal=True)
    df = from_optuna(url)  # one study in the storage: the name may be omitted
    assert len(df) == 50
    assert df["experiment"].unique().tolist() == ["svc"]
    by_run = df.set_index("run")
    for t in study.trials:
        row = by_run.loc[str(t.number)]
        assert row["seed"] == str(t.number % 5)
        assert row["param.kernel"] == t.params["kernel"]
        assert float(row["param.C"]) == t.params["C"]
        if t.value is None:
            assert np.isnan(row["value"])
        else:
            assert row["value"] == t.value
    assert by_run.loc["7", "status"] == "failed"
    assert by_run.loc["9", "status"] == "pruned"
    assert (df["status"] == "done").sum() == 48
    # the configuration id groups identical (C, kernel) pairs; the seed is not part of it
    assert df["config"].nunique() == df[["param.C", "param.kernel"]].drop_duplicates().shape[0]


def test_optuna_sqlite_storage_and_errors(tmp_path):
    url, study = _optuna_study(tmp_path, n=3)
    assert from_optuna(url, "svc")["value"].tolist() == [t.value for t in study.trials]
    assert len(from_optuna(str(tmp_path / "optuna.db"))) == 3  # the file itself
    with pytest.raises(DataError, match="--study 'nope' not found"):
        from_optuna(url, "nope")
    with pytest.raises(DataError, match="neither a URL"):
        from_optuna(str(tmp_path / "missing.db"))


def _log_mlflow(uri, n=20):
    mlflow = pytest.importorskip("mlflow", reason="writing real runs needs mlflow")
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("digits")
    expected = {}
    for i in range(n):
        with mlflow.start_run(run_name=f"run{i}") as run:
            mlflow.log_params({"lr": ["0.1", "0.10", "01"][i % 3], "seed": i // 3})
            for step in range(3):
                mlflow.log_metric("loss", 1.0 / (step + 1 + i), step=step)
            mlflow.log_metric("acc", 0.8 + i / 1000)
            if i == 4:
                mlflow.end_run(status="FAILED")
            expected[run.info.run_id] = (i, 1.0 / (3 + i), 0.8 + i / 1000)
    return expected


@pytest.mark.parametrize("store", ["sqlite", "files"])
def test_mlflow_runs_import_with_latest_metrics(tmp_path, monkeypatch, store):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}" if store == "sqlite" else f"file:{tmp_path}/mlruns"
    expected = _log_mlflow(uri)
    source = uri if store == "sqlite" else str(tmp_path / "mlruns")
    df = from_mlflow(source, experiment="digits")
    assert len(df) == 20
    for run_id, (i, loss, acc) in expected.items():
        row = df.set_index("run").loc[run_id]
        assert row["run_name"] == f"run{i}"
        assert row["seed"] == str(i // 3)
        assert row["param.lr"] == ["0.1", "0.10", "01"][i % 3]  # labels kept as logged
        assert row["loss"] == pytest.approx(loss, rel=1e-12)
        assert row["acc"] == pytest.approx(acc, rel=1e-12)
        assert row["status"] == ("failed" if i == 4 else "done")
    assert df["config"].nunique() == 3
    with pytest.raises(DataError, match="--experiment 'other' has no runs"):
        from_mlflow(source, experiment="other")


def test_tensorboard_curves_from_a_real_writer(tmp_path):
    tbx = pytest.importorskip("tensorboardX", reason="writing real event files needs tensorboardX")
    truth = {}
    for r in range(3):
        with tbx.SummaryWriter(str(tmp_path / f"seed{r}")) as w:
            for step in range(100):
                value = np.float32(1.0 / (step + 1) + r)
                w.add_scalar("train/loss", value, step)
                w.add_scalar("eval/acc", np.float32(step / 100 + r), step)
                truth[(f"seed{r}", "train/loss", step)] = float(value)
            w.add_text("note", "not a scalar", 0)
    curves = from_tensorboard(tmp_path)
    assert len(curves) == 3 * 2 * 100
    got = curves.set_index(["run", "tag", "step"])["value"]
    for key, value in truth.items():
        assert got.loc[key] == value
    final = from_tensorboard(tmp_path, final=True).set_index("run")
    assert final.loc["seed2", "eval/acc"] == pytest.approx(99 / 100 + 2, rel=1e-6)
    assert list(final.index) == ["seed0", "seed1", "seed2"]


def test_tensorboard_tensor_scalars_as_tensorflow_writes_them(tmp_path):
    """TF2 writes a scalar as a tensor tagged with the 'scalars' plugin (metadata once)."""
    pytest.importorskip("tensorboardX", reason="the protocol buffers come from tensorboardX")
    from tensorboardX.proto import event_pb2, summary_pb2, tensor_pb2
    from tensorboardX.record_writer import RecordWriter

    path = tmp_path / "run" / "events.out.tfevents.1.host"
    path.parent.mkdir()
    writer = RecordWriter(str(path))
    for step in range(4):
        value = summary_pb2.Summary.Value(
            tag="acc", tensor=tensor_pb2.TensorProto(dtype=2, double_val=[step / 4]))
        if step == 0:
            value.metadata.plugin_data.plugin_name = "scalars"
        event = event_pb2.Event(wall_time=1.5, step=step, summary=summary_pb2.Summary(
            value=[value]))
        writer.write(event.SerializeToString())
    writer.close()
    curves = from_tensorboard(tmp_path)
    assert curves["value"].tolist() == [0, 0.25, 0.5, 0.75]
    assert curves["run"].unique().tolist() == ["run"]


def test_tensorboard_truncated_tail_is_named(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    with tbx.SummaryWriter(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("x", float(step), step)
    path = next(tmp_path.glob("events.out.tfevents.*"))
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    with pytest.warns(UserWarning, match="incomplete record"):
        curves = from_tensorboard(tmp_path)
    assert curves["value"].tolist() == [0, 1, 2, 3]
    with pytest.raises(DataError, match="no TensorBoard event files"):
        (tmp_path / "empty").mkdir()
        from_tensorboard(tmp_path / "empty")


def test_wandb_ui_export(tmp_path):
    path = tmp_path / "wandb_export.csv"
    path.write_text(
        "Name,ID,State,Notes,User,Tags,Created,Runtime,Sweep,optimizer,lr,seed,accuracy\n"
        "brisk-1,a1,finished,-,me,,2026-01-01,10,,adam,0.001,0,0.91\n"
        "calm-2,a2,crashed,-,me,,2026-01-01,3,,adam,0.001,1,\n"
        "deep-3,a3,finished,-,me,,2026-01-01,11,,sgd,0.01,0,0.89\n"
    )
    df = from_wandb(path, params=["optimizer", "lr", "seed"]).set_index("run")
    assert df.loc["a2", "status"] == "failed" and np.isnan(df.loc["a2", "accuracy"])
    assert df.loc["a1", "param.lr"] == "0.001" and df.loc["a1", "seed"] == "0"
    assert df["config"].tolist() == ["1", "1", "2"]
    guessed = from_wandb(path)  # without --params: text columns are parameters
    assert "param.optimizer" in guessed.columns and "lr" in guessed.columns


def test_wandb_api_recipe_export(tmp_path):
    runs = pd.DataFrame({
        "summary": [str({"acc": 0.9, "_step": 4}), str({"acc": 0.8, "_step": 4})],
        "config": [str({"lr": 0.1, "seed": 1}), str({"lr": 0.2, "seed": 1})],
        "name": ["a", "b"],
    })
    runs.to_csv(tmp_path / "project.csv")
    df = from_wandb(tmp_path / "project.csv")
    assert df["acc"].tolist() == [0.9, 0.8]
    assert df["param.lr"].tolist() == ["0.1", "0.2"] and "_step" not in df.columns


def test_importers_refuse_missing_sources(tmp_path):
    with pytest.raises(DataError, match="not found"):
        from_mlflow(str(tmp_path / "nothing"))
    with pytest.raises(DataError, match="does not exist"):
        from_tensorboard(tmp_path / "nothing")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="neither the UI's Name and State"):
        from_wandb(tmp_path / "x.csv")
    assert os.listdir(tmp_path) == ["x.csv"]
