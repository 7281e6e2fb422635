"""Reference values from autorank 1.3.0 and baycomp 1.0.3 for the ranking parity tests.

Run with both installed (``pip install autorank==1.3.0 baycomp==1.0.3``):

    python tests/data/ranking/make_reference.py > tests/data/ranking/reference.json

autorank (non-parametric mode, alpha 0.05): Friedman p-value, Nemenyi critical
difference (statsmodels' qsturng, a table interpolation), mean ranks and the
CD-diagram groups. baycomp: ``SignedRankTest(x, y, rope).probs()`` with 50,000
posterior samples; its Monte Carlo SE is binomial.
"""

import contextlib
import io
import json
import sys
import warnings

import numpy as np
import pandas as pd
from autorank import autorank
from autorank._util import get_sorted_rank_groups
from baycomp import SignedRankTest

warnings.simplefilter("ignore")
rng = np.random.default_rng(20260102)

friedman_cases = []
for n, k, shift, decimals in [(12, 5, 0.3, 6), (20, 4, 0.5, 1), (8, 7, 0.2, 6), (30, 3, 0.0, 6)]:
    x = np.round(rng.normal(0, 1, (n, k)) + shift * np.arange(k), decimals)
    df = pd.DataFrame(x, columns=[f"m{i}" for i in range(k)])
    with contextlib.redirect_stdout(io.StringIO()):
        res = autorank(df, alpha=0.05, force_mode="nonparametric", verbose=False)
    _, names, groups = get_sorted_rank_groups(res, False)
    friedman_cases.append(
        {
            "scores": x.tolist(),
            "pvalue": float(res.pvalue),
            "cd": float(res.cd),
            "meanrank": {c: float(v) for c, v in res.rankdf.meanrank.items()},
            "groups": [sorted(names[i : j + 1]) for i, j in groups],
        }
    )

bayes_cases = []
for n, rope, prior, mu in [(15, 0.0, 0.5, 0.01), (15, 0.01, 0.5, 0.01), (25, 0.02, 1.0, 0.015),
                           (10, 0.05, 0.5, -0.02)]:
    x = rng.normal(0.8, 0.05, n)
    y = x + rng.normal(mu, 0.03, n)
    probs = SignedRankTest(x, y, rope=rope, prior=prior, nsamples=50000, random_state=7).probs()
    bayes_cases.append(
        {"x": x.tolist(), "y": y.tolist(), "rope": rope, "prior": prior, "nsamples": 50000,
         "probs": [float(p) for p in probs]}
    )

json.dump({"autorank": "1.3.0", "baycomp": "1.0.3", "friedman": friedman_cases,
           "bayes_signed_rank": bayes_cases}, sys.stdout, indent=1)
