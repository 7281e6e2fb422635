"""Nested specifications chain: seed / configuration / rerun with repeated labels.

``tests/data/lme4/make_nested_chain.py`` made 3 experiments x 4 seeds x 4
configurations (labels c0-c3 in every seed) x 6 reruns (labels 0-5 in every
configuration); ``nested_chain.R`` fitted ``y ~ experiment +
(1 | seed/config/rerun)`` with lme4 1.1-31 (96 rerun levels).
"""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data.variance import variance
from vareval.errors import ArgumentError

DATA = Path(__file__).resolve().parents[1] / "data" / "lme4"
NESTED = ["config:seed", "rerun:config"]
NAMES = {"seed": "seed", "config:seed": "config:seed", "rerun:config:seed": "rerun:(config:seed)"}


@pytest.fixture(scope="module")
def chain():
    return pd.read_csv(DATA / "nested_chain.csv")


@pytest.fixture(scope="module")
def ref():
    r = pd.read_csv(DATA / "nested_chain_ref.csv")
    return dict(zip(r["quantity"], r["value"], strict=True))


@pytest.mark.parametrize("reml", [True, False], ids=["REML", "ML"])
def test_chain_equals_lme4(chain, ref, reml):
    tag = "reml" if reml else "ml"
    a = variance(chain, metric="y", fixed=["experiment"], random=["seed", "config", "rerun"],
                 nested=NESTED, reml=reml, seed_by_experiment=False)  # fmt: skip
    f = a.fit
    assert a.random == ("seed", "config:seed", "rerun:config:seed")
    assert f.criterion == pytest.approx(ref[f"crit_{tag}"], abs=1e-6)
    for comp, sd, lev in zip(f.components, f.sd, [*f.n_levels, f.n_obs], strict=True):
        name = NAMES.get(comp, comp)
        assert sd == pytest.approx(ref[f"sd_{tag}_{name}"], rel=1e-4, abs=1e-5), comp
        if comp != "Residual":
            assert lev == ref[f"levels_{name}"]
    # the same as unique labels
    unique = chain.assign(
        config=chain["seed"].astype(str) + "/" + chain["config"],
        rerun=chain["seed"].astype(str) + "/" + chain["config"] + "/" + chain["rerun"].astype(str),
    )
    b = variance(unique, metric="y", fixed=["experiment"], random=["seed", "config", "rerun"],
                 reml=reml, seed_by_experiment=False)  # fmt: skip
    assert b.fit.criterion == pytest.approx(f.criterion, abs=1e-8)


def test_the_command_takes_several_nested(chain, tmp_path):
    path = tmp_path / "chain.csv"
    chain.to_csv(path, index=False)
    base = ["variance", str(path), "--metric", "y", "--random", "seed,config,rerun",
            "--no-seed-by-experiment", "--json"]  # fmt: skip
    api = variance(chain, metric="y", fixed=["experiment"], random=["seed", "config", "rerun"],
                   nested=NESTED, seed_by_experiment=False)  # fmt: skip
    for extra in (["--nested", "config:seed", "--nested", "rerun:config"],
                  ["--nested", "config:seed,rerun:config"]):  # fmt: skip
        r = CliRunner().invoke(main, base + extra)
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert out["criterion"] == pytest.approx(api.fit.criterion, rel=1e-12)
        assert [c["levels"] for c in out["components"]] == [4, 16, 96, 288]


def test_bad_chains_are_refused(chain):
    kw = {"metric": "y", "fixed": ["experiment"], "random": ["seed", "config", "rerun"]}
    with pytest.raises(ArgumentError, match="circular"):
        variance(chain, nested=["config:rerun", "rerun:config"], **kw)
    with pytest.raises(ArgumentError, match="twice"):
        variance(chain, nested=["config:seed", "config:experiment"], **kw)
