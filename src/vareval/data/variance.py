"""Where the variance comes from: the DataFrame-level mixed-model analysis (DECoVaC).

:func:`variance` builds the fixed-effects matrix from named factor columns,
integer-codes the grouping factors (crossed, or nested as ``config:seed``),
fits the random-intercept model by REML or ML and runs the three DECoVaC
tests: a likelihood-ratio test per random effect (H1 seed, H2 configuration),
F tests of the fixed-effect terms with Satterthwaite and Kenward-Roger
degrees of freedom (H3) and all pairwise differences between the experiments
(the cells of the fixed factors) with Holm-adjusted p-values.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from vareval.data.design import analysed_rows, design_of, reruns_of
from vareval.data.tables import FrameResult, clip_lines, table_text
from vareval.data.validate import label_text, metric_values, require_columns
from vareval.errors import ArgumentError, DataError, FitError, VarevalWarning
from vareval.stats.variance.fit import MixedModelFit, fit_mixed
from vareval.stats.variance.slopes import fit_slopes
from vareval.stats.variance.tests import (
    ContrastResult,
    FTestResult,
    RandomEffectLRT,
    equal_variance_lrt,
    f_test,
    pairwise,
    random_effect_lrt,
)

if TYPE_CHECKING:  # the intervals load scipy.stats (~0.5 s): imported when asked for
    from vareval.stats.variance.intervals import VarianceIntervals


@dataclasses.dataclass(frozen=True)
class Design:
    """The model's arrays and the bookkeeping to name them."""

    y: np.ndarray
    X: np.ndarray
    fixed_names: tuple
    terms: dict  # term name -> column indices of X
    hyp: dict  # term name -> type III hypothesis matrix
    cell_means: np.ndarray  # one row per observed cell: its mean as L beta
    cell_labels: tuple
    cell_levels: tuple  # per cell: {factor: level}
    groups: list
    group_names: tuple
    level_names: tuple
    dropped: tuple = ()  # fixed-effect columns dropped as not estimable
    by_group: dict = dataclasses.field(default_factory=dict)  # factor -> parts
    seed_term: str | None = None  # the seed x experiment factor, when added


