"""``scipy.stats``, imported at its first use.

Importing ``scipy.stats`` costs about 0.4 s of CPU (it builds its hundred
distributions and pulls in scipy.optimize, integrate, interpolate...), more
than most commands' whole analysis. Modules that call it only on some paths
(a Wilcoxon test, ``rankdata`` for an AUC, the KS distribution of one band)
import this stand-in, ``from vareval.stats._lazy import stats``, so a command
that never reaches such a call never pays for the import. Frequent quantiles
and p-values come from ``scipy.special`` directly (``stdtrit``, ``ndtri``,
``stdtr``), which is what ``scipy.stats`` evaluates for them.
"""

from __future__ import annotations

import importlib


class _OnFirstUse:
    """A module imported when one of its attributes is first read."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


stats = _OnFirstUse("scipy.stats")
