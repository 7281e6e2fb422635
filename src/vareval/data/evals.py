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
    """Validate an answers table and return its arrays (see the module docstring)."""
    if errors not in ERRORS:
        raise DataError(f"`errors` must be one of {', '.join(ERRORS)}; got {errors!r}.")
    require_columns(df, [metric], "metric")
    require_columns(df, [model], "model")
    require_columns(df, [question], "question")
    bad = _errored(df)
    models = labels(df, model, "model").to_numpy(dtype=object)
    errored = {str(m): int((bad & (models == m)).sum()) for m in pd.unique(models)}
    if bad.any() and errors == "refuse":
        raise DataError(
            f"{int(bad.sum())} errored answer(s) (status 'failed', data rows {_rows(bad)}): "
            "set errors to 'exclude' (leave them out) or 'incorrect' (score them 0)."
        )
    keep = ~bad if errors == "exclude" else np.ones(len(df), dtype=bool)
    table = df.loc[keep]
    values = np.zeros(int(keep.sum()))
    fine = ~bad[keep]
    if fine.any():
        values[fine] = metric_values(table.loc[fine], metric)
    qs = labels(table, question, "question").to_numpy(dtype=object)
    cl = None if cluster is None else labels(table, cluster, "cluster").to_numpy(dtype=object)
    m = models[keep]
    if sample is not None:
        key = pd.DataFrame({"m": m, "q": qs, "s": labels(table, sample, "sample").to_numpy()})
        dup = key.duplicated(keep=False).to_numpy()
        if dup.any():
            where = np.zeros(len(df), dtype=bool)
            where[np.flatnonzero(keep)[dup]] = True
            raise DataError(
                f"model, question and sample ({sample!r}) repeat on data rows {_rows(where)}; "
                "each sample of a question appears once per model."
            )
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
) -> ResultTable:
    """Each model's benchmark score with its interval (:func:`vareval.stats.evals.eval_score`).

    Returns a table keyed by model; the frame also shows the naive CLT
    interval (every answer independent) beside the default one.
    """
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
    title = f"{metric}: each model's score, {confidence:.0%} interval"
    if a.note():
        title += f" ({a.note()})"
    return ResultTable(title=title, results=results, frame=pd.DataFrame(rows))


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
):
    """Every pair of models on the same questions (:func:`vareval.stats.evals.compare_models`)."""
    a = _common_questions(answers(
        df, metric=metric, model=model, question=question, cluster=cluster, sample=sample,
        errors=errors,
    ))
    return compare_models(
        a.score, a.model.astype(str), a.question.astype(str),
        None if a.cluster is None else a.cluster.astype(str),
        test=test, interval=interval, correction=correction, alpha=alpha,
        confidence=confidence, n_resamples=n_resamples, rng=rng,
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
    sel = a.rows_of(of)
    base = None
    if baseline is not None:
        mq = model_questions(a.score, a.model.astype(str), a.question.astype(str))
        i, j = mq.models.index(of), mq.models.index(baseline)
        if (mq.samples[:, i] != mq.samples[:, j]).any():
            raise DataError(
                f"models {of!r} and {baseline!r} have different numbers of samples of some "
                "question; a paired plan needs the same samples of each question."
            )
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
    tasks = labels(df, task, "task")
    results, frames = {}, []
    for name in pd.unique(tasks):
        scores = eval_scores(
            df[(tasks == name).to_numpy()], metric=metric, model=model, question=question,
            cluster=cluster, sample=sample, interval=interval, confidence=confidence,
            errors=errors, n_resamples=n_resamples, rng=rng,
        )
        results[str(name)] = scores
        frame = scores.frame.drop(columns=["naive_low", "naive_high"])
        column = metric if metric not in frame.columns else "score"
        frames.append(frame.rename(columns={"score": column}).assign(task=str(name)))
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[["model", "task", *[c for c in frame.columns if c not in ("model", "task")]]]
    title = (f"{metric}: each model's score on each of {len(results)} task(s), "
             f"{confidence:.0%} interval")  # fmt: skip
    return ResultTable(title=title, results=results, frame=frame)
