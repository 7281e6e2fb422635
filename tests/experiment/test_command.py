"""Command trials (any script), thread limits per worker, one GPU set per running trial.

Real processes throughout: the local engine's workers run the script
``_command_trial.py`` with ``python``; GPUs are simulated by the environment
variables a trial sees (no GPU is needed).
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vareval.errors import ExperimentError
from vareval.experiment import ExperimentSpec, Store, replay, run, trial_seeds
from vareval.experiment.devices import gpu_slots, parse_gpus
from vareval.experiment.execution import STDERR_LINES, run_trial
from vareval.experiment.spec import Distribution, loads_spec

HERE = Path(__file__).resolve().parent
SCRIPT = str(HERE / "_command_trial.py")
CLI = [sys.executable, "-m", "vareval"]


def command_spec(mode="stdout", *extra, **kw):
    base = dict(
        trial={"command": [sys.executable, SCRIPT, "--mode", mode, "--lr", "{lr}",
                           "--model", "{model}", *extra]},
        factors={"model": ["a", "b"]},
        seeds=2,
        configs=2,
        space={"lr": Distribution("log-uniform", low=1e-4, high=1e-1)},
        sources=("data_split", "init"),
        entropy=99,
        paths=(str(HERE),),
        timeout=60,
    )
    base.update(kw)
    return ExperimentSpec(**base)


def frame(db):
    with Store(db, readonly=True) as st:
        return st.frame()


def executions(db):
    con = sqlite3.connect(db)
    try:
        return {i: json.loads(e) for i, e in con.execute("SELECT id, execution FROM trials")}
    finally:
        con.close()


@pytest.mark.parametrize("mode", ["stdout", "file"])
def test_command_metrics_placeholders_and_seeds(tmp_path, mode):
    db = tmp_path / "c.db"
    rep = run(command_spec(mode), db, workers=2, progress=False)
    assert (rep.done, rep.failed) == (8, 0)
    with Store(db, readonly=True) as st:
        for tid in (1, 6):
            rec = st.trial(tid)
            m = rec["metrics"]
            # the placeholders carried the configuration and the factor exactly
            assert m["lr"] == rec["config"]["lr"]
            assert m["model_is_b"] == float(rec["factors"]["model"] == "b")
            assert m["trial_id"] == tid
            # the seed a script gets is the one Trial.int_seed gives a callable
            from vareval.experiment.execution import make_trial

            trial = make_trial({**rec, "params": {}})
            assert m["init"] == trial.int_seed("init")
            out = st.artifact(tid, "stdout.txt").decode()
            last = out.splitlines()[-1]
            assert (json.loads(last) == m) if mode == "stdout" else last == "no JSON here"
            assert st.artifact(tid, "stderr.txt").decode().count("stderr line") == 60
            assert rec["execution"]["exit_code"] == 0
            assert rec["execution"]["command"][-1] == rec["factors"]["model"]


def test_trial_seeds_helper(tmp_path):
    db = tmp_path / "h.db"
    run(command_spec("helper"), db, workers=1, progress=False)
    with Store(db, readonly=True) as st:
        rec = st.trial(2)
    from vareval.experiment.execution import make_trial

    trial = make_trial({**rec, "params": {}})
    assert rec["metrics"] == {
        "init": trial.int_seed("init"), "data_split": trial.int_seed("data_split")
    }
    with pytest.raises(ExperimentError, match="VAREVAL_SEED_"):
        trial_seeds({})


@pytest.mark.parametrize(
    "mode, reason",
    [
        ("exit", r"exited with status 3; stderr ends: fatal: out of memory"),
        ("signal", r"killed by signal SIGKILL"),
        ("none", r"reported no metrics.*\('finished, but no metrics'\)"),
        ("string", r"metric 'acc' is str 'high'; expected a real number"),
        ("badfile", r"metrics file \(\$VAREVAL_METRICS\) is not JSON"),
    ],
)
def test_failed_commands_keep_reason_and_stderr_tail(tmp_path, mode, reason):
    import re

    db = tmp_path / "f.db"
    bad = command_spec(mode, factors={"model": ["b"]}, seeds=1, configs=1)
    rep = run(bad, db, progress=False, engine="serial")
    assert (rep.done, rep.failed) == (0, 1)
    with Store(db, readonly=True) as st:
        rec = st.trial(1)
    assert re.search(reason, rec["error"]), rec["error"]
    tail = rec["traceback"].splitlines()
    if mode != "exit":
        assert tail == [f"stderr line {i}" for i in range(60 - STDERR_LINES, 60)]
        return
    assert len(tail) == STDERR_LINES and tail[-1] == "fatal: out of memory"
    # status shows the reason and the stderr tail
    out = subprocess.run([*CLI, "status", str(db)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "stderr (last 10 lines; all kept: --json):\n    | stderr line 51" in out.stdout
    assert out.stdout.rstrip().endswith("    | fatal: out of memory")


def test_mixed_failures_do_not_stop_the_run(tmp_path):
    db = tmp_path / "m.db"
    spec = command_spec("stdout", "--lr", "{lr}", trial={"command": [
        sys.executable, "-c",
        "import sys, json; m = sys.argv[1]; "
        "sys.exit(2) if m == 'b' else print(json.dumps({{'x': 1}}))", "{model}"]})
    rep = run(spec, db, workers=2, progress=False)
    assert (rep.done, rep.failed) == (4, 4)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("engine", ["local", "serial"])
def test_timeout_kills_the_whole_process_group(tmp_path, engine):
    pidfile = tmp_path / "pids"
    spec = command_spec("hang", "--pidfile", str(pidfile), factors={"model": ["a"]},
                        seeds=1, configs=1, timeout=1.5)
    rep = run(spec, tmp_path / "t.db", engine=engine, workers=1, progress=False)
    assert rep.failed == 1
    with Store(tmp_path / "t.db", readonly=True) as st:
        rec = st.trial(1)
    assert rec["error"].startswith("timed out after 1.5 s; its process group was killed")
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a process of the command outlived it"


def test_replay_of_a_command_trial(tmp_path):
    db = tmp_path / "r.db"
    run(command_spec("helper"), db, workers=2, progress=False)
    r = replay(db, 3)
    assert r.identical and r.status == "done" and r.comparable


def test_command_spec_from_toml_and_bad_declarations(tmp_path):
    text = """
