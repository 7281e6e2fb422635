"""Trial functions the runner tests import (by path) in worker processes."""

import os
import time

import numpy as np


def _log(trial):
    path = trial.params.get("log")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{trial.trial_id} {os.getpid()}\n".encode())
        finally:
            os.close(fd)


def streams(trial):
    """Report draws from each source, the config and an identity check."""
    return {
        "init": float(trial.rng("init").normal()),
        "data_split": float(trial.rng("data_split").normal()),
        "lr": float(trial.config.get("lr", 0.0)),
    }


def split(trial):
    """A real scikit-learn split and model: test-set checksum and accuracy."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import SGDClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = load_breast_cancer(return_X_y=True)
    idx = np.arange(len(y))
    tr, te = train_test_split(
        idx, test_size=0.3, random_state=trial.random_state("data_split")
    )
    scaler = StandardScaler().fit(x[tr])
    clf = SGDClassifier(random_state=trial.random_state("init"), max_iter=20, tol=None)
    clf.fit(scaler.transform(x[tr]), y[tr])
    return {
        "split_checksum": float(np.sum(te * np.arange(1, len(te) + 1))),
        "coef0": float(clf.coef_[0, 0]),
        "accuracy": float(clf.score(scaler.transform(x[te]), y[te])),
    }


def hold(log) -> None:
    """Block once ``$VAREVAL_TEST_HOLD_AFTER`` trials are in ``log``, until the runner is killed.

    A test that must signal a runner while it still has work sets this in the
    runner's environment: the order then follows events, not sleeps, however
    loaded the machine is.
    """
    after = os.environ.get("VAREVAL_TEST_HOLD_AFTER")
    if after and log and os.path.exists(log):
        with open(log) as fh:
            if sum(1 for _ in fh) >= int(after):
                time.sleep(3600)


def _wait_for(check, limit=300.0) -> None:
    """Poll ``check()`` until it is true; a generous limit so a lost test never hangs CI."""
    end = time.monotonic() + limit
    while not check() and time.monotonic() < end:
        time.sleep(0.02)


def sleepy(trial):
    """Sleep ``params['sleep']`` seconds, log the run, return the seed (see :func:`hold`).

    With ``params['until']``, the trial first waits for that file to exist: a
    test releases it once it has seen what it waits for.
    """
    hold(trial.params.get("log"))
    until = trial.params.get("until")
    if until:
        _wait_for(lambda: os.path.exists(until))
    time.sleep(float(trial.params.get("sleep", 0.0)))
    _log(trial)
    return {"seed": trial.seed, "x": float(trial.rng("init").normal())}


def faulty(trial):
    """Seed 1 raises, seed 2 returns a string metric, seed 3 hangs; others succeed."""
    if trial.seed == 1:
        raise ValueError("boom at seed 1")
    if trial.seed == 2:
        return {"acc": "high"}
    if trial.seed == 3:
        pid_file = trial.params.get("pid_file")
        if pid_file:
            with open(pid_file, "w") as fh:
                fh.write(str(os.getpid()))
        time.sleep(600)
    return {"acc": 1.0}


def dies(trial):
    """Seed 0 kills its own process; others succeed."""
    if trial.seed == 0:
        os._exit(3)
    return {"acc": 1.0}


def not_a_mapping(trial):
    return 0.5


def trivial(trial):
    return {"x": 1.0}


def curvy(trial):
    """Report a learning curve of five steps and keep two artifacts."""
    lr = float(trial.config.get("lr", 0.1))
    for step in range(5):
        trial.report(step, loss=1.0 / (1.0 + lr * step), acc=step / 10.0)
    trial.report(5, loss=0.0)  # a metric reported alone at the last step
    trial.artifact("note.txt", f"trial {trial.trial_id}".encode())
    trial.artifact("blob.bin", bytes(range(256)) * int(trial.params.get("blob_kb", 1) * 4))
    return {"loss": 1.0 / (1.0 + 4 * lr)}


SD = {"seed": 0.02, "config": 0.05, "residual": 0.01}
MEANS = {"forest": 0.90, "svc": 0.85}


def components(trial):
    """A score with known variance components: seed, configuration within model, residual.

    The configuration effect is a fixed function of the model's own
    hyper-parameters (a standard normal made from their values), so the same
    configuration label means unrelated settings in the two models.
    """
    seed_effect = np.random.default_rng([trial.seed, 7]).normal() * SD["seed"]
    model = trial.factors["model"]
    key = [int(abs(hash(round(v, 12))) % 2**32) if isinstance(v, float) else int(v)
           for v in trial.config.values() if not isinstance(v, str)]
    config_effect = np.random.default_rng(key).normal() * SD["config"]
    noise = trial.rng("noise").normal() * SD["residual"]
    return {"score": MEANS[model] + seed_effect + config_effect + noise}


def on_ray(trial):
    """Record the Ray node that ran the trial (an artifact) and the runtime_env's flag.

    With ``params['barrier']`` (a folder) and ``params['meet']`` (a count), a
    trial waits until that many trials have started: those ran at the same
    time, so each held a CPU of its own.
    """
    import ray

    barrier = trial.params.get("barrier")
    if barrier:
        with open(os.path.join(barrier, str(trial.trial_id)), "w"):
            pass
        _wait_for(lambda: len(os.listdir(barrier)) >= int(trial.params["meet"]))
    trial.artifact("node", ray.get_runtime_context().get_node_id().encode())
    return {"flag": float(os.environ.get("VAREVAL_FLAG") == "on"),
            "cpus": float(len(ray.get_runtime_context().get_assigned_resources()))}


def ticking(trial):
    """Sleep, then log ``id pid time`` to ``params['log']``; seeds in ``hang`` hang.

    A hanging trial first logs ``start id pid`` to ``params['started']``.
    """
    if trial.seed in trial.params.get("hang", ()):
        with open(trial.params["started"], "a") as fh:
            fh.write(f"start {trial.trial_id} {os.getpid()}\n")
        time.sleep(600)
    hold(trial.params["log"])
    time.sleep(float(trial.params.get("sleep", 0.0)))
    fd = os.open(trial.params["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{trial.trial_id} {os.getpid()} {time.time():.6f}\n".encode())
    finally:
        os.close(fd)
    return {"x": float(trial.rng("init").normal())}


def devices_seen(trial):
    """The GPU devices and thread limit this trial was given, and when it ran."""
    from threadpoolctl import threadpool_info

    t0 = time.time()
    time.sleep(trial.params.get("sleep", 0.0))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    pools = [p["num_threads"] for p in threadpool_info()]
    return {
        "n_devices": len([d for d in visible.split(",") if d]),
        "device": float(visible) if visible.isdigit() else -1.0,
        "hip_same": float(os.environ.get("HIP_VISIBLE_DEVICES") == visible),
        "omp": float(os.environ.get("OMP_NUM_THREADS", "0")),
        "max_pool_threads": float(max(pools, default=0)),
        "t0": t0,
        "t1": time.time(),
        "init_seed": float(trial.int_seed("init")),
    }
