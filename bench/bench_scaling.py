"""Scaling table: every analysis command at 10^3 .. 10^6 rows, time and peak memory.

Each command runs as its own process (``python -m vareval ...``, start-up and
reading included) on synthetic tables of the shape it reads; the table gives
wall seconds, CPU seconds (user + system, from the child's own rusage: the
load of a shared machine moves wall time, CPU time much less) and the peak
resident memory. A cell is ``-`` when the size is above the command's
``--max`` or ``timeout`` when it ran past ``--timeout`` seconds, so the next
size that falls over is visible.

Run: PYTHONPATH=src python bench/bench_scaling.py [--sizes 1000,10000,100000,1000000]
                                                  [--only tuning-curve,paired] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def runs_table(n, rng):
    """Two methods paired by seed: ``n`` rows."""
    seeds = n // 2
    base = rng.normal(0.85, 0.02, seeds)
    return pd.DataFrame({
        "method": np.repeat(["a", "b"], seeds),
        "seed": np.tile(np.arange(seeds), 2),
        "accuracy": np.clip(np.r_[base + 0.002, base] + rng.normal(0, 0.01, 2 * seeds), 0, 1),
    })  # fmt: skip


def search_table(n, rng):
    """One method's ``n`` random-search results."""
    return pd.DataFrame({"method": "a", "accuracy": rng.beta(8, 2, n)})


def predictions_table(n, rng, classes=10):
    """``n`` items, gold and two systems' predictions over ``classes`` classes."""
    gold = rng.integers(0, classes, n)
    noisy = lambda p: np.where(rng.random(n) < p, gold, rng.integers(0, classes, n))  # noqa: E731
    return pd.DataFrame({"item": np.arange(n), "gold": gold, "a": noisy(0.8), "b": noisy(0.78)})


