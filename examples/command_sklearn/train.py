"""A plain training script: argparse in, one JSON line of metrics out.

It knows nothing of vareval's Python API. vareval runs it once per trial with
the hyper-parameters on the command line (experiment.toml fills them in) and
the seeds in the environment (``VAREVAL_SEED_DATA_SPLIT``, ``VAREVAL_SEED_INIT``);
run by hand, it takes ``--seed`` instead:

    python train.py --model forest --n-estimators 50 --max-depth 8 --seed 0
"""

import argparse
import json
import os

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def seed(name: str, fallback: int) -> int:
    """The seed vareval gives this source, or ``--seed`` when run by hand."""
    return int(os.environ.get(f"VAREVAL_SEED_{name.upper()}", fallback))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=["forest", "boosting", "logreg"], required=True)
    p.add_argument("--n-estimators", type=int, default=100)
    p.add_argument("--max-depth", type=int, default=None)
    p.add_argument("--learning-rate", type=float, default=0.1)
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--test-size", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    x, y = load_breast_cancer(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=args.test_size, stratify=y,
        random_state=seed("data_split", args.seed),
    )
    init = seed("init", args.seed)
    if args.model == "forest":
        clf = RandomForestClassifier(
            n_estimators=args.n_estimators, max_depth=args.max_depth, random_state=init
        )
    elif args.model == "boosting":
        clf = HistGradientBoostingClassifier(
            max_iter=args.n_estimators, max_depth=args.max_depth,
            learning_rate=args.learning_rate, random_state=init,
        )
    else:
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=args.C, max_iter=2000))
    clf.fit(x_train, y_train)
    proba = clf.predict_proba(x_test)[:, 1]
    print(json.dumps({
        "accuracy": float(np.mean((proba > 0.5) == y_test)),
        "auc": float(roc_auc_score(y_test, proba)),
        "log_loss": float(log_loss(y_test, proba)),
    }))


if __name__ == "__main__":
    main()
