"""``scipy.stats`` and ``scipy.special``, imported at their first use.

Importing ``scipy.stats`` costs about 0.4 s of CPU (it builds its hundred
distributions and pulls in scipy.optimize, integrate, interpolate...), more
than most commands' whole analysis. Modules that call it only on some paths
(a Wilcoxon test, ``rankdata`` for an AUC, the KS distribution of one band)
import this stand-in, ``from vareval.stats._lazy import stats``, so a command
that never reaches such a call never pays for the import. Frequent quantiles
and p-values come from ``scipy.special`` directly (``stdtrit``, ``ndtri``,
``stdtr``), which is what ``scipy.stats`` evaluates for them.

``scipy.special`` costs about 0.03-0.06 s more (it parses the docstrings of
its hundred functions at import). The mixed model's likelihood-ratio tests
need only chi-square tails of 1 and 2 degrees of freedom, which are closed
forms (``erfc(sqrt(x / 2))`` and ``exp(-x / 2)``); its stand-in computes those
itself and imports the module for anything else (an F test's ``fdtrc``).

``scipy.linalg`` costs ~30-40 ms: the mixed model's dense factorisations go
through ``stats/variance/dense.py`` (LAPACK through the compiled kernel), and
the rest of its uses (the numpy path of the supernodal factorisation, rarely
used paths) through ``linalg``.
"""

from __future__ import annotations

import importlib
import math
import numbers


class _OnFirstUse:
    """A module imported when one of its attributes is first read.

    Also for a module that only some paths need at every start (``sqlite3``
    for a store, ``html`` for a notebook's display).
    """

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


_MAXLOG = 7.09782712893383996843e2  # cephes' MAXLOG, log(DBL_MAX)


class _Special(_OnFirstUse):
    """``scipy.special`` on first use; ``chdtrc`` at 1 and 2 df of a real number in closed form."""

    def chdtrc(self, df, x):
        """``P(chi2_df > x)``: scipy.special.chdtrc's value (to ~1e-13 relative; tested)."""
        if isinstance(x, numbers.Real) and isinstance(df, numbers.Real) and df in (1, 2):
            h, a = float(x) / 2, df / 2
            if h < 0:  # as scipy: no tail below the support's start
                return math.nan
            if h > 0 and a * math.log(h) - h - math.lgamma(a) < -_MAXLOG:
                return 0.0  # where scipy's igamc returns 0 (its underflow test), not a subnormal
            return math.erfc(math.sqrt(h)) if df == 1 else math.exp(-h)
        return self.__getattr__("chdtrc")(df, x)


stats = _OnFirstUse("scipy.stats")
linalg = _OnFirstUse("scipy.linalg")
special = _Special("scipy.special")
