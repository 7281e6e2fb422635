"""Simulated re-seeding experiments with known variance components (two models).

score = mean[model] + seed + seed x model + configuration + stream noise + nondeterminism

- seed: shared by both models and every configuration of a seed (common random numbers);
- seed x model: how much a seed favours one model;
- configuration: per seed, shared by the models (configurations nested in seed, one space);
- stream noise: a function of the run's streams, so reruns that repeat the same
  streams (``rerun_mode = "same"``) repeat it and independent reruns redraw it;
- nondeterminism: fresh on every run, even with the same streams.

:func:`score` is the formula; :func:`known` is the trial for ``vareval run`` that
feeds it the run's streams; :func:`draw` feeds it a generator's draws for a whole
table at once (the simulations' bulk path).
"""

import numpy as np
from scipy.special import ndtri

MODELS = ("a", "b")
# name: seeds, configs, reruns, mode, sd seed, seed x model, config, noise, nondet, b - a
DESIGNS = {
    "base": (6, 2, 2, "independent", 0.02, 0.0, 0.01, 0.01, 0.0, 0.01),
    "seed x model": (6, 2, 2, "independent", 0.02, 0.015, 0.01, 0.01, 0.0, 0.01),
    "seed x model, null": (6, 2, 2, "independent", 0.02, 0.015, 0.01, 0.01, 0.0, 0.0),
    "all sources, null": (6, 3, 2, "independent", 0.02, 0.01, 0.01, 0.01, 0.0, 0.0),
    "same streams, nondeterminism": (6, 2, 3, "same", 0.02, 0.01, 0.01, 0.01, 0.005, 0.01),
    "same streams, null": (6, 2, 3, "same", 0.02, 0.01, 0.01, 0.01, 0.005, 0.0),
    "identical reruns (collapsed)": (6, 2, 3, "same", 0.02, 0.01, 0.01, 0.01, 0.0, 0.01),
    "4 seeds": (4, 2, 3, "independent", 0.02, 0.01, 0.01, 0.01, 0.0, 0.01),
    "10 seeds, 1 config": (10, 1, 2, "independent", 0.02, 0.005, 0.0, 0.01, 0.0, 0.0),
    "no config variance": (6, 2, 2, "independent", 0.02, 0.01, 0.0, 0.01, 0.0, 0.01),
    "no seed variance": (6, 2, 2, "independent", 0.0, 0.01, 0.01, 0.01, 0.0, 0.0),
    "large seed x model": (6, 2, 2, "independent", 0.01, 0.03, 0.005, 0.005, 0.0, 0.02),
    "8 seeds, 1 config, same streams": (8, 1, 2, "same", 0.02, 0.01, 0.01, 0.01, 0.005, 0.0),
}
MEAN_A = 0.8


def score(model, z_seed, z_sm, u_config, z_noise, z_nondet, sd):
    """The score of runs from their standard draws (``u_config`` uniform) and ``sd``."""
    s_seed, s_sm, s_conf, s_noise, s_nondet, delta = sd
    return (
        MEAN_A + delta * model + s_seed * z_seed + s_sm * z_sm
        + s_conf * ndtri(u_config) + s_noise * z_noise + s_nondet * z_nondet
    )  # fmt: skip


def known(trial):
    """Trial for ``vareval run``: the draws come from the run's streams."""
    p = trial.params
    sd = tuple(p[k] for k in ("sd_seed", "sd_sm", "sd_config", "sd_noise", "sd_nondet", "delta"))
    m = MODELS.index(trial.factors["model"])
    z = trial.rng("init").standard_normal(1 + len(MODELS))  # the seed's stream
    noise = trial.rng("batch_order").standard_normal((len(MODELS), 64))[m, trial.config_index]
    nondet = np.random.default_rng().standard_normal()  # no stream: nondeterminism
    y = score(m, z[0], z[1 + m], trial.config["u"], noise, nondet, sd)
    return {"y": float(y)}


def layout(design):
    """Model, seed, configuration and rerun codes of every run, in ``vareval run``'s order."""
    seeds, configs, reruns = DESIGNS[design][:3]
    m, s, c, r = np.meshgrid(np.arange(len(MODELS)), np.arange(seeds), np.arange(configs),
                             np.arange(reruns), indexing="ij")  # fmt: skip
    return m.ravel(), s.ravel(), c.ravel(), r.ravel()


def draw(design, rng, n_rep):
    """``n_rep`` tables' scores at once, shape (n_rep, runs), from ``rng``."""
    seeds, configs, reruns, mode = DESIGNS[design][:4]
    sd = DESIGNS[design][4:]
    m, s, c, r = layout(design)
    k = len(MODELS)
    z = rng.standard_normal((n_rep, seeds, 1 + k))
    u = rng.random((n_rep, seeds, configs))
    cell_noise = rng.standard_normal((n_rep, k, seeds, configs, reruns))
    if mode == "same":  # every rerun repeats the first one's streams
        cell_noise[..., 1:] = cell_noise[..., :1]
    nondet = rng.standard_normal((n_rep, m.size))
    return score(m, z[:, s, 0], z[:, s, 1 + m], u[:, s, c], cell_noise[:, m, s, c, r],
                 nondet, sd)  # fmt: skip


def frame(design, y):
    """One table as ``vareval run`` labels it (configurations nested in seed)."""
    import pandas as pd

    m, s, c, r = layout(design)
    models = np.array(MODELS)[m]
    d = pd.DataFrame({
        "model": models, "seed": s,
        "config": [f"s{b}_c{e}" for b, e in zip(s, c, strict=True)],
        "rerun": r, "y": y,
    })  # fmt: skip
    if DESIGNS[design][3] == "same" and DESIGNS[design][8] == 0:
        d = d[d["rerun"] == 0]  # identical reruns: one observation, analysed once
    return d
