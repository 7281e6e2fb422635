"""Benchmark: the paired bootstrap of macro-F1 with many classes against scipy.

n = 10,000 items, b = 10,000 resamples, 3, 20, 100 and 1,000 classes:
vareval's ``paired_bootstrap`` (percentile interval) and
``scipy.stats.bootstrap`` (paired, vectorised, percentile interval) in the
same process. The anchor's statistic is the fair one: per batch of
resamples, three ``np.bincount`` calls with row offsets (gold counts,
predicted counts and true positives of every (resample, class) pair), so
its cost is O(batch x n) whatever the number of classes. ``batch=16`` is
the fastest of 16, 50, 100 and 500 measured (500 takes 1.5-1.9x its CPU).

Prints CPU seconds (``time.process_time``: what the load of a shared machine
does not inflate) beside wall seconds, the ratio of CPU times, and both
95 % intervals (they differ only by Monte Carlo error: different draws).
The path column says which path ran; a name ending in ``-compiled`` is the
compiled kernel (``_bootkernel``, built at install; without it the numpy
paths run). ``--numpy`` also times the numpy paths (``VAREVAL_NO_KERNEL``)
in the same run, best of 3, and their ratio to scipy.

``--metrics mcc,balanced_accuracy`` (any metric names) prints instead the
CPU and wall seconds of vareval for those metrics, best of 3, with the
bench's percentile interval and with the default BCa one (its jackknife
included); with ``--numpy`` the numpy paths' too. Beside the percentile time,
for macro-F1, MCC and balanced accuracy, scipy's (one run) with the same three
bincounts a batch (MCC in Gorodkin's multiclass form, balanced accuracy the
mean recall over the gold classes) and the ratio.

Run: PYTHONPATH=src python bench/bench_many_classes.py [--numpy] [--metrics a,b] [classes ...]
(with PYTHONPATH=src, build the kernel in place first:
``python setup.py build_ext --inplace``, or ``pip install -e .``)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import functools  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from vareval.stats import paired_bootstrap  # noqa: E402
from vareval.stats.testset import resampling  # noqa: E402

N, B = 10_000, 10_000
CLASSES = (3, 20, 100, 1000)


def make(n, c, seed=0):
    """Gold labels and two systems right 80 % and 78 % of the time, else uniform."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, c, n)
    a = np.where(rng.random(n) < 0.80, g, rng.integers(0, c, n))
    b = np.where(rng.random(n) < 0.78, g, rng.integers(0, c, n))
    return g, a, b


def macro_f1_bincount(g, p, c, gold=None):
    """Macro-F1 of each row (classes present in gold or predictions), by bincount.

    ``g`` and ``p`` have shape (rows, n) or (n,). F1 of a class is
    2 TP / (gold count + predicted count).
    """
    gold, pred, tp = _counts(g, p, c, gold)
    den = gold + pred
    f1 = np.divide(2.0 * tp, den, out=np.zeros(den.shape), where=den > 0)
    return f1.sum(1) / np.count_nonzero(den, axis=1)


def _counts(g, p, c, gold=None):
    """Each row's gold, predicted and true-positive counts by class, (rows, c) each."""
    g, p = np.atleast_2d(g), np.atleast_2d(p)
    rows = g.shape[0]
    off = (np.arange(rows) * c)[:, None]
    size = rows * c
    if gold is None:
        gold = np.bincount((g + off).ravel(), minlength=size)
    pred = np.bincount((p + off).ravel(), minlength=size)
    tp = np.bincount((g + off)[g == p], minlength=size)
    return gold.reshape(rows, c), pred.reshape(rows, c), tp.reshape(rows, c)


def mcc_bincount(g, p, c, gold=None):
    """Multiclass MCC of each row (Gorodkin's form, scikit-learn's), by bincount."""
    t, q, tp = (x.astype(float) for x in _counts(g, p, c, gold))
    s, right = t.sum(1), tp.sum(1)
    cov = right * s - (q * t).sum(1)
    den = np.sqrt((s**2 - (q * q).sum(1)) * (s**2 - (t * t).sum(1)))
    return np.divide(cov, den, out=np.zeros_like(cov), where=den > 0)


def balanced_accuracy_bincount(g, p, c, gold=None):
    """Balanced accuracy of each row: the mean recall over the classes in gold, by bincount."""
    t, _, tp = _counts(g, p, c, gold)
    recall = np.divide(tp, t, out=np.zeros(t.shape), where=t > 0)
    return recall.sum(1) / np.count_nonzero(t, axis=1)


ANCHORS = {"macro-f1": macro_f1_bincount, "mcc": mcc_bincount,
           "balanced_accuracy": balanced_accuracy_bincount}  # fmt: skip


