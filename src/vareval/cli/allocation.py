"""``vareval allocate``: spend the compute where the variance is."""

from __future__ import annotations

import click

from vareval.cli._common import (
    check_output,
    check_resamples,
    emit,
    json_option,
    metric_option,
    results_file,
    with_design,
)
from vareval.cli._paths import output_path


def _amount(x: float, unit: str) -> str:
    if unit == "trials":
        return f"{x:.0f} trials"
    for name, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0)):
        if x >= size:
            return f"{x / size:.3g}{name}"
    return f"{x:.3g}s"


def render(a) -> str:
    """The plan, the SE it buys, and the naive designs side by side."""
    what = (f"difference {a.compare[0]} - {a.compare[1]}" if a.estimand == "difference"
            else f"mean of {a.compare[0]}") if a.compare else a.estimand
    crn = ("common random numbers (same seeds and configurations for both)" if a.crn
           else "independent seeds and configurations per experiment")
    comps = ", ".join(f"{k} {v:.3g}" for k, v in a.components.items())
    lines = [
        f"allocation for the {what} of {a.metric or 'the metric'}: balanced cell mean, "
        f"{a.configs} configurations, {crn if a.estimand == 'difference' else ''}".rstrip(", "),
        f"pilot variance components: {comps}",
    ]
    if a.unit == "seconds":
        each = _amount(a.cost_per_trial, "seconds")
        lines.append(f"cost of one (seed, config, rerun) cell of all compared experiments: {each}")
    spent = f", {_amount(a.cost, a.unit)}" if a.unit == "seconds" else ""
    if a.target == "budget":
        lines.append(f"budget {_amount(a.target_value, a.unit)}: plan {a.n_seeds} seeds x "
                     f"{a.n_configs} configs x {a.n_reruns} reruns ({a.n_trials} trials per "
                     f"experiment{spent}), predicted SE {a.se:.4g}")
    else:
        asked = {"se": "SE", "halfwidth": f"{a.confidence:.0%} half-width",
                 "power": "effect (power)"}[a.target]
        lines.append(f"target {asked} {a.target_value:.4g}: plan {a.n_seeds} seeds x "
                     f"{a.n_configs} configs x {a.n_reruns} reruns ({a.n_trials} trials per "
                     f"experiment), budget {_amount(a.cost, a.unit)}, predicted SE {a.se:.4g}")
    if a.draws.size:
        lo, hi = a.confidence_interval()
        level = f"{a.confidence:.0%}"
        if a.target == "budget":
            lines.append(f"pilot uncertainty ({a.draws.size} bootstrap draws): the plan's SE "
                         f"{level} interval [{lo:.4g}, {hi:.4g}]; at the components' upper "
                         f"{level} limits {a.se_upper:.4g}")
        else:
            lines.append(f"pilot uncertainty ({a.draws.size} bootstrap draws): budget needed "
                         f"{level} interval [{_amount(lo, a.unit)}, {_amount(hi, a.unit)}]")
    frame = a.to_frame()
    if a.unit == "trials":
        frame = frame.drop(columns="cost")  # the trials column says it
    else:
        frame["cost"] = [_amount(c, a.unit) for c in frame["cost"]]
    for col in ("se", "se_upper"):
        frame[col] = [f"{x:.4g}" if x == x else "-" for x in frame[col]]
    frame["se_ratio"] = [f"{x:.3f}" for x in frame["se_ratio"]]
    lines += ["", frame.to_string(index=False),
              "", "se_upper: the design's SE if every component is at its upper limit; "
              "se_ratio: SE / the plan's SE."]
    return "\n".join(lines)


def _design(text: str) -> tuple:
    from vareval.errors import ArgumentError

    try:
        parts = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        parts = ()
    if len(parts) != 3 or min(parts) < 1:
        raise ArgumentError(
            f"--versus takes designs SEEDSxCONFIGSxRERUNS (e.g. 10x10x3); got {text!r}."
        )
    return parts


@click.command("allocate")
@results_file
@metric_option
@click.option("--compare", required=True,
              help="Two experiments (a,b: their difference) or one (its mean).")
@click.option("--budget", default=None,
              help="Trials per experiment (300) or a time for all compared experiments "
              "(200h, 90m, 2d).")
@click.option("--target-se", type=float, default=None, help="Smallest budget for this SE.")
@click.option("--target-halfwidth", type=float, default=None,
              help="Smallest budget for this CI half-width (at --confidence).")
@click.option("--effect", type=float, default=None,
              help="Smallest budget for --power to detect this difference (two-sided z test).")
@click.option("--power", type=float, default=0.8, show_default=True)
@click.option("--cost", default=None,
              help="Time of one trial (1.5m, 90s); default: the store's mean durations.")
@click.option("--configs", type=click.Choice(["nested", "crossed"]), default=None,
              help="Configurations per seed (nested) or shared by all seeds (crossed); "
              "default: as in the pilot.")
@click.option("--crn/--no-crn", default=None,
              help="Plan common random numbers (same seeds for both experiments); "
              "default: as in the pilot.")
@click.option("--versus", multiple=True, help="Also show this design, e.g. 10x10x3 (repeatable).")
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--resamples", type=int, default=200, show_default=True, callback=check_resamples,
              help="Parametric-bootstrap draws of the components (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the bootstrap.")
@click.option("--extend", default=None, metavar="OUT.toml", type=output_path(),
              help="Write the experiment.toml that grows the store to the plan.")
@json_option
def allocate(results, metric, compare, budget, target_se, target_halfwidth, effect, power,
             cost, configs, crn, versus, confidence, resamples, seed, extend, as_json):
    """Seeds x configurations x reruns that minimise the SE for a budget (or meet a target)."""
    from vareval.cli._common import split_labels, writing
    from vareval.data.allocation import allocation, grown_spec_toml
    from vareval.errors import ArgumentError

    check_output(extend, "--extend")
    targets = [x for x in (budget, target_se, target_halfwidth, effect) if x is not None]
    if len(targets) != 1:
        raise ArgumentError(
            "give exactly one of --budget, --target-se, --target-halfwidth or --effect; "
            f"got {len(targets)}."
        )
    if resamples != 0 and resamples < 19:
        raise ArgumentError(
            f"--resamples must be 0 (no bootstrap) or at least 19; got {resamples}."
        )
    compare = split_labels(compare, "--compare")
    a = allocation(results, metric=metric, compare=compare, budget=budget, target_se=target_se,
                   target_halfwidth=target_halfwidth, effect=effect,
                   power=power, cost=cost, configs=configs, crn=crn, confidence=confidence,
                   n_resamples=resamples, versus=[_design(v) for v in versus], rng=seed,
                   progress=None)
    payload, text = a.to_dict(), render(a) + f"\nseed {seed}"
    payload["seed"] = seed
    if extend:
        spec = results.attrs.get("spec")
        if spec is None:
            raise ArgumentError("--extend needs a run store (the table has no experiment spec).")
        from vareval.experiment.spec import ExperimentSpec

        spec = spec if isinstance(spec, ExperimentSpec) else ExperimentSpec.from_dict(spec)
        toml, note = grown_spec_toml(spec, a)
        with writing(extend, "--extend"), open(extend, "w", encoding="utf-8") as fh:
            fh.write(toml)
        import shlex

        store = shlex.quote(str(click.get_current_context().params["results"]))
        text += f"\nwrote {extend}: {note}; run it with: vareval run {extend} --store {store}"
        payload["extend"] = {"path": extend, "note": note}
    emit(as_json, *with_design(results, payload, text, by="experiment", metric=metric,
                                     rerun_level=True))


COMMANDS = (allocate,)
