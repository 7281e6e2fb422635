"""vareval: honest numbers from noisy machine-learning experiments.

Two levels of API:

- ``vareval.stats``: pure functions on arrays (no pandas needed).
- the functions here: one call on a pandas DataFrame of results, with the
  columns' roles named (``metric=``, ``by=``, ``pair_on=``).
"""

from vareval import errors, stats
from vareval.errors import VarevalError

__version__ = "0.1.0"

__all__ = ["VarevalError", "errors", "metrics", "significance", "stats"]

# The table-level API loads on first use: ``vareval --help`` need not import pandas.
_LAZY = {
    "significance": "vareval.data.significance",
    "metrics": "vareval.data.significance",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vareval' has no attribute {name!r}")
