"""Slow tier: coverage of the summary's interval on nested designs with known components.

Each simulated experiment is one "method" of a single table: 6 seeds x 4
configurations nested in the seed x 2 reruns, score = mu + seed + config +
rerun noise (SDs 0.02, 0.01, 0.005). The 95 % interval for the mean must
cover mu within Monte Carlo error of 95 %; the i.i.d. interval over the 48
rows (what summarize gave before it read the design) covers far less.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import vareval


@pytest.mark.slow
def test_the_clustered_interval_covers_and_the_iid_one_does_not(rng, scaled):
    n_sim, seeds, configs, reruns, mu = scaled(2000), 6, 4, 2, 0.8
    shape = (n_sim, seeds, configs, reruns)
    y = (
        mu
        + 0.02 * rng.standard_normal((n_sim, seeds, 1, 1))
        + 0.01 * rng.standard_normal((n_sim, seeds, configs, 1))
        + 0.005 * rng.standard_normal(shape)
    )
    idx = np.indices(shape).reshape(4, -1)
    df = pd.DataFrame({
        "sim": idx[0].astype(str), "seed": idx[1],
        "config": [f"s{s}_c{c}" for s, c in zip(idx[1], idx[2], strict=True)],
        "rerun": idx[3], "accuracy": y.ravel(),
    })  # fmt: skip
    frame = vareval.summarize(df, metric="accuracy", by="sim").to_frame()
    assert (frame["units"] == seeds).all()
    covered = (frame["mean_ci_low"] <= mu) & (mu <= frame["mean_ci_high"])
    flat = y.reshape(n_sim, -1)
    half = sps.t.ppf(0.975, flat.shape[1] - 1) * sps.sem(flat, axis=1)
    iid = np.abs(flat.mean(axis=1) - mu) <= half
    mc = 3 * np.sqrt(0.95 * 0.05 / n_sim)
    print(f"coverage over {n_sim} designs: clustered {covered.mean():.4f}, "
          f"i.i.d. {iid.mean():.4f}")  # fmt: skip
    assert abs(covered.mean() - 0.95) < mc
    assert iid.mean() < 0.8
