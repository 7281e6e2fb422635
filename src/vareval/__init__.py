"""vareval: honest numbers from noisy machine-learning experiments.

Two levels of API:

- ``vareval.stats``: pure functions on arrays (no pandas needed).
- the functions here: one call on a pandas DataFrame of results, with the
  columns' roles named (``metric=``, ``by=``, ``pair_on=``).
"""

from vareval import errors, stats
from vareval.errors import VarevalError

__version__ = "0.1.0"



def variance(df, **kwargs):
    """Mixed-model variance decomposition and DECoVaC tests of a results table.

    See :func:`vareval.data.variance.variance`.
    """
    from vareval.data.variance import variance as _variance

    return _variance(df, **kwargs)


__all__ = ["VarevalError", "errors", "stats", "variance"]
