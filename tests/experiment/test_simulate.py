import numpy as np
import pandas as pd
import pytest

from vareval.errors import ArgumentError
from vareval.experiment.design import reseeding_design
from vareval.experiment.simulate import simulate_responses


@pytest.fixture
def design():
    return reseeding_design({"model": ["a", "b"]}, seeds=4, configs=3, reruns=2)


def test_same_rng_same_answer_and_global_seed_ignored(design):
    a = simulate_responses(design, sd_seed=1, sd_config=1, rng=7)
    np.random.seed(1)  # noqa: NPY002 (checking the global seed has no effect)
    b = simulate_responses(design, sd_seed=1, sd_config=1, rng=7)
    np.random.seed(2)  # noqa: NPY002 (checking the global seed has no effect)
    c = simulate_responses(design, sd_seed=1, sd_config=1, rng=np.random.default_rng(7))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    d = simulate_responses(design, sd_seed=1, sd_config=1, rng=8)
    assert not np.allclose(a["y"], d["y"])


def test_components_enter_as_declared(design):
    # no residual noise: runs of one (seed, config) are identical across reruns
    # and experiments share the seed and configuration effects
    out = simulate_responses(
        design,
        means={"a": 0.0, "b": 1.0},
        sd_seed=1.0,
        sd_config=0.5,
        sd_residual=0.0,
        rng=0,
    )
    spread = out.groupby(["experiment", "seed", "config"])["y"].agg(np.ptp)
    assert np.all(spread == 0)
    wide = out.pivot_table(
        index=["seed", "config", "rerun"], columns="experiment", values="y"
    )
    np.testing.assert_allclose(wide["b"] - wide["a"], 1.0)


def test_bad_arguments(design):
    with pytest.raises(ArgumentError, match="sd_seed"):
        simulate_responses(design, sd_seed=-1)
    with pytest.raises(ArgumentError, match="no value for experiment"):
        simulate_responses(design, means={"a": 1.0})
    with pytest.raises(ArgumentError, match="'seed' column"):
        simulate_responses(design.drop(columns="seed"))
