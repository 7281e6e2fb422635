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

import numpy as np
import pandas as pd

from vareval.data.validate import metric_values, require_columns
from vareval.errors import ArgumentError, DataError, VarevalWarning
from vareval.stats.mixed import MixedModelFit, fit_mixed
from vareval.stats.mixed_tests import (
    MAX_KR_LEVELS,
    ContrastResult,
    FTestResult,
    RandomEffectLRT,
    f_test,
    pairwise,
    random_effect_lrt,
)


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


@dataclasses.dataclass(frozen=True, repr=False)
class VarianceAnalysis:
    """Everything :func:`variance` computed; ``.to_frame()`` gives tidy tables.

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
    """

    fit: MixedModelFit
    metric: str
    fixed: tuple
    random: tuple
    lrt: tuple
    f_tests: dict
    pairs: ContrastResult

    def __repr__(self) -> str:
        tables = [
            self.components_frame().to_string(index=False),
            self.lrt_frame().to_string(index=False),
            self.f_frame().to_string(index=False),
        ]
        head = (
            f"VarianceAnalysis(metric={self.metric!r}, fixed={list(self.fixed)}, "
            f"random={list(self.random)}, reml={self.fit.reml})"
        )
        return "\n\n".join([head, *tables])

    def components_frame(self) -> pd.DataFrame:
        """Variance components: variance, SD, share of total, ICC, levels."""
        f = self.fit
        return pd.DataFrame(
            {
                "component": list(f.components),
                "levels": list(f.n_levels) + [f.n_obs],
                "variance": f.variance,
                "sd": f.sd,
                "share": f.share,
                "icc": f.icc,
            }
        )

    def fixed_frame(self) -> pd.DataFrame:
        """Fixed effects with SE."""
        f = self.fit
        return pd.DataFrame(
            {"term": list(f.fixed_names), "estimate": f.coef, "se": f.se}
        )

    def lrt_frame(self) -> pd.DataFrame:
        """H1/H2: the likelihood-ratio tests."""
        return pd.DataFrame(
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

    def to_frame(self) -> dict:
        """All tables: components, fixed, lrt, f_tests, pairwise, blups."""
        return {
            "components": self.components_frame(),
            "fixed": self.fixed_frame(),
            "lrt": self.lrt_frame(),
            "f_tests": self.f_frame(),
            "pairwise": self.pairs_frame(),
            "blups": self.blups_frame(),
        }

    def to_dict(self) -> dict:
        """JSON-ready values of every table and the fit's summary numbers."""
        f = self.fit
        tables = {
            k: v.to_dict(orient="records")
            for k, v in self.to_frame().items()
            if k != "blups"
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
            **tables,
        }


# --------------------------------------------------------------------------
# building the design


def _factor(df: pd.DataFrame, col: str, role: str):
    """Codes and sorted level names of a factor column; refuse missing values."""
    s = df[col]
    missing = s.isna().to_numpy()
    if missing.any():
        rows = ", ".join(str(i + 1) for i in np.flatnonzero(missing)[:8])
        raise DataError(
            f"{role} column {col!r} has missing values in data row(s) "
            f"{rows}; fill or remove those rows explicitly."
        )
    levels = sorted(pd.unique(s), key=lambda v: (str(type(v)), v))
    codes = pd.Categorical(s, categories=levels).codes.astype(np.intp)
    return codes, [str(v) for v in levels]


def _coding(codes, k, contrasts):
    """Contrast columns for a factor with k levels: treatment or sum coding."""
    n = codes.size
    if contrasts == "treatment":
        return np.column_stack([(codes == i).astype(float) for i in range(1, k)])
    M = np.zeros((n, k - 1))
    for i in range(k - 1):
        M[:, i] = (codes == i).astype(float) - (codes == k - 1).astype(float)
    return M


def _code_matrix(k, contrasts):
    """The k x (k-1) coding matrix (rows: levels)."""
    return _coding(np.arange(k), k, contrasts)


def _fixed_design(df, fixed, interaction, contrasts):
    """X with named columns, terms, type III hypotheses and the cell-mean rows."""
    n = len(df)
    coded = {}
    for col in fixed:
        codes, levels = _factor(df, col, "fixed")
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

    def term_cols(term, coding_fn):
        mats = [coding_fn(col) for col in term]
        names = [
            [f"{col}[{lev}]" for lev in levels]
            for col, levels in (
                (c, coded[c][1][1:] if contrasts == "treatment" else coded[c][1][:-1])
                for c in term
            )
        ]
        out, out_names = [], []
        for combo in itertools.product(*[range(m.shape[1]) for m in mats]):
            v = np.ones(mats[0].shape[0])
            for m, i in zip(mats, combo, strict=True):
                v = v * m[:, i]
            out.append(v)
            out_names.append(
                ":".join(nm[i] for nm, i in zip(names, combo, strict=True))
            )
        return out, out_names

    # the model's X
    cols, names, terms = [np.ones(n)], ["(Intercept)"], {}
    for term in terms_list:
        c, nm = term_cols(
            term, lambda col: _coding(coded[col][0], len(coded[col][1]), contrasts)
        )
        terms[":".join(term)] = list(range(len(cols), len(cols) + len(c)))
        cols += c
        names += nm
    X = np.column_stack(cols)
    # cells: every observed combination of the fixed factors, as rows of a
    # design matrix built the same way
    cell_codes = np.column_stack([coded[c][0] for c in fixed])
    uniq = np.unique(cell_codes, axis=0)
    rows = []
    for cell in uniq:
        r = [1.0]
        for term in terms_list:
            v = np.ones(1)
            for col in term:
                k = len(coded[col][1])
                v = np.kron(v, _code_matrix(k, contrasts)[cell[fixed.index(col)]])
            r += list(v)
        rows.append(r)
    cell_means = np.array(rows)
    cell_levels = tuple(
        {c: coded[c][1][cell[i]] for i, c in enumerate(fixed)} for cell in uniq
    )
    cell_labels = tuple("_".join(lev.values()) for lev in cell_levels)
    # type III hypotheses: express each term in sum coding (orthogonal, so the
    # term's columns test the marginal hypothesis) and map to the model's X.
    if contrasts == "sum":
        hyp = {t: np.eye(X.shape[1])[idx] for t, idx in terms.items()}
    else:
        Xs, _, terms_s = _fixed_design_sum(df, fixed, interaction, coded, terms_list)
        T = np.linalg.lstsq(Xs, X, rcond=None)[0]
        hyp = {t: T[terms_s[t]] for t in terms}
    return X, tuple(names), terms, hyp, cell_means, cell_labels, cell_levels


def _fixed_design_sum(df, fixed, interaction, coded, terms_list):
    n = len(df)
    cols, terms = [np.ones(n)], {}
    for term in terms_list:
        mats = [_coding(coded[c][0], len(coded[c][1]), "sum") for c in term]
        new = []
        for combo in itertools.product(*[range(m.shape[1]) for m in mats]):
            v = np.ones(n)
            for m, i in zip(mats, combo, strict=True):
                v = v * m[:, i]
            new.append(v)
        terms[":".join(term)] = list(range(len(cols), len(cols) + len(new)))
        cols += new
    return np.column_stack(cols), None, terms


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
        out[inner] = outer
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

    Returns
    -------
    Design
    """
    fixed = [fixed] if isinstance(fixed, str) else list(fixed or [])
    random = [random] if isinstance(random, str) else list(random or [])
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
    if fixed:
        X, names, terms, hyp, cell_means, cell_labels, cell_levels = _fixed_design(
            df, fixed, interaction, contrasts
        )
    else:
        X = np.ones((len(df), 1))
        names, terms, hyp = ("(Intercept)",), {}, {}
        cell_means, cell_labels = np.ones((1, 1)), ("(all)",)
        cell_levels = ({},)
    groups, group_names, level_names = [], [], []
    for col in random:
        codes, levels = _factor(df, col, "random")
        name = col
        if col in nest:
            outer = nest[col]
            require_columns(df, [outer], "nested")
            oc, olev = _factor(df, outer, "random")
            pair = pd.factorize(pd.Series(list(zip(oc, codes, strict=True))), sort=True)
            codes = pair[0].astype(np.intp)
            levels = [f"{levels[c]}:{olev[o]}" for o, c in pair[1]]
            name = f"{col}:{outer}"
        if len(levels) < 2:
            raise DataError(
                f"random column {col!r} has one level ({levels[0]!r}); a "
                "variance needs at least two levels."
            )
        groups.append(codes)
        group_names.append(name)
        level_names.append(tuple(levels))
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
    )


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

    Returns
    -------
    VarianceAnalysis
    """
    fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed or ())
    random = (random,) if isinstance(random, str) else tuple(random or ())
    d = design_arrays(
        df,
        metric=metric,
        fixed=fixed,
        random=random,
        nested=nested,
        interaction=interaction,
        contrasts=contrasts,
    )
    fit = fit_mixed(
        d.y,
        d.X,
        d.groups,
        fixed_names=d.fixed_names,
        group_names=d.group_names,
        level_names=d.level_names,
        reml=reml,
    )
    lrt = random_effect_lrt(fit)
    tests = {}
    cache = {}
    methods = ["satterthwaite", "kenward-roger"]
    if sum(fit.n_levels) > MAX_KR_LEVELS:
        methods.remove("kenward-roger")
        warnings.warn(
            f"Kenward-Roger skipped: {sum(fit.n_levels)} random-effect levels "
            f"exceed {MAX_KR_LEVELS}; only Satterthwaite df are reported.",
            VarevalWarning,
            stacklevel=2,
        )
    for method in methods:
        out = []
        for term, L in d.hyp.items():
            out.append(f_test(fit, L, method=method, term=term, _cache=cache))
        if d.cell_means.shape[0] > 1 and len(d.hyp) > 1:
            M = d.cell_means
            L_all = M[1:] - M[0]
            out.append(
                f_test(fit, L_all, method=method, term="all experiments", _cache=cache)
            )
        tests[method] = tuple(out)
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
    if means.shape[0] > 1:
        pairs = pairwise(fit, means, labels=labels, confidence=confidence, _cache=cache)
    else:
        pairs = ContrastResult(
            labels=(),
            estimate=np.zeros(0),
            se=np.zeros(0),
            df=np.zeros(0),
            statistic=np.zeros(0),
            pvalue=np.zeros(0),
            ci_low=np.zeros(0),
            ci_high=np.zeros(0),
            pvalue_holm=np.zeros(0),
            confidence=confidence,
            method="satterthwaite",
        )
    return VarianceAnalysis(
        fit=fit,
        metric=metric,
        fixed=fixed,
        random=tuple(d.group_names),
        lrt=lrt,
        f_tests=tests,
        pairs=pairs,
    )


__all__ = [
    "Design",
    "FTestResult",
    "RandomEffectLRT",
    "VarianceAnalysis",
    "design_arrays",
    "variance",
]
