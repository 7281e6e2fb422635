"""Build the report: collect the sections the data supports, render one HTML page.

The page is self-contained: CSS inline, figures as inline SVG, no script and
nothing fetched at view time, so it can go into a paper's supplement. Jinja2
renders it with autoescaping on; every user string (method, column and metric
names, titles) reaches the page as text.
"""

from __future__ import annotations

import importlib
from importlib import resources
from pathlib import Path

from vareval.errors import ArgumentError, VarevalError
from vareval.stats._checks import renamed_keywords

# Sections in page order. Core sections (repeated runs) raise on bad input; so do
# optional ones (other analyses) that were asked for. Only an optional section
# the report inferred by itself (extras entry marked "inferred", e.g. from a
# run store's design) turns a failure into a note on the page.
CORE = ("design", "selection", "summary", "paired")
OPTIONAL = (
    "significance", "tuning", "variance", "allocation", "aggregate", "ranking", "dominance",
    "sequential", "evals",
)
LAST = ("best_of_k",)
REPEATED = ("training", "data-sampling")


def _as_columns(value, name: str) -> list[str] | None:
    if value is None:
        return None
    cols = [value] if isinstance(value, str) else [str(c) for c in value]
    if not cols or any(not c for c in cols):
        raise ArgumentError(f"`{name}` must name one or more columns; got {value!r}.")
    return cols


def _report_iv(
    df, metric, by, pair_on, confidence, repeated, baseline, test_set, n_resamples,
    best_of_k_resamples,
):
    import pandas as pd

    from vareval.data import groups
    from vareval.data.design import analysed_rows
    from vareval.data.runs import usable_runs
    from vareval.stats._checks import as_confidence, as_positive_int

    if not isinstance(df, pd.DataFrame):
        raise ArgumentError(
            f"`df` must be a pandas DataFrame; got {type(df).__name__}."
        )
    if not isinstance(metric, str) or not metric:
        raise ArgumentError(f"`metric` must be a column name; got {metric!r}.")
    by = _as_columns(by, "by")
    if by is None:
        raise ArgumentError("`by` must name the method column(s); got None.")
    pair_on = _as_columns(pair_on, "pair_on")
    confidence = as_confidence(confidence)
    if repeated not in (None, *REPEATED):
        raise ArgumentError(
            f"`repeated` must be 'training', 'data-sampling' or None; got {repeated!r}."
        )
    if test_set not in (None, True, False):
        raise ArgumentError(
            f"`test_set_held_out` must be True, False or None; got {test_set!r}."
        )
    used, runs = usable_runs(df, metric, by, min_runs=2)
    # identical reruns are one row from here on; differing ones stay for the mixed model
    used = analysed_rows(used, metric, by, keep_reruns=True)
    table = groups(analysed_rows(used, metric, by), metric, by, min_runs=2)
    if baseline is not None and str(baseline) not in table:
        raise ArgumentError(
            f"`baseline` {baseline!r} is not a method; methods: "
            + ", ".join(map(repr, table))
            + "."
        )
    if pair_on and len(table) < 2:
        raise ArgumentError(
            f"`pair_on` pairs runs across methods, but the table has one method "
            f"({next(iter(table))!r}); drop it or name the method column(s) in `by`."
        )
    n_resamples = as_positive_int(n_resamples, "n_resamples")
    best_of_k_resamples = as_positive_int(best_of_k_resamples, "best_of_k_resamples")
    sizes = n_resamples, best_of_k_resamples
    return used, runs, by, pair_on, confidence, table, sizes


def _declared_repeated(df) -> str | None:
    """What a store's declaration (read from it, or carried by a file) says was repeated."""
    from vareval.data.design import split_of

    split = split_of(df.attrs.get("spec") or {}).split
    return {"re-drawn": "data-sampling", "fixed": "training"}.get(split)


def _failures(df):
    """The rows of runs whose ``status`` is ``failed`` (None without a status column)."""
    if "status" not in getattr(df, "columns", ()):
        return None
    return df[df["status"].astype(str) == "failed"]


