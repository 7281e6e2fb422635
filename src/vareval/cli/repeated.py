"""Commands for repeated runs : summarize, best-of-k, paired, plan."""

from __future__ import annotations

import functools

import click

from vareval._format import formatter, number
from vareval.cli._common import (
    alpha_option,
    baseline_option,
    bounds_option,
    by_option,
    confidence_option,
    emit,
    json_option,
    lower_is_better_option,
    metric_option,
    metrics_option,
    pair_on_option,
    paired_test_options,
    parse_floats,
    parse_ints,
    per_metric,
    resamples_option,
    results_file,
    seed_option,
    split_columns,
)
from vareval.cli.sequential import parse_pair
from vareval.errors import ArgumentError


def _pair_options(f):
    """--compare a,b (as sequential and allocate); the old --a/--b stay for one release, hidden."""

    @functools.wraps(f)
    def command(*args, compare, a, b, **kwargs):
        if a is not None or b is not None:
            if compare is not None:
                raise ArgumentError("give --compare a,b or its old spelling --a/--b, not both.")
            click.echo("warning: --a/--b are deprecated and will be removed; use --compare a,b.",
                       err=True)  # fmt: skip
        elif compare is not None:
            a, b = parse_pair(compare, "--compare")
        return f(*args, a=a, b=b, **kwargs)

    command = click.option("--b", "b", default=None, hidden=True)(command)
    command = click.option("--a", "a", default=None, hidden=True)(command)
    command = click.option(
        "--compare", "compare", default=None,
        help="The two methods a,b: the difference is a - b (b the baseline).",
    )(command)  # fmt: skip
    return pair_on_option(required=True)(command)


# Runs printed per method when --runs is not given: a million-row table's every
# run is megabytes of text nobody reads in a terminal.
RUNS_SHOWN = 50


@click.command()
@results_file
@metrics_option
@by_option
@confidence_option
@lower_is_better_option
@click.option(
    "--runs/--no-runs",
    default=None,
    help=f"Show every run's score, or none (default: every run up to {RUNS_SHOWN} a "
    "method, else the first ones and how many more).",
)
@bounds_option(
    help="The metric's range LOW,HIGH: a score outside it is refused, intervals are cut to it "
    "(default: [0, 1] for accuracy, F1, AUC ... by the name; [0, 100] for 'accuracy_pct')."
)
@json_option
def summarize(results, metric, by, confidence, lower_is_better, runs, bounds, as_json):
    """Per-method summary of repeated runs: centre, spread, CIs, the selected best run.

    When a seed holds several runs (configurations, reruns) the mean's interval
    is over the seeds' means; the first line states the design assumed.
    """
    import vareval

    metrics = split_columns(metric)
    tables = [
        vareval.summarize(
            results, metric=m, by=split_columns(by), confidence=confidence,
            higher_is_better=not lower_is_better, bounds=bounds,
        )
        for m in metrics
    ]  # fmt: skip
    emit(
        as_json,
        *per_metric(
            metrics,
            [t.to_dict() for t in tables],
            [render_summary(t, m, every_run=runs) for t, m in zip(tables, metrics, strict=True)],
        ),
    )


def render_summary(table, metric: str, every_run: bool | None = None) -> str:
    """The per-method report: typical performance with spread, the best run as selected."""
    first = next(iter(table.results.values()))
    pct = f"{first.confidence:.0%}"
    f = formatter(*(s.scores for s in table.results.values()))
    clustered = first.units is not None
    rows = []
    for name, s in table.results.items():
        med_ci = f"[{f(s.median_low)}, {f(s.median_high)}]" if not clustered else "n/a"
        if s.median_ci_coverage < s.confidence:
            med_ci += f" {s.median_ci_coverage:.0%}"
        mean_ci = f"[{f(s.mean_low)}, {f(s.mean_high)}]"
        rows.append((name, s, mean_ci, med_ci))
    w = max(9, *(len(f(v)) + 1 for _, s, _, _ in rows for v in (s.mean, s.sd, s.selected)))
    wci = max(20, *(len(c) + 1 for _, _, m, d in rows for c in (m, d)))
    unit = table.design.unit if clustered else None
    lines = [
        f"{metric}: {pct} intervals; 'selected' is the best run, not typical performance",
        f"{'method':<14}{'n':>4}" + (f"{unit + 's':>7}" if unit else "")
        + f"{'mean':>{w}}{'SD':>{w}}{'SE':>{w}}  {pct + ' CI (mean)':<{wci}}"
        f"{'median':>{w}}  {pct + ' CI (median)':<{wci}}{'IQR':>{w}}{'selected':>{w + 1}}",
    ]
    for name, s, mean_ci, med_ci in rows:
        lines.append(
            f"{name[:13]:<14}{s.n:>4}" + (f"{s.units:>7}" if unit else "")
            + f"{f(s.mean):>{w}}{f(s.sd):>{w}}{f(s.se):>{w}}  "
            f"{mean_ci:<{wci}}{f(s.median):>{w}}  "
            f"{med_ci:<{wci}}{f(s.iqr):>{w}}{f(s.selected):>{w + 1}}"
        )
    lines += [table.design.statement()] if table.design is not None else []
    lines += render_runs(table)
    if every_run is not False:
        cap = None if every_run else RUNS_SHOWN
        lines.append("every run:")
        for name, s in table.results.items():
            shown = s.scores if cap is None else s.scores[:cap]
            more = len(s.scores) - len(shown)
            tail = f" ... {more:,} more (--runs shows all)" if more else ""
            lines.append(f"  {name[:13]:<13} " + " ".join(f(v) for v in shown) + tail)
    if any(s.median_ci_coverage < s.confidence for s in table.results.values()):
        lines.append(
            "(a % after a median interval: too few runs; [min, max] covers only that often)"
        )
    return "\n".join(lines)


