"""Write disjoint_seeds.csv: three experiments, each run on its own seeds.

Seeds are nested in experiments (experiment E0 uses seeds E00, E01, ...), each
seed samples its own configurations (labels distinct per seed), 1-3 reruns.
A design where Kenward-Roger's scaled and unscaled F differ by 3 %. Run from
the repository root:

    python tests/data/lme4/make_disjoint_seeds.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

rng = np.random.default_rng(1)
rows = []
rng.normal(0, 0.02, 9)  # (unused draw, kept so the file is reproducible)
for ei in range(3):
    e = f"E{ei}"
    for s in range(rng.integers(2, 4)):
        seed_effect = rng.normal(0, 0.01)
        for c in rng.choice(9, size=rng.integers(2, 9), replace=False):
            config_effect = rng.normal(0, 0.02)
            for r in range(rng.integers(1, 4)):
                y = 0.8 + 0.005 * ei + seed_effect + config_effect
                rows.append((e, f"{e}{s}", f"{e}{s}c{c}", r, y + rng.normal(0, 0.01)))
df = pd.DataFrame(rows, columns=["experiment", "seed", "config", "rerun", "y"])
df.to_csv(Path(__file__).with_name("disjoint_seeds.csv"), index=False)
