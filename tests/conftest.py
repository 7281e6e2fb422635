import os

import numpy as np
import pytest

# Slow calibration tests scale their simulation counts by this factor; CI runs
# them with a reduced scale so the tier stays bounded.
SLOW_SCALE = float(os.environ.get("VAREVAL_SLOW_SCALE", "1"))


@pytest.fixture
def scaled():
    """Return ``f(n, minimum=200)``: a slow test's simulation count under the scale."""
    return lambda n, minimum=200: max(minimum, int(n * SLOW_SCALE))


@pytest.fixture
def rng(request):
    """A fresh seeded generator; the seed is printed so a failure can be replayed."""
    seed = int(np.random.SeedSequence().entropy % 2**32)
    print(f"{request.node.name}: seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def allocation_sim():
    """tests/stats/_allocation_sim.py: simulated experiments for the allocation tests."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent / "stats" / "_allocation_sim.py"
    spec = importlib.util.spec_from_file_location("vareval_test_allocation_sim", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
