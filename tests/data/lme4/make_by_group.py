"""Simulate a store whose configuration SD differs by model (for ``by_group``).

Three models with known configuration SDs (svc 0.05, mlp 0.02, forest 0.002;
each model samples its own six configurations), eight seeds shared by all
models (seed SD 0.01), two reruns (residual SD 0.01), 10 % of rows dropped.
Writes ``by_group_store.csv``; ``by_group.R`` fits it with lme4.

    python tests/data/lme4/make_by_group.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

SD_CONFIG = {"forest": 0.002, "mlp": 0.02, "svc": 0.05}
SD_SEED, SD_RESIDUAL = 0.01, 0.01
MEANS = {"forest": 0.90, "mlp": 0.91, "svc": 0.88}


def simulate(rng, n_seeds=8, n_configs=6, n_reruns=2, drop=0.1):
    """One store: rows (model, seed, config, rerun, y)."""
    rows = []
    b_seed = rng.normal(0, SD_SEED, n_seeds)
    for model, sd in SD_CONFIG.items():
        b_conf = rng.normal(0, sd, n_configs)
        for s in range(n_seeds):
            for c in range(n_configs):
                for r in range(n_reruns):
                    y = MEANS[model] + b_seed[s] + b_conf[c] + rng.normal(0, SD_RESIDUAL)
                    rows.append((model, s, f"{model}_c{c}", r, y))
    df = pd.DataFrame(rows, columns=["model", "seed", "config", "rerun", "y"])
    return df[rng.random(len(df)) >= drop].reset_index(drop=True)


if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "by_group_store.csv"
    simulate(np.random.default_rng(14)).to_csv(out, index=False, float_format="%.17g")
