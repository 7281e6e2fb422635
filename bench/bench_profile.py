"""Profile-likelihood intervals of the variance components beside lme4's confint.

Run from the repository root (R with lme4 on the PATH as ``Rscript``):

    PYTHONPATH=src python bench/bench_profile.py            # every design
    PYTHONPATH=src python bench/bench_profile.py --quick    # skip InstEval's subset

On each design both sides first fit the same REML model (untimed), then time
the intervals alone. vareval: ``profile_intervals(fit)`` (every component's SD,
share and ICC), in-process after import, the best of 3. lme4 (R in a
subprocess, timed inside R around ``confint`` only): ``confint(m, method =
"profile", parm = "theta_")`` (the SDs alone, the best of 2) and the default
``confint(m, method = "profile")`` (also every fixed effect, once). Both
profile the ML deviance. Printed: both SD intervals, their largest relative
difference, CPU and wall seconds, and the ratios lme4 / vareval.

Designs (seeds and configurations with SDs 0.01 and 0.02, residual 0.01, six
experiments as the fixed effect):

- ``crossed 30 x 30``: 30 seeds crossed with 30 configurations, one run each
  (900 rows), with and without the seed x experiment term that ``vareval
  variance`` adds when experiments share seeds;
- ``make_crossed(2)``: bench_mixed.py's ring of sweeps, 50 seeds x 50 configs,
  300 rows;
- ``reseeding 10 x 15 x 10``: bench_mixed.py's 9,000-row design (configs nested
  in seeds' sweeps, 160 levels);
- ``InstEval, 100 instructors``: lme4's InstEval restricted to its first 100
  instructors (students, instructors and departments crossed, ``service``
  fixed).

BLAS threads are pinned to 1 on both sides' Python; R uses its reference BLAS.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mixed import make, make_crossed  # noqa: E402
from vareval.stats import fit_mixed, profile_intervals  # noqa: E402

_R = r"""
suppressMessages(library(lme4))
a <- commandArgs(TRUE)
if (a[1] == "export") {  # InstEval's first 100 instructors
  d <- droplevels(subset(InstEval, as.integer(d) <= 100))
  write.csv(data.frame(s = d$s, d = d$d, dept = d$dept, service = d$service, y = d$y),
            a[2], row.names = FALSE)
  quit()
}
d <- read.csv(a[1], colClasses = "character")
d$y <- as.numeric(d$y)
m <- lmer(as.formula(a[2]), d)
timed <- function(expr) {
  t0 <- proc.time()
  out <- expr
  t <- proc.time() - t0
  list(out = out, cpu = t[["user.self"]] + t[["sys.self"]], wall = t[["elapsed"]])
}
th <- list(cpu = Inf, wall = Inf)
for (i in 1:2) {
  r <- timed(confint(m, method = "profile", parm = "theta_", oldNames = FALSE, quiet = TRUE))
  if (r$wall < th$wall) th <- r
}
all <- timed(confint(m, method = "profile", oldNames = FALSE, quiet = TRUE))
cat(sprintf("time theta_ %.4f %.4f\n", th$cpu, th$wall))
cat(sprintf("time all %.4f %.4f\n", all$cpu, all$wall))
ci <- th$out
for (i in seq_len(nrow(ci)))
  cat(sprintf("ci %s %.10g %.10g\n", rownames(ci)[i], ci[i, 1], ci[i, 2]))