@dataclasses.dataclass(frozen=True, repr=False)
class VarianceAnalysis(FrameResult):
    """Everything :func:`variance` computed, as one tidy table or one per part.

    ``to_frame()`` stacks every part in one DataFrame whose ``table`` column
    names the part; ``frames()`` gives the parts as separate DataFrames, and
    ``components_frame()``, ``fixed_frame()``, ``lrt_frame()``, ``f_frame()``,
    ``pairs_frame()``, ``blups_frame()`` and ``group_lrt_frame()`` each one.

    Attributes
    ----------
    fit : MixedModelFit
    metric : str
    fixed, random : tuple of str
    lrt : tuple of RandomEffectLRT
        H1/H2: one test per random effect.
    f_tests : dict
        ``{"satterthwaite": (FTestResult, ...), "kenward-roger": (...)}``, one
        F test per fixed-effect term (type III) plus ``"all experiments"``.
    pairs : ContrastResult
        Pairwise differences between the cells of the fixed factors.
    group_lrt : tuple of RandomEffectLRT
        With ``by_group``: per split factor, the test of one common variance
        against a variance per group.
    slope : str or None
        The variable of the random slope, if any.
    intervals : VarianceIntervals or None
        Confidence intervals for each component's SD, variance, share and ICC
        (when asked for with ``intervals=``).
    pb_lrt : tuple of BootstrapLRT
        With ``bootstrap_lrt=``: the parametric bootstrap LRT of each random
        effect.
    withheld : str or None
        When the fit did not converge: why the F tests and pairwise
        differences are NaN (no test is reported from such a fit); else None.
    seed_term : str or None
        The seed x experiment factor (e.g. ``"seed:experiment"``) when it was
        added because experiments share seeds; else None.
    design : Design or None
        The design the table was read with (:func:`vareval.data.design.design_of`),
        stated in the text and the notebook view.
    """

    fit: MixedModelFit
    metric: str
    fixed: tuple
    random: tuple
    lrt: tuple
    f_tests: dict
    pairs: ContrastResult
    group_lrt: tuple = ()
    slope: str | None = None
    intervals: VarianceIntervals | None = None
    pb_lrt: tuple = ()
    withheld: str | None = None
    seed_term: str | None = None
    design: object = None

    def __repr__(self) -> str:
        tables = [
            table_text(self.components_frame(), index=False),
            table_text(self.lrt_frame(), index=False),
            table_text(self.f_frame(), index=False),
        ]
        head = (
            f"VarianceAnalysis(metric={self.metric!r}, fixed={list(self.fixed)}, "
            f"random={list(self.random)}, reml={self.fit.reml})"
        )
        if self.design is not None:
            head += "\n" + self.design.statement()
        return clip_lines("\n\n".join([head, *tables]))

    def components_frame(self) -> pd.DataFrame:
        """Variance components: variance, SD, share of total, ICC, levels.

        With intervals, each quantity's interval follows it (``sd_low``,
        ``sd_high``, ...).
        """
        f = self.fit
        out = pd.DataFrame(
            {
                "component": list(f.components),
                "levels": list(f.n_levels) + [f.n_obs],
                "variance": f.variance,
                "sd": f.sd,
                "share": f.share,
                "icc": f.icc,
            }
        )
        ci = self.intervals
        if ci is not None:
            for name in ("variance", "sd", "share", "icc"):
                at = out.columns.get_loc(name) + 1
                out.insert(at, f"{name}_low", getattr(ci, f"{name}_low"))
                out.insert(at + 1, f"{name}_high", getattr(ci, f"{name}_high"))
        return out

    def fixed_frame(self) -> pd.DataFrame:
        """Fixed effects with SE."""
        f = self.fit
        return pd.DataFrame(
            {"term": list(f.fixed_names), "estimate": f.coef, "se": f.se}
        )

    def lrt_frame(self) -> pd.DataFrame:
        """H1/H2: the likelihood-ratio tests (and the bootstrap p when computed)."""
        out = pd.DataFrame(
            [
                {
                    "term": t.term,
                    "variance": t.variance,
                    "lrt": t.statistic,
                    "df": t.df,
                    "p_boundary": t.pvalue,
                    "p_naive": t.pvalue_naive,
                }
                for t in self.lrt
            ]
        )
        if self.pb_lrt:
            boot = {t.term: t.pvalue for t in self.pb_lrt}
            out["p_bootstrap"] = [boot.get(t) for t in out["term"]]
        return out

    def group_lrt_frame(self) -> pd.DataFrame:
        """With ``by_group``: one LRT per split factor of a common variance."""
        return pd.DataFrame(
            [
                {"term": t.term, "lrt": t.statistic, "df": t.df, "p": t.pvalue}
                for t in self.group_lrt
            ],
            columns=["term", "lrt", "df", "p"],
        )

    def f_frame(self) -> pd.DataFrame:
        """H3: F tests with both denominator-df methods."""
        rows = []
        for method, tests in self.f_tests.items():
            for t in tests:
                rows.append(
                    {
                        "term": t.term,
                        "method": method,
                        "F": t.statistic,
                        "ndf": t.ndf,
                        "ddf": t.ddf,
                        "p": t.pvalue,
                    }
                )
        return pd.DataFrame(rows)

    def pairs_frame(self) -> pd.DataFrame:
        """Pairwise differences with SE, df, CI and Holm-adjusted p."""
        p = self.pairs
        return pd.DataFrame(
            {
                "contrast": list(p.labels),
                "estimate": p.estimate,
                "se": p.se,
                "df": p.df,
                "ci_low": p.ci_low,
                "ci_high": p.ci_high,
                "t": p.statistic,
                "p": p.pvalue,
                "p_holm": p.pvalue_holm,
            }
        )

    def blups_frame(self) -> pd.DataFrame:
        """Conditional modes (BLUPs) per level of each grouping factor."""
        f = self.fit
        return pd.DataFrame(
            [
                {"factor": name, "level": lev, "blup": val}
                for name, levels, vals in zip(
                    f.group_names, f.level_names, f.blups, strict=True
                )
                for lev, val in zip(levels, vals, strict=True)
            ]
        )

    def frames(self, blups: bool = True) -> dict:
        """Every part as its own DataFrame: components, fixed, lrt, f_tests, pairwise, ...

        ``blups=False`` leaves out the per-level table (one row per level).
        """
        out = {
            "components": self.components_frame(),
            "fixed": self.fixed_frame(),
            "lrt": self.lrt_frame(),
            "f_tests": self.f_frame(),
            "pairwise": self.pairs_frame(),
            "blups": self.blups_frame() if blups else None,
            "group_lrt": self.group_lrt_frame(),
        }
        return {k: v for k, v in out.items() if v is not None}

    def to_frame(self) -> pd.DataFrame:
        """Every part stacked in one long table; ``table`` names the part of each row."""
        parts = [f.assign(table=name) for name, f in self.frames().items() if len(f)]
        out = pd.concat(parts, ignore_index=True)
        return out[["table"] + [c for c in out.columns if c != "table"]]

    def to_dict(self) -> dict:
        """JSON-ready values of every table and the fit's summary numbers."""
        f = self.fit
        tables = {
            k: v.to_dict(orient="records")
            for k, v in self.frames(blups=False).items()
        }
        return {
            "metric": self.metric,
            "fixed": list(self.fixed),
            "random": list(self.random),
            "reml": f.reml,
            "criterion": f.criterion,
            "loglik": f.loglik,
            "aic": f.aic,
            "bic": f.bic,
            "n_obs": f.n_obs,
            "singular": f.singular,
            "converged": f.converged,
            "withheld": self.withheld,
            "seed_term": self.seed_term,
            # pbkrtest's Kenward-Roger needs the REML fit; under ML it refits
            "kenward_roger_fit": "REML" if f.reml else "REML refit",
            "slope": self.slope,
            "correlations": [list(c) for c in f.correlations],
            **tables,
        }


# --------------------------------------------------------------------------
# building the design


