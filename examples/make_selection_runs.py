"""Regenerate vareval's bundled search table (src/vareval/datasets/digits_search.csv).

Three scikit-learn classifiers on the digits data, each with its own search
space, 6 seeds x 4 configurations x 2 reruns. A fixed 30 % of the digits is
the test set (the same for every trial, never used to choose); a seed re-draws
the train/validation split of the rest (75/25) and the configurations (sampled
anew per seed); a rerun repeats seed and configuration with fresh model
randomness. Each trial records its validation and its test accuracy.

    python examples/make_selection_runs.py src/vareval/datasets/digits_search.csv
"""

import sys

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

# model -> (sample a configuration from a Generator, build the model from it and a seed)
SPACES = {
    "logreg": (
        lambda g: {"C": float(10 ** g.uniform(-4, 1))},
        lambda c, s: LogisticRegression(C=c["C"], max_iter=300, random_state=s),
    ),
    "svc": (
        lambda g: {"C": float(10 ** g.uniform(-2, 2)), "gamma": float(10 ** g.uniform(-4, -1))},
        lambda c, s: SVC(C=c["C"], gamma=c["gamma"], random_state=s),
    ),
    "forest": (
        lambda g: {"max_depth": int(g.integers(2, 12)),
                   "max_features": float(g.uniform(0.05, 0.5))},
        lambda c, s: RandomForestClassifier(
            n_estimators=30, max_depth=c["max_depth"], max_features=c["max_features"],
            random_state=s,
        ),
    ),
}  # fmt: skip


def main(out: str) -> None:
    X, y = load_digits(return_X_y=True)
    X_rest, X_te, y_rest, y_te = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=20261201
    )
    streams = np.random.SeedSequence(20261201).spawn(6)
    rows = []
    for seed, stream in enumerate(streams):
        split, configs, init = (np.random.default_rng(s) for s in stream.spawn(3))
        X_tr, X_va, y_tr, y_va = train_test_split(
            X_rest, y_rest, test_size=0.25, stratify=y_rest,
            random_state=int(split.integers(2**31)),
        )  # fmt: skip
        for model, (sample, build) in SPACES.items():
            for j in range(4):
                config = sample(configs)
                label = f"s{seed}_c{j}"
                for rerun in range(2):
                    clf = build(config, int(init.integers(2**31)))
                    fit = make_pipeline(StandardScaler(), clf).fit(X_tr, y_tr)
                    rows.append({
                        "model": model, "seed": seed, "config": label, "rerun": rerun,
                        **{f"param.{k}": v for k, v in config.items()},
                        "val_accuracy": fit.score(X_va, y_va),
                        "test_accuracy": fit.score(X_te, y_te),
                    })  # fmt: skip
    pd.DataFrame(rows).to_csv(out, index=False, float_format="%.6f")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "digits_search.csv")
