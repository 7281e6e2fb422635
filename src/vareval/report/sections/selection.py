"""Section: the configuration chosen on validation per unit, and its test score.

Shown when the report is asked to select (``extras["selection"]``, the CLI's
``--select-on``): the report's table is then the search table, and
:func:`choose` turns it, before any other section reads it, into the results
table of the chosen configurations, exactly as ``vareval select`` does; the
report's metric is the test metric, reported for the chosen configurations
and never used to choose.
"""

from __future__ import annotations

from vareval.report.sections._base import Paragraph, ReportData, Section, Table, num

SELECTION_ROLES = {
    "n_searched": "selection procedure",
    "n_tied": "selection procedure",
    "selected_on": "selection procedure",
    "selection": "selection procedure",
}


def choose(df, metric: str, by, higher_is_better: bool, extras: dict):
    """Replace the search table by the chosen configurations' results table.

    ``extras["selection"]`` holds ``validation`` (the metric chosen on) and
    optionally ``unit`` (default ``["seed"]``), ``config`` (default
    ``"config"``), ``ties`` (default ``"first"``) and ``higher_is_better``
    (default: the report metric's direction). Returns the selected table and
    the extras with the :class:`~vareval.data.selection.SelectedTable` under
    ``extras["selection"]["result"]``, the new columns' roles, and without a
    variance section inferred from the search design (one configuration per
    unit is left, so configuration and seed are no longer crossed).
    """
    from vareval.data.selection import select
    from vareval.errors import ArgumentError

    spec = dict(extras["selection"])
    if not spec.get("validation"):
        raise ArgumentError("selection needs `validation`: the metric to choose on.")
    hib = spec.get("higher_is_better")
    res = select(
        df, validation=spec["validation"], test=metric, by=by,
        unit=spec.get("unit", ["seed"]), config=spec.get("config", "config"),
        higher_is_better=higher_is_better if hib is None else hib,
        ties=spec.get("ties", "first"),
    )  # fmt: skip
    extras = {**extras, "selection": {**spec, "result": res}}
    roles = {**(extras.get("column_roles") or {}), **SELECTION_ROLES}
    roles[res.config] = "chosen configuration"
    roles[res.validation] = "validation metric (chosen on)"
    extras["column_roles"] = roles
    if (extras.get("variance") or {}).get("inferred"):
        del extras["variance"]
    return res.table, extras


def build(data: ReportData) -> Section | None:
    """Build this section from ``data``, or None when no selection was asked for."""
    res = (data.extras.get("selection") or {}).get("result")
    if res is None:
        return None
    shown = res.table.drop(columns=["selected_on", "selection"])
    scores = (res.validation, res.test)
    rows = [
        [num(v) if c in scores else str(v) for c, v in zip(shown.columns, row, strict=True)]
        for row in shown.itertuples(index=False)
    ]
    units = " x ".join([*res.by, *res.unit]) or "method"
    ties = int((shown["n_tied"] > 1).sum())
    searched = _counts(shown["n_searched"])
    data.facts["search_effort"] = (
        f"{searched} {res.config!r} values searched per {' x '.join(res.unit) or 'method'} "
        f"and method, the configuration chosen on {res.validation!r} (the selection section)"
    )
    return Section(
        id="selection",
        title="Chosen on validation, reported on test",
        estimand=f"Per method, the {res.test!r} score of the configuration that a "
        f"researcher following this procedure would report: in each replication unit, "
        f"the configuration with the best {res.validation!r} among those searched. "
        "Every section below summarises these chosen configurations' test scores, one "
        "per unit.",
        how_to_read=f"{res.test!r} was not used in any choice: it is read only after "
        f"the configuration was fixed on {res.validation!r}. The validation score of a "
        "chosen configuration is optimistic (it won a search); its test score is not.",
        blocks=[
            Paragraph(
                f"{len(shown)} {units} units. Procedure: {res.procedure}. "
                f"{ties} of {len(shown)} units had a tie in {res.validation!r}."
            ),
            Paragraph(
                f"The test metric {res.test!r} was not used in any choice: every "
                f"configuration was chosen on {res.validation!r} alone."
            ),
            Table(
                list(map(str, shown.columns)),
                rows,
                caption=f"The chosen configuration of each unit with its "
                f"{res.validation!r} (chosen on) and {res.test!r} (reported) scores, "
                "as `vareval select` gives them; n_tied counts the configurations "
                "tied at the best validation score.",
                numeric=[c in (*scores, "n_searched", "n_tied") for c in shown.columns],
            ),
        ],
    )


def _counts(values) -> str:
    lo, hi = int(values.min()), int(values.max())
    return str(lo) if lo == hi else f"{lo} to {hi}"