def _factor(df: pd.DataFrame, col: str, role: str, memo=None):
    """Codes and sorted level names of a factor column; refuse missing values.

    ``memo`` (a dict) keeps each column's coding for the other terms that use it.
    """
    if memo is not None:
        if col not in memo:
            memo[col] = _factor(df, col, role)
        return memo[col]
    s = df[col]
    text = isinstance(s.dtype, pd.StringDtype)
    if text:
        # coded in order of appearance (a missing value: -1), then the few
        # levels sorted as Python sorts str (by code point, as factorize's
        # sort): pandas' sort of the levels goes through pyarrow, several
        # times the cost of the coding
        codes, levels = pd.factorize(s)
        missing = codes < 0
    else:
        missing = s.isna().to_numpy()
    if missing.any():
        rows = ", ".join(str(i + 1) for i in np.flatnonzero(missing)[:8])
        raise DataError(
            f"{role} column {col!r} has missing values in data row(s) "
            f"{rows}; fill or remove those rows explicitly."
        )
    if text:
        levels = np.asarray(levels, dtype=object)
        order = np.argsort(levels, kind="stable")
        rank = np.empty(order.size, dtype=np.intp)
        rank[order] = np.arange(order.size)
        return rank[codes], list(label_text(pd.Series(levels[order], dtype=object), col, role))
    if s.dtype.kind in "biuf":
        codes, levels = pd.factorize(s, sort=True)  # one type: sorted as Python sorts
        codes = codes.astype(np.intp)
    else:  # objects of maybe several types, categories: by type, then value
        levels = sorted(pd.unique(s), key=lambda v: (str(type(v)), v))
        codes = pd.Categorical(s, categories=levels).codes.astype(np.intp)
    return codes, list(label_text(pd.Series(levels, dtype=s.dtype), col, role))


def _sorted_codes(key, size: int):
    """``pd.factorize(key, sort=True)`` of integer keys in ``[0, size)``: codes, keys present.

    By a table of the ``size`` possible keys (no sort) when that is not much
    larger than ``key``.
    """
    if size > 4 * key.size + 4096:
        codes, uniq = pd.factorize(key, sort=True)
        return codes.astype(np.intp), uniq
    present = np.zeros(size, dtype=bool)
    present[key] = True
    return (np.cumsum(present) - 1)[key], np.flatnonzero(present)


def _coding(codes, k, contrasts):
    """Contrast columns for a factor with k levels: treatment, sum or all levels."""
    if contrasts == "full":
        return np.column_stack([(codes == i).astype(float) for i in range(k)])
    if contrasts == "treatment":
        return np.column_stack([(codes == i).astype(float) for i in range(1, k)])
    M = np.zeros((codes.size, k - 1))
    for i in range(k - 1):
        M[:, i] = (codes == i).astype(float) - (codes == k - 1).astype(float)
    return M


def _term_columns(coded, term, contrasts):
    """One term's columns and names: products of its factors' codings.

    As R's ``model.matrix``, the first factor varies fastest; with
    ``contrasts="full"`` every level is a column (lmerTest's ``rdX``).
    """
    n = next(iter(coded.values()))[0].size
    cols, names = [np.ones(n)], [""]
    for col in term:
        codes, levels = coded[col]
        if levels is None:  # a numeric covariate: its values are the column
            cols = [c * codes for c in cols]
            names = [f"{nm}:{col}" if nm else col for nm in names]
            continue
        M = _coding(codes, len(levels), contrasts)
        labels = {"treatment": levels[1:], "sum": levels[:-1], "full": levels}
        new_cols, new_names = [], []
        for i, lev in enumerate(labels[contrasts]):
            for c, nm in zip(cols, names, strict=True):
                new_cols.append(c * M[:, i])
                new_names.append(f"{nm}:{col}[{lev}]" if nm else f"{col}[{lev}]")
        cols, names = new_cols, new_names
    return cols, names


def _model_matrix(coded, terms_list, contrasts):
    """X with named columns and the columns of each term (intercept first)."""
    n = next(iter(coded.values()))[0].size
    cols, names, terms = [np.ones(n)], ["(Intercept)"], {}
    for term in terms_list:
        c, nm = _term_columns(coded, term, contrasts)
        terms[":".join(term)] = list(range(len(cols), len(cols) + len(c)))
        cols += c
        names += nm
    return np.column_stack(cols), names, terms


def _estimable(X, tol=1e-7):
    """Columns of X that lme4 keeps (R's pivoting QR, ``qr(X, tol = 1e-7)``).

    A column is dropped when it is (nearly) a combination of the columns kept
    before it.
    """
    keep, Q = [], np.empty((X.shape[1], X.shape[0]))  # the kept columns' basis, one per row
    for j in range(X.shape[1]):
        v = X[:, j]
        norm0 = float(np.linalg.norm(v))
        B = Q[: len(keep)]
        r = v - (B @ v) @ B
        r = r - (B @ r) @ B
        norm = float(np.linalg.norm(r))
        if norm0 > 0 and norm >= tol * norm0:
            Q[len(keep)] = r / norm
            keep.append(j)
    return keep


def _zapsmall(x, digits=7):
    """R's ``zapsmall``: round to ``digits`` significant digits of the largest."""
    mx = float(np.max(np.abs(x))) if x.size else 0.0
    if mx == 0:
        return x
    return np.round(x, max(0, digits - int(np.ceil(np.log10(mx)))))


def _doolittle_rows(X):
    """LmerTest's type I basis: rows of t(L) from the Doolittle LU of X'X."""
    A = X.T @ X
    p = A.shape[0]
    L, U = np.eye(p), np.zeros((p, p))
    for i in range(p):
        U[i, :] = A[i, :] - L[i, :i] @ U[:i, :]
        if i + 1 < p:
            col = A[i + 1 :, i] - L[i + 1 :, :i] @ U[:i, i]
            L[i + 1 :, i] = 0.0 if abs(U[i, i]) < 1e-6 else col / U[i, i]
    L[np.abs(L) < 1e-6] = 0.0
    return L.T


