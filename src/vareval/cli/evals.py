"""``vareval evals``: language-model evaluations read straight from the harnesses' files.

One group, five commands, because every one reads the same input (answers:
inspect_ai logs, lm-evaluation-harness samples, or a table with score,
model and question columns) and names the same roles; ``significance``
compares systems on a test set by a metric of gold and predictions, which
these files do not hold:

- ``score``: each model's score with an interval from the right unit;
- ``compare``: every pair of models, paired, with adjusted p-values and tiers;
- ``pass-at-k``: pass@k per model, or ``--compare`` for the paired comparison;
- ``plan``: the SE, detectable effect and size of an eval, from a pilot;
- ``table``: the models x benchmarks table of scores that ``aggregate`` and ``rank`` read;
- ``import``: the files as one tidy table (CSV or JSON Lines).
"""

from __future__ import annotations

import functools

import click

from vareval.cli._common import (
    alpha_option,
    check_output,
    confidence_option,
    emit,
    json_option,
    resamples_option,
    seed_option,
    writing,
)
from vareval.cli._paths import output_path, write_figure
from vareval.errors import ArgumentError


def read_answers(files):
    """The files as one answers table; ``attrs["scores"]`` lists the score columns they name."""
    import pandas as pd

    from vareval.data.importers.evals import read_eval_log

    frames = [read_eval_log(f) for f in files]
    scores, groups = [], {}
    for df in frames:
        scores += [c for c in df.attrs.get("scores", []) if c not in scores]
        for g, tasks in (df.attrs.get("groups") or {}).items():
            groups[g] = list(dict.fromkeys([*groups.get(g, []), *tasks]))
    table = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    table.attrs["scores"] = scores
    if groups:
        table.attrs["groups"] = groups
    return table


def select_rows(table, tasks=(), filter_=None, where=None):
    """The rows of the named tasks and filter, then those where ``where`` holds."""
    from vareval.data import filters
    from vareval.data.validate import labels

    for flag, column, wanted in (("--task", "task", list(tasks)),
                                 ("--filter", "filter", [filter_] if filter_ else [])):
        if not wanted:
            continue
        if column not in table.columns:
            raise ArgumentError(f"{flag}: the answers have no {column!r} column to select by.")
        values = labels(table, column, column)
        found = list(dict.fromkeys(values))
        missing = [w for w in wanted if w not in found]
        if missing:
            raise ArgumentError(
                f"{flag}: no answers of {', '.join(map(repr, missing))} "
                f"(found: {', '.join(map(repr, found[:10]))})."
            )
        attrs = dict(table.attrs)
        table = table[values.isin(wanted).to_numpy()].reset_index(drop=True)
        table.attrs = attrs
    return filters.where(table, where) if where else table


def _answers_options(f):
    @click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
    @click.option("--metric", default=None,
                  help="Score column (default: the log's scorer or metric, when it has one).")
    @click.option("--model", default="model", show_default=True, help="Model column.")
    @click.option("--question", default="question", show_default=True, help="Question column.")
    @click.option("--cluster", default=None,
                  help="Cluster column (passage, document, subject): the independent unit.")
    @click.option("--sample", default=None,
                  help="Sample (epoch) column, checked unique per model and question "
                  "(default: 'epoch' when the table has it).")
    @click.option("--errors", type=click.Choice(["refuse", "exclude", "incorrect"]),
                  default="refuse", show_default=True,
                  help="Errored answers: an error, left out, or scored 0 (counted either way).")
    @click.option("--task", "tasks", multiple=True, metavar="NAME",
                  help="Keep the answers of this task (repeat for several).")
    @click.option("--filter", "filter_", default=None, metavar="NAME",
                  help="Keep the answers of this lm-evaluation-harness filter (strict-match ...).")
    @click.option("--where", default=None, metavar="EXPR",
                  help="Keep the rows where EXPR holds (pandas query syntax; labels are text: "
                  "\"run == '2024-05-01T10-00-00.1'\").")
    @functools.wraps(f)
    def command(files, metric, model, question, cluster, sample, errors, tasks, filter_, where,
                **kw):
        table = select_rows(read_answers(files), tasks, filter_, where)
        metric = score_column(table, metric)
        if sample is None and "epoch" in table.columns:
            sample = "epoch"
        roles = dict(metric=metric, model=model, question=question, cluster=cluster,
                     sample=sample, errors=errors)
        return f(table, roles, **kw)

    return command


def score_column(table, score, flag="--metric"):
    """The score column: ``score`` if given, else the one the files name (``flag`` in errors)."""
    if score is not None:
        return score
    found = table.attrs.get("scores", [])
    if len(found) == 1:
        return found[0]
    if found:
        raise ArgumentError(
            f"{flag}: the files hold several scores ({', '.join(found)}); name one."
        )
    raise ArgumentError(f"{flag}: name the score column (a plain table does not say which it is).")


