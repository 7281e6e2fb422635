"""Make small random designs near the boundary for the optimiser's test against lme4.

Each of the 40 designs: 2-3 experiments, 3-4 seeds shared by the experiments,
3-4 configurations per seed, 1-2 reruns; the seed, configuration and (in
every third design) seed x experiment SDs are each 0 (probability 0.2) or
10^u residual SDs, u uniform on [-4, 0.3], so most designs have a variance at
or next to zero. Design 40 is ``boundary_ml.csv``, whose ML fit once stopped
short of the boundary and was reported as not converged.
Writes ``small_designs.csv`` (column ``design``; ``three`` is 1 where the
model also has a seed x experiment intercept); ``small_designs.R`` fits each
with lme4 (REML and ML) and writes ``small_designs_ref.csv``.

    python tests/data/lme4/make_small_designs.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

N_DESIGNS = 40
HERE = Path(__file__).resolve().parent


def one_design(rng, d):
    n_exp = int(rng.integers(2, 4))
    n_seed = int(rng.integers(3, 5))
    n_conf = int(rng.integers(3, 5))
    n_rerun = int(rng.integers(1, 3))
    three = d % 3 == 2
    sd_res = 0.01
    ratios = np.where(rng.random(3) < 0.2, 0.0, 10.0 ** rng.uniform(-4, 0.3, 3))
    sd_seed, sd_conf, sd_se = sd_res * ratios
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
        + rng.normal(0, sd_seed, n_seed)[s]
        + rng.normal(0, sd_conf, (n_seed, n_conf))[s, c]
        + (rng.normal(0, sd_se, (n_exp, n_seed))[e, s] if three else 0.0)
        + rng.normal(0, sd_res, e.size)
    )
    return pd.DataFrame(
        {
            "design": d,
            "three": int(three),
            "experiment": [f"e{i}" for i in e],
            "seed": s,
            "config": [f"s{a}_c{b}" for a, b in zip(s, c, strict=True)],
            "rerun": r,
            "y": y,
        }
    )


def main():
    rng = np.random.default_rng(20261204)
    last = pd.read_csv(HERE / "boundary_ml.csv").assign(design=N_DESIGNS, three=0)
    out = pd.concat(
        [one_design(rng, d) for d in range(N_DESIGNS)] + [last], ignore_index=True
    )
    out.to_csv(HERE / "small_designs.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
