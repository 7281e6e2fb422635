"""Commands for running experiments: run, status, export, replay."""

from __future__ import annotations

from pathlib import Path

import click

from vareval.cli._common import check_output, emit, json_option, writing
from vareval.cli._paths import output_path
from vareval.cli.sequential import cs_option

_ENGINES = ("local", "serial", "ray", "slurm")
_FORMATS = ("csv", "tsv", "parquet", "jsonl")


def _slurm_flags(f):
    """The slurm engine's flags (over the spec's [slurm] table; docs/runner.md, "Clusters")."""
    flags = [
        ("--partition", str, "Slurm partition (--engine slurm)."),
        ("--time", str, "Slurm time limit per array task, e.g. 01:00:00."),
        ("--gpus-per-trial", int, "GPUs per trial (Slurm: --gres=gpu:N per array task)."),
        ("--cpus-per-trial", int, "CPUs per trial (Slurm: --cpus-per-task)."),
        ("--mem", str, "Slurm memory per array task, e.g. 8G."),
        ("--trials-per-task", int, "Trials run one after another in each Slurm array task."),
        ("--max-attempts", int, "Slurm: times a trial is submitted before it fails [3]."),
    ]
    for name, kind, text in reversed(flags):
        f = click.option(name, type=kind, default=None, help=text)(f)
    return click.option(
        "--sbatch-arg", "sbatch_args", multiple=True,
        help="An extra sbatch argument (repeatable), e.g. --sbatch-arg=--qos=high.",
    )(f)


def _store_argument(f):
    return click.argument("store", type=click.Path(dir_okay=False))(f)


@click.command()
@click.argument("experiment", type=click.Path(dir_okay=False), required=False)
@click.option(
    "--store",
    required=True,
    type=output_path("store"),
    help="SQLite store to write (created, resumed or grown if it exists).",
)
@click.option("--seeds", type=int, default=None, help="Grow the design to this many seeds.")
@click.option(
    "--configs", type=int, default=None, help="Grow to this many configurations (per seed)."
)
@click.option("--reruns", type=int, default=None, help="Grow to this many reruns.")
@click.option(
    "--accept-code-change",
    is_flag=True,
    help="Run although the trial's code changed since the store's last run.",
)
@click.option(
    "--engine",
    type=click.Choice(_ENGINES),
    default="local",
    show_default=True,
    help="serial: in process (debugging); local: worker processes; ray: Ray; "
    "slurm: Slurm job arrays.",
)
@click.option(
    "--address",
    default=None,
    help="Ray cluster address (--engine ray); "
    "without it a local Ray instance is started.",
)
@click.option(
    "--workers", type=int, default=None, help="Parallel workers [default: cores]."
)
@click.option(
    "--gpus",
    default=None,
    help="GPU devices, one set per running trial ([resources] gpus_per_trial, default "
    "1): 0,1,2,3 or all (nvidia-smi -L); local and serial engines.",
)
@click.option("--retry-failed", is_flag=True, help="Run failed trials again.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option(
    "--stale-after",
    type=float,
    default=120.0,
    show_default=True,
    help="Seconds without heartbeat before another runner's claim counts as crashed.",
)
@click.option(
    "--until-settled",
    is_flag=True,
    help="Sequential mode: add seeds batch by batch until a confidence sequence for "
    "--compare settles the difference (see docs/sequential.md).",
)
@click.option("--compare", default=None, help="With --until-settled: experiments a,b (a - b).")
@click.option("--metric", default=None, help="With --until-settled: the metric compared.")
@click.option("--bounds", default=None,
              help="With --until-settled: the metric's bounds low,high (0,1 for an accuracy).")
@cs_option
@click.option("--margin", type=float, default=None,
              help="With --until-settled: stop as equivalent inside +-margin.")