_RUN_COLUMNS = (
    ("planned", "planned"),
    ("done", "done"),
    ("failed", "failed"),
    ("not run", "not_run"),
    ("non-finite", "non_finite"),
    ("summarised", "summarised"),
)


def render_runs(table) -> list[str]:
    """Each method's planned, done, failed, not run and non-finite runs; survivors in words."""
    runs = getattr(table, "runs", None)
    if not runs:
        return []
    cols = _RUN_COLUMNS
    if any(c.pruned for c in runs.values()):  # an importer's pruned trials: a column of their own
        cols = (*cols[:3], ("pruned", "pruned"), *cols[3:])
    lines = ["runs:" + " " * 9 + "".join(f"{h:>{len(h) + 2}}" for h, _ in cols)]
    lines += [
        f"  {name[:11]:<12}" + "".join(f"{getattr(c, k):>{len(h) + 2}}" for h, k in cols)
        for name, c in runs.items()
    ]
    lines += [f"NOTE {note}." for note in table.notes]
    return lines


def _with_seed(payload: dict, seed: int, table=None) -> dict:
    """Each result's JSON with the seed that drew it (and the design it assumed)."""
    extra = _design_payload(table)
    return {name: {**value, "seed": seed, **extra} for name, value in payload.items()}


def _design_payload(table) -> dict:
    """The design line and notes of a result table, for its JSON."""
    if getattr(table, "design", None) is None:
        return {}
    return {"design": table.design.statement(), "notes": list(table.notes)}


def _design_lines(table) -> list[str]:
    """The design line and the notes, as printed under a result."""
    if getattr(table, "design", None) is None:
        return []
    return [f"  {table.design.statement()}", *(f"  NOTE {n}." for n in table.notes)]


@click.command("best-of-k")
@results_file
@metric_option
@by_option(required=False, help="Method column; gives one table per method.")
@click.option("--method", default=None, help="Only this method's runs.")
@click.option("--ks", default="1,3,5,10", show_default=True, help="Values of k, comma-separated.")
@resamples_option(100_000, "Simulated comparisons per k.")
@click.option(
    "--quantiles", default="0.5,0.9", show_default=True, help="Quantiles of the gap to show."
)
@click.option("--absolute", is_flag=True, help="Absolute gaps instead of relative to the winner.")
@lower_is_better_option
@seed_option()
@json_option
def best_of_k(
    results, metric, by, method, ks, resamples, quantiles, absolute, lower_is_better, seed, as_json
):
    """Apparent gaps between two IDENTICAL methods that each keep their best of k runs."""
    import vareval
    from vareval.stats._checks import check_size

    check_size(resamples, "--resamples")

    table = vareval.best_of_k(
        results,
        metric=metric,
        by=split_columns(by) if by else None,
        method=method,
        ks=parse_ints(ks, "--ks"),
        quantiles=parse_floats(quantiles, "--quantiles"),
        n_resamples=resamples,
        higher_is_better=not lower_is_better,
        relative=not absolute,
        rng=seed,
        progress=None,
    )
    emit(as_json, _with_seed(table.to_dict(), seed), render_best_of_k(table, seed))


