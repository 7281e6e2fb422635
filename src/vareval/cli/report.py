"""``vareval report``: one self-contained HTML page of what the data supports."""

from __future__ import annotations

import click

from vareval.cli._common import (
    baseline_option,
    by_option,
    confidence_option,
    emit,
    json_option,
    lower_is_better_option,
    metric_option,
    needs,
    pair_on_option,
    paired_test_options,
    seed_option,
    split_columns,
    system_option,
)
from vareval.cli._paths import output_path

STORE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
DEMO_FOLDER = "vareval-demo"  # where `vareval demo` writes report.html


def _read_input(path: str, columns=None):
    """Read a results file, or a run store when the runner's reader is installed.

    ``columns`` (names, or a :class:`_Columns` choosing from the header) are the
    file's columns to read; None reads every column.

    Returns
    -------
    (DataFrame, dict)
        The table and what the store says about the experiment (empty for a file).
    """
    from pathlib import Path

    from vareval.errors import DataError

    if _is_answers(path):  # the report of an eval is the evals analysis
        from vareval.cli.evals import read_answers

        return read_answers([path]), {"evals_input": True}
    if Path(path).suffix.lower() not in STORE_SUFFIXES:
        from vareval.data.io import read_table

        # a file vareval wrote from a store carries its declaration
        df = read_table(path, columns=columns)
        if _ANSWERS <= set(map(str, df.columns)):
            return df, {"evals_input": True}
        return df, store_context(df.attrs.get("spec") or {})
    read_store_table = _store_reader()
    if read_store_table is None:
        raise DataError(
            f"file '{path}' looks like a run store, but this vareval cannot read "
            "stores (vareval.data.store_table is missing); export it to CSV first."
        )
    df = read_store_table(path, status="all")  # failed trials are listed with their error
    df = _with_stderr(path, df)
    return df, {**store_context(df.attrs.get("spec") or {}), **_store_sequences(path)}


class _Columns:
    """The columns of a results file the report reads, chosen from its header.

    The report reads the columns its options name, the design's columns (a
    store table's design and bookkeeping columns, ``status``, ``task``, a
    selection's columns and those a carried declaration names) and no other,
    so a wide file costs what those columns cost; the names of the others are
    kept (``unread``) for the page to list. Every column is read from a file
    that carries a store's declaration (each column of a store's table has a
    role on the page), from a table of answers (the evals analysis), and when
    an option names a column the file lacks, so the error lists what is there.
    """

    def __init__(self, flags):
        self.flags, self.unread = list(flags), []

    def __call__(self, names, spec):
        from vareval.cli._common import _results_columns
        from vareval.report.sections.design import STORE_BOOKKEEPING

        if spec or _ANSWERS <= set(map(str, names)):
            return None
        chosen = _results_columns(names, spec, flags=self.flags, where=None,
                                  optional=[*STORE_BOOKKEEPING, "task"])
        self.unread = [] if chosen is None else [n for n in names if n not in chosen]
        return chosen


def _flag_columns(metric, by, pair_on, random_effects, fixed, nested, task, select_on,
                  select_unit, select_config) -> list[str]:
    """The columns of INPUT the report's options name."""
    named = [metric, by, pair_on, random_effects, fixed, task, (nested or "").replace(":", ",")]
    if select_on:
        named += [select_on, select_unit, select_config]
    # split leniently: a malformed list is refused where its option is read, as before
    return [c.strip() for v in named if v for c in v.split(",") if c.strip()]


def _with_stderr(path, df):
    """A failed command trial's error followed by the end of its stderr (kept in the store)."""
    from vareval.experiment.store import Store

    spec = df.attrs.get("spec") or {}
    failed = df.index[df["status"] == "failed"]
    if not isinstance(spec.get("trial"), dict) or not len(failed):
        return df
    shown = REPORT_STDERR_LINES
    with Store(path, readonly=True) as st:
        for i in failed:
            tail = (st.trial(int(df.at[i, "trial_id"]))["traceback"] or "").splitlines()
            if tail:
                df.at[i, "error"] = (
                    f"{df.at[i, 'error']}\nstderr, last {min(shown, len(tail))} lines:\n"
                    + "\n".join(tail[-shown:])
                )
    return df


