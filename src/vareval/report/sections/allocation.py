"""Section: where to spend the next runs (budget-optimal allocation).

Shown beside the variance section when the data has the re-seeding design's
roles (``experiment``, ``seed``, ``config``): for the two leading experiments,
the seeds x configurations x reruns that the pilot's own budget would best
have bought, and the naive designs beside it, from
:func:`vareval.data.allocation.allocation`.
"""

from __future__ import annotations

import warnings

from vareval.errors import VarevalWarning
from vareval.report.sections._base import Paragraph, ReportData, Section, Table, num, optional

DESIGN_ROLES = ("experiment", "seed", "config")
N_RESAMPLES = 40  # bootstrap draws of the components (a refit each): a rough upper limit


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when the design roles are absent."""
    spec = data.extras.get("variance")
    if not spec:
        return None
    df = spec.get("df", data.df)
    metric = spec.get("metric", data.metric)
    if any(c not in df.columns for c in DESIGN_ROLES) or df["experiment"].nunique() < 2:
        return None
    # imported once the section is shown: it loads scipy.stats and scipy.optimize (~0.4 s)
    allocation = optional("vareval.data.allocation", "allocation")
    if allocation is None:
        return None
    means = df.groupby(df["experiment"].astype(str))[metric].mean()
    leaders = list(means.sort_values(ascending=not data.higher_is_better).index[:2])
    per_experiment = int(round(len(df) / df["experiment"].nunique()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)  # the variance section shows them
        a = allocation(df, metric=metric, compare=leaders, budget=per_experiment,
                       confidence=data.confidence, n_resamples=N_RESAMPLES, rng=data.seed)
    frame = a.to_frame()
    table = Table(
        ["design", "seeds", "configs", "reruns", "trials", "SE", "SE at upper limits",
         "SE / plan's"],
        [[str(r.design), str(r.n_seeds), str(r.n_configs), str(r.n_reruns), str(r.trials),
          num(r.se), num(r.se_upper), num(r.se_ratio, 3)] for r in frame.itertuples()],
        caption=f"Designs of at most {per_experiment} trials per experiment (the pilot's "
        f"own size) for the difference {leaders[0]} \u2212 {leaders[1]}; 'SE at upper "
        f"limits' holds if every variance component is at its upper "
        f"{100 * a.confidence:g}% limit ({N_RESAMPLES} parametric-bootstrap draws).",
        numeric=[False] + [True] * 7,
        row_classes=["selected"] + [""] * (len(frame) - 1),
    )
    crn = ("the same seeds and configurations for both (common random numbers: the "
           "variance they share cancels)" if a.crn else "their own seeds and configurations")
    lo, hi = a.confidence_interval()
    blocks = [
        Paragraph(
            f"Pilot components of {metric!r} (variances): "
            + ", ".join(f"{k} {num(v)}" for k, v in a.components.items())
            + f". Planned with {a.configs} configurations and {crn}. The best design, "
            f"{a.n_seeds} seeds \u00d7 {a.n_configs} configurations \u00d7 {a.n_reruns} "
            f"reruns, has predicted SE {num(a.se)} ({100 * a.confidence:g}% interval "
            f"over the pilot's uncertainty [{num(lo)}, {num(hi)}])."
        ),
        table,
    ]
    data.facts["allocation"] = a
    return Section(
        id="allocation",
        title="Where to spend the next runs",
        estimand="The standard error of the difference between two experiments' mean "
        "scores (balanced cell means) for a design of seeds, configurations and reruns, "
        "from the variance components; the plan minimises it for a budget.",
        how_to_read="Compare the SE column: a naive design's SE / plan's ratio says how "
        "much precision it wastes for the same number of trials. The command vareval allocate "
        "plans for other budgets, targets and costs, and writes the TOML that grows a "
        "store to the plan.",
        blocks=blocks,
    )