def render_best_of_k(table, seed=None) -> str:
    """The illusion table: quantiles of the apparent gap, and the signed difference, per k."""
    lines = []
    for name, r in table.results.items():
        unit = "relative to the winner" if r.relative else "absolute"
        fmt = (lambda v: f"{v:.1%}") if r.relative else formatter(r.gap_quantiles)
        heads = ["median" if q == 0.5 else f"q{q:g}" for q in r.quantiles]
        lines += [
            f"{name}: two identical methods, each keeping its best of k runs "
            f"({r.n_resamples:,} simulated comparisons per k"
            + (f", seed {seed}" if seed is not None else "")
            + f"; gaps {unit})",
            f"{'k':>5}" + "".join(f"{h:>10}" for h in heads) + f"{'mean signed diff':>19}",
        ]
        lines += [
            f"{k:>5}"
            + "".join(f"{fmt(v):>10}" for v in row)
            + f"{number(d, digits=3, signed=True):>19}"
            for k, row, d in zip(r.ks, r.gap_quantiles, r.mean_signed_difference, strict=True)
        ]
    lines.append(
        "The signed difference is zero in expectation: an observed winner alone shows nothing."
    )
    return "\n".join(lines)


@click.command()
@results_file
@metrics_option
@by_option
@_pair_options
@baseline_option(help="Compare every other method with this one (Holm-adjusted p-values).")
@click.option(
    "--all-pairs", is_flag=True, help="Compare every pair of methods (Holm-adjusted p-values)."
)
@confidence_option
@resamples_option(10_000, "Bootstrap resamples.")
@paired_test_options
@lower_is_better_option
@bounds_option()
@seed_option()
@json_option
def paired(
    results, metric, by, pair_on, a, b, baseline, all_pairs, confidence, resamples, repeated,
    test_fraction, train_fraction, lower_is_better, bounds, seed, as_json,
):  # fmt: skip
    """Mean paired difference A - B with SE, CIs and the variance decomposition.

    Two methods (--compare a,b, or the only two in the table), every method against
    --baseline, or --all-pairs; with several comparisons the p-values are
    Holm-adjusted within each metric.
    """
    import vareval
    from vareval.stats._checks import check_size

    check_size(resamples, "--resamples")
    chosen = [n for n, v in (("--compare", a or b), ("--baseline", baseline),
                             ("--all-pairs", all_pairs)) if v]  # fmt: skip
    if len(chosen) > 1:
        raise ArgumentError(f"give one of --compare, --baseline or --all-pairs; got {chosen}.")
    metrics = split_columns(metric)
    outcomes = []
    for m in metrics:
        table = vareval.paired(
            results, metric=m, by=split_columns(by), pair_on=split_columns(pair_on), a=a, b=b,
            baseline=baseline, all_pairs=all_pairs, confidence=confidence,
            n_resamples=resamples, higher_is_better=not lower_is_better, repeated=repeated,
            test_fraction=test_fraction, train_fraction=train_fraction, bounds=bounds, rng=seed,
            progress=None,
        )  # fmt: skip
        outcomes.append((_paired_payload(table, seed), render_paired(table, seed)))
    emit(as_json, *per_metric(metrics, *map(list, zip(*outcomes, strict=True))))


def _paired_payload(table, seed) -> dict:
    """Each comparison's JSON: its result, the seed, Holm's p with several, the design."""
    holm = table.frame.get("pvalue_holm")
    return {
        k: {**r.to_dict(), "seed": seed, **_design_payload(table),
            **({} if holm is None else {"pvalue_holm": _finite(holm[k])})}
        for k, r in table.results.items()
    }  # fmt: skip


def _finite(x):
    return None if x != x else float(x)


def _pv(p: float) -> str:
    return "n/a" if p != p else f"{p:.4g}"


def render_paired(table, seed=None) -> str:
    """Each paired comparison (then, with several, the Holm-adjusted p-values)."""
    blocks = [_render_comparison(table, name, r, seed) for name, r in table.results.items()]
    if "pvalue_holm" not in table.frame:
        return blocks[0]
    f = table.frame
    width = max(len(k) for k in f.index)
    family = [
        f"{len(f)} comparisons, p-values Holm-adjusted within this metric"
        + (f" (streams spawned from seed {seed})" if seed is not None else ""),
        f"  {'comparison':<{width}}  {'p':>10}  {'p (Holm)':>10}",
        *(f"  {k:<{width}}  {_pv(p):>10}  {_pv(h):>10}"
          for k, p, h in zip(f.index, f["pvalue"], f["pvalue_holm"], strict=True)),
    ]  # fmt: skip
    return "\n\n".join([*blocks, "\n".join(family)])


