"""Mixed models: vareval vs statsmodels MixedLM and (if installed) Rust mixedlm.

Run from the repository root:

    PYTHONPATH=src python bench/bench_mixed.py          # add --quick to skip 900k

Design: 6 experiments (3 models x 2 optimizers), random intercepts for seed and
configuration (configuration nested in seed), REML, as in REFERENCE.md.
Anchors measured earlier on this machine (R, not run here): lme4 0.41 s on
9,000 rows, 2.5 s on 90,000 rows with 1,600 levels; pbkrtest Kenward-Roger
93 s on 9,000 rows; statsmodels 14.9 s on 9,000 rows; mixedlm 0.39 s.

BLAS threads are pinned to 1 (set before numpy is imported): on a shared
2-core machine OpenBLAS's threads spin against each other and make the many
small products of a fit 10-50x slower. Timings are the best of a few runs and
are noisy on a busy machine.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from vareval.experiment.design import reseeding_design  # noqa: E402
from vareval.experiment.simulate import simulate_responses  # noqa: E402
from vareval.stats import f_test, fit_mixed, random_effect_lrt  # noqa: E402

ANCHORS = {
    "9,000": {"lme4": 0.41, "statsmodels": 14.9, "mixedlm": 0.39, "pbkrtest KR": 93.0},
    "90,000 (1,600 levels)": {"lme4": 2.5, "mixedlm": 1.69},
}


def make(seeds, configs, reruns, rng=0):
    d = reseeding_design({"model": ["a", "b", "c"], "optimizer": ["sgd", "adam"]},
                         seeds=seeds, configs=configs, reruns=reruns)
    means = {e: 0.8 + 0.01 * i for i, e in enumerate(sorted(d.experiment.unique()))}
    d = simulate_responses(d, means=means, sd_seed=0.01, sd_config=0.02,
                           sd_residual=0.01, rng=rng)
    e, _ = pd.factorize(d["experiment"], sort=True)
    X = np.zeros((len(d), 6))
    X[np.arange(len(d)), 0] = 1.0
    X[np.arange(len(d)), e] = 1.0  # intercept + treatment dummies (column 0 = ref)
    s, _ = pd.factorize(d["seed"])
    c, _ = pd.factorize(d["config"])
    return d, d["y"].to_numpy(), X, [s, c]


def best_of(fn, repeat=3):
    out, best = None, np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def vareval_pipeline(y, X, g):
    L = np.column_stack([np.zeros(5), np.eye(5)])  # all experiments equal
    f = fit_mixed(y, X, g, group_names=["seed", "config"])
    lrt = random_effect_lrt(f)
    F = f_test(f, L)
    return f, lrt, F


def statsmodels_fit(d):
    import statsmodels.formula.api as smf

    md = smf.mixedlm("y ~ C(experiment)", d, groups="seed", re_formula="1",
                     vc_formula={"config": "0 + C(config)"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return md.fit(reml=True)


def mixedlm_fit(d):
    import mixedlm  # noqa: F401  (optional, Rust-backed)

    return mixedlm.lmer("y ~ experiment + (1 | seed) + (1 | config)", d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the 900,000-row case")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(__doc__.split("\n\n")[2])
    print()
    rows = []
    cases = [("2,700", 10, 15, 3), ("9,000", 10, 15, 10),
             ("90,000 (1,600 levels)", 100, 15, 10)]
    if not args.quick:
        cases.append(("900,000 (1,600 levels)", 100, 15, 100))
        cases.append(("180,000 (16,000 levels)", 1000, 15, 2))
    try:
        import mixedlm  # noqa: F401

        have_mixedlm = True
    except ImportError:
        have_mixedlm = False
    for label, seeds, configs, reruns in cases:
        d, y, X, g = make(seeds, configs, reruns)
        fit_t, _ = best_of(lambda y=y, X=X, g=g: fit_mixed(
            y, X, g, group_names=["seed", "config"]))
        all_t, (f, lrt, F) = best_of(lambda y=y, X=X, g=g: vareval_pipeline(y, X, g))
        line = {"rows": label, "fit": fit_t, "fit+2 LRT+F": all_t,
                "sd": tuple(np.round(f.sd, 5))}
        if label in ("2,700", "9,000"):
            kr_t, _ = best_of(lambda f=f: f_test(
                f, np.column_stack([np.zeros(5), np.eye(5)]),
                method="kenward-roger"))
            tracemalloc.start()
            f_test(f, np.column_stack([np.zeros(5), np.eye(5)]), method="kenward-roger")
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            line["KR"] = kr_t
            line["KR peak MiB"] = peak
        if label == "2,700":
            t, sm = best_of(lambda d=d: statsmodels_fit(d), repeat=1)
            line["statsmodels"] = t
            line["sm/vareval"] = t / fit_t
            line["|dlogLik|"] = abs(sm.llf - f.loglik)
        if have_mixedlm and label in ("2,700", "9,000", "90,000 (1,600 levels)"):
            t, _ = best_of(lambda d=d: mixedlm_fit(d), repeat=1)
            line["mixedlm"] = t
            line["mixedlm/vareval"] = t / fit_t
        rows.append(line)
        print(_fmt(line))
        for name, secs in ANCHORS.get(label, {}).items():
            ours = line.get("KR") if name == "pbkrtest KR" else fit_t
            print(f"    anchor {name:12s} {secs:8.2f} s   ratio anchor/vareval "
                  f"{secs / ours:8.1f}x")
    print()
    print("Targets: 9,000 rows fit+LRTs+F < 0.1 s; 90,000 (1,600 levels) < 0.5 s; "
          "900,000 < 5 s; Kenward-Roger on 9,000 rows < 2 s.")


def _fmt(line):
    parts = []
    for k, v in line.items():
        if isinstance(v, float):
            unit = "" if ("/" in k or "MiB" in k or "dlog" in k) else " s"
            parts.append(f"{k} {v:.4g}{unit}")
        else:
            parts.append(f"{k} {v}")
    return " | ".join(parts)


if __name__ == "__main__":
    main()
