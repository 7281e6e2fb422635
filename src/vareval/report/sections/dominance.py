"""Section: almost stochastic order between every pair of methods.

Shown when the report names a task column (``extras["tasks"]``, as for the
aggregates: ASO on each task, one family over all of them) or is asked for it
on a single table (``extras["aso"] = True``); built on
:func:`vareval.data.dominance.aso`.
"""

from __future__ import annotations

import numpy as np

from vareval.report.sections._base import Figure, Paragraph, ReportData, Section

MAX_METHODS = 12  # a k x k matrix stays readable up to about this


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when not asked for or not applicable."""
    spec = data.extras.get("tasks") or {}
    if not (spec or data.extras.get("aso")) or not 2 <= len(data.groups) <= MAX_METHODS:
        return None
    from vareval.data.dominance import aso
    from vareval.plots.ranking import aso_matrix

    table = aso(
        data.df,
        metric=data.metric,
        by=data.by,
        task=spec.get("task"),
        pair_on=spec.get("pair_on"),
        confidence=data.confidence,
        higher_is_better=data.higher_is_better,
        rng=data.seed,
    )
    results = list(table.results.values())
    first = results[0]
    if len(results) == 1:
        def draw(width):
            return aso_matrix(
                first.names,
                first.epsilon_min,
                first.better,
                title="epsilon_min of row over column",
                width=width,
            )

        caption = (
            f"epsilon_min (upper {first.adjusted_confidence:.4g} bound of the violation ratio) "
            "of each row method over each column method: near 0 the row's score distribution "
            "dominates, near 1 the column's. A star marks a dominance the Holm-adjusted test "
            f"declares at family level {data.confidence:.0%}."
        )
    else:
        wins = np.sum([r.better for r in results], axis=0)
        def draw(width):
            return aso_matrix(
                first.names,
                wins.astype(float),
                np.zeros_like(wins, dtype=bool),
                title="tasks on which row dominates column",
                counts=len(results),
                width=width,
            )

        caption = (
            f"Number of the {len(results)} tasks on which the row method almost stochastically "
            "dominates the column method (Holm over every task and ordered pair, family level "
            f"{data.confidence:.0%})."
        )
    n_claims = sum(len(r.names) * (len(r.names) - 1) for r in results)
    return Section(
        id="dominance",
        title="Almost stochastic order",
        estimand="The violation ratio: the share of the squared Wasserstein distance between "
        "two methods' score distributions on which the first is worse (del Barrio et al. "
        "2018; Dror et al. 2019). 0 means the first method's runs are better at every "
        "quantile; 1 the reverse.",
        how_to_read="A method dominates another when the upper bound epsilon_min is below "
        f"{first.threshold:g}; the claims are adjusted over all {n_claims} ordered pairs"
        + (" and tasks" if len(results) > 1 else "")
        + ", since no direction was fixed in advance.",
        blocks=[
            Paragraph(f"{first.n_resamples:,} bootstrap resamples per method, seed {data.seed}."),
            Figure(draw, caption=caption, name="aso-matrix"),
        ],
    )
