"""Start-up: what each command costs beyond the imports any Python analysis needs.

Run from the repository root:

    PYTHONPATH=src python bench/bench_startup.py                 # 5 rounds
    PYTHONPATH=src python bench/bench_startup.py --against OLD/src

Each command runs in a fresh process on small bundled data (copied out with
``vareval datasets copy``), so its CPU time (user + system) and peak memory,
from the kernel (``wait4``), are start-up, reading and a little work. The
anchors, in the same rounds:

- the floor: ``python -c "import numpy, pandas, scipy.linalg"``, what any Python
  analysis of a table must import;
- ``Rscript -e "suppressMessages(library(lme4))"``, R's start-up with lme4
  loaded, when Rscript is on the PATH.

``--against DIR`` also runs every command with ``PYTHONPATH=DIR`` (another
checkout's ``src``), interleaved, and prints the ratio. Every figure is the best
(least CPU) of the rounds; rounds interleave the commands so the machine's load
falls on all of them alike. The parent imports nothing heavy, so its own peak
memory (carried into a child at exec) stays below every child's.

Bytecode: an installed package runs from compiled ``.pyc`` files. The children
write theirs to a private cache (``PYTHONPYCACHEPREFIX``, so no checkout is
written to) in a first, untimed round, even where ``PYTHONDONTWRITEBYTECODE``
is set. ``--no-bytecode`` keeps the environment as it is: with
``PYTHONDONTWRITEBYTECODE=1`` and no ``.pyc`` beside the sources, every start
compiles vareval's modules again (about 0.05-0.1 s of CPU).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DATASETS = ("digits_runs.csv", "digits_predictions.csv", "hedwig.tsv", "decovac_sim.csv",
            "digits_eval.csv", "sklearn_tasks.csv")

# name -> the command's arguments after ``vareval`` (files relative to the data directory)
COMMANDS = {
    "--help": ["--help"],
    "summarize": ["summarize", "digits_runs.csv", "--metric", "accuracy", "--by", "method"],
    "paired": ["paired", "digits_runs.csv", "--metric", "accuracy", "--by", "method",
               "--pair-on", "seed", "--compare", "mlp,logreg"],
    "significance": ["significance", "digits_predictions.csv", "--gold", "gold", "--item",
                     "item", "--metric", "macro-f1"],
    "tuning-curve": ["tuning-curve", "hedwig.tsv", "--metric", "f1", "--by", "model_name",
                     "--bounds", "0,1", "--ks", "1,5,10,50"],
    "evals score": ["evals", "score", "digits_eval.csv", "--metric", "correct", "--cluster",
                    "image"],
    "aggregate": ["aggregate", "sklearn_tasks.csv", "--metric", "accuracy", "--by", "method",
                  "--task", "task", "--pair-on", "seed"],
    "variance": ["variance", "decovac_sim.csv", "--metric", "accuracy", "--fixed",
                 "model,optimizer", "--random", "seed,config"],
    "variance banded 2,000": ["variance", "banded2000.csv", "--metric", "y", "--fixed", "",
                              "--random", "seed,config,task"],
    "report": ["report", "digits_runs.csv", "--metric", "accuracy", "--by", "method",
               "-o", "report.html"],
}  # fmt: skip

FLOOR = [sys.executable, "-c", "import numpy, pandas, scipy.linalg"]
R_LME4 = ["Rscript", "-e", "suppressMessages(library(lme4))"]


def run(argv, cwd, env=None):
    """CPU seconds (user + system) and peak MB of one child process."""
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE) as p:
        _, status, use = os.wait4(p.pid, 0)
        err = p.stderr.read().decode(errors="replace").strip().splitlines()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv[:6])} failed: {err[-1] if err else status}")
    return use.ru_utime + use.ru_stime, use.ru_maxrss / 1024


def env_with(src, pycache):
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def prepare(data, env):
    """Copy the bundled data sets out, and write the banded N = 2,000 crossing."""
    for name in DATASETS:
        subprocess.run([sys.executable, "-m", "vareval", "datasets", "copy", name, str(data)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    bench = Path(__file__).resolve().parent
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import bench_mixed as b; "
            "b.make_banded(2000).to_csv(sys.argv[2], index=False)")
    subprocess.run([sys.executable, "-c", code, str(bench), str(data / "banded2000.csv")],
                   env=env, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", metavar="DIR", help="another checkout's src, to compare")
    parser.add_argument("--only", nargs="*", choices=list(COMMANDS), help="these commands")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="no private .pyc cache: the environment's bytecode setting")
    args = parser.parse_args()
    names = args.only or list(COMMANDS)
    anchors = {"python -c pass": [sys.executable, "-c", "pass"], "floor": FLOOR}
    if shutil.which("Rscript"):
        anchors["R + lme4"] = R_LME4

    best = {}

    def keep(key, cpu, mb):
        old = best.get(key)
        best[key] = (cpu, mb) if old is None or cpu < old[0] else old

    with tempfile.TemporaryDirectory() as tmp:
        data, pycache = Path(tmp) / "data", None if args.no_bytecode else Path(tmp) / "pyc"
        data.mkdir()
        sides = {"": env_with(os.environ.get("PYTHONPATH"), pycache)}
        if args.against:
            sides["against"] = env_with(args.against, pycache)
        prepare(data, sides[""])
        print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        for timed in [False] * (pycache is not None) + [True] * args.rounds:  # first: the .pyc
            for label, argv in anchors.items():
                cpu_mb = run(argv, data, sides[""] if argv[0] == sys.executable else None)
                if timed:
                    keep(label, *cpu_mb)
            for name in names:
                for side, env in sides.items():
                    cpu_mb = run([sys.executable, "-m", "vareval", *COMMANDS[name]], data, env)
                    if timed:
                        keep((name, side), *cpu_mb)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")

    floor = best["floor"][0]
    r = best.get("R + lme4")
    how = "sources compiled at each start" if args.no_bytecode else "from cached bytecode"
    print(f"best of {args.rounds} rounds, {how}; CPU = user + system; peak = max RSS")
    for label in anchors:
        print(f"{label:24} {best[label][0]:6.2f} s CPU {best[label][1]:6.0f} MB")
    head = f"{'command':24} {'CPU':>7} {'peak':>7} {'- floor':>8} {'/ floor':>8}"
    head += f" {'/ R lme4':>9}" if r else ""
    head += f" {'before':>7} {'new/old':>8}" if args.against else ""
    print(head)
    for name in names:
        cpu, mb = best[(name, "")]
        line = f"{name:24} {cpu:5.2f} s {mb:4.0f} MB {cpu - floor:6.2f} s {cpu / floor:7.2f}x"
        line += f" {cpu / r[0]:8.2f}x" if r else ""
        if args.against:
            old = best[(name, "against")][0]
            line += f" {old:5.2f} s {cpu / old:7.2f}x"
        print(line)


if __name__ == "__main__":
    main()