"""


def crossed(ns=30, nc=30, rng=0):
    """``ns`` seeds fully crossed with ``nc`` configurations, one run each."""
    rng = np.random.default_rng(rng)
    s, c = (a.ravel() for a in np.meshgrid(np.arange(ns), np.arange(nc), indexing="ij"))
    e = rng.integers(0, 6, s.size)
    y = (
        0.8 + 0.01 * e + 0.01 * rng.normal(size=ns)[s] + 0.02 * rng.normal(size=nc)[c]
        + 0.01 * rng.normal(size=s.size)
    )  # fmt: skip
    return pd.DataFrame({
        "experiment": np.char.add("e", e.astype(str)),
        "seed": np.char.add("s", s.astype(str)),
        "config": np.char.add("c", c.astype(str)),
        "y": y,
    })  # fmt: skip


def design_arrays(d, fixed, random):
    """y, X (treatment contrasts of ``fixed``) and the integer codes of each term."""
    f = pd.Categorical(d[fixed])
    X = np.column_stack(
        [np.ones(len(d))] + [f.codes == i for i in range(1, len(f.categories))]
    ).astype(float)
    codes = []
    for term in random:
        key = d[term.split(":")].astype(str).agg(":".join, axis=1)
        codes.append(np.unique(key, return_inverse=True)[1])
    return d["y"].to_numpy(float), X, codes


def vareval_side(d, fixed, random, repeat=3):
    y, X, codes = design_arrays(d, fixed, random)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_mixed(y, X, codes, group_names=random)
    best = (np.inf, np.inf)
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        ci = profile_intervals(fit)
        best = min(best, (time.process_time() - c, time.perf_counter() - w), key=lambda t: t[1])
    return ci, best


def lme4_side(path, formula, tmp):
    out = subprocess.run(
        ["Rscript", str(tmp / "ci.R"), str(path), formula],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    times, ci = {}, {}
    for line in out.splitlines():
        p = line.split()
        if p[0] == "time":
            times[p[1]] = (float(p[2]), float(p[3]))
        elif p[0] == "ci":
            ci[p[1]] = (float(p[2]), float(p[3]))
    return times, ci


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip InstEval's subset")
    args = ap.parse_args()
    if shutil.which("Rscript") is None:
        sys.exit("Rscript not found: install R with lme4")
    tmp = Path(tempfile.mkdtemp())
    (tmp / "ci.R").write_text(_R)
    both = ["seed", "config"]
    cases = [
        ("crossed 30 x 30, 900 rows", crossed(), "experiment", both),
        ("crossed 30 x 30 + seed:experiment", crossed(), "experiment",
         both + ["seed:experiment"]),
        ("make_crossed(2), 300 rows", make_crossed(2), "experiment", both),
        ("reseeding 10 x 15 x 10, 9,000 rows", make(10, 15, 10), "experiment", both),
    ]  # fmt: skip
    if not args.quick:
        subprocess.run(["Rscript", str(tmp / "ci.R"), "export", str(tmp / "inst.csv")],
                       check=True)  # fmt: skip
        inst = pd.read_csv(tmp / "inst.csv", dtype=str)
        inst["y"] = inst["y"].astype(float)
        cases.append((f"InstEval, 100 instructors, {len(inst):,} rows", inst, "service",
                      ["s", "d", "dept"]))  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.2f}")
    for label, d, fixed, random in cases:
        path = tmp / "data.csv"
        d[[fixed, *{t for term in random for t in term.split(":")}, "y"]].to_csv(
            path, index=False
        )
        formula = f"y ~ {fixed} + " + " + ".join(f"(1 | {t})" for t in random)
        ci, (cpu, wall) = vareval_side(d, fixed, random)
        times, ref = lme4_side(path, formula, tmp)
        print(f"\n{label}: {formula}")
        worst = 0.0
        for j, comp in enumerate(ci.components):
            key = "sigma" if comp == "Residual" else f"sd_(Intercept)|{comp}"
            lo, hi = ref[key]
            ends = np.array([ci.sd_low[j], ci.sd_high[j]])
            rel = np.abs(ends - [lo, hi]) / np.maximum(np.abs([lo, hi]), 1e-300)
            worst = max(worst, float(np.max(np.where(np.array([lo, hi]) == 0, ends, rel))))
            print(f"  {comp:18s} vareval [{ends[0]:.7g}, {ends[1]:.7g}]   "
                  f"lme4 [{lo:.7g}, {hi:.7g}]")  # fmt: skip
        print(f"  largest relative difference of the ends {worst:.1e}")
        th, al = times["theta_"], times["all"]
        rows = [
            ("vareval profile_intervals (SDs, shares, ICCs)", (cpu, wall)),
            ("lme4 confint(parm = 'theta_')", th),
            ("lme4 confint() (also the fixed effects)", al),
        ]
        for name, (c, w) in rows:
            ratio = "" if c is cpu else f"  ratio CPU {c / cpu:5.1f}x  wall {w / wall:5.1f}x"
            print(f"  {name:45s} CPU {c:6.3f} s  wall {w:6.3f} s{ratio}")
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
