"""``vareval report``: one self-contained HTML page of what the data supports."""

from __future__ import annotations

import click

from vareval.cli._common import metric_option, split_columns

STORE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def _read_input(path: str):
    """Read a results file, or a run store when the runner's reader is installed.

    Returns
    -------
    (DataFrame, dict)
        The table and what the store says about the experiment (empty for a file).
    """
    from pathlib import Path

    from vareval.errors import DataError

    if Path(path).suffix.lower() not in STORE_SUFFIXES:
        from vareval.data import read_table

        return read_table(path), {}
    read_store_table = _store_reader()
    if read_store_table is None:
        raise DataError(
            f"file '{path}' looks like a run store, but this vareval cannot read "
            "stores "
            "(vareval.data.store_table is missing); export it to CSV first."
        )
    df = read_store_table(path)
    return df, store_context(df.attrs.get("spec") or {})


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
        data_like = [
            s for s in sources if any(w in s for w in ("data", "split", "sampl"))
        ]
        if data_like:
            varied = [s for s in data_like if s not in fixed]
            out["repeated"] = "data-sampling" if varied else "training"
    space = spec.get("space") or {}
    if space:
        per = "per seed" if spec.get("nested", True) else "shared across seeds"
        out["search_effort"] = (
            f"{spec.get('configs', '?')} configuration(s) sampled {per} from a search "
            f"space over {', '.join(map(str, space))}, {spec.get('seeds', '?')} "
            "seed(s), "
            f"{spec.get('reruns', 1)} rerun(s) ({spec.get('rerun_mode', 'same')} "
            "streams), "
            "as declared in the run store"
        )
    return out


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="HTML file to write.",
)
@metric_option
@click.option(
    "--by",
    default=None,
    help="Column(s) naming the method, comma-separated (a run store defaults to "
    "'experiment').",
)
@click.option("--pair-on", default=None, help="Column(s) pairing runs across methods.")
@click.option("--baseline", default=None, help="Method the others are compared with.")
@click.option(
    "--lower-is-better", is_flag=True, help="The best run is the smallest score."
)
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--title", default=None, help="Title of the page.")
@click.option(
    "--test-set-held-out/--test-set-reused",
    "test_set",
    default=None,
    help="Whether the final test set stayed outside all modelling decisions "
    "(default: reported as unknown).",
)
@click.option(
    "--repeated",
    type=click.Choice(["training", "data-sampling"]),
    default=None,
    help="What each run re-drew: training randomness on fixed data, or the whole "
    "data-sampling pipeline.",
)
@click.option(
    "--search-effort", default=None, help="The hyper-parameter search, in words."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Simulation seed.")
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
    search_effort,
    seed,
):
    """Write one self-contained HTML report of INPUT (a results file or a run store)."""
    from pathlib import Path

    from vareval.errors import ArgumentError
    from vareval.report import write_report

    df, context = _read_input(input_path)
    if by is None:
        if not context:
            raise ArgumentError("--by is required: name the column(s) with the method.")
        by = "experiment"
    path = write_report(
        output,
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
        repeated=repeated or context.get("repeated"),
        search_effort=search_effort or context.get("search_effort"),
        randomness=context.get("randomness"),
        seed=seed,
    )
    size = path.stat().st_size
    click.echo(f"wrote {path} ({size / 1024:.0f} KiB)")


def demo_section(folder=None) -> str:
    """Write the report for the bundled example runs and say where it is.

    The page goes to ``folder`` (default ``./vareval-demo/``, or a temporary
    folder when the working directory is not writable).
    """
    import tempfile
    from pathlib import Path

    from vareval.report import write_report

    source, df, kwargs = _demo_data()
    folder = Path(folder) if folder is not None else Path("vareval-demo")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="vareval-demo-"))
    path = write_report(folder / "report.html", df, source=source, **kwargs)
    return (
        "The report\n"
        f"  One self-contained HTML page with every run, the paired differences, the\n"
        f"  planning curve, the best-of-k illusion and the what-to-report checklist:\n"
        f"  {path.resolve()}\n"
        f"  (vareval report {source} -o report.html {_demo_flags(kwargs)})"
    )


def _demo_data():
    """The bundled repeated-runs example, or a small built-in table if it is absent."""
    import pandas as pd

    kwargs = {
        "metric": "accuracy",
        "by": ["method"],
        "pair_on": ["seed"],
        "title": "vareval demo: repeated runs on digits",
        "repeated": "training",
    }
    try:
        from vareval import datasets

        path = datasets.path("digits_runs.csv")
        return path.name, pd.read_csv(path), kwargs
    except (ImportError, AttributeError, FileNotFoundError):
        df = pd.DataFrame(
            {
                "method": ["A"] * 3 + ["B"] * 3,
                "seed": [0, 1, 2] * 2,
                "accuracy": [0.831, 0.847, 0.822, 0.818, 0.835, 0.809],
            }
        )
        return "the reference note's example", df, kwargs


def _demo_flags(kwargs) -> str:
    return (
        f"--metric {kwargs['metric']} --by {','.join(kwargs['by'])} "
        f"--pair-on {','.join(kwargs['pair_on'])} --repeated {kwargs['repeated']}"
    )


COMMANDS = [report]
