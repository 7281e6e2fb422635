"""Simulated benchmarks with known clustering, for the evals calibration (slow tier).

A question's latent difficulty is ``sqrt(icc) u_cluster + sqrt(1 - icc) e_question``
(standard normal parts), its chance of a correct answer ``Phi(mu + s z)``;
each of ``k`` samples is a Bernoulli draw. The benchmark's true score is
the population mean ``Phi(mu / sqrt(1 + s**2))``; ``mu`` is drawn per
benchmark so that the true score is uniform on [0.1, 0.9] (coverage of a
0/1 interval is then averaged over scores, as Bowyer et al. 2025 do).
Model B's chance is ``Phi(mu + s z - shift)`` on the same questions.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from vareval.errors import VarevalWarning
from vareval.stats.evals import compare_two, eval_score

SPREAD = 1.0  # s: between-question spread of the latent chance


def cluster_size(n: int, icc: float) -> int | None:
    if icc == 0:
        return None
    return 2 if n <= 30 else 5


def benchmark(rng, n, k, icc, shift=0.0):
    size = cluster_size(n, icc)
    q = np.repeat(np.arange(n), k)
    c = None if size is None else q // size
    g = n if size is None else -(-n // size)
    u = rng.normal(size=g)[np.arange(n) // (size or 1)]
    z = math.sqrt(icc) * u + math.sqrt(1 - icc) * rng.normal(size=n)
    truth = rng.uniform(0.1, 0.9)
    scale = math.sqrt(1 + SPREAD**2)
    mu = stats.norm.ppf(truth) * scale
    pa = stats.norm.cdf(mu + SPREAD * z)[q]
    pb = stats.norm.cdf(mu + SPREAD * z - shift)[q]
    a = (rng.random(q.size) < pa).astype(float)
    b = (rng.random(q.size) < pb).astype(float)
    delta = truth - stats.norm.cdf((mu - shift) / scale)
    return a, b, q, c, truth, delta


def run(rng, n, k, icc, sims, shift=0.3):
    """Coverage of the default and the naive interval of a mean, of the default paired
    interval (shifted B), and the default test's rejection rate under the null (B = A)."""
    hits = np.zeros(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for _ in range(sims):
            a, b, q, c, truth, delta = benchmark(rng, n, k, icc, shift)
            r = eval_score(a, q, c)
            naive = eval_score(a, q, c, interval="normal")
            d = compare_two(a, b, q, c)
            a0, b0, *_ = benchmark(rng, n, k, icc, 0.0)
            null = compare_two(a0, b0, q, c, n_resamples=999, rng=rng)
            hits += [
                r.low <= truth <= r.high,
                naive.low <= truth <= naive.high,
                d.low <= delta <= d.high,
                null.pvalue <= 0.05,
            ]
    return hits / sims