def _hypotheses(coded, terms_list, X_t, names_t, terms_t, X, terms):
    """LmerTest's ``anova()`` hypothesis matrix for each term, for the model's X.

    One term: the type I (Doolittle) basis lmerTest falls back to. Several:
    its type III basis, from the treatment-coded X (``X_t``, estimable columns
    only) and the all-levels design ``rdX``: ``L = t(ginv(X_t) rdX)``, each
    term's columns made orthogonal to those of the terms containing it, rows of
    the coefficients of ``X_t``; then mapped to the model's coding.
    """
    if len(terms_list) == 1:
        rows = _doolittle_rows(X)
        return {t: rows[idx] for t, idx in terms.items()}
    rdX, rd_names, _ = _model_matrix(coded, terms_list, "full")
    pinv = np.linalg.pinv(X_t)
    L = _zapsmall((pinv @ rdX).T)
    keys = [":".join(t) for t in terms_list]
    order = sorted(range(len(terms_list)), key=lambda i: -len(terms_list[i]))
    for i in order:
        inside = [
            c
            for u, t2 in enumerate(terms_list)
            if u != i and set(terms_list[i]) < set(t2)
            for c in terms_t[keys[u]]
        ]
        if inside:
            B, Y = L[:, inside], L[:, terms_t[keys[i]]]
            coef = np.linalg.lstsq(B, Y, rcond=None)[0]
            L[:, terms_t[keys[i]]] = _zapsmall(Y - B @ coef)
    L = L[[rd_names.index(nm) for nm in names_t]]
    to_model = _zapsmall(pinv @ X)
    out = {}
    for key in keys:
        H = L[:, terms_t[key]].T
        H = H[np.sum(np.abs(H), axis=1) > 1e-8]
        out[key] = H @ to_model
    return out


def _cells(codes, sizes):
    """The distinct combinations of factor codes (sorted) and a row of each.

    As ``np.unique(np.column_stack(codes), axis=0, return_index=True)``, by
    one integer key per row where the combinations fit in 62 bits (no sort of
    rows); no factors at all make one cell.
    """
    if not codes:
        return np.zeros((1, 0), dtype=int), np.zeros(1, dtype=int)
    if np.prod(sizes, dtype=float) >= 2.0**62:
        return np.unique(np.column_stack(codes), axis=0, return_index=True)
    u, first = np.unique(np.ravel_multi_index(codes, sizes), return_index=True)
    return np.column_stack(np.unravel_index(u, sizes)), first


def _fixed_design(df, fixed, interaction, contrasts, covariate=None, memo=None):
    """X with named columns, terms, hypotheses, cell-mean rows, dropped columns.

    ``covariate`` (a numeric column) enters additively after the factors.
    """
    coded = {}
    for col in fixed:
        codes, levels = _factor(df, col, "fixed", memo)
        if len(levels) < 2:
            raise DataError(
                f"fixed factor {col!r} has one level ({levels[0]!r}); a "
                "factor needs at least two levels to compare."
            )
        coded[col] = (codes, levels)
    terms_list = [(c,) for c in fixed]
    if interaction:
        for order in range(2, len(fixed) + 1):
            terms_list += list(itertools.combinations(fixed, order))
    if covariate is not None:
        coded[covariate] = (metric_values(df, covariate), None)
        terms_list.append((covariate,))

    def estimable(contr):
        X, names, terms = _model_matrix(coded, terms_list, contr)
        keep = _estimable(X)
        pos = {j: i for i, j in enumerate(keep)}
        dropped = [names[j] for j in range(len(names)) if j not in pos]
        terms = {t: [pos[j] for j in idx if j in pos] for t, idx in terms.items()}
        return X[:, keep], [names[j] for j in keep], terms, dropped

    X_t, names_t, terms_t, dropped = estimable("treatment")
    if contrasts == "treatment":
        X, names, terms = X_t, names_t, terms_t
    else:
        X, names, terms, dropped = estimable(contrasts)
    hyp = _hypotheses(coded, terms_list, X_t, names_t, terms_t, X, terms)
    # cells: every observed combination of the fixed factors; its mean is the
    # row of X of any of its observations
    uniq, first = _cells([coded[c][0] for c in fixed], [len(coded[c][1]) for c in fixed])
    cell_means = X[first]
    if covariate is not None:  # cells are compared at the same covariate value
        cell_means[:, terms[covariate]] = 0.0
    cell_levels = tuple(
        {c: coded[c][1][cell[i]] for i, c in enumerate(fixed)} for cell in uniq
    )
    cell_labels = tuple("_".join(lev.values()) or "(all)" for lev in cell_levels)
    return X, tuple(names), terms, hyp, cell_means, cell_labels, cell_levels, dropped


def _parse_nested(nested, random):
    """'config:seed' -> {'config': 'seed'}: config's levels are distinct per seed."""
    out = {}
    if nested is None:
        return out
    items = [nested] if isinstance(nested, str) else list(nested)
    for item in items:
        parts = [p.strip() for p in str(item).split(":")]
        if len(parts) != 2 or not all(parts):
            raise ArgumentError(
                f"`nested` entry {item!r} must look like 'inner:outer', "
                "e.g. 'config:seed'."
            )
        inner, outer = parts
        if inner not in random or outer == inner:
            raise ArgumentError(
                f"`nested` entry {item!r} must name a random factor inside another "
                f"column, e.g. config:seed or config:model (random: {', '.join(random)})."
            )
        if inner in out:
            raise ArgumentError(
                f"`nested` names {inner!r} twice ({inner}:{out[inner]}, {item}); "
                "a factor is nested in one factor (chain them: config:seed, rerun:config)."
            )
        out[inner] = outer
    return out


