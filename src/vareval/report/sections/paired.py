"""Section: paired differences with CIs and the planning curve."""

from __future__ import annotations

import numpy as np

from vareval.report.sections._base import (
    Figure,
    ReportData,
    Section,
    Table,
    conf,
    interval,
    num,
    optional,
)

MAX_PLOTTED = 6  # comparisons drawn in the planning figure
BOOT_BUDGET = 1.5e8  # resampled values over all comparisons of one page
MIN_BOOT = 2_000


def comparisons(data: ReportData) -> list[tuple[str, str]]:
    """Each method against the baseline (default: the first method in the table)."""
    names = list(data.groups)
    baseline = data.baseline if data.baseline is not None else names[0]
    return [(a, baseline) for a in names if a != baseline]


def boot_resamples(data: ReportData, n_comparisons: int) -> int:
    """Bootstrap resamples per comparison: ``data.n_resamples``, fewer for huge pages.

    The resampled values over all comparisons are capped at BOOT_BUDGET (about
    a second of work), never going below MIN_BOOT resamples; the table says
    how many were used.
    """
    k = max(len(x) for x in data.groups.values())
    affordable = int(BOOT_BUDGET / max(1, n_comparisons * k))
    return int(min(data.n_resamples, max(MIN_BOOT, affordable)))


def _aligned(data: ReportData, design, methods, a: str, b: str):
    """Pair methods a and b as `vareval paired` does, on their rows only (fast).

    Paired on the seed alone in a clustered design, each method's runs within
    a seed are averaged to the seed mean first (the data layer's
    :func:`~vareval.data.repeated.paired_units`). If the data layer refuses
    the pairing, it is asked again on the whole table so that its message
    names the user's row numbers.
    """
    from vareval.data.design import analysed_rows
    from vareval.data.repeated import paired_units
    from vareval.errors import DataError

    codes, index = methods
    rows = (codes == index[a]) | (codes == index[b])
    args = (data.metric, data.by, data.pair_on, design, a, b)
    try:
        mine = data.df[rows].reset_index(drop=True)
        return paired_units(analysed_rows(mine, data.metric, data.by), *args)
    except DataError:
        paired_units(analysed_rows(data.df, data.metric, data.by), *args)
        raise


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    if not data.pair_on or len(data.groups) < 2:
        return None
    paired_difference = optional("vareval.stats", "paired_difference")
    if paired_difference is None:
        return None
    import pandas as pd

    from vareval.data import labels
    from vareval.data.design import design_of
    from vareval.data.repeated import sizes_of
    from vareval.plots.paired import differences_plot

    pairs_of = comparisons(data)
    # the design `vareval paired` reads: the same pairs and the same test
    design = design_of(
        data.df, by=data.by, metric=data.metric, pair_on=data.pair_on,
        repeated=data.repeated_given, test_fraction=data.test_fraction,
        train_fraction=data.train_fraction,
    )  # fmt: skip
    sizes = sizes_of(design)
    n_boot = boot_resamples(data, len(pairs_of))
    codes, uniques = pd.factorize(labels(data.df, data.by, "method"))
    methods = (codes, {str(u): i for i, u in enumerate(uniques)})
    # one independent stream per comparison (SeedSequence.spawn, as DESIGN asks)
    streams = np.random.SeedSequence(data.seed).spawn(len(pairs_of))
    results, averaged = {}, ()
    for (a, b), stream in zip(pairs_of, streams, strict=True):
        xa, xb, averaged = _aligned(data, design, methods, a, b)
        results[f"{a} \u2212 {b}"] = paired_difference(
            xa,
            xb,
            confidence=data.confidence,
            n_resamples=n_boot,
            rng=np.random.default_rng(stream),
            higher_is_better=data.higher_is_better,
            split_sizes=sizes,
        )
    data.facts["paired"] = results
    c = conf(data.confidence)
    rows = []
    for label, r in results.items():
        rows.append(
            [
                label,
                str(r.k),
                num(r.estimate),
                num(r.se if sizes is None else r.se_corrected),
                interval(r.confidence_interval()),
                "n/a" if r.bootstrap_note else interval((r.bootstrap_low, r.bootstrap_high)),
                num(r.selected_gap) + " (selected)",
            ]
        )
    blocks = [
        Table(
            [
                "comparison",
                "pairs k",
                "mean difference",
                "SE" if sizes is None else "corrected SE",
                f"{c} t CI" if sizes is None else f"{c} corrected t CI",
                f"{c} bootstrap CI",
                "best minus best",
            ],
            rows,
            caption="Mean of the per-pair differences D = first \u2212 second, its SE "
            "s_D/\u221ak, a t interval and a percentile bootstrap interval "
            f"({n_boot:,} resamples of the pairs"
            + (
                f", fewer than the usual {data.n_resamples:,} to keep a page of "
                f"{len(pairs_of)} comparisons fast"
                if n_boot < data.n_resamples
                else ""
            )
            + ")"
            + _caveat(results, sizes)
            + "".join(f"; {n}" for n in averaged)
            + ". 'Best minus best' compares the two selected best runs and is shown "
            "only to be set aside.",
            numeric=[False] + [True] * 6,
        ),
        Table(
            [
                "comparison",
                "corr(A, B)",
                "Var A",
                "Var B",
                "\u22122 Cov",
                "Var(A\u2212B)",
                "SE if unpaired",
                "unpaired needs \u00d7 the runs",
            ],
            [
                [
                    label,
                    num(r.correlation, 3),
                    num(r.var_a),
                    num(r.var_b),
                    num(-2 * r.cov),
                    num(r.var_diff),
                    num(r.se_unpaired),
                    num(r.variance_ratio, 3),
                ]
                for label, r in results.items()
            ],
            caption="Why pairing helps: Var(A\u2212B) = Var A + Var B \u2212 2 "
            "Cov(A, B). "
            "A positive correlation between paired runs shrinks the variance of the "
            "difference. The last column, (Var A + Var B) / Var(A\u2212B), is how many "
            "times the runs an unpaired design would need for the same SE (below 1, "
            "pairing hurt).",
            numeric=[False] + [True] * 7,
        ),
        Figure(
            lambda width: differences_plot(
                results, data.metric, width=width, name="paired-differences"
            ),
            caption="Each pair's difference as a dot, with the mean difference and its "
            + (f"{c} t (circle) and bootstrap (square) intervals. "
               if any(not r.bootstrap_note for r in results.values())
               else f"{c} t interval (circle). ")
            + "The vertical line is no difference.",
            name="paired-differences",
        ),
    ]
    blocks.extend(_planning_blocks(data, results))
    return Section(
        id="paired",
        title="Paired differences and how many pairs it takes",
        estimand="The mean paired difference between two methods over matched runs "
        "(paired "
        f"on {', '.join(map(repr, data.pair_on))}), with its SE = s_D/\u221ak and {c} "
        "intervals; the planning curve projects that SE to other numbers of pairs.",
        how_to_read="An interval that excludes zero says the sign of the mean "
        "difference is "
        "settled at this level; its width says how precisely. To halve the SE, take "
        "four times the pairs.",
        blocks=blocks,
    )