def plot_option(what: str):
    """``--plot FILE``: write ``what`` as an image (PNG, SVG or PDF, by the suffix)."""
    return click.option("--plot", type=output_path(), default=None,
                        help=f"Write a figure of {what} (PNG, SVG or PDF).")


def _cluster_line(results, cluster) -> str:
    """The independent units behind ``results`` (one result or several: groups, filters)."""
    counts = sorted({r.n_clusters for r in (results if isinstance(results, list) else [results])})
    unit = f"clusters ({cluster})" if cluster else "questions (no --cluster)"
    if len(counts) == 1:
        return f"independent units: {counts[0]} {unit}"
    return f"independent units: {counts[0]} to {counts[-1]} {unit}, per row in 'clusters'"


def _fmt(x) -> str:
    from vareval._format import number

    return number(x)


@click.command("score")
@_answers_options
@click.option("--interval", default="auto", show_default=True,
              type=click.Choice(["auto", "wilson", "clopper-pearson", "bayes", "t", "bootstrap",
                                 "normal"]),
              help="Interval: auto is Wilson for 0/1 scores (effective size under clusters and "
              "samples), else t on clusters - 1 df.")
@confidence_option
@resamples_option(10_000, "Cluster-bootstrap resamples (--interval bootstrap).")
@seed_option()
@click.option("--groups", "by_group", is_flag=True,
              help="A score per lm-evaluation-harness group (mmlu, mmlu_stem ...: the "
              "results' group_subtasks), every question of its tasks weighed equally.")
@plot_option("each model's score with its interval and the naive CLT one")
@json_option
def score(table, roles, interval, confidence, resamples, seed, by_group, plot, as_json):
    """Each model's score with an interval that counts the right unit.

    Several lm-evaluation-harness filters give one score per filter, each on its
    own answers (--filter keeps one).
    """
    from vareval.data.evals import eval_scores
    from vareval.data.tables import table_text

    check_output(plot, "--plot", plot=True)
    result = eval_scores(table, **roles, interval=interval, confidence=confidence,
                         n_resamples=resamples, rng=seed, groups=by_group or None)
    if plot:
        write_figure(result.plot(), plot, "--plot")
    frame = result.to_frame()
    every = list(result.results.values())
    lines = [result.title, table_text(frame, index=False), "",
             f"{_cluster_line(every, roles['cluster'])}; interval {every[0].interval}; "
             "naive = CLT over every answer, shown to compare"]
    payload = {"title": result.title, "seed": seed}
    if by_group:  # {group: {"tasks": [...], "models" or "filters": ...}}
        payload["groups"] = {g: {"tasks": table.attrs["groups"][g]} for g in frame["group"]}
        for key, r in result.results.items():
            _nest(payload["groups"][key[0]], key[1:], r.to_dict())
    else:
        for key, r in result.results.items():
            _nest(payload, key if isinstance(key, tuple) else (key,), r.to_dict())
    emit(as_json, payload, "\n".join(lines))


def _nest(target: dict, key: tuple, value: dict) -> dict:
    """``models: {model: score}``, or ``filters: {filter: {model: score}}`` for (model, filter)."""
    if len(key) == 1:
        target.setdefault("models", {})[key[0]] = value
    else:
        target.setdefault("filters", {}).setdefault(key[1], {})[key[0]] = value
    return target


def _comparison_text(r, cluster, what="difference") -> list[str]:
    from vareval.data.tables import table_text

    frame = r.to_frame()
    spans = [f"[{_fmt(lo)}, {_fmt(hi)}]" for lo, hi in zip(r.low, r.high, strict=True)]
    frame.insert(2, "interval", spans)
    frame = frame.drop(columns=["low", "high"])
    tiers = " | ".join(
        ", ".join(m for m, t in zip(r.models, r.tier, strict=False) if t == level)
        for level in sorted(set(r.tier.tolist()))
    )
    scores = ", ".join(f"{m} {_fmt(s)}" for m, s in zip(r.models, r.scores, strict=False))
    how = ("the interval inverts the test: it excludes 0 exactly when p < "
           f"{1 - r.confidence:.2g}" if r.agree else
           f"interval ({r.interval}) and test ({r.test}) are separate procedures and may "
           "disagree")
    lines = [
        f"{what} A - B, {r.confidence:.0%} interval ({r.interval}); test: {r.test}; "
        f"p adjusted by {r.correction}",
        table_text(frame, index=False),
        "",
        f"scores: {scores}",
        f"tiers (adjusted p >= alpha {r.alpha:g}: the data cannot separate models within a "
        f"tier): {tiers}",
        f"{_cluster_line(r, cluster)}; {r.n_questions} questions"
        + (f"; {r.n_resamples:,} resamples" if r.n_resamples else ""),
        how,
    ]
    return lines + _floor_lines(r)