[experiment]
trial = { command = ["python", "train.py", "--lr", "{lr}", "--epochs", "{epochs}"] }
seeds = 2
[factors]
model = ["a"]
[space]
lr = { distribution = "uniform", low = 0.1, high = 0.2 }
[params]
epochs = 3
[resources]
threads_per_trial = 2
gpus_per_trial = 1
"""
    spec = loads_spec(text, base=tmp_path)
    assert spec.command == ("python", "train.py", "--lr", "{lr}", "--epochs", "{epochs}")
    assert spec.cwd == str(tmp_path)
    assert ExperimentSpec.from_dict(spec.to_dict()).command == spec.command
    assert spec.to_dict()["trial"] == {"command": list(spec.command)}
    with pytest.raises(ExperimentError, match=r"placeholder \{momentum\} names no factor"):
        loads_spec(text.replace("{epochs}", "{momentum}"))
    with pytest.raises(ExperimentError, match="non-empty list of strings"):
        loads_spec(text.replace('["python", "train.py", "--lr", "{lr}", "--epochs", '
                                '"{epochs}"]', "[]"))
    with pytest.raises(ExperimentError, match="threads_per_trial must be an integer >= 1"):
        loads_spec(text.replace("threads_per_trial = 2", "threads_per_trial = 0"))
    with pytest.raises(ExperimentError, match="program 'no-such-program-x' is not on PATH"):
        run(command_spec(trial={"command": ["no-such-program-x"]}), tmp_path / "x.db")


def test_threads_default_share_and_override(tmp_path):
    cores = os.cpu_count()
    db = tmp_path / "t.db"
    rep = run(command_spec("stdout", factors={"model": ["a"]}), db, workers=1,
              progress=False)
    assert rep.threads == cores
    assert frame(db)["omp"].eq(cores).all()
    assert {e["threads"] for e in executions(db).values()} == {cores}
    db = tmp_path / "u.db"
    spec = command_spec(trial="_trials:devices_seen", factors={"model": ["a"]},
                        resources={"threads_per_trial": 1})
    rep = run(spec, db, workers=2, progress=False)
    df = frame(db)
    assert rep.threads == 1 and df["omp"].eq(1).all()
    # threadpoolctl limited the pools already loaded in the worker (numpy's BLAS)
    assert df["max_pool_threads"].le(1).all()


def _no_overlap_on_a_device(df):
    for _, group in df.groupby("device"):
        spans = sorted(zip(group["t0"], group["t1"], strict=True))
        assert all(b0 >= a1 for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False))


@pytest.mark.parametrize("kind", ["function", "command"])
def test_one_gpu_per_running_trial(tmp_path, kind):
    trial = (
        "_trials:devices_seen"
        if kind == "function"
        else {"command": [sys.executable, SCRIPT, "--sleep", "{sleep}"]}
    )
    spec = command_spec(trial=trial, factors={"model": ["a", "b"]}, seeds=3, configs=2,
                        params={"sleep": 0.2})
    assert spec.n_trials == 12
    db = tmp_path / "g.db"
    rep = run(spec, db, workers=2, gpus="0,1", progress=False)
    assert rep.done == 12 and rep.slots == ("0", "1")
    df = frame(db)
    assert df["n_devices"].eq(1).all() and set(df["device"]) == {0.0, 1.0}
    _no_overlap_on_a_device(df)
    assert {e["devices"] for e in executions(db).values()} == {"0", "1"}
    if kind == "function":
        assert df["hip_same"].eq(1).all()


def test_gpu_slots_and_cli_errors(tmp_path, monkeypatch):
    assert gpu_slots("0,1,2,3", 2) == ["0,1", "2,3"]
    assert gpu_slots([2, 5], None) == ["2", "5"]
    assert gpu_slots(None, None) is None
    with pytest.raises(ExperimentError, match="does not divide the 3 devices"):
        gpu_slots("0,1,2", 2)
    with pytest.raises(ExperimentError, match="names a device twice"):
        parse_gpus("0,0")
    with pytest.raises(ExperimentError, match="must be 'all' or device indices"):
        parse_gpus("0,x")
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi here
    with pytest.raises(ExperimentError, match=r"no GPU found \(nvidia-smi is not installed\)"):
        parse_gpus("all")
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: A100 (UUID: GPU-1)'\n"
                    "echo 'GPU 1: A100 (UUID: GPU-2)'\n")
    fake.chmod(0o755)
    assert parse_gpus("all") == ["0", "1"]
    monkeypatch.undo()
    toml = tmp_path / "e.toml"
    toml.write_text('[experiment]\ntrial = { command = ["true"] }\nseeds = 1\n'
                    '[factors]\nm = ["a"]\n')
    env = {**os.environ, "PATH": f"{tmp_path / 'none'}:/usr/bin:/bin"}
    out = subprocess.run([*CLI, "run", str(toml), "--store", str(tmp_path / "s.db"),
                          "--gpus", "all"], capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: --gpus all: no GPU found (nvidia-smi is not installed); name the devices "
        "(--gpus 0,1) or leave --gpus out to run without GPUs."
    ]


class _FakeRay:
    """Stands in for Ray whose local instance times out while starting."""

    def __init__(self, failures, message):
        self.failures, self.message, self.calls, self.shutdowns = failures, message, 0, 0

    def is_initialized(self):
        return False

    def init(self, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise Exception(self.message + "\n" + "traceback line\n" * 50)  # noqa: TRY002
        self.kwargs = kwargs

    def shutdown(self):
        self.shutdowns += 1


@pytest.mark.parametrize("failures, ok", [(2, True), (3, False)])
def test_ray_slow_start_gets_a_longer_wait_and_a_failed_one_one_line(monkeypatch,
                                                                      failures, ok):
    from vareval.experiment.engines import RAY_START_ATTEMPTS, start_ray

    ray = _FakeRay(failures, "The current node timed out during startup. This could "
                             "happen because some of the Ray processes failed to start.")
    if ok:
        start_ray(ray, None, {"num_cpus": 1})
        assert ray.calls == 3
        return
    with pytest.raises(ExperimentError) as info:
        start_ray(ray, None, {"num_cpus": 1})
    message = str(info.value)
    assert ray.calls == RAY_START_ATTEMPTS and "\n" not in message
    assert message.startswith("the local Ray instance did not start (The current node "
                              "timed out during startup.")
    assert "--engine local" in message and "ray start --head" in message


def test_ray_engine_start_failure_through_the_cli(tmp_path):
    """A Ray whose start fails: one `error:` line from `vareval run`, exit 2."""
    fake = tmp_path / "fake" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "def is_initialized():\n    return False\n"
        "def init(**kw):\n    raise Exception('The current node timed out during startup.')\n"
        "def shutdown():\n    pass\n"
    )
    toml = tmp_path / "e.toml"
    toml.write_text(f'[experiment]\ntrial = {{ command = ["{sys.executable}", "-c", '
                    '"print(1)"] }\nseeds = 1\n[factors]\nm = ["a"]\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "fake"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([*CLI, "run", str(toml), "--store", str(tmp_path / "s.db"),
                          "--engine", "ray", "--no-progress"], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the local Ray instance did not")


def test_run_trial_is_the_one_entry_point():
    task = {"id": 1, "factors": {"m": "a"}, "config": {}, "seed": 0, "config_index": 0,
            "config_label": "s0_c0", "rerun": 0,
            "seeds": {"init": {"entropy": 1, "spawn_key": [1, 1, 0, 0, 1, 2]}},
            "fn": "command", "paths": [], "params": {"k": [1, 2]}, "timeout": None,
            "command": [sys.executable, "-c",
                        "import json, sys; print(json.dumps({{'n': len(sys.argv[1])}}))",
                        "{k}"], "threads": 1}
    res = run_trial(task)
    assert res["status"] == "done" and res["metrics"] == {"n": len("[1, 2]")}
    assert res["execution"]["threads"] == 1
    res = run_trial({**task, "command": [sys.executable, "{nope}"]})
    assert res["status"] == "failed" and "placeholder {nope} has no value" in res["error"]
    assert signal.SIGTERM  # the module is importable without side effects


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_runner_killed_mid_command_leaves_nothing_behind(tmp_path, sig):
    """kill -9 (or SIGTERM) of `vareval run` while a command and its child hang."""
    pidfile = tmp_path / "pids"
    toml = tmp_path / "e.toml"
    toml.write_text(
        f'[experiment]\ntrial = {{ command = ["{sys.executable}", "{SCRIPT}", "--mode", '
        f'"hang", "--pidfile", "{pidfile}"] }}\nseeds = 1\n[factors]\nm = ["a"]\n'
        "[randomness]\nsources = [\"init\"]\n"
    )
    runner = subprocess.Popen([*CLI, "run", str(toml), "--store", str(tmp_path / "k.db"),
                               "--no-progress", "--workers", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids = []
    try:
        while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
            assert runner.poll() is None, "the run ended before its trial started"
            time.sleep(0.05)
        pids = [int(p) for p in pidfile.read_text().split()]
        runner.send_signal(sig)
        runner.wait(60)
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in pids), "the command outlived its runner"
    finally:  # never leave a hanging run behind, whatever failed
        for pid in [runner.pid, *pids]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        runner.wait()