def _render_comparison(table, name, r, seed=None) -> str:
    """One comparison: the difference with its uncertainty, then what pairing saved."""
    pct = f"{r.confidence:.0%}"
    ends = (r.low, r.high, r.bootstrap_low, r.bootstrap_high)
    f = formatter(r.differences, ends, r.se_unpaired)
    fs = formatter(r.differences, ends, r.se_unpaired, signed=True)
    v = formatter(r.var_a, r.var_b, r.cov, r.var_diff, digits=3)
    test = (
        f"t = {r.statistic:.3f}, df = {r.df:g}, p = {r.pvalue:.4g}"
        if r.sd > 0
        else f"undefined: every difference is {fs(r.estimate)} (SD 0), so no p-value"
    )
    if r.bootstrap_note:
        boot = f"  {pct} CI, bootstrap n/a ({r.bootstrap_note})"
    else:
        boot = f"  {pct} CI, bootstrap [{fs(r.bootstrap_low)}, {fs(r.bootstrap_high)}]"
        boot += f"  (seed {seed})" if seed is not None else ""
    corrected = r.test != "paired t"
    lines = [
        f"{name}, paired over {r.k} replications",
        f"  mean difference    {fs(r.estimate)}  (SE {f(r.se)} = SD of differences "
        f"{f(r.sd)} / sqrt({r.k}))",
    ]
    if corrected:
        lines.append(
            f"  re-drawn splits    corrected SE {f(r.se_corrected)} = sqrt(1/{r.k} + "
            f"{r.test_train_ratio:.3g}) x SD (Nadeau and Bengio 2003: replications "
            "share training data)"
        )
    return "\n".join(
        [
            *lines,
            f"  {pct} CI, {'corrected' if corrected else 't        '} "
            f"[{fs(r.low)}, {fs(r.high)}]",
            boot,
            f"  {'corrected t test ' if corrected else 'paired t test    '}  {test}",
            f"  Var(A-B) = Var A + Var B - 2 Cov = {v(r.var_a)} + {v(r.var_b)} - 2 x {v(r.cov)}"
            f" = {v(r.var_diff)}  (correlation {r.correlation:.2f})",
            f"  pairing: SE {f(r.se)} vs {f(r.se_unpaired)} unpaired; "
            + (
                f"an unpaired design would need {r.variance_ratio:.2g}x the runs"
                if r.sd > 0
                else "pairing removed all the variance of the difference"
            ),
            f"  selected: best A - best B = {fs(r.selected_gap)} (a selected "
            "statistic, not an estimate of the difference)",
            *_design_lines(table),
        ]
    )

@click.command()
@results_file
@metric_option
@by_option
@_pair_options
@click.option("--target-se", type=float, default=None, help="Wanted SE of the mean difference.")
@click.option("--target-halfwidth", type=float, default=None, help="Wanted CI half-width.")
@click.option(
    "--effect",
    type=float,
    default=None,
    help="Mean difference the test should detect (with --power).",
)
@click.option("--power", type=float, default=0.8, show_default=True)
@alpha_option(help="Significance level of the planned two-sided test (with --power).")
@confidence_option
@click.option(
    "--store",
    type=click.Path(dir_okay=False),
    default=None,
    help="A run store to grow: print the command that extends it to the planned size.",
)
@paired_test_options
@bounds_option()
@json_option
def plan(
    results,
    metric,
    by,
    pair_on,
    a,
    b,
    target_se,
    target_halfwidth,
    effect,
    power,
    alpha,
    confidence,
    store,
    repeated,
    test_fraction,
    train_fraction,
    bounds,
    as_json,
):
    """How many paired runs reach a target SE, CI half-width or power (from a pilot).

    The plan is for the test `paired` runs on the same table: with re-drawn
    splits (--test corrected, or a store that declares them) the corrected one.
    """
    import vareval

    table = vareval.plan(
        results,
        metric=metric,
        by=split_columns(by),
        pair_on=split_columns(pair_on),
        a=a,
        b=b,
        target_se=target_se,
        target_halfwidth=target_halfwidth,
        effect=effect,
        power=power,
        alpha=alpha,
        confidence=confidence,
        repeated=repeated,
        test_fraction=test_fraction,
        train_fraction=train_fraction,
        bounds=bounds,
    )
    payload, text = table.to_dict(), render_plan(table)
    payload = {k: {**v, **_design_payload(table)} for k, v in payload.items()}
    if store is not None:
        from vareval.cli.run import grow_command

        (r,) = table.results.values()
        payload["grow"] = grow_command(store, split_columns(pair_on), r.k_required)
        text += "\n" + payload["grow"]["message"]
    emit(as_json, payload, text)


