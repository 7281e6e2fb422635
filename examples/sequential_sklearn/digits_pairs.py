"""The trial: fit one small scikit-learn classifier on the digits data and score it.

At a seed every model sees the same train/test split (the ``data_split``
stream depends on the seed only: common random numbers), so the difference of
two models' accuracies at a seed is a paired observation.

``model`` is one of

- ``logreg``: a multinomial logistic regression trained by SGD, whose
  initial weights and minibatch order come from the ``init`` stream;
- ``logreg_again``: the same model, drawing its initial weights and order from
  its own ``init_again`` stream: an identical method, so the true difference
  from ``logreg`` is zero;
- ``naive_bayes``: Gaussian naive Bayes, far less accurate on these data.
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler


def train(trial):
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=trial.params["test_size"], stratify=y,
        random_state=trial.random_state("data_split"),
    )
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    model = trial.factors["model"]
    if model == "naive_bayes":
        clf = GaussianNB()
    else:
        stream = "init" if model == "logreg" else "init_again"
        clf = SGDClassifier(
            loss="log_loss", max_iter=trial.params["epochs"], tol=None,
            random_state=trial.random_state(stream),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x_train, y_train)
    return {"accuracy": float(np.mean(clf.predict(x_test) == y_test))}