def _nested_factor(df, col, nest, resolved, chain=(), memo=None):
    """Codes, level names and name of ``col``, distinct within its outer factor.

    Nesting chains: with ``config:seed`` and ``rerun:config`` a rerun is
    distinct within its configuration, itself distinct within its seed (lme4's
    ``(1 | seed/config/rerun)``), so the rerun's levels are (seed, config,
    rerun) triples and its name ``rerun:config:seed``.
    """
    if col in resolved:
        return resolved[col]
    if col in chain:
        raise ArgumentError(
            f"`nested` is circular: {' in '.join([*chain, col])}; each factor "
            "can be nested in a factor that is not nested in it."
        )
    codes, levels = _factor(df, col, "random", memo)
    name = col
    if col in nest:
        outer = nest[col]
        require_columns(df, [outer], "nested")
        oc, olev, oname = _nested_factor(df, outer, nest, resolved, (*chain, col), memo)
        key = oc.astype(np.int64) * len(levels) + codes
        codes, uniq = _sorted_codes(key, len(olev) * len(levels))
        levels = [f"{levels[u % len(levels)]}:{olev[u // len(levels)]}" for u in uniq]
        name = f"{col}:{oname}"
    resolved[col] = (codes, levels, name)
    return resolved[col]


def _parse_by_group(by_group, random, df):
    """'model' -> {each random factor: 'model'}; 'config=model' -> {'config': 'model'}."""
    if by_group is None:
        return {}
    items = [by_group] if isinstance(by_group, str) else list(by_group)
    out = {}
    for item in items:
        inner, eq, by = (p.strip() for p in str(item).rpartition("="))
        if eq and inner not in random:
            raise ArgumentError(
                f"`by_group` entry {item!r} must name a random factor before '=' "
                f"(random: {', '.join(random)})."
            )
        if by in random or not by:
            raise ArgumentError(
                f"`by_group` entry {item!r} must end in a column that is not a "
                "random factor, e.g. 'model' or 'config=model'."
            )
        require_columns(df, [by], "by-group")
        out.update({inner: by} if eq else dict.fromkeys(random, by))
    return out