REPORT_STDERR_LINES = 20  # of the 50 the store keeps; the report cuts an error at 2000 chars

# The columns of `vareval evals import`: a table of answers, not of runs.
_ANSWERS = {"model", "question", "status", "error", "log"}


def _is_answers(path) -> bool:
    """An inspect_ai or lm-evaluation-harness log (read as `vareval evals` reads it)."""
    from pathlib import Path

    from vareval.data.importers.evals import is_eval_log

    return Path(path).is_file() and is_eval_log(path)


def _store_sequences(path) -> dict:
    """The sequential runs a store records, for the report's sequential section."""
    from vareval.experiment.store import Store

    with Store(path, readonly=True) as st:
        records = st.sequences()
    return {"sequential": {"records": records, "inferred": True}} if records else {}


def _search_spec(path, bounds, metric, by, used) -> dict:
    """The tuning section's input: the search table, its bounds and columns.

    The table is read as ``vareval tuning-curve`` reads it: the ``used``
    columns (its score and method columns) and the design's.
    """
    import functools
    from pathlib import Path

    from vareval.cli._common import _results_columns
    from vareval.data.io import read_table
    from vareval.errors import ArgumentError

    if not bounds:
        raise ArgumentError(
            "--search needs --bounds A,B: the score's bounds, e.g. 0,1 for accuracy."
        )
    try:
        lo, hi = (float(v) for v in bounds.split(","))
    except ValueError:
        raise ArgumentError(
            f"--bounds must be two comma-separated numbers A,B; got {bounds!r}."
        ) from None
    columns = functools.partial(_results_columns, flags=used, where=None)
    spec = {"df": read_table(path, columns=columns), "bounds": (lo, hi),
            "source": Path(path).name}
    if metric:
        spec["metric"] = metric
    if by:
        spec["by"] = split_columns(by)
    return spec


def _evals_spec(files, metric, cluster, errors, first=None) -> dict:
    """The evals section's input: the answers, read as ``vareval evals`` reads them.

    ``first``: the report's INPUT when it is itself an eval (then the report is the
    evals analysis alone), read already, before ``files``.
    """
    from pathlib import Path

    import pandas as pd

    from vareval.cli.evals import read_answers, score_column

    table = read_answers(files) if files else None
    if first is not None:
        scores = list(first.attrs.get("scores", []))
        if table is not None:
            scores += [c for c in table.attrs.get("scores", []) if c not in scores]
        table = first if table is None else pd.concat([first, table], ignore_index=True)
        table.attrs["scores"] = scores
    return {
        "df": table,
        "metric": score_column(table, metric, "--evals-metric"),
        "cluster": cluster,
        "sample": "epoch" if "epoch" in table.columns else None,
        "errors": errors,
        "source": ", ".join(Path(f).name for f in files),
    }


def _store_reader():
    """The runner's store reader, or None where it is not installed."""
    from vareval.report.sections._base import optional

    return optional("vareval.data.store_table", "read_store_table")


