"""Simulated experiments from the LMM for checking the allocation's variance formula."""

import numpy as np
from scipy import stats

from vareval.experiment.design import reseeding_design
from vareval.experiment.simulate import simulate_responses


def simulated_differences(comps, size, *, configs, crn, n_sim, rng):
    """Differences of the two experiments' cell means over n_sim simulated experiments.

    One call of simulate_responses per kind of component over all simulations
    at once (labels carry the simulation index); the experiment-specific parts
    come from a second draw on labels split by experiment.
    """
    n_s, n_c, n_r = size
    base = reseeding_design({"model": ["a", "b"]}, seeds=n_s, configs=n_c, reruns=n_r,
                            nested=configs == "nested")
    k = len(base)
    sim = np.repeat(np.arange(n_sim), k)
    d = base.iloc[np.tile(np.arange(k), n_sim)].reset_index(drop=True)
    d["seed"] = sim.astype(str) + "/" + d["seed"].astype(str)
    d["config"] = sim.astype(str) + "/" + d["config"]
    own = d.assign(seed=d["seed"] + "/" + d["experiment"],
                   config=d["config"] + "/" + d["experiment"])
    root = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    r1, r2 = (np.random.default_rng(s) for s in root.spawn(2))
    shared = simulate_responses(d if crn else own, sd_seed=comps["seed"] ** 0.5,
                                sd_config=comps["config"] ** 0.5,
                                sd_residual=comps["residual"] ** 0.5, rng=r1)["y"]
    extra = simulate_responses(own, sd_seed=comps.get("seed:experiment", 0) ** 0.5,
                               sd_config=comps.get("config:experiment", 0) ** 0.5,
                               sd_residual=0.0, rng=r2)["y"]
    means = (shared + extra).groupby([sim, d["experiment"]]).mean().unstack()
    return (means["a"] - means["b"]).to_numpy()


def variance_interval(x, level=0.999):
    """Chi-square interval for a normal sample's variance."""
    n = x.size
    v = x.var(ddof=1)
    return (v * (n - 1) / stats.chi2.ppf((1 + level) / 2, n - 1),
            v * (n - 1) / stats.chi2.ppf((1 - level) / 2, n - 1))