def design_arrays(
    df: pd.DataFrame,
    *,
    metric: str,
    fixed,
    random,
    nested=None,
    interaction: bool = True,
    contrasts: str = "treatment",
    by_group=None,
    slope: str | None = None,
    seed_by_experiment=True,
) -> Design:
    """Turn a results table into the arrays of the mixed model.

    Parameters
    ----------
    df : pandas.DataFrame
    metric : str
        The response column.
    fixed : sequence of str
        Fixed factor columns (e.g. ``["model", "optimizer"]`` or
        ``["experiment"]``); an empty list fits the intercept only.
    random : sequence of str
        Grouping factor columns, one random intercept each.
    nested : str or sequence of str, optional
        ``"inner:outer"``: the inner factor's levels are taken as distinct
        within each level of the outer one (``config:seed`` gives one level per
        (seed, config) pair, as when every seed samples its own configurations).
    interaction : bool, default True
        Include all interactions of the fixed factors.
    contrasts : {"treatment", "sum"}
        Coding of the fixed factors (R's ``contr.treatment``/``contr.sum``).
    by_group : str or sequence of str, optional
        A variance per level of a factor: ``"model"`` gives every random
        factor one variance per model (lme4's ``(0 + model || config)``, a
        factor ``config[m]`` per model ``m``); ``"config=model"`` does so for
        ``config`` only.
    slope : str, optional
        A numeric column entering the fixed effects additively (the variable
        of a random slope).
    seed_by_experiment : bool or str, default True
        Add the seed x experiment random intercept where seeds are shared by
        experiments (see :func:`variance`); a string names the seed column
        (default ``"seed"``); False leaves it out.

    Returns
    -------
    Design
    """
    fixed = [fixed] if isinstance(fixed, str) else list(fixed or [])
    random = [random] if isinstance(random, str) else list(random or [])
    if metric in df.columns and "rerun" not in random:  # identical reruns: one observation
        df = analysed_rows(df, metric, fixed, keep_reruns=True)
    if contrasts not in ("treatment", "sum"):
        raise ArgumentError(
            f"`contrasts` must be 'treatment' or 'sum'; got {contrasts!r}."
        )
    if not random:
        raise ArgumentError(
            "`random` must name at least one grouping column (e.g. seed, config)."
        )
    for name, cols in (("fixed", fixed), ("random", random)):
        if len(set(cols)) != len(cols):
            raise ArgumentError(f"`{name}` repeats a column: {cols}.")
    both = sorted(set(fixed) & set(random))
    if both:
        raise ArgumentError(
            f"column(s) {', '.join(map(repr, both))} given as both fixed "
            "and random; a factor is one or the other."
        )
    if metric in fixed or metric in random:
        raise ArgumentError(f"the metric column {metric!r} cannot also be a factor.")
    if fixed:
        require_columns(df, fixed, "fixed")
    require_columns(df, random, "random")
    y = metric_values(df, metric)
    nest = _parse_nested(nested, random)
    memo = {}  # column -> its codes and levels, coded once for every term using it
    if fixed or slope is not None:
        X, names, terms, hyp, cell_means, cell_labels, cell_levels, dropped = (
            _fixed_design(df, fixed, interaction, contrasts, slope, memo)
        )
        if dropped:
            warnings.warn(
                f"fixed-effect column(s) {', '.join(dropped)} are linear "
                "combinations of the columns before them (an empty cell of the "
                "design, or a factor determined by others) and were dropped, as "
                "lme4 does; each F test tests the estimable part of its "
                "hypothesis, as lmerTest's type III tests do.",
                VarevalWarning,
                stacklevel=3,
            )
    else:
        X = np.ones((len(df), 1))
        names, terms, hyp, dropped = ("(Intercept)",), {}, {}, []
        cell_means, cell_labels = np.ones((1, 1)), ("(all)",)
        cell_levels = ({},)
    split = _parse_by_group(by_group, random, df)
    groups, group_names, level_names, split_names = [], [], [], {}
    resolved = {}
    for col in random:
        codes, levels, name = _nested_factor(df, col, nest, resolved, memo=memo)
        if len(levels) < 2:
            raise DataError(
                f"random column {col!r} has one level ({levels[0]!r}); a "
                "variance needs at least two levels."
            )
        if col not in split:
            groups.append(codes)
            group_names.append(name)
            level_names.append(tuple(levels))
            continue
        by = split[col]
        gcodes, glevels = _factor(df, by, "by-group", memo)
        parts = []
        for gi, glev in enumerate(glevels):
            rows = gcodes == gi
            used, inv = np.unique(codes[rows], return_inverse=True)
            if used.size < 2:
                raise DataError(
                    f"random column {col!r} has {used.size} level(s) where "
                    f"{by!r} is {glev!r}; a variance per {by} needs at least two."
                )
            c = np.full(codes.size, -1, dtype=np.intp)
            c[rows] = inv
            groups.append(c)
            parts.append(f"{name}[{glev}]")
            level_names.append(tuple(levels[i] for i in used))
        group_names += parts
        split_names[name] = tuple(parts)
    seed_term = None
    if seed_by_experiment is not False and fixed and not split and slope is None:
        col = "seed" if seed_by_experiment is True else str(seed_by_experiment)
        if col not in random:
            if seed_by_experiment is not True:
                raise ArgumentError(
                    f"`seed_by_experiment` names {col!r}, which is not a random "
                    f"factor (random: {', '.join(random)})."
                )
        else:
            extra = _seed_by_experiment(df, col, fixed, groups, memo)
            if extra is not None:
                codes, levels = extra
                seed_term = f"{col}:{':'.join(fixed)}"
                groups.append(codes)
                group_names.append(seed_term)
                level_names.append(levels)
    return Design(
        y=y,
        X=X,
        fixed_names=names,
        terms=terms,
        hyp=hyp,
        cell_means=cell_means,
        cell_labels=cell_labels,
        cell_levels=cell_levels,
        groups=groups,
        group_names=tuple(group_names),
        level_names=tuple(level_names),
        dropped=tuple(dropped),
        by_group=split_names,
        seed_term=seed_term,
    )


def _seed_by_experiment(df, seed, fixed, groups, memo=None):
    """Codes and level names of the seed x experiment factor, or None.

    Only where it is a variance of its own: some seed is shared by several
    experiments (cells of ``fixed``), a level holds more than one run (else it
    is the residual), and no grouping factor already splits the runs the same
    way (configurations of their own per seed and experiment).
    """
    s_codes, s_levels = _factor(df, seed, "random", memo)
    coded = [_factor(df, c, "fixed", memo) for c in fixed]
    sizes = [len(levels) for _, levels in coded]
    cells, cell_keys = _sorted_codes(
        np.ravel_multi_index([c for c, _ in coded], sizes), int(np.prod(sizes, dtype=float))
    )
    cell_names = [
        "_".join(lv[i] for (_, lv), i in zip(coded, ix, strict=True))
        for ix in zip(*np.unravel_index(cell_keys, sizes), strict=True)
    ]
    k = cell_keys.size
    codes, uniq = _sorted_codes(s_codes * k + cells, len(s_levels) * k)
    n = uniq.size
    if n == len(s_levels) or n == codes.size:  # every seed in one cell; one run a level
        return None
    if any(_same_partition(g, codes, n) for g in groups):
        return None
    levels = tuple(f"{s_levels[u // k]}:{cell_names[u % k]}" for u in uniq.tolist())
    return codes.astype(np.intp), levels


def _same_partition(g, codes, n: int) -> bool:
    """Whether factor codes ``g`` (-1: no level) group the rows as ``codes`` (0..n-1) do."""
    if g.min() < 0:
        return False
    level = np.empty(n, dtype=g.dtype)
    level[codes] = g  # one level of g per code, if g is constant within each code
    return bool(np.array_equal(level[codes], g)) and np.count_nonzero(np.bincount(g)) == n


