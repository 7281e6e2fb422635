"""Analyse the example's store: per-experiment summaries and the rerun check.

    PYTHONPATH=src python examples/decovac_sklearn/analyze.py digits.db

The mixed model of DECoVaC (seed and configuration as crossed random effects,
likelihood-ratio tests H1/H2, F test H3) is `vareval variance`:

    vareval variance digits.db --metric accuracy
"""

import sys
import warnings

import numpy as np

from vareval.data.store_table import read_store_table
from vareval.stats import summarize


def main(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read_store_table(path)  # the finished trials, one row each
    for w in caught:
        print(f"warning: {w.message}")
    print(
        f"{len(df)} finished trials from {path} (rerun mode: "
        f"{df.attrs['rerun_mode']})\n"
    )

    print(
        f"{'experiment':<12} {'n':>3} {'mean':>7} {'sd':>7} {'95% CI of mean':>18}"
        f" {'min':>7} {'max':>7}"
    )
    for name, group in df.groupby("experiment", sort=False):
        s = summarize(group["accuracy"].to_numpy())
        lo, hi = s.confidence_interval()
        print(
            f"{name:<12} {s.n:>3} {s.mean:>7.4f} {s.sd:>7.4f}   [{lo:.4f}, {hi:.4f}]"
            f" {s.min:>7.4f} {s.max:>7.4f}"
        )

    # reruns repeat seed and configuration exactly: any spread is nondeterminism
    cells = df.groupby(["experiment", "seed", "config"])["accuracy"]
    spread = (cells.max() - cells.min()).to_numpy()
    print(
        f"\nreruns: {len(spread)} (experiment, seed, config) cells; largest spread "
        f"between reruns {spread.max():.3g}"
        + (" (bit-identical: no nondeterminism)" if np.all(spread == 0) else "")
    )

    # where does the spread come from? seeds (init + batch order) vs configurations
    within = df.groupby(["experiment", "config"])["accuracy"].mean()
    by_seed = df.groupby(["experiment", "seed"])["accuracy"].mean()
    print(
        "sd of cell means within each experiment (configurations are nested in seeds,\n"
        "so both include seed effects; the mixed model separates them):"
    )
    for name in df["experiment"].unique():
        print(
            f"  {name:<12} across configurations {within[name].std(ddof=1):.4f}, "
            f"across seeds {by_seed[name].std(ddof=1):.4f}"
        )
    print(
        "\nfor the mixed model and the H1-H3 tests: "
        f"vareval variance {path} --metric accuracy"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: analyze.py STORE")
    main(sys.argv[1])
