"""The re-seeding design (DECoVaC): factor levels x seeds x configurations x reruns.

One layout serves both sides: the runner executes its rows, and the mixed
model analyses results that carry the same columns. A *configuration* is a
sampled hyper-parameter setting; *nested* configurations are sampled anew
for each seed (as in the DECoVaC paper), *shared* ones are the same for
every seed. A *rerun* repeats a (configuration, seed) exactly, so reruns
measure nondeterminism only.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pandas as pd

from vareval.errors import ArgumentError
from vareval.stats._checks import as_positive_int, check_size

DESIGN_COLUMNS = ("experiment", "seed", "config", "rerun")


def experiment_name(levels) -> str:
    """Name the experiment of one combination of factor levels: the levels joined with ``_``."""
    return "_".join(map(str, levels))


def config_label(seed: int, config: int, nested: bool) -> str:
    """Name a configuration: ``s{seed}_c{config}`` when nested in the seed, else ``c{config}``."""
    return f"s{seed}_c{config}" if nested else f"c{config}"


def reseeding_design(
    factors: Mapping[str, Sequence],
    *,
    seeds: int,
    configs: int,
    reruns: int = 1,
    nested: bool = True,
) -> pd.DataFrame:
    """Lay out a re-seeding design as a table, one row per trial.

    Parameters
    ----------
    factors : mapping of str to sequence
        The fixed factors and their levels, e.g. ``{"model": ["mlp", "logreg"],
        "optimizer": ["sgd", "adam"]}``. Every combination is an *experiment*.
    seeds : int
        Number of seeds (indices ``0 .. seeds-1``).
    configs : int
        Number of hyper-parameter configurations per seed (nested) or in all (shared).
    reruns : int, default 1
        Times each (experiment, seed, configuration) is run again.
    nested : bool, default True
        Configurations sampled anew for each seed (``s{seed}_c{j}``) or shared
        across seeds (``c{j}``).

    Returns
    -------
    pandas.DataFrame
        Columns: one per factor, ``experiment`` (the levels joined with ``_``),
        ``seed``, ``config_index``, ``config``, ``rerun``.
    """
    if not factors:
        raise ArgumentError("`factors` must name at least one factor with its levels.")
    for name, levels in factors.items():
        if isinstance(levels, str) or len(levels) == 0:
            raise ArgumentError(
                f"factor {name!r} needs a non-empty list of levels; got {levels!r}."
            )
        if len(set(map(str, levels))) != len(levels):
            raise ArgumentError(f"factor {name!r} has repeated levels: {list(levels)!r}.")
        if name in DESIGN_COLUMNS or name == "config_index":
            raise ArgumentError(f"factor name {name!r} is reserved for the design's own columns.")
    seeds = as_positive_int(seeds, "seeds")
    configs = as_positive_int(configs, "configs")
    reruns = as_positive_int(reruns, "reruns")
    trials = seeds * configs * reruns
    for levels in factors.values():
        trials *= len(levels)
    # a row of Python objects holds about 1 kB until the frame is built
    check_size(trials, "`seeds` x `configs` x `reruns` x levels: the design's trials",
               bytes_each=1000)  # fmt: skip
    names = list(factors)
    rows = [
        {
            **dict(zip(names, levels, strict=True)),
            "experiment": experiment_name(levels),
            "seed": seed,
            "config_index": config,
            "config": config_label(seed, config, nested),
            "rerun": rerun,
        }
        for levels, seed, config, rerun in design_cells(factors, seeds, configs, reruns)
    ]
    return pd.DataFrame(rows)


def design_cells(factors: Mapping[str, Sequence], seeds: int, configs: int, reruns: int,
                 *, outside=None):
    """Yield ``(levels, seed, config, rerun)`` of every trial, in the design's row order.

    ``outside``, a smaller design ``(factors, seeds, configs, reruns)``, skips
    the cells that design already has: growing a store then costs what the new
    trials add, not the whole grid again.
    """
    old_levels = old_seeds = old_configs = old_reruns = None
    if outside is not None:
        old_factors, old_seeds, old_configs, old_reruns = outside
        old_levels = {name: set(map(str, old_factors.get(name, ()))) for name in factors}
    for levels in itertools.product(*factors.values()):
        old = outside is not None and all(
            str(v) in old_levels[name] for name, v in zip(factors, levels, strict=True)
        )
        for seed in range(seeds):
            old_seed = old and seed < old_seeds
            if old_seed and configs <= old_configs and reruns <= old_reruns:
                continue
            for config in range(configs):
                for rerun in range(reruns):
                    if not (old_seed and config < old_configs and rerun < old_reruns):
                        yield levels, seed, config, rerun