def scipy_bootstrap(g, a, b, c, metric=macro_f1_bincount):
    def statistic(g, a, b, axis=-1):
        g2 = np.atleast_2d(g)
        off = (np.arange(g2.shape[0]) * c)[:, None]
        gold = np.bincount((g2 + off).ravel(), minlength=g2.shape[0] * c)
        return metric(g, a, c, gold) - metric(g, b, c, gold)

    return stats.bootstrap(
        (g, a, b), statistic, paired=True, vectorized=True, n_resamples=B,
        method="percentile", batch=16, rng=0,
    ).confidence_interval


def vareval_bootstrap(g, a, b):
    return paired_bootstrap(g, a, b, metric="macro-f1", n_resamples=B, ci="percentile", rng=0)


def timed(fn, *args):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn(*args)
    return time.process_time() - cpu, time.perf_counter() - wall, out


def numpy_paths(on):
    """Run the numpy paths (``on``) or the compiled kernel where built."""
    if on:
        os.environ["VAREVAL_NO_KERNEL"] = "1"
    else:
        os.environ.pop("VAREVAL_NO_KERNEL", None)
    resampling._kernel.cache_clear()


def main(classes=CLASSES, numpy_too=False):
    kernel = resampling._kernel()
    print(f"n = {N:,} items, b = {B:,} resamples, macro-F1, paired bootstrap; "
          f"load {os.getloadavg()[0]:.1f}; compiled kernel: "
          + (f"built ({os.path.basename(kernel.__file__)})" if kernel else "not built"))
    print(f"{'classes':>7s} {'types':>6s} {'path':>14s} {'vareval cpu/wall s':>18s} "
          f"{'scipy cpu/wall s':>16s} {'ratio':>6s}  {'vareval CI':>19s}  {'scipy CI':>19s}"
          + ("  numpy path cpu s, ratio" if numpy_too else ""))
    for c in classes:
        g, a, b = make(N, c)
        # vareval: best CPU of 3; scipy: one run (it takes seconds)
        cpu_v, wall_v, r = min((timed(vareval_bootstrap, g, a, b) for _ in range(3)),
                               key=lambda x: x[0])
        cpu_s, wall_s, ci = timed(scipy_bootstrap, g, a, b, c)
        lo, hi = r.confidence_interval()
        extra = ""
        if numpy_too:
            numpy_paths(True)
            cpu_n = min(timed(vareval_bootstrap, g, a, b)[0] for _ in range(3))
            numpy_paths(False)
            extra = f"  {cpu_n:6.3f} {cpu_s / cpu_n:5.0f}x"
        print(f"{c:7d} {r.n_types:6d} {r.path:>14s} {cpu_v:8.3f} /{wall_v:7.3f} "
              f"{cpu_s:7.2f} /{wall_s:6.2f} {cpu_s / cpu_v:5.0f}x  "
              f"[{lo:+.5f}, {hi:+.5f}]  [{ci.low:+.5f}, {ci.high:+.5f}]" + extra)
    print("Goal: >= 50x at 3 and 20 classes, >= 20x at 100 and 1,000; "
          "vareval < 0.5 s CPU at every class count.")


def metric_times(metrics, classes=CLASSES, numpy_too=False):
    """vareval on other metrics: CPU / wall seconds, best CPU of 3; scipy's where it has one."""
    print(f"n = {N:,} items, b = {B:,} resamples, paired bootstrap; "
          f"load {os.getloadavg()[0]:.1f}; CPU / wall s, best of 3")
    print(f"{'classes':>7s} {'metric':>26s} {'path':>14s} {'percentile':>15s} {'bca':>15s}"
          + (f" {'numpy pct':>9s} {'numpy bca':>9s}" if numpy_too else "")
          + f" {'scipy pct':>9s} {'ratio':>6s}")
    for c in classes:
        g, a, b = make(N, c)
        for m in metrics:
            row, paths = [], []
            for kernel_off in (False, True) if numpy_too else (False,):
                numpy_paths(kernel_off)
                for ci in ("percentile", "bca"):
                    run = functools.partial(paired_bootstrap, g, a, b, metric=m,
                                            n_resamples=B, ci=ci, rng=0)
                    cpu, wall, r = min((timed(run) for _ in range(3)), key=lambda x: x[0])
                    row.append(f"{cpu:9.3f}" if kernel_off else f"{cpu:6.3f} /{wall:6.3f}")
                    paths.append(r.path)
            numpy_paths(False)
            if m in ANCHORS:  # the percentile intervals' times side by side
                cpu_s = timed(scipy_bootstrap, g, a, b, c, ANCHORS[m])[0]
                best = float(row[0].split("/")[0])
                row.append(f"{cpu_s:9.2f} {cpu_s / best:5.0f}x")
            print(f"{c:7d} {m:>26s} {paths[0]:>14s} " + " ".join(row))


if __name__ == "__main__":
    args = sys.argv[1:]
    metrics = None
    if "--metrics" in args:
        at = args.index("--metrics")
        metrics = args[at + 1].split(",")
        del args[at : at + 2]
    classes = tuple(int(x) for x in args if x != "--numpy") or CLASSES
    if metrics:
        metric_times(metrics, classes, "--numpy" in args)
    else:
        main(classes, "--numpy" in args)