@click.option("--budget", type=int, default=100, show_default=True,
              help="With --until-settled: the most seeds (pairs) to run.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="With --until-settled: the sequence's simultaneous level.")
@click.option("--batch", type=int, default=10, show_default=True,
              help="With --until-settled: seeds added between looks.")
@_slurm_flags
def run(
    experiment,
    store,
    seeds,
    configs,
    reruns,
    accept_code_change,
    engine,
    address,
    workers,
    gpus,
    retry_failed,
    no_progress,
    stale_after,
    until_settled,
    compare,
    metric,
    bounds,
    cs_method,
    margin,
    budget,
    confidence,
    batch,
    sbatch_args,
    **slurm,
):
    """Run (or resume) EXPERIMENT.toml into a SQLite store, one row per trial.

    Done trials are skipped, failed ones are retried only with --retry-failed,
    and no trial is ever written twice. More seeds, configurations or reruns
    (--seeds 46, or an edited EXPERIMENT.toml) append trials and leave the
    existing ones exactly as they are; without EXPERIMENT the store's own
    declaration is used. Exit status 2 if a trial failed.
    """
    from vareval.data.store_table import sqlite_errors
    from vareval.errors import ExperimentError
    from vareval.experiment.runner import run as run_experiment
    from vareval.experiment.store import Store

    slurm = {k: v for k, v in slurm.items() if v is not None}
    if sbatch_args:
        slurm["sbatch_args"] = list(sbatch_args)
    if until_settled:
        return _run_until_settled(
            experiment, store, compare, metric, bounds, cs_method, margin, budget, confidence,
            batch,
            dict(accept_code_change=accept_code_change, engine=engine, workers=workers,
                 address=address, retry_failed=retry_failed, gpus=gpus,
                 progress=False if no_progress else None, stale_after=stale_after,
                 slurm=slurm),
            seeds or configs or reruns,
        )
    if compare or metric:
        raise ExperimentError("--compare and --metric belong to --until-settled; add it.")
    report = run_experiment(
        experiment,
        store,
        seeds=seeds,
        configs=configs,
        reruns=reruns,
        accept_code_change=accept_code_change,
        engine=engine,
        workers=workers,
        address=address,
        retry_failed=retry_failed,
        progress=False if no_progress else None,
        stale_after=stale_after,
        slurm=slurm,
        gpus=gpus,
    )
    c = report.counts
    _say_larger_store(store, seeds=seeds, configs=configs, reruns=reruns)
    if report.added:
        click.echo(f"grew the store by {report.added} trials (existing trials unchanged).")
    for line in report.changes:
        click.echo(f"note: since the store's last run: {line}")
    click.echo(
        f"ran {report.ran} trials ({report.done} done, {report.failed} failed) in "
        f"{report.seconds:.1f} s on the {report.engine} engine ({report.workers} "
        f"workers{_resources_note(report)}); "
        f"{report.skipped} already done."
    )
    click.echo(
        f"store {store}: {report.trials} trials, {c['done']} done, {c['failed']} "
        "failed, "
        f"{c['pending']} pending, {c['running']} running (entropy {report.entropy})."
    )
    reruns = _reruns_payload(store)
    if reruns:
        click.echo(f"reruns: {_reruns_text(reruns)}.")
    if report.not_written:
        click.echo(
            f"note: {report.not_written} results were not written: another runner "
            "had taken their trials back."
        )
    for host, pid, n in report.held_elsewhere:
        click.echo(
            f"note: {n} trials are still running under the runner with pid {pid} on "
            f"host {host}; it writes them, or, if it died, the next `vareval run` on "
            "this store runs them again."
        )
    if report.failed:
        with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
            first = st.failures(1)[0]
        raise ExperimentError(
            f"{report.failed} of {report.ran} trials failed; first: trial "
            f"{first['id']} "
            f"({first['experiment']}, seed {first['seed']}, {first['config']}, rerun "
            f"{first['rerun']}): {first['error']}; see `vareval status {store}`, "
            "then rerun "
            "with --retry-failed."
        )


def _resources_note(report) -> str:
    """``, 1 thread and GPU 0|1 per trial`` for the run's summary line."""
    parts = [f"{report.threads} thread{'s' * (report.threads != 1)}"] if report.threads else []
    if report.slots:
        parts.append(f"GPU {' | '.join(report.slots)}")
    return f", {' and '.join(parts)} per trial" if parts and report.ran else ""


def _run_until_settled(experiment, store, compare, metric, bounds, cs_method, margin, budget,
                       confidence, batch, options, grows):
    from vareval.cli.sequential import parse_bounds, parse_pair, render
    from vareval.errors import ExperimentError
    from vareval.experiment.sequential import run_until_settled

    if compare is None or metric is None:
        raise ExperimentError("--until-settled needs --compare a,b and --metric.")
    if grows:
        raise ExperimentError(
            "--until-settled manages the seeds itself (up to --budget); drop --seeds, "
            "--configs and --reruns."
        )

    def look(cs):
        click.echo(
            f"look at {cs.n[-1]} pairs: estimate {cs.estimate[-1]:+.4g}, sequence "
            f"[{cs.low[-1]:+.4g}, {cs.high[-1]:+.4g}]"
        )

    r = run_until_settled(
        experiment, store, compare=parse_pair(compare, "--compare"), metric=metric,
        bounds=parse_bounds(bounds), method=cs_method, margin=margin, budget=budget,
        confidence=confidence, batch=batch, on_look=look, **options,
    )
    title = (
        f"{metric}: {r.a} - {r.b} over {r.pairs} paired seeds; ran {r.trials_run} trials "
        f"(budget {r.budget} seeds)"
    )
    click.echo(render(r.sequence, title, tuple(r.sequence.looks)))
    if r.incomplete:
        click.echo(
            f"note: {len(r.incomplete)} seeds left out (a trial failed or is unfinished): "
            f"{', '.join(map(str, r.incomplete[:10]))}; see `vareval status {store}`."
        )
    click.echo(f"stopped: {r.reason}; the store records the sequence and keeps every trial.")


def _reruns_payload(store) -> dict:
    """Per metric, how the store's reruns are read (:func:`vareval.data.design.reruns_of`).

    Empty when no (method, seed, configuration) cell holds two done reruns.
    """
    from vareval.data.design import reruns_of
    from vareval.data.store_table import read_store_table

    df = read_store_table(store)
    out = {}
    for metric in df.attrs.get("metrics") or []:
        r = reruns_of(df, metric, "experiment")
        if r.cells:
            out[metric] = {
                "cells": r.cells, "identical": r.cells - r.differ, "differ": r.differ,
                "mode": r.mode, "read_as": r.read_as, "statement": r.statement(),
            }  # fmt: skip
    return out


def _reruns_text(reruns: dict) -> str:
    """``accuracy identical in 24 of 24 cells (analysed once); ...``."""
    how = {
        "once": "nondeterminism 0; analysed once",
        "nested": "nondeterminism: nested in each cell",
        "replications": "independent reruns: replications",
    }
    return "; ".join(
        f"{m} identical in {r['identical']} of {r['cells']} cells, differing in "
        f"{r['differ']} ({how.get(r['read_as'], r['read_as'])})"
        for m, r in reruns.items()
    )


def _status_payload(store) -> dict:
    from vareval.data.store_table import sqlite_errors
    from vareval.errors import ExperimentError
    from vareval.experiment.store import Store

    with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
        spec = st.spec()
        if spec is None:
            raise ExperimentError(f"store '{store}' holds no experiment yet.")
        counts = st.counts()
        per = st.con.execute(
            "SELECT experiment, status, count(*) FROM trials GROUP BY experiment, "
            "status "
            "ORDER BY min(id)"
        ).fetchall()
        timing = st.con.execute(
            "SELECT avg(finished - started), sum(finished - started) FROM trials "
            "WHERE status = 'done'"
        ).fetchone()
        failures = st.failures(10)
        if spec.command is not None:  # a script's failure is explained by its stderr
            for f in failures:
                f["stderr"] = st.trial(f["id"])["traceback"]
        last_run = st.provenance()
    experiments: dict[str, dict] = {}
    for exp, status, n in per:
        experiments.setdefault(
            exp, dict.fromkeys(("done", "failed", "pending", "running"), 0)
        )
        experiments[exp][status] = n
    return {
        "store": str(store),
        "name": spec.name,
        "trial": spec.trial,
        "factors": {k: list(v) for k, v in spec.factors.items()},
        "seeds": spec.seeds,
        "configs": spec.configs,
        "nested": spec.nested,
        "reruns": spec.reruns,
        "rerun_mode": spec.rerun_mode,
        "sources": list(spec.sources),
        "fixed": list(spec.fixed),
        "entropy": spec.entropy,
        "trials": sum(counts.values()),
        "counts": counts,
        "experiments": experiments,
        "mean_trial_seconds": timing[0],
        "total_trial_seconds": timing[1],
        "failures": failures,
        "last_run": last_run,
        "reruns_read": _reruns_payload(store) if counts.get("done") else {},
        "spaces": {
            "shared": list(spec.space),
            **{
                f"{f}={lev}": list(sp)
                for f, levels in spec.level_spaces.items()
                for lev, sp in levels.items()
            },
        },
    }


def _status_text(p: dict) -> str:
    factors = " x ".join(f"{k} ({len(v)})" for k, v in p["factors"].items())
    fixed = f"; fixed: {', '.join(p['fixed'])}" if p["fixed"] else ""
    c = p["counts"]
    lines = [
        f"store        {p['store']}",
        f"experiment   {p['name']}  (trial {p['trial']})",
        f"design       {factors} x {p['seeds']} seeds x {p['configs']} configs "
        f"({'nested in seed' if p['nested'] else 'shared'}) x {p['reruns']} reruns "
        f"(rerun_mode {p['rerun_mode']})",
        f"randomness   {', '.join(p['sources'])}{fixed}; entropy {p['entropy']}",
        f"trials       {p['trials']}: {c['done']} done, {c['failed']} failed, "
        f"{c['pending']} pending, {c['running']} running",
    ]
    if p.get("reruns_read"):
        lines.append(f"reruns       {_reruns_text(p['reruns_read'])}")
    if p["mean_trial_seconds"] is not None:
        lines.append(
            f"trial time   mean {p['mean_trial_seconds']:.3g} s, "
            f"total {p['total_trial_seconds']:.3g} s"
        )
    if len(p["spaces"]) > 1:
        lines.append(
            "spaces       "
            + "; ".join(f"{k}: {', '.join(v) or '-'}" for k, v in p["spaces"].items())
        )
    if p["last_run"]:
        lines.append(f"last run     {_provenance_line(p['last_run'])}")
    width = max([10] + [len(e) for e in p["experiments"]])
    lines += [
        "",
        f"{'experiment':<{width}}  {'done':>6}  {'failed':>6}  {'pending':>7}  "
        f"{'running':>7}",
    ]
    for exp, n in p["experiments"].items():
        lines.append(
            f"{exp:<{width}}  {n['done']:>6}  {n['failed']:>6}  {n['pending']:>7}  "
            f"{n['running']:>7}"
        )
    if p["failures"]:
        lines += ["", f"failed trials (first {len(p['failures'])}):"]
        for f in p["failures"]:
            lines.append(
                f"  trial {f['id']} ({f['experiment']}, seed {f['seed']}, "
                f"{f['config']}, rerun {f['rerun']}): {f['error']}"
            )
            tail = (f.get("stderr") or "").splitlines()[-STDERR_SHOWN:]
            if tail:
                lines.append(f"    stderr (last {len(tail)} lines; all kept: --json):")
                lines += [f"    | {ln}" for ln in tail]
    return "\n".join(lines)


STDERR_SHOWN = 10  # lines of a failed command's stderr in the text status


def _say_larger_store(store, **asked) -> None:
    """A note when --seeds, --configs or --reruns ask for less than the store holds."""
    from vareval.experiment.store import Store

    with Store(store, readonly=True) as st:
        spec = st.spec()
    for name, n in asked.items():
        has = getattr(spec, name, None)
        if n is not None and has is not None and has > n:
            click.echo(
                f"note: --{name} {n}: the store already has {has} {name}; a store only grows, "
                f"so all {has} are kept (use --where to analyse fewer)."
            )


@click.command()
@_store_argument
@json_option
def status(store, as_json):
    """Progress of a run store: trials per status and per experiment, first failures."""
    payload = _status_payload(store)
    emit(as_json, payload, _status_text(payload))


@click.command()
@_store_argument
@click.option(
    "--format", "fmt", type=click.Choice(_FORMATS), default=None,
    help="Table format [default: from the -o file's extension, else csv].",
)
@click.option(
    "-o",
    "--output",
    type=output_path(),
    default=None,
    help="Output file, the store's design beside it [default: standard output, without the "
    "design; required for parquet].",
)
@click.option(
    "--done-only",
    is_flag=True,
    help="Only finished trials (default: every trial, with its status).",
)
@click.option(
    "--curves",
    is_flag=True,
    help="Export the learning curves (trial.report): one row per trial and step.",
)
def export(store, fmt, output, done_only, curves):
    """Export a run store as a tidy table, its design with it.

    One row per trial; one column per factor, configuration key and metric
    (a parameter a trial's search space lacks is left empty). With --curves,
    one row per (trial, step) and a column per reported metric. The store's
    declaration (seeds, nesting, reruns, split and its sizes) travels with an
    -o file: in a Parquet file's metadata, beside a text table as
    FILE.design.json; every vareval command reading the file uses it (standard
    output has no room for it: use -o).
    """
    from vareval.data.io import write_table
    from vareval.data.store_table import sqlite_errors
    from vareval.errors import ExperimentError
    from vareval.experiment.store import Store

    check_output(output, "-o")
    if fmt is None:  # from the file's extension (x.parquet), else CSV (also for /dev/stdout)
        suffix = Path(output).suffix.lower().lstrip(".") if output else ""
        fmt = {"pq": "parquet", "tab": "tsv", "ndjson": "jsonl"}.get(suffix, suffix)
        fmt = fmt if fmt in _FORMATS else "csv"
    with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
        if curves:
            df = st.curves()
            if done_only:
                done = set(st.frame(status="done")["trial_id"])
                df = df[df["trial_id"].isin(done)].reset_index(drop=True)
        else:
            df = st.frame(status="done" if done_only else None)
        spec = st.spec()
        if spec is not None:  # the design travels with the table
            df.attrs["spec"] = spec.to_dict()
    with writing(output, "-o"):
        text = write_table(df, output, fmt)
    if text is not None:
        click.echo(text, nl=False)


@click.command()
@_store_argument
@click.argument("trial_id", type=int)
@json_option
def replay(store, trial_id, as_json):
    """Run one stored trial again from its recorded streams and compare the metrics."""
    from vareval.errors import ExperimentError
    from vareval.experiment.runner import replay as replay_trial

    r = replay_trial(store, trial_id)
    lines = [f"trial {r.trial_id}: replay {r.status}"]
    for k in sorted(set(r.stored) | set(r.replayed)):
        a, b = r.stored.get(k), r.replayed.get(k)
        lines.append(f"  {k:<16} stored {a!r:<24} replayed {b!r}")
    lines += [f"  since the run: {d}" for d in r.differences]
    if r.comparable is False:
        lines.append("trial code changed since the run: replay not comparable")
    elif r.identical:
        lines.append(
            "bit-identical"
            if r.comparable
            else "bit-identical (the store keeps no provenance: code not checked)"
        )
    else:
        lines.append("NOT identical")
    emit(as_json, r.to_dict(), "\n".join(lines))
    if r.status != "done":
        raise ExperimentError(f"replay of trial {trial_id} failed: {r.error}")


def _provenance_line(record: dict) -> str:
    """One line of a run's provenance: code hash, git state, Python, numpy, host."""
    git = record.get("git")
    where = f"git {git['commit'][:10]}{' (dirty)' if git['dirty'] else ''}, " if git else ""
    numpy = record.get("packages", {}).get("numpy", "?")
    return (
        f"trial code {record['trial']['hash'][:12]}, {where}Python {record['python']}, "
        f"numpy {numpy}, host {record['host']} ({record['cpu']}"
        f"{', ' + ', '.join(record['gpus']) if record.get('gpus') else ''})"
    )


# column -> option; config_index pairs the models' configurations where each model has
# its own space (their labels then name different settings: forest/s0_c0, svc/s0_c0)
_GROWS = {"seed": "seeds", "config": "configs", "config_index": "configs", "rerun": "reruns"}


def grow_command(store, pair_on, k: int) -> dict:
    """The ``vareval run`` command that grows ``store`` to ``k`` pairing units.

    Returns ``{"command", "message"}``; ``command`` is None when the store
    already has ``k`` units or the pairing column is not a design dimension.
    """
    from vareval.data.store_table import sqlite_errors
    from vareval.errors import ExperimentError
    from vareval.experiment.store import Store

    with Store(store, readonly=True) as st, sqlite_errors(store, ExperimentError):
        spec = st.spec()
    if spec is None:
        raise ExperimentError(f"store '{store}' holds no experiment yet.")
    option, target = _grow_target(spec, list(pair_on), k)
    if option is None:
        return {
            "command": None,
            "message": f"pairs are ({', '.join(pair_on)}); only seed, config and rerun "
            "columns of a store say which option of `vareval run` grows them.",
        }
    have = getattr(spec, option)
    if have >= target:
        return {
            "command": None,
            "message": f"store {store} already has {have} {option} "
            f"(>= {target} for {k} pairs).",
        }
    import shlex

    command = f"vareval run --store {shlex.quote(str(store))} --{option} {target}"
    return {
        "command": command,
        "message": f"{k} pairs: grow the store from {have} to {target} {option} "
        f"({(target - have) * spec.n_trials // have} more trials):\n  {command}",
    }


def _grow_target(spec, pair_on: list, k: int):
    """Which design size (seeds, configs or reruns) gives ``k`` pairing units, and to what."""
    import math

    if not pair_on or any(c not in _GROWS for c in pair_on):
        return None, None
    if "seed" in pair_on:  # units per seed: its (nested) configurations and reruns
        per = math.prod(getattr(spec, _GROWS[c]) for c in pair_on if c != "seed")
        return "seeds", math.ceil(k / per)
    if pair_on in (["config"], ["config_index"]) and not spec.nested:
        return "configs", k
    if pair_on == ["rerun"]:
        return "reruns", k
    return None, None


def demo_section() -> str:
    """Run a tiny re-seeding experiment into a temporary store and show its status."""
    import tempfile
    from pathlib import Path

    from vareval.experiment.runner import run as run_experiment
    from vareval.experiment.spec import Distribution, ExperimentSpec

    spec = ExperimentSpec(
        name="demo-logistic",
        trial="vareval.experiment._demo:logistic_trial",
        factors={"model": ["logistic"], "optimizer": ["sgd", "momentum"]},
        seeds=3,
        configs=2,
        reruns=2,
        space={"lr": Distribution("log-uniform", low=0.01, high=0.5)},
        sources=("data_split", "init", "batch_order"),
        fixed=("data_split",),
        entropy=20261129,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.db"
        report = run_experiment(spec, path, engine="serial", progress=False)
        text = _status_text(_status_payload(path)).replace(str(path), "demo.db")
    return (
        "== Run the experiment (vareval run / status) ==\n"
        f"ran {report.ran} trials in {report.seconds:.2f} s (serial engine)\n" + text
    )


COMMANDS = [run, status, export, replay]
