"""Regenerate vareval's bundled language-model-eval analogue, ``digits_eval.csv``.

Six scikit-learn classifiers (two of them one recipe trained with two
seeds), trained on 400 of scikit-learn's bundled handwritten digits, answer
a benchmark of 800 questions built from 200 other digits: each test image
is asked four times, as itself, rotated by +10 and -10 degrees, and with
added noise (the four questions of one "passage", which share its
difficulty). Each model answers every question
five times, each answer sampled at temperature 0.5 from its predicted class
probabilities, as a language model samples a generation; an answer scores 1
when it is the true digit. Run from the repository root:

    python examples/make_eval_benchmark.py

It rewrites ``src/vareval/datasets/digits_eval.csv`` (one row per model,
question and sample) in a few seconds. Everything is seeded, so the file is
reproduced exactly with the same scikit-learn, numpy and scipy versions (recorded
in ``src/vareval/datasets/digits_eval.md``).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import ndimage
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

OUT = Path(__file__).resolve().parents[1] / "src/vareval/datasets/digits_eval.csv"
SEED = 20261202
TRAIN, TEST = 400, 200  # images
SAMPLES = 5  # answers per question (epochs)
TEMPERATURE = 0.5
NOISE_SD = 3.0  # grey levels run 0-16

def _mlp(seed):
    return make_pipeline(StandardScaler(), MLPClassifier((32,), max_iter=2000, random_state=seed))


MODELS = {
    "knn": lambda: KNeighborsClassifier(n_neighbors=7),
    "logreg": lambda: make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=5000)),
    "random_forest": lambda: RandomForestClassifier(n_estimators=50, max_depth=8, random_state=0),
    "mlp_seed0": lambda: _mlp(0),
    "mlp_seed1": lambda: _mlp(1),
    "naive_bayes": lambda: GaussianNB(),
}


def variants(images: np.ndarray, rng) -> dict[str, np.ndarray]:
    """The four questions asked of each 8x8 test image, as flat feature rows."""

    def rotate(angle):
        return ndimage.rotate(images, angle, axes=(1, 2), reshape=False, order=1)

    flat = images.reshape(len(images), -1)
    noisy = np.clip(flat + rng.normal(0.0, NOISE_SD, flat.shape), 0.0, 16.0)
    return {
        "original": flat,
        "rot+10": rotate(10).reshape(flat.shape),
        "rot-10": rotate(-10).reshape(flat.shape),
        "noise": noisy,
    }


def sample_answers(proba: np.ndarray, rng) -> np.ndarray:
    """``SAMPLES`` answers per row, drawn from ``proba ** (1 / T)`` renormalised."""
    p = proba ** (1.0 / TEMPERATURE)
    cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    u = rng.random((len(p), SAMPLES, 1))
    return np.minimum((cdf[:, None, :] < u).sum(axis=2), p.shape[1] - 1)


def main():
    X, y = load_digits(return_X_y=True)
    item = np.arange(y.size)
    X_train, X_test, y_train, y_test, _, item_test = train_test_split(
        X, y, item, train_size=TRAIN, test_size=TEST, stratify=y, random_state=SEED
    )
    order = np.argsort(item_test)
    X_test, y_test, item_test = X_test[order], y_test[order], item_test[order]
    asked = variants(X_test.reshape(-1, 8, 8), np.random.default_rng([SEED, 0]))
    names = list(asked)
    # questions: image-major, the four variants of one image together
    features = np.stack([asked[v] for v in names], axis=1).reshape(-1, X.shape[1])
    image = np.repeat(item_test, len(names))
    variant = np.tile(names, TEST)
    gold = np.repeat(y_test, len(names))
    question = [f"{i}/{v}" for i, v in zip(image, variant, strict=True)]
    frames = []
    for m, (name, make) in enumerate(MODELS.items()):
        model = make().fit(X_train, y_train)
        answers = sample_answers(model.predict_proba(features), np.random.default_rng([SEED, 1, m]))
        frames.append(pd.DataFrame({
            "model": name,
            "question": np.repeat(question, SAMPLES),
            "image": np.repeat(image, SAMPLES),
            "variant": np.repeat(variant, SAMPLES),
            "digit": np.repeat(gold, SAMPLES),
            "epoch": np.tile(np.arange(1, SAMPLES + 1), len(gold)),
            "answer": answers.ravel(),
            "correct": (answers == gold[:, None]).ravel().astype(int),
        }))
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(OUT, index=False)
    for name, acc in table.groupby("model", sort=False)["correct"].mean().items():
        print(f"{name:14s} accuracy {acc:.4f}")
    print(f"wrote {len(table)} rows to {OUT}")


if __name__ == "__main__":
    main()
