"""Reference values for the empirical-Bernstein and betting confidence sequences, from confseq.

confseq (Howard, Waudby-Smith and Ramdas; https://github.com/gostevehoward/confseq)
is the authors' own implementation of the predictable plug-in empirical-Bernstein
CS (``confseq.predmix.predmix_empbern_cs``). Its wheel needs Boost and did not
build here, so reference.json was made by running its pure-Python modules
``src/confseq/predmix.py`` and ``src/confseq/betting_strategies.py``
(repository commits 004ef1b9 and 113f874e) with the compiled module absent:
``PYTHONPATH=<folder holding those two files as the package confseq> python
make_reference.py``. With confseq installed the same command works as is.

Observations are in [0, 1]; ``low``/``high`` are confseq's sequences clipped to
[0, 1] with a running intersection (as vareval reports them).

betting.json holds the hedged-capital (betting) sequence
``confseq.betting.hedged_cs`` (theta 1/2, truncation 1/2, its default grid of
1,000 breaks and running intersection), made the same way from
``src/confseq/{betting,predmix,betting_strategies,misc,types}.py`` at repository
commit 70b1ef3. ``betting.py`` imports ``multiprocess`` (used only with
``parallel=True``) and ``misc.py`` annotates with NumPy 1's ``np.float_``; both
are stood in for below when absent, which changes no computed value.
"""

import json
import sys
import types
from pathlib import Path

import numpy as np

if not hasattr(np, "float_"):  # confseq annotates with it
    np.float_ = np.float64  # noqa: NPY201
sys.modules.setdefault("multiprocess", types.ModuleType("multiprocess"))

from confseq.betting import hedged_cs  # noqa: E402
from confseq.predmix import predmix_empbern_cs  # noqa: E402


def eb(x, alpha):
    return predmix_empbern_cs(x, alpha=alpha, running_intersection=False)


def case(name, x, alpha, cs=eb):
    low, high = cs(np.asarray(x, float), alpha)
    low = np.maximum.accumulate(np.clip(low, 0, 1))  # a no-op on hedged_cs's own output
    high = np.minimum.accumulate(np.clip(high, 0, 1))
    return {"name": name, "alpha": alpha, "x": list(map(float, x)),
            "low": low.tolist(), "high": high.tolist()}


rng = np.random.default_rng(20261201)
cases = [
    case("beta(2, 5), 300 draws", rng.beta(2, 5, 300), 0.05),
    case("difference of Bernoulli(0.7) and Bernoulli(0.6), rescaled to [0, 1]",
         (rng.binomial(1, 0.7, 200) - rng.binomial(1, 0.6, 200) + 1) / 2, 0.05),
    case("uniform(0.4, 0.6), 150 draws, 90 %", rng.uniform(0.4, 0.6, 150), 0.10),
]
Path(__file__).with_name("reference.json").write_text(json.dumps(cases, indent=1) + "\n")


def betting(x, alpha):
    return hedged_cs(x, alpha=alpha)


rng = np.random.default_rng(20261202)
cases = [
    case("beta(2, 5), 200 draws", rng.beta(2, 5, 200), 0.05, betting),
    case("difference of Bernoulli(0.9) and Bernoulli(0.6), rescaled to [0, 1]",
         (rng.binomial(1, 0.9, 150) - rng.binomial(1, 0.6, 150) + 1) / 2, 0.05, betting),
    case("uniform(0.4, 0.6), 120 draws, 90 %", rng.uniform(0.4, 0.6, 120), 0.10, betting),
]
Path(__file__).with_name("betting.json").write_text(json.dumps(cases, indent=1) + "\n")
