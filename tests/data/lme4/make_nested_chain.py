"""Make a seed / configuration / rerun nesting whose labels repeat across seeds.

3 experiments x 4 seeds x 4 configurations (labels c0-c3 in every seed) x 6
reruns (labels 0-5 in every configuration): 96 (seed, configuration, rerun)
cells, each run once per experiment. SDs: seed 0.03, configuration 0.02,
rerun 0.015, residual 0.005. Writes ``nested_chain.csv``; ``nested_chain.R``
fits ``y ~ experiment + (1 | seed/config/rerun)`` with lme4 and writes
``nested_chain_ref.csv``.

    python tests/data/lme4/make_nested_chain.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def main():
    rng = np.random.default_rng(5)
    e, s, c, r = (
        a.ravel()
        for a in np.meshgrid(np.arange(3), np.arange(4), np.arange(4), np.arange(6),
                             indexing="ij")  # fmt: skip
    )
    y = (
        0.8
        + 0.01 * e
        + rng.normal(0, 0.03, 4)[s]
        + rng.normal(0, 0.02, (4, 4))[s, c]
        + rng.normal(0, 0.015, (4, 4, 6))[s, c, r]
        + rng.normal(0, 0.005, e.size)
    )
    pd.DataFrame(
        {"experiment": [f"e{i}" for i in e], "seed": s, "config": [f"c{i}" for i in c],
         "rerun": r, "y": y}  # fmt: skip
    ).to_csv(HERE / "nested_chain.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
