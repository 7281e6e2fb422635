"""Benchmark: vareval's compressed paired resampling tests against the anchors.

Part 1 (n = 10,000 items, b = 10,000 resamples, 3-class macro-F1 and accuracy):
vareval's paired bootstrap and randomization side by side with
``scipy.stats.bootstrap`` (paired, vectorised statistic, percentile interval)
and sacrebleu-style per-resample Python loops over precomputed per-item
statistics (bootstrap: draw indices, sum, combine; randomization: draw a
swap mask, sum, combine). Prints each time and the ratio to vareval.

Part 2 (n = 1,000,000, b = 100,000, macro-F1): vareval's paired bootstrap
time, and its peak traced memory (tracemalloc; numpy reports its buffers).

Run: PYTHONPATH=src python bench/bench_significance.py
Timings are wall-clock best-of-3 on a shared machine: expect noise. BLAS is
limited to one thread (unless OPENBLAS_NUM_THREADS is set): on a loaded
2-core machine, multi-threaded BLAS spin-waits and small matrix products
become several times slower.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from vareval.stats import paired_bootstrap, paired_randomization  # noqa: E402

N, B, C = 10_000, 10_000, 3


def make(n, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, C, n)
    a = np.where(rng.random(n) < 0.80, g, rng.integers(0, C, n))
    b = np.where(rng.random(n) < 0.78, g, rng.integers(0, C, n))
    return g, a, b


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def macro_f1_vec(g, p, axis=-1):
    """Macro-F1 along ``axis``, classes present in gold or predictions."""
    f_sum = 0.0
    present = 0
    for c in range(C):
        tp = np.sum((p == c) & (g == c), axis=axis)
        denom = np.sum(p == c, axis=axis) + np.sum(g == c, axis=axis)
        with np.errstate(invalid="ignore", divide="ignore"):
            f_sum = f_sum + np.where(denom > 0, 2 * tp / denom, 0.0)
        present = present + (denom > 0)
    return f_sum / present


def accuracy_vec(g, p, axis=-1):
    return np.mean(g == p, axis=axis)


def item_stats(g, p, metric):
    if metric == "accuracy":
        return (g == p).astype(float)[:, None]
    out = np.zeros((g.size, 3 * C))
    rows = np.arange(g.size)
    hit = g == p
    out[rows[hit], g[hit]] = 1
    out[rows[~hit], C + p[~hit]] = 1
    out[rows[~hit], 2 * C + g[~hit]] = 1
    return out


def combine(s, metric, n):
    if metric == "accuracy":
        return s[0] / n
    tp, fp, fn = s[:C], s[C : 2 * C], s[2 * C :]
    den = 2 * tp + fp + fn
    present = den > 0
    return np.sum(2 * tp[present] / den[present]) / present.sum()


def sacrebleu_bootstrap(g, a, b, metric, n_resamples, seed=0):
    """sacrebleu's paired bootstrap: per-item stats, a Python loop over resamples."""
    rng = np.random.default_rng(seed)
    sa, sb = item_stats(g, a, metric), item_stats(g, b, metric)
    n = g.size
    delta = combine(sa.sum(0), metric, n) - combine(sb.sum(0), metric, n)
    hits = 0
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        d = combine(sa[idx].sum(0), metric, n) - combine(sb[idx].sum(0), metric, n)
        hits += d >= 2 * delta
    return (hits + 1) / (n_resamples + 1)


def loop_randomization(g, a, b, metric, n_resamples, seed=0):
    """Approximate randomization as usually written: a loop over swap masks."""
    rng = np.random.default_rng(seed)
    sa, sb = item_stats(g, a, metric), item_stats(g, b, metric)
    n = g.size
    ta, tb = sa.sum(0), sb.sum(0)
    delta = combine(ta, metric, n) - combine(tb, metric, n)
    diff = sb - sa
    hits = 0
    for _ in range(n_resamples):
        mask = rng.random(n) < 0.5
        moved = diff[mask].sum(0)
        d = combine(ta + moved, metric, n) - combine(tb - moved, metric, n)
        hits += abs(d) >= abs(delta)
    return (hits + 1) / (n_resamples + 1)


