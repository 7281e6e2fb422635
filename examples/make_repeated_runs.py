"""Regenerate vareval's bundled table of repeated runs (src/vareval/datasets/digits_runs.csv).

Three scikit-learn classifiers on the digits data set that ships with
scikit-learn, ten seeds each. A seed fixes both the stratified train/test
split (70/30) and the model's own randomness, and is shared by the three
methods, so their runs are paired by seed.

    python examples/make_repeated_runs.py src/vareval/datasets/digits_runs.csv
"""

import sys

import pandas as pd
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

MODELS = {
    "logreg": lambda seed: LogisticRegression(max_iter=2000, random_state=seed),
    "mlp": lambda seed: MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=seed),
    "forest": lambda seed: RandomForestClassifier(n_estimators=100, random_state=seed),
}


def main(out: str) -> None:
    X, y = load_digits(return_X_y=True)
    rows = []
    for seed in range(10):
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.3, stratify=y, random_state=seed
        )
        for name, make in MODELS.items():
            model = make_pipeline(StandardScaler(), make(seed)).fit(X_tr, y_tr)
            rows.append({"method": name, "seed": seed, "accuracy": model.score(X_te, y_te)})
    pd.DataFrame(rows).to_csv(out, index=False, float_format="%.6f")


if __name__ == "__main__":
    main(sys.argv[1])
