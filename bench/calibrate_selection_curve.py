"""Coverage of the selection curve's jackknife interval by simulation (n = 40, 95 %).

Validation = q + e, test = q + e' (q, e, e' normal, sd(e) = 0.7), so the true
test score of the best-on-validation of k is E[max of k N(0, 1)] / sqrt(1 + 0.7^2).

    PYTHONPATH=src python bench/calibrate_selection_curve.py
"""

import numpy as np
from scipy import integrate, stats

from vareval.stats import selection_curve

SIGMA, N, KS, SIMS = 0.7, 40, np.array([1, 2, 3, 5, 8, 10, 20]), 1000


def expected_max(k: int) -> float:
    f = lambda x: x * k * stats.norm.pdf(x) * stats.norm.cdf(x) ** (k - 1)  # noqa: E731
    return integrate.quad(f, -12, 12)[0]


def main() -> None:
    truth = np.array([expected_max(k) for k in KS]) / np.sqrt(1 + SIGMA**2)
    rng = np.random.default_rng(0)
    hits = np.zeros(KS.size)
    for _ in range(SIMS):  # one simulated search per call; each call is vectorised
        q = rng.normal(size=N)
        res = selection_curve(q + SIGMA * rng.normal(size=N), q + SIGMA * rng.normal(size=N), KS)
        hits += (res.lower <= truth) & (truth <= res.upper)
    for k, c in zip(KS, hits / SIMS, strict=True):
        print(f"k = {k:2d}  coverage {c:.3f}")


if __name__ == "__main__":
    main()