def scipy_bootstrap(g, a, b, metric, n_resamples):
    f = macro_f1_vec if metric == "macro-f1" else accuracy_vec

    def statistic(g, a, b, axis=-1):
        return f(g, a, axis) - f(g, b, axis)

    return stats.bootstrap(
        (g, a, b),
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        method="percentile",
        batch=500,
        rng=0,
    ).confidence_interval


def part1():
    g, a, b = make(N)
    print(
        f"Part 1: n = {N:,} items, b = {B:,} resamples, {C} classes "
        "(best of 3, seconds)"
    )
    header = (
        f"{'metric':9s} {'vareval boot':>13s} {'vareval rand':>13s} "
        f"{'scipy boot':>11s} {'sacrebleu loop':>15s} {'rand loop':>10s} "
        f"{'ratio boot':>11s} {'ratio rand':>11s}"
    )
    print(header)
    for metric in ("accuracy", "macro-f1"):
        t_vb = best(
            lambda m=metric: paired_bootstrap(
                g, a, b, metric=m, n_resamples=B, ci="percentile", rng=0
            )
        )
        t_vr = best(
            lambda m=metric: paired_randomization(
                g, a, b, metric=m, n_resamples=B, ci="percentile", rng=0
            )
        )
        t_sc = best(lambda m=metric: scipy_bootstrap(g, a, b, m, B), repeat=1)
        t_lb = best(lambda m=metric: sacrebleu_bootstrap(g, a, b, m, B), repeat=1)
        t_lr = best(lambda m=metric: loop_randomization(g, a, b, m, B), repeat=1)
        print(
            f"{metric:9s} {t_vb:13.4f} {t_vr:13.4f} {t_sc:11.3f} {t_lb:15.3f} "
            f"{t_lr:10.3f} {min(t_sc, t_lb) / t_vb:10.0f}x {t_lr / t_vr:10.0f}x"
        )
    print(
        "ratio boot = faster of (scipy, sacrebleu loop) / vareval bootstrap; "
        "ratio rand = loop / vareval randomization (randomization also draws "
        "b bootstrap resamples for the CI). Target: >= 30x."
    )
    # Same answers (within Monte Carlo error) from the loop and vareval.
    b_check = 4000
    p_loop = sacrebleu_bootstrap(g, a, b, "macro-f1", b_check, seed=1)
    p_var = paired_bootstrap(
        g, a, b, metric="macro-f1", n_resamples=b_check, alternative="greater", rng=1
    ).pvalue
    se = np.sqrt(p_var * (1 - p_var) / b_check)
    print(
        f"check: one-sided p, sacrebleu loop {p_loop:.4f} vs vareval {p_var:.4f} "
        f"(b = {b_check:,}; Monte Carlo SE about {se:.4f})"
    )


def part2():
    n, b = 1_000_000, 100_000
    g, a, bb = make(n, seed=1)
    print(
        f"\nPart 2: n = {n:,} items, b = {b:,} resamples, macro-F1, paired bootstrap "
        "(BCa CI)"
    )
    t = best(
        lambda: paired_bootstrap(g, a, bb, metric="macro-f1", n_resamples=b, rng=0)
    )
    tracemalloc.start()
    r = paired_bootstrap(g, a, bb, metric="macro-f1", n_resamples=b, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"time {t:.3f} s (target < 0.5 s); peak traced memory {peak / 2**20:.1f} MB "
        f"(target < 300 MB; inputs themselves: {3 * g.nbytes / 2**20:.0f} MB); "
        f"{r.n_types} types, path {r.path}"
    )
    t = best(
        lambda: paired_randomization(g, a, bb, metric="macro-f1", n_resamples=b, rng=0)
    )
    print(f"randomization (plus a b-resample bootstrap CI): {t:.3f} s")


if __name__ == "__main__":
    part1()
    part2()
