"""Section: what was repeated, and which sources of randomness varied."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vareval.report.sections._base import (
    Paragraph,
    ReportData,
    Section,
    Table,
    num,
    plural,
)

REPEATED_TEXT = {
    "training": (
        "Training only: every run saw the same fixed data (the same split and test "
        "set); what varied is the training randomness (initialisation, batch order, "
        "augmentation, "
        "nondeterministic arithmetic). The numbers describe this data set, "
        "conditionally."
    ),
    "data-sampling": (
        "The whole data-sampling pipeline: each run also drew its own data split (or "
        "sample), "
        "so the spread includes data variability as well as training randomness."
    ),
    None: (
        "Not stated. The table cannot say whether each run re-sampled the data or only "
        "re-trained on fixed data; state it (vareval report --test t for re-training "
        "only, --test corrected when each run re-drew the split), because the two "
        "answer different questions."
    ),
}


STORE_BOOKKEEPING = (
    "trial_id",
    "config_index",
    "status",
    "attempts",
    "started",
    "finished",
    "duration",
    "host",
    "error",
)


_TIMES = ("started", "finished")  # a store's Unix times


def _show(value, col=None) -> str:
    """A value as a reader wants it: times as UTC times, numbers to 4 significant digits."""
    if col in _TIMES and isinstance(value, int | float | np.number) and np.isfinite(value):
        return pd.Timestamp(float(value), unit="s").strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, float | np.floating):
        return num(value)
    return str(value)


def _run_blocks(data: ReportData) -> list:
    """Failed, unfinished and non-finite runs: in words, then counted per method."""
    notes = [c.sentence(name, data.metric) for name, c in data.runs.items()]
    notes = [n for n in notes if n]
    if not notes:
        return [
            Paragraph(
                "Every planned run finished with a finite "
                f"{data.metric!r}: no run failed or was left out."
            )
        ]
    heads = ["method", "planned", "done", "failed", "not run", "non-finite", "summarised"]
    fields = ("planned", "done", "failed", "not_run", "non_finite", "summarised")
    if any(c.pruned for c in data.runs.values()):
        heads.insert(4, "pruned")
        fields = (*fields[:3], "pruned", *fields[3:])
    return [
        *(Paragraph(n[0].upper() + n[1:] + ".") for n in notes),
        Table(
            heads,
            [[name, *(str(getattr(c, f)) for f in fields)] for name, c in data.runs.items()],
            caption="What happened to each method's planned runs. The summaries below "
            "cover only the runs that finished with a finite metric: where some "
            "failed, they describe the survivors, and a method that fails on hard "
            "seeds looks better than it is.",
            numeric=[False] + [True] * len(fields),
            row_classes=["" if c.complete else "warn" for c in data.runs.values()],
        ),
        *_failure_blocks(data),
    ]


MAX_FAILURES = 50  # failed runs listed with their error; the rest are counted
MAX_ERROR = 2000  # characters of one error text shown


def _failure_blocks(data: ReportData) -> list:
    """Each failed run with its error text: what went wrong, not only how often."""
    failed = data.failures
    if failed is None or not len(failed):
        return []
    ids = [c for c in (*data.by, "trial_id", "seed", "config_index", "attempts")
           if c in failed.columns]  # fmt: skip
    errors = (failed["error"] if "error" in failed.columns else None)
    rows = []
    for i, (_, row) in enumerate(failed.iterrows()):  # at most MAX_FAILURES rows drawn
        if i == MAX_FAILURES:
            break
        text = "" if errors is None or pd.isna(row["error"]) else str(row["error"])
        if len(text) > MAX_ERROR:
            text = text[:MAX_ERROR] + f"\u2026 ({len(text) - MAX_ERROR:,} more characters)"
        rows.append([_show(row[c]) for c in ids] + [text or "(no error text recorded)"])
    more = len(failed) - len(rows)
    return [
        Table(
            [*ids, "error"],
            rows,
            caption="The failed runs and the error each raised"
            + (f"; {more:,} more failed runs are not listed." if more else "."),
            numeric=[False] * (len(ids) + 1),
        )
    ]


def _rerun_blocks(df) -> list:
    """How the reruns were read (:func:`vareval.data.design.reruns_of`), when there are any."""
    reading = df.attrs.get("reruns")
    text = reading.statement() if reading is not None else ""
    if not text:
        return []
    if reading.read_as == "nested":
        text = text.replace(
            "each cell analysed as its mean",
            "each cell enters the summaries, paired differences and curves as its mean; "
            "the mixed model keeps them as the rerun level within the cell",
        )
    return [Paragraph(f"Reruns: {text}.")]


def build(data: ReportData) -> Section:
    """Build this section from ``data``, or None when its data is absent."""
    df = data.df
    n_methods = len(data.groups)
    counts = [len(v) for v in data.groups.values()]
    lo, hi = min(counts), max(counts)
    per = f"{lo}" if lo == hi else f"{lo} to {hi}"
    runs = sum(c.summarised for c in data.runs.values()) or len(df)  # trials, not cells
    planned = sum(c.planned for c in data.runs.values()) or runs
    out_of = f" (of {planned} planned)" if planned != runs else ""
    blocks = [
        Paragraph(
            f"{plural(runs, 'run')}{out_of} of {plural(n_methods, 'method')} "
            f"({per} runs per method) from {data.source or 'the given table'}; "
            f"metric {data.metric!r}, {data.direction}."
        ),
        *_run_blocks(data),
        Paragraph("What was repeated: " + REPEATED_TEXT[data.repeated]),
        *_rerun_blocks(df),
    ]
    if data.extras.get("design_note"):
        blocks.append(Paragraph(data.extras["design_note"]))
    roles = {}
    if data.randomness is not None:  # a run store: its bookkeeping columns
        roles.update({c: "bookkeeping" for c in STORE_BOOKKEEPING})
    roles.update(data.extras.get("column_roles") or {})
    # the store's other metrics are outcomes, not sources of variation
    roles.update({c: "another metric" for c in df.attrs.get("metrics") or []})
    variance = data.extras.get("variance") or {}
    if "df" not in variance:  # the variance section models this table
        roles.update({c: "fixed factor" for c in variance.get("fixed") or []})
        roles.update({c: "random effect" for c in variance.get("random") or []})
    roles.update({c: "pairing key" for c in data.pair_on or []})
    roles.update({c: "method" for c in data.by})
    roles[data.metric] = "metric"
    rows, classes = [], []
    for col in df.columns:
        values = df[col]
        distinct = values.nunique(dropna=False)
        role = roles.get(col, "other")
        if role == "metric":
            numbers = pd.to_numeric(values, errors="coerce")  # a text column holds "0.90"
            shown = f"{num(numbers.min())} \u2026 {num(numbers.max())}"
        else:
            first = [_show(v, col) for v in values.drop_duplicates().head(6)]
            shown = ", ".join(first) + (", \u2026" if distinct > 6 else "")
        rows.append([str(col), role, str(distinct), shown])
        classes.append("" if role in ("other", "bookkeeping", "another metric") else "role")
    blocks.append(
        Table(
            ["column", "role", "distinct values", "values"],
            rows,
            caption="Columns of the results table and the role each played. A column "
            "marked 'other' that varies across runs is a source of variation the "
            "summaries treat as run-to-run noise.",
            numeric=[False, False, True, False],
            row_classes=classes,
        )
    )
    unread = data.extras.get("unread_columns")
    if unread:  # the command read only the columns it uses
        from vareval.data.validate import shown

        blocks.append(Paragraph(
            f"Not read from the file (no option and no design role names them): {shown(unread)}."
        ))
    if data.randomness:
        blocks.append(
            Table(
                ["source of randomness", "across runs", "note"],
                [
                    [
                        r["name"],
                        "varied" if r.get("varied") else "held fixed",
                        r.get("note", ""),
                    ]
                    for r in data.randomness
                ],
                caption="Sources of randomness declared in the run store, each with "
                "its own independent seed stream.",
            )
        )
    if data.pair_on:
        blocks.append(
            Paragraph(
                "Runs of different methods are paired on "
                + ", ".join(map(repr, data.pair_on))
                + ": runs sharing a key share that randomness (e.g. the same seed "
                "or fold)."
            )
        )
    data.facts["runs"] = dict(zip(data.groups, counts, strict=True))
    return Section(
        id="design",
        title="What was repeated",
        estimand="This section targets no statistic: it records the experiment the "
        "numbers "
        "below describe, which decides what they estimate (a method's performance on "
        "this data, or over re-sampled data).",
        how_to_read="Check that the varied sources match the question of the paper; "
        "a column "
        "marked 'other' varied across runs and is treated as part of the run-to-run "
        "noise.",
        blocks=blocks,
    )
