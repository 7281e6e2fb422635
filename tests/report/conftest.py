import importlib.util
from pathlib import Path

import pytest

import vareval.stats

HERE = Path(__file__).parent


def _load(name: str):
    """Import a helper module that sits beside this file (works in any import mode)."""
    spec = importlib.util.spec_from_file_location(
        f"vareval_test_{name}", HERE / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_FAKES = _load("_fakes")


@pytest.fixture(autouse=True)
def _job_2_3_statistics(monkeypatch):
    """Use the real job 2-3 functions when present, stand-ins otherwise."""
    for name in _FAKES.NAMES:
        if not hasattr(vareval.stats, name):
            monkeypatch.setattr(
                vareval.stats, name, getattr(_FAKES, name), raising=False
            )


@pytest.fixture
def cdp():
    """The DevTools-pipe client (tests/report/_cdp.py; POSIX only), or a skip."""
    try:
        return _load("_cdp")
    except ImportError as exc:  # fcntl/select pipes need a POSIX system
        pytest.skip(f"the browser test needs a POSIX system: {exc}")
