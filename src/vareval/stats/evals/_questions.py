"""Per-question scores with structure: the unit an eval's uncertainty comes from.

Rows are answers: a score for one question, possibly one of several samples
(epochs) of the same question, possibly in a cluster of related questions
(one passage, one document). Everything in :mod:`vareval.stats.evals` first
reduces rows to per-question means and keeps the cluster of each question;
the independent unit is the cluster (each question its own cluster when
there are none), as in Miller (2024).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import sparse

from vareval.errors import ArgumentError
from vareval.stats._checks import as_labels, as_scores

# Below this many clusters the cluster-robust SE is itself noisy (Cameron and Miller 2015
# put the threshold at 20 to 50); the result says so.
FEW_CLUSTERS = 30
# Cells of one resampling block (resamples x clusters): 20 M float64 = 160 MB at most.
BLOCK_CELLS = 2 * 10**7


@dataclasses.dataclass(frozen=True)
class Questions:
    """Rows reduced to questions.

    ``means[q]`` is question q's mean over its samples, ``samples[q]`` how
    many, ``within[q]`` their variance (ddof=1; NaN with one sample),
    ``cluster[q]`` the code of its cluster (0..n_clusters-1).
    """

    labels: np.ndarray
    means: np.ndarray
    samples: np.ndarray
    within: np.ndarray
    cluster: np.ndarray
    n_clusters: int
    clustered: bool
    binary: bool


def labels_of(**arrays) -> dict:
    """Each label array checked on its own (different roles may be of different kinds)."""
    return {name: as_labels(**{name: arr})[name] for name, arr in arrays.items()}


def _codes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, codes = np.unique(labels, return_inverse=True)
    return uniq, codes.reshape(-1)


def _check_length(name: str, arr, n: int) -> None:
    if arr is not None and arr.size != n:
        raise ArgumentError(
            f"`{name}` has {arr.size} entries but `scores` has {n}; give one per row."
        )


def question_clusters(q_codes: np.ndarray, n_q: int, cluster, q_labels) -> tuple[np.ndarray, int]:
    """The cluster code of each question; a question in two clusters, or one cluster, is refused."""
    if cluster is None:
        return np.arange(n_q), n_q
    c_labels, c_codes = _codes(cluster)
    first = np.full(n_q, -1)
    first[q_codes[::-1]] = c_codes[::-1]  # the first row's cluster of each question
    bad = np.flatnonzero(first[q_codes] != c_codes)
    if bad.size:
        q = q_labels[q_codes[bad[0]]]
        raise ArgumentError(
            f"question {q!r} is in more than one cluster (row {bad[0]}: {cluster[bad[0]]!r}); "
            "a question belongs to one cluster."
        )
    used, codes = np.unique(first, return_inverse=True)
    if used.size < 2:
        raise ArgumentError(
            f"`cluster` puts every question in one cluster ({str(c_labels[used[0]])!r}); a "
            "cluster-robust SE needs at least 2 clusters: drop the cluster column or use a "
            "finer one."
        )
    return codes.reshape(-1), used.size


def questions(scores, question=None, cluster=None, *, name: str = "scores") -> Questions:
    """Reduce row scores to per-question means, sample counts and clusters.

    ``question=None`` makes every row its own question; ``cluster=None``
    every question its own cluster.
    """
    x = as_scores(scores, name, min_n=2)
    question, cluster = labels_of(question=question, cluster=cluster).values()
    _check_length("question", question, x.size)
    _check_length("cluster", cluster, x.size)
    if question is None:
        q_labels, q_codes = np.arange(x.size), np.arange(x.size)
    else:
        q_labels, q_codes = _codes(question)
    n_q = q_labels.size
    if n_q < 2:
        raise ArgumentError(f"`{name}` covers {n_q} question; at least 2 are needed.")
    k = np.bincount(q_codes, minlength=n_q)
    means = np.bincount(q_codes, x, n_q) / k
    dev = x - means[q_codes]
    with np.errstate(invalid="ignore", divide="ignore"):
        within = np.where(k > 1, np.bincount(q_codes, dev * dev, n_q) / (k - 1), np.nan)
    codes, g = question_clusters(q_codes, n_q, cluster, q_labels)
    return Questions(
        labels=q_labels,
        means=means,
        samples=k,
        within=within,
        cluster=codes,
        n_clusters=g,
        clustered=cluster is not None,
        binary=bool(np.isin(x, (0.0, 1.0)).all()),
    )


def indicator(cluster: np.ndarray, n_clusters: int) -> sparse.csr_matrix:
    """The clusters x questions 0/1 matrix: ``indicator @ v`` sums ``v`` by cluster."""
    n = cluster.size
    return sparse.csr_matrix((np.ones(n), (cluster, np.arange(n))), shape=(n_clusters, n))


def cluster_se(values: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """Cluster-robust SE of the mean of ``values`` over questions (per column if 2-D).

    ``sqrt(G / (G - 1) * sum_c (sum_{q in c} (v_q - mean))**2) / n``: the CR1
    sandwich of an intercept-only regression clustered by ``cluster``
    (statsmodels' ``cov_type="cluster"``, inspect_ai's clustered ``stderr``).
    With one question per cluster it is ``sd(v, ddof=1) / sqrt(n)``.
    """
    v = values if values.ndim == 2 else values[:, None]
    n, g = v.shape[0], n_clusters
    totals = indicator(cluster, g) @ (v - v.mean(axis=0))
    se = np.sqrt(g / (g - 1) * (totals * totals).sum(axis=0)) / n
    return se if values.ndim == 2 else se[0]


def _blocks(total: int, width: int):
    step = max(1, BLOCK_CELLS // max(width, 1))
    for start in range(0, total, step):
        yield min(step, total - start)


def bootstrap_means(values: np.ndarray, cluster, n_clusters: int, n_resamples: int, rng,
                    bar=None):
    """Cluster-bootstrap means over questions: ``(n_resamples, k)`` for ``values (n, k)``.

    Each resample draws ``G`` clusters with replacement (questions when there
    are no clusters) and takes the mean over the questions drawn; every column
    (model) uses the same draws, so column differences are the paired bootstrap.
    ``bar``, a progress bar, advances by each block of resamples.
    """
    ind = indicator(cluster, n_clusters)
    sums = np.asarray(ind @ values)
    sizes = np.asarray(ind.sum(axis=1)).reshape(-1)
    g = n_clusters
    out = []
    for b in _blocks(n_resamples, g):
        draws = rng.integers(0, g, size=(b, g)) + (np.arange(b) * g)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * g).reshape(b, g).astype(float)
        out.append((counts @ sums) / (counts @ sizes)[:, None])
        if bar is not None:
            bar.update(b)
    return np.concatenate(out)


def sign_flips(n_clusters: int, n_resamples: int, rng):
    """Sign vectors for a permutation test, in blocks.

    All ``2**G`` if that is at most ``n_resamples`` (exact), else
    ``n_resamples`` random ones.

    Yields ``(signs, exact)`` blocks of shape ``(b, G)``.
    """
    g = n_clusters
    if 2**g <= n_resamples if g < 63 else False:
        codes = np.arange(2**g)[:, None] >> np.arange(g)[None, :]
        yield (codes & 1) * 2.0 - 1.0, True
        return
    for b in _blocks(n_resamples, g):
        yield rng.integers(0, 2, size=(b, g)) * 2.0 - 1.0, False
