"""The closing checklist: what to report, filled with the user's numbers.

After the note "Three runs, three answers: what should we report?":
the estimand and summary, the repetitions and what was repeated, the spread,
paired differences where the design pairs, the search effort kept apart from
the final replications, any best run labelled as selected, and whether the
final test set stayed outside all modelling decisions.
"""

from __future__ import annotations

import re

from vareval.report.sections._base import (
    ChecklistItem,
    ReportData,
    conf,
    interval,
    num,
    plural,
)

MAX_LISTED = 6  # methods named in one checklist line; the tables hold the rest


def _listing(items: list[str]) -> str:
    more = len(items) - MAX_LISTED
    shown = items[:MAX_LISTED]
    return "; ".join(shown) + (
        f"; and {more} more (see the tables above)" if more > 0 else ""
    )


def build(data: ReportData) -> list[ChecklistItem]:
    """Build this section from ``data``, or None when its data is absent."""
    facts = data.facts
    summaries = facts.get("summaries", {})
    c = conf(data.confidence)
    items = []

    items.append(
        ChecklistItem(
            "Estimand and summary",
            f"Typical performance: the mean {data.metric!r} with a {c} t CI (and the "
            "median with a distribution-free CI): "
            + _listing(
                [
                    f"{n}: mean {num(s.mean)} {interval(s.confidence_interval())}, median "
                    f"{num(s.median)}"
                    for n, s in summaries.items()
                ]
            )
            + ".",
            "ok" if summaries else "warn",
        )
    )

    counts = facts.get("runs", {})
    from vareval.report.sections.design import REPEATED_TEXT

    n_text = _listing([f"{n}: {k}" for n, k in counts.items()])
    what = {
        "training": "training only, on fixed data",
        "data-sampling": "the whole data-sampling pipeline",
    }.get(data.repeated)
    if data.randomness:
        varied = [r["name"] for r in data.randomness if r.get("varied")]
        fixed = [r["name"] for r in data.randomness if not r.get("varied")]
        src = f" Sources varied: {', '.join(varied) or 'none'}"
        src += f"; held fixed: {', '.join(fixed)}." if fixed else "."
    else:
        src = ""
    survivors = [c.sentence(n, data.metric) for n, c in data.runs.items()]
    survivors = [s for s in survivors if s]
    if survivors:
        items.append(
            ChecklistItem(
                "Failed runs",
                "State them beside the numbers: " + "; ".join(survivors) + ".",
                "warn",
            )
        )
    items.append(
        ChecklistItem(
            "Repetitions and what was repeated",
            f"Runs per method: {n_text}. Repeated: "
            + (what + "." if what else REPEATED_TEXT[None])
            + src,
            "ok" if what else "warn",
        )
    )

    items.append(
        ChecklistItem(
            "Spread",
            "Run-to-run spread (SD; IQR; range): "
            + _listing(
                [
                    f"{n}: {num(s.sd)}; {num(s.iqr)}; [{num(s.min)}, {num(s.max)}]"
                    for n, s in summaries.items()
                ]
            )
            + ".",
            "ok" if summaries else "warn",
        )
    )

    paired = facts.get("paired")
    if paired:
        text = (
            f"Paired on {', '.join(map(repr, data.pair_on))}: "
            + _listing(
                [
                    f"{label} = {num(r.estimate)} (SE "
                    f"{num(r.se if r.test == 'paired t' else r.se_corrected)}, {c} "
                    f"{'' if r.test == 'paired t' else r.test + ' '}CI "
                    f"{interval(r.confidence_interval())}, k = {r.k})"
                    for label, r in paired.items()
                ]
            )
            + "."
        )
        status = "ok"
    elif len(summaries) < 2:
        text = "One method only: there is no difference to report."
        status = "info"
    elif data.pair_on:
        text = (
            "Paired differences could not be computed here (the paired-differences "
            "analysis is not available in this installation)."
        )
        status = "warn"
    else:
        text = (
            "No pairing given (--pair-on): if runs of different methods share seeds, "
            "folds or data sets, compare them as paired differences."
        )
        status = "warn" if len(summaries) > 1 else "info"
    items.append(ChecklistItem("Paired differences", text, status))

    search = data.search_effort or facts.get("search_effort")
    items.append(
        ChecklistItem(
            "Search effort, apart from final runs",
            (
                f"Hyper-parameter search: {search}. The runs summarised above are "
                "the final replications."
                if search
                else "Not stated. Report the hyper-parameter search (trials per "
                "method, how the "
                "configuration was chosen) separately from these final replications "
                "(vareval report --search-effort '...')."
            ),
            "ok" if search else "warn",
        )
    )

    evals = facts.get("evals")
    if evals:
        items.append(ChecklistItem("Eval scores and their unit", _evals_text(evals, c), "ok"))

    selection = _selection(data)
    if selection:
        items.append(ChecklistItem("Selection on validation, report on test", *selection))

    items.append(
        ChecklistItem(
            "Best run labelled as selected",
            "Best runs appear only as selected statistics: "
            + _listing(
                [
                    f"{n}: {num(s.selected)} (best of {plural(s.n, 'run')})"
                    for n, s in summaries.items()
                ]
            )
            + ". Do not report them as the method's performance.",
            "ok" if summaries else "info",
        )
    )

    test = {
        True: (
            "The final test set stayed outside all modelling decisions (stated by the "
            "author with --test-set-held-out).",
            "ok",
        ),
        False: (
            "The test set was used in modelling decisions (stated with "
            "--test-set-reused): "
            "these scores are optimistic; evaluate the final choice on fresh data.",
            "warn",
        ),
        None: (
            "Unknown: vareval cannot tell whether the test set informed model "
            "selection or tuning. State it (--test-set-held-out or --test-set-reused).",
            "warn",
        ),
    }[data.test_set]
    items.append(ChecklistItem("Final test set held out", *test))
    return items


