"""Coverage of the stratified-bootstrap intervals on simulated tasks (slow tier).

Each simulated benchmark is one "method" of a single call, so every
simulation is resampled in the same vectorised pass. Tasks are normal with
their own mean and SD; the estimands are exact for that mixture.
"""

import numpy as np
import pytest
from scipy import optimize, special, stats

from vareval.stats import interval_estimates, performance_profile

MU = np.linspace(0.2, 0.9, 8)
SD = np.linspace(0.05, 0.2, 8)[::-1]


def mixture_cdf(x):
    return special.ndtr((np.asarray(x)[..., None] - MU) / SD).mean(axis=-1)


def mixture_iqm():
    """25 % trimmed mean of the equal mixture of the tasks' normals, exactly."""
    q25, q75 = (optimize.brentq(lambda x, p=p: mixture_cdf(x) - p, -2, 3) for p in (0.25, 0.75))
    a, b = (q25 - MU) / SD, (q75 - MU) / SD
    inner = MU * (special.ndtr(b) - special.ndtr(a)) - SD * (stats.norm.pdf(b) - stats.norm.pdf(a))
    return inner.mean() / 0.5


def simulate(rng, sims, runs):
    return rng.normal(MU[:, None], SD[:, None], size=(sims, MU.size, runs))


def covered_within_binomial(hits, sims, level):
    low, high = stats.binomtest(int(hits), sims).proportion_ci(0.999)
    return low <= level <= high


@pytest.mark.slow
@pytest.mark.parametrize("ci", ["percentile", "bca"])
def test_iqm_and_mean_intervals_reach_nominal_coverage(ci, scaled):
    # With 30 runs the bootstrap's (n - 1) / n variance shrinkage shows (about 93.5 %);
    # with 50 it is close to 95 %: over 4,000 sets the IQM's percentile interval covered
    # 94.25 % and the mean's 94.65 %. So close to the edge, a fresh seed per run failed about
    # one run in a hundred at 500 sets; a fixed seed keeps CI deterministic, and a real loss
    # of coverage still fails.
    rng = np.random.default_rng(0)
    sims = scaled(2000)
    x = simulate(rng, sims, runs=50)
    r = interval_estimates(x, ["iqm", "mean"], n_resamples=1000, ci=ci, rng=rng)
    truth = np.array([mixture_iqm(), MU.mean()])
    hits = ((r.low <= truth) & (truth <= r.high)).sum(axis=0)
    for name, h in zip(("iqm", "mean"), hits, strict=True):
        assert covered_within_binomial(h, sims, 0.95), f"{name}: {h}/{sims} covered"


@pytest.mark.slow
def test_profile_band_covers_the_whole_curve(scaled, rng):
    # Tasks that overlap the thresholds (SD 0.3): where a task's runs all fall on one
    # side of tau the bootstrap sees no variation there, and coverage drops (92.5 %
    # with the narrower tasks above; 91 % with 10 runs): see docs/aggregate.md.
    sims = scaled(1000)
    sd = np.full(MU.size, 0.3)
    x = rng.normal(MU[:, None], sd[:, None], size=(sims, MU.size, 30))
    taus = np.linspace(0.3, 0.8, 26)
    r = performance_profile(x, taus, n_resamples=1000, rng=rng)
    truth = 1 - special.ndtr((taus[:, None] - MU) / sd).mean(axis=-1)
    whole = ((r.band_low <= truth) & (truth <= r.band_high)).all(axis=1).sum()
    pointwise = ((r.pointwise_low <= truth) & (truth <= r.pointwise_high)).all(axis=1).mean()
    assert covered_within_binomial(whole, sims, 0.95), f"{whole}/{sims} curves covered"
    assert pointwise < 0.9  # pointwise intervals do not cover the whole curve
