"""Commands read only the columns they use: `report` on a wide file, a command on a big store.

Three command lines, each a fresh process (start-up and reading included), CPU seconds
(user + system, the child's own rusage) beside wall seconds and the peak resident memory:

- ``report`` on a wide CSV (ROWS rows x 30 columns: method, seed, accuracy and 27 columns no
  option names: full-precision floats, free text, integers), and on the same table's 3 used
  columns alone (what the wide file should cost);
- ``summarize`` on a run store of TRIALS trials: a store made by ``vareval run`` (2 models x 3
  seeds x 3 configurations x 2 reruns, two metrics), its trials copied under new seeds by SQL
  up to TRIALS, the declaration's seed count raised to match.

With ``--old SRC`` every line also runs on another source tree (e.g. ``git archive REV src |
tar -x -C /tmp/old``), interleaved with this one, and says whether the two printed the same.

Run: PYTHONPATH=src python bench/bench_columns.py [--rows 1000000] [--trials 100000]
                                                  [--old /tmp/old/src] [--rounds 2]
(``--rows 0``: the store alone.)
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import bench_scaling  # noqa: E402  (its launcher: a command's own CPU and peak)

TRIAL = """
def train(trial):
    noise = trial.rng("init").normal()
    shift = 0.02 * (trial.factors["model"] == "b") + 0.01 * trial.config["c"]
    return {"acc": 0.9 + shift + 0.01 * noise, "val_acc": 0.89 + shift + 0.01 * noise}
"""

EXPERIMENT = """
[experiment]
name = "columns-bench"
trial = "bench_trial:train"
path = {path!r}
seeds = 3
configs = 3
reruns = 2
rerun_mode = "independent"
entropy = 36

[factors]
model = ["a", "b"]

[space]
c = {{ distribution = "uniform", low = 0.0, high = 1.0 }}

[randomness]
sources = ["init"]
"""


def wide_table(path: Path, rows: int) -> Path:
    """The wide CSV at ``path`` and its 3 used columns beside it (``*_narrow.csv``)."""
    rng = np.random.default_rng(0)
    method = rng.integers(0, 3, rows)
    cols = {"method": np.array(["a", "b", "c"])[method], "seed": np.arange(rows) // 3,
            "accuracy": (0.8 + 0.01 * method + rng.normal(0, 0.02, rows)).round(6)}
    for j in range(9):
        cols[f"loss_{j}"] = rng.random(rows)
        cols[f"note_{j}"] = rng.choice(["ok", "retry, then ok", "NA", ""], rows)
        cols[f"step_{j}"] = rng.integers(0, 10**6, rows)
    df = pd.DataFrame(cols)
    df.to_csv(path, index=False)
    narrow = path.with_name(path.stem + "_narrow.csv")
    df[["method", "seed", "accuracy"]].to_csv(narrow, index=False)
    return narrow


def store(folder: Path, trials: int) -> Path:
    """A store made by `vareval run`, its trials copied under new seeds up to ``trials``."""
    (folder / "bench_trial.py").write_text(TRIAL)
    toml = folder / "experiment.toml"
    toml.write_text(textwrap.dedent(EXPERIMENT.format(path=str(folder))))
    path = folder / "runs.db"
    subprocess.run([sys.executable, "-m", "vareval", "run", str(toml), "--store", str(path),
                    "--engine", "serial", "--no-progress"], check=True, capture_output=True)
    con = sqlite3.connect(path)
    made, seeds = con.execute("SELECT count(*), max(seed) + 1 FROM trials").fetchone()
    fields = ("factors, experiment, seed, config_index, config_label, config, rerun, seeds, "
              "status, attempts, metrics, started, finished, host, error, traceback")
    copies = -(-trials // made)
    for k in range(1, copies):
        shifted = fields.replace("seed,", f"seed + {k * seeds},", 1)
        con.execute(f"INSERT INTO trials ({fields}) SELECT {shifted} FROM trials "
                    f"WHERE id <= {made}")
    spec = json.loads(con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0])
    spec["seeds"] = seeds * copies
    con.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps(spec),))
    con.commit()
    con.close()
    return path


def run(src: str, argv: list, out: Path):
    """Wall, CPU and peak MB of ``vareval ARGV`` on the source tree ``src``; its output."""
    bench_scaling.ENV["PYTHONPATH"] = src
    cell = bench_scaling.timed([sys.executable, "-m", "vareval", *argv, "-o", str(out)]
                               if argv[0] == "report" else
                               [sys.executable, "-m", "vareval", *argv], timeout=3600)
    text = subprocess.run([sys.executable, "-m", "vareval", *argv], capture_output=True,
                          env=bench_scaling.ENV, text=True).stdout if argv[0] != "report" \
        else out.read_text()
    return cell, text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--old", default=None, help="another source tree to run beside this")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "src")
    trees = [("new", here)] + ([("old", args.old)] if args.old else [])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        narrow = wide_table(folder / "wide.csv", max(args.rows, 1))
        db = store(folder, args.trials)
        lines = {
            f"report, wide ({args.rows:,} x 30)": ["report", str(folder / "wide.csv"),
                                                   "--metric", "accuracy", "--by", "method"],
            "report, its 3 columns alone": ["report", str(narrow), "--metric", "accuracy",
                                             "--by", "method"],
            f"summarize, store of {args.trials:,}": ["summarize", str(db), "--metric", "acc",
                                                     "--by", "model"],
        }
        for _, src in trees:  # compile each tree's bytecode before timing it
            subprocess.run([sys.executable, "-c", "import vareval.cli"], check=True,
                           env={**bench_scaling.ENV, "PYTHONPATH": src})
        if not args.rows:  # --rows 0: the store alone
            lines = {k: v for k, v in lines.items() if v[0] != "report"}
        print(f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'command':>34} {'tree':>4} | {'CPU s':>6} {'wall s':>7} {'peak MB':>8}")
        for name, argv in lines.items():
            texts = {}
            for _ in range(args.rounds):
                for tree, src in trees:
                    (wall, cpu, peak), texts[tree] = run(src, argv, folder / f"{tree}.html")
                    print(f"{name:>34} {tree:>4} | {cpu:6.2f} {wall:7.2f} {peak:8.0f}")
            if args.old:
                same = "identical" if len(set(texts.values())) == 1 else "differs"
                print(f"{'':>34} output {same}")
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
