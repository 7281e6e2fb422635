"""Regenerate vareval's bundled multi-task table (src/vareval/datasets/sklearn_tasks.csv).

Four scikit-learn classifiers on five data sets that ship with scikit-learn,
ten seeds each. A seed fixes the stratified 70/30 train/test split of a data
set and the model's own randomness, and is shared by the four methods, so
runs pair by (task, seed). Diabetes is a regression data set; its target is
split at the median to make a balanced two-class task.

    python examples/make_multitask_runs.py src/vareval/datasets/sklearn_tasks.csv
"""

import sys

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X, (y > np.median(y)).astype(int)


TASKS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "diabetes_binary": _diabetes,
}

MODELS = {
    "logreg": lambda seed: LogisticRegression(max_iter=2000, random_state=seed),
    "forest": lambda seed: RandomForestClassifier(n_estimators=100, random_state=seed),
    "knn": lambda seed: KNeighborsClassifier(n_neighbors=5),
    "naive_bayes": lambda seed: GaussianNB(),
}


def main(out: str) -> None:
    rows = []
    for task, load in TASKS.items():
        X, y = load()
        for seed in range(10):
            X_tr, X_te, y_tr, y_te = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=seed
            )
            for name, make in MODELS.items():
                model = make_pipeline(StandardScaler(), make(seed)).fit(X_tr, y_tr)
                rows.append(
                    {
                        "task": task,
                        "method": name,
                        "seed": seed,
                        "accuracy": model.score(X_te, y_te),
                    }
                )
    pd.DataFrame(rows).to_csv(out, index=False, float_format="%.6f")


if __name__ == "__main__":
    main(sys.argv[1])
