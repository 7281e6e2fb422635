"""Spend the compute where the variance is: a pilot table or store -> a budget-optimal design.

:func:`allocation` fits the pilot's variance components with the mixed model
(:func:`vareval.data.variance.variance`), takes per-trial costs from the
store's durations (or a given cost), draws the components' sampling
distribution by the parametric bootstrap and calls
:func:`vareval.stats.budget.allocation.allocate`. :func:`grown_spec_toml` writes the
``experiment.toml`` that grows the pilot's store to the plan.
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pandas as pd

from vareval.data.design import analysed_rows
from vareval.data.validate import label_text, require_columns
from vareval.errors import ArgumentError, DataError, VarevalWarning
from vareval.stats.budget.allocation import Allocation, allocate
from vareval.stats.variance.bootstrap import bootstrap_components

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_amount(text, option: str):
    """``"300"`` -> (300.0, "trials"); ``"200h"``, ``"1.5m"``, ``"90s"`` -> (seconds, "seconds")."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([smhd]?)\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise ArgumentError(
            f"{option} must be a positive number of trials (300) or a time "
            f"(200h, 1.5m, 90s, 2d); got {text!r}."
        )
    value = float(m.group(1))
    return (value * _UNITS[m.group(2)], "seconds") if m.group(2) else (value, "trials")


DESIGN_COLUMNS = ("experiment", "seed", "config")


