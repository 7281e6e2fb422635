"""Section: language-model evaluations, each model's score and the paired differences.

Figures: the scores with their intervals, the forest of paired differences and, from
three models on, the matrix of differences (row minus column).

Shown when the report is given per-answer eval results (``extras["evals"]``:
inspect_ai or lm-evaluation-harness logs, or a table with score, model and
question columns; ``vareval report --evals FILE``). The numbers are
:func:`vareval.data.evals.eval_scores` and :func:`vareval.data.evals.compare_evals`
with the report's confidence, seed and resamples, so they are the ones
``vareval evals score`` and ``vareval evals compare --seed`` print.
"""

from __future__ import annotations

import warnings

from vareval.report.sections._base import (
    Figure,
    Paragraph,
    ReportData,
    Section,
    Table,
    conf,
    interval,
    num,
    plural,
)
from vareval.report.sections.significance import pvalue

ROLES = ("metric", "model", "question", "cluster", "sample", "errors")


def _unit(n_clusters: int, cluster: str | None) -> str:
    if cluster:
        return f"{plural(n_clusters, 'cluster')} ({cluster}): questions in one are not independent"
    return f"{plural(n_clusters, 'question')}, each independent (no cluster column given)"


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when its data is absent."""
    spec = data.extras.get("evals")
    if not spec:
        return None
    from vareval.data.evals import compare_evals, eval_scores
    from vareval.plots.evals import differences_plot
    from vareval.plots.figures import figure_for

    roles = {k: spec[k] for k in ROLES if spec.get(k) is not None}
    metric, cluster = roles["metric"], roles.get("cluster")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = eval_scores(spec["df"], **roles, confidence=data.confidence)
        multi = scores.frame["model"].nunique() > 1
        comp = compare_evals(
            spec["df"], **roles, correction=spec.get("correction", "holm"),
            confidence=data.confidence, n_resamples=data.n_resamples, rng=data.seed,
        ) if multi else None  # fmt: skip
    data.facts["evals"] = {"scores": scores, "comparison": comp}
    c = conf(data.confidence)
    first = next(iter(scores.results.values()))
    notes = sorted({str(w.message).rstrip(".") for w in caught})
    blocks = [
        Paragraph(
            f"{first.n_questions:,} questions from {spec.get('source', 'the eval results')}, "
            f"score {metric!r}, {first.samples_per_question:g} sample(s) per question "
            f"(averaged per question first). Independent unit: "
            f"{_unit(first.n_clusters, cluster)}."
            + "".join(f" Note: {n}." for n in notes)
        ),
        Table(
            ["model", "score", f"{c} interval", "SE", "interval", "questions", "units",
             f"naive {c} (every answer independent)", "design effect", "errored"],
            [
                [str(r.model) + (f" ({r.filter})" if "filter" in scores.frame else ""),
                 num(r.score), interval((r.low, r.high)), num(r.se), r.interval,
                 str(r.questions), str(r.clusters), interval((r.naive_low, r.naive_high)),
                 num(r.design_effect, 3), str(r.errored)]
                for r in scores.frame.itertuples()
            ],
            caption="Score: the mean over questions of each question's mean score. Its SE is "
            f"cluster-robust over the {'clusters' if cluster else 'questions'} (units); the "
            "naive interval treats every answer as independent and is shown only to compare. "
            "Design effect: the variance relative to that naive one.",
            numeric=[False, True, True, True, False, True, True, True, True, True],
        ),  # fmt: skip
        Figure(
            lambda width: figure_for(scores, width=width, name="eval-scores"),
            caption=f"Each model's score with its {c} interval, best at the top; the key names "
            f"the interval and its independent unit ({'clusters' if cluster else 'questions'}). "
            "The thin grey line under each is the naive interval (every answer independent), "
            "shown to see how much too narrow it is.",
            name="eval-scores",
        ),
    ]
    if comp is not None:
        labels = [f"{a} \u2212 {b}" for a, b in zip(comp.a, comp.b, strict=True)]
        blocks.append(Table(
            ["A", "B", "A \u2212 B", f"{c} interval", "SE", "p", f"p ({comp.correction})"],
            [
                [str(a), str(b), num(e), interval((lo, hi)), num(se), pvalue(p), pvalue(q)]
                for a, b, e, lo, hi, se, p, q in zip(
                    comp.a, comp.b, comp.estimate, comp.low, comp.high, comp.se, comp.pvalue,
                    comp.pvalue_adjusted, strict=True,
                )
            ],
            caption=f"Paired on the same {comp.n_questions:,} questions: {comp.test} test"
            + (f" ({comp.n_resamples:,} resamples)" if comp.n_resamples else "")
            + f" with {comp.interval} intervals over {_unit(comp.n_clusters, cluster)}; "
            f"p adjusted over {plural(len(labels), 'pair')} by {comp.correction}.",
            numeric=[False, False] + [True] * 5,
        ))  # fmt: skip
        tiers = [
            ", ".join(m for m, t in zip(comp.models, comp.tier, strict=True) if t == level)
            for level in sorted(set(comp.tier.tolist()))
        ]
        floor = float(min(comp.min_pvalue))
        blocks.append(Paragraph(
            "Tied groups (the data cannot separate the models within one, adjusted p >= "
            f"{comp.alpha:g}), best first: " + " | ".join(f"{{{t}}}" for t in tiers) + ". "
            + (f"Interval and test are one procedure: a pair's {c} interval excludes 0 "
               f"exactly when its unadjusted p is below {1 - data.confidence:.2g}; the tiers "
               "use the adjusted p." if comp.agree else
               f"The {comp.interval} interval and the {comp.test} test are separate "
               "procedures and may disagree.")
            + (f" The smallest p this design allows is {pvalue(floor)}: not below "
               f"{comp.alpha:g}, so no pair can be separated." if floor >= comp.alpha else "")
        ))  # fmt: skip
        blocks.append(Figure(
            lambda width: differences_plot(labels, comp.estimate, comp.low, comp.high, metric,
                                           width=width, name="eval-differences"),
            caption=f"Each pair's paired difference in {metric} with its {c} interval; the "
            "vertical line is no difference.",
            name="eval-differences",
        ))  # fmt: skip
        if len(comp.models) >= 3:
            blocks.append(Figure(
                lambda width: figure_for(comp, kind="matrix", metric=metric, width=width),
                caption=f"Every pair at a glance: row minus column in {metric}, red where the "
                f"row is ahead, blue where the column is; a star marks a difference whose "
                f"{comp.correction}-adjusted p is below {comp.alpha:g}.",
                name="eval-matrix",
            ))  # fmt: skip
    return Section(
        id="evals",
        title="Language-model evaluation: scores and paired differences",
        estimand="Each model's expected score on this benchmark's questions (the mean over "
        "questions of each question's expected score, over the model's sampling), and the "
        "difference between two models on the same questions.",
        how_to_read="Questions that share a cluster, and samples of one question, are not "
        "independent answers: the SE counts the independent units named above. A pair whose "
        "interval covers 0 is not separated by these questions (its unadjusted p is not "
        "below 1 - the level); the tied groups use the p adjusted over all pairs, so a pair "
        "can be separated on its own yet tied once every pair is counted. Models in one "
        "tied group should be reported as tied.",
        blocks=blocks,
    )
