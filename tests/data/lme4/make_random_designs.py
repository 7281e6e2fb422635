"""Make random DECoVaC-shaped designs for the held-out comparison with lme4.

Each design: 2-5 experiments, 3-12 seeds, 2-9 configurations per seed (labels
shared by the experiments), 1-4 reruns, 0-25 % of rows dropped at random, and
in about a third of the designs no seed variance at all; in the last
``N_UNBALANCED`` designs each experiment loses its own share (0-70 %) of the
rows, and in ``N_RAGGED`` small ones each experiment runs on its own number
of seeds (where the basis of the multi-df Satterthwaite test matters). The
responses are scaled by a random power of ten. Writes ``random_designs.csv``
(column ``design`` identifies the design); ``random_designs.R`` then fits each with
lme4/lmerTest/pbkrtest and writes ``random_designs_ref.csv``.

    python tests/data/lme4/make_random_designs.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

N_DESIGNS = 30
N_UNBALANCED = 6
N_RAGGED = 6
HERE = Path(__file__).resolve().parent


def one_design(rng, d, unbalanced=False):
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
    drop = rng.uniform(0.0, 0.7, n_exp)[e] if unbalanced else rng.uniform(0.0, 0.25)
    keep = rng.random(e.size) >= drop
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


def ragged_design(rng, d):
    rows = []
    for e in range(int(rng.integers(3, 7))):
        for s in range(int(rng.integers(2, 10))):
            for c in range(int(rng.integers(1, 4))):
                rows += [(e, s, c)] * int(rng.integers(1, 3))
    e, s, c = np.array(rows).T
    b_seed = rng.normal(0, 1, 10)
    b_conf = rng.normal(0, 1, (10, 3))
    y = b_seed[s] + b_conf[s, c] + rng.normal(0, 0.5, e.size)
    return pd.DataFrame(
        {
            "design": d,
            "experiment": [f"e{i}" for i in e],
            "seed": s,
            "config": [f"s{a}_c{b}" for a, b in zip(s, c, strict=True)],
            "rerun": 0,
            "y": y,
        }
    )


def main():
    rng = np.random.default_rng(20261130)
    parts = [one_design(rng, d) for d in range(N_DESIGNS)]
    parts += [
        one_design(rng, d, unbalanced=True)
        for d in range(N_DESIGNS, N_DESIGNS + N_UNBALANCED)
    ]
    start = N_DESIGNS + N_UNBALANCED
    parts += [ragged_design(rng, d) for d in range(start, start + N_RAGGED)]
    df = pd.concat(parts, ignore_index=True)
    df.to_csv(HERE / "random_designs.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