def _floor_lines(r) -> list[str]:
    """The smallest p the design allows, when it is above alpha (before or after adjustment)."""
    import numpy as np

    floor = float(np.min(r.min_pvalue))
    pairs = len(r.a)
    adjusted = floor * pairs if r.correction in ("holm", "bonferroni") else floor
    if floor >= r.alpha:
        return [f"smallest attainable p on this design: {_fmt(floor)} (> alpha {r.alpha:g}): "
                f"no pair can be separated by the {r.test} test"]
    if adjusted >= r.alpha:
        return [f"smallest attainable p on this design: {_fmt(floor)}; adjusted by "
                f"{r.correction} over {pairs} pairs at least {_fmt(min(adjusted, 1.0))} "
                f"(not below alpha {r.alpha:g}): no pair can be separated"]
    return []


@click.command("compare")
@_answers_options
@click.option("--test", default="auto", show_default=True,
              type=click.Choice(["auto", "newcombe", "permutation", "bootstrap", "t",
                                 "mcnemar"]),
              help="auto: the test the interval inverts (newcombe for 0/1 scores, else t); "
              "permutation flips clusters' signs.")
@click.option("--interval", default="auto", show_default=True,
              type=click.Choice(["auto", "newcombe", "t", "bootstrap", "permutation"]),
              help="auto: the interval that inverts the test (with --test auto: Newcombe's "
              "for 0/1 scores, else t).")
@click.option("--correction", default="holm", show_default=True,
              type=click.Choice(["holm", "bh", "bonferroni", "none"]),
              help="Adjustment of the p-values over pairs (bh: Benjamini-Hochberg).")
@alpha_option()
@confidence_option
@resamples_option(10_000, "Resamples of the permutation test or bootstrap.")
@seed_option()
@plot_option("the matrix of differences, row minus column, a star where the adjusted p < "
             "alpha (two models: the difference with its interval)")
@json_option
def compare(table, roles, test, interval, correction, alpha, confidence, resamples, seed, plot,
            as_json):
    """Every pair of models on the same questions: paired differences, p and tiers."""
    from vareval.data.evals import compare_evals

    check_output(plot, "--plot", plot=True)
    r = compare_evals(table, **roles, test=test, interval=interval, correction=correction,
                      alpha=alpha, confidence=confidence, n_resamples=resamples, rng=seed,
                      progress=None)
    if plot:
        write_figure(r.plot(metric=roles["metric"]), plot, "--plot")
    emit(as_json, {"seed": seed, **r.to_dict()}, "\n".join(_comparison_text(r, roles["cluster"])))


@click.command("pass-at-k")
@_answers_options
@click.option("-k", "k", type=int, required=True, help="Samples allowed per question.")
@click.option("--compare", "paired", is_flag=True,
              help="Compare the models' pass@k, paired on questions (permutation test).")
@click.option("--correction", default="holm", show_default=True,
              type=click.Choice(["holm", "bh", "bonferroni", "none"]), help="With --compare.")
@alpha_option()
@confidence_option
@resamples_option(10_000, "Permutation resamples (with --compare).")
@seed_option()
@json_option
def pass_at_k(table, roles, k, paired, correction, alpha, confidence, resamples, seed, as_json):
    """pass@k (Chen et al. 2021's unbiased estimator) with an interval over questions."""
    from vareval.data.evals import compare_evals_pass_at_k, eval_pass_at_k
    from vareval.data.tables import table_text

    if paired:
        r = compare_evals_pass_at_k(table, k=k, **roles, correction=correction, alpha=alpha,
                                    confidence=confidence, n_resamples=resamples, rng=seed)
        text = _comparison_text(r, roles["cluster"], what=f"pass@{k} difference")
        emit(as_json, {"seed": seed, **r.to_dict()}, "\n".join(text))
        return
    r = eval_pass_at_k(table, k=k, **roles, confidence=confidence)
    text = [r.title, table_text(r.to_frame(), index=False), "",
            _cluster_line(list(r.results.values()), roles["cluster"])]
    emit(as_json, {"title": r.title, "models": r.to_dict()}, "\n".join(text))


@click.command("plan")
@_answers_options
@click.option("--of", "of", default=None, help="The model to plan for (default: the first).")
@click.option("--baseline", default=None, help="Plan the paired comparison with this model.")
@click.option("--target-se", type=float, default=None, help="The SE wanted.")
@click.option("--effect", type=float, default=None, help="The effect to detect.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Power at --effect.")
@alpha_option()
@click.option("--questions", "n_questions", type=int, default=None,
              help="Planned number of questions (default: the pilot's).")