def tasks_table(n, rng, runs=10, methods=4):
    """``methods`` methods x ``n / (methods x runs)`` tasks x ``runs`` runs."""
    tasks = max(2, n // (methods * runs))
    shape = (methods, tasks, runs)
    level = rng.normal(0.6, 0.1, (1, tasks, 1)) + np.arange(methods)[:, None, None] * 0.01
    score = np.clip(level + rng.normal(0, 0.02, shape), 0, 1)
    m, t, r = np.indices(shape)
    return pd.DataFrame({
        "method": np.char.add("m", m.ravel().astype(str)),
        "task": np.char.add("t", t.ravel().astype(str)),
        "run": r.ravel(), "score": score.ravel(),
    })  # fmt: skip


def crossed_table(n, rng):
    """Two experiments x seeds x 4 configurations (nested in seed), ``n`` rows."""
    seeds = max(3, n // 8)
    exp, seed, cfg = (a.ravel() for a in np.indices((2, seeds, 4)))
    config = np.char.add(np.char.add("s", seed.astype(str)), np.char.add("c", cfg.astype(str)))
    y = (0.8 + 0.01 * exp + rng.normal(0, 0.01, seeds)[seed]
         + rng.normal(0, 0.01, seeds * 4)[seed * 4 + cfg] + rng.normal(0, 0.005, exp.size))
    return pd.DataFrame({
        "experiment": np.char.add("e", exp.astype(str)), "seed": seed,
        "config": config, "y": y,
    })  # fmt: skip


def selection_table(n, rng, configs=20):
    """Two methods x seeds x ``configs`` configurations, a validation and a test score."""
    seeds = max(2, n // (2 * configs))
    method, seed, config = (a.ravel() for a in np.indices((2, seeds, configs)))
    quality = rng.normal(0, 0.02, (2, configs))[method, config]
    noise = rng.normal(0, 0.01, method.size)
    return pd.DataFrame({
        "method": np.array(["a", "b"])[method], "seed": seed, "config": config,
        "validation": np.clip(0.8 + quality + noise + rng.normal(0, 0.01, method.size), 0, 1),
        "test": np.clip(0.8 + quality + noise, 0, 1),
    })  # fmt: skip


# command, table maker, arguments after the file, largest size
# ("read" is vareval.data.read_table alone, in a process of its own)
COMMANDS = {
    "summarize": (runs_table, ["--metric", "accuracy", "--by", "method"], 10**6),
    "paired": (runs_table, ["--metric", "accuracy", "--by", "method", "--pair-on", "seed",
                            "--compare", "a,b"], 10**6),
    "plan": (runs_table, ["--metric", "accuracy", "--by", "method", "--pair-on", "seed",
                          "--compare", "a,b", "--effect", "0.002"], 10**6),
    "best-of-k": (runs_table, ["--metric", "accuracy", "--by", "method"], 10**6),
    "tuning-curve": (search_table, ["--metric", "accuracy", "--by", "method", "--bounds", "0,1"],
                     10**7),
    "significance": (predictions_table, ["--gold", "gold", "--item", "item", "--metric",
                                         "macro-f1"], 10**6),
    "metrics": (predictions_table, ["--gold", "gold", "--item", "item"], 10**6),
    "aggregate": (tasks_table, ["--metric", "score", "--by", "method", "--task", "task"], 10**6),
    "rank": (tasks_table, ["--metric", "score", "--by", "method", "--task", "task"], 10**6),
    "aso": (runs_table, ["--metric", "accuracy", "--by", "method", "--pair-on", "seed"], 10**6),
    "sequential": (runs_table, ["--metric", "accuracy", "--by", "method", "--pair-on", "seed",
                                "--compare", "a,b", "--bounds", "0,1"], 10**6),
    "parametric-curve": (search_table, ["--metric", "accuracy", "--by", "method",
                                        "--ks", "1,10,100", "--bounds", "0,1"], 10**6),
    "select": (selection_table, ["--validation", "validation", "--test", "test", "--by",
                                 "method", "--unit", "seed", "--config", "config"], 10**6),
    "selection-curve": (selection_table, ["--validation", "validation", "--test", "test",
                                          "--by", "method"], 10**6),
    "read": (predictions_table, [], 10**7),
    "variance": (crossed_table, ["--metric", "y", "--fixed", "experiment", "--random",
                                 "seed,config"], 10**5),
}


READ = "import sys; from vareval.data import read_table; read_table(sys.argv[1])"


# Linux carries a process's high-water RSS through fork and exec, so a command
# started straight from this process (which has just held the largest table)
# would report this process's peak. A small launcher forks it instead and
# reports the command's own rusage on its last line of stderr.
LAUNCH = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, u = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)
"""


# Commands run from cached bytecode, as an installed package does, even where
# PYTHONDONTWRITEBYTECODE is set: a private cache, so no checkout is written to.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "vareval-bench-pycache")


def timed(argv, timeout):
    """Wall, CPU (user + system) seconds and peak RSS (MB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, env=ENV)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return None
    wall = time.perf_counter() - start
    lines = err.decode(errors="replace").strip().splitlines()
    code, cpu, peak = lines[-1].split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(argv[3:5])} failed: {lines[-2] if len(lines) > 1 else code}")
    return wall, float(cpu), int(peak) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [c for c in args.only.split(",") if c] or list(COMMANDS)
    print(f"load average {os.getloadavg()[0]:.1f}; wall s / CPU s / peak MB per cell")
    print(f"{'command':<14}" + "".join(f"{n:>24,}" for n in sizes))
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            make, extra, largest = COMMANDS[name]
            cells = []
            for n in sizes:
                if n > largest:
                    cells.append("-")
                    continue
                path = Path(folder) / f"{name}-{n}.csv"
                make(n, np.random.default_rng(n)).to_csv(path, index=False)
                argv = ([sys.executable, "-c", READ, str(path)] if name == "read" else
                        [sys.executable, "-m", "vareval", name, str(path), *extra])
                got = timed(argv, args.timeout)
                cells.append("timeout" if got is None else "{:.1f} / {:.1f} / {:.0f}".format(*got))
                path.unlink()
            print(f"{name:<14}" + "".join(f"{c:>24}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