def store_context(spec: dict) -> dict:
    """What a run store's declaration says for the report.

    Sources of randomness (varied or held fixed), what a repetition re-drew
    (inferred from the source names: a varied source named like a data split
    or sample means the data pipeline was repeated), and the search effort.
    """
    sources = list(spec.get("sources") or [])
    fixed = set(spec.get("fixed") or [])
    out: dict = {}
    if sources:
        out["randomness"] = [
            {
                "name": s,
                "varied": s not in fixed,
                "note": "the same stream for every seed"
                if s in fixed
                else "its own SeedSequence stream per seed",
            }
            for s in sources
        ]
        from vareval.data.design import split_of

        split = split_of(spec).split  # what the declaration says, never a source's name
        if split != "unknown":
            out["repeated"] = "data-sampling" if split == "re-drawn" else "training"
    factors = spec.get("factors") or {}
    if factors or spec.get("seeds"):
        mode = spec.get("rerun_mode", "same")
        rerun_text = (
            "reruns repeat the same streams, so they measure nondeterminism only"
            if mode == "same"
            else "reruns draw fresh streams (independent replications)"
        )
        levels = " x ".join(f"{k} ({len(v)})" for k, v in factors.items())
        out["design_note"] = (
            f"Run store design ({spec.get('name') or 'unnamed experiment'}): "
            + (f"{levels} x " if levels else "")
            + f"{spec.get('seeds', '?')} seed(s) x {spec.get('configs', '?')} "
            + "configuration(s) "
            + ("per seed" if spec.get("nested", True) else "shared across seeds")
            + f" x {spec.get('reruns', 1)} rerun(s); {rerun_text}."
        )
    from vareval.data.store_table import parameter_names

    space = parameter_names(spec)  # shared and per-level parameters
    if space:
        out["column_roles"] = {str(k): "hyper-parameter" for k in space}
        out["column_roles"].update({str(k): "fixed factor" for k in factors})
    if spec.get("seeds", 0) > 1 and spec.get("configs", 0) > 1 and not spec.get("selected"):
        # the table's config labels name one setting each (store_table), so
        # (1|config) nests them in the model wherever each model has its own space
        out["variance"] = {"random": ["seed", "config"], "fixed": None, "inferred": True}
    if space:
        per = "per seed" if spec.get("nested", True) else "shared across seeds"
        out["search_effort"] = (
            f"{spec.get('configs', '?')} configuration(s) sampled {per} from a search "
            f"space over {', '.join(map(str, space))}, {spec.get('seeds', '?')} "
            "seed(s), "
            f"{spec.get('reruns', 1)} rerun(s) ({spec.get('rerun_mode', 'same')} "
            "streams), as declared in the run store"
        )
    return out


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    default="report.html",
    show_default=True,
    type=output_path(),
    help="HTML file to write.",
)
@metric_option
@by_option(
    required=False,
    help="Column(s) naming the method, comma-separated (a run store defaults to "
    "'experiment').",
)
@pair_on_option()
@baseline_option(help="Method the others are compared with.")
@lower_is_better_option
@confidence_option
@click.option("--title", default=None, help="Title of the page.")
@click.option(
    "--test-set-held-out/--test-set-reused",
    "test_set",
    default=None,
    help="Whether the final test set stayed outside all modelling decisions "
    "(default: reported as unknown).",
)
@paired_test_options
@click.option(
    "--search-effort", default=None, help="The hyper-parameter search, in words."
)
@seed_option(help="Seed of the simulations and resamples (printed with the output).")
@json_option
@click.option(
    "--random",
    "random_effects",
    default=None,
    help="Variance section: grouping column(s) with a random intercept "
    "(e.g. seed,config).",
)
@click.option("--fixed", default=None, help="Variance section: fixed factor column(s).")
@click.option("--nested", default=None, help="Variance section: e.g. config:seed.")
@click.option(
    "--search",
    "search_file",
    default=None,
    type=click.Path(dir_okay=False),
    help="Tuning-curve section: a table of random-search iterations (same --metric "
    "and --by unless --search-metric/--search-by).",
)
@click.option("--bounds", default=None, help="Tuning curves: the score's bounds, A,B.")
@click.option("--search-metric", default=None, help="Score column of the search table.")
@click.option("--search-by", default=None, help="Method column(s) of the search table.")
@click.option(
    "--predictions",
    default=None,
    type=click.Path(dir_okay=False),
    help="Significance section: a per-item predictions table (one row per test item).",
)
@click.option("--gold", default=None, help="Significance: the gold-label column.")
@system_option(help="Significance: system column(s); repeat or comma-separate.")
@click.option(
    "--item", default=None, help="Significance: item-id column (long format)."
)
@click.option("--task", default=None, help="Across-tasks section: the task column(s).")
@click.option(
    "--evals",
    "evals_files",
    multiple=True,
    type=click.Path(exists=True),
    help="Evals section: inspect_ai / lm-evaluation-harness logs or an answers table "
    "(repeat for several files); scores and paired differences as `vareval evals`.",
)
@click.option("--evals-metric", default=None, help="Evals: the score column (default: the "
              "log's scorer).")
