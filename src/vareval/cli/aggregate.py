"""``vareval aggregate``: aggregates across tasks, profiles, P(improvement)."""

from __future__ import annotations

import click

from vareval.cli._common import (
    by_option,
    ci_method_option,
    confidence_option,
    emit,
    json_option,
    metrics_option,
    pair_on_option,
    parse_floats,
    per_metric,
    resamples_option,
    results_file,
    seed_option,
    split_columns,
    split_labels,
)
from vareval.errors import ArgumentError

_LABELS = {"median": "median", "iqm": "IQM", "mean": "mean", "optimality_gap": "optimality gap"}


def _parse_pairs(text):
    """'a:b,a:c' as pairs of labels exactly as written (an item in CSV quotes may hold a comma)."""
    if text is None or text in ("best", "all"):
        return text
    pairs = []
    for item in split_labels(text, "--pairs"):
        x, sep, y = item.partition(":")
        if not sep or not x or not y:
            raise ArgumentError(f"--pairs must look like 'a:b,a:c'; got {item!r}.")
        pairs.append((x, y))
    return pairs


@click.command()
@results_file
@metrics_option
@by_option
@click.option(
    "--task", required=True, help="Column(s) naming the task (data set), comma-separated."
)
@pair_on_option(
    help="Column naming the run (e.g. seed); checks that every method has the same runs "
    "on every task."
)
@click.option(
    "--normalize",
    type=click.Choice(["none", "minmax"]),
    default="none",
    show_default=True,
    help="Per-task normalisation (or give --reference).",
)
@click.option(
    "--reference",
    type=click.Path(dir_okay=False),
    default=None,
    help="Table of per-task reference scores (e.g. random and human).",
)
@click.option("--reference-low", default=None, help="Reference column mapped to 0.")
@click.option("--reference-high", default=None, help="Reference column mapped to 1.")
@click.option(
    "--aggregates",
    default="median,iqm,mean,optimality_gap",
    show_default=True,
    help="Aggregates to estimate.",
)
@click.option(
    "--gamma", type=float, default=1.0, show_default=True, help="Optimality-gap threshold."
)
@resamples_option(2000, "Bootstrap resamples.")
@confidence_option
@ci_method_option(["percentile", "bca"], "percentile")
@click.option(
    "--resample-tasks",
    is_flag=True,
    help="Resample tasks too: a claim about a population of tasks.",
)
@click.option(
    "--pairs",
    default=None,
    help="Pairs for P(X > Y): 'best' (default: the method with the highest IQM against "
    "each other), 'all' (every pair: slow for many methods), or e.g. 'a:b,a:c'.",
)
@click.option(
    "--baseline", default=None, help="Instead of --pairs: P(X > BASELINE) for each other X."
)
@click.option(
    "--taus",
    default=None,
    help="Profile thresholds, comma-separated (default 101 over the score range).",
)
@seed_option()
@json_option
def aggregate(
    results,
    metric,
    by,
    task,
    pair_on,
    normalize,
    reference,
    reference_low,
    reference_high,
    aggregates,
    gamma,
    resamples,
    confidence,
    ci_method,
    resample_tasks,
    pairs,
    baseline,
    taus,
    seed,
    as_json,
):
    """Aggregate performance across tasks, with stratified-bootstrap intervals.

    Mean, median, IQM and optimality gap per method; the performance profile
    with a simultaneous band; P(X > Y) for pairs of methods.
    """
    import vareval

    def one(metric):
        table = vareval.aggregate(
            results,
            metric=metric,
            by=split_columns(by),
            task=split_columns(task),
            pair_on=None if pair_on is None else split_columns(pair_on),
            normalize="reference" if reference is not None else normalize,
            reference=None if reference is None else vareval.read_table(reference),
            reference_low=reference_low,
            reference_high=reference_high,
            aggregates=split_columns(aggregates),
            gamma=gamma,
            n_resamples=resamples,
            confidence=confidence,
            ci=ci_method,
            resample_tasks=resample_tasks,
            taus=None if taus is None else parse_floats(taus, "--taus"),
            pairs=_parse_pairs(pairs),
            baseline=baseline,
            rng=seed,
            progress=None,
        )
        payload = {
            "title": table.title,
            "seed": seed,
            "intervals": table["intervals"].to_dict(),
            "profile": table["profile"].records(),
            "mean_profile": table["mean_profile"].records(),
            "improvement_pairs": table.notes[0],
            "improvement_adjustment": table.notes[1],
            "improvement": {
                k: v.to_dict() for k, v in table.results.items() if k.startswith("P(")
            },
        }
        return payload, render_aggregate(table, seed)

    metrics = split_columns(metric)
    outputs = [one(m) for m in metrics]
    emit(as_json, *per_metric(metrics, [p for p, _ in outputs], [t for _, t in outputs]))


