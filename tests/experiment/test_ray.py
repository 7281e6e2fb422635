"""The ray engine on a real local cluster: a head node and a worker node (two raylets).

Skipped without Ray (an optional extra: ``pip install 'vareval[ray]'``). The
cluster is started with ``ray start --block`` (head, then a worker joining
it), each in its own process group, and stopped by ending those processes.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray engine needs Ray (pip install 'vareval[ray]')")

from vareval.errors import ExperimentError  # noqa: E402
from vareval.experiment import ExperimentSpec, Store, run  # noqa: E402

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parents[1] / "src")
RAY = str(Path(sys.executable).with_name("ray"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A two-node Ray cluster on this machine; yields its address."""
    if not os.path.exists(RAY):
        pytest.skip("the `ray` command is not beside this Python")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    temp = tmp_path_factory.mktemp("ray")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(HERE)]),
           "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--block", "--num-cpus", "1", "--disable-usage-stats"]
    nodes = [subprocess.Popen(
        [RAY, "start", "--head", "--port", str(port), "--node-ip-address", "127.0.0.1",
         "--include-dashboard", "false", "--temp-dir", str(temp), *common],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_nodes(address, 1, nodes)
        nodes.append(subprocess.Popen(
            [RAY, "start", "--address", address, "--node-ip-address", "127.0.0.1", *common],
            env=env, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        _wait_nodes(address, 2, nodes)
        yield address
    finally:
        for proc in reversed(nodes):  # each `ray start --block` stops its node's processes
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in nodes:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def _wait_nodes(address, n, procs, limit=120.0):
    code = (f"import ray; ray.init(address={address!r}, log_to_driver=False); "
            "print(sum(x['Alive'] for x in ray.nodes()))")
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if any(p.poll() is not None for p in procs):
            pytest.fail("a `ray start` process ended early")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60)
        if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(n)]:
            return
        time.sleep(1.0)
    pytest.fail(f"the Ray cluster did not reach {n} nodes in {limit:g} s")


def _spec(**kw):
    base = dict(
        trial="_trials:on_ray", factors={"model": ["a", "b"]}, seeds=4, entropy=1,
        sources=("init",), paths=(str(HERE),), params={},
        resources={"num_cpus": 1, "memory": "50MB"},
        runtime_env={"env_vars": {"VAREVAL_FLAG": "on"}},
    )
    base.update(kw)
    return ExperimentSpec(**base)


def test_trials_run_on_both_nodes_with_their_resources(cluster, tmp_path):
    path, barrier = tmp_path / "ray.db", tmp_path / "started"
    barrier.mkdir()
    # the first two trials wait for each other, so they ran at once: one per node's CPU
    spec = _spec(params={"barrier": str(barrier), "meet": 2})
    report = run(spec, path, engine="ray", address=cluster, progress=False)
    assert report.done == 8 and report.failed == 0
    assert report.workers == 2  # one trial per node's single CPU
    with Store(path) as st:
        df = st.frame()
        nodes = {st.artifact(t, "node") for t in df["trial_id"]}
    assert len(nodes) == 2  # both raylets ran trials
    assert (df["flag"] == 1.0).all()  # the runtime_env reached the workers
    assert (df["cpus"] >= 1).all()  # each task held its CPU (and memory) resources


def test_a_trial_larger_than_any_node_is_refused(cluster, tmp_path):
    with pytest.raises(ExperimentError, match="cannot run one trial"):
        run(_spec(resources={"num_gpus": 1}), tmp_path / "gpu.db", engine="ray",
            address=cluster, progress=False)


def test_a_notebook_function_runs_on_the_cluster(cluster, tmp_path):
    namespace = {"__name__": "__main__"}
    exec(  # noqa: S102 - a notebook cell: the function exists only in this process
        "def train(trial):\n"
        "    import ray\n"
        "    trial.artifact('node', ray.get_runtime_context().get_node_id().encode())\n"
        "    return {'seed': float(trial.seed)}\n",
        namespace,
    )
    path = tmp_path / "nb.db"
    report = run(_spec(trial="unused:train", params={}), path, trial=namespace["train"],
                 engine="ray", address=cluster, progress=False)
    assert report.done == 8 and report.failed == 0
    with Store(path) as st:
        assert st.spec().trial == "__main__:train"
        assert sorted(st.frame()["seed"]) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_command_trial_runs_on_the_cluster(cluster, tmp_path):
    """The same run_trial as every engine: placeholders, seeds, threads, stdout metrics."""
    script = ("import json, os, sys; print(json.dumps({{'seed': int(sys.argv[1]), "
              "'init': int(os.environ['VAREVAL_SEED_INIT']), "
              "'omp': int(os.environ['OMP_NUM_THREADS'])}}))")
    path = tmp_path / "cmd.db"
    spec = _spec(trial={"command": [sys.executable, "-c", script, "{seed}"]})
    report = run(spec, path, engine="ray", address=cluster, progress=False)
    assert report.done == 8 and report.failed == 0 and report.threads == 1
    with Store(path) as st:
        df = st.frame()
        from vareval.experiment.execution import make_trial

        rec = st.trial(3)
        assert rec["metrics"]["init"] == make_trial({**rec, "params": {}}).int_seed("init")
    assert sorted(df["seed"]) == [0, 0, 1, 1, 2, 2, 3, 3] and (df["omp"] == 1).all()
