"""Simulated responses for a re-seeding design with known variance components.

Used to check that the mixed model recovers what was put in, for the bundled
DECoVaC-shaped example, and for benchmarks. The layout itself always comes
from :func:`vareval.experiment.design.reseeding_design`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from vareval.errors import ArgumentError
from vareval.stats._checks import as_rng


def simulate_responses(
    design: pd.DataFrame,
    *,
    means: Mapping[str, float] | float = 0.0,
    sd_seed: float = 0.0,
    sd_config: float = 0.0,
    sd_residual: float = 1.0,
    column: str = "y",
    rng=None,
) -> pd.DataFrame:
    """Add a response drawn from ``mean[experiment] + b_seed + b_config + e``.

    Estimand: none; this generates data with known components
    ``b_seed ~ N(0, sd_seed^2)`` (one draw per seed), ``b_config ~
    N(0, sd_config^2)`` (one draw per configuration label) and
    ``e ~ N(0, sd_residual^2)`` (one per row), the random-intercept model of
    the DECoVaC paper (Bouthillier et al. style re-seeding; Dutt et al.).

    Parameters
    ----------
    design : pandas.DataFrame
        A table from :func:`reseeding_design` (needs ``experiment``, ``seed``
        and ``config``).
    means : mapping of str to float, or float
        The mean response per experiment, or one mean for all.
    sd_seed, sd_config, sd_residual : float
        Standard deviations of the components (>= 0).
    column : str
        Name of the added column.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        A copy of ``design`` with the response column added.
    """
    for name, value in (
        ("sd_seed", sd_seed),
        ("sd_config", sd_config),
        ("sd_residual", sd_residual),
    ):
        if not np.isfinite(value) or value < 0:
            raise ArgumentError(
                f"`{name}` must be a finite number >= 0; got {value!r}."
            )
    for col in ("experiment", "seed", "config"):
        if col not in design.columns:
            raise ArgumentError(
                f"`design` needs a {col!r} column (use reseeding_design)."
            )
    rng = as_rng(rng)
    exp = design["experiment"].astype(str).to_numpy()
    if isinstance(means, Mapping):
        missing = sorted(set(exp) - set(map(str, means)))
        if missing:
            raise ArgumentError(f"`means` has no value for experiment(s) {missing}.")
        mu = np.array([float(means[e]) for e in exp])
    else:
        mu = np.full(exp.size, float(means))
    seed_codes = pd.factorize(design["seed"])[0]
    config_codes = pd.factorize(design["config"].astype(str))[0]
    b_seed = rng.normal(0.0, sd_seed, seed_codes.max() + 1)
    b_config = rng.normal(0.0, sd_config, config_codes.max() + 1)
    e = rng.normal(0.0, sd_residual, exp.size)
    out = design.copy()
    out[column] = mu + b_seed[seed_codes] + b_config[config_codes] + e
    return out
