import sys
from pathlib import Path

import pytest

from vareval.experiment.spec import Distribution, ExperimentSpec

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def make_spec():
    """Build a small spec whose trial lives in tests/experiment/_trials.py."""

    def make(fn="streams", **kw):
        base = dict(
            trial=f"_trials:{fn}",
            factors={"model": ["a", "b"]},
            seeds=3,
            configs=2,
            reruns=2,
            space={"lr": Distribution("log-uniform", low=1e-4, high=1e-1)},
            sources=("data_split", "init"),
            entropy=12345,
            paths=(HERE,),
        )
        base.update(kw)
        return ExperimentSpec(**base)

    return make
