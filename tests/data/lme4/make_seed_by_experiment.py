"""Make designs whose experiments share seeds, with a seed x experiment variance.

Design 0 is balanced: 3 experiments, 8 seeds, 3 configurations per seed
(labels shared by the experiments, distinct per seed), 2 reruns. Design 1 is
design 0 with 20 % of its rows dropped at random. SDs: seed 0.010, seed x
experiment 0.008, configuration 0.006, residual 0.005. Writes
``seed_by_experiment.csv``; ``seed_by_experiment.R`` fits
``y ~ experiment + (1 | seed) + (1 | config) + (1 | seed:experiment)`` with lme4,
lmerTest and pbkrtest and writes ``seed_by_experiment_ref.csv``.

    python tests/data/lme4/make_seed_by_experiment.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def main():
    rng = np.random.default_rng(32)
    n_exp, n_seed, n_conf, n_rerun = 3, 8, 3, 2
    e, s, c, r = (
        a.ravel()
        for a in np.meshgrid(
            np.arange(n_exp), np.arange(n_seed), np.arange(n_conf), np.arange(n_rerun),
            indexing="ij",
        )
    )
    y = (
        0.8
        + 0.01 * e
        + rng.normal(0, 0.010, n_seed)[s]
        + rng.normal(0, 0.008, (n_exp, n_seed))[e, s]
        + rng.normal(0, 0.006, (n_seed, n_conf))[s, c]
        + rng.normal(0, 0.005, e.size)
    )
    d = pd.DataFrame(
        {
            "experiment": [f"e{i}" for i in e],
            "seed": s,
            "config": [f"s{a}_c{b}" for a, b in zip(s, c, strict=True)],
            "rerun": r,
            "y": y,
        }
    )
    keep = rng.random(len(d)) >= 0.2
    out = pd.concat([d.assign(design=0), d[keep].assign(design=1)], ignore_index=True)
    out.to_csv(HERE / "seed_by_experiment.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
