"""``vareval variance``: where the variance comes from (DECoVaC)."""

from __future__ import annotations

import click

from vareval._format import formatter, number
from vareval.cli._common import (
    confidence_option,
    emit,
    json_option,
    metric_option,
    needs,
    resamples_option,
    results_file,
    seed_option,
    split_columns,
)


def _fmt(x, fmt=number):
    import math

    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return fmt(x)


def _p(p):
    return "<1e-16" if p < 1e-16 else f"{p:.3g}"


def _peq(p):
    return "p < 1e-16" if p < 1e-16 else f"p = {p:.3g}"


def _table(headers, rows, align=None):
    widths = [
        max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h)
        for i, h in enumerate(headers)
    ]
    align = align or ["<"] + [">"] * (len(headers) - 1)
    line = "  ".join(
        f"{h:{a}{w}}" for h, a, w in zip(headers, align, widths, strict=True)
    )
    out = [line]
    for r in rows:
        out.append(
            "  ".join(
                f"{str(c):{a}{w}}" for c, a, w in zip(r, align, widths, strict=True)
            )
        )
    return "\n".join(out)


def _intervals_table(ci, fit) -> str:
    """The components' confidence intervals as a table."""

    def iv(lo, hi, spec):
        if lo != lo:  # NaN: no ICC for the residual
            return "-"
        fmt = spec if callable(spec) else (lambda x: format(x, spec))
        return f"[{fmt(lo)}, {fmt(hi)}]"

    fsd, fvar = formatter(fit.sd), formatter(fit.variance)  # as the estimates are shown

    rows = [
        (
            c,
            iv(ci.sd_low[i], ci.sd_high[i], fsd),
            iv(ci.variance_low[i], ci.variance_high[i], fvar),
            iv(ci.share_low[i], ci.share_high[i], ".1%"),
            iv(ci.icc_low[i], ci.icc_high[i], ".3f"),
        )
        for i, c in enumerate(ci.components)
    ]
    how = (
        "profile likelihood, ML deviance as lme4's confint"
        if ci.method == "profile"
        else f"parametric bootstrap percentiles, {ci.n_resamples:,} refits"
    )
    head = f"{ci.confidence:.0%} confidence intervals ({how})"
    return head + "\n" + _table(["component", "sd", "variance", "share", "icc"], rows)


KR_FROM_REML = (
    "under ML, the kenward-roger rows come from a REML refit of the same model, "
    "as pbkrtest's do; the satterthwaite rows from the ML fit"
)


