"""Cheap trials for the reading of reruns: one deterministic, one with nondeterminism.

score = 0.85 + model effect + seed effect + configuration effect (+ rerun noise), each
drawn from the trial's own streams, so reruns of the same streams are bit-identical
unless the trial adds noise of its own (as nondeterministic training does).
"""

import numpy as np

MODEL = {"logreg": 0.0, "forest": 0.02}
SCALE = {"logreg": 1.0, "forest": 1.6}  # seeds and configurations matter more to one model


def deterministic(trial):
    seed_effect = 0.02 * trial.rng("init").standard_normal()
    config_effect = 0.05 * (trial.config["lr"] - 0.5)
    model = trial.factors["model"]
    acc = 0.85 + MODEL[model] + SCALE[model] * (seed_effect + config_effect)
    val = acc + 0.01 * trial.rng("data_split").standard_normal()
    return {"accuracy": float(acc), "val_accuracy": float(val)}


def noisy(trial):
    """:func:`deterministic` plus noise that differs between reruns (nondeterminism)."""
    out = deterministic(trial)
    noise = 0.005 * np.random.default_rng([trial.trial_id, 17]).standard_normal()
    return {k: v + noise for k, v in out.items()}
