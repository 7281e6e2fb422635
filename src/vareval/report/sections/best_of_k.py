"""Section: the best-of-k illusion on the user's own runs."""

from __future__ import annotations

import numpy as np

from vareval.report.sections._base import (
    Figure,
    Paragraph,
    ReportData,
    Section,
    Table,
    num,
    optional,
    pct,
)

KS = (1, 3, 5, 10)
MAX_METHODS = 4  # the illusion is a property of one distribution; a few suffice


def _chosen(data: ReportData) -> list[str]:
    """The baseline first, then the methods with the best means, up to MAX_METHODS."""
    names = list(data.groups)
    baseline = data.baseline if data.baseline is not None else names[0]
    means = {n: float(np.mean(x)) for n, x in data.groups.items()}
    order = sorted(means, key=means.get, reverse=data.higher_is_better)
    return ([baseline] + [n for n in order if n != baseline])[:MAX_METHODS]


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    best_of_k = optional("vareval.stats", "best_of_k")
    if best_of_k is None:
        return None
    from vareval.errors import VarevalError
    from vareval.plots.best_of_k import best_of_k_plot

    results, failed = {}, []
    chosen = _chosen(data)
    # independent streams: one per method, one more for the ranking simulation
    streams = np.random.SeedSequence(data.seed).spawn(len(chosen) + 1)
    for name, stream in zip(chosen, streams, strict=False):
        try:
            results[name] = best_of_k(
                data.groups[name],
                ks=KS,
                n_resamples=data.best_of_k_resamples,
                higher_is_better=data.higher_is_better,
                rng=np.random.default_rng(stream),
            )
        except VarevalError as exc:
            failed.append(f"{name}: {exc}")
    if not results and not failed:
        return None
    data.facts["best_of_k"] = results
    blocks = []
    if results:
        rows = []
        for name, r in results.items():
            for i, k in enumerate(np.asarray(r.ks)):
                rows.append(
                    [
                        name,
                        str(int(k)),
                        pct(r.median_gap[i]),
                        pct(r.p90_gap[i]),
                        num(r.mean_signed_difference[i], 3),
                    ]
                )
        blocks.append(
            Table(
                [
                    "runs drawn from",
                    "k",
                    "median apparent gap",
                    "90th percentile",
                    "mean signed difference",
                ],
                rows,
                caption="Two identical copies of each method, each keeping its best "
                "of k runs "
                f"(resampled from its own {data.metric!r} scores, {r.n_resamples:,} "
                "simulated "
                "comparisons): the relative gap between the observed winner and "
                "loser. The signed "
                "difference averages to about zero: there is no real winner.",
                numeric=[False, True, True, True, True],
            )
        )
        blocks.append(
            Figure(
                lambda width: best_of_k_plot(results, width=width, name="best-of-k"),
                caption="Apparent relative gap between two identical methods against "
                "k (median "
                "solid, 90th percentile dashed). A reported gap of this size between "
                "best runs is what chance alone produces.",
                name="best-of-k",
            )
        )
    for text in failed:
        blocks.append(Paragraph("Not simulated for " + text))
    blocks.extend(_ranking_blocks(data, streams[-1]))
    return Section(
        id="best-of-k",
        title="The best-of-k illusion on these runs",
        estimand="A best-of-k statistic targets an extreme of the score "
        "distribution, not its "
        "centre. This section estimates, from your own runs, how large a gap between "
        "two identical methods looks when each reports its best of k runs.",
        how_to_read="If a paper's best-versus-best gap is within these ranges, the "
        "runs alone "
        "do not show a real difference; compare means or medians with intervals "
        "instead.",
        blocks=blocks,
    )


def _ranking_blocks(data: ReportData, stream) -> list:
    ranking_stability = optional("vareval.stats", "ranking_stability")
    if ranking_stability is None or len(data.groups) < 2:
        return []
    from vareval.errors import VarevalError
    from vareval.plots.best_of_k import ranking_plot

    chosen = _chosen(data)
    if len(chosen) < 2:
        return []
    a, b = chosen[1], chosen[0]
    try:
        r = ranking_stability(
            data.groups[a],
            data.groups[b],
            max_k=10,
            n_resamples=10_000,
            higher_is_better=data.higher_is_better,
            rng=np.random.default_rng(stream),
        )
    except VarevalError as exc:
        return [Paragraph(f"Ranking stability not computed: {exc}")]
    data.facts["ranking"] = (a, b, r)
    label = f"{a} vs {b}"
    rows = [
        [str(int(k)), pct(m), pct(md), pct(bk)]
        for k, m, md, bk in zip(
            r.ks, r.mean_of_k, r.median_of_k, r.best_of_k, strict=True
        )
    ]
    return [
        Table(
            ["k", "mean of k", "median of k", "best of k (selected)"],
            rows,
            caption=f"{label}: how often k runs per method, summarised three ways, "
            "rank the "
            "two methods as their full samples' means do. Not a significance test.",
            numeric=[True] * 4,
        ),
        Figure(
            lambda width: ranking_plot(r, label, width=width, name="ranking-stability"),
            caption="Agreement with the full-sample ranking as the number of runs "
            "grows; 50% is a coin toss.",
            name="ranking-stability",
        ),
    ]
