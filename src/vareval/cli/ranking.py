"""Commands across tasks and data sets: aso, rank."""

from __future__ import annotations

import click

from vareval.cli._common import (
    alpha_option,
    by_option,
    confidence_option,
    emit,
    json_option,
    lower_is_better_option,
    metric_option,
    pair_on_option,
    resamples_option,
    results_file,
    seed_option,
)
from vareval.cli._paths import output_path


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.1e}" if p >= 1e-10 else "<1e-10"


def _columns(text: str | None):
    from vareval.cli._common import split_columns

    return None if text is None else split_columns(text)


@click.command()
@results_file
@metric_option
@by_option
@click.option("--task", default=None, help="Column(s) naming the task; one ASO family over all.")
@pair_on_option(help="Column(s) matching runs (seed): paired effect sizes (d_z).")
@confidence_option
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "none"]),
    default="holm",
    show_default=True,
    help="Family-wise adjustment over every ordered pair (and task).",
)
@click.option(
    "--threshold",
    type=float,
    default=0.2,
    show_default=True,
    help="Bound on epsilon_min (deepsig's 0.5 is anti-conservative, see docs).",
)
@resamples_option(1000, "Bootstrap resamples.")
@lower_is_better_option
@seed_option()
@json_option
def aso(
    results,
    metric,
    by,
    task,
    pair_on,
    confidence,
    correction,
    threshold,
    resamples,
    lower_is_better,
    seed,
    as_json,
):
    """Almost stochastic order and effect sizes between every pair of methods."""
    import vareval

    df = results
    roles = dict(task=_columns(task), pair_on=_columns(pair_on))
    order = vareval.aso(
        df,
        metric=metric,
        by=_columns(by),
        **roles,
        confidence=confidence,
        correction=correction,
        n_resamples=resamples,
        threshold=threshold,
        higher_is_better=not lower_is_better,
        rng=seed,
    )
    effects = vareval.effect_sizes(
        df,
        metric=metric,
        by=_columns(by),
        **roles,
        confidence=confidence,
        higher_is_better=not lower_is_better,
    )
    payload = {
        "aso": order.to_dict(),
        "effect_sizes": effects.to_dict(),
        "seed": seed,
    }
    emit(as_json, payload, render_aso(order, effects, metric, seed))


def render_aso(order, effects, metric: str, seed: int) -> str:
    """Pairs with epsilon_min both ways and a verdict, then the effect sizes."""
    first = next(iter(order.results.values()))
    n_claims = sum(len(r.names) * (len(r.names) - 1) for r in order.results.values())
    adjust = (
        "unadjusted"
        if first.correction == "none"
        else f"{first.correction.capitalize()} over {n_claims} ordered claims"
    )
    lines = [
        f"almost stochastic order of {metric}, {first.n_resamples:,} bootstrap resamples, "
        f"seed {seed}; {adjust}, family level {first.confidence:.0%}",
    ]
    rows = []
    for task, r in order.results.items():
        k = len(r.names)
        for i in range(k):
            for j in range(i + 1, k):
                a, b = r.names[i], r.names[j]
                verdict = (
                    f"{a} better"
                    if r.better[i, j]
                    else f"{b} better"
                    if r.better[j, i]
                    else "no order"
                )
                rows.append(
                    [
                        task,
                        a,
                        b,
                        f"{r.epsilon_min[i, j]:.3f}",
                        f"{r.epsilon_min[j, i]:.3f}",
                        f"{r.violation_ratio[i, j]:.3f}",
                        _p(min(r.pvalue_adjusted[i, j], r.pvalue_adjusted[j, i])),
                        verdict,
                    ]
                )
    header = ["task", "A", "B", "eps(A>B)", "eps(B>A)", "violation", "p adj", "verdict"]
    if all(row[0] == "" for row in rows):
        header, rows = header[1:], [row[1:] for row in rows]
    lines.append(_table(header, rows))
    lines.append(
        f"eps(A>B): upper {first.adjusted_confidence:.4g} bound of the violation ratio of A "
        f"over B; A is better when the adjusted p < {1 - first.confidence:.2g} "
        f"(epsilon_min < {first.threshold:g} under Bonferroni)."
    )
    frame = effects.to_frame().reset_index()
    if frame.empty:
        return "\n".join(lines)
    conf = next(iter(effects.results.values())).confidence
    lines += ["", f"effect sizes of A over B ({conf:.0%} intervals; positive: A better)"]
    keys = [c for c in ("task", "method", "versus") if c in frame]
    names = list(dict.fromkeys(frame["effect"]))
    rows = []
    for key, part in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        cells = {
            e: f"{v:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            for e, v, lo, hi in zip(
                part["effect"], part["estimate"], part["ci_low"], part["ci_high"], strict=True
            )
        }
        rows.append([*key, *(cells.get(e, "") for e in names)])
    head = ["task" if k == "task" else "A" if k == "method" else "B" for k in keys]
    lines.append(_table([*head, *names], rows))
    return "\n".join(lines)


