import pytest

from vareval.errors import ArgumentError
from vareval.experiment import reseeding_design


def test_nested_layout_counts_and_labels():
    d = reseeding_design(
        {"model": ["a", "b"], "opt": ["sgd", "adam"]}, seeds=3, configs=2, reruns=2
    )
    assert len(d) == 2 * 2 * 3 * 2 * 2
    assert set(d["experiment"]) == {"a_sgd", "a_adam", "b_sgd", "b_adam"}
    assert d.groupby("config")["seed"].nunique().max() == 1  # nested: one seed per config
    assert not d.duplicated(["experiment", "seed", "config", "rerun"]).any()


def test_shared_configs_cross_the_seeds():
    d = reseeding_design({"model": ["a"]}, seeds=3, configs=2, nested=False)
    assert sorted(d["config"].unique()) == ["c0", "c1"]
    assert (d.groupby("config")["seed"].nunique() == 3).all()


@pytest.mark.parametrize(
    "factors, kwargs, match",
    [
        ({}, {}, "at least one factor"),
        ({"model": []}, {}, "non-empty"),
        ({"model": ["a", "a"]}, {}, "repeated"),
        ({"seed": ["a"]}, {}, "reserved"),
        ({"model": ["a"]}, {"seeds": 0}, "seeds"),
    ],
)
def test_bad_designs(factors, kwargs, match):
    args = {"seeds": 2, "configs": 2} | kwargs
    with pytest.raises(ArgumentError, match=match):
        reseeding_design(factors, **args)
