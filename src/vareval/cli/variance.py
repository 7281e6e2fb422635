"""``vareval variance``: where the variance comes from (DECoVaC, job 7)."""

from __future__ import annotations

import click

from vareval.cli._common import (
    emit,
    json_option,
    metric_option,
    results_file,
    split_columns,
)


def _fmt(x, spec=".4g"):
    import math

    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


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


def render(a, alpha: float = 0.05) -> str:
    """The human-readable report of a VarianceAnalysis."""
    f = a.fit
    crit = "REML criterion" if f.reml else "deviance (ML)"
    lines = [
        f"Linear mixed model for {a.metric!r}: fixed {', '.join(a.fixed) or '(none)'}; "
        f"random intercepts {', '.join(a.random)}; {f.n_obs} rows; "
        f"{'REML' if f.reml else 'ML'}",
        f"{crit} {f.criterion:.4f}   logLik {f.loglik:.3f}   AIC {f.aic:.2f}   "
        f"BIC {f.bic:.2f}",
    ]
    if f.singular or not f.converged:
        lines.append(f"WARNING: {f.message}")
    lines += ["", "Variance components"]
    rows = [
        (
            c,
            lev,
            _fmt(v, ".4g"),
            _fmt(s, ".4g"),
            f"{sh:.1%}",
            "-" if i == len(f.components) - 1 else f"{icc:.3f}",
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
    lines += [
        "",
        "H1/H2: is there variance between levels? (likelihood-ratio test, "
        "refit without the term)",
    ]
    rows = [
        (t.term, f"{t.statistic:.3f}", t.df, _p(t.pvalue), _p(t.pvalue_naive))
        for t in a.lrt
    ]
    lines.append(
        _table(["term", "LRT", "df", "p (boundary)", "p (naive chi2_1)"], rows)
    )
    for t in a.lrt:
        verdict = (
            "varies significantly" if t.pvalue < alpha else "no significant variation"
        )
        lines.append(
            f"  -> {t.term}: {verdict} between levels "
            f"(SD {t.variance**0.5:.3g}, {_peq(t.pvalue)})."
        )
    lines += ["", "H3: do the fixed effects differ? (type III F tests)"]
    rows = []
    for method, tests in a.f_tests.items():
        for t in tests:
            rows.append(
                (
                    t.term,
                    method,
                    f"{t.statistic:.4g}",
                    f"{t.ndf:g}",
                    f"{t.ddf:.2f}",
                    _p(t.pvalue),
                )
            )
    lines.append(_table(["term", "ddf method", "F", "ndf", "ddf", "p"], rows))
    method = "kenward-roger" if "kenward-roger" in a.f_tests else "satterthwaite"
    if method == "satterthwaite":
        lines.append(
            "  (Kenward-Roger skipped: too many random-effect levels for its "
            "dense matrices.)"
        )
    for t in a.f_tests[method]:
        verdict = "differ significantly" if t.pvalue < alpha else "do not differ"
        lines.append(
            f"  -> {t.term}: levels {verdict} "
            f"({method.title()} F({t.ndf:g}, {t.ddf:.1f}) = "
            f"{t.statistic:.3g}, {_peq(t.pvalue)})."
        )
    p = a.pairs
    if len(p.labels):
        lines += [
            "",
            f"Pairwise differences (Satterthwaite df, "
            f"{p.confidence:.0%} CI, Holm-adjusted p)",
        ]
        rows = [
            (
                lab,
                f"{e:+.4g}",
                f"{s:.3g}",
                f"{d:.1f}",
                f"[{lo:+.4g}, {hi:+.4g}]",
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
    help="Fixed factor column(s), comma-separated (e.g. model,optimizer).",
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
    default=None,
    help="inner:outer, e.g. config:seed when each seed samples its own "
    "configurations under repeated labels.",
)
@click.option("--ml", is_flag=True, help="Fit by maximum likelihood instead of REML.")
@click.option(
    "--no-interaction",
    is_flag=True,
    help="Main effects only for several fixed factors.",
)
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option(
    "--pairs-by",
    default=None,
    help="Compare the levels of this fixed factor (averaged over the "
    "others) instead of all experiments.",
)
@json_option
def variance(
    results,
    metric,
    fixed,
    random_,
    nested,
    ml,
    no_interaction,
    confidence,
    pairs_by,
    as_json,
):
    """Where the variance comes from: mixed model, LRTs, F tests, pairwise (DECoVaC)."""
    import warnings

    from vareval.data import read_table
    from vareval.data.variance import variance as analyse
    from vareval.errors import VarevalWarning

    table = read_table(results)
    note = None
    if nested is None and "config" in split_columns(random_):
        nested, note = _nest_in_spaces(table.attrs.get("spec") or {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)  # reported in the output
        a = analyse(
            table,
            metric=metric,
            fixed=split_columns(fixed),
            random=split_columns(random_),
            nested=nested,
            reml=not ml,
            interaction=not no_interaction,
            confidence=confidence,
            pairs_by=pairs_by,
        )
    payload, text = a.to_dict(), render(a)
    if note:
        payload["note"] = note
        text = f"note: {note}\n{text}"
    emit(as_json, payload, text)


def _nest_in_spaces(spec: dict):
    """``config:<factor>`` when a store's experiments have their own search spaces.

    A configuration label (``s0_c1``) then names different hyper-parameters in
    each level of the factor, so the configuration effect is nested in it.
    """
    factors = list(spec.get("level_spaces") or {})
    if not factors:
        return None, None
    outer = factors[0] if len(factors) == 1 else "experiment"
    return f"config:{outer}", (
        f"configurations nested in {outer}: the levels of "
        f"{', '.join(factors)} have their own search spaces ([space.{factors[0]}.*]), "
        "so a configuration label means different settings in each."
    )


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
