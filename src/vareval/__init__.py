"""vareval: honest numbers from noisy machine-learning experiments.

Two levels of API:

- ``vareval.stats``: pure functions on arrays (no pandas needed).
- the functions here: one call on a pandas DataFrame of results, with the
  columns' roles named (``metric=``, ``by=``, ``pair_on=``).
"""

from vareval import errors, stats
from vareval.data.tuning import tuning_curve
from vareval.errors import VarevalError

__version__ = "0.1.0"

__all__ = ["VarevalError", "errors", "stats"]
__all__ += ["tuning_curve"]