def variance(
    df: pd.DataFrame,
    *,
    metric: str,
    fixed=("experiment",),
    random=("seed", "config"),
    nested=None,
    reml: bool = True,
    interaction: bool = True,
    contrasts: str = "treatment",
    confidence: float = 0.95,
    pairs_by: str | None = None,
    by_group=None,
    slope: str | None = None,
    correlated: bool = True,
    intervals: str | None = None,
    n_resamples: int = 1000,
    bootstrap_lrt: bool = False,
    rng=None,
    seed_by_experiment=True,
    progress=False,
) -> VarianceAnalysis:
    """Decompose a metric's variance and test the DECoVaC hypotheses.

    Estimands: the variance components of the random intercepts (e.g. seed and
    configuration) and the residual; the fixed-effect differences between the
    experiments (cells of ``fixed``). Tests: H1/H2 likelihood-ratio tests of
    each variance being zero (boundary-corrected p-values), H3 type III F tests
    of each fixed term and of all cells being equal, with Satterthwaite and
    Kenward-Roger denominator df, and pairwise cell differences with
    Satterthwaite df, ``confidence`` CIs and Holm-adjusted p-values
    (Bouthillier et al. / DECoVaC; Kuznetsova et al. 2017; Kenward & Roger 1997).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per run.
    metric : str
        The score column.
    fixed : sequence of str
        Fixed factor columns; default ``("experiment",)``.
    random : sequence of str
        Grouping columns with a random intercept each; default ``("seed", "config")``.
    nested : str or sequence of str, optional
        E.g. ``"config:seed"`` when configuration labels repeat across seeds but
        mean different configurations.
    reml : bool, default True
        REML (default) or ML.
    interaction : bool, default True
        Include the interactions of the fixed factors.
    contrasts : {"treatment", "sum"}
        Coding of the fixed factors (affects coefficient meaning, not the tests).
    confidence : float, default 0.95
        Level of the pairwise CIs.
    pairs_by : str, optional
        Compare the levels of this fixed factor, each level's mean being the
        equally weighted average of its cells over the other factors (a
        least-squares mean). Default: compare all cells (experiments).
    by_group : str or sequence of str, optional
        ``"model"``: a variance per model for every random factor (lme4's
        ``(0 + model || config)``); ``"config=model"``: for ``config`` only.
        Adds, per split factor, an LRT of one common variance against the
        per-group variances (``group_lrt``).
    slope : str, optional
        A numeric column (e.g. epoch, days) whose slope varies by the level of
        the single random factor: lme4's ``y ~ fixed + x + (x | g)``. The
        column also enters the fixed effects. The LRT then tests the slope
        (against a random intercept alone).
    correlated : bool, default True
        With ``slope``: estimate the intercept-slope correlation, or fix it
        at 0 (``(1 | g) + (0 + x | g)``).
    intervals : {None, "profile", "bootstrap"}
        ``confidence`` intervals for each component's SD, variance, share and
        ICC: by profile likelihood (:func:`vareval.stats.profile_intervals`, as
        lme4's ``confint``) or parametric bootstrap percentiles
        (:func:`vareval.stats.bootstrap_intervals`, ``n_resamples`` responses).
    n_resamples : int, default 1000
        Simulated responses for the bootstrap intervals and LRTs.
    bootstrap_lrt : bool, default False
        Also test each random effect by the parametric bootstrap LRT
        (:func:`vareval.stats.bootstrap_lrt`, pbkrtest's ``PBmodcomp``), for
        when the chi-bar-square p-value is doubtful (few levels).
    rng : int or numpy.random.Generator, optional
        Seed or generator for the bootstrap.
    seed_by_experiment : bool or str, default True
        Where seeds are shared by experiments (common random numbers), a seed
        may help one experiment more than another: fit that seed x experiment
        interaction as one more random intercept (lme4's ``(1 | seed:experiment)``,
        ``seed:model:optimizer`` for several fixed factors), test it by its
        LRT like the other terms, and keep it in the model of the pairwise
        differences, whose SE then equals the paired SE over seeds in a
        balanced design. A string names the seed column (default ``"seed"``);
        False leaves the term out (the intervals then assume it is 0). Not
        added with ``by_group`` or ``slope``, where seeds are not shared, where
        each seed and experiment holds one run, or where a factor already
        groups the runs by seed and experiment.
    progress : bool or None, default False
        Show tqdm bars over the likelihood-ratio refits, the profile
        intervals and the bootstrap's refitted draws (None: on a terminal
        only).

    Returns
    -------
    VarianceAnalysis
    """
    fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed or ())
    random = (random,) if isinstance(random, str) else tuple(random or ())
    if intervals not in (None, "profile", "bootstrap"):
        raise ArgumentError(
            "`intervals` must be None, 'profile' or 'bootstrap'; "
            f"got {intervals!r}."
        )
    if "status" in df.columns:  # the finished trials, as a store reads them
        df = df[df["status"].astype(str) == "done"]
    if metric in df.columns:  # the reruns, read once for the rows and the design's statement
        reading = reruns_of(df, metric, list(fixed) or None)
        df = df.copy(deep=False)
        df.attrs = {**df.attrs, "reruns": reading}
    d = design_arrays(
        df,
        metric=metric,
        fixed=fixed,
        random=random,
        nested=nested,
        interaction=interaction,
        contrasts=contrasts,
        by_group=by_group,
        slope=slope,
        seed_by_experiment=seed_by_experiment,
    )
    if slope is not None and (intervals is not None or bootstrap_lrt):
        raise ArgumentError(
            "`intervals` and `bootstrap_lrt` are not available with `slope` "
            "(random slopes); fit without them."
        )
    if slope is None:
        try:
            fit = fit_mixed(
                d.y,
                d.X,
                d.groups,
                fixed_names=d.fixed_names,
                group_names=d.group_names,
                level_names=d.level_names,
                reml=reml,
            )
        except FitError as exc:
            raise FitError(_with_reruns(str(exc), df, metric, fixed)) from None
    else:
        if len(random) != 1 or by_group is not None:
            raise ArgumentError(
                "`slope` needs exactly one random factor (the one whose slope "
                f"varies) and no `by_group`; got random={list(random)}."
            )
        fit = fit_slopes(
            d.y,
            d.X,
            d.groups[0],
            d.X[:, d.terms[slope][0]],
            correlated=correlated,
            fixed_names=d.fixed_names,
            group_name=d.group_names[0],
            slope_name=slope,
            level_names=d.level_names[0],
            reml=reml,
        )
    lrt = random_effect_lrt(fit, progress=progress)
    group_lrt = tuple(
        equal_variance_lrt(fit, parts, name=f"{name}: one variance")
        for name, parts in d.by_group.items()
    )
    means, labels = d.cell_means, d.cell_labels
    if pairs_by is not None:
        if pairs_by not in fixed:
            raise ArgumentError(
                f"`pairs_by` must be one of the fixed factors ({', '.join(fixed)}); "
                f"got {pairs_by!r}."
            )
        levels = sorted({c[pairs_by] for c in d.cell_levels})
        means = np.array(
            [
                d.cell_means[[c[pairs_by] == lev for c in d.cell_levels]].mean(axis=0)
                for lev in levels
            ]
        )
        labels = tuple(levels)
    cache = {}
    tests = _f_tests(fit, d, slope, cache)
    if means.shape[0] > 1 and fit.converged:
        pairs = pairwise(fit, means, labels=labels, confidence=confidence, _cache=cache)
    else:  # one cell: nothing to compare; no convergence: nothing to report
        pair_labels = [f"{a} - {b}" for a, b in itertools.combinations(labels, 2)]
        pairs = _no_pairs(pair_labels, confidence)
    withheld = None
    if not fit.converged:
        withheld = WITHHELD
        warnings.warn(withheld, VarevalWarning, stacklevel=2)
    rng = np.random.default_rng(rng)
    ci = None
    if intervals or bootstrap_lrt:  # imported when asked for: they load scipy.stats
        from vareval.stats.variance import bootstrap as mixed_bootstrap
        from vareval.stats.variance.intervals import profile_intervals
    if intervals == "profile":
        ci = profile_intervals(fit, confidence=confidence, progress=progress)
    elif intervals == "bootstrap":
        ci = mixed_bootstrap.bootstrap_intervals(
            fit, n_resamples=n_resamples, confidence=confidence, rng=rng, progress=progress
        )
    pb = ()
    if bootstrap_lrt:
        pb = tuple(
            mixed_bootstrap.bootstrap_lrt(fit, term, n_resamples=n_resamples, rng=rng,
                                          progress=progress)
            for term in fit.group_names
        )
    return VarianceAnalysis(
        fit=fit,
        metric=metric,
        fixed=fixed,
        random=tuple(d.group_names),
        lrt=lrt,
        f_tests=tests,
        pairs=pairs,
        group_lrt=group_lrt,
        slope=slope,
        intervals=ci,
        pb_lrt=pb,
        withheld=withheld,
        seed_term=d.seed_term,
        design=design_of(
            df, by=list(fixed) or None, metric=metric, rerun_level="rerun" not in random
        ),
    )