def render(a, alpha: float = 0.05) -> str:
    """The human-readable report of a VarianceAnalysis."""
    f = a.fit
    crit = "REML criterion" if f.reml else "deviance (ML)"
    lines = [
        f"Linear mixed model for {a.metric!r}: fixed {', '.join(a.fixed) or '(none)'}; "
        f"{'random intercept and slope' if a.slope else 'random intercepts'} "
        f"{', '.join(a.random)}; {f.n_obs} rows; "
        f"{'REML' if f.reml else 'ML'}",
        f"{crit} {f.criterion:.4f}   logLik {f.loglik:.3f}   AIC {f.aic:.2f}   "
        f"BIC {f.bic:.2f}",
    ]
    if a.seed_term:
        lines.append(
            f"note: {a.seed_term} added: the experiments share seeds, so a seed may "
            "favour one experiment (tested below; --no-seed-by-experiment removes it)"
        )
    if not f.converged:
        lines.append(f"WARNING: {f.message}")
    elif f.singular:
        lines.append(f"note: {f.message}")
    lines += ["", "Variance components"]
    fv, fs = formatter(f.variance), formatter(f.sd)
    rows = [
        (
            c,
            lev,
            _fmt(v, fv),
            _fmt(s, fs),
            "-" if sh != sh else f"{sh:.1%}",
            "-" if icc != icc else f"{icc:.3f}",
        )
        for i, (c, lev, v, s, sh, icc) in enumerate(
            zip(
                f.components,
                list(f.n_levels) + [f.n_obs],
                f.variance,
                f.sd,
                f.share,
                f.icc,
                strict=True,
            )
        )
    ]
    lines.append(
        _table(["component", "levels", "variance", "sd", "share", "icc"], rows)
    )
    for g1, g2, r in f.correlations:
        lines.append(f"correlation of {g1} and {g2}: {r:.4f}")
    if a.intervals is not None:
        lines += ["", _intervals_table(a.intervals, a.fit)]
    lines += [
        "",
        "H1/H2: is there variance between levels? (likelihood-ratio test, "
        "refit without the term)",
    ]
    rows = [
        (t.term, f"{t.statistic:.3f}", t.df, _p(t.pvalue), _p(t.pvalue_naive))
        for t in a.lrt
    ]
    head = ["term", "LRT", "df", "p (boundary)", "p (naive chi2_df)"]
    if a.pb_lrt:
        boot = {t.term: t for t in a.pb_lrt}
        rows = [(*r, _p(boot[r[0]].pvalue)) for r in rows]
        n_boot = a.pb_lrt[0].n_resamples
        head.append(f"p (bootstrap, {n_boot:,})")
    lines.append(_table(head, rows))
    for t in a.lrt:
        if t.pvalue != t.pvalue:  # a fit that did not converge gives no test
            lines.append(f"  -> {t.term}: not tested (a fit did not converge).")
            continue
        verdict = (
            "varies significantly" if t.pvalue < alpha else "no significant variation"
        )
        lines.append(
            f"  -> {t.term}: {verdict} between levels "
            f"(SD {number(t.variance**0.5, digits=3)}, {_peq(t.pvalue)})."
        )
    if a.group_lrt:
        lines += ["", "Is the variance the same in every group? (LRT against one common variance)"]
        rows = [(t.term, f"{t.statistic:.3f}", t.df, _p(t.pvalue)) for t in a.group_lrt]
        lines.append(_table(["test", "LRT", "df", "p (chi2_df)"], rows))
    lines += ["", "H3: do the fixed effects differ? (type III F tests)"]
    if a.withheld:
        lines.append(f"  {a.withheld}")
        return "\n".join(lines)
    rows = []
    for method, tests in a.f_tests.items():
        for t in tests:
            rows.append(
                (
                    t.term,
                    method,
                    number(t.statistic),
                    f"{t.ndf:g}",
                    f"{t.ddf:.2f}",
                    _p(t.pvalue),
                )
            )
    lines.append(_table(["term", "ddf method", "F", "ndf", "ddf", "p"], rows))
    if not f.reml:
        lines.append(f"  ({KR_FROM_REML})")
    kr = a.f_tests["kenward-roger"]
    # Kenward-Roger is undefined (0/0) at some zero variances: Satterthwaite then
    method = "kenward-roger" if all(t.ddf == t.ddf for t in kr) else "satterthwaite"
    for t in a.f_tests[method]:
        sig = t.pvalue < alpha
        if t.term == a.slope:
            verdict = "the mean slope " + ("differs" if sig else "does not differ")
            verdict += " significantly from 0" if sig else " from 0"
        else:
            verdict = "levels " + ("differ significantly" if sig else "do not differ")
        lines.append(
            f"  -> {t.term}: {verdict} "
            f"({method.title()} F({t.ndf:g}, {t.ddf:.1f}) = "
            f"{number(t.statistic, digits=3)}, {_peq(t.pvalue)})."
        )
    p = a.pairs
    if len(p.labels):
        lines += [
            "",
            f"Pairwise differences (Satterthwaite df, "
            f"{p.confidence:.0%} CI, Holm-adjusted p)",
        ]
        f = formatter(p.estimate, p.ci_low, p.ci_high, signed=True)
        fse = formatter(p.se, digits=3)
        rows = [
            (
                lab,
                f(e),
                fse(s),
                f"{d:.1f}",
                f"[{f(lo)}, {f(hi)}]",
                _p(pv),
                _p(ph),
            )
            for lab, e, s, d, lo, hi, pv, ph in zip(
                p.labels,
                p.estimate,
                p.se,
                p.df,
                p.ci_low,
                p.ci_high,
                p.pvalue,
                p.pvalue_holm,
                strict=True,
            )
        ]
        lines.append(
            _table(["difference", "estimate", "se", "df", "CI", "p", "p (Holm)"], rows)
        )
        n_sig = int((p.pvalue_holm < alpha).sum())
        lines.append(
            f"  -> {n_sig} of {len(p.labels)} pairs differ at the "
            f"{alpha:g} level after Holm's correction."
        )
    return "\n".join(lines)