@click.option("--evals-cluster", default=None, help="Evals: the cluster column (passage, ...).")
@click.option("--evals-errors", type=click.Choice(["refuse", "exclude", "incorrect"]),
              default="refuse", show_default=True, help="Evals: errored answers, as in "
              "`vareval evals --errors`.")
@click.option(
    "--select-on", default=None,
    help="Selection section: INPUT is a search table; choose each unit's configuration "
    "on this validation metric, as `vareval select` does, and report the chosen "
    "configurations' --metric (the test metric, never used to choose).",
)
@click.option("--select-unit", default="seed", show_default=True,
              help="Selection: column(s) of one replication unit, e.g. seed,rerun; '' for "
              "one choice per method.")
@click.option("--select-config", default="config", show_default=True,
              help="Selection: the configuration column.")
@click.option("--select-lower-is-better/--select-higher-is-better", "select_lower",
              default=None, help="Selection: the validation metric's direction (default: "
              "that of --metric).")
@click.option("--select-ties", type=click.Choice(("first", "average")), default="first",
              show_default=True, help="Selection: a tie in validation, as `vareval select "
              "--ties`.")
@click.option(
    "--figures",
    "figures_dir",
    default=None,
    type=output_path("folder"),
    help="Also write each figure of the report to this folder as a file "
    "(tuning-curves.pdf, ...), for a paper.",
)
@click.option(
    "--format",
    "figure_format",
    type=click.Choice(["svg", "pdf", "png"]),
    default="pdf",
    show_default=True,
    help="File format of --figures.",
)
@click.option(
    "--width",
    "figure_width",
    type=click.FloatRange(1.5, 20),
    default=7.0,
    show_default=True,
    help="Width of --figures in inches: 3.3 for one column of a paper, 7 for a page.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace figure files that already exist in --figures (refused without it).",
)
@click.option(
    "--prediction-metric",
    default="accuracy",
    show_default=True,
    help="Significance: metric on the test set (accuracy, macro-f1, ...).",
)
def report(
    input_path,
    output,
    metric,
    by,
    pair_on,
    baseline,
    lower_is_better,
    confidence,
    title,
    test_set,
    repeated,
    test_fraction,
    train_fraction,
    search_effort,
    seed,
    random_effects,
    fixed,
    nested,
    search_file,
    bounds,
    search_metric,
    search_by,
    predictions,
    gold,
    systems,
    item,
    prediction_metric,
    task,
    evals_files,
    evals_metric,
    evals_cluster,
    evals_errors,
    select_on,
    select_unit,
    select_config,
    select_lower,
    select_ties,
    figures_dir,
    figure_format,
    figure_width,
    force,
    as_json,
):
    """Write one self-contained HTML report of INPUT (a results file or a run store)."""
    from pathlib import Path

    from vareval.errors import ArgumentError
    from vareval.report.builder import _html_path, collect, render, write_html

    needs("--predictions FILE", predictions, "gold", "systems", "item", "prediction_metric")
    needs("--figures DIR", figures_dir, "figure_format", "figure_width", "force")
    columns = _Columns(_flag_columns(metric, by, pair_on, random_effects, fixed, nested, task,
                                     select_on, select_unit, select_config))
    df, context = _read_input(input_path, columns)
    if by is None:
        if not context:
            raise ArgumentError("--by is required: name the column(s) with the method.")
        by = "experiment"
    extras = {
        k: context[k] for k in ("design_note", "column_roles", "sequential") if k in context
    }
    if columns.unread and not select_on:  # a selection's table drops them in any case
        extras["unread_columns"] = columns.unread
    if random_effects:
        extras["variance"] = {
            "random": split_columns(random_effects),
            "fixed": split_columns(fixed) if fixed else None,
            "nested": nested,
        }
    elif context.get("variance"):
        extras["variance"] = context["variance"]
    if search_file:
        used = [search_metric or metric, *split_columns(search_by or by)]
        extras["tuning"] = _search_spec(search_file, bounds, search_metric, search_by, used)
    elif bounds:
        raise ArgumentError("--bounds needs --search FILE (the search iterations).")
    if predictions:
        named = [n for v in systems for n in split_columns(v)]
        # as `vareval significance` reads it: with the systems named, those and gold and item
        used = [c for c in (gold, item) if c] + named if named and gold else None
        extras["significance"] = {
            "df": _read_input(predictions, used)[0],
            "source": Path(predictions).name,
            "gold": gold,
            "systems": [n for v in systems for n in split_columns(v)] or None,
            "item": item,
            "metric": prediction_metric,
        }
    if task:
        extras["tasks"] = {"task": split_columns(task)}
    if context.get("evals_input"):
        extras["evals"] = {**_evals_spec(evals_files, evals_metric or metric, evals_cluster,
                                         evals_errors, first=df), "only": True}
        extras["evals"]["source"] = ", ".join([Path(input_path).name, *(
            Path(f).name for f in evals_files)])
    elif evals_files:
        extras["evals"] = _evals_spec(evals_files, evals_metric, evals_cluster, evals_errors)
    elif evals_metric or evals_cluster:
        raise ArgumentError("--evals-metric and --evals-cluster need --evals FILE.")
    if select_on:
        extras["selection"] = {
            "validation": select_on,
            "unit": split_columns(select_unit) if select_unit else [],
            "config": select_config,
            "ties": select_ties,
            "higher_is_better": None if select_lower is None else not select_lower,
        }
    elif (select_unit, select_config, select_lower, select_ties) != ("seed", "config", None,
                                                                    "first"):
        raise ArgumentError("--select-unit, --select-config, --select-lower-is-better and "
                            "--select-ties need --select-on VALIDATION_METRIC.")
    _html_path(output)  # refuse a wrong suffix before any work
    data, sections, checklist, notes = collect(
        df,
        metric=metric,
        by=split_columns(by),
        pair_on=split_columns(pair_on) if pair_on else None,
        baseline=baseline,
        higher_is_better=not lower_is_better,
        confidence=confidence,
        title=title,
        source=Path(input_path).name,
        test_set_held_out=test_set,
        repeated=repeated,  # the store's own declaration is read by the sections
        test_fraction=test_fraction,
        train_fraction=train_fraction,
        search_effort=search_effort or context.get("search_effort"),
        randomness=context.get("randomness"),
        seed=seed,
        extras=extras,
    )
    _no_figure_replaced(sections, figures_dir, figure_format, force)
    path = write_html(output, render(data, sections, checklist, notes))
    size = path.stat().st_size
    exported = []
    if figures_dir is not None:
        from vareval.report.builder import export_figures

        exported = export_figures(sections, figures_dir, figure_format, figure_width)
    payload = {
        "path": str(path),
        "bytes": size,
        "seed": seed,
        "sections": [s.id for s in sections] + ["checklist"],
        "checklist": [
            {"topic": i.topic, "status": i.status, "text": i.text} for i in checklist
        ],
        "notes": notes,
        "figures": [str(p) for p in exported],
    }
    lines = [
        f"wrote {path} ({size / 1024:.0f} KiB, seed {seed}): "
        + ", ".join(payload["sections"])
    ]
    if figures_dir is not None:
        lines.append(
            f"wrote {len(exported)} figures to {figures_dir} ({figure_format}, "
            f"{figure_width:g} in wide): " + ", ".join(p.name for p in exported)
        )
    lines += [f"note: {n}" for n in notes]
    lines += [
        f"to state: {i.topic.lower()} (see the checklist)"
        for i in checklist
        if i.status == "warn"
    ]
    emit(as_json, payload, "\n".join(lines))