def _caveat(results: dict, sizes) -> str:
    """Why an interval is corrected or missing, in words (empty if neither)."""
    if sizes is not None:
        n_train, n_test = sizes
        return (
            "; each run re-drew the train/test split, so runs share training data and "
            "the naive t test is anti-conservative: the SE and t interval are Nadeau "
            f"and Bengio's corrected resampled t (test/train = {n_test}/{n_train}), "
            "and the bootstrap of the pairs, blind to the overlap, is not shown"
        )
    notes = {r.bootstrap_note for r in results.values() if r.bootstrap_note}
    return "; no bootstrap interval: " + "; ".join(sorted(notes)) if notes else ""


def _planning_blocks(data: ReportData, results: dict) -> list:
    plan_replications = optional("vareval.stats", "plan_replications")
    if plan_replications is None:
        return []
    from vareval.errors import VarevalError
    from vareval.plots.paired import planning_plot

    plans, rows = {}, []
    for label, r in results.items():
        if not np.isfinite(r.sd) or r.sd <= 0:
            rows.append([label, str(r.k), num(r.sd), "n/a", "n/a", "n/a"])
            continue
        if r.test != "paired t":  # re-drawn splits: more pairs cannot beat the overlap
            floor = np.sqrt(r.test_train_ratio) * r.sd
            why = f"n/a: the corrected SE stays above {num(floor)} for any number of pairs"
            rows.append([label, str(r.k), num(r.sd), num(r.se_corrected / 2), why, "n/a"])
            continue
        try:
            plan = plan_replications(
                r.sd, target_se=r.se / 2, confidence=data.confidence
            )
        except VarevalError:
            continue
        plans[label] = plan
        effect = abs(r.estimate)
        power_k = "n/a"
        if effect > 0:
            try:
                power_k = str(
                    plan_replications(r.sd, effect=effect, power=0.8).k_required
                )
            except VarevalError as exc:
                power_k = f"n/a ({exc})"
        rows.append(
            [label, str(r.k), num(r.sd), num(r.se / 2), str(plan.k_required), power_k]
        )
    data.facts["plans"] = plans
    if not rows:
        return []
    blocks = [
        Table(
            [
                "comparison",
                "pairs now",
                "SD of differences",
                "target SE (half of now)",
                "pairs for target SE",
                "pairs for 80% power at observed difference",
            ],
            rows,
            caption="Planning from these runs as a pilot. The power column treats "
            "the observed "
            "mean difference as the effect to detect (paired t test, two-sided, "
            "\u03b1 = 0.05); "
            "it is a projection that inherits the pilot's uncertainty about the SD.",
            numeric=[False] + [True] * 5,
        )
    ]
    if plans:
        shown = dict(list(plans.items())[:MAX_PLOTTED])
        blocks.append(
            Figure(
                lambda width: planning_plot(
                    shown,
                    {label: results[label].k for label in shown},
                    data.metric,
                    width=width,
                    name="planning",
                ),
                caption="Standard error of the mean difference against the number of "
                "pairs, "
                "SE = SD_D/\u221ak with SD_D from these runs (log-log: a straight "
                "line of slope "
                "\u22121/2). Circles mark the pairs in hand, diamonds four times as "
                "many."
                + (
                    f" The first {MAX_PLOTTED} comparisons are drawn."
                    if len(plans) > MAX_PLOTTED
                    else ""
                ),
                name="planning",
            )
        )
    return blocks
