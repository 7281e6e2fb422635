import numpy as np
import pandas as pd
import pytest

import vareval
from vareval.errors import DataError


@pytest.fixture
def runs():
    return pd.DataFrame(
        {
            "method": ["A"] * 3 + ["B"] * 3,
            "seed": [0, 1, 2] * 2,
            "acc": [0.831, 0.847, 0.822, 0.818, 0.835, 0.809],
        }
    )


def test_table_api_matches_array_api(runs):
    t = vareval.summarize(runs, metric="acc", by="method")
    assert t["A"].mean == vareval.stats.summarize([0.831, 0.847, 0.822]).mean
    frame = t.to_frame()
    assert list(frame.index) == ["A", "B"] and frame.loc["B", "selected_best"] == 0.835
    assert "Repeated runs" in repr(t) and "<table" in t._repr_html_()


def test_paired_uses_the_only_two_methods(runs):
    t = vareval.paired(runs, metric="acc", by="method", pair_on="seed", rng=0)
    (r,) = t.results.values()
    assert r.estimate == pytest.approx(0.0126667, abs=1e-7)
    assert r.selected_gap == pytest.approx(0.012)
    assert t.to_frame().index[0] == "A - B"


def test_paired_needs_names_when_more_than_two(runs):
    extra = runs.assign(method=["A"] * 3 + ["C"] * 3)
    with pytest.raises(DataError, match="name the two methods"):
        vareval.paired(pd.concat([runs, extra[3:]]), metric="acc", by="method", pair_on="seed")


def test_plan_and_best_of_k_and_ranking(runs):
    p = vareval.plan(runs, metric="acc", by="method", pair_on="seed", target_se=0.0001)
    (r,) = p.results.values()
    sd = np.std(np.subtract([0.831, 0.847, 0.822], [0.818, 0.835, 0.809]), ddof=1)
    assert r.k_required == int(np.ceil((sd / 0.0001) ** 2))
    b = vareval.best_of_k(runs, metric="acc", by="method", ks=[1, 2], n_resamples=1000, rng=0)
    assert list(b.to_frame().index.get_level_values("method").unique()) == ["A", "B"]
    s = vareval.ranking_stability(runs, metric="acc", by="method", max_k=3, n_resamples=1000, rng=0)
    assert s.to_frame().shape == (3, 3)


def test_plan_refuses_a_pilot_without_spread(runs):
    flat = runs.assign(acc=[0.5, 0.75, 1.0, 0.25, 0.5, 0.75])
    with pytest.raises(DataError, match="no spread"):
        vareval.plan(flat, metric="acc", by="method", pair_on="seed", target_se=0.01)
