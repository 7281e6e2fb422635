"""Benchmark: all pairwise comparisons of 20 models on 10,000 questions x 10 samples.

vareval's ``compare_models`` (per-question means once; one resample matrix
shared by every model, so a pair's resampled difference is a difference of
two columns) with 10,000 permutation resamples (sign flips of questions) and
10,000 paired-bootstrap resamples, against

- a straightforward numpy loop: for each of the 190 pairs, the per-question
  differences, then a loop over resamples drawing signs (and indices);
  timed on a few pairs and scaled to 190;
- inspect_ai's ``stderr`` metric (its clustered and plain SE of a mean),
  timed on one model's 10,000 per-question scores and scaled to 20 models;
  it gives no pairwise comparison.

Run: PYTHONPATH=src python bench/bench_evals.py
Wall-clock on a shared machine: expect noise.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from vareval.stats.evals import compare_models  # noqa: E402

N_Q, K, M, B = 10_000, 10, 20, 10_000


def data(rng):
    q = np.tile(np.repeat(np.arange(N_Q), K), M)
    model = np.repeat([f"m{i:02d}" for i in range(M)], N_Q * K)
    skill = np.repeat(np.linspace(-0.3, 0.3, M), N_Q * K)
    hard = np.tile(np.repeat(rng.normal(size=N_Q), K), M)
    scores = (rng.random(q.size) < 1 / (1 + np.exp(-(skill + hard)))).astype(float)
    return scores, model, q


def loop_pairs(means, rng, pairs):
    """Per pair: a Python loop over resamples (sign flips and bootstrap draws)."""
    for i, j in pairs:
        d = means[:, i] - means[:, j]
        obs = abs(d.mean())
        hits = 0
        boots = np.empty(B)
        for b in range(B):
            hits += abs((d * rng.choice((-1.0, 1.0), d.size)).mean()) >= obs
            boots[b] = d[rng.integers(0, d.size, d.size)].mean()
        np.quantile(boots, [0.025, 0.975])


def main():
    rng = np.random.default_rng(0)
    scores, model, q = data(rng)
    t = time.perf_counter()
    perm = compare_models(scores, model, q, test="permutation", n_resamples=B, rng=1)
    t_perm = time.perf_counter() - t
    t = time.perf_counter()
    compare_models(scores, model, q, test="bootstrap", interval="bootstrap", n_resamples=B, rng=1)
    t_boot = time.perf_counter() - t
    print(f"vareval, 190 pairs, {B:,} permutation resamples: {t_perm:.2f} s")
    print(f"vareval, 190 pairs, {B:,} bootstrap resamples + intervals: {t_boot:.2f} s")
    means = np.stack([scores[model == m].reshape(N_Q, K).mean(axis=1) for m in perm.models], 1)
    t = time.perf_counter()
    loop_pairs(means, rng, [(0, 1), (2, 3)])
    t_loop = (time.perf_counter() - t) / 2 * 190
    print(f"numpy loop over resamples (2 pairs, scaled to 190): {t_loop:.1f} s "
          f"= {t_loop / (t_perm + t_boot):.0f} x vareval")
    try:
        from inspect_ai.scorer import SampleScore, Score, stderr
    except ImportError:
        print("inspect_ai not installed: its metric is not timed")
        return
    samples = [SampleScore(score=Score(value=float(v)), sample_id=i,
                           sample_metadata={"c": i // 5}) for i, v in enumerate(means[:, 0])]
    t = time.perf_counter()
    stderr()(samples)
    stderr(cluster="c")(samples)
    t_inspect = (time.perf_counter() - t) * M
    print(f"inspect_ai stderr (plain + clustered), 20 models: {t_inspect:.2f} s "
          "(SEs of single means only; no paired comparison)")


if __name__ == "__main__":
    main()
