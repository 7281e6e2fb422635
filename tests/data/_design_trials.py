"""A cheap trial with known variance components, for stores made by `vareval run`.

score = 0.85 + model effect + seed effect (shared by every model and configuration
of a seed) + configuration effect (from its hyper-parameters) + rerun noise.
"""

import numpy as np

MODEL = {"logreg": 0.0, "forest": 0.02, "svc": -0.01}


def scored(trial):
    seed_effect = 0.02 * trial.rng("init").standard_normal()
    u = [v for v in trial.config.values() if isinstance(v, float)]
    config_effect = 0.03 * (float(np.mean(u)) - 0.5) if u else 0.0
    noise = 0.01 * np.random.default_rng(trial.trial_id).standard_normal()
    acc = 0.85 + MODEL[trial.factors["model"]] + seed_effect + config_effect + noise
    return {"accuracy": float(acc), "val_accuracy": float(acc + 0.01)}


def curved(trial):
    """:func:`scored`, reporting a two-step learning curve on the way."""
    out = scored(trial)
    for step in (1, 2):
        trial.report(step, accuracy=out["accuracy"] - 0.01 / step)
    return out


def deterministic(trial):
    """:func:`scored` without the rerun noise (a rerun repeats its trial bit for bit), plus a
    seed x model effect, so that the models' differences vary from seed to seed."""
    seed_effect = 0.02 * trial.rng("init").standard_normal()
    model = list(MODEL).index(trial.factors["model"])
    seed_model = 0.01 * np.random.default_rng([trial.seed, model]).standard_normal()
    u = [v for v in trial.config.values() if isinstance(v, float)]
    config_effect = 0.03 * (float(np.mean(u)) - 0.5) if u else 0.0
    acc = 0.85 + MODEL[trial.factors["model"]] + seed_effect + seed_model + config_effect
    return {"accuracy": float(acc), "val_accuracy": float(acc + 0.01 * u[0] if u else acc)}


def flaky(trial):
    """:func:`scored`, except that the third trial fails (a crash the store records)."""
    if trial.trial_id == 3:
        raise RuntimeError("out of memory (a failure the analysis must count, not drop)")
    return scored(trial)
