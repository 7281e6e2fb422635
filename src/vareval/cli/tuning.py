"""The ``vareval tuning-curve`` command and its part of ``vareval demo``."""

from __future__ import annotations

import click

from vareval._format import formatter
from vareval.cli._common import (
    aligned,
    by_option,
    check_output,
    confidence_option,
    emit,
    json_option,
    lower_is_better_option,
    metric_option,
    parse_ints,
    results_file,
    shared_option,
    split_columns,
    with_design,
)
from vareval.cli._paths import output_path, write_figure
from vareval.errors import ArgumentError

_METHODS = ("ld-hd", "ld-et", "ks", "dkw", "ld_highest_density", "ld_equal_tailed")


def _parse_bounds(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise ArgumentError(
            f"--bounds must be two numbers 'A,B' (e.g. 0,1); got {text!r}."
        ) from None
    return a, b


def render(result, projection=None) -> str:
    """The human-readable table of curves, bands and verdicts."""
    from vareval.stats.tuning.bands import METHOD_NAMES

    direction = "higher" if result.higher_is_better else "lower"
    what = "median" if result.q == 0.5 else f"{result.q:g}-quantile"
    a, b = result.bounds
    lines = [
        f"Tuning curves of {result.metric!r} ({direction} is better), "
        f"bounds [{a:g}, {b:g}]:",
        f"  {what} best score after k search iterations, with a "
        f"{result.confidence:.0%} simultaneous {result.method} band "
        f"({METHOD_NAMES[result.method]}; it holds for all k at once);",
        "  U, V: expected best of k (Tang et al. 2020 unbiased U-statistic; "
        "Dodge et al. 2019 V-statistic).",
        "",
    ]
    header = ["k"]
    for name in result.methods:
        n = result.bands[name].n
        header += [f"{name} (n={n}) {what}", "band", "U", "V"]
    pair = None
    if len(result.methods) == 2:
        pair = next(iter(result.comparisons))
        header.append("verdict")
    fmt = formatter(*(result.bands[n].estimate for n in result.methods))
    rows = []
    for j, k in enumerate(result.k):
        row = [f"{k:g}"]
        for name in result.methods:
            band = result.bands[name]
            u = result.u_statistic[name][j]
            row += [
                fmt(band.estimate[j]),
                f"[{fmt(band.lower[j])}, {fmt(band.upper[j])}]",
                fmt(u) if u == u else "-",
                fmt(result.v_statistic[name][j]),
            ]
        if pair is not None:
            row.append(result.named_verdicts(*pair)[j])
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt_row = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    lines.append(fmt_row(header))
    lines.extend(fmt_row(r) for r in rows)
    for x, y in result.comparisons:
        if pair is not None:
            break
        named = result.named_verdicts(x, y)
        settled = [f"k={k:g}: {v}" for k, v in zip(result.k, named, strict=True)]
        lines.append(f"{x} vs {y}: " + "; ".join(settled))
    coverage = ", ".join(
        f"{name} {result.cdf_bands[name].coverage:.6f}" for name in result.methods
    )
    lines.append("")
    lines.append(
        f"exact simultaneous coverage of each band (continuous scores): {coverage}"
    )
    m = len(result.methods)
    if m >= 2:
        every = "both bands hold" if m == 2 else f"all {m} bands hold"
        lines.append(
            f"{every} together, and so every verdict, with probability >= "
            f"{result.joint_confidence:.4f} = {result.confidence:g}^{m} "
            "(independent searches)."
        )
    if projection is not None:
        lines.append("")
        lines.append(_render_projection(projection, *result.methods))
    return "\n".join(lines)


def _render_projection(p, a: str, b: str) -> str:
    if p.leader is None:
        return (
            f"projection at k={p.k:g}: the two curves' estimates are equal; "
            "nothing to separate."
        )
    leader = a if p.leader == "A" else b
    if p.iterations is None:
        return (
            f"PROJECTION (not a guarantee) at k={p.k:g}: {leader}'s lead would not "
            "be separated by the bands within the iterations tried; the curves may "
            "be too close."
        )
    return (
        f"PROJECTION (not a guarantee) at k={p.k:g}: if the observed score "
        f"distributions are the truth, about {p.iterations} iterations per model "
        f"({p.more_a} more for {a}, {p.more_b} more for {b}) would typically let "
        f"the bands separate, favouring {leader}."
    )


@click.command("tuning-curve")
@results_file
@metric_option
@by_option
@click.option(
    "--bounds",
    required=True,
    help="Bounds of the score 'A,B', e.g. 0,1 for accuracy or F1.",
)
@lower_is_better_option
@confidence_option(help="Simultaneous confidence of each band.")
@shared_option(
    "--band", "method", type=click.Choice(_METHODS), default="ld-hd", show_default=True,
    help="CDF band: Learned-Miller-DeStefano highest-density / equal-tailed, KS, DKW "
    "(opda's names ld_highest_density, ld_equal_tailed accepted).",
)  # fmt: skip
@click.option("--ks", "ks_text", help="Search iterations to show, e.g. 1,2,5,10.")
@click.option(
    "--q", type=float, default=0.5, show_default=True, help="Quantile of best-of-k."
)
@click.option(
    "--project", "project_k", type=float,
    help="Two methods only: project how many iterations would separate them at this k.",
)  # fmt: skip
@click.option(
    "--plot", "plot_file", type=output_path(), help="Save a plot."
)
@json_option
def tuning_curve(
    results, metric, by, bounds, lower_is_better, confidence, method, ks_text, q, project_k,
    plot_file, as_json,
):  # fmt: skip
    """Tuning curves with exact simultaneous confidence bands, and per-k verdicts.

    RESULTS has one row per random-search iteration. For each method the
    command prints the median best score after k iterations with a band that
    holds for every k at once, the U and V estimates of the expected best of
    k, and (for two methods) which one is better at each k or 'need more
    data'.
    """
    import warnings

    from vareval.data.tuning import tuning_curve as tuning_curve_df
    from vareval.errors import VarevalWarning
    from vareval.stats import project_iterations

    check_output(plot_file, "--plot", plot=True)
    a, b = _parse_bounds(bounds)
    ks = parse_ints(ks_text, "--ks") if ks_text else None
    df = results
    columns = split_columns(by)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VarevalWarning)
        result = tuning_curve_df(
            df, metric=metric, by=columns, bounds=(a, b), confidence=confidence,
            method=method, ks=ks, q=q, higher_is_better=not lower_is_better, progress=None,
        )  # fmt: skip
    for w in caught:
        click.echo(f"warning: {w.message}", err=True)
    projection = None
    if project_k is not None:
        if len(result.methods) != 2:
            raise ArgumentError(
                f"--project needs exactly two methods; found {len(result.methods)}."
            )
        from vareval.data import groups
        from vareval.data.design import analysed_rows

        scores = groups(analysed_rows(df, metric, columns), metric, columns)
        xa, xb = (scores[m] for m in result.methods)
        projection = project_iterations(
            xa, xb, project_k, a=a, b=b, confidence=confidence, method=method, q=q,
            higher_is_better=not lower_is_better,
        )  # fmt: skip
    if plot_file:
        from vareval.plots.tuning import tuning_plot

        write_figure(tuning_plot(result), plot_file, "--plot")
    payload = result.to_dict()
    if projection is not None:
        payload["projection"] = projection.to_dict()
    text = render(result, projection)
    if plot_file:
        text += f"\nplot saved to {plot_file}"
    emit(as_json, *with_design(df, payload, text, by=columns, metric=metric))


