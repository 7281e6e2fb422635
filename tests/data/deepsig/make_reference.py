"""Reference values from deepsig 1.2.8 for the ASO parity tests.

Run with deepsig installed (``pip install deepsig==1.2.8``):

    python tests/data/deepsig/make_reference.py > tests/data/deepsig/reference.json

For each case it stores the inputs, deepsig's violation ratio on its default
grid (dt = 0.005) and on a fine grid (dt = 1e-5, close to the exact
integral), and ``aso`` / ``multi_aso`` results for several seeds, so the tests
can compare against deepsig's mean within its own Monte Carlo spread.
"""

import json
import sys
import warnings

import numpy as np
from deepsig import aso, multi_aso
from deepsig.aso import compute_violation_ratio

# deepsig seeds bootstrap iteration i with seed + i, so seeds closer than the number of
# iterations share draws: space them far apart to get independent runs
SEEDS = [0, 10_000, 20_000, 30_000, 40_000]
warnings.simplefilter("ignore")


def case(name, a, b):
    return {
        "name": name,
        "a": a.tolist(),
        "b": b.tolist(),
        "violation_ratio_dt0.005": compute_violation_ratio(a, b, dt=0.005),
        "violation_ratio_dt1e-5": compute_violation_ratio(a, b, dt=1e-5),
        "epsilon_min": [
            float(aso(a, b, seed=s, show_progress=False, num_bootstrap_iterations=1000))
            for s in SEEDS
        ],
    }


rng = np.random.default_rng(20260101)
cases = [
    case("5 vs 5, shift 0.5", rng.normal(0.5, 1, 5), rng.normal(0, 1, 5)),
    case("7 vs 4, A clearly better", rng.normal(1.5, 1, 7), rng.normal(0, 1, 4)),
    case("20 vs 30, shift 0.6", rng.normal(0.6, 1, 20), rng.normal(0, 1.2, 30)),
    case("6 vs 9 with ties", rng.integers(1, 5, 6).astype(float), rng.integers(0, 4, 9) * 1.0),
    case("10 vs 10, B better", rng.gamma(2, 1, 10), rng.gamma(2, 1, 10) + 0.8),
]
systems = {name: rng.normal(mu, 1, 8).tolist() for name, mu in [("x", 0.8), ("y", 0.4), ("z", 0.0)]}
multi = {
    "scores": systems,
    "bonferroni": [
        multi_aso(systems, seed=s, show_progress=False, use_bonferroni=True).tolist()
        for s in SEEDS[:3]
    ],
    "unadjusted": [
        multi_aso(systems, seed=s, show_progress=False, use_bonferroni=False).tolist()
        for s in SEEDS[:3]
    ],
}
json.dump(
    {"deepsig": "1.2.8", "seeds": SEEDS, "cases": cases, "multi": multi}, sys.stdout, indent=1
)
