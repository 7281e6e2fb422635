"""Coverage of one model's score: vareval's default interval against the naive CLT one.

Simulated 0/1 benchmarks as in the slow tier (``tests/stats/evals/_calibration.py``):
question q's latent difficulty is ``sqrt(icc) u_cluster + sqrt(1 - icc) e_q``
(standard normal parts; clusters of 2 questions at n <= 30, else 5, none at
ICC 0), its chance of a correct answer ``Phi(mu + z)``, and each of its k
samples a Bernoulli draw. The true score ``Phi(mu / sqrt(2))`` is drawn uniform
on [0.1, 0.9] per benchmark, so coverage is averaged over scores. ICC is on the
latent scale. Every benchmark of a row is drawn and scored at once:

- default: ``eval_score``'s ``interval="auto"`` for 0/1 scores, Wilson on Korn and
  Graubard's effective size (``binomial_n``) from the cluster-robust SE, composed
  from the same functions (``tests/stats/evals/test_coverage_table.py`` checks it
  equals ``eval_score`` benchmark by benchmark);
- naive: ``mean -/+ z sd(answers) / sqrt(answers)``, every answer independent
  (``interval="normal"``).

The table this prints is the one in docs/evals.md:

    PYTHONPATH=src python bench/calibrate_evals.py [--sims 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import special, stats

from vareval.stats.evals._questions import cluster_se
from vareval.stats.evals.score import binomial_n, wilson

SPREAD = 1.0  # between-question spread of the latent chance, as in the slow tier
BLOCK = 2 * 10**7  # answers drawn at once


def cluster_size(n: int, icc: float) -> int:
    """Questions per cluster (1: no clusters), as in the slow tier."""
    return 1 if icc == 0 else (2 if n <= 30 else 5)


def benchmarks(rng, sims: int, n: int, k: int, icc: float):
    """``sims`` benchmarks: scores ``(sims, n * k)`` (question-major), the cluster of
    each question ``(n,)`` and each benchmark's true score ``(sims,)``."""
    size = cluster_size(n, icc)
    cluster = np.arange(n) // size
    u = rng.normal(size=(sims, cluster[-1] + 1))[:, cluster]
    z = math.sqrt(icc) * u + math.sqrt(1 - icc) * rng.normal(size=(sims, n))
    truth = rng.uniform(0.1, 0.9, sims)
    mu = special.ndtri(truth) * math.sqrt(1 + SPREAD**2)
    chance = special.ndtr(mu[:, None] + SPREAD * z)
    scores = (rng.random((sims, n, k)) < chance[:, :, None]).astype(float)
    return scores.reshape(sims, n * k), cluster, truth


def intervals(scores, cluster, k: int, confidence: float = 0.95):
    """The default and the naive interval of each benchmark (rows of ``scores``)."""
    sims, rows = scores.shape
    n, g = cluster.size, cluster[-1] + 1
    means = scores.reshape(sims, n, k).mean(axis=2)
    p = means.mean(axis=1)
    se = cluster_se(means.T, cluster, g)
    design = g < n or k > 1
    n_binom = binomial_n(p, se, n, rows, g, design, confidence)
    default = wilson(p * n_binom, n_binom, confidence)
    half = special.ndtri((1 + confidence) / 2) * scores.std(axis=1, ddof=1) / math.sqrt(rows)
    return (default.low, default.high), (p - half, p + half)


def coverage(rng, sims: int, n: int, k: int, icc: float):
    """Share of ``sims`` benchmarks whose default / naive interval holds the true score."""
    hits = np.zeros(2)
    step = max(1, BLOCK // (n * k))
    for start in range(0, sims, step):  # blocks of benchmarks, to bound memory
        scores, cluster, truth = benchmarks(rng, min(step, sims - start), n, k, icc)
        for j, (low, high) in enumerate(intervals(scores, cluster, k)):
            hits[j] += np.sum((low <= truth) & (truth <= high))
    return hits / sims


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=int, default=4000, help="Benchmarks per row.")
    ap.add_argument("--ns", default="10,30,100,1000")
    ap.add_argument("--iccs", default="0,0.1,0.3")
    ap.add_argument("--samples", default="1,5", help="Samples per question.")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    lo, hi = stats.binom.ppf([0.025, 0.975], args.sims, 0.95) / args.sims
    print(f"coverage of a 95% interval, {args.sims} benchmarks per row "
          f"(95% of rows of an exact interval fall in [{lo:.3f}, {hi:.3f}]); seed {args.seed}")
    print("    n  icc  samples  clusters  default  naive")
    for n in map(int, args.ns.split(",")):
        for icc in map(float, args.iccs.split(",")):
            for k in map(int, args.samples.split(",")):
                default, naive = coverage(rng, args.sims, n, k, icc)
                g = -(-n // cluster_size(n, icc))
                print(f"{n:5d} {icc:4.1f} {k:8d} {g:9d} {default:8.3f} {naive:6.3f}")


if __name__ == "__main__":
    main()