def _evals_text(evals: dict, c: str) -> str:
    """What to report of an eval: each score over its independent unit, the paired pairs."""
    scores, comp = evals["scores"], evals["comparison"]
    first = next(iter(scores.results.values()))
    text = (
        f"Each model's score with its {c} interval over "
        f"{plural(first.n_clusters, 'independent unit')} ({first.interval}), not the naive "
        "interval over every answer: "
        + _listing([f"{r.model}: {num(r.score)} {interval((r.low, r.high))}"
                    for r in scores.frame.itertuples()])  # fmt: skip
        + "."
    )
    if comp is not None:
        tiers = len(set(comp.tier.tolist()))
        text += (
            f" Differences paired on the same questions ({comp.test} test, p adjusted by "
            f"{comp.correction}); {plural(tiers, 'tied group')} of {len(comp.models)} models."
        )
    errored = int(scores.frame["errored"].sum())
    if errored:
        text += f" State the {plural(errored, 'errored answer')} and how they were counted."
    return text


_VALIDATION_NAME = re.compile(r"^(val|valid|validation|dev)([_.\- ]|$)", re.I)


def _selection(data: ReportData):
    """The selection procedure of a table made by ``vareval select``, if it is one.

    A run store searched over several configurations per seed that records a
    metric named as a validation metric (``val_*``, ``validation_*``,
    ``dev_*``) but is reported without selection gets an item saying that
    its configurations were not chosen on validation.
    """
    df = data.df
    if "selection" not in df.columns or "selected_on" not in df.columns:
        spec = df.attrs.get("spec") or {}
        val = [m for m in df.attrs.get("metrics") or []
               if m != data.metric and _VALIDATION_NAME.match(str(m))]  # fmt: skip
        if not val or spec.get("configs", 1) < 2 or _VALIDATION_NAME.match(data.metric):
            return None
        return (
            f"The configurations were not chosen on validation: the {data.metric!r} "
            f"scores above are of every configuration searched ({spec['configs']} per "
            f"seed). The store also records {val[0]!r}; vareval report --select-on "
            f"{val[0]} reports the {data.metric!r} of the configuration chosen on it.",
            "info",
        )
    procedures = "; ".join(sorted(set(map(str, df["selection"]))))
    chosen_on = set(map(str, df["selected_on"]))
    if data.metric in chosen_on:
        return (
            f"The reported {data.metric!r} is the validation metric the configurations "
            f"were chosen on ({procedures}): it is optimistic; report the test metric.",
            "warn",
        )
    return (
        f"Selection procedure: each unit's configuration was {procedures}. The reported "
        f"{data.metric!r} took no part in any choice: the configurations were chosen on "
        f"{', '.join(map(repr, sorted(chosen_on)))} alone.",
        "ok",
    )
