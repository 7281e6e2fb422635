"""DataFrame-level API for tuning curves: ``vareval.tuning_curve``."""

from __future__ import annotations

import dataclasses
import itertools
import numbers
import warnings

import numpy as np
import pandas as pd

from vareval.data.design import analysed_rows, design_of
from vareval.data.runs import usable_runs
from vareval.data.tables import FrameResult
from vareval.data.validate import groups
from vareval.errors import ArgumentError, DataError, VarevalWarning
from vareval.stats._checks import MINIMIZE, as_bool, renamed_keywords
from vareval.stats._result import renamed_opposite
from vareval.stats.tuning.bands import TuningComparison, _verdicts, cdf_band
from vareval.stats.tuning.curves import EmpiricalDistribution, _as_k

__all__ = ["TuningCurves", "default_ks", "tuning_curve"]


def default_ks(n_max: int) -> np.ndarray:
    """Search iterations to show by default: every k up to 30, then a sparse grid."""
    if n_max <= 30:
        return np.arange(1, n_max + 1)
    grid = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100]
    grid += [int(x) for x in 10 ** np.arange(2.1, 6, 0.1)]
    return np.array(sorted({k for k in grid if k <= n_max} | {n_max}))


@dataclasses.dataclass(frozen=True, repr=False)
class TuningCurves(FrameResult):
    """Tuning curves of several methods with simultaneous bands, and their comparisons.

    Attributes
    ----------
    metric : str
        The score column.
    methods : list of str
        Method names, in order of first appearance.
    k : ndarray
        Search iterations evaluated.
    bands : dict
        Method -> :class:`~vareval.stats.TuningCurveBand` (median curve and
        its simultaneous band).
    cdf_bands : dict
        Method -> :class:`~vareval.stats.CDFBand`.
    v_statistic, u_statistic : dict
        Method -> expected best-of-``k`` estimates (Dodge et al. 2019; Tang
        et al. 2020).
    comparisons : dict
        ``(method_a, method_b)`` -> :class:`~vareval.stats.TuningComparison`
        for every pair.
    bounds : (float, float)
        Support of the scores.
    confidence, method, q, higher_is_better
        How the bands were built.
    joint_confidence : float
        ``confidence ** m`` for ``m`` methods: the probability that every
        band holds at once (so every verdict) when the searches are
        independent.
    design : Design or None
        The design the search results were read with (its reruns, bounds).
    """

    metric: str
    methods: list
    k: np.ndarray
    bands: dict
    cdf_bands: dict
    v_statistic: dict
    u_statistic: dict
    comparisons: dict
    bounds: tuple
    confidence: float
    method: str
    q: float
    higher_is_better: bool
    design: object = None

    _deprecated = {"minimize": renamed_opposite("higher_is_better")}

    @property
    def joint_confidence(self) -> float:
        """``confidence ** m``: all ``m`` bands (independent searches) hold at once."""
        return self.confidence ** len(self.methods)

    def to_frame(self) -> pd.DataFrame:
        """One row per method and ``k``: estimate, band, U and V estimates, verdicts."""
        rows = []
        for name in self.methods:
            band = self.bands[name]
            for j, k in enumerate(self.k):
                rows.append(
                    {
                        "method": name,
                        "n": band.n,
                        "k": k,
                        "median" if self.q == 0.5 else f"q{self.q:g}": band.estimate[j],
                        "lower": band.lower[j],
                        "upper": band.upper[j],
                        "v_statistic": self.v_statistic[name][j],
                        "u_statistic": self.u_statistic[name][j],
                    }
                )
        return pd.DataFrame(rows)

    def named_verdicts(self, a: str, b: str) -> list:
        """The per-``k`` verdicts of ``a`` against ``b``, the models named.

        "A"/"B" become the methods' names (e.g. ``"delta better"``): the one
        spelling the text, JSON, frame and report all use.
        """
        return [_named(v, a, b) for v in self.comparisons[(a, b)].verdict]

    def comparison_frame(self) -> pd.DataFrame:
        """One row per pair of methods and ``k`` with the verdict, names spelled out."""
        rows = []
        for a, b in self.comparisons:
            for k, verdict in zip(self.k, self.named_verdicts(a, b), strict=True):
                rows.append({"a": a, "b": b, "k": k, "verdict": verdict})
        return pd.DataFrame(rows, columns=["a", "b", "k", "verdict"])

    def to_dict(self) -> dict:
        """JSON-ready dictionary of every curve, band and verdict."""
        return {
            "metric": self.metric,
            "bounds": list(self.bounds),
            "confidence": self.confidence,
            "joint_confidence": self.joint_confidence,
            "method": self.method,
            "q": self.q,
            "higher_is_better": self.higher_is_better,
            "k": self.k.tolist(),
            "curves": {
                name: {
                    "n": self.bands[name].n,
                    "estimate": self.bands[name].estimate.tolist(),
                    "lower": self.bands[name].lower.tolist(),
                    "upper": self.bands[name].upper.tolist(),
                    "v_statistic": self.v_statistic[name].tolist(),
                    "u_statistic": self.u_statistic[name].tolist(),
                    "exact_coverage": self.cdf_bands[name].coverage,
                }
                for name in self.methods
            },
            "comparisons": [
                {"a": a, "b": b, "verdict": self.named_verdicts(a, b)}
                for a, b in self.comparisons
            ],
        }


def _named(verdict: str, a: str, b: str) -> str:
    if verdict == "A better":
        return f"{a} better"
    if verdict == "B better":
        return f"{b} better"
    return verdict


