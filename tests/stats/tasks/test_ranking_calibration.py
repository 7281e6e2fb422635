"""Slow tier: the level of the rank tests and ASO's false-positive rate under a true null.

Rates are compared with exact binomial (Clopper-Pearson) intervals at 99 %, so a
failure means the level is off, not that the simulation was unlucky.
"""

import numpy as np
import pytest

from vareval.stats import aso, critical_difference, friedman
from vareval.stats.tuning.coverage import clopper_pearson

pytestmark = pytest.mark.slow


def _interval(hits, n):
    return clopper_pearson(int(hits), int(n), confidence=0.99)


@pytest.mark.parametrize(("n", "k"), [(10, 4), (25, 5)])
def test_friedman_level_under_the_null(scaled, rng, n, k):
    sims = scaled(4000)
    results = [friedman(rng.normal(size=(n, k))) for _ in range(sims)]
    chi2_rate = np.mean([r.pvalue < 0.05 for r in results])
    f_rate = np.mean([r.iman_davenport_pvalue < 0.05 for r in results])
    low, high = _interval(f_rate * sims, sims)
    assert low <= 0.05 <= high, f"Iman-Davenport rejects {f_rate:.3f} under the null"
    # the chi-square approximation is not anti-conservative (Demsar 2006: if anything, conservative)
    assert _interval(chi2_rate * sims, sims)[0] <= 0.05


def test_nemenyi_family_wise_error_under_the_null(scaled, rng):
    sims, n, k = scaled(4000), 15, 5
    cd = critical_difference(k, n)
    ranks = np.array([friedman(rng.normal(size=(n, k))).mean_ranks for _ in range(sims)])
    any_pair = ranks.max(axis=1) - ranks.min(axis=1) > cd
    # Nemenyi controls the family-wise error (asymptotically)
    assert _interval(np.sum(any_pair), sims)[0] <= 0.05


@pytest.mark.parametrize("n", [5, 20])
def test_aso_false_positive_rate_under_identical_distributions(scaled, rng, n):
    sims = scaled(1500)
    eps = np.array(
        [
            aso(rng.normal(size=n), rng.normal(size=n), n_resamples=500, rng=rng).epsilon_min
            for _ in range(sims)
        ]
    )
    # the default threshold 0.2 keeps the one-sided claim "A better" near its 5 % level
    # (measured with 6,000 comparisons: 5.7 % for n = 5, 2.8 % for n = 20); the bound
    # allows that small excess at n = 5 and nothing like threshold 0.5's
    low, _ = _interval(np.sum(eps < 0.2), sims)
    assert low <= 0.06
    # deepsig's 0.5 does not: about 18-20 % (documented in docs/ranking.md)
    low, high = _interval(np.sum(eps < 0.5), sims)
    assert low > 0.10 and high < 0.30