def allocation(
    df: pd.DataFrame,
    *,
    metric: str,
    compare,
    budget=None,
    target_se: float | None = None,
    target_halfwidth: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    cost=None,
    configs: str | None = None,
    crn: bool | None = None,
    confidence: float = 0.95,
    n_resamples: int = 200,
    versus=(),
    rng=0,
    progress=False,
) -> Allocation:
    """The seeds x configurations x reruns that minimise the SE for a budget (or a target).

    Estimand: the difference of two experiments' means (``compare=(a, b)``) or
    one experiment's mean (``compare=(a,)``); estimator: the new design's
    balanced cell mean. The pilot's components come from the mixed model on
    the compared experiments' rows (with ``seed:experiment`` and
    ``config:experiment`` components when the pilot shares seeds across them,
    so that what cancels under common random numbers is estimated, not
    assumed); their parametric-bootstrap draws give the plan at the upper
    ``confidence`` limits and the distribution of the SE (or budget).

    Parameters
    ----------
    df : pandas.DataFrame
        The pilot: columns ``experiment``, ``seed``, ``config`` and the metric
        (a store's table also has ``duration``).
    metric : str
    compare : sequence of str
        One experiment (its mean) or two (their difference).
    budget : float or str, optional
        Trials per experiment (``300``) or a time (``"200h"``) spent on all
        compared experiments together.
    target_se, target_halfwidth, effect : float, optional
        A target instead of a budget (exactly one of the four).
    power : float, default 0.8
    cost : float or str, optional
        Seconds (or ``"1.5m"``) per trial of each experiment; default: the
        mean duration of the experiment's finished trials in the pilot.
    configs : {"nested", "crossed"}, optional
        The new design's configurations: sampled per seed or shared by all
        seeds. Default: as in the pilot.
    crn : bool, optional
        Plan common random numbers (the same seeds and configurations for
        both experiments). Default: as in the pilot.
    confidence : float, default 0.95
    n_resamples : int, default 200
        Bootstrap draws of the components (0: no uncertainty carried through).
    versus : sequence of (int, int, int)
        Designs to show beside the optimum.
    rng : int or numpy.random.Generator
    progress : bool or None, default False
        Show a tqdm bar of the bootstrap refits (None: on a terminal only).

    Returns
    -------
    Allocation
    """
    compare = [str(c) for c in ([compare] if isinstance(compare, str) else compare)]
    missing = [c for c in DESIGN_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(
            f"allocation needs the design columns {', '.join(DESIGN_COLUMNS)} (as a run store "
            f"exports them); missing: {', '.join(missing)} (columns: "
            f"{', '.join(map(str, df.columns))})."
        )
    require_columns(df, metric, "metric")
    if len(compare) not in (1, 2) or len(set(compare)) != len(compare):
        raise ArgumentError(
            f"`compare` takes one experiment (its mean) or two different ones (their "
            f"difference); got {compare}."
        )
    exp = label_text(df["experiment"], "experiment", "experiment")
    missing = [c for c in compare if c not in set(exp)]
    if missing:
        raise DataError(
            f"column 'experiment' has no {missing[0]!r}; it has "
            f"{', '.join(sorted(set(exp))[:10])}."
        )
    pilot = df.loc[exp.isin(compare)].copy()
    pilot["experiment"] = exp[exp.isin(compare)]
    for col in ("seed", "config"):
        pilot[col] = label_text(pilot[col], col, col)
    shared = _shares_seeds(pilot, compare)
    pilot_configs = "crossed" if pilot.groupby("config")["seed"].nunique().max() > 1 else "nested"
    configs = configs or pilot_configs
    crn = shared if crn is None else bool(crn)
    if crn and len(compare) == 2 and not shared:
        raise DataError(
            f"the pilot's experiments {compare[0]!r} and {compare[1]!r} share no seed, so "
            "how much seed and configuration variance cancels under common random numbers "
            "is unknown; plan without them or run a pilot with shared seeds."
        )
    budget_value, unit = (None, None) if budget is None else parse_amount(budget, "--budget")
    per_trial = 1.0 if unit == "trials" else _cost(pilot, compare, cost, required=unit)
    unit = "trials" if per_trial is None or unit == "trials" else "seconds"
    components, draws = _components(pilot, metric, shared and len(compare) == 2,
                                    pilot_configs, n_resamples, rng, progress)
    a = allocate(
        components,
        budget=budget_value,
        target_se=target_se,
        target_halfwidth=target_halfwidth,
        effect=effect,
        power=power,
        cost_per_trial=per_trial or 1.0,
        configs=configs,
        estimand="difference" if len(compare) == 2 else "mean",
        crn=crn,
        draws=draws,
        confidence=confidence,
        versus=versus,
    )
    return dataclasses.replace(a, unit=unit, compare=tuple(compare), metric=metric)


def _shares_seeds(pilot, compare) -> bool:
    if len(compare) < 2:
        return False
    seeds = [set(pilot.loc[pilot["experiment"] == c, "seed"]) for c in compare]
    return bool(seeds[0] & seeds[1])


def _components(pilot, metric, interactions, pilot_configs, n_resamples, rng, progress):
    """Fit the pilot's components; map them to the allocation's names."""
    from vareval.data.variance import design_arrays
    from vareval.stats.variance.fit import fit_mixed

    random = ["seed", "config"]
    if interactions:  # which part of the seed/config variance is shared by the experiments
        pilot["seed:experiment"] = pilot["seed"] + "\x1f" + pilot["experiment"]
        pilot["config:experiment"] = pilot["config"] + "\x1f" + pilot["experiment"]
        random += ["seed:experiment", "config:experiment"]
    pilot = analysed_rows(pilot, metric, "experiment", keep_reruns=True)
    cells = _cell_terms(pilot, random)
    fitted = [r for r in random if r not in cells]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="singular fit", category=VarevalWarning)
        fixed = ["experiment"] if pilot["experiment"].nunique() > 1 else []
        # the fit alone: the analysis's tests (refits, F tests) are not needed here
        d = design_arrays(pilot, metric=metric, fixed=fixed, random=fitted)
        fit = fit_mixed(d.y, d.X, d.groups, fixed_names=d.fixed_names,
                        group_names=d.group_names, level_names=d.level_names)  # fmt: skip
    if not fit.converged:
        raise DataError(f"the mixed model of the pilot did not converge: {fit.message}")
    names = [*fitted, "residual"]
    components = dict(zip(names, map(float, fit.variance), strict=True))
    if cells:  # identical reruns: what is left is the cell's; nondeterminism 0
        shared = dict.fromkeys(cells[:-1], 0.0)  # aliased with the cell: nothing shared
        components = {**components, **shared, cells[-1]: components["residual"],
                      "residual": 0.0}  # fmt: skip
        names = [*fitted, *cells, "residual"]
    if not interactions and pilot["experiment"].nunique() == 2:
        # separate seeds per experiment: all seed/config variance is the experiment's own
        components["seed:experiment"] = components.pop("seed")
        components["config:experiment"] = components.pop("config")
        names = ["seed:experiment", "config:experiment", "residual"]
    if n_resamples == 0:
        return components, None
    v = bootstrap_components(fit, n_resamples=n_resamples, rng=rng, progress=progress)
    if cells:
        zeros = np.zeros((len(v), len(cells) - 1))
        v = np.column_stack([v[:, :-1], zeros, v[:, -1], np.zeros(len(v))])
    return components, dict(zip(names, v.T, strict=True))


