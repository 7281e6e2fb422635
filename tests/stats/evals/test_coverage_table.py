"""bench/calibrate_evals.py (the coverage table of docs/evals.md) scores its
simulated benchmarks all at once; each interval it computes is eval_score's."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

from vareval.errors import VarevalWarning
from vareval.stats.evals import eval_score

_path = Path(__file__).resolve().parents[3] / "bench" / "calibrate_evals.py"
_spec = importlib.util.spec_from_file_location("vareval_bench_calibrate_evals", _path)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize(("n", "k", "icc"), [(10, 1, 0.0), (10, 5, 0.3), (30, 1, 0.1),
                                             (100, 5, 0.0), (100, 3, 0.3)])
def test_the_tables_intervals_are_eval_scores(rng, n, k, icc):
    scores, cluster, truth = bench.benchmarks(rng, 20, n, k, icc)
    assert scores.shape == (20, n * k) and truth.shape == (20,)
    (low, high), (nlow, nhigh) = bench.intervals(scores, cluster, k)
    question = np.repeat(np.arange(n), k)
    clusters = None if icc == 0 else cluster[question]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for s, x in enumerate(scores):
            r = eval_score(x, question, clusters)
            naive = eval_score(x, question, clusters, interval="normal")
            np.testing.assert_allclose([low[s], high[s]], [r.low, r.high], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose([nlow[s], nhigh[s]], [naive.low, naive.high], rtol=1e-12,
                                       atol=1e-14)


def test_a_row_of_the_table_is_reproducible_from_its_seed():
    a = bench.coverage(np.random.default_rng(5), 300, 30, 5, 0.1)
    b = bench.coverage(np.random.default_rng(5), 300, 30, 5, 0.1)
    assert np.array_equal(a, b) and a[0] > a[1]