def render_plan(table) -> str:
    """The requirement and the pairs-to-precision curve around it."""
    ((name, r),) = table.results.items()
    if r.target == "se":
        goal = f"SE of the mean difference <= {number(r.target_value)}"
    elif r.target == "halfwidth":
        goal = f"{r.confidence:.0%} CI half-width <= {number(r.target_value)}"
    else:
        test = "corrected resampled t test" if r.test_train_ratio else "paired t test"
        goal = (
            f"power >= {r.power:.2f} to detect a difference of {number(r.target_value)} "
            f"at alpha {r.alpha:g} (two-sided {test})"
        )
    lines = [
        f"{name}: SD of paired differences {number(r.sd_diff)} (from the pilot; itself "
        "uncertain)",
        *(
            [
                f"  corrected SE = sqrt(1/k + {r.test_train_ratio:.3g}) x SD (re-drawn "
                "splits; the same test `paired` runs)"
            ]
            if r.test_train_ratio
            else []
        ),
        f"  {goal}: {r.k_required} pairs (normal approximation: {r.k_normal})",
        f"  {'pairs':>7}{'SE':>10}{'CI half-width':>15}"
        + (f"{'power':>8}" if r.curve_power is not None else ""),
    ]
    show = [i for i, k in enumerate(r.curve_k) if k in _milestones(r.k_required)]
    f = formatter(r.curve_se[show], r.curve_halfwidth[show])
    for i in show:
        row = f"  {r.curve_k[i]:>7}{f(r.curve_se[i]):>10}{f(r.curve_halfwidth[i]):>15}"
        if r.curve_power is not None:
            row += f"{r.curve_power[i]:>8.2f}"
        lines.append(row)
    lines.append(
        "  Halving the SE takes four times the pairs."
        if not r.test_train_ratio
        else "  More pairs cannot take the SE below the floor set by the splits' overlap."
    )
    return "\n".join([*lines, *_design_lines(table)])


def _milestones(k_required: int) -> set[int]:
    """A few readable rows of the curve: doublings from 2 and the requirement."""
    ks = {k_required}
    k = 2
    while k <= 4 * max(k_required, 4):
        ks.add(k)
        k *= 2
    return ks


def render_ranking(table) -> str:
    """The ranking-stability curve: agreement with the full-sample means per k."""
    ((name, r),) = table.results.items()
    lines = [
        f"{name}: share of simulated experiments with k runs per method that rank them as the "
        "full samples' means do",
        f"{'k':>5}{'best of k':>11}{'mean of k':>11}{'median of k':>13}",
    ]
    lines += [
        f"{k:>5}{b:>11.2f}{m:>11.2f}{d:>13.2f}"
        for k, b, m, d in zip(r.ks, r.best_of_k, r.mean_of_k, r.median_of_k, strict=True)
    ]
    return "\n".join(lines)


def demo_section() -> str:
    """Summaries, best-of-k and paired differences of the bundled digits runs, for the demo."""
    import vareval
    from vareval import datasets

    df = datasets.load("digits_runs.csv")
    parts = [
        "== Repeated runs: three classifiers on digits, ten seeds each (digits_runs.csv) ==",
        render_summary(vareval.summarize(df, metric="accuracy", by="method"), "accuracy"),
        "",
        # each seed re-drew the 70/30 split (examples/make_repeated_runs.py)
        render_paired(
            vareval.paired(
                df, metric="accuracy", by="method", pair_on="seed", a="mlp", b="logreg",
                repeated="data-sampling", test_fraction=0.3, rng=0,
            ),
            seed=0,
        ),
        "",
        render_plan(
            vareval.plan(
                df, metric="accuracy", by="method", pair_on="seed", a="mlp", b="logreg",
                target_halfwidth=0.002,
            )
        ),
        "",
        render_best_of_k(
            vareval.best_of_k(df, metric="accuracy", by="method", method="mlp", rng=0), seed=0
        ),
        "",
        render_ranking(
            vareval.ranking_stability(
                df, metric="accuracy", by="method", a="mlp", b="logreg", max_k=8, rng=0
            )
        ),
    ]
    return "\n".join(parts)


COMMANDS = [summarize, best_of_k, paired, plan]