def _no_figure_replaced(sections, folder, figure_format, force) -> None:
    """Refuse, before writing anything, to replace a figure file (unless ``force``)."""
    from vareval.data.validate import shown
    from vareval.errors import ArgumentError
    from vareval.report.builder import figure_paths

    if folder is None:
        return
    existing = [p.name for p in figure_paths(sections, folder, figure_format) if p.exists()]
    if existing and not force:
        raise ArgumentError(
            f"--figures {folder}: {shown(existing)} already exist(s) and would be replaced; "
            "pass --force to replace them, or choose another folder."
        )


def demo_section(folder=None) -> str:
    """Write the report for the bundled examples and say where it is.

    The page goes to ``folder`` (default ``./vareval-demo/``, or a temporary
    folder when that is not writable). Its main table is the bundled repeated
    runs; the bundled predictions, search iterations and re-seeding design
    feed the significance, tuning-curve and variance sections where those
    files and analyses are installed.
    """
    import tempfile
    import warnings
    from pathlib import Path

    from vareval.errors import VarevalWarning
    from vareval.report import write_report

    source, df, kwargs = _demo_data()
    folder = Path(folder) if folder is not None else Path(DEMO_FOLDER)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):  # writable? (no name a user's file could have)
            pass
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="vareval-demo-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)  # ties in hedwig's F1 scores
        path = write_report(folder / "report.html", df, source=source, **kwargs)
    import textwrap

    parts = ["every run drawn", "paired differences and the planning curve"]
    parts += [
        _DEMO_NAMES[e]
        for e in ("significance", "tuning", "variance")
        if e in kwargs["extras"]
    ]
    parts += ["the best-of-k illusion", "the what-to-report checklist"]
    body = (
        f"One self-contained HTML page for {source}: "
        + ", ".join(parts[:-1])
        + f" and {parts[-1]}. Open it in a browser:"
    )
    return (
        "== The report ==\n"
        + textwrap.fill(body, 88, break_on_hyphens=False)
        + f"\n  {path.resolve()}\n"
        + textwrap.fill(
            f"(vareval report {source} -o report.html {_demo_flags(kwargs)})",
            88,
            subsequent_indent=" ",
        )
    )


