"""The slurm engine, against a real Slurm (``.ci/slurm-up`` starts a single-node one).

The cluster tests are in the slow tier (each takes tens of seconds: every array
task starts a Python that imports vareval) and skip with one line when ``sbatch``
is absent or the cluster is not up. The option checks need no cluster.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from vareval.errors import ExperimentError
from vareval.experiment import ExperimentSpec, run
from vareval.experiment.slurm import check_options, run_dir
from vareval.experiment.store import Store

TRIAL = textwrap.dedent(
    """
    import os, time

    def train(trial):
        p = trial.params
        if p.get("log"):  # one line per execution, appended atomically
            fd = os.open(p["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, f"{trial.trial_id}\\n".encode())
            os.close(fd)
        time.sleep(p.get("sleep", 0))
        key = [trial.seed, trial.factors["model"], trial.config_index]
        if key == p.get("raise_at"):
            raise ValueError("diverged on this node")
        if key == p.get("die_at"):
            os._exit(3)  # takes its whole array task down
        x = trial.rng("init").standard_normal(500)
        return {"score": float(x.mean()), "spread": float(x.std() * trial.config["lr"])}
    """
)


def _cluster_missing() -> str | None:
    if shutil.which("sbatch") is None:
        return "sbatch is absent: no Slurm here (.ci/slurm-up starts a single-node cluster)"
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    if not re.search(r"idle|mixed|allocated", out):
        return "the Slurm cluster is not up (.ci/slurm-up starts a single-node cluster)"
    return None


cluster = pytest.mark.skipif(_cluster_missing() is not None, reason=_cluster_missing() or "")


@pytest.fixture
def experiment(tmp_path):
    """An experiment.toml of 40 trials (2 models x 10 seeds x 2 configs) and its job name."""
    (tmp_path / "trial.py").write_text(TRIAL)
    name = f"t{uuid.uuid4().hex[:10]}"

    def write(seeds=10, **params):
        params.setdefault("log", str(tmp_path / "ran.log"))
        lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
        path = tmp_path / "experiment.toml"
        path.write_text(textwrap.dedent(f"""\
            [experiment]
            name = "{name}"
            trial = "trial:train"
            seeds = {seeds}
            configs = 2
            entropy = 20261204

            [factors]
            model = ["a", "b"]

            [space]
            lr = {{ distribution = "log-uniform", low = 1e-3, high = 1e-1 }}

            [params]
            """) + lines + "\n")
        return path

    yield write, name
    subprocess.run(["scancel", f"--name=vareval-{name}"], capture_output=True)


def _runs(tmp_path) -> list[int]:
    path = tmp_path / "ran.log"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _frame(store):
    with Store(store, readonly=True) as st:
        return st.frame().set_index("trial_id").sort_index()


def _cli(*args, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "vareval", "run", *map(str, args), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw,
    )


def _done(store) -> int:
    try:
        with Store(store, readonly=True) as st:
            return st.counts()["done"]
    except ExperimentError:
        return 0


def _alive(name) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-r", f"--name=vareval-{name}", "-o", "%i %T"],
                         capture_output=True, text=True).stdout
    return out.splitlines()


def _wait(condition, seconds, what):
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, f"waited {seconds} s for {what}"
        time.sleep(0.2)


# -- options (no cluster needed) ------------------------------------------------


def test_options_are_checked_in_one_line():
    assert check_options({"partition": "gpu", "gpus_per_trial": 1, "sbatch_args": "--qos=x"}) \
        == {"partition": "gpu", "gpus_per_trial": 1, "sbatch_args": ["--qos=x"]}
    with pytest.raises(ExperimentError, match=r"\[slurm\] unknown key 'gpus'; accepted: "):
        check_options({"gpus": 1})
    with pytest.raises(ExperimentError, match=r"\[slurm\] trials_per_task must be an integer"):
        check_options({"trials_per_task": 0})
    spec = ExperimentSpec(trial="trial:train", factors={"m": ["a"]}, seeds=1,
                          slurm={"time": "01:00:00"})
    assert spec.slurm == {"time": "01:00:00"}
    assert "slurm" not in spec.identity()  # a store resumes on another cluster
    with pytest.raises(ExperimentError, match=r"\[slurm\] time must be"):
        ExperimentSpec(trial="trial:train", factors={"m": ["a"]}, seeds=1, slurm={"time": 3})


def test_slurm_flags_need_the_slurm_engine(tmp_path, experiment):
    write, _ = experiment
    proc = _cli(write(seeds=1), "--store", tmp_path / "r.db", "--engine", "serial",
                "--partition", "gpu")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.strip().splitlines() == [
        "error: Slurm options (partition) apply to the slurm engine only (--engine slurm)."
    ]


def test_without_sbatch_one_line(tmp_path, experiment, monkeypatch):
    write, _ = experiment
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ExperimentError, match=r"^the slurm engine needs Slurm's `sbatch` "
                       r"on PATH \(run on a login node of the cluster\), or use --engine "
                       r"local\.$"):
        run(write(seeds=1), tmp_path / "r.db", engine="slurm", progress=False)
    assert not (tmp_path / "r.db").exists()  # refused before any work


# -- a real cluster ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_same_store_as_the_local_engine(tmp_path, experiment):
    write, _ = experiment
    path = write()
    local = run(path, tmp_path / "local.db", engine="local", workers=2, progress=False)
    slurm = run(path, tmp_path / "slurm.db", engine="slurm", progress=False,
                slurm={"trials_per_task": 20})
    assert (local.done, slurm.done, slurm.failed) == (40, 40, 0)
    a, b = _frame(tmp_path / "local.db"), _frame(tmp_path / "slurm.db")
    for col in ("score", "spread", "lr", "seed", "config", "rerun", "model"):
        assert a[col].tolist() == b[col].tolist(), col  # floats compared exactly
    assert b["host"].str.fullmatch(r".+ \(slurm \d+_[01]\)").all()  # the job id of each
    assert not run_dir(tmp_path / "slurm.db").exists()  # a finished run leaves nothing


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_sigkill_of_the_runner_then_resume(tmp_path, experiment):
    write, name = experiment
    path, store = write(sleep=0.3), tmp_path / "runs.db"
    args = (path, "--store", store, "--engine", "slurm", "--trials-per-task", "4")
    proc = _cli(*args)
    _wait(lambda: _done(store) >= 8, 180, "8 trials done")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _frame(store)
    before = before[before["status"] == "done"]
    assert _alive(name), "the array went on without its runner"
    proc = _cli(*args)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    after = _frame(store)
    assert (after["status"] == "done").all() and len(after) == 40
    assert after.loc[before.index, ["score", "spread", "host"]].equals(
        before[["score", "spread", "host"]]
    )  # finished trials kept as they were
    ran = _runs(tmp_path)
    counts = {t: ran.count(t) for t in set(ran)}
    assert set(counts) == set(range(1, 41))
    assert all(counts[t] == 1 for t in before.index)  # not repeated
    # the queued and running array tasks were found again, not resubmitted: at most
    # the results read in the last moment before the kill ran twice
    assert sum(c > 1 for c in counts.values()) <= 4, counts
    _wait(lambda: not _alive(name), 30, "the array tasks to leave the queue")


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_scancel_of_a_running_array_task(tmp_path, experiment):
    write, name = experiment
    path, store = write(seeds=5, sleep=1.0), tmp_path / "runs.db"
    proc = _cli(path, "--store", store, "--engine", "slurm", "--trials-per-task", "10")
    folder = run_dir(store)

    def started_in_task0():
        subs = [d for d in folder.glob("*") if (d / "manifest.json").exists()]
        return subs and any((subs[0] / "started" / str(t)).exists() for t in range(1, 11))

    _wait(started_in_task0, 180, "array task 0 to start a trial")
    job = json.loads(next(folder.glob("*/manifest.json")).read_text())["job"]
    subprocess.run(["scancel", f"{job}_0"], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    df = _frame(store)
    assert (df["status"] == "done").all() and len(df) == 20
    hosts = df.loc[range(1, 11), "host"]
    assert (~hosts.str.contains(rf"slurm {job}_0\)")).any()  # resubmitted after scancel
    _wait(lambda: not _alive(name), 30, "the array tasks to leave the queue")


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_trials_that_fail_on_a_node(tmp_path, experiment):
    write, name = experiment
    path = write(seeds=2, raise_at=[0, "b", 0], die_at=[1, "a", 0])
    report = run(path, tmp_path / "runs.db", engine="slurm", progress=False,
                 slurm={"trials_per_task": 4, "max_attempts": 2})
    assert (report.done, report.failed) == (6, 2)
    df = _frame(tmp_path / "runs.db")
    failed = df[df["status"] == "failed"]
    raised = failed[failed["model"] == "b"].iloc[0]
    assert raised["error"] == "ValueError: diverged on this node"
    died = failed[failed["model"] == "a"].iloc[0]
    assert re.fullmatch(r"its Slurm array task \d+_\d ended \(\w+\) while running it, "
                        r"2 times; see .+\.out", died["error"]), died["error"]
    # the trials after it in its batch were submitted again and finished
    assert (df[df["status"] == "done"]["model"].value_counts() == 3).all()
    _wait(lambda: not _alive(name), 30, "the array tasks to leave the queue")


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_ctrl_c_cancels_the_jobs_and_says_so(tmp_path, experiment):
    write, name = experiment
    path, store = write(seeds=2, sleep=2.0), tmp_path / "runs.db"
    args = (path, "--store", store, "--engine", "slurm", "--trials-per-task", "4")
    proc = _cli(*args)
    _wait(lambda: bool(list(run_dir(store).glob("*/started/*"))), 180, "a trial to start")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert re.fullmatch(r"note: cancelled Slurm job \d+; their \d+ unfinished trials are "
                        r"pending again\.", lines[0]), err
    assert lines[-1] == "error: aborted"
    _wait(lambda: not _alive(name), 30, "the cancelled array to leave the queue")
    proc = _cli(*args)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert (_frame(store)["status"] == "done").all()



@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_a_notebook_function_with_curves_on_slurm(tmp_path, experiment):
    _, name = experiment
    namespace = {"__name__": "__main__"}  # as a notebook defines it: shipped by value
    exec(compile(textwrap.dedent("""
        OFFSET = 10.0

        def train(trial):
            trial.report(0, loss=1.0)
            trial.artifact("note.txt", b"hello")
            return {"x": OFFSET + float(trial.rng("init").normal())}
        """), "<cell>", "exec"), namespace)  # noqa: S102 - a notebook cell
    spec = ExperimentSpec(trial=namespace["train"], factors={"model": ["a", "b"]}, seeds=3,
                          entropy=3, name=name)
    local = run(spec, tmp_path / "local.db", engine="local", workers=2, progress=False)
    slurm = run(spec, tmp_path / "slurm.db", engine="slurm", progress=False,
                slurm={"trials_per_task": 6})
    assert (local.done, slurm.done) == (6, 6)
    a, b = _frame(tmp_path / "local.db"), _frame(tmp_path / "slurm.db")
    assert a["x"].tolist() == b["x"].tolist()
    with Store(tmp_path / "slurm.db", readonly=True) as st:
        assert len(st.curves()) == 6 and st.artifact(3, "note.txt") == b"hello"


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_a_job_slurm_refuses_is_one_line(tmp_path, experiment):
    write, _ = experiment
    store = tmp_path / "runs.db"
    proc = _cli(write(seeds=1), "--store", store, "--engine", "slurm", "--partition", "nope")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err.strip().splitlines() == [
        "error: Slurm refused the array job: Invalid partition name specified; check the "
        "partition, time limit, GPUs, memory and extra sbatch arguments asked for."
    ]
    with Store(store, readonly=True) as st:
        assert st.counts()["pending"] == 4  # nothing claimed is left running
    assert not run_dir(store).exists()


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_a_preempted_and_requeued_task_skips_its_finished_trials(tmp_path, experiment):
    write, name = experiment
    path, store = write(seeds=5, sleep=0.5), tmp_path / "runs.db"
    proc = _cli(path, "--store", store, "--engine", "slurm", "--trials-per-task", "10")
    folder = run_dir(store)

    def finished_in_task0():
        return {int(p.name.split(".")[0]) for p in folder.glob("*/results/*")
                if p.suffix in (".pkl", ".taken") and int(p.name.split(".")[0]) <= 10}

    _wait(lambda: len(finished_in_task0()) >= 2, 180, "array task 0 to finish 2 trials")
    job = json.loads(next(folder.glob("*/manifest.json")).read_text())["job"]
    subprocess.run(["scontrol", "requeue", f"{job}_0"], check=True)  # as preemption does
    finished = finished_in_task0()
    # Slurm holds a requeued task for two minutes; let it start again at once
    _wait(lambda: f"{job}_0 PENDING" in _alive(name), 60, "the requeued task to be pending")
    subprocess.run(["scontrol", "update", f"JobId={job}_0", "StartTime=now"], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    df = _frame(store)
    assert (df["status"] == "done").all() and len(df) == 20
    ran = _runs(tmp_path)
    assert all(ran.count(t) == 1 for t in finished)  # not run again after the requeue
    assert sorted(set(ran)) == list(range(1, 21)) and len(ran) <= 21  # one ran twice at most
    _wait(lambda: not _alive(name), 30, "the array tasks to leave the queue")


@pytest.mark.slow
@pytest.mark.slurm
@cluster
def test_the_command_example_on_slurm(tmp_path):
    """examples/command_sklearn: a train.py that knows nothing of vareval, on Slurm as locally."""
    pytest.importorskip("sklearn")
    import dataclasses
    from pathlib import Path

    from vareval.experiment import load_spec

    example = Path(__file__).parents[2] / "examples" / "command_sklearn" / "experiment.toml"
    spec = dataclasses.replace(load_spec(example), seeds=1, configs=1,
                               name=f"t{uuid.uuid4().hex[:10]}")
    local = run(spec, tmp_path / "local.db", engine="local", workers=2, progress=False)
    slurm = run(spec, tmp_path / "slurm.db", engine="slurm", progress=False,
                slurm={"trials_per_task": 3})
    assert (local.done, slurm.done, slurm.failed) == (3, 3, 0)
    a, b = _frame(tmp_path / "local.db"), _frame(tmp_path / "slurm.db")
    for col in ("auc", "accuracy", "model", "seed"):
        assert a[col].tolist() == b[col].tolist(), col  # floats compared exactly
    with Store(tmp_path / "slurm.db", readonly=True) as st:  # each trial's share of the CPUs
        assert [st.trial(i)["execution"]["threads"] for i in (1, 2, 3)] == [1, 1, 1]
