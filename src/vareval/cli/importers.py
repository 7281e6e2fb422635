"""``vareval import``: results logged by other tools, as a tidy table."""

from __future__ import annotations

import click

from vareval.cli._common import check_output, split_columns, writing
from vareval.cli._paths import output_path


def _output_option(f):
    return click.option(
        "-o", "--output", type=output_path(), default=None,
        help="Write the table here (.csv, .tsv, .jsonl, .parquet); default CSV on stdout.",
    )(f)


def _write(df, output) -> None:
    from vareval.data.io import write_table

    check_output(output, "-o")
    with writing(output, "-o"):
        text = write_table(df, output)
    if text is None:
        click.echo(f"wrote {output}: {len(df)} rows, {df.shape[1]} columns", err=True)
    else:
        click.echo(text, nl=False)


@click.group("import")
def import_():
    """Read results logged by Optuna, MLflow, W&B or TensorBoard as a tidy table.

    One row per run (TensorBoard: per run, tag and step); hyper-parameters
    become param.NAME columns and a `config` id, a logged seed the `seed`
    column, failed runs stay as rows with their `status`. Pipe the table into
    any analysis: `vareval import mlflow mlflow.db | vareval summarize - ...`.
    """


@import_.command("optuna")
@click.argument("storage")
@click.option("--study", default=None, help="The study's name (needed if the storage has several).")
@_output_option
def optuna(storage, study, output):
    """An Optuna study from STORAGE (sqlite:///FILE, a database URL or a journal file)."""
    from vareval.data.importers import from_optuna

    _write(from_optuna(storage, study), output)


@import_.command("mlflow")
@click.argument("tracking")
@click.option("--experiment", default=None, help="Only this experiment's runs (by name).")
@_output_option
def mlflow(tracking, experiment, output):
    """MLflow runs from TRACKING: sqlite:///mlflow.db, the database file, or an mlruns/ folder."""
    from vareval.data.importers import from_mlflow

    _write(from_mlflow(tracking, experiment), output)


@import_.command("wandb")
@click.argument("export", type=click.Path(dir_okay=False))
@click.option("--params", default=None,
              help="Columns that are hyper-parameters (default: the non-numeric ones).")
@_output_option
def wandb(export, params, output):
    """A Weights & Biases runs table exported as CSV (the UI's export or the API recipe's)."""
    from vareval.data.importers import from_wandb

    _write(from_wandb(export, split_columns(params) if params else None), output)


@import_.command("tensorboard")
@click.argument("logdir", type=click.Path(file_okay=False))
@click.option("--final", is_flag=True,
              help="One row per run with each tag's last value, instead of the curves.")
@_output_option
def tensorboard(logdir, final, output):
    """Scalars from the TensorBoard event files under LOGDIR (one run per folder)."""
    from vareval.data.importers import from_tensorboard

    _write(from_tensorboard(logdir, final), output)


COMMANDS = [import_]
