"""Run until settled: grow a paired experiment batch by batch until a confidence sequence decides.

The sequential mode compares two experiments ``a`` and ``b`` of a store's
design on one metric. Seeds are the pairs: at a seed both experiments get the
same streams and configurations (common random numbers), so the difference
``metric(a) - metric(b)`` at a seed is one paired observation (averaged over
the seed's configurations and reruns when there are several). Batch by
batch the design grows by ``batch`` seeds and the ordinary runner runs the
new trials (claims, heartbeats, crash safety: :func:`vareval.experiment.run`);
after each batch the confidence sequence of the differences, in seed order,
is updated (a :class:`~vareval.stats.budget.sequential.SequenceState` carried
from look to look adds the new pairs only, read from the first unfinished
seed on) and the rule of :func:`vareval.stats.budget.sequential.settle` looks:
stop when it excludes zero, when it lies inside ``+-margin``, or when the
budget of seeds is spent. The store keeps every trial and records the
settings and the reason in its ``sequences`` table, and the sequence one row
per pair in ``sequence_points``: a look appends its new pairs' rows, so it
costs what its new pairs add, however long the sequence (a store of an older
version holds the whole sequence as JSON in ``sequences``; it is read, and the
next look moves it into rows).

Resuming: the sequence is a function of the store's finished trials in seed
order and of the looks recorded so far, so calling again after a crash runs
the unfinished trials of the current batch and continues the same sequence.
A sequence that stopped stays stopped, unless it stopped for its budget and
a larger budget is given (a confidence sequence stays valid however long it
runs). Its rule (bounds, the bounded sequence's method, margin, confidence)
cannot change once recorded; a store recorded before the betting sequence
existed keeps its empirical-Bernstein one.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from vareval.data.sequential import difference_bounds
from vareval.data.store_table import sqlite_errors
from vareval.errors import ExperimentError
from vareval.experiment.design import experiment_name
from vareval.experiment.runner import _as_spec, _spec_of_store, run, trial_provenance
from vareval.experiment.store import Store
from vareval.stats._result import Result
from vareval.stats.budget.sequential import BOUNDED_METHODS, ConfidenceSequence, SequenceState

SETTLED = ("difference", "equivalent within margin")
# fixed once a sequence is recorded, with the flag that sets each
_RULE = {"bounds": "--bounds", "method": "--cs", "margin": "--margin", "confidence": "--confidence"}


@dataclasses.dataclass(frozen=True, repr=False)
class SequentialRun(Result):
    """What a sequential run did and where its confidence sequence ended.

    Attributes
    ----------
    store : str
        The store's path.
    metric, a, b : str
        The compared metric and experiments (the difference is ``a - b``).
    sequence : ConfidenceSequence
        The sequence over the complete pairs, with the looks and the stop.
    reason : str
        Why the run stopped: ``"difference"``, ``"equivalent within margin"``
        or ``"budget"``.
    seeds : int
        Seeds in the design when it stopped (the pairs run).
    pairs : int
        Pairs with both sides finished (the sequence's length).
    incomplete : list of int
        Seeds left out because a trial of theirs failed or is unfinished.
    trials_run : int
        Trials this call ran (across its batches).
    budget : int
        The largest number of seeds allowed.
    """

    store: str
    metric: str
    a: str
    b: str
    sequence: ConfidenceSequence
    reason: str
    seeds: int
    pairs: int
    incomplete: list
    trials_run: int
    budget: int

    @property
    def estimate(self) -> float:
        """The mean difference ``a - b`` over the complete pairs (the sequence's last)."""
        return float(self.sequence.estimate[-1])

    def confidence_interval(self, confidence_level=None):
        """The sequence's interval at the last pair."""
        return self.sequence.confidence_interval(confidence_level)

    def to_frame(self):
        """The sequence, one row per number of pairs (see ConfidenceSequence.to_frame)."""
        return self.sequence.to_frame()


def run_until_settled(
    spec,
    store,
    *,
    compare,
    metric: str,
    bounds=None,
    method: str | None = None,
    margin: float | None = None,
    budget: int = 100,
    confidence: float = 0.95,
    batch: int = 10,
    on_look=None,
    **run_options,
) -> SequentialRun:
    """Run paired trials of two experiments batch by batch until the comparison is settled.

    Parameters
    ----------
    spec : ExperimentSpec or path or None
        The experiment (its ``seeds`` is managed here); None: the store's own.
    store : str or path-like
        The SQLite store (created, or resumed).
    compare : (str, str)
        The two experiments ``a`` and ``b`` (with one factor: two of its
        levels); the estimand is the mean of ``metric(a) - metric(b)`` per seed.
    metric : str
        A metric the trial returns.
    bounds : (float, float), optional
        Bounds of the metric itself (``(0, 1)`` for an accuracy); the
        difference then lies in ``[low - high, high - low]`` and the
        non-asymptotic sequence of ``method`` is used. Without bounds, the
        asymptotic normal-mixture sequence.
    method : {"betting", "empirical-bernstein"}, optional
        The bounded sequence (with ``bounds`` only). Default: the store's
        recorded one when resuming, else ``"betting"``.
    margin : float, optional
        Stop as equivalent once the sequence lies inside ``(-margin, margin)``.
    budget : int, default 100
        The largest number of seeds (pairs) to run.
    confidence : float, default 0.95
        The sequence's simultaneous level.
    batch : int, default 10
        Seeds added per batch; the rule looks after each batch.
    on_look : callable, optional
        Called with the :class:`ConfidenceSequence` after each look.
    **run_options
        Passed to :func:`vareval.experiment.run` (``engine``, ``workers``,
        ``progress``, ``retry_failed``, ...).

    Returns
    -------
    SequentialRun
    """
    spec = _spec_of_store(store) if spec is None else _as_spec(spec)
    a, b, bounds, budget, batch = _sequential_iv(spec, compare, bounds, budget, batch, method)
    spec = _only(spec, (a, b))
    record = _record(store, metric, a, b)
    if method is None and bounds is not None:
        method = "betting" if record is None else _recorded_method(record)
    settings = {
        "bounds": bounds,
        "method": method,
        "margin": margin,
        "confidence": confidence,
        "t_opt": budget,
        "budget": budget,
        "batch": batch,
    }
    looks: list[int] = []
    if record is not None:
        _check_rule(store, record, settings)
        settings["t_opt"] = record["settings"]["t_opt"]
        looks = list(record["sequence"]["looks"])
    seeds = _stored_seeds(store) or min(batch, budget)
    if record is not None and record["status"] == "stopped" and not (
        record["reason"] == "budget" and budget > record["settings"]["budget"]
    ):
        cs = stored_sequence(record)
        return _result(store, metric, a, b, cs, record["reason"], seeds,
                       record["sequence"]["incomplete"], 0, record["settings"]["budget"])
    trials_run = 0
    if run_options.get("trial") is not None:
        spec = spec.with_trial(run_options.pop("trial"))
    checked = trial_provenance(spec)  # once, not before every batch
    state, known = None, {}  # the sequence so far, and the finished seeds' differences
    written = 0  # pairs whose rows the store holds as this call computed them
    held = None  # one connection for every look: closing the last one checkpoints the log
    try:
        while True:
            report = run(dataclasses.replace(spec, seeds=seeds), store, _provenance=checked,
                         **run_options)
            trials_run += report.ran
            held = held or Store(store)
            grown, incomplete = _sequence(held, metric, a, b, settings, seeds, state, known)
            if grown is not state:  # a new state (first look, or the pairs changed): rewrite
                written = 0
            state = grown
            n_pairs = state.x.size
            if not looks or looks[-1] != n_pairs:
                looks.append(n_pairs)
            cs = state.sequence(margin=settings["margin"],
                                looks=[n for n in looks if n <= n_pairs] or None)
            reason = cs.reason if cs.reason in SETTLED else (
                "budget" if seeds >= budget else None)
            cs = dataclasses.replace(cs, budget=budget)
            if reason == "budget":
                cs = dataclasses.replace(cs, stop=n_pairs, reason="budget")
            _write(held, metric, a, b, settings, cs, reason, looks, incomplete, written)
            written = n_pairs
            if on_look is not None:
                on_look(cs)
            if reason is not None:
                return _result(store, metric, a, b, cs, reason, seeds, incomplete,
                               trials_run, budget)
            seeds = min(seeds + batch, budget)
    finally:
        if held is not None:
            held.close()


def _recorded_method(record) -> str | None:
    """The bounded sequence a store used (older stores: empirical Bernstein, the only one)."""
    if "method" in record["settings"]:
        return record["settings"]["method"]
    used = record["sequence"].get("method")
    return used if used in BOUNDED_METHODS else None


def _sequential_iv(spec, compare, bounds, budget, batch, method):
    try:
        a, b = (str(c) for c in compare)
    except (TypeError, ValueError):
        raise ExperimentError(
            f"--compare must name two experiments, e.g. mlp,logreg; got {compare!r}."
        ) from None
    import itertools

    levels = itertools.product(*spec.factors.values())
    experiments = [experiment_name(combination) for combination in levels]
    for name in (a, b):
        if name not in experiments:
            raise ExperimentError(
                f"--compare: {name!r} is not an experiment of the design; its experiments: "
                f"{', '.join(experiments)}."
            )
    if a == b:
        raise ExperimentError(
            f"--compare must name two different experiments; got {a!r} twice."
        )
    for name, value in (("--budget", budget), ("--batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ExperimentError(f"{name} must be an integer >= 1; got {value!r}.")
    if method is not None and (bounds is None or method not in BOUNDED_METHODS):
        raise ExperimentError(
            f"--cs must be one of {', '.join(BOUNDED_METHODS)}, with --bounds (without them the "
            f"normal-mixture sequence is the only one); got {method!r}"
            + ("" if bounds is not None else " and no --bounds") + "."
        )
    if bounds is not None:
        width = difference_bounds(bounds)[1]  # validates: two finite numbers, low < high
        bounds = [float(bounds[0]), float(bounds[0]) + width]
    return a, b, bounds, budget, batch


def _only(spec, experiments):
    """The design restricted to the factor levels the compared experiments use.

    A fresh store then holds only their trials; a store that already has
    other levels keeps them (and runs their new seeds too).
    """
    import itertools

    names = list(spec.factors)
    used = [
        combination
        for combination in itertools.product(*spec.factors.values())
        if experiment_name(combination) in experiments
    ]
    factors = {
        name: tuple(v for v in levels if any(c[i] == v for c in used))
        for i, (name, levels) in enumerate(zip(names, spec.factors.values(), strict=True))
    }
    return dataclasses.replace(spec, factors=factors)


def _check_rule(store, record: dict, settings: dict) -> None:
    stored = {**record["settings"], "method": _recorded_method(record)}
    changed = [k for k in _RULE if stored.get(k) != settings[k]]
    if changed:
        raise ExperimentError(
            f"store '{store}' holds a sequential run of this comparison with other "
            f"{', '.join(changed)} ({', '.join(f'{_RULE[k]} {stored.get(k)!r}' for k in changed)}"
            "); "
            "its rule cannot change mid-sequence: keep them, or use a new --store."
        )


def _record(store, metric, a, b) -> dict | None:
    try:
        with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
            recs = st.sequences()
    except ExperimentError:
        return None  # no store yet
    return next((r for r in recs if (r["metric"], r["a"], r["b"]) == (metric, a, b)), None)


def _stored_seeds(store) -> int | None:
    try:
        spec = _spec_of_store(store)
    except ExperimentError:
        return None
    return spec.seeds


def paired_seed_differences(
    store, metric: str, a: str, b: str, seeds: int | None = None, bounds=None,
    from_seed: int = 0,
):
    """Per-seed differences ``metric(a) - metric(b)`` of a store, in seed order.

    A seed counts when every trial of both experiments at that seed is done;
    its difference is the mean over its (configuration, rerun) cells. A value
    outside ``bounds`` (the metric's, when given) is refused. Only seeds from
    ``from_seed`` on are read (a run's looks read the new seeds only).

    Returns
    -------
    differences : ndarray
    seeds_used : ndarray of int
    incomplete : list of int
        Seeds (below ``seeds``) with a failed or unfinished trial.
    """
    st = store if isinstance(store, Store) else Store(store, readonly=True)
    try:
        with sqlite_errors(st.path, ExperimentError):
            rows = st.con.execute(
                "SELECT id, experiment, seed, config_index, rerun, status, metrics FROM trials"
                " WHERE experiment IN (?, ?) AND seed >= ? ORDER BY seed, config_index, rerun,"
                " id",
                (a, b, from_seed),
            ).fetchall()
    finally:
        if st is not store:
            st.close()
    cells: dict[tuple, dict] = {}
    for tid, exp, seed, cidx, rerun, status, raw in rows:
        if seeds is not None and seed >= seeds:
            continue
        value = None
        if status == "done":
            metrics = json.loads(raw) if raw else {}
            if metric not in metrics:
                raise ExperimentError(
                    f"--metric {metric!r}: trial {tid} ({exp}, seed {seed}) returned no such "
                    f"metric; it has: {', '.join(sorted(metrics)) or 'none'}."
                )
            value = float(metrics[metric])
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                raise ExperimentError(
                    f"--bounds {bounds[0]:g},{bounds[1]:g}: trial {tid} ({exp}, seed {seed}) "
                    f"has {metric} = {value:g}, outside them; give the metric's true bounds, "
                    "or none (normal-mixture sequence)."
                )
            if not np.isfinite(value):
                raise ExperimentError(
                    f"--metric {metric!r}: trial {tid} ({exp}, seed {seed}) is {value}; a "
                    "paired difference needs finite values (the trial diverged?)."
                )
        cells.setdefault((seed, cidx, rerun), {})[exp] = value
    per_seed: dict[int, list] = {}
    for (seed, _, _), pair in cells.items():
        ok = pair.get(a) is not None and pair.get(b) is not None
        per_seed.setdefault(seed, []).append(pair[a] - pair[b] if ok else None)
    used = [s for s, d in per_seed.items() if None not in d]
    incomplete = [s for s, d in per_seed.items() if None in d]
    diffs = np.array([np.mean(per_seed[s]) for s in used], dtype=float)
    return diffs, np.array(used, dtype=int), incomplete


def _sequence(store, metric, a, b, settings, seeds, state, known):
    """The sequence state over the store's complete pairs, extended from ``state``.

    ``known`` maps each seed below the first incomplete one to its difference
    (it is updated): those seeds' trials are done, so a look reads only the
    seeds from there on. Pairs are appended at the end as seeds finish; when
    the pairs so far are not a prefix of the new ones (a retried seed
    completed), the state starts over.
    """
    bounds = settings["bounds"]
    frontier = next(reversed(known), -1) + 1  # seeds enter in increasing order
    diffs, used, incomplete = paired_seed_differences(store, metric, a, b, seeds, bounds,
                                                      from_seed=frontier)
    # the known seeds' differences lead the state's (no pass over them in Python)
    before = (state.x[: len(known)] if state is not None and state.x.size >= len(known)
              else np.fromiter(known.values(), float, len(known)))
    diffs = np.concatenate([before, diffs])
    first_open = min(incomplete, default=None)
    known.update((int(s), float(d)) for s, d in zip(used, diffs[len(known):], strict=True)
                 if first_open is None or s < first_open)
    if diffs.size == 0:
        raise ExperimentError(
            f"no seed has finished trials of both {a!r} and {b!r} (seeds {incomplete[:5]} "
            f"have a failed or unfinished trial); see `vareval status {store}`."
        )
    if state is None or not np.array_equal(state.x, diffs[: state.x.size]):
        width = None if bounds is None else bounds[1] - bounds[0]
        state = SequenceState(
            bounds=None if bounds is None else (-width, width),
            confidence=settings["confidence"],
            method=settings.get("method"),
            t_opt=settings["t_opt"],
        )
    return state.extend(diffs[state.x.size :]), incomplete


def _write(st, metric, a, b, settings, cs, reason, looks, incomplete, start: int) -> None:
    """Record a look: the run's state, and the sequence's rows past ``start`` pairs."""
    new = slice(start, None)
    points = (cs.n[new], cs.estimate[new], cs.low[new], cs.high[new],
              np.isin(cs.n[new], looks))
    sequence = {"incomplete": list(incomplete), "method": cs.method}
    with sqlite_errors(st.path, ExperimentError):
        st.record_sequence(
            metric,
            a,
            b,
            {
                "settings": settings,
                "status": "running" if reason is None else "stopped",
                "reason": reason,
                "stop": cs.stop if reason is not None else None,
                "sequence": sequence,
            },
            points,
            start,
        )


def _result(store, metric, a, b, cs, reason, seeds, incomplete, trials_run, budget):
    return SequentialRun(
        store=str(store),
        metric=metric,
        a=a,
        b=b,
        sequence=cs,
        reason=reason,
        seeds=seeds,
        pairs=int(cs.n[-1]),
        incomplete=list(incomplete),
        trials_run=trials_run,
        budget=budget,
    )


def stored_sequence(record: dict) -> ConfidenceSequence:
    """The confidence sequence a store's ``sequences`` row recorded."""
    seq, settings = record["sequence"], record["settings"]
    bounds = settings.get("bounds")
    width = None if bounds is None else bounds[1] - bounds[0]
    return ConfidenceSequence(
        n=np.asarray(seq["n"], dtype=int),
        estimate=np.asarray(seq["estimate"], dtype=float),
        low=np.asarray(seq["low"], dtype=float),
        high=np.asarray(seq["high"], dtype=float),
        method=seq["method"],
        guarantee="nonasymptotic" if bounds is not None else "asymptotic",
        confidence=settings["confidence"],
        bounds=None if bounds is None else (-width, width),
        margin=settings.get("margin"),
        budget=settings.get("budget"),
        stop=record.get("stop"),
        reason=record.get("reason") or "not settled",
        looks=np.asarray(seq["looks"], dtype=int),
    )
