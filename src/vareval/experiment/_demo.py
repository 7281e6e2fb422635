"""A tiny trial for ``vareval demo`` and tests: logistic regression by minibatch SGD.

The data set (600 points, 5 features) is fixed; the ``data_split`` stream
picks the 25 % test split, ``init`` the initial weights and ``batch_order``
the order of the minibatches. ``optimizer`` is ``sgd`` or ``momentum``.
"""

from __future__ import annotations

import numpy as np


def _dataset():
    gen = np.random.default_rng(np.random.SeedSequence(7, spawn_key=(2026,)))
    x = gen.normal(size=(600, 5))
    w = np.array([1.5, -2.0, 0.5, 0.0, 1.0])
    y = (x @ w + gen.normal(scale=1.5, size=600) > 0).astype(float)
    return x, y


def logistic_trial(trial):
    """Train and evaluate; returns ``accuracy`` and ``log_loss`` on the test split."""
    x, y = _dataset()
    order = trial.rng("data_split").permutation(len(y))
    test, train = order[:150], order[150:]
    w = trial.rng("init").normal(scale=0.1, size=x.shape[1])
    lr = float(trial.config.get("lr", 0.1))
    momentum = 0.9 if trial.factors.get("optimizer") == "momentum" else 0.0
    velocity = np.zeros_like(w)
    batches = trial.rng("batch_order")
    for _ in range(int(trial.params.get("epochs", 5))):
        for batch in np.array_split(batches.permutation(train), len(train) // 30):
            p = 1.0 / (1.0 + np.exp(-x[batch] @ w))
            grad = x[batch].T @ (p - y[batch]) / len(batch)
            velocity = momentum * velocity - lr * grad
            w = w + velocity
    p = np.clip(1.0 / (1.0 + np.exp(-x[test] @ w)), 1e-12, 1 - 1e-12)
    loss = -np.mean(y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p))
    return {"accuracy": float(np.mean((p > 0.5) == y[test])), "log_loss": float(loss)}


def trivial_trial(trial):
    """Do nothing: the benchmark's trial, so only the runner's overhead is measured."""
    return {"x": 1.0}