def collect(
    df,
    *,
    metric: str,
    by,
    pair_on=None,
    higher_is_better: bool = True,
    confidence: float = 0.95,
    title: str | None = None,
    source: str = "",
    test_set_held_out: bool | None = None,
    repeated: str | None = None,
    test_fraction: float | None = None,
    train_fraction: float | None = None,
    search_effort: str | None = None,
    baseline: str | None = None,
    seed: int = 0,
    n_resamples: int = 10_000,
    best_of_k_resamples: int = 20_000,
    randomness: list[dict] | None = None,
    extras: dict | None = None,
):
    """Validate the inputs and build every section the data supports.

    Returns
    -------
    (ReportData, list of Section, list of ChecklistItem, list of str)
        The data, the sections in page order, the filled checklist, and notes
        on optional sections that could not be built.
    """
    from vareval.report.sections import checklist
    from vareval.report.sections._base import ReportData

    if (extras or {}).get("evals", {}).get("only"):
        return _collect_evals(extras, confidence, title, source, seed, n_resamples)
    if (extras or {}).get("selection") and hasattr(df, "columns"):
        from vareval.report.sections.selection import choose

        # the chosen configurations' results table replaces the search table
        df, extras = choose(df, metric, _as_columns(by, "by") or [], higher_is_better, extras)
    used, runs, by, pair_on, confidence, table, sizes = _report_iv(
        df,
        metric,
        by,
        pair_on,
        confidence,
        repeated,
        baseline,
        test_set_held_out,
        n_resamples,
        best_of_k_resamples,
    )
    data = ReportData(
        df=used,
        runs=runs,
        failures=_failures(df),
        metric=metric,
        by=by,
        groups=table,
        pair_on=pair_on,
        higher_is_better=bool(higher_is_better),
        confidence=confidence,
        title=title or f"vareval report: {metric}",
        source=source,
        test_set=test_set_held_out,
        repeated=repeated or _declared_repeated(df),
        repeated_given=repeated,
        test_fraction=test_fraction,
        train_fraction=train_fraction,
        search_effort=search_effort,
        baseline=None if baseline is None else str(baseline),
        seed=seed,
        n_resamples=sizes[0],
        best_of_k_resamples=sizes[1],
        randomness=randomness,
        extras=dict(extras or {}),
    )
    sections, notes = [], []
    for name in CORE + OPTIONAL + LAST:
        module = importlib.import_module(f"vareval.report.sections.{name}")
        spec = data.extras.get(name) or {}
        if name in OPTIONAL and spec and not spec.get("inferred"):
            try:
                section = module.build(data)
            except VarevalError as exc:
                raise type(exc)(
                    f"the {name} section cannot be built from the options given: {exc}"
                ) from None
        elif name in OPTIONAL:
            try:
                section = module.build(data)
            except Exception as exc:  # noqa: BLE001 - an inferred analysis must not sink the page
                kind = (
                    "" if isinstance(exc, VarevalError) else f"{type(exc).__name__}: "
                )
                notes.append(f"Section '{name}' was left out: {kind}{exc}")
                continue
        else:
            section = module.build(data)
        if section is not None:
            sections.append(section)
    return data, sections, checklist.build(data), notes


def _collect_evals(extras, confidence, title, source, seed, n_resamples):
    """The report of an eval (INPUT is a log of answers): the evals analysis alone.

    Its answers are not runs: per-method intervals over answers would contradict
    the evals section, so the run sections are not built.
    """
    from vareval.report.sections import checklist, evals
    from vareval.report.sections._base import ReportData
    from vareval.stats._checks import as_confidence, as_positive_int

    spec = extras["evals"]
    data = ReportData(
        df=spec["df"], metric=spec["metric"], by=["model"], groups={},
        confidence=as_confidence(confidence), title=title or f"vareval report: {spec['metric']}",
        source=source, seed=seed, n_resamples=as_positive_int(n_resamples, "n_resamples"),
        extras=dict(extras),
    )
    section = evals.build(data)
    items = [i for i in checklist.build(data) if i.topic.startswith("Eval")]
    return data, [section], items, []


def render(data, sections, checklist, notes) -> str:
    """Render the page with Jinja2 (autoescape on)."""
    import jinja2
    from markupsafe import Markup, escape

    import vareval

    template_text = (
        resources.files("vareval.report")
        .joinpath("templates/report.html.j2")
        .read_text("utf-8")
    )
    from vareval.plots._style import WIDTH, to_svg

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(template_text)
    for block in figures(sections):
        if not isinstance(block.svg, Markup):
            # produced and checked by plots._style.to_svg; the caption is escaped
            label = f'<svg aria-label="{escape(block.caption)}"'
            svg = to_svg(block.draw(width=WIDTH), block.name)
            block.svg = Markup(svg.replace("<svg", label, 1))
    n_runs = f"{len(data.df)} runs"
    planned = sum(c.planned for c in data.runs.values())
    if planned and planned != len(data.df):
        n_runs += f" of {planned} planned"
    subtitle = (
        f"{data.source or 'results table'} \u00b7 metric {data.metric!r} "
        f"({data.direction}) "
        f"\u00b7 {len(data.groups)} methods \u00b7 {n_runs} \u00b7 confidence "
        f"{100 * data.confidence:g}% \u00b7 random seed {data.seed}"
    )
    settings = (
        f"Simulations seeded with {data.seed}: up to {data.n_resamples:,} bootstrap "
        f"resamples per paired comparison, {data.best_of_k_resamples:,} simulated "
        "comparisons per k for the best-of-k illusion; the same input and seed give the "
        "same page."
    )
    return template.render(
        settings=settings,
        title=data.title,
        subtitle=subtitle,
        sections=sections,
        checklist=checklist,
        notes=notes,
        version=vareval.__version__,
    )


