"""Section: tuning curves with simultaneous confidence bands and per-k verdicts.

Shown when the report is given the search iterations (``extras["tuning"]``);
built on :func:`vareval.data.tuning.tuning_curve` when that module is installed.
"""

from __future__ import annotations

import warnings

import numpy as np

from vareval.errors import VarevalError, VarevalWarning
from vareval.report.sections._base import (
    Figure,
    Paragraph,
    ReportData,
    Section,
    Table,
    conf,
    interval,
    num,
    optional,
)
from vareval.stats.tuning.bands import METHOD_NAMES

SHOWN_K = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)


def _runs(ks, verdicts) -> str:
    """'k = 1: A better; k = 2-25: need more data' from per-k verdicts."""
    parts, start = [], 0
    for i in range(1, len(ks) + 1):
        if i == len(ks) or verdicts[i] != verdicts[start]:
            lo, hi = int(ks[start]), int(ks[i - 1])
            span = f"k = {lo}" if lo == hi else f"k = {lo}\u2013{hi}"
            parts.append(f"{span}: {verdicts[start]}")
            start = i
    return "; ".join(parts)


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    spec = data.extras.get("tuning")
    if not spec:
        return None
    tuning_curve = optional("vareval.data.tuning", "tuning_curve")
    if tuning_curve is None:
        raise VarevalError(
            "the tuning-curve analysis is not installed in this vareval."
        )
    metric = spec.get("metric", data.metric)
    by = spec.get("by", data.by)
    band = spec.get("method", "ld-hd")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VarevalWarning)
        res = tuning_curve(
            spec["df"],
            metric=metric,
            by=by,
            bounds=tuple(spec["bounds"]),
            confidence=spec.get("confidence", data.confidence),
            method=band,
            higher_is_better=spec.get(
                "higher_is_better",
                not spec["minimize"] if "minimize" in spec else data.higher_is_better,
            ),
        )
    c = conf(res.confidence)
    n_iter = {name: int(res.bands[name].n) for name in res.methods}
    data.facts["search_effort"] = (
        "random search, "
        + ", ".join(f"{name}: {n} iterations" for name, n in n_iter.items())
        + f" (the tuning-curve section, from {spec.get('source', 'the search table')})"
    )
    ks = np.asarray(res.k)
    show = [j for j, k in enumerate(ks) if int(k) in SHOWN_K or j == len(ks) - 1]
    rows = []
    for name in res.methods:
        b = res.bands[name]
        for j in show:
            rows.append(
                [
                    name,
                    str(int(ks[j])),
                    num(b.estimate[j]),
                    interval((b.lower[j], b.upper[j])),
                    num(res.v_statistic[name][j]),
                    num(res.u_statistic[name][j]),
                ]
            )
    blocks = [
        Paragraph(
            f"Search iterations from {spec.get('source', 'the search table')}: "
            + ", ".join(f"{name} {n}" for name, n in n_iter.items())
            + f"; scores bounded in [{num(res.bounds[0])}, {num(res.bounds[1])}]; "
            f"{c} simultaneous {res.method} bands ({METHOD_NAMES[res.method]}s)."
        ),
        Table(
            [
                "method",
                "k",
                "median best of k",
                f"{c} band",
                "V-statistic",
                "U-statistic",
            ],
            rows,
            caption="The median of the best score after k search iterations, its "
            "simultaneous band (it holds for every k at once), and two estimates of "
            "the expected best of k: V (Dodge et al. 2019) and U (Tang et al. 2020).",
            numeric=[False] + [True] * 5,
        ),
    ]
    comparisons = getattr(res, "comparisons", {})
    if comparisons:
        vrows = []
        for a, b in comparisons:
            vrows.append([f"{a} vs {b}", _runs(ks, res.named_verdicts(a, b))])
        blocks.append(
            Table(
                ["comparison", "verdict by number of search iterations k"],
                vrows,
                caption="For each k, one model is better only where its band lies "
                "entirely "
                "beyond the other's; elsewhere the search needs more data. With "
                "independent "
                f"searches of {len(res.methods)} models the verdicts hold jointly "
                f"with probability at least {100 * res.joint_confidence:.4g}% "
                f"({conf(res.confidence)} to the power {len(res.methods)}).",
            )
        )
    if hasattr(res, "cdf_bands"):
        from vareval.plots.tuning import tuning_plot

        blocks.append(
            Figure(
                lambda width: tuning_plot(res, metric, width=width, name="tuning-curves"),
                caption="Median best score after k search iterations (line) and its "
                f"{c} simultaneous band (shaded), one panel per model on shared axes; "
                "the other models' curves are drawn thin and grey for comparison. The "
                "y axis is zoomed to where the curves differ, so a band may run past "
                "its edge.",
                name="tuning-curves",
            )
        )
    if caught:
        blocks.append(
            Paragraph("Note: " + " ".join(str(w.message) for w in caught[:3]))
        )
    return Section(
        id="tuning",
        title="Tuning curves: how good after k search iterations",
        estimand="The median (and expected) best score after k iterations of random "
        f"hyper-parameter search, per model, with {c} simultaneous confidence bands "
        "(exact and distribution-free for continuous scores).",
        how_to_read="Compare models at the search budget you can afford: where the "
        "bands overlap, the search does not yet say which model is better at that k.",
        blocks=blocks,
    )