def _cell_terms(pilot, random) -> list:
    """The configuration terms left with one row per level when identical reruns were read once.

    Their variance and the residual's are then one (the cell's); the reruns
    showed the residual, nondeterminism, to be zero, so the cell's variance
    is the last such term's (``config:experiment`` under common random
    numbers; a configuration that is already one model's shares nothing, so
    an aliased ``config`` gets 0). Empty otherwise, and for crossed
    configurations, whose cells are not one configuration's.
    """
    reading = pilot.attrs.get("reruns")
    if reading is None or reading.read_as != "once":
        return []
    n = len(pilot)
    return [t for t in random if t.startswith("config") and pilot[t].nunique() == n]


def _cost(pilot, compare, cost, required) -> float | None:
    """Seconds of one (seed, configuration, rerun) cell for all compared experiments.

    From ``cost`` (per trial of each experiment) or the mean duration of each
    experiment's finished trials; None when neither is known and the budget
    is not a time (the plan then counts trials).
    """
    if cost is not None:
        value, kind = parse_amount(cost, "--cost")
        if kind != "seconds":
            raise ArgumentError(f"--cost must be a time per trial (1.5m, 90s); got {cost!r}.")
        return value * len(compare)
    if "duration" not in pilot.columns:
        if required == "seconds":
            raise ArgumentError(
                "--budget is a time but the table has no 'duration' column; give --cost "
                "(the time of one trial, e.g. 1.5m) or a budget in trials (300)."
            )
        return None
    dur = pilot["duration"]
    dur = dur.dt.total_seconds() if pd.api.types.is_timedelta64_dtype(dur) else (
        pd.to_numeric(dur, errors="coerce"))
    means = dur.groupby(pilot["experiment"]).mean()
    bad = [c for c in compare if not np.isfinite(means.get(c, np.nan)) or means[c] <= 0]
    if bad:
        raise DataError(f"column 'duration' has no finished trial of {bad[0]!r}; give --cost.")
    return float(sum(means[c] for c in compare))


def grown_spec_toml(spec, a: Allocation) -> tuple[str, str]:
    """The ``experiment.toml`` that grows a store of ``spec`` to the plan, and a note.

    A store only grows (existing trials keep their streams), so each size is
    ``max(have, plan)``; the grid grows for every experiment of the store.
    """
    nested = spec.nested
    if (a.configs == "nested") != nested:
        raise ArgumentError(
            f"the plan has {a.configs} configurations but the store's are "
            f"{'nested' if nested else 'crossed'}; plan with the store's layout to extend it."
        )
    grown = spec.grown(
        seeds=max(spec.seeds, a.n_seeds),
        configs=max(spec.configs, a.n_configs),
        reruns=max(spec.reruns, a.n_reruns),
    )
    note = (
        f"grows {spec.seeds}x{spec.configs}x{spec.reruns} to "
        f"{grown.seeds}x{grown.configs}x{grown.reruns} (seeds x configs x reruns), "
        f"{grown.n_trials - spec.n_trials} more trials in all"
    )
    if (grown.seeds, grown.configs, grown.reruns) != (a.n_seeds, a.n_configs, a.n_reruns):
        note += "; a store only grows, so sizes above the plan are kept"
    return _spec_toml(grown), note


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ArgumentError(f"cannot write {v!r} to TOML.")


def _key(k) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def _spec_toml(spec) -> str:
    d = spec.to_dict()
    exp = {k: d[k] for k in ("name", "trial", "seeds", "configs", "nested", "reruns",
                             "rerun_mode", "entropy", "timeout") if d.get(k) is not None}
    if d["paths"]:
        exp["path"] = d["paths"]
    tables = {"experiment": exp, "factors": d["factors"],
              "space": {**d["space"], **d.get("level_spaces", {})},
              "randomness": {"sources": d["sources"], "fixed": d["fixed"]},
              "params": d["params"], "resources": d.get("resources", {}),
              "runtime_env": d.get("runtime_env", {})}
    out = []
    for name, body in tables.items():
        if body:
            out.append(f"[{name}]")
            out += [f"{_key(k)} = {_toml_value(v)}" for k, v in body.items()]
            out.append("")
    return "\n".join(out)