def _with_reruns(message: str, df, metric, fixed) -> str:
    """A residual-confounding message that also says identical reruns were analysed once."""
    if "confounded with the residual" not in message:
        return message
    if reruns_of(df, metric, list(fixed) or None).read_as != "once":
        return message
    return (
        message.rstrip(".") + ": its identical reruns (nondeterminism 0, the residual variance "
        "is zero) were analysed once, one row per cell; fit without that factor."
    )


WITHHELD = (
    "the model did not converge: F tests and pairwise differences are not "
    "reported; try ML, fewer random terms or more data."
)


def _f_tests(fit, d, slope, cache) -> dict:
    """Type III F tests of each fixed term (and of all cells) by both df methods.

    A fit that did not converge gives no tests: their values are NaN.
    """
    hyps = [(term, L) for term, L in d.hyp.items() if L.shape[0]]  # estimable ones
    if d.cell_means.shape[0] > 1 and len(set(d.hyp) - {slope}) > 1:
        hyps.append(("all experiments", d.cell_means[1:] - d.cell_means[0]))
    nan = float("nan")
    return {
        method: tuple(
            f_test(fit, L, method=method, term=term, _cache=cache)
            if fit.converged
            else FTestResult(term, nan, float(np.linalg.matrix_rank(L)), nan, nan, method)
            for term, L in hyps
        )
        for method in ("satterthwaite", "kenward-roger")
    }


def _no_pairs(labels, confidence) -> ContrastResult:
    """Pairwise differences with every value NaN (none to report)."""
    nan = np.full(len(labels), np.nan)
    return ContrastResult(
        labels=tuple(labels),
        estimate=nan,
        se=nan,
        df=nan,
        statistic=nan,
        pvalue=nan,
        ci_low=nan,
        ci_high=nan,
        pvalue_holm=nan,
        confidence=confidence,
        method="satterthwaite",
    )


__all__ = [
    "Design",
    "FTestResult",
    "RandomEffectLRT",
    "VarianceAnalysis",
    "design_arrays",
    "variance",
]