def _hedwig():
    """The bundled search scores of the LSTM and the MLP, in file order."""
    from vareval import datasets

    df = datasets.load("hedwig.tsv")
    f1 = df.groupby("model_name", sort=False)["f1"]
    return f1.get_group("reg_lstm").to_numpy(float), f1.get_group("mlp").to_numpy(float)


def demo_section() -> str:
    """Tuning curves on the bundled hedwig data: the optimal-design-analysis case study."""
    import warnings

    import numpy as np
    import pandas as pd

    from vareval.data.tuning import tuning_curve as tuning_curve_df
    from vareval.errors import VarevalWarning

    lstm_all, mlp_all = _hedwig()
    gen = np.random.Generator(np.random.PCG64(0))
    lstm = gen.choice(lstm_all, size=25, replace=False)
    mlp = gen.choice(mlp_all, size=25, replace=False)
    df = pd.DataFrame(
        {"model": ["lstm"] * 25 + ["mlp"] * 25, "f1": np.concatenate([lstm, mlp])}
    )
    ks = [1, 2, 3, 5, 10, 14, 20, 25]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)  # the MLP's F1 has ties
        result = tuning_curve_df(
            df, metric="f1", by="model", bounds=(0, 1), confidence=0.5, ks=ks
        )
    full = np.arange(1, 26)
    from vareval.stats import EmpiricalDistribution

    el, em = EmpiricalDistribution(lstm, a=0, b=1), EmpiricalDistribution(mlp, a=0, b=1)
    v_from = int(full[el.v_statistic(full) > em.v_statistic(full)].min())
    u_from = int(full[el.u_statistic(full) > em.u_statistic(full)].min())
    head = (
        "== Tuning curves: hedwig.tsv, 25 of the LSTM's and 25 of the MLP's "
        "search iterations (PCG64(0)) ==\n"
        "Point estimates disagree: the V-statistic puts the LSTM ahead from "
        f"k = {v_from}, the U-statistic from k = {u_from}.\n"
        "50% simultaneous highest-density bands say how much the sample can settle:\n"
    )
    return head + render(result)


COMMANDS = [tuning_curve]


_HOW = {
    "parametric": "parametric-bootstrap interval (basic; samples drawn from the fit; "
    "0.88-0.97 coverage measured for an exactly right model, docs/tuning.md)",
    "nonparametric": "percentile-bootstrap interval (resampled scores; under-covers near "
    "the upper end, docs/tuning.md)",
}