def figures(sections) -> list:
    """The figure blocks of the page, in page order (names unique on the page)."""
    blocks = [b for s in sections for b in s.blocks if b.kind == "figure"]
    names = [b.name for b in blocks]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise RuntimeError(f"figure names used twice on one page: {', '.join(doubled)}")
    return blocks


def figure_paths(sections, folder, format: str = "pdf") -> list[Path]:
    """The files :func:`export_figures` writes: ``folder/<name>.<format>``, in page order."""
    return [Path(folder) / f"{block.name}.{format}" for block in figures(sections)]


def export_figures(sections, folder, format: str = "pdf", width: float = 7.0) -> list[Path]:
    """Write every figure of the report to ``folder`` as ``<name>.<format>``.

    The same figures as the page, drawn ``width`` inches wide (3.3 for one
    column of a paper, 7 for a full page), as PDF, SVG or PNG. Returns the
    paths in page order.
    """
    from vareval.plots._style import FORMATS, check_width, save

    if format not in FORMATS:
        raise ArgumentError(f"`format` must be one of {', '.join(FORMATS)}; got {format!r}.")
    width = check_width(width)
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(
            f"figures folder {str(folder)!r} cannot be made: {exc.strerror or exc}."
        ) from None
    paths = []
    for block, path in zip(figures(sections), figure_paths(sections, folder, format), strict=True):
        try:
            save(block.draw(width=width), path, format)
        except OSError as exc:
            raise ArgumentError(
                f"figure {str(path)!r} cannot be written: {exc.strerror or exc}."
            ) from None
        paths.append(path)
    return paths


@renamed_keywords(n_boot="n_resamples", n_sim="best_of_k_resamples")
def build_report(df, **kwargs) -> str:
    """Build the HTML report of a results table and return it as a string.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per run; an optional ``status`` column (``done``, ``failed``,
        ``pending``, ``running``) says which runs failed, and the report
        counts them (:mod:`vareval.data.runs`).
    metric : str
        Column with the scores.
    by : str or list of str
        Column(s) naming the method.
    pair_on : str or list of str, optional
        Column(s) pairing runs across methods (seed, fold, ...). Enables the
        paired-differences and planning section.
    higher_is_better : bool, default True
        Direction of the metric (the best run is the maximum, or the minimum).
    confidence : float, default 0.95
        Level of every interval.
    title : str, optional
        Page title.
    source : str, optional
        Where the table came from (shown in the header).
    test_set_held_out : bool or None
        Whether the final test set stayed outside all modelling decisions;
        None (default) reports it as unknown.
    repeated : {'training', 'data-sampling'} or None
        What each repetition re-drew: only training randomness on fixed data,
        or the whole data-sampling pipeline; None: what a run store's
        declaration says (read from the store or carried by a file vareval
        wrote from it), else not stated. With 'data-sampling' the paired
        differences use the corrected resampled t test, which needs
        ``test_fraction``.
    test_fraction : float, optional
        Share of the data in each re-drawn test split (default: a run
        store's ``test_fraction`` or ``test_size`` parameter).
    train_fraction : float, optional
        Share of the data each model trained on (default: a run store's
        ``train_size``, else ``1 - test - val_size``, else ``1 - test``).
    search_effort : str, optional
        The hyper-parameter search behind the final runs, in words.
    baseline : str, optional
        The method every other is compared with (default: the first).
    seed : int, default 0
        Seed of the simulations (best-of-k, bootstrap, ranking).
    n_resamples : int, default 10_000
        Bootstrap resamples per paired comparison.
    best_of_k_resamples : int, default 20_000
        Simulated comparisons per ``k`` for the best-of-k illusion.
    randomness : list of dict, optional
        Sources of randomness (``name``, ``varied``, ``note``), e.g. from a run store.
    extras : dict, optional
        Inputs for the optional sections (per-item predictions, search
        iterations, a mixed-model specification); see ``docs/report.md``.
        ``{"selection": {"validation": "val_acc"}}`` (optional keys ``unit``,
        ``config``, ``ties``, ``higher_is_better``, as in
        :func:`vareval.select`) treats ``df`` as a search table: each unit's
        configuration is chosen on the validation metric and every section
        reads the chosen configurations' ``metric`` (the test metric).

    Returns
    -------
    str
        The HTML page.
    """
    return render(*collect(df, **kwargs))


@renamed_keywords(n_boot="n_resamples", n_sim="best_of_k_resamples")
def write_report(path, df, **kwargs) -> Path:
    """Build the report and write it to ``path`` (UTF-8); return the path."""
    path = _html_path(path)
    return write_html(path, build_report(df, **kwargs))


def _html_path(path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ArgumentError(f"report path {str(path)!r} must end in .html or .htm.")
    return path


def write_html(path, html: str) -> Path:
    """Write a rendered page to ``path``; a path that cannot be written is an error."""
    path = _html_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ArgumentError(
            f"report path {str(path)!r} cannot be written: {exc.strerror or exc}."
        ) from None
    return path
