"""Slow tier (a): the allocation's predicted SE against simulated experiments from the LMM."""

import itertools

import numpy as np
import pytest
from scipy import stats

from vareval.stats.budget.allocation import allocate

CASES = {
    "seed-heavy": {"seed": 2.0, "config": 0.5, "seed:experiment": 0.8,
                   "config:experiment": 0.2, "residual": 1.0},
    "config-heavy": {"seed": 0.2, "config": 3.0, "seed:experiment": 0.1,
                     "config:experiment": 1.0, "residual": 0.5},
    "rerun-heavy": {"seed": 0.1, "config": 0.1, "residual": 4.0},
}
SETTINGS = list(itertools.product(CASES, ("nested", "crossed"), (True, False)))
N_CHECKS = len(SETTINGS) * 4  # Bonferroni over every variance checked


@pytest.mark.slow
@pytest.mark.parametrize("case,configs,crn", SETTINGS)
def test_predicted_se_matches_simulation_and_beats_naive_designs(
    case, configs, crn, scaled, allocation_sim
):
    comps = CASES[case]
    n_sim = scaled(4000, minimum=1000)
    a = allocate(comps, budget=60, configs=configs, crn=crn, versus=[(4, 5, 3)])
    table = a.to_frame().set_index("design")
    rows = ["optimal", "all seeds", "all reruns", "4x5x3"]
    level = 1 - 0.01 / N_CHECKS
    seeds = np.random.SeedSequence([20261201, len(case), configs == "nested", crn]).spawn(4)
    simulated = {}
    for name, ss in zip(rows, seeds, strict=True):
        r = table.loc[name]
        design = (int(r["n_seeds"]), int(r["n_configs"]), int(r["n_reruns"]))
        x = allocation_sim.simulated_differences(comps, design, configs=configs, crn=crn,
                                                 n_sim=n_sim, rng=ss)
        lo, hi = allocation_sim.variance_interval(x, level=level)
        assert lo < r["se"] ** 2 < hi, (name, design, r["se"] ** 2, lo, hi)
        simulated[name] = x.var(ddof=1)
    crit = stats.f.ppf(level, n_sim - 1, n_sim - 1)
    for name in rows[1:]:
        predicted = (table.loc[name, "se"] / a.se) ** 2
        observed = simulated[name] / simulated["optimal"]
        assert predicted >= 1 - 1e-12  # the optimum is never worse, by the formula
        assert observed / crit < predicted < observed * crit  # the gain is the formula's
        if predicted > 2:  # where the theory says it should, the optimum wins significantly
            assert observed > crit
