"""The DataFrame-level evals API: the naive interval at the asked level; one rng, one answer."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import vareval


def _answers(seed=0):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(40), 3)  # 40 questions, 3 samples each, 8 passages
    return pd.DataFrame({
        "model": np.tile(["a", "b"], q.size),
        "question": np.repeat(q, 2).astype(str),
        "passage": (np.repeat(q, 2) // 5).astype(str),
        "correct": (rng.random(2 * q.size) < 0.6).astype(float),
    })  # fmt: skip


@pytest.mark.parametrize("confidence", [0.8, 0.95])
def test_the_naive_interval_is_at_the_asked_level(confidence):
    table = vareval.eval_scores(_answers(), metric="correct", cluster="passage",
                                confidence=confidence)  # fmt: skip
    for _, row in table.frame.iterrows():
        r = table.results[row["model"]]
        half = stats.norm.ppf(0.5 + confidence / 2) * r.se_naive
        assert row["naive_low"] == pytest.approx(r.estimate - half, rel=1e-12)
        assert row["naive_high"] == pytest.approx(r.estimate + half, rel=1e-12)
    assert len(table.frame) == 2


def test_the_cluster_bootstrap_gives_the_same_interval_for_the_same_rng():
    kw = dict(metric="correct", cluster="passage", interval="bootstrap", n_resamples=500)
    one = vareval.eval_scores(_answers(), rng=7, **kw).frame
    two = vareval.eval_scores(_answers(), rng=7, **kw).frame
    pd.testing.assert_frame_equal(one, two)