def _table(header, rows) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    )


@click.command()
@results_file
@metric_option
@by_option
@click.option("--task", required=True, help="Column(s) naming the task (data set).")
@pair_on_option(help="Column(s) whose keys must match in every cell.")
@alpha_option(help="Significance level of the Friedman, Nemenyi and Wilcoxon-Holm tests.")
@click.option(
    "--rope",
    type=float,
    default=None,
    help="Half-width of practical equivalence: adds the Bayesian signed-rank test per pair.",
)
@resamples_option(50_000, "Posterior samples of the Bayesian signed-rank test.")
@click.option(
    "--plot",
    type=output_path(),
    default=None,
    help="Write the CD diagram (PNG, SVG or PDF).",
)
@lower_is_better_option
@seed_option()
@json_option
def rank(
    results,
    metric,
    by,
    task,
    pair_on,
    alpha,
    rope,
    resamples,
    plot,
    lower_is_better,
    seed,
    as_json,
):
    """Friedman, Nemenyi critical difference, Wilcoxon-Holm and Bayesian signed rank."""
    import vareval

    table = vareval.rank(
        results,
        metric=metric,
        by=_columns(by),
        task=_columns(task),
        pair_on=_columns(pair_on),
        alpha=alpha,
        higher_is_better=not lower_is_better,
        rope=rope,
        n_resamples=resamples,
        rng=seed,
        progress=None,
    )
    if plot:
        _save(table["ranking"].plot(), plot)
    emit(as_json, {**table.to_dict(), "seed": seed}, render_rank(table, seed))


def _save(fig, path: str) -> None:
    from vareval.cli._paths import write_figure

    write_figure(fig, path, "--plot")


def render_rank(table, seed: int) -> str:
    """The omnibus tests, mean ranks with CD groups, and the pairwise table."""
    r = table["ranking"]
    lines = [table.title, *r.omnibus_lines(_p)]
    lines += [
        f"mean rank (1 = best); Nemenyi critical difference {r.critical_difference:.3f} "
        f"at alpha {r.alpha:g}:",
    ]
    lines += [f"  {r.mean_ranks[i]:6.3f}  {r.names[i]}" for i in r.order]
    groups = ["{" + ", ".join(r.names[i] for i in c) + "}" for c in r.cliques]
    lines.append("not separated by Nemenyi: " + (", ".join(groups) if groups else "none"))
    frame = table.to_frame().reset_index()
    bayes = "p_rope" in frame
    header = ["A", "B", "rank diff", "Nemenyi p", "Wilcoxon p", "Holm p"]
    if bayes:
        header += ["P(A better)", "P(rope)", "P(B better)"]
    rows = []
    for row in frame.itertuples(index=False):
        cells = [
            row.method,
            row.versus,
            f"{row.rank_difference:+.3f}",
            _p(row.nemenyi_pvalue),
            _p(row.wilcoxon_pvalue),
            _p(row.wilcoxon_pvalue_holm),
        ]
        if bayes:
            cells += [
                f"{row.p_method_better:.3f}",
                f"{row.p_rope:.3f}",
                f"{row.p_versus_better:.3f}",
            ]
        rows.append(cells)
    lines += ["", _table(header, rows)]
    note = "rank diff = mean rank of B - mean rank of A (positive: A ranked better)."
    if bayes:
        b = next(v for k, v in table.results.items() if k != "ranking")
        note += (
            f" Bayesian signed rank: rope {b.rope:g}, {b.n_resamples:,} posterior samples, seed "
            f"{seed}; P = share of samples in which the region is the most probable (baycomp)."
        )
    lines.append(note)
    return "\n".join(lines)


COMMANDS = [aso, rank]
