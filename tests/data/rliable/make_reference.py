"""Reference outputs of rliable 1.2.0 on random inputs, for vareval's parity tests.

rliable does not import with pandas 3, so this runs in its own environment:

    python3.11 -m venv /work/venvs/rliable
    /work/venvs/rliable/bin/pip install "rliable==1.2.0" "pandas<2.2" "numpy<2"
    cd tests/data/rliable && /work/venvs/rliable/bin/python make_reference.py reference.json

(resolved to rliable 1.2.0, arch 7.2.0, pandas 2.1.4, numpy 1.26.4). rliable
draws from numpy's global random state, so it is seeded with
``np.random.seed`` before each call.
"""

import json
import sys

import numpy as np
import rliable
from rliable import library as rly
from rliable import metrics

REPS = 20_000


def aggregates(x):
    return np.array(
        [
            metrics.aggregate_median(x),
            metrics.aggregate_iqm(x),
            metrics.aggregate_mean(x),
            metrics.aggregate_optimality_gap(x, gamma=1.0),
        ]
    )


def main(out: str) -> None:
    gen = np.random.default_rng(20261130)
    # 3 methods x 7 runs x 9 tasks in rliable's layout [run, task]; scores mostly in [0, 1.3]
    scores = {m: gen.gamma(2.0 + i, 0.2, size=(7, 9)).round(3) for i, m in enumerate("abc")}
    taus = np.linspace(0.0, 1.5, 16)
    result = {
        "versions": {"rliable": getattr(rliable, "__version__", "1.2.0"), "numpy": np.__version__},
        "reps": REPS,
        "scores": {m: x.tolist() for m, x in scores.items()},
        "taus": taus.tolist(),
    }
    for task_bootstrap in (False, True):
        np.random.seed(1)
        point, ci = rly.get_interval_estimates(
            scores, aggregates, task_bootstrap=task_bootstrap, reps=REPS
        )
        key = f"interval_percentile_{'tasks' if task_bootstrap else 'runs'}"
        result[key] = {m: {"point": point[m].tolist(), "ci": ci[m].tolist()} for m in scores}
    # BCa one aggregate at a time: arch's acceleration centres the jackknife values on
    # their mean over *all* statistics (`jk_params.mean()`), so with a vector of
    # aggregates every acceleration but that of a lone statistic is wrong.
    cis = {m: [] for m in scores}
    for j in range(4):
        np.random.seed(10 + j)
        _, ci = rly.get_interval_estimates(
            scores, lambda x, j=j: aggregates(x)[j : j + 1], method="bca", reps=REPS
        )
        for m in scores:
            cis[m].append(ci[m].ravel().tolist())
    result["interval_bca_runs"] = {m: {"ci": np.array(cis[m]).T.tolist()} for m in scores}
    for kind, use_runs in (("runs", True), ("mean", False)):
        np.random.seed(2)
        profile, cis = rly.create_performance_profile(
            scores, taus, use_score_distribution=use_runs, reps=REPS
        )
        result[f"profile_{kind}"] = {
            m: {"point": profile[m].tolist(), "ci": cis[m].tolist()} for m in scores
        }
    np.random.seed(3)
    point, ci = rly.get_interval_estimates(
        {"a,c": (scores["a"], scores["c"])}, metrics.probability_of_improvement, reps=4000
    )
    result["improvement_a_c"] = {
        "point": float(point["a,c"]),
        "ci": ci["a,c"].ravel().tolist(),
        "reps": 4000,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
