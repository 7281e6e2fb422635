"""Coverage of the stratified-bootstrap intervals on simulated tasks (slow tier).

Each simulated benchmark is one "method" of a single call, so every
simulation is resampled in the same vectorised pass. Tasks are normal with
their own mean and SD; the estimands are exact for that mixture.
"""

import numpy as np
import pytest
from scipy import optimize, special, stats

from vareval.stats import (
    aggregate_scores,
    interval_estimates,
    performance_profile,
    probabilities_of_improvement,
)

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


def _whole_curve_coverage(rng, sims, runs, resample_tasks):
    """Share of simulated suites whose band covers the true profile at every default tau.

    Tasks fixed: the 8 tasks of MU, SD. Tasks resampled: each suite draws 8
    task means from N(0.5, 0.2) and runs with SD 0.1, so the population
    profile is ``1 - Phi((tau - 0.5) / sqrt(0.2^2 + 0.1^2))``. The thresholds
    are the default ones (sample minimum to maximum), where the old sup-t band
    had zero width at the maximum and covered no curve at all.
    """
    if resample_tasks:
        mu = rng.normal(0.5, 0.2, size=(sims, MU.size))
        x = rng.normal(mu[..., None], 0.1, size=(sims, MU.size, runs))
    else:
        x = simulate(rng, sims, runs)
    taus = np.linspace(x.min(), x.max(), 101)
    r = performance_profile(x, taus, n_resamples=500, resample_tasks=resample_tasks, rng=rng)
    if resample_tasks:
        truth = 1 - special.ndtr((taus - 0.5) / np.hypot(0.2, 0.1))
    else:
        truth = 1 - mixture_cdf(taus)
    return ((r.band_low <= truth) & (truth <= r.band_high)).all(axis=1).sum(), r.band_note


@pytest.mark.slow
@pytest.mark.parametrize("resample_tasks", [False, True])
@pytest.mark.parametrize("runs", [3, 5, 10, 20])
def test_profile_band_covers_the_whole_curve(runs, resample_tasks, scaled):
    # Measured at 1,000 suites (docs/aggregate.md): 0.96-0.99 at 3 to 20 runs, tasks fixed or
    # resampled. The band may over-cover (a band over a discrete curve); it must not fall
    # below 95 % beyond a 99.9 % binomial interval.
    rng = np.random.default_rng(100 * runs + resample_tasks)
    sims = scaled(1000)
    hits, note = _whole_curve_coverage(rng, sims, runs, resample_tasks)
    print(f"whole-curve coverage, {runs} runs, tasks resampled {resample_tasks}: {hits}/{sims}")
    assert note == ""  # inside the measured range
    _, high = stats.binomtest(int(hits), sims).proportion_ci(0.999)
    assert high >= 0.95, f"{hits}/{sims} curves covered"


@pytest.mark.slow
@pytest.mark.parametrize("k, tasks, runs", [(4, 8, 5), (6, 5, 10)])
def test_improvement_of_the_best_over_the_others_holds_its_level_under_the_null(
    k, tasks, runs, scaled
):
    """All methods identical: how often does a default P(best > X) interval exclude 0.5?

    The default pairs (the best by IQM against each other) were unadjusted and
    excluded 0.5 in 25-46 % of tables; adjusted over the k (k - 1) / 2 pairs
    the best could have been picked from, at most alpha = 5 %.
    """
    rng = np.random.default_rng(k * tasks * runs)
    sims = scaled(400, minimum=100)
    family = k * (k - 1) // 2
    claims = plain = 0
    for _ in range(sims):  # one table per simulation: the pairs depend on its data
        x = rng.normal(size=(k, tasks, runs))
        best = int(np.argmax(aggregate_scores(x, ["iqm"])[:, 0]))
        pairs = [(best, j) for j in range(k) if j != best]
        found = probabilities_of_improvement(x, pairs, n_resamples=300, family=family, rng=rng)
        claims += any(r.low > 0.5 or r.high < 0.5 for r in found)
        unadjusted = (np.percentile(r.bootstrap_distribution, [2.5, 97.5]) for r in found)
        plain += any(not lo <= 0.5 <= hi for lo, hi in unadjusted)
    print(f"null tables with a claim: adjusted {claims}/{sims}, unadjusted {plain}/{sims}")
    low, _ = stats.binomtest(claims, sims).proportion_ci(0.999)
    assert low <= 0.05, f"{claims}/{sims} null tables claimed a difference"
    assert plain / sims > 0.1  # unadjusted, the selection shows
