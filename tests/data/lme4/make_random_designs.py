"""Make random DECoVaC-shaped designs for the held-out comparison with lme4.

Each design: 2-5 experiments, 3-12 seeds, 2-9 configurations per seed (labels
shared by the experiments), 1-4 reruns, 0-25 % of rows dropped at random, and
in about a third of the designs no seed variance at all. The responses are
scaled by a random power of ten. Writes ``random_designs.csv`` (column
``design`` identifies the design); ``random_designs.R`` then fits each with
lme4/lmerTest/pbkrtest and writes ``random_designs_ref.csv``.

    python tests/data/lme4/make_random_designs.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

N_DESIGNS = 30
HERE = Path(__file__).resolve().parent


def one_design(rng, d):
    n_exp = int(rng.integers(2, 6))
    n_seed = int(rng.integers(3, 13))
    n_conf = int(rng.integers(2, 10))
    n_rerun = int(rng.integers(1, 5))
    sd_seed = 0.0 if rng.random() < 0.35 else rng.uniform(0.002, 0.03)
    sd_conf = rng.uniform(0.0, 0.03)
    sd_res = rng.uniform(0.003, 0.02)
    scale = 10.0 ** rng.integers(-3, 4)
    e, s, c, r = np.meshgrid(
        np.arange(n_exp), np.arange(n_seed), np.arange(n_conf), np.arange(n_rerun),
        indexing="ij",
    )
    e, s, c, r = (a.ravel() for a in (e, s, c, r))
    mu = 0.8 + rng.normal(0, 0.01, n_exp)
    b_seed = rng.normal(0, sd_seed, n_seed) if sd_seed else np.zeros(n_seed)
    b_conf = rng.normal(0, sd_conf, (n_seed, n_conf))
    y = mu[e] + b_seed[s] + b_conf[s, c] + rng.normal(0, sd_res, e.size)
    keep = rng.random(e.size) >= rng.uniform(0.0, 0.25)
    return pd.DataFrame(
        {
            "design": d,
            "experiment": [f"e{i}" for i in e[keep]],
            "seed": s[keep],
            "config": [f"s{a}_c{b}" for a, b in zip(s[keep], c[keep], strict=True)],
            "rerun": r[keep],
            "y": y[keep] * scale,
        }
    )


def main():
    rng = np.random.default_rng(20261130)
    df = pd.concat([one_design(rng, d) for d in range(N_DESIGNS)], ignore_index=True)
    df.to_csv(HERE / "random_designs.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
