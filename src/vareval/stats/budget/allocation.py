"""Budget-optimal re-seeding designs from variance components (seeds x configs x reruns).

The response of experiment ``e`` at seed ``i``, configuration ``j`` and rerun
``r`` is ``y = mu_e + s_i + c_j + (se)_ie + (ce)_je + eps`` with independent
zero-mean normal parts of variances ``seed``, ``config``, ``seed:experiment``,
``config:experiment`` and ``residual``. The estimator is the design's
balanced cell mean ``ybar_e`` over ``n_s`` seeds, ``n_c`` configurations (per
seed when nested, shared by all seeds when crossed) and ``n_r`` reruns;
``N = n_s n_c n_r`` trials per experiment. Its exact variance is

* nested:  ``S / n_s + C / (n_s n_c) + residual / N``
* crossed: ``S / n_s + C / n_c       + residual / N``

with ``S = seed + seed:experiment`` and ``C = config + config:experiment``.
The difference of two experiments' means has twice that variance when the
experiments draw their own seeds and configurations; with common random
numbers (the same seeds and configurations for both) the shared parts
``seed`` and ``config`` cancel and only ``seed:experiment``,
``config:experiment`` and ``residual`` remain.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from vareval.errors import ArgumentError
from vareval.stats._checks import as_confidence
from vareval.stats._result import ConfidenceInterval, Result

COMPONENTS = ("seed", "config", "seed:experiment", "config:experiment", "residual")
MAX_TRIALS = 200_000  # largest design (trials per experiment) enumerated


def design_variance(components, n_seeds, n_configs, n_reruns, *, configs="nested",
                    estimand="difference", crn=True):
    """Exact variance of the balanced cell-mean estimator for a design.

    Estimand: the mean of one experiment (``estimand="mean"``) or the
    difference of two experiments' means (``"difference"``); estimator: the
    balanced cell mean over ``n_seeds x n_configs x n_reruns`` trials of each
    experiment (for a balanced design it is also the GLS estimator).

    Parameters
    ----------
    components : mapping
        Variances by name (:data:`COMPONENTS`; missing ones are 0). Values may
        be arrays (e.g. bootstrap draws); they broadcast with the design sizes.
    n_seeds, n_configs, n_reruns : int or array of int
        Seeds, configurations (per seed when nested, in all when crossed) and
        reruns per (seed, configuration).
    configs : {"nested", "crossed"}
    estimand : {"difference", "mean"}
    crn : bool, default True
        Common random numbers: both experiments use the same seeds and
        configurations, so the shared ``seed`` and ``config`` variance cancels
        in a difference. Ignored for a mean.

    Returns
    -------
    ndarray or float
        The variance.
    """
    v = _components(components)
    ns, nc, nr = (np.asarray(x, dtype=float) for x in (n_seeds, n_configs, n_reruns))
    shared = 0.0 if (estimand == "difference" and crn) else 1.0
    S = shared * v["seed"] + v["seed:experiment"]
    C = shared * v["config"] + v["config:experiment"]
    per_config = ns * nc if configs == "nested" else nc
    var = S / ns + C / per_config + v["residual"] / (ns * nc * nr)
    return 2.0 * var if estimand == "difference" else var


def _components(components) -> dict:
    unknown = set(components) - set(COMPONENTS)
    if unknown:
        raise ArgumentError(
            f"`components` has unknown name {sorted(unknown)[0]!r}; accepted: "
            f"{', '.join(COMPONENTS)}."
        )
    out = {k: np.asarray(components.get(k, 0.0), dtype=float) for k in COMPONENTS}
    for k, x in out.items():
        if not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ArgumentError(f"`components[{k!r}]` must be finite variances >= 0.")
    return out


@dataclasses.dataclass(frozen=True, repr=False)
class Allocation(Result):
    """A budget-optimal design and the naive designs beside it.

    No figure: a recommendation (numbers of seeds, configs and reruns) with its SE, read
    from its fields.

    Estimand: the mean of one experiment or the difference of two experiments'
    means (``estimand``); estimator: the design's balanced cell mean. In
    budget mode ``estimate`` is the predicted SE of the optimal design; for a
    target (SE, half-width, power) it is the budget that design needs.

    Attributes
    ----------
    estimate : float
        Predicted SE (``target="budget"``) or the budget needed.
    target : str
        "budget", "se", "halfwidth" or "power".
    target_value : float
        The budget, or the SE / half-width / power asked for.
    n_seeds, n_configs, n_reruns, n_trials : int
        The optimal design; ``n_trials`` per experiment.
    se : float
        Its predicted SE.
    cost : float
        Its cost: ``n_trials * cost_per_trial``.
    cost_per_trial : float
        Cost of one (seed, configuration, rerun) cell for all compared
        experiments (1 when the budget counts trials).
    configs, estimand : str
    crn : bool
    components : dict
        The variances planned for.
    upper : dict
        Components at their upper confidence limits (empty without draws).
    se_upper : float
        The plan's SE if the components are at their upper limits.
    draws : ndarray
        Per draw of the components: the plan's SE (budget mode) or the budget
        the draw's own optimal design needs (target mode); empty without draws.
    confidence : float
    designs : tuple of dict
        One row per design: the optimum, the plan at the upper limits, all
        seeds, all configurations, all reruns and any designs asked for.
    unit : str
        Unit of the budget and costs: "trials" or "seconds".
    compare : tuple of str
        The experiments (their labels, when known).
    metric : str
        The metric (when known).
    """

    estimate: float
    target: str
    target_value: float
    n_seeds: int
    n_configs: int
    n_reruns: int
    n_trials: int
    se: float
    cost: float
    cost_per_trial: float
    configs: str
    estimand: str
    crn: bool
    components: dict
    upper: dict
    se_upper: float
    draws: np.ndarray
    confidence: float
    designs: tuple
    unit: str = "trials"
    compare: tuple = ()
    metric: str = ""

    def __repr__(self) -> str:
        what = "SE" if self.target == "budget" else "budget"
        return (
            f"Allocation({self.estimand}, {self.configs} configs, crn={self.crn}: "
            f"{self.n_seeds} seeds x {self.n_configs} configs x {self.n_reruns} reruns, "
            f"SE {self.se:.4g}, cost {self.cost:.4g}; estimate ({what}) "
            f"{self.estimate:.4g})\n" + self.to_frame().to_string(index=False)
        )

    def to_frame(self):
        """One row per design: sizes, trials, cost, SE, SE at upper limits, SE ratio."""
        import pandas as pd

        return pd.DataFrame(list(self.designs))

    def confidence_interval(self, confidence_level=None) -> ConfidenceInterval:
        """Percentile interval of ``draws`` (the estimate under the pilot's uncertainty)."""
        level = self.confidence if confidence_level is None else confidence_level
        level = as_confidence(level, "confidence_level")
        d = self.draws[np.isfinite(self.draws)] if self.draws.size else self.draws
        if d.size == 0 or d.size < self.draws.size:
            hi = np.inf if self.draws.size else np.nan
            lo = np.quantile(d, (1 - level) / 2) if d.size else np.nan
            return ConfidenceInterval(float(lo), float(hi))
        lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
        return ConfidenceInterval(float(lo), float(hi))


def _pairs(max_trials: int, min_seeds: int):
    """All (n_seeds, n_configs) with n_seeds * n_configs <= max_trials, n_seeds >= min."""
    ns = np.arange(min_seeds, max_trials + 1)
    counts = max_trials // ns
    ns = np.repeat(ns, counts)
    start = np.cumsum(counts) - counts
    nc = np.arange(ns.size) - np.repeat(start, counts) + 1
    return ns, nc


def _best(var, ns, nc, axis=-1):
    """Index of the smallest variance; ties (1e-9 relative) go to more seeds, then configs."""
    vmin = np.min(var, axis=axis, keepdims=True)
    tied = var <= vmin * (1 + 1e-9) + 1e-300
    score = np.where(tied, ns * (np.max(nc) + 1.0) + nc, -1.0)
    return np.argmax(score, axis=axis)


def best_design(components, max_trials, *, configs="nested", estimand="difference",
                crn=True, min_seeds=2):
    """The design of at most ``max_trials`` trials per experiment with the least variance.

    Enumerates every (n_seeds, n_configs) with ``n_seeds * n_configs <=
    max_trials`` and takes the most reruns that fit (variance falls with
    reruns); the lattice is about ``max_trials * log(max_trials)`` points.

    Returns
    -------
    tuple of int
        ``(n_seeds, n_configs, n_reruns)``.
    """
    if max_trials < min_seeds:
        raise ArgumentError(
            f"the budget buys {max_trials} trial(s) per experiment; at least "
            f"{min_seeds} (one per seed) are needed."
        )
    ns, nc = _pairs(int(max_trials), min_seeds)
    nr = max_trials // (ns * nc)
    var = design_variance(components, ns, nc, nr, configs=configs, estimand=estimand,
                          crn=crn)
    i = _best(var, ns, nc)
    return int(ns[i]), int(nc[i]), int(nr[i])


def cheapest_design(components, target_var, *, configs="nested", estimand="difference",
                    crn=True, min_seeds=2, max_trials=MAX_TRIALS):
    """Fewest trials per experiment whose variance is at most ``target_var``.

    For each (n_seeds, n_configs) the reruns needed follow in closed form:
    ``n_r >= residual' / (n_s n_c (t - S'/n_s - C'/m))``. Vectorised over draws
    of the components (each value of ``components`` a length-``B`` array).

    Returns
    -------
    tuple of ndarray
        ``(n_seeds, n_configs, n_reruns)`` per draw; 0 where no design of at
        most ``max_trials`` trials reaches the target.
    """
    kw = dict(configs=configs, estimand=estimand, crn=crn, min_seeds=min_seeds)
    if np.size(_components(components)["residual"]) == 1 and max_trials > 1000:
        # one set of components: a solution of N trials within a small lattice is
        # the cheapest of all (every design of fewer trials is in it), so grow it
        bound = 1000
        while bound < max_trials:
            found = _cheapest(components, target_var, max_trials=bound, **kw)
            if found[0][0] > 0:
                return found
            bound *= 8
    return _cheapest(components, target_var, max_trials=max_trials, **kw)


def _cheapest(components, target_var, *, configs, estimand, crn, min_seeds, max_trials):
    ns, nc = _pairs(int(max_trials), min_seeds)
    v = _components(components)
    B = np.broadcast(*v.values()).shape
    flat = {k: np.broadcast_to(x, B).reshape(-1, 1) for k, x in v.items()}
    out = np.zeros((3, flat["residual"].shape[0]), dtype=int)
    chunk = max(1, 4_000_000 // ns.size)
    for lo in range(0, out.shape[1], chunk):  # chunks bound memory over the draws
        part = {k: x[lo:lo + chunk] for k, x in flat.items()}
        zero = design_variance({**part, "residual": 0.0 * part["residual"]}, ns, nc, 1,
                               configs=configs, estimand=estimand, crn=crn)
        per_rerun = design_variance({k: 0.0 * x if k != "residual" else x
                                     for k, x in part.items()}, ns, nc, 1,
                                    configs=configs, estimand=estimand, crn=crn)
        room = target_var - zero
        with np.errstate(divide="ignore", invalid="ignore"):
            nr = np.where(room > 0, np.ceil(per_rerun / room * (1 - 1e-12)), np.inf)
        nr = np.maximum(nr, 1)
        trials = np.where(ns * nc * nr <= max_trials, ns * nc * nr, np.inf)
        i = _best(trials, ns, nc)  # fewest trials; ties to more seeds
        ok = np.isfinite(np.take_along_axis(trials, i[:, None], 1)[:, 0])
        reruns = np.take_along_axis(np.where(np.isfinite(nr), nr, 0), i[:, None], 1)[:, 0]
        out[:, lo:lo + chunk] = np.where(ok, np.vstack([ns[i], nc[i], reruns]), 0)
    return out[0], out[1], out[2]


def required_se(target, value, *, confidence=0.95, power=0.8, alpha=0.05):
    """The SE a target asks for (normal approximation, as a design's df is unknown).

    ``"se"``: the value; ``"halfwidth"``: ``value / z_{(1+confidence)/2}``;
    ``"power"`` (``value`` the effect): the two-sided z test at ``alpha``
    rejects with probability ``power``, ``|effect| / (z_{1-alpha/2} + z_power)``.
    """
    z = special.ndtri
    if target == "se":
        return value
    if target == "halfwidth":
        return value / z((1 + confidence) / 2)
    return abs(value) / (z(1 - alpha / 2) + z(power))


def _trials_bought(budget: float, cost: float) -> int:
    """Whole trials a budget pays for (30 / 0.1 is 300, not 299 by rounding; never one more)."""
    x = budget / cost
    near = round(x)
    return int(near if abs(x - near) <= 1e-9 * max(1.0, x) else np.floor(x))


def allocate(components, *, budget=None, target_se=None, target_halfwidth=None,
             effect=None, power=0.8, alpha=0.05, cost_per_trial=1.0, configs="nested",
             estimand="difference", crn=True, draws=None, confidence=0.95,
             min_seeds=2, versus=(), max_trials=MAX_TRIALS) -> Allocation:
    """Budget-optimal numbers of seeds, configurations and reruns.

    Estimand: the mean of one experiment or the difference of two experiments'
    means; estimator: the design's balanced cell mean, whose exact variance is
    :func:`design_variance`. Give a ``budget`` (the SE is minimised) or one
    target (``target_se``, ``target_halfwidth``, or ``effect`` with ``power``:
    the budget is minimised), as :func:`vareval.stats.plan_replications`.

    Parameters
    ----------
    components : mapping
        Variances by name (:data:`COMPONENTS`), e.g. a pilot's estimates.
    budget : float, optional
        In the units of ``cost_per_trial`` (trials when that is 1).
    target_se, target_halfwidth, effect : float, optional
    power, alpha : float
        For ``effect``: power of the two-sided z test at level ``alpha``.
    cost_per_trial : float, default 1
        Cost of one (seed, configuration, rerun) cell, summed over the
        compared experiments (e.g. their mean trial durations).
    configs : {"nested", "crossed"}
    estimand : {"difference", "mean"}
    crn : bool, default True
        Common random numbers across the compared experiments.
    draws : mapping, optional
        Draws of the components from their sampling distribution (same names,
        arrays of one length), e.g. a parametric bootstrap of the pilot. Gives
        ``upper`` (each component's ``confidence`` quantile), the plan at those
        upper limits and the distribution ``draws`` of the estimate.
    confidence : float, default 0.95
        Level of the upper limits and of the half-width.
    min_seeds : int, default 2
        Fewest seeds a plan may have (the SE needs seed replication).
    versus : sequence of (int, int, int)
        More designs to show beside the optimum.
    max_trials : int
        Largest design (trials per experiment) considered.

    Returns
    -------
    Allocation
    """
    if configs not in ("nested", "crossed"):
        raise ArgumentError(f"`configs` must be 'nested' or 'crossed'; got {configs!r}.")
    if estimand not in ("difference", "mean"):
        raise ArgumentError(f"`estimand` must be 'difference' or 'mean'; got {estimand!r}.")
    confidence = as_confidence(confidence)
    if not np.isfinite(cost_per_trial) or cost_per_trial <= 0:
        raise ArgumentError(f"`cost_per_trial` must be > 0; got {cost_per_trial!r}.")
    given = {"budget": budget, "se": target_se, "halfwidth": target_halfwidth,
             "power": effect}
    given = {k: v for k, v in given.items() if v is not None}
    if len(given) != 1:
        raise ArgumentError(
            "give exactly one of `budget`, `target_se`, `target_halfwidth` or "
            f"`effect`; got {len(given)}."
        )
    ((target, value),) = given.items()
    if not np.isfinite(value) or (value == 0 if target == "power" else value <= 0):
        what = ("`effect` must be a finite number other than 0" if target == "power"
                else f"the {target} must be a finite number > 0")  # fmt: skip
        raise ArgumentError(f"{what}; got {value!r}.")
    power = as_confidence(power, "power")
    alpha = as_confidence(alpha, "alpha")
    kw = dict(configs=configs, estimand=estimand, crn=crn)
    comps = {k: float(v) for k, v in _components(components).items()}
    if target == "budget":
        bought = _trials_bought(value, cost_per_trial)
        if bought > max_trials:
            raise ArgumentError(
                f"`budget` buys {bought:,} trials per experiment; plans are searched up to "
                f"{max_trials:,} trials per experiment: give a smaller budget, or a target SE."
            )
        n = best_design(comps, bought, min_seeds=min_seeds, **kw)
    else:
        t = required_se(target, value, confidence=confidence, power=power, alpha=alpha) ** 2
        n = tuple(int(x[0]) for x in cheapest_design(comps, t, min_seeds=min_seeds,
                                                       max_trials=max_trials, **kw))
        if n[0] == 0:
            raise ArgumentError(
                f"no design of at most {max_trials} trials per experiment reaches the "
                f"{target}; with these components the floor is "
                f"{_floor_se(comps, **kw):.4g} SE."
            )
    se = float(np.sqrt(design_variance(comps, *n, **kw)))
    upper, se_upper, dist, up_design = {}, np.nan, np.empty(0), None
    if draws is not None:
        dv = _components(draws)
        upper = {k: float(np.quantile(x, confidence)) if x.ndim else float(x)
                 for k, x in dv.items()}
        se_upper = float(np.sqrt(design_variance(upper, *n, **kw)))
        if target == "budget":
            up_design = best_design(upper, n[0] * n[1] * n[2], min_seeds=min_seeds, **kw)
            dist = np.sqrt(design_variance(dv, *n, **kw))
        else:
            up = cheapest_design(upper, t, min_seeds=min_seeds, max_trials=max_trials, **kw)
            up_design = tuple(int(x[0]) for x in up)
            # draws needing more than 4x the upper-limit plan count as infinite
            bound = min(max_trials, max(1000, 4 * int(np.prod(up_design))))
            bs, bc, br = cheapest_design(dv, t, min_seeds=min_seeds, max_trials=bound, **kw)
            dist = np.where(bs > 0, bs * bc * br * cost_per_trial, np.inf).astype(float)
    N = _trials_bought(value, cost_per_trial) if target == "budget" else n[0] * n[1] * n[2]
    rows = [("optimal", n)]
    if up_design is not None and up_design[0] > 0:
        rows.append((f"optimal at upper {confidence:.0%} limits", up_design))
    rows += [("all seeds", (N, 1, 1)), ("all configs", (1, N, 1)), ("all reruns", (1, 1, N))]
    rows += [(f"{a}x{b}x{c}", (int(a), int(b), int(c))) for a, b, c in versus]
    designs = tuple(_row(name, d, comps, upper, cost_per_trial, se, kw) for name, d in rows)
    return Allocation(
        estimate=se if target == "budget" else float(n[0] * n[1] * n[2] * cost_per_trial),
        target=target,
        target_value=float(value),
        n_seeds=n[0],
        n_configs=n[1],
        n_reruns=n[2],
        n_trials=n[0] * n[1] * n[2],
        se=se,
        cost=float(n[0] * n[1] * n[2] * cost_per_trial),
        cost_per_trial=float(cost_per_trial),
        configs=configs,
        estimand=estimand,
        crn=bool(crn),
        components=comps,
        upper=upper,
        se_upper=se_upper,
        draws=np.asarray(dist, dtype=float),
        confidence=confidence,
        designs=designs,
    )


def _floor_se(comps, *, configs, estimand, crn):
    big = 10.0**12
    return float(np.sqrt(design_variance(comps, big, big if configs == "crossed" else 1,
                                         1, configs=configs, estimand=estimand, crn=crn)))


def _row(name, design, comps, upper, cost, se_opt, kw):
    ns, nc, nr = design
    se = float(np.sqrt(design_variance(comps, ns, nc, nr, **kw)))
    return {
        "design": name,
        "n_seeds": ns,
        "n_configs": nc,
        "n_reruns": nr,
        "trials": ns * nc * nr,
        "cost": ns * nc * nr * cost,
        "se": se,
        "se_upper": float(np.sqrt(design_variance(upper, ns, nc, nr, **kw)))
        if upper else np.nan,
        "se_ratio": se / se_opt,
    }
