"""Regenerate vareval's bundled binary predictions example (labels and scores).

Three scikit-learn classifiers are trained on half of scikit-learn's bundled
breast cancer data (569 tumours, malignant or benign; the Wisconsin
Diagnostic Breast Cancer data) and predict the other half. The output has one
row per test item: the item's index in ``load_breast_cancer()``, its gold
class, and for each model its predicted class (column ``<model>``) and its
predicted probability of ``malignant`` (column ``<model>_score``). Run from
the repository root:

    python examples/make_binary_predictions.py

It rewrites ``src/vareval/datasets/breast_cancer_predictions.csv``. Everything
is seeded, so the file is reproduced exactly with the same scikit-learn
version (recorded in ``src/vareval/datasets/breast_cancer_predictions.md``).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

OUT = (
    Path(__file__).resolve().parents[1]
    / "src/vareval/datasets/breast_cancer_predictions.csv"
)

MODELS = {
    "logreg": lambda: make_pipeline(
        StandardScaler(), LogisticRegression(C=0.05, max_iter=5000)
    ),
    "naive_bayes": lambda: GaussianNB(),
    "tree": lambda: DecisionTreeClassifier(max_depth=3, random_state=0),
}


def main():
    data = load_breast_cancer()
    names = data.target_names[data.target]  # 'malignant' or 'benign'
    items = np.arange(names.size)
    X_train, X_test, y_train, y_test, _, item_test = train_test_split(
        data.data, names, items, test_size=0.5, stratify=names, random_state=20261201
    )
    table = pd.DataFrame({"item": item_test, "gold": y_test})
    for name, make in MODELS.items():
        model = make().fit(X_train, y_train)
        column = list(model.classes_).index("malignant")
        table[name] = model.predict(X_test)
        table[f"{name}_score"] = model.predict_proba(X_test)[:, column]
    table = table.sort_values("item").reset_index(drop=True)
    table.to_csv(OUT, index=False)
    positive = table["gold"] == "malignant"
    for name in MODELS:
        acc = np.mean(table[name] == table["gold"])
        auc = roc_auc_score(positive, table[f"{name}_score"])
        print(f"{name:12s} accuracy {acc:.4f}  AUC {auc:.4f}")
    print(f"wrote {len(table)} rows to {OUT}")


if __name__ == "__main__":
    main()