def _tuning_curve_iv(bounds, ks):
    if (
        not isinstance(bounds, tuple | list)
        or len(bounds) != 2
        or not all(isinstance(v, numbers.Real) for v in bounds)
    ):
        raise ArgumentError(
            f"`bounds` must be a pair of numbers (a, b); got {bounds!r}."
        )
    if ks is not None:
        ks = np.atleast_1d(_as_k(ks))
        if ks.ndim != 1:
            raise ArgumentError("`ks` must be a flat list of search iterations.")
    return (float(bounds[0]), float(bounds[1])), ks


@renamed_keywords(minimize=MINIMIZE)
def tuning_curve(
    df: pd.DataFrame,
    *,
    metric: str,
    by,
    bounds,
    confidence: float = 0.95,
    method: str = "ld-hd",
    ks=None,
    q: float = 0.5,
    higher_is_better: bool = True,
    progress=False,
) -> TuningCurves:
    """Tuning curves with exact simultaneous confidence bands, per method.

    Each row of ``df`` is one random-search iteration (reruns of one
    configuration read as :func:`vareval.data.design.analysed_rows` says:
    one search result per cell). For each method
    (``by``) this returns the ``q``-quantile (median) tuning curve with a
    simultaneous band from the CDF band ``method`` (exact for continuous
    scores; see :func:`vareval.stats.cdf_band`), the V- and U-statistic
    estimates of the expected best of ``k`` (Dodge et al. 2019; Tang et al.
    2020), and for each pair of methods the per-``k`` verdict: one better,
    or *need more data* (Lourie et al. 2023).

    Parameters
    ----------
    df : pandas.DataFrame
        The results table.
    metric : str
        Column with the score of each search iteration.
    by : str or list of str
        Column(s) naming the method.
    bounds : (float, float)
        Bounds ``(a, b)`` of the score, e.g. ``(0, 1)`` for accuracy or F1.
    confidence : float, default 0.95
        Simultaneous confidence of each method's band.
    method : {"ld-hd", "ld-et", "ks", "dkw"}, default "ld-hd"
        The CDF band.
    ks : array_like, optional
        Search iterations to evaluate; default every ``k`` up to 30, then a
        sparse grid up to the largest number of iterations.
    q : float, default 0.5
        Quantile of the best-of-``k`` score that the band bounds.
    higher_is_better : bool, default True
        False when smaller scores are better (a loss, an error).
    progress : bool or None, default False
        Show a tqdm bar over each band's exact coverage (None: on a terminal
        only).

    Returns
    -------
    TuningCurves
    """
    (a, b), ks = _tuning_curve_iv(bounds, ks)
    higher_is_better = as_bool(higher_is_better, "higher_is_better")
    if not a < b:
        raise ArgumentError(f"bounds must satisfy a < b (lower < upper); got {a:g} and {b:g}.")
    # the finished trials (a store's export keeps the failed ones with their status)
    df, _ = usable_runs(df, metric, by, min_runs=1)
    df = analysed_rows(df, metric, by)  # a search result is a cell, not each of its reruns
    try:
        scores = groups(df, metric, by, min_runs=2, bounds=(a, b))
    except DataError as exc:
        if "needs at least" not in str(exc):
            raise
        raise DataError(
            f"{exc} (search iterations): from one iteration the band is the whole "
            "range of the score; run more iterations or leave the method out."
        ) from None
    if not scores:
        raise DataError(
            "the results table has no rows; expected one row per search iteration."
        )
    if ks is None:
        ks = default_ks(max(x.size for x in scores.values()))
    ks_int = np.round(ks).astype(np.int64) if np.all(ks % 1 == 0) else None
    bands, cdfs, v, u = {}, {}, {}, {}
    for name, ys in scores.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", VarevalWarning)
            cdfs[name] = cdf_band(ys, confidence, a=a, b=b, method=method, progress=progress)
        if caught:
            ties = ys.size - np.unique(ys).size
            warnings.warn(
                f"method {name!r} has {ties} tied value(s) in column {metric!r}; the "
                f"{method} band's exact coverage assumes continuous scores (with ties "
                "the band is conservative).",
                VarevalWarning,
                stacklevel=3,  # the caller, past the renamed_keywords wrapper
            )
        bands[name] = cdfs[name].tuning_curve(ks, q, higher_is_better=higher_is_better)
        dist = EmpiricalDistribution(ys, a=a, b=b)
        v[name] = np.asarray(dist.v_statistic(ks, higher_is_better=higher_is_better))
        u[name] = (
            np.asarray(dist.u_statistic(ks_int, higher_is_better=higher_is_better))
            if ks_int is not None
            else np.full(ks.shape, np.nan)
        )
    comparisons = {}
    for x, y in itertools.combinations(scores, 2):
        comparisons[(x, y)] = TuningComparison(
            k=ks, verdict=_verdicts(bands[x], bands[y], not higher_is_better, (a, b)),
            band_a=bands[x], band_b=bands[y],
        )  # fmt: skip
    first = next(iter(cdfs.values()))
    return TuningCurves(
        metric=metric,
        methods=list(scores),
        k=ks,
        bands=bands,
        cdf_bands=cdfs,
        v_statistic=v,
        u_statistic=u,
        comparisons=comparisons,
        bounds=(a, b),
        confidence=first.confidence,
        method=first.method,
        q=float(q),
        higher_is_better=higher_is_better,
        design=design_of(df, by=by, metric=metric, bounds=(a, b)),
    )
