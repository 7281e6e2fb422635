"""The trial: train one scikit-learn model on the digits data and score it.

Each source of randomness has its own stream, so the design controls them
separately:

- ``data_split``: which 30 % of the 1,797 digits form the test set
  (held fixed across seeds in experiment.toml, so every seed and model is
  scored on the same test set);
- ``init``: the initial weights (``random_state`` of the network);
- ``batch_order``: the order of the minibatches in every epoch.

``model`` is ``mlp`` (one hidden layer) or ``logreg`` (no hidden layer: a
multinomial logistic regression trained by the same optimizer);
``optimizer`` is ``sgd`` (with Nesterov momentum) or ``adam``.
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler


def train(trial):
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.3, stratify=y, random_state=trial.random_state("data_split")
    )
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)

    cfg = trial.config
    hidden = (int(cfg["hidden"]),) if trial.factors["model"] == "mlp" else ()
    clf = MLPClassifier(
        hidden_layer_sizes=hidden,
        solver=trial.factors["optimizer"],
        learning_rate_init=cfg["learning_rate"],
        alpha=cfg["alpha"],
        momentum=0.9,
        batch_size=int(cfg["batch_size"]),
        shuffle=False,  # the batch order comes from its own stream below
        random_state=trial.random_state("init"),
    )
    classes = np.unique(y)
    order = trial.rng("batch_order")
    batch = int(cfg["batch_size"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(int(trial.params["epochs"])):
            perm = order.permutation(len(y_train))
            for start in range(0, len(perm), batch):
                idx = perm[start : start + batch]
                clf.batch_size = len(idx)  # the last batch of an epoch is smaller
                clf.partial_fit(x_train[idx], y_train[idx], classes=classes)
    proba = np.clip(clf.predict_proba(x_test), 1e-15, 1.0)
    return {
        "accuracy": float(np.mean(clf.predict(x_test) == y_test)),
        "log_loss": float(-np.mean(np.log(proba[np.arange(len(y_test)), y_test]))),
    }
