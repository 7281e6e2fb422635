"""Language-model evaluations on a table: one row per answer.

Columns by role: the *metric* (the score: 0/1, partial credit or any number), the
*model*, the *question*, and optionally the *cluster* of the question
(passage, document, subject), the *sample* (epoch: the k-th answer to the
same question) and a *status* column. Rows of one model that share a
question are samples of it. Errored answers (``status`` ``failed``, as the
importers write them) are never dropped silently: ``errors="refuse"``
(default) names them, ``"exclude"`` leaves them out and ``"incorrect"``
scores them 0; both say how many, per model.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
from scipy import special

from vareval.data.tables import ResultTable
from vareval.data.validate import _rows, labels, metric_values, require_columns
from vareval.errors import DataError, VarevalWarning
from vareval.stats._checks import keyword_only, renamed_keywords
from vareval.stats.evals import compare_models, compare_pass_at_k, eval_score, pass_at_k, plan_eval
from vareval.stats.evals.compare import model_questions

ERRORS = ("refuse", "exclude", "incorrect")


@dataclasses.dataclass(frozen=True)
class Answers:
    """A validated answers table as arrays (labels as text)."""

    score: np.ndarray
    model: np.ndarray
    question: np.ndarray
    cluster: np.ndarray | None
    errored: dict  # model -> errored answers excluded or scored 0
    errors: str
    dropped_questions: int = 0

    @property
    def models(self) -> list[str]:
        """The models, in order of first appearance."""
        return list(pd.unique(self.model))

    def rows_of(self, model: str) -> np.ndarray:
        """A mask of the rows of ``model``."""
        return self.model == model

    def note(self) -> str:
        """The errored answers in one line ('' if none)."""
        if not any(self.errored.values()):
            return ""
        how = "excluded" if self.errors == "exclude" else "scored 0"
        each = ", ".join(f"{m}: {n}" for m, n in self.errored.items() if n)
        text = f"errored answers {how}: {sum(self.errored.values())} ({each})"
        if self.dropped_questions:
            text += f"; {self.dropped_questions} question(s) left out of the comparison"
        return text


def _errored(df: pd.DataFrame) -> np.ndarray:
    """Rows the source marked as errored: status 'failed' (the importers' word)."""
    if "status" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    return labels(df, "status", "status").isin(["failed", "error"]).to_numpy()


def where_rows(df: pd.DataFrame, mask: np.ndarray) -> str:
    """Rows named as a reader finds them: file, sample and epoch when the logs say, else rows."""
    if not {"log", "question"} <= set(df.columns):
        return f"data rows {_rows(mask)}"
    picked = df.loc[np.asarray(mask, dtype=bool)]
    named = [
        f"{r['log']} sample {r['question']}"
        + (f" epoch {r['epoch']}" if "epoch" in df.columns and pd.notna(r["epoch"]) else "")
        + (f" filter {r['filter']}" if r.get("filter") not in (None, "none") else "")
        for _, r in picked.head(5).iterrows()
    ]
    more = f" ... ({len(picked)} in all)" if len(picked) > 5 else ""
    return ", ".join(named) + more


def _one_each(df: pd.DataFrame, column: str, within: str | None, what: str, hint: str) -> None:
    """Refuse rows that mix several values of ``column`` (per ``within``) as one unit."""
    if column not in df.columns or column == within or (column == "run" and "log" not in df):
        return  # a plain table's own 'run' column may count samples
    values = labels(df, column, column)
    groups = [(None, values)] if within is None else list(
        values.groupby(labels(df, within, within).to_numpy(), sort=False))
    for name, vals in groups:
        found = list(pd.unique(vals))
        if len(found) > 1:
            owner = "the rows hold" if name is None else f"{within} {name!r} holds"
            shown = ", ".join(map(repr, found[:4])) + (" ..." if len(found) > 4 else "")
            raise DataError(f"{owner} {len(found)} {what} ({shown}); {hint}")


def _question_key(df: pd.DataFrame, question: str) -> np.ndarray:
    """The question's identity: (task, question) when the rows hold several tasks."""
    if "task" in df.columns and question != "task" and df["task"].nunique(dropna=False) > 1:
        return labels(df, ["task", question], "question").to_numpy(dtype=object)
    return labels(df, question, "question").to_numpy(dtype=object)


def _refuse_repeats(df: pd.DataFrame, model: str, question: str, sample: str | None) -> None:
    """One answer per (model, run, task, question, filter, sample): a repeat is refused."""
    if sample is None and "filter" not in df.columns:
        return  # a plain table: rows sharing a question are its samples
    key = [c for c in (model, "run", "task", question, "filter", sample)
           if c is not None and c in df.columns]
    dup = df.duplicated(subset=list(dict.fromkeys(key)), keep=False).to_numpy()
    if dup.any():
        raise DataError(
            f"{', '.join(dict.fromkeys(key))} repeat on {where_rows(df, dup)}: one answer "
            "logged twice (the same log given twice?); each answer must appear once."
        )


def _tasks_with(df: pd.DataFrame, metric: str, question: str) -> pd.DataFrame:
    """Leave out, aloud, the tasks that score other metrics (lm-eval folders mix them)."""
    if "task" not in df.columns or question == "task":
        return df
    tasks = labels(df, "task", "task")
    scored = (df[metric].notna() | _errored(df)).groupby(tasks.to_numpy(), sort=False).any()
    without = [str(t) for t in scored.index[~scored.to_numpy()]]
    if not without or len(without) == scored.size:
        return df
    warnings.warn(f"task(s) without {metric}, left out: {', '.join(without)}",
                  VarevalWarning, stacklevel=4)
    kept = df[~tasks.isin(without).to_numpy()].reset_index(drop=True)
    kept.attrs = dict(df.attrs)
    return kept


def _metric(table: pd.DataFrame, metric: str) -> np.ndarray:
    """The metric as floats; an empty cell is named by file and sample (no --dropna here)."""
    raw = pd.to_numeric(table[metric], errors="coerce").to_numpy(dtype=float)
    empty = (np.isnan(raw) & table[metric].isna().to_numpy()) | np.isinf(raw)
    if empty.any():
        raise DataError(
            f"metric column {metric!r} is empty or infinite on {where_rows(table, empty)} "
            "(answers not marked errored): choose a metric those rows have, or select rows "
            "with --task, --filter or --where."
        )
    return metric_values(table, metric)


def answers(
    df: pd.DataFrame,
    *,
    metric: str,
    model: str = "model",
    question: str = "question",
    cluster: str | None = None,
    sample: str | None = None,
    errors: str = "refuse",
) -> Answers:
    """Validate an answers table and return its arrays (see the module docstring).

    A question is keyed by (task, question) when the rows hold several tasks;
    rows of several lm-evaluation-harness filters, or of several runs of one
    model, are refused (each is its own score), and so is an answer logged twice.
    """
    if errors not in ERRORS:
        raise DataError(f"`errors` must be one of {', '.join(ERRORS)}; got {errors!r}.")
    require_columns(df, [metric], "metric")
    require_columns(df, [model], "model")
    require_columns(df, [question], "question")
    df = _tasks_with(df, metric, question)
    _one_each(df, "filter", "task" if "task" in df.columns else None,
              "lm-evaluation-harness filters",
              "each filter is its own score, as lm-evaluation-harness reports them: choose "
              "one (--filter NAME; in Python, select its rows).")
    _one_each(df, "run", model, "runs",
              "their answers would pool as samples of one question: keep one run "
              "(--where \"run == '...'\") or compare the runs (--model run).")
    _refuse_repeats(df, model, question, sample)
    bad = _errored(df)
    models = labels(df, model, "model").to_numpy(dtype=object)
    errored = {str(m): int((bad & (models == m)).sum()) for m in pd.unique(models)}
    if bad.any() and errors == "refuse":
        raise DataError(
            f"{int(bad.sum())} errored answer(s) (status 'failed': {where_rows(df, bad)}): "
            "set errors to 'exclude' (leave them out) or 'incorrect' (score them 0)."
        )
    keep = ~bad if errors == "exclude" else np.ones(len(df), dtype=bool)
    table = df.loc[keep]
    values = np.zeros(int(keep.sum()))
    fine = ~bad[keep]
    if fine.any():
        values[fine] = _metric(table.loc[fine], metric)
    qs = _question_key(table, question)
    cl = None if cluster is None else labels(table, cluster, "cluster").to_numpy(dtype=object)
    m = models[keep]
    if errors != "refuse" and bad.any():
        warnings.warn(
            Answers(values, m, qs, cl, errored, errors).note(), VarevalWarning, stacklevel=3
        )
    return Answers(score=values, model=m, question=qs, cluster=cl, errored=errored, errors=errors)


def _common_questions(a: Answers) -> Answers:
    """With errors='exclude', keep the questions every model still answers (counted)."""
    if a.errors != "exclude" or not any(a.errored.values()):
        return a
    frame = pd.DataFrame({"m": a.model, "q": a.question})
    per_q = frame.groupby("q", sort=False)["m"].nunique()
    full = per_q.index[per_q == len(a.models)]
    keep = np.isin(a.question, full.to_numpy())
    if full.size < per_q.size:
        warnings.warn(
            f"{per_q.size - full.size} question(s) lost an answer to an errored sample for some "
            "model and are left out of the comparison",
            VarevalWarning,
            stacklevel=3,
        )
    return dataclasses.replace(
        a,
        score=a.score[keep],
        model=a.model[keep],
        question=a.question[keep],
        cluster=None if a.cluster is None else a.cluster[keep],
        dropped_questions=int(per_q.size - full.size),
    )


def _cluster(a: Answers, sel):
    return None if a.cluster is None else a.cluster[sel]


def filters_of(df: pd.DataFrame) -> list[str]:
    """The lm-evaluation-harness filters scored separately: [] unless some task holds several.

    Every task must then hold the same filters (a filter's score spans the same tasks);
    otherwise the rows are refused, naming each task's filters.
    """
    if "filter" not in df.columns:
        return []
    values = labels(df, "filter", "filter")
    tasks = labels(df, "task", "task") if "task" in df.columns else pd.Series("", index=df.index)
    per_task = {str(t): list(pd.unique(v)) for t, v in values.groupby(tasks.to_numpy(),
                                                                       sort=False)}
    if all(len(f) == 1 for f in per_task.values()):
        return []
    if len({frozenset(f) for f in per_task.values()}) > 1:
        shown = "; ".join(f"{t}: {', '.join(f)}" for t, f in list(per_task.items())[:4])
        raise DataError(
            f"the tasks hold different lm-evaluation-harness filters ({shown}): a score per "
            "filter needs the same filters in every task; choose the tasks (--task) or one "
            "filter (--filter NAME; in Python, select the rows)."
        )
    return list(pd.unique(values))


@keyword_only("metric", "model", "question", "cluster", "sample")
@renamed_keywords(score="metric")
def eval_scores(
    df: pd.DataFrame,
    *,
    metric: str,
    model: str = "model",
    question: str = "question",
    cluster: str | None = None,
    sample: str | None = None,
    interval: str = "auto",
    confidence: float = 0.95,
    errors: str = "refuse",
    n_resamples: int = 10_000,
    rng=None,
    groups=None,
) -> ResultTable:
    """Each model's benchmark score with its interval (:func:`vareval.stats.evals.eval_score`).

    Returns a table keyed by model; the frame also shows the naive CLT
    interval (every answer independent) beside the default one. Rows of
    several lm-evaluation-harness filters (gsm8k's ``strict-match`` and
    ``flexible-extract``) give one score per model and filter, each on its own
    filter's answers, never pooled, as the harness reports them: the frame
    gains a ``filter`` column and the table is keyed by ``(model, filter)``.

    ``groups``: ``True`` for a score per lm-evaluation-harness group (the
    reader's ``df.attrs["groups"]``, from the results' ``group_subtasks``), or a
    mapping of group names to their tasks. Each group's score is the mean over
    the questions of its tasks (every question weighed equally: lm-eval's
    ``weight_by_size: true``, its default and MMLU's); the frame gains ``group``
    and ``tasks`` columns and the table is keyed by ``(group, model)`` (with the
    filter after the model when there are several).
    """
    if groups is not None and groups is not False:
        return _group_scores(df, groups, metric=metric, model=model, question=question,
                             cluster=cluster, sample=sample, interval=interval,
                             confidence=confidence, errors=errors, n_resamples=n_resamples,
                             rng=rng)
    require_columns(df, [metric], "metric")
    require_columns(df, [question], "question")
    df = _tasks_with(df, metric, question)
    kw = dict(metric=metric, model=model, question=question, cluster=cluster, sample=sample,
              interval=interval, confidence=confidence, errors=errors,
              n_resamples=n_resamples, rng=rng)
    names = filters_of(df)
    title = f"{metric}: each model's score, {confidence:.0%} interval"
    if not names:
        results, frame, note = _scores(df, **kw)
    else:
        values = labels(df, "filter", "filter").to_numpy()
        parts = {f: _scores(df[values == f], **kw) for f in names}
        results = {(m, f): r for f, part in parts.items() for m, r in part[0].items()}
        frame = pd.concat([p[1].assign(filter=f) for f, p in parts.items()], ignore_index=True)
        frame = frame[["model", "filter", *[c for c in frame if c not in ("model", "filter")]]]
        note = "; ".join(f"{f}: {p[2]}" for f, p in parts.items() if p[2])
        title = (f"{metric}: each model's score per lm-evaluation-harness filter "
                 f"({len(names)}, each on its own answers), {confidence:.0%} interval")
    if note:
        title += f" ({note})"
    return ResultTable(title=title, results=results, frame=frame)


def _group_scores(df, groups, **kw) -> ResultTable:
    """:func:`eval_scores` on each group's tasks (see its ``groups``)."""
    mapping = df.attrs.get("groups") if groups is True else groups
    if not mapping:
        raise DataError(
            "groups: these answers name no lm-evaluation-harness groups (its results_*.json "
            "holds 'group_subtasks' when a group task, such as mmlu, was run); give a mapping "
            "of group names to their tasks."
        )
    if not isinstance(mapping, dict):
        raise DataError(f"groups: expected True or a mapping of group names to task lists; "
                        f"got {type(mapping).__name__}.")
    require_columns(df, ["task"], "task")
    tasks = labels(df, "task", "task")
    found = set(tasks)
    require_columns(df, [kw["metric"]], "metric")
    parts, frames, without = {}, [], []
    for group, members in mapping.items():
        members = [str(t) for t in members]
        missing = [t for t in members if t not in found]
        if missing or not members:
            raise DataError(f"groups: group {group!r} names task(s) the answers do not hold "
                            f"({', '.join(map(repr, missing[:5])) or 'none given'}).")
        rows = df[tasks.isin(members).to_numpy()]
        if not (rows[kw["metric"]].notna() | _errored(rows)).any():
            without.append(str(group))  # its tasks score other metrics
            continue
        part = eval_scores(rows, **kw)
        parts[str(group)] = part
        frames.append(part.frame.assign(group=str(group), tasks=len(members)))
    if not parts:
        raise DataError(f"groups: no group has metric {kw['metric']!r} "
                        f"(groups: {', '.join(without)}).")
    if without:
        warnings.warn(f"group(s) without {kw['metric']}, left out: {', '.join(without)}",
                      VarevalWarning, stacklevel=3)
    results = {(g, *(k if isinstance(k, tuple) else (k,))): r
               for g, part in parts.items() for k, r in part.results.items()}
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[["group", "tasks", *[c for c in frame if c not in ("group", "tasks")]]]
    title = (f"{kw['metric']}: each model's score per group ({len(parts)} group(s), every "
             f"question weighed equally), {kw['confidence']:.0%} interval")
    return ResultTable(title=title, results=results, frame=frame)


def _scores(df, *, metric, model, question, cluster, sample, interval, confidence, errors,
            n_resamples, rng) -> tuple[dict, pd.DataFrame, str]:
    """The per-model scores of rows holding one filter: results, frame and errored note."""
    a = answers(df, metric=metric, model=model, question=question, cluster=cluster,
                   sample=sample, errors=errors)
    results, rows = {}, []
    z = special.ndtri(0.5 + confidence / 2)  # the naive CLT interval at the same level
    for m in a.models:
        sel = a.rows_of(m)
        r = eval_score(
            a.score[sel], a.question[sel], _cluster(a, sel), interval=interval,
            confidence=confidence, n_resamples=n_resamples, rng=rng,
        )
        results[m] = r
        half = z * r.se_naive
        rows.append({
            "model": m, "score": r.estimate, "low": r.low, "high": r.high, "se": r.se,
            "interval": r.interval, "questions": r.n_questions, "clusters": r.n_clusters,
            "samples_per_question": r.samples_per_question, "errored": a.errored.get(m, 0),
            "design_effect": r.design_effect, "naive_low": r.estimate - half,
            "naive_high": r.estimate + half,
        })
    return results, pd.DataFrame(rows), a.note()


@keyword_only("metric", "model", "question", "cluster", "sample")
@renamed_keywords(score="metric")
def compare_evals(
    df: pd.DataFrame,
    *,
    metric: str,
    model: str = "model",
    question: str = "question",
    cluster: str | None = None,
    sample: str | None = None,
    test: str = "auto",
    interval: str = "auto",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    errors: str = "refuse",
    n_resamples: int = 10_000,
    rng=None,
    progress=False,
):
    """Every pair of models on the same questions (:func:`vareval.stats.evals.compare_models`).

    ``progress`` (None: on a terminal only) shows a tqdm bar over the resamples.
    """
    a = _common_questions(answers(
        df, metric=metric, model=model, question=question, cluster=cluster, sample=sample,
        errors=errors,
    ))
    return compare_models(
        a.score, a.model.astype(str), a.question.astype(str),
        None if a.cluster is None else a.cluster.astype(str),
        test=test, interval=interval, correction=correction, alpha=alpha,
        confidence=confidence, n_resamples=n_resamples, rng=rng, progress=progress,
    )


@keyword_only("metric", "k", "model", "question", "cluster", "sample")
@renamed_keywords(score="metric")
def eval_pass_at_k(
    df: pd.DataFrame,
    *,
    metric: str,
    k: int,
    model: str = "model",
    question: str = "question",
    cluster: str | None = None,
    sample: str | None = None,
    confidence: float = 0.95,
    errors: str = "refuse",
) -> ResultTable:
    """Each model's pass@k (:func:`vareval.stats.evals.pass_at_k`)."""
    a = answers(df, metric=metric, model=model, question=question, cluster=cluster,
                   sample=sample, errors=errors)
    results = {
        m: pass_at_k(a.score[s], a.question[s], k, _cluster(a, s), confidence=confidence)
        for m in a.models
        for s in [a.rows_of(m)]
    }
    frame = pd.DataFrame([
        {"model": m, f"pass@{k}": r.estimate, "low": r.low, "high": r.high, "se": r.se,
         "questions": r.n_questions, "clusters": r.n_clusters, "min_samples": r.min_samples,
         "errored": a.errored.get(m, 0)}
        for m, r in results.items()
    ])
    title = f"{metric}: pass@{k}, {confidence:.0%} interval over questions"
    if a.note():
        title += f" ({a.note()})"
    return ResultTable(title=title, results=results, frame=frame)


@keyword_only("metric", "k", "model", "question", "cluster", "sample")
@renamed_keywords(score="metric")
def compare_evals_pass_at_k(
    df: pd.DataFrame, *, metric: str, k: int, model: str = "model", question: str = "question",
    cluster: str | None = None, sample: str | None = None, correction: str = "holm",
    alpha: float = 0.05, confidence: float = 0.95, errors: str = "refuse",
    n_resamples: int = 10_000, rng=None,
):
    """Paired comparison of models' pass@k (:func:`vareval.stats.evals.compare_pass_at_k`)."""
    a = _common_questions(answers(
        df, metric=metric, model=model, question=question, cluster=cluster, sample=sample,
        errors=errors,
    ))
    return compare_pass_at_k(
        a.score, a.model.astype(str), a.question.astype(str), k,
        None if a.cluster is None else a.cluster.astype(str), correction=correction,
        alpha=alpha, confidence=confidence, n_resamples=n_resamples, rng=rng,
    )


@keyword_only("metric", "model", "question", "cluster", "sample")
@renamed_keywords(score="metric")
def plan_evals(
    df: pd.DataFrame,
    *,
    metric: str,
    model: str = "model",
    question: str = "question",
    cluster: str | None = None,
    sample: str | None = None,
    of: str | None = None,
    baseline: str | None = None,
    target_se: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    n_questions: int | None = None,
    samples: float | None = None,
    errors: str = "refuse",
):
    """Plan an eval from a pilot table (:func:`vareval.stats.evals.plan_eval`).

    ``of`` names the model to plan for (default: the only one, or the first);
    with ``baseline`` the plan is for the paired comparison of ``of`` and it.
    """
    a = _common_questions(answers(
        df, metric=metric, model=model, question=question, cluster=cluster, sample=sample,
        errors=errors,
    ))
    names = a.models
    of = names[0] if of is None else of
    for name in (of, baseline):
        if name is not None and name not in names:
            raise DataError(f"model {name!r} not found (models: {', '.join(names)}).")
    if baseline is not None and baseline == of:
        raise DataError(
            f"--of and --baseline both name {of!r}; a paired plan compares two different models."
        )
    base = None
    if baseline is not None:
        a = _same_samples(a, of, baseline)
    sel = a.rows_of(of)
    if baseline is not None:
        order = np.lexsort((a.question[sel].astype(str),))
        base_sel = a.rows_of(baseline)
        base_order = np.lexsort((a.question[base_sel].astype(str),))
        q = a.question[sel][order]
        scores = a.score[sel][order]
        base = a.score[base_sel][base_order]
        clusters = None if a.cluster is None else a.cluster[sel][order]
    else:
        q, scores, clusters = a.question[sel], a.score[sel], _cluster(a, sel)
    return plan_eval(
        scores, q, clusters, baseline=base, target_se=target_se, effect=effect, power=power,
        alpha=alpha, n_questions=n_questions, samples=samples,
    )


def _same_samples(a: Answers, of: str, baseline: str) -> Answers:
    """The questions both models answered equally often (errors='exclude' can unbalance some)."""
    mq = model_questions(a.score, a.model.astype(str), a.question.astype(str))
    i, j = mq.models.index(of), mq.models.index(baseline)
    uneven = mq.samples[:, i] != mq.samples[:, j]
    if not uneven.any():
        return a
    if a.errors != "exclude":
        raise DataError(
            f"models {of!r} and {baseline!r} have different numbers of samples of some "
            "question; a paired plan needs the same samples of each question."
        )
    q_labels = np.unique(a.question.astype(str))
    keep = ~np.isin(a.question.astype(str), q_labels[uneven])
    warnings.warn(
        f"{int(uneven.sum())} question(s) lost some samples to errors for {of!r} or "
        f"{baseline!r} and are left out of the plan", VarevalWarning, stacklevel=3,
    )
    return dataclasses.replace(
        a, score=a.score[keep], model=a.model[keep], question=a.question[keep],
        cluster=None if a.cluster is None else a.cluster[keep],
    )


def eval_table(
    df: pd.DataFrame,
    *,
    metric: str,
    model: str = "model",
    question: str = "question",
    task: str = "task",
    cluster: str | None = None,
    sample: str | None = None,
    interval: str = "auto",
    confidence: float = 0.95,
    errors: str = "refuse",
    n_resamples: int = 10_000,
    rng=None,
) -> ResultTable:
    """Each model's score on each benchmark: the models x benchmarks table.

    One row per model and task (``task`` column: the benchmark), with the
    score (the mean of per-question means, in a column named ``metric``) and
    its interval, SE and unit from :func:`eval_scores` on that task's rows.
    It is the table :func:`vareval.aggregate` and :func:`vareval.rank` read
    (``metric=metric, by="model", task="task"``): one run per model and task,
    so their intervals across tasks resample the tasks, not the questions.
    ``results`` maps each task to its :func:`eval_scores` table.
    """
    require_columns(df, [task], "task")
    require_columns(df, [metric], "metric")
    tasks = labels(df, task, "task")
    results, frames, without = {}, [], []
    for name in pd.unique(tasks):
        rows = df[(tasks == name).to_numpy()]
        if rows[metric].isna().all():  # the task scores other metrics: said in the title
            without.append(str(name))
            continue
        several = filters_of(rows)
        if several:  # one run per model and task: the table holds one score per cell
            raise DataError(
                f"task {name!r} holds {len(several)} lm-evaluation-harness filters "
                f"({', '.join(map(repr, several))}); the table has one score per model and "
                "task: choose one (--filter NAME; in Python, select its rows)."
            )
        scores = eval_scores(
            rows, metric=metric, model=model, question=question,
            cluster=cluster, sample=sample, interval=interval, confidence=confidence,
            errors=errors, n_resamples=n_resamples, rng=rng,
        )
        results[str(name)] = scores
        frame = scores.frame.drop(columns=["naive_low", "naive_high"])
        column = metric if metric not in frame.columns else "score"
        frames.append(frame.rename(columns={"score": column}).assign(task=str(name)))
    if not frames:
        raise DataError(f"no task has metric {metric!r} (tasks: {', '.join(without)}).")
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[["model", "task", *[c for c in frame.columns if c not in ("model", "task")]]]
    title = (f"{metric}: each model's score on each of {len(results)} task(s), "
             f"{confidence:.0%} interval")  # fmt: skip
    if without:
        note = f"task(s) without {metric}, left out: {', '.join(without)}"
        title += f"; {note}"
        warnings.warn(note, VarevalWarning, stacklevel=2)
    return ResultTable(title=title, results=results, frame=frame)