@click.option("--samples", type=float, default=None,
              help="Planned samples per question (default: the pilot's).")
@json_option
def plan(table, roles, of, baseline, target_se, effect, power, alpha, n_questions, samples,
         as_json):
    """From a pilot: the SE, minimum detectable effect and questions needed."""
    from vareval.data.evals import plan_evals

    p = plan_evals(table, **roles, of=of, baseline=baseline, target_se=target_se, effect=effect,
                   power=power, alpha=alpha, n_questions=n_questions, samples=samples)
    what = f"the difference with {baseline}" if baseline else "the score"
    lines = [
        f"pilot: {p.pilot_questions} questions, {_fmt(p.pilot_samples)} samples each, "
        f"SE of {what} {_fmt(p.pilot_se)}",
        f"on {p.n_questions} questions x {_fmt(p.samples)} samples: SE {_fmt(p.se)}, "
        f"minimum detectable effect {_fmt(p.mde)} (power {p.power:g}, alpha {p.alpha:g})",
    ]
    if p.questions_for_se is not None:
        lines.append(f"questions for SE {_fmt(p.target_se)}: {p.questions_for_se:,}")
        if p.samples_for_se is not None:
            more = ("more samples alone cannot reach it" if p.samples_for_se == float("inf")
                    else f"{_fmt(p.samples_for_se)} samples per question on these questions")
            lines.append(f"  or {more}")
    if p.questions_for_power is not None:
        lines.append(f"questions to detect {_fmt(p.effect)} with power {p.power:g}: "
                     f"{p.questions_for_power:,}")
    if not p.reaches_alpha:
        lines.append(
            f"on {p.n_clusters} independent unit(s) an exact sign-flip test (--test "
            f"permutation) cannot reach alpha {p.alpha:g} whatever the data (smallest p "
            f"{_fmt(p.min_pvalue)}): plan more clusters"
        )
    emit(as_json, p.to_dict(), "\n".join(lines))


@click.command("table")
@_answers_options
@click.option("--by", "by", default="task", show_default=True,
              help="Task (benchmark) column: one row per model and task (or a subject "
              "column, for a per-subject breakdown).")
@click.option("--output", "-o", type=output_path(), default=None,
              help="Write the table here (.csv, .tsv, .jsonl); default: CSV on standard output.")
@click.option("--interval", default="auto", show_default=True,
              type=click.Choice(["auto", "wilson", "clopper-pearson", "bayes", "t", "bootstrap",
                                 "normal"]), help="The interval of each score, as in score.")
@confidence_option
@resamples_option(10_000, "Cluster-bootstrap resamples (--interval bootstrap).")
@seed_option()
def table_(table, roles, by, output, interval, confidence, resamples, seed):
    """The models x benchmarks table that aggregate and rank read: a row per model and task.

    Each row is the model's score on the task (column named by --metric) with its
    interval, SE and unit, as score computes them; then, e.g.
    `vareval rank table.csv --metric match --by model --task task`.
    """
    from vareval.data.evals import eval_table
    from vareval.data.io import write_table

    check_output(output, "--output")
    result = eval_table(table, **roles, task=by, interval=interval, confidence=confidence,
                        n_resamples=resamples, rng=seed)
    frame = result.to_frame()
    with writing(output, "--output"):
        text = write_table(frame, output)
    if text is not None:
        click.echo(text, nl=False)
    else:
        m, t = frame["model"].nunique(), frame["task"].nunique()
        click.echo(f"wrote {len(frame)} rows ({m} model{'s' * (m > 1)} x {t} "
                   f"task{'s' * (t > 1)}) to {output}", err=True)


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--output", "-o", type=output_path(), default=None,
              help="Write the table here (.csv, .tsv, .jsonl); default: CSV on standard output.")
def import_(files, output):
    """The logs as one tidy table: a row per answer (sample and epoch), errored ones too."""
    from vareval.data.io import write_table

    check_output(output, "--output")
    table = read_answers(files)
    with writing(output, "--output"):
        text = write_table(table, output)
    if text is not None:
        click.echo(text, nl=False)
    else:
        failed = int((table["status"] == "failed").sum()) if "status" in table else 0
        click.echo(f"wrote {len(table)} answers ({failed} errored) to {output}", err=True)


@click.group("evals")
def evals():
    """Language-model evaluations: scores, paired comparisons, pass@k, planning.

    FILES are inspect_ai logs (.eval, .json), lm-evaluation-harness --log_samples
    output (samples_*.jsonl or their folder) or tables with one row per answer.
    """


for _command in (score, compare, pass_at_k, plan, table_, import_):
    evals.add_command(_command)

COMMANDS = [evals]