_DEMO_NAMES = {
    "significance": "significance tests on digits_predictions.csv",
    "tuning": "tuning curves on hedwig.tsv",
    "variance": "variance components on decovac_sim.csv",
}


def _demo_data():
    """The bundled examples: repeated runs, per-item predictions, a search, a design."""
    from vareval import datasets

    kwargs = {
        "metric": "accuracy",
        "by": ["method"],
        "pair_on": ["seed"],
        "title": "vareval demo: repeated runs on digits",
        "repeated": "data-sampling",  # a seed re-draws the split and the model
        "test_fraction": 0.3,  # examples/make_repeated_runs.py: test_size=0.3
        "extras": {
            "significance": {
                "df": datasets.load("digits_predictions.csv"),
                "gold": "gold",
                "item": "item",
                "metric": "accuracy",
                "source": "digits_predictions.csv",
            },
            "tuning": {
                "df": datasets.load("hedwig.tsv"),
                "metric": "f1",
                "by": ["model_name"],
                "bounds": (0.0, 1.0),
                "source": "hedwig.tsv",
            },
            "variance": {
                "df": datasets.load("decovac_sim.csv"),
                "metric": "accuracy",
                "fixed": ["model", "optimizer"],
                "random": ["seed", "config"],
                "source": "decovac_sim.csv (simulated)",
            },
        },
    }
    return "digits_runs.csv", datasets.load("digits_runs.csv"), kwargs


def _demo_flags(kwargs) -> str:
    flags = (
        f"--metric {kwargs['metric']} --by {','.join(kwargs['by'])} "
        f"--pair-on {','.join(kwargs['pair_on'])} --test "
        f"{ {'data-sampling': 'corrected', 'training': 't'}[kwargs['repeated']]} "
        f"--test-fraction {kwargs['test_fraction']}"
    )
    flags += " --predictions digits_predictions.csv --gold gold --item item"
    flags += " --search hedwig.tsv --search-metric f1 --search-by model_name --bounds 0,1"
    return flags


COMMANDS = [report]
