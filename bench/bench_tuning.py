"""Benchmark: exact LD highest-density 95 % bands, vareval vs opda 0.8.0 (Monte Carlo).

Run from the repository root:

    PYTHONPATH=src python bench/bench_tuning.py [--sizes 25,100,1000,5000,20000,100000,1000000]
                                                [--opda-sizes 25,100] [--repeat 3]

For each n it times building the 95 % ``ld-hd`` CDF band for n uniform scores
(the level search included: the cache is cleared before every run), prints
the best of ``--repeat`` runs, the exact coverage reached, and the peak memory
traced by ``tracemalloc`` (numpy's allocations included). opda finds the same
level by Monte Carlo over 100,000 sorted uniform samples; it is timed at the
sizes in ``--opda-sizes`` (about 3 s at 25, 14 s at 100, minutes at 1,000),
and the ratio opda / vareval is printed (opda cannot build a band at 10^5: its
Monte Carlo needs 100,000 x n numbers). Past 40,000 scores the band bounds a grid
of order statistics (``bands.EXACT_N``); CPU seconds are printed beside wall
seconds, since timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import numpy as np

from vareval.stats.tuning import bands


def time_vareval(n: int, repeat: int):
    ys = np.random.default_rng(n).random(n)
    best = np.inf
    for _ in range(repeat):
        bands._order_statistic_band_cached.cache_clear()
        start, cpu = time.perf_counter(), time.process_time()
        band = bands.cdf_band(ys, 0.95, a=0, b=1, method="ld-hd")
        if time.perf_counter() - start < best:
            best, best_cpu = time.perf_counter() - start, time.process_time() - cpu
    # one more run under tracemalloc (which slows it down) for the peak memory
    bands._order_statistic_band_cached.cache_clear()
    tracemalloc.start()
    bands.cdf_band(ys, 0.95, a=0, b=1, method="ld-hd")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, best_cpu, peak, band.coverage


def time_opda(n: int):
    from opda.nonparametric import EmpiricalDistribution

    ys = np.random.default_rng(n).random(n)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        EmpiricalDistribution.confidence_bands(
            ys, 0.95, a=0.0, b=1.0, method="ld_highest_density",
            generator=np.random.default_rng(0),
        )  # fmt: skip
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25,100,1000,5000,20000,100000,1000000")
    parser.add_argument("--opda-sizes", default="25,100")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    opda_sizes = {int(s) for s in args.opda_sizes.split(",") if s}

    print("LD highest-density 95 % CDF band (exact level search), best of runs")
    print(f"{'n':>8}  {'vareval s':>10}  {'CPU s':>7}  {'coverage':>12}  {'peak MB':>8}  "
          f"{'opda s':>8}  {'opda/vareval':>12}")  # fmt: skip
    for n in sizes:
        repeat = args.repeat if n <= 5000 else 1
        bands._order_statistic_band_cached.cache_clear()
        seconds, cpu, peak, coverage = time_vareval(n, repeat)
        opda = time_opda(n) if n in opda_sizes else None
        ratio = f"{opda / seconds:12.0f}" if opda is not None else f"{'-':>12}"
        opda_s = f"{opda:8.2f}" if opda is not None else f"{'-':>8}"
        print(f"{n:>8}  {seconds:>10.3f}  {cpu:>7.2f}  {coverage:>12.9f}  {peak / 2**20:>8.1f}  "
              f"{opda_s}  {ratio}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
