import hashlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from vareval.errors import ExperimentError
from vareval.experiment.spec import Distribution
from vareval.experiment.streams import (
    Trial,
    configurations,
    sample_configs,
    seed_everything,
    seed_sequence,
    trial_seeds,
)

SPACE = {
    "lr": Distribution("log-uniform", 1e-4, 1e-1),
    "mom": Distribution("uniform", 0.5, 0.9),
    "hidden": Distribution("integer", 1, 3),
    "act": Distribution("choice", values=("relu", "tanh")),
}


def _words(name):
    d = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(d[:4], "little"), int.from_bytes(d[4:], "little")


def test_stream_is_the_documented_seed_sequence(make_spec):
    spec = make_spec(entropy=99)
    rec = trial_seeds(spec, seed=2, rerun=1)
    assert rec["init"] == {"entropy": 99, "spawn_key": [1, 1, 2, 0, *_words("init")]}
    # an independent construction of the same stream
    ref = np.random.default_rng(
        np.random.SeedSequence(99, spawn_key=(1, 1, 2, 0, *_words("init")))
    )
    assert np.array_equal(
        np.random.default_rng(seed_sequence(rec["init"])).random(5), ref.random(5)
    )


def test_fixed_source_does_not_depend_on_seed(make_spec):
    spec = make_spec(fixed=("data_split",))
    a, b = trial_seeds(spec, 0, 0), trial_seeds(spec, 5, 1)
    assert a["data_split"] == b["data_split"]
    assert a["init"] != b["init"]
    free = make_spec()
    assert (
        trial_seeds(free, 0, 0)["data_split"] != trial_seeds(free, 1, 0)["data_split"]
    )


def test_reruns_same_or_independent(make_spec):
    same = make_spec(rerun_mode="same")
    assert trial_seeds(same, 1, 0) == trial_seeds(same, 1, 1)
    indep = make_spec(rerun_mode="independent")
    assert trial_seeds(indep, 1, 0)["init"] != trial_seeds(indep, 1, 1)["init"]


def test_sources_are_distinct_streams(make_spec):
    rec = trial_seeds(make_spec(), 0, 0)
    draws = {
        s: np.random.default_rng(seed_sequence(r)).random(1000) for s, r in rec.items()
    }
    assert not np.array_equal(draws["init"], draws["data_split"])
    assert abs(np.corrcoef(draws["init"], draws["data_split"])[0, 1]) < 0.15


def test_sample_configs_ranges_and_types():
    cfgs = sample_configs(SPACE, 500, np.random.default_rng(1))
    lr = np.array([c["lr"] for c in cfgs])
    assert lr.min() >= 1e-4 and lr.max() < 1e-1
    assert {c["hidden"] for c in cfgs} == {1, 2, 3}
    assert all(isinstance(c["hidden"], int) for c in cfgs)
    assert {c["act"] for c in cfgs} == {"relu", "tanh"}
    mom = np.array([c["mom"] for c in cfgs])
    assert mom.min() >= 0.5 and mom.max() < 0.9


def test_log_uniform_is_uniform_in_log():
    cfgs = sample_configs(
        {"lr": Distribution("log-uniform", 1e-4, 1e-1)}, 2000, np.random.default_rng(5)
    )
    u = (np.log10([c["lr"] for c in cfgs]) + 4) / 3
    assert stats.kstest(u, "uniform").pvalue > 0.001


def test_sampling_deterministic_and_ignores_global_seed(make_spec):
    spec = make_spec(space=SPACE, configs=3)
    np.random.seed(0)  # noqa: NPY002
    a = configurations(spec)
    np.random.seed(1)  # noqa: NPY002
    random.seed(1)
    b = configurations(spec)
    assert a == b
    assert a[0] != a[1]  # nested: each seed its own configurations
    shared = configurations(make_spec(space=SPACE, configs=3, nested=False))
    assert shared[0] == shared[1] == shared[2]


def test_seed_everything_seeds_python_and_numpy():
    ss = np.random.SeedSequence(3, spawn_key=(1,))
    s1 = seed_everything(ss)
    x1 = (random.random(), np.random.random())  # noqa: NPY002
    s2 = seed_everything(ss)
    x2 = (random.random(), np.random.random())  # noqa: NPY002
    assert s1 == s2 and x1 == x2
    g = np.random.default_rng(4)
    assert isinstance(
        seed_everything(g, deterministic=True), int
    )  # torch absent: no error
    with pytest.raises(ExperimentError, match="SeedSequence or Generator"):
        seed_everything(42)


def test_trial_context(make_spec):
    spec = make_spec()
    t = Trial(
        trial_id=1,
        factors={"model": "a"},
        config={"lr": 0.1},
        params={},
        seed=0,
        config_index=0,
        config_label="s0_c0",
        rerun=0,
        seeds=trial_seeds(spec, 0, 0),
    )
    assert t.rng("init") is t.rng("init")
    first = t.rng("init").random()
    again = Trial(**{**t.__dict__, "_generators": {}}).rng("init").random()
    assert first == again
    assert t.random_state("data_split").randint(1000) == t.random_state(
        "data_split"
    ).randint(1000)
    assert 0 <= t.int_seed("init") < 2**32
    with pytest.raises(
        ExperimentError, match="source of randomness 'augmentation' is not"
    ):
        t.rng("augmentation")


@given(
    low=st.floats(1e-8, 1e3),
    ratio=st.floats(1.001, 1e6),
    ilow=st.integers(-1000, 1000),
    iwidth=st.integers(0, 50),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_samples_stay_in_their_bounds(low, ratio, ilow, iwidth, seed):
    space = {
        "u": Distribution("uniform", -low, low * ratio),
        "lu": Distribution("log-uniform", low, low * ratio),
        "i": Distribution("integer", ilow, ilow + iwidth),
    }
    cfgs = sample_configs(space, 20, np.random.default_rng(seed))
    assert cfgs == sample_configs(space, 20, np.random.default_rng(seed))
    for c in cfgs:
        assert -low <= c["u"] < low * ratio
        assert low <= c["lu"] <= low * ratio
        assert ilow <= c["i"] <= ilow + iwidth and isinstance(c["i"], int)
