"""Stand-ins for the job 2-3 statistics while they are not on this branch.

Used only when ``vareval.stats`` lacks the real functions (the lead writes
them in parallel); they return objects with the agreed fields so the report's
sections can be exercised. Their numbers are simple, not validated: the real
functions are tested in tests/stats.
"""

from __future__ import annotations

import types

import numpy as np


def best_of_k(
    scores,
    ks=(1, 3, 5, 10),
    *,
    n_resamples=100_000,
    higher_is_better=True,
    quantiles=(0.5, 0.9),
    rng=None,
):
    rng = np.random.default_rng(rng)
    x = np.asarray(scores, dtype=float)
    ks = np.asarray(ks)
    table, signed = [], []
    for k in ks:
        draws = rng.choice(x, size=(2, n_resamples, k))
        best = draws.max(axis=2) if higher_is_better else draws.min(axis=2)
        gap = np.abs(best[0] - best[1]) / np.abs(best).max(axis=0)
        table.append(np.quantile(gap, quantiles))
        signed.append((best[0] - best[1]).mean())
    table = np.array(table)
    return types.SimpleNamespace(
        ks=ks,
        quantiles=np.asarray(quantiles),
        gap_quantiles=table,
        median_gap=table[:, 0],
        p90_gap=table[:, 1],
        mean_signed_difference=np.array(signed),
        n_resamples=n_resamples,
        higher_is_better=higher_is_better,
    )


def ranking_stability(a, b, *, max_k=10, n_resamples=10_000, higher_is_better=True, rng=None):
    ks = np.arange(1, max_k + 1)
    share = np.linspace(0.6, 0.9, max_k)
    return types.SimpleNamespace(
        ks=ks, best_of_k=share * 0.9, mean_of_k=share, median_of_k=share * 0.95
    )


def paired_difference(
    a, b, *, confidence=0.95, n_resamples=10_000, rng=None, higher_is_better=True
):
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    k = d.size
    sd = d.std(ddof=1)
    se = sd / np.sqrt(k)
    h = stats.t.ppf((1 + confidence) / 2, k - 1) * se
    cov = np.cov(a, b)
    best = np.max if higher_is_better else np.min
    return types.SimpleNamespace(
        k=k,
        estimate=d.mean(),
        sd=sd,
        se=se,
        low=d.mean() - h,
        high=d.mean() + h,
        bootstrap_low=d.mean() - h,
        bootstrap_high=d.mean() + h,
        correlation=np.corrcoef(a, b)[0, 1],
        var_a=cov[0, 0],
        var_b=cov[1, 1],
        cov=cov[0, 1],
        var_diff=sd**2,
        se_unpaired=np.sqrt((cov[0, 0] + cov[1, 1]) / k),
        variance_ratio=(cov[0, 0] + cov[1, 1]) / sd**2,
        selected_gap=best(a) - best(b),
        confidence=confidence,
        differences=d,
    )


def plan_replications(
    sd_diff,
    *,
    target_se=None,
    target_halfwidth=None,
    effect=None,
    power=0.8,
    alpha=0.05,
    confidence=0.95,
):
    if target_se is not None:
        k = int(np.ceil((sd_diff / target_se) ** 2))
    else:
        k = int(np.ceil((2.8 * sd_diff / effect) ** 2))
    curve_k = np.unique(np.geomspace(2, 4 * max(k, 2), 40).astype(int))
    return types.SimpleNamespace(
        sd_diff=sd_diff,
        k_required=max(k, 2),
        k_normal=max(k, 2),
        curve_k=curve_k,
        curve_se=sd_diff / np.sqrt(curve_k),
        curve_halfwidth=2 * sd_diff / np.sqrt(curve_k),
        curve_power=None,
    )


NAMES = ("best_of_k", "ranking_stability", "paired_difference", "plan_replications")
