"""Mixed models end to end: ``vareval.variance(df)`` beside lme4/lmerTest.

Run from the repository root:

    PYTHONPATH=src python bench/bench_mixed.py            # add --quick to skip 900k
    PYTHONPATH=src python bench/bench_mixed.py --crossed  # 100,000 crossed levels
    PYTHONPATH=src python bench/bench_mixed.py --write-csv DIR
    PYTHONPATH=src python bench/bench_mixed.py --lme4     # InstEval, make_crossed(300)
    PYTHONPATH=src python bench/bench_mixed.py --command  # the command beside lmer
    Rscript bench/bench_mixed_lme4.R DIR                  # lme4's side, same designs

Design: 6 experiments (3 models x 2 optimizers), random intercepts for seed and
configuration (each seed samples its own configurations), REML. vareval's time
is the whole analysis: the fit, both likelihood-ratio tests (refits), the
Satterthwaite and Kenward-Roger F tests and all 15 pairwise differences. The
anchor is lmerTest's lmer + ranova + anova (Satterthwaite) on the same rows,
recorded with bench_mixed_lme4.R on this 2-core machine (ANCHORS; pbkrtest's
Kenward-Roger is not run at these sizes: 93 s and 2 GB on 9,000 rows).

The crossed case (make_crossed): 50,000 seeds crossed with 50,000
configurations, 300,000 rows; it takes the sparse Schur complement
(stats/variance/sparse.py).

BLAS threads are pinned to 1: on a shared 2-core machine OpenBLAS's threads
spin against each other. Timings are the best of a few runs and noisy on a
busy machine; the ratios are what to read.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import vareval  # noqa: E402
from vareval.experiment.design import reseeding_design  # noqa: E402
from vareval.experiment.simulate import simulate_responses  # noqa: E402
from vareval.stats import bootstrap_intervals, profile_intervals  # noqa: E402

# lmerTest lmer + ranova + anova, seconds (bench_mixed_lme4.R, R 4.2.2 /
# lme4 1.1-31 / lmerTest 3.1-3) on this shared machine, 2026-11-30: the 90,000-row
# design at load average ~5 (lmer 4.2 s, ranova 3.8 s); the 900,000-row one at
# load ~9 (lmer 109 s, ranova 126 s), so that ratio flatters vareval by up to ~2x.
ANCHORS = {
    "90,000 rows, 1,600 levels": 8.07,
    "900,000 rows, 16,000 levels": 235.02,
    # 2026-12-01, load ~8: lmer 179 s, ranova 29 s, anova 0.02 s
    "300,000 rows, 100,000 crossed levels": 208.34,
}
TARGETS = {"90,000 rows, 1,600 levels": 0.5, "900,000 rows, 16,000 levels": 5.0}
CASES = [
    ("9,000 rows, 160 levels", 10, 15, 10),
    ("90,000 rows, 1,600 levels", 100, 15, 10),
    ("900,000 rows, 16,000 levels", 1000, 15, 10),
]
# seeds crossed with configurations (make_crossed): 50,000 of each, so 50,000
# levels outside the largest factor, on the sparse Schur complement
CROSSED = ("300,000 rows, 100,000 crossed levels", 2000)


def make(seeds, configs, reruns, rng=0):
    d = reseeding_design(
        {"model": ["a", "b", "c"], "optimizer": ["sgd", "adam"]},
        seeds=seeds,
        configs=configs,
        reruns=reruns,
    )
    means = {e: 0.8 + 0.01 * i for i, e in enumerate(sorted(d.experiment.unique()))}
    return simulate_responses(
        d, means=means, sd_seed=0.01, sd_config=0.02, sd_residual=0.01, rng=rng
    )


def make_crossed(sweeps, per=25, runs=6, rng=0):
    """Seeds crossed with configurations: ``sweeps * per`` of each, in a ring.

    Each seed runs ``runs`` trials, each in a random experiment (of 6) with a
    random configuration of its own sweep or of the next one, so the sweeps
    chain into one connected crossed design (no nesting, no independent
    blocks). Seeds, configurations and the residual have SDs 0.01, 0.02, 0.01.
    """
    import pandas as pd

    rng = np.random.default_rng(rng)
    n_seed = sweeps * per
    seed = np.repeat(np.arange(n_seed), runs)
    sweep = (seed // per + rng.integers(0, 2, seed.size)) % sweeps
    config = sweep * per + rng.integers(0, per, seed.size)
    exp = rng.integers(0, 6, seed.size)
    y = (
        0.8
        + 0.01 * exp
        + 0.01 * rng.normal(size=n_seed)[seed]
        + 0.02 * rng.normal(size=n_seed)[config]
        + 0.01 * rng.normal(size=seed.size)
    )
    return pd.DataFrame(
        {
            "experiment": np.array(["e1", "e2", "e3", "e4", "e5", "e6"])[exp],
            "seed": np.char.add("s", seed.astype(str)),
            "config": np.char.add("c", config.astype(str)),
            "y": y,
        }
    )


def make_banded(n, links=0.0, width=4, keep=0.83, rng=0):
    """``n`` seeds crossed with ``n`` configurations in a band, plus a 12-level task.

    Seed ``i`` runs configuration ``j`` for ``|i - j| <= width`` with
    probability ``keep`` (about 7.5 runs a seed); with probability ``links``
    a run's configuration is drawn from all ``n`` instead (long-range links,
    which make the band's factor fill in). Each run is on one of 12 tasks.
    Seeds, configurations, tasks and the residual have SDs 0.01, 0.02, 0.01,
    0.01; no fixed factor but the intercept.
    """
    import pandas as pd

    rng = np.random.default_rng(rng)
    seed = np.repeat(np.arange(n), 2 * width + 1)
    config = seed + np.tile(np.arange(-width, width + 1), n)
    use = (config >= 0) & (config < n) & (rng.random(seed.size) < keep)
    seed, config = seed[use], config[use]
    far = rng.random(seed.size) < links
    config[far] = rng.integers(0, n, int(far.sum()))
    task = rng.integers(0, 12, seed.size)
    y = (
        0.8
        + 0.01 * rng.normal(size=n)[seed]
        + 0.02 * rng.normal(size=n)[config]
        + 0.01 * rng.normal(size=12)[task]
        + 0.01 * rng.normal(size=seed.size)
    )
    return pd.DataFrame(
        {
            "seed": np.char.add("s", seed.astype(str)),
            "config": np.char.add("c", config.astype(str)),
            "task": np.char.add("t", task.astype(str)),
            "y": y,
        }
    )


# lme4's lmer timed in the same run (--lme4): the data written to a temporary
# directory (InstEval exported from R's lme4, not kept), lmer's fit alone timed,
# the best of two fits (vareval's whole analysis: the best of three);
# InstEval on lme4's own copy (read back from the CSV as strings, lmer took
# 392 s in one run against ~52 s on its own copy earlier; not investigated)
_LMER = """
suppressMessages(library(lme4))
args <- commandArgs(TRUE)
if (args[1] == "export") {
  d <- InstEval
  write.csv(data.frame(s = d$s, d = d$d, dept = d$dept, service = d$service, y = d$y),
            args[2], row.names = FALSE)
} else {
  if (args[2] == "InstEval") d <- InstEval else {  # as lme4 ships it
    d <- read.csv(args[2], colClasses = "character")
    d$y <- as.numeric(d$y)
  }
  best <- Inf
  for (i in 1:2) {  # the best of two, as vareval's best of three
    t0 <- proc.time()[["elapsed"]]
    m <- lmer(as.formula(args[3]), d)
    best <- min(best, proc.time()[["elapsed"]] - t0)
  }
  cat(best, "\n")
}
"""


def lme4_side_by_side():
    """vareval's whole analysis beside lmer's fit alone on InstEval and make_crossed(300)."""
    import shutil
    import subprocess
    import tempfile

    import pandas as pd

    if shutil.which("Rscript") is None:
        print("Rscript not found: install R with lme4 to run --lme4 (skipped)")
        return
    tmp = Path(tempfile.mkdtemp())
    (tmp / "lmer.R").write_text(_LMER)

    def rscript(*args):
        out = subprocess.run(["Rscript", str(tmp / "lmer.R"), *args],
                             capture_output=True, text=True, check=True)  # fmt: skip
        return out.stdout

    rscript("export", str(tmp / "insteval.csv"))
    make_crossed(300).to_csv(tmp / "crossed.csv", index=False)
    cases = [
        ("InstEval, 73,421 rows", "insteval.csv", "y ~ service + (1|s) + (1|d) + (1|dept)",
         dict(fixed=["service"], random=["s", "d", "dept"])),
        ("make_crossed(300), 45,000 rows", "crossed.csv",
         "y ~ experiment + (1|seed) + (1|config)",
         dict(fixed=["experiment"], random=["seed", "config"])),
    ]  # fmt: skip
    # vareval's modules imported before the timing, as lme4 is loaded before lmer's
    variance = vareval.variance
    for label, name, formula, kw in cases:
        d = pd.read_csv(tmp / name, dtype=str)
        d["y"] = d["y"].astype(float)
        secs, a = best_of(lambda d=d, kw=kw: variance(d, metric="y", **kw), 3)
        data = "InstEval" if name == "insteval.csv" else str(tmp / name)
        lmer = float(rscript("fit", data, formula))
        print(
            f"{label:32s} vareval fit+LRTs+F {secs:6.2f} s  lmer fit alone {lmer:6.2f} s  "
            f"ratio {lmer / secs:5.2f}x (goal >= 5x)  theta {np.round(a.fit.theta, 5)}"
        )
    shutil.rmtree(tmp)


# The command end to end beside lmer (--command): ``vareval variance`` run as
# a subprocess (start, read, fit, LRTs, F tests, printing), its CPU time
# (user + system), wall time and peak memory from the kernel (wait4), against
# lmer's fit alone in R (CPU and wall from proc.time around lmer, after the
# data are read and lme4 loaded) and the R process's peak memory. The same
# rows for both (CSV written here; InstEval as lme4 ships it).
_LMER_ALONE = """
suppressMessages(library(lme4))
args <- commandArgs(TRUE)
if (args[1] == "InstEval") d <- InstEval else {
  d <- read.csv(args[1], colClasses = "character")
  d$y <- as.numeric(d$y)
}
best <- c(Inf, Inf)
for (i in seq_len(as.integer(args[3]))) {
  t0 <- proc.time()
  m <- suppressMessages(suppressWarnings(lmer(as.formula(args[2]), d)))
  t <- proc.time() - t0
  if (t[["user.self"]] + t[["sys.self"]] < best[1])
    best <- c(t[["user.self"]] + t[["sys.self"]], t[["elapsed"]])
}
cat(best, REMLcrit(m), "\n")
"""
# (label, data, lmer formula, command flags)
_COMMAND_CASES = [
    ("InstEval, 73,421 rows", "InstEval", "y ~ service + (1|s) + (1|d) + (1|dept)",
     ["--fixed", "service", "--random", "s,d,dept"]),
    ("make_crossed(300), 45,000 rows", "crossed",
     "y ~ experiment + (1|seed) + (1|config) + (1|seed:experiment)", []),
    ("  the same, no seed:experiment", "crossed", "y ~ experiment + (1|seed) + (1|config)",
     ["--no-seed-by-experiment"]),
    ("banded N = 2,000", ("banded", 2000, 0.0), "y ~ 1 + (1|seed) + (1|config) + (1|task)",
     ["--fixed", "", "--random", "seed,config,task"]),
    ("banded N = 5,000", ("banded", 5000, 0.0), "y ~ 1 + (1|seed) + (1|config) + (1|task)",
     ["--fixed", "", "--random", "seed,config,task"]),
    ("banded N = 2,000, 3% links", ("banded", 2000, 0.03),
     "y ~ 1 + (1|seed) + (1|config) + (1|task)", ["--fixed", "", "--random", "seed,config,task"]),
    ("banded N = 10,000, 3% links", ("banded", 10000, 0.03),
     "y ~ 1 + (1|seed) + (1|config) + (1|task)", ["--fixed", "", "--random", "seed,config,task"]),
]  # fmt: skip


def _run(cmd, env=None):
    """CPU seconds (user + system), wall seconds, peak MB and stdout of a subprocess."""
    import subprocess

    t = time.perf_counter()
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    ) as p:
        out = p.stdout.read()
        _, status, use = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if p.returncode:
        raise RuntimeError(f"{cmd[0]} exited with {p.returncode}")
    return use.ru_utime + use.ru_stime, wall, use.ru_maxrss / 1024, out


def command_side_by_side(only=None):
    """The ``vareval variance`` command (a subprocess) beside lmer's fit alone."""
    import shutil
    import sys
    import tempfile

    if shutil.which("Rscript") is None:
        print("Rscript not found: install R with lme4 to run --command (skipped)")
        return
    tmp = Path(tempfile.mkdtemp())
    # vareval from cached bytecode, as an installed package runs, even where
    # PYTHONDONTWRITEBYTECODE is set (a private cache: no checkout is written to)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    (tmp / "lmer.R").write_text(_LMER_ALONE)
    (tmp / "export.R").write_text(_LMER)
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'design':34s} {'vareval CPU':>11s} {'wall':>6s} {'peak':>7s}   "
          f"{'lmer CPU':>8s} {'wall':>6s} {'R peak':>7s}   CPU ratio  peak ratio")  # fmt: skip
    for label, data, formula, flags in _COMMAND_CASES:
        kind = data if isinstance(data, str) else data[0]  # "crossed" picks both its rows
        if only and not any(o in label or o == kind for o in only):
            continue
        if data == "InstEval":
            path = tmp / "insteval.csv"
            if not path.exists():
                _run(["Rscript", str(tmp / "export.R"), "export", str(path)])
        else:
            path = tmp / (data if isinstance(data, str) else "_".join(map(str, data)))
            path = path.with_suffix(".csv")
            if not path.exists():
                frame = make_crossed(300) if data == "crossed" else make_banded(*data[1:])
                frame.to_csv(path, index=False)
        big = not (data == "crossed" or data == "InstEval" or data[1] <= 2000)
        cmd = [sys.executable, "-m", "vareval", "variance", str(path), "--metric", "y", *flags]
        runs = [_run(cmd, env) for _ in range(1 if big else 2)]
        cpu, wall, peak, _ = min(runs)
        r_data = "InstEval" if data == "InstEval" else str(path)
        r_cpu, r_wall, r_peak, out = _run(
            ["Rscript", str(tmp / "lmer.R"), r_data, formula, "1" if big else "2"]
        )
        lmer_cpu, lmer_wall = map(float, out.split()[:2])
        print(f"{label:34s} {cpu:9.2f} s {wall:6.2f} {peak:5.0f} MB   {lmer_cpu:6.2f} s "
              f"{lmer_wall:6.2f} {r_peak:5.0f} MB   {lmer_cpu / cpu:7.2f}x  "
              f"{peak / r_peak:7.2f}x", flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    shutil.rmtree(tmp)


def best_of(fn, repeat):
    out, best = None, np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def analyse(d):
    return vareval.variance(
        d, metric="y", fixed=["experiment"], random=["seed", "config"]
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--quick", action="store_true", help="skip the 900,000-row and crossed cases"
    )
    ap.add_argument(
        "--crossed", action="store_true", help="only the 100,000-level crossed case"
    )
    ap.add_argument("--write-csv", metavar="DIR", help="write the designs for R")
    ap.add_argument(
        "--lme4", action="store_true", help="InstEval and make_crossed(300) beside lmer"
    )
    ap.add_argument(
        "--command", nargs="*", metavar="LABEL",
        help="the vareval variance command beside lmer's fit (only the designs "
        "whose label contains a LABEL, when given)",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.command is not None:
        command_side_by_side(args.command)
        return
    if args.lme4:
        lme4_side_by_side()
        return
    cases = [(label, make, shape) for label, *shape in CASES]
    crossed = (CROSSED[0], make_crossed, CROSSED[1:])
    cases = cases[:2] if args.quick else [crossed] if args.crossed else cases + [crossed]
    if args.write_csv:
        out = Path(args.write_csv)
        out.mkdir(parents=True, exist_ok=True)
        for i, (label, maker, shape) in enumerate(cases):  # every design run here
            path = out / f"{i}_{label.split()[0].replace(',', '')}.csv"
            maker(*shape)[["experiment", "seed", "config", "y"]].to_csv(
                path, index=False
            )
            print("wrote", path)
        return
    print(__doc__.split("\n\n")[3], "\n")
    for label, maker, shape in cases:
        d = maker(*shape)
        repeat = 1 if len(d) > 200_000 else 3
        secs, a = best_of(lambda d=d: analyse(d), repeat)
        kr = a.f_tests["kenward-roger"][0]
        line = (
            f"{label:28s} variance(df) {secs:7.3f} s  "
            f"(SDs {np.round(a.fit.sd, 4)}, KR F {kr.statistic:.3f} "
            f"on ({kr.ndf:g}, {kr.ddf:.1f}))"
        )
        print(line)
        if label in ANCHORS:
            lme4 = ANCHORS[label]
            target = TARGETS.get(label)
            verdict = "met" if target and secs < target else "NOT met"
            print(
                f"{'':28s} lmerTest lmer+ranova+anova {lme4:7.2f} s  "
                f"ratio lmerTest/vareval {lme4 / secs:6.1f}x"
                + (f"  target < {target} s: {verdict}" if target else "")
            )
        if label.startswith("9,000"):
            t, _ = best_of(lambda a=a: profile_intervals(a.fit), 1)
            print(f"{'':28s} profile intervals (all components) {t:7.3f} s")
            t, _ = best_of(
                lambda a=a: bootstrap_intervals(a.fit, n_resamples=1000, rng=0), 1
            )
            print(f"{'':28s} bootstrap intervals, 1,000 refits {t:7.3f} s")


if __name__ == "__main__":
    main()
