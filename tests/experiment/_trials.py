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


def sleepy(trial):
    """Sleep ``params['sleep']`` seconds, log the run, return the seed."""
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


def ticking(trial):
    """Sleep, then log ``id pid time`` to ``params['log']``; seeds in ``hang`` hang.

    A hanging trial first logs ``start id pid`` to ``params['started']``.
    """
    if trial.seed in trial.params.get("hang", ()):
        with open(trial.params["started"], "a") as fh:
            fh.write(f"start {trial.trial_id} {os.getpid()}\n")
        time.sleep(600)
    time.sleep(float(trial.params.get("sleep", 0.0)))
    fd = os.open(trial.params["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{trial.trial_id} {os.getpid()} {time.time():.6f}\n".encode())
    finally:
        os.close(fd)
    return {"x": float(trial.rng("init").normal())}