def render_parametric(curves: dict, metric: str) -> str:
    """Per method: the fitted quadratic, its fit check, and the curve, extrapolation marked."""
    from vareval._format import formatter

    first = next(iter(curves.values()))
    lines = [
        f"Parametric tuning curves of {metric!r}: a {first.family.replace('-', ' ')} "
        "distribution (opda's) fitted by "
        f"maximum spacing to the {'upper' if first.higher_is_better else 'lower'} half of the "
        "scores;",
        f"  median best after k iterations with a {first.confidence:.0%} {_HOW[first.bootstrap]} "
        f"({first.n_resamples} refits; the fit's uncertainty given the model, not doubt about "
        "it). Rows marked EXTRAPOLATED (k > n) are a MODEL-BASED EXTRAPOLATION: only as good "
        "as the quadratic form.",
        "",
    ]
    for name, cur in curves.items():
        fmt = formatter(cur.estimate, cur.lower, cur.upper)
        gof = cur.goodness_of_fit
        lines.append(
            f"{name} (n={cur.n}): Q(a={cur.a:.6g}, b={cur.b:.6g}, c={cur.c}, "
            + (f"o={cur.o:.3g}, " if cur.family == "noisy-quadratic" else "")
            + f"{'convex' if cur.convex else 'concave'}); {gof.message}."
        )
        header = ["k", "median", "interval", "average", ""]
        rows = [
            [f"{k:g}", fmt(cur.estimate[j]), f"[{fmt(cur.lower[j])}, {fmt(cur.upper[j])}]",
             fmt(cur.average[j]), "EXTRAPOLATED" if cur.extrapolated[j] else ""]
            for j, k in enumerate(cur.k)
        ]  # fmt: skip
        lines.extend(aligned(header, rows))
        lines.append("")
    return "\n".join(lines).rstrip()


@click.command("parametric-curve")
@results_file
@metric_option
@by_option
@lower_is_better_option
@confidence_option(help="Level of the bootstrap intervals.")
@click.option("--ks", "ks_text", required=True, help="Search iterations, e.g. 1,10,100,1000.")
@click.option("--resamples", "n_resamples", type=int, default=100, show_default=True,
              help="Bootstrap refits per method.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--bounds", default=None,
              help="Known bounds of the score 'A,B' (e.g. 0,1): the fit keeps a >= A, b <= B.")
@click.option("--bootstrap", type=click.Choice(["parametric", "nonparametric"]),
              default="parametric", show_default=True,
              help="Refit samples drawn from the fit (basic interval), or resampled scores "
              "(percentile interval).")  # fmt: skip
@click.option("--family", type=click.Choice(["quadratic", "noisy-quadratic"]), default="quadratic",
              show_default=True,
              help="The quadratic distribution, or the noisy one (plus normal noise; slower fit).")
@click.option(
    "--plot", "plot_file", type=output_path(), help="Save a plot (one method)."
)
@json_option
def parametric_curve(results, metric, by, lower_is_better, confidence, ks_text, n_resamples,
                     seed, bounds, bootstrap, family, plot_file, as_json):  # fmt: skip
    """Fit a quadratic distribution and extrapolate the tuning curve beyond the data.

    Per method: opda's quadratic distribution fitted by maximum spacing to the
    tail of the scores, a check that it fits (the fitted CDF inside the data's
    simultaneous band), and its median tuning curve with a bootstrap interval.
    Any k beyond the iterations run is a model-based extrapolation and says so.
    """
    import numpy as np

    from vareval.data import groups
    from vareval.data.design import analysed_rows
    from vareval.stats import parametric_tuning_curve

    check_output(plot_file, "--plot", plot=True)
    ks = parse_ints(ks_text, "--ks")
    constraints = None
    if bounds:
        lo, hi = _parse_bounds(bounds)
        constraints = {"a": (lo, np.inf), "b": (-np.inf, hi)}
    scores = groups(
        analysed_rows(results, metric, split_columns(by)), metric, split_columns(by),
        min_runs=3,
    )
    seeds = np.random.SeedSequence(seed).spawn(len(scores))
    curves = {
        name: parametric_tuning_curve(
            ys, ks, higher_is_better=not lower_is_better, confidence=confidence,
            n_resamples=n_resamples, rng=np.random.default_rng(s), constraints=constraints,
            family=family, bootstrap=bootstrap,
        )
        for (name, ys), s in zip(scores.items(), seeds, strict=True)
    }  # fmt: skip
    if plot_file:
        from vareval.plots.tuning import parametric_plot

        write_figure(parametric_plot(next(iter(curves.values())), metric), plot_file, "--plot")
    payload = {
        "metric": metric,
        "model": f"{family.replace('-', ' ')} distribution, maximum spacing fit "
        "(opda's parametric module)",
        "extrapolation": "k > n is a model-based extrapolation",
        "curves": {name: cur.to_dict() for name, cur in curves.items()},
    }
    text = render_parametric(curves, metric)
    if plot_file:
        text += f"\nplot saved to {plot_file}"
    emit(as_json, payload, text)


COMMANDS.append(parametric_curve)
