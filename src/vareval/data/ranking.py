"""Many methods on many tasks, by ranks: a results table in, one call.

Roles: ``metric``, ``by`` (method), ``task`` (data set: the blocks of the
Friedman test) and optionally ``pair_on`` (run keys that must match in every
method x task cell). Each method's score on a task is the mean over its runs
there, as in Demsar (2006), where a method has one score per data set.
"""

from __future__ import annotations

import pandas as pd

from vareval import stats
from vareval.data.tables import ResultTable
from vareval.data.tasks import task_scores
from vareval.stats._checks import as_rng, keyword_only, renamed_keywords


@keyword_only("metric", "by", "task")
@renamed_keywords(n_samples="n_resamples")
def rank(
    df,
    *,
    metric: str,
    by,
    task,
    pair_on=None,
    alpha: float = 0.05,
    higher_is_better: bool = True,
    rope: float | None = None,
    n_resamples: int = 50_000,
    rng=None,
    progress=False,
) -> ResultTable:
    """Friedman, Nemenyi CD, Wilcoxon-Holm and (with ``rope``) Bayesian signed rank.

    Calls :func:`vareval.stats.rank_methods` on the tasks x methods matrix of
    mean scores and, when ``rope`` is given, :func:`vareval.stats.bayesian_signed_rank`
    for every pair of methods over the tasks, each on its own random stream
    (all pairs at once, :func:`vareval.stats.bayesian_signed_ranks`; ``progress``
    shows a tqdm bar, None: on a terminal only).

    Returns
    -------
    ResultTable
        ``table["ranking"]`` is the :class:`~vareval.stats.Ranking`;
        ``table["a vs b"]`` the Bayesian results; the frame has one row per
        pair of methods.
    """
    ts = task_scores(df, metric, by, task, pair_on=pair_on, min_tasks=2)
    means = ts.scores.mean(axis=2).T  # tasks x methods
    ranking = stats.rank_methods(means, ts.methods, alpha=alpha, higher_is_better=higher_is_better)
    results = {"ranking": ranking}
    k = len(ts.methods)
    pair_index = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if rope is not None:
        sign = 1.0 if higher_is_better else -1.0
        found = stats.bayesian_signed_ranks(
            sign * means,
            pair_index,
            rope=rope,
            n_resamples=n_resamples,
            rng=as_rng(rng).spawn(len(pair_index)),
            progress=progress,
        )
        for (i, j), b in zip(pair_index, found, strict=True):
            results[f"{ts.methods[i]} vs {ts.methods[j]}"] = b
    rows = []
    for i, j in pair_index:
        row = {
            "method": ts.methods[i],
            "versus": ts.methods[j],
            "rank_difference": ranking.mean_ranks[j] - ranking.mean_ranks[i],
            "nemenyi_pvalue": ranking.nemenyi_pvalue[i, j],
            "wilcoxon_pvalue": ranking.wilcoxon_pvalue[i, j],
            "wilcoxon_pvalue_holm": ranking.wilcoxon_pvalue_holm[i, j],
        }
        if rope is not None:
            b = results[f"{ts.methods[i]} vs {ts.methods[j]}"]
            row.update(p_method_better=b.p_left, p_rope=b.p_rope, p_versus_better=b.p_right)
        rows.append(row)
    return ResultTable(
        f"Ranks of {len(ts.methods)} methods on {len(ts.tasks)} tasks ({metric!r}, mean over "
        f"{ts.scores.shape[2]} run(s) per task)",
        results,
        pd.DataFrame(rows).set_index(["method", "versus"]),
    )
