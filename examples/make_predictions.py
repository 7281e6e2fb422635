"""Regenerate vareval's bundled per-item predictions example.

Four scikit-learn classifiers are trained on half of scikit-learn's bundled
handwritten digits data (1,797 8x8 images, 10 classes; UCI optdigits test
set) and predict the other half. The output has one row per test item: the
item's index in ``load_digits()``, its gold digit, and each model's
prediction. Run from the repository root:

    python examples/make_predictions.py

It rewrites ``src/vareval/datasets/digits_predictions.csv``. Everything is
seeded, so the file is reproduced exactly with the same scikit-learn version
(recorded in ``src/vareval/datasets/digits_predictions.md``).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

OUT = (
    Path(__file__).resolve().parents[1] / "src/vareval/datasets/digits_predictions.csv"
)

MODELS = {
    "logreg": lambda: make_pipeline(
        StandardScaler(), LogisticRegression(C=0.05, max_iter=5000)
    ),
    "knn": lambda: KNeighborsClassifier(n_neighbors=5),
    "random_forest": lambda: RandomForestClassifier(
        n_estimators=30, max_depth=8, random_state=0
    ),
    "naive_bayes": lambda: GaussianNB(),
}


def main():
    X, y = load_digits(return_X_y=True)
    items = np.arange(y.size)
    X_train, X_test, y_train, y_test, _, item_test = train_test_split(
        X, y, items, test_size=0.5, stratify=y, random_state=20261129
    )
    table = pd.DataFrame({"item": item_test, "gold": y_test})
    for name, make in MODELS.items():
        table[name] = make().fit(X_train, y_train).predict(X_test)
    table = table.sort_values("item").reset_index(drop=True)
    table.to_csv(OUT, index=False)
    for name in MODELS:
        print(f"{name:14s} accuracy {np.mean(table[name] == table['gold']):.4f}")
    print(f"wrote {len(table)} rows to {OUT}")


if __name__ == "__main__":
    main()