@click.command("variance")
@results_file
@metric_option
@click.option(
    "--fixed",
    default="experiment",
    show_default=True,
    help="Fixed factor column(s), comma-separated (e.g. model,optimizer); "
    "'' for none.",
)
@click.option(
    "--random",
    "random_",
    default="seed,config",
    show_default=True,
    help="Grouping column(s) with a random intercept, comma-separated.",
)
@click.option(
    "--nested",
    multiple=True,
    help="inner:outer, e.g. config:seed when each seed samples its own "
    "configurations under repeated labels; repeat it (or separate by commas) "
    "to chain: --nested config:seed --nested rerun:config is lme4's "
    "(1|seed/config/rerun).",
)
@click.option("--ml", is_flag=True, help="Fit by maximum likelihood instead of REML.")
@click.option(
    "--no-interaction",
    is_flag=True,
    help="Main effects only for several fixed factors.",
)
@click.option(
    "--by-group",
    default=None,
    help="A variance per level of this column for every random factor "
    "(e.g. model), or for one: config=model. Adds an LRT against one common "
    "variance.",
)
@click.option(
    "--slope",
    default=None,
    help="Numeric column whose slope varies by the (single) random factor, "
    "e.g. epoch; it also enters the fixed effects.",
)
@click.option(
    "--uncorrelated",
    is_flag=True,
    help="With --slope: fix the intercept-slope correlation at 0.",
)
@click.option(
    "--seed-by-experiment/--no-seed-by-experiment",
    default=True,
    show_default=True,
    help="Where experiments share seeds, fit the seed x experiment random "
    "intercept (tested by its LRT, kept for the pairwise differences).",
)
@confidence_option
@click.option(
    "--pairs-by",
    default=None,
    help="Compare the levels of this fixed factor (averaged over the "
    "others) instead of all experiments.",
)
@click.option(
    "--intervals",
    type=click.Choice(["none", "profile", "bootstrap"]),
    default="none",
    show_default=True,
    help="Confidence intervals (at --confidence) for each component's SD, "
    "variance, share and ICC: profile likelihood (as lme4's confint) or "
    "parametric bootstrap percentiles.",
)
@click.option(
    "--bootstrap-lrt",
    is_flag=True,
    help="Also test each random effect by a parametric bootstrap LRT "
    "(pbkrtest's PBmodcomp): use it when a factor has few levels.",
)
@resamples_option(1000, "Simulated responses for the bootstrap intervals and LRT.")
@seed_option(help="Seed of the parametric bootstrap (printed with its output).")
@json_option
def variance(
    results,
    metric,
    fixed,
    random_,
    nested,
    ml,
    no_interaction,
    by_group,
    slope,
    uncorrelated,
    seed_by_experiment,
    confidence,
    pairs_by,
    intervals,
    bootstrap_lrt,
    resamples,
    seed,
    as_json,
):
    """Where the variance comes from: mixed model, LRTs, F tests, pairwise (DECoVaC)."""
    import warnings

    needs("--slope COLUMN", slope, "uncorrelated")

    from vareval.data.variance import variance as analyse
    from vareval.errors import VarevalWarning

    table = results
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VarevalWarning)
        a = analyse(
            table,
            metric=metric,
            fixed=split_columns(fixed) if fixed.strip() else [],
            random=split_columns(random_),
            nested=[x for item in nested for x in split_columns(item)] or None,
            reml=not ml,
            interaction=not no_interaction,
            confidence=confidence,
            pairs_by=pairs_by,
            by_group=split_columns(by_group) if by_group else None,
            slope=slope,
            correlated=not uncorrelated,
            intervals=None if intervals == "none" else intervals,
            n_resamples=resamples,
            bootstrap_lrt=bootstrap_lrt,
            rng=seed,
            seed_by_experiment=seed_by_experiment,
            progress=None,
        )
    text, note = render(a), a.design.statement()
    payload = a.to_dict() if as_json else {}  # its tables only when printed
    if intervals == "bootstrap" or bootstrap_lrt:
        payload["seed"] = seed
        text += f"\n(parametric bootstrap: {resamples:,} simulated responses, seed {seed})"
    payload["design"] = note
    text = f"{note}\n{text}"
    emit(as_json, payload, text)
    shown = a.fit.message  # the fit's warnings are printed in the report
    for w in caught:
        message = str(w.message)
        if message.rstrip(".") not in shown:
            click.echo(f"warning: {message}", err=True)


def demo_section() -> str:
    """The mixed-model part of ``vareval demo`` on the bundled simulated data."""
    import warnings

    from vareval import datasets
    from vareval.data.variance import variance as analyse
    from vareval.errors import VarevalWarning

    df = datasets.load("decovac_sim.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        a = analyse(
            df,
            metric="accuracy",
            fixed=["model", "optimizer"],
            random=["seed", "config"],
        )
    head = (
        "== Where the variance comes from (DECoVaC) ==\n"
        "Bundled SIMULATED data (decovac_sim.csv): 6 experiments x 10 seeds x 5 "
        "configurations per seed x 3 reruns, with known SDs seed 0.010, "
        "config 0.020, residual 0.008.\n"
        "$ vareval variance decovac_sim.csv --metric accuracy "
        "--fixed model,optimizer --random seed,config\n"
    )
    return head + render(a)


COMMANDS = [variance]