def _interval(est, low, high, digits: int = 4) -> str:
    return f"{est:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def render_aggregate(table, seed: int) -> str:
    """Interval estimates, the profiles at a few thresholds, and each P(X > Y)."""
    ie = table["intervals"]
    scheme = "tasks and runs resampled" if ie.resample_tasks else "runs resampled within tasks"
    lines = [table.title, f"{ie.n_resamples:,} resamples, {scheme}, seed {seed}", ""]
    width = max(len("method"), *(len(m) for m in ie.methods)) + 2  # the header fits too
    head = "".join(f"{_LABELS[a]:<26}" for a in ie.aggregates)
    lines.append(f"{'method':<{width}}{head}".rstrip())
    for i, m in enumerate(ie.methods):
        cells = "".join(
            f"{_interval(ie.estimate[i, j], ie.low[i, j], ie.high[i, j]):<26}"
            for j in range(len(ie.aggregates))
        )
        lines.append(f"{m:<{width}}{cells}".rstrip())
    if "optimality_gap" in ie.aggregates:
        lines.append(
            f"optimality gap: gamma - mean(min(score, gamma)), gamma = {ie.gamma:g}; "
            "lower is better."
        )
    lines += ["", *_render_profile(table["profile"], width)]
    improvements = [v for k, v in table.results.items() if k.startswith("P(")]
    if improvements:
        pct = f"{improvements[0].confidence:.0%}"
        labels = [f"{r.x} > {r.y}" for r in improvements]
        room = max(2 * width + 3, *(len(x) + 2 for x in labels))
        lines += ["", f"{'P(X > Y)':<{room}}estimate  {pct} CI"]
        for label, r in zip(labels, improvements, strict=True):
            lines.append(f"{label:<{room}}{r.estimate:8.3f}  [{r.low:.3f}, {r.high:.3f}]")
        lines.append(
            "P(X > Y): chance that a run of X beats a run of Y on a task picked at "
            "random (ties count 1/2); 0.5 is no difference."
        )
        lines.append(f"{table.notes[0]}; {table.notes[1]}.")
    return "\n".join(lines)


def _render_profile(profile, width: int) -> list[str]:
    """The run-score profile at five thresholds, with the simultaneous band."""
    picks = sorted({int(round(q * (profile.taus.size - 1))) for q in (0.1, 0.3, 0.5, 0.7, 0.9)})
    pct = f"{profile.confidence:.0%}"
    lines = [
        f"fraction of runs scoring above tau, {pct} simultaneous band "
        f"(half-width up to {_finite_max(profile.band_critical):.3f}, the whole curve; "
        "see --json for every tau)",
        f"{'method':<{width}}"
        + "".join(f"{'tau ' + format(profile.taus[k], '.4g'):<22}" for k in picks).rstrip(),
    ]
    missing = False
    for i, m in enumerate(profile.methods):
        est, low, high = profile.estimate[i], profile.band_low[i], profile.band_high[i]
        cells = ""
        for k in picks:
            if low[k] != low[k]:
                missing = True
                cells += f"{f'{est[k]:.3f} [n/a]':<22}"
            else:
                cells += f"{_interval(est[k], low[k], high[k], 3):<22}"
        lines.append(f"{m:<{width}}{cells}".rstrip())
    if missing:
        lines.append(
            "n/a: that method's resamples never vary, so the bootstrap cannot size a band."
        )
    if profile.band_note:
        lines.append(f"Caution: {profile.band_note}.")
    return lines


def _finite_max(values) -> float:
    finite = [v for v in values if v == v]
    return max(finite) if finite else float("nan")


COMMANDS = [aggregate]
