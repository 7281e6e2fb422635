"""Benchmark: reading large tables, and `vareval significance` on 10^6 items.

Part 1: ``vareval.data.read_table`` (every cell read as text, columns turned
into numbers only when that loses nothing) against ``pyarrow.csv.read_csv``
and ``pandas.read_csv`` on the same file, in one process; prints the ratio to
pyarrow (target: within 3x). The files: a predictions CSV (item, gold and two
systems' labels; 200,000 and 1,000,000 rows), a wide table of 50 float
columns written by pandas (100,000 rows: full 17-digit spellings), a labels
table (500,000 rows of text, with ``1.10``, ``01``, ``NA``), and a runs table
(200,000 rows: model, seed, configuration, a 4-digit accuracy).

Part 2: ``vareval significance`` on the 1,000,000-row file, end to end in a
fresh process (start-up, read, paired bootstrap with BCa, output); target
< 5 s wall.

Run: PYTHONPATH=src python bench/bench_tables.py
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.csv as pa_csv

from bench_significance import best
from vareval.data import read_table


def make(path, n, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    pd.DataFrame(
        {
            "item": np.arange(n),
            "gold": g,
            "model_a": np.where(rng.random(n) < 0.80, g, rng.integers(0, 3, n)),
            "model_b": np.where(rng.random(n) < 0.78, g, rng.integers(0, 3, n)),
        }
    ).to_csv(path, index=False)


def other_shapes():
    """The wide, labels and runs tables (name, rows, frame)."""
    rng = np.random.default_rng(1)
    n = 500_000
    yield "50 floats", 100_000, pd.DataFrame(
        rng.random((100_000, 50)), columns=[f"m{i}" for i in range(50)])
    yield "labels", n, pd.DataFrame({
        "item": np.char.add("q", np.arange(n).astype(str)),
        "gold": rng.choice(["cat", "dog", "1.10", "01", "NA"], n),
        "model_a": rng.choice(["cat", "dog"], n)})
    n = 200_000
    yield "runs", n, pd.DataFrame({
        "model": rng.choice(["mlp", "logreg"], n), "seed": rng.integers(0, 1000, n),
        "config": np.char.add("c", rng.integers(0, 50, n).astype(str)),
        "accuracy": rng.random(n).round(4)})


def main():
    with tempfile.TemporaryDirectory() as folder:
        print("Part 1: reading tables (best of 3, seconds)")
        print(f"{'file':>10s} {'rows':>9s} {'vareval':>8s} {'pyarrow':>8s} {'pandas':>8s} "
              f"{'vs pyarrow':>11s}")
        files = []
        for n in (200_000, 1_000_000):
            files.append(("predictions", n, Path(folder) / f"p{n}.csv"))
            make(files[-1][2], n)
        for name, n, frame in other_shapes():
            files.append((name, n, Path(folder) / f"{name.replace(' ', '_')}.csv"))
            frame.to_csv(files[-1][2], index=False)
        for name, n, path in files:
            t_v = best(lambda p=path: read_table(p))
            t_a = best(lambda p=path: pa_csv.read_csv(p))
            t_p = best(lambda p=path: pd.read_csv(p))
            print(f"{name:>11s} {n:9,d} {t_v:8.3f} {t_a:8.3f} {t_p:8.3f} {t_v / t_a:10.1f}x")
        print("Target: vareval within 3x of pyarrow.")
        path = files[1][2]
        n = files[1][1]
        cmd = [sys.executable, "-m", "vareval", "significance", str(path),
               "--gold", "gold", "--item", "item"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=os.environ)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"\nPart 2: vareval significance on {n:,} items, end to end: {wall:.2f} s "
              f"wall, {cpu:.2f} s CPU (target < 5 s wall; CPU is what load does not inflate)")


if __name__ == "__main__":
    main()
