"""Benchmark: the report for 100 methods x 1,000 runs (issue 7).

Targets: build in under 10 s, file under 5 MB. The anchor is the bare cost of
the statistics the page shows (every summary and paired difference, with the
same bootstrap size), so the ratio says what the page itself adds (plots,
simulations, template). The end-to-end command (start-up, reading the CSV,
writing the file) is timed too. Timings are noisy on a shared 2-core machine.

Run: PYTHONPATH=src python bench/bench_report.py [--methods 100] [--runs 1000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def make_table(methods: int, runs: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    seed_effect = rng.normal(0, 0.01, size=runs)  # shared per seed: pairing helps
    parts = []
    for m in range(methods):
        acc = 0.80 + 0.0005 * m + seed_effect + rng.normal(0, 0.01, size=runs)
        parts.append(
            pd.DataFrame(
                {"method": f"method-{m:03d}", "seed": np.arange(runs), "accuracy": acc}
            )
        )
    return pd.concat(parts, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--methods", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()

    import vareval.stats as st
    from vareval.report.builder import collect, render
    from vareval.report.sections.paired import boot_resamples

    df = make_table(args.methods, args.runs)
    print(f"table: {args.methods} methods x {args.runs} runs = {len(df):,} rows")
    collect(
        df.head(4 * args.runs), metric="accuracy", by="method", pair_on="seed"
    )  # warm

    t0 = time.perf_counter()
    data, sections, checklist, notes = collect(
        df, metric="accuracy", by="method", pair_on="seed", source="synthetic"
    )
    t_collect = time.perf_counter() - t0
    t1 = time.perf_counter()
    render(data, sections, checklist, notes)
    t_render = time.perf_counter() - t1
    total = t_collect + t_render
    n_boot = boot_resamples(data, args.methods - 1)

    # Anchor: the statistics alone, as a notebook would compute them.
    t0 = time.perf_counter()
    groups = {k: g["accuracy"].to_numpy() for k, g in df.groupby("method", sort=False)}
    for x in groups.values():
        st.summarize(x)
    base = groups["method-000"]
    have_paired = hasattr(st, "paired_difference")
    if have_paired:
        for name, x in groups.items():
            if name != "method-000":
                st.paired_difference(x, base, n_resamples=n_boot, rng=0)
    t_stats = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "runs.csv"
        out = Path(tmp) / "report.html"
        df.to_csv(csv, index=False)
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "vareval",
                "report",
                str(csv),
                "-o",
                str(out),
                "--metric",
                "accuracy",
                "--by",
                "method",
                "--pair-on",
                "seed",
            ],
            check=True,
            env=dict(os.environ),
            stdout=subprocess.DEVNULL,
        )
        t_cli = time.perf_counter() - t0
        size = out.stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    def verdict(ok):
        return "OK" if ok else "MISSED"

    print(
        f"sections: {', '.join(s.id for s in sections)}"
        + ("" if have_paired else " (paired statistics not installed)")
    )
    print(f"bootstrap resamples per comparison:     {n_boot:,}")
    print(f"statistics alone (summaries + paired): {t_stats:6.2f} s")
    print(f"report build (sections):               {t_collect:6.2f} s")
    print(f"render (plots to SVG, Jinja2):         {t_render:6.2f} s")
    print(
        f"report in-process (build + render):    {total:6.2f} s   target < 10 s   "
        f"{verdict(total < 10)}"
    )
    print(f"report / statistics alone:             {total / t_stats:6.1f} x")
    print(
        f"vareval report command, end to end:    {t_cli:6.2f} s   target < 10 s   "
        f"{verdict(t_cli < 10)}"
    )
    print(
        f"file size:                             {size / 1e6:6.2f} MB  target < 5 MB   "
        f"{verdict(size < 5e6)}"
    )
    print(f"peak RSS: this process {peak:.0f} MB, the command {peak_child:.0f} MB")


if __name__ == "__main__":
    main()
