"""vareval: honest numbers from noisy machine-learning experiments.

Two levels of API:

- ``vareval.stats``: pure functions on arrays (no pandas needed).
- the functions here: one call on a pandas DataFrame of results, with the
  columns' roles named (``metric=``, ``by=``, ``pair_on=``).
"""

from vareval import errors, stats
from vareval.errors import VarevalError

__version__ = "0.1.0"

__all__ = ["VarevalError", "errors", "stats"]

# The experiment layer loads on first use, so `vareval --help` stays fast.
_LAZY = {
    "experiment": "vareval.experiment",
    "run_experiment": "vareval.experiment.runner:run",
    "read_store_table": "vareval.data.store_table:read_store_table",
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'vareval' has no attribute {name!r}")
    import importlib

    module, _, attr = _LAZY[name].partition(":")
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod
