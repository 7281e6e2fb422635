"""Repeated runs on a results table: one call per job, columns named by role.

Each function reads the roles (``metric``, ``by``, ``pair_on``) from a tidy
DataFrame with one row per run, validates them (see
:mod:`vareval.data.validate`) and calls the statistics layer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from vareval import stats
from vareval.data.design import analysed_rows, design_of, is_share
from vareval.data.runs import usable_runs
from vareval.data.tables import ResultTable
from vareval.data.validate import groups, labels, metric_values, pairs, shown
from vareval.errors import ArgumentError, DataError
from vareval.stats._checks import as_rng, keyword_only, renamed_keywords
from vareval.stats._progress import progress_bar


@dataclasses.dataclass(frozen=True, repr=False)
class SummaryTable(ResultTable):
    """Per-method summaries and what happened to each method's planned runs.

    ``runs`` maps each method to its :class:`~vareval.data.runs.RunCount`;
    ``notes`` are the survivor sentences (empty when every run is covered).
    """

    runs: dict = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        """Every summary as plain values, each with its ``runs`` counts."""
        out = super().to_dict()
        for name, count in self.runs.items():
            out[name]["runs"] = count.to_dict()
        return out


@keyword_only("metric", "by")
def summarize(
    df, *, metric: str, by, confidence=0.95, higher_is_better=True, bounds=None
) -> SummaryTable:
    """Per-method summary of repeated runs (:func:`vareval.stats.summarize` per method).

    Each method's runs are counted first (:func:`vareval.data.runs.count_runs`:
    planned, done, failed, not run, non-finite); the summary covers the done
    runs with a finite metric, and ``notes`` says in words where that is a
    survivor statistic. A failed run is a row whose ``status`` column says
    ``failed`` (a run store's trials); an empty or non-finite metric is
    counted and named, not dropped silently.

    The design (:func:`vareval.data.design.design_of`) decides the interval:
    when a seed holds several runs (configurations, reruns), the mean's
    interval is over the seeds' means (``units`` seeds, t with units - 1
    df), since runs sharing a seed are not independent; it is intersected
    with the metric's bounds (known from its name, or ``bounds``).
    """
    used, runs = usable_runs(df, metric, by, min_runs=2)
    used = analysed_rows(used, metric, by, bounds=bounds)  # counted as trials, read as designed
    design = design_of(used, by=by, metric=metric, bounds=bounds)
    per = groups(used, metric, by, min_runs=2, bounds=bounds)
    clusters = _clusters(used, by, design) if design.clustered else {}
    results = {
        name: stats.summarize(
            x,
            confidence=confidence,
            higher_is_better=higher_is_better,
            clusters=clusters.get(name),
            bounds=design.bounds,
        )
        for name, x in per.items()
    }
    frame = pd.DataFrame(
        [
            {
                "method": name,
                "n": s.n,
                "units": s.units,
                "planned": runs[name].planned,
                "failed": runs[name].failed,
                "not_run": runs[name].not_run,
                "non_finite": runs[name].non_finite,
                "mean": s.mean,
                "sd": s.sd,
                "se": s.se,
                "mean_ci_low": s.mean_low,
                "mean_ci_high": s.mean_high,
                "median": s.median,
                "median_ci_low": s.median_low,
                "median_ci_high": s.median_high,
                "median_ci_coverage": s.median_ci_coverage,
                "iqr": s.iqr,
                "min": s.min,
                "max": s.max,
                "selected_best": s.selected,
            }
            for name, s in results.items()
        ]
    ).set_index("method")
    notes = tuple(filter(None, (c.sentence(name, metric) for name, c in runs.items())))
    return SummaryTable(
        f"Repeated runs of {metric!r} by method",
        results,
        frame,
        runs=runs,
        notes=notes + _interval_notes(design, results),
        design=design,
    )


def _clusters(used, by, design) -> dict:
    """Each method's replication-unit labels, aligned with :func:`groups`' arrays."""
    names = labels(used, by, "method")
    unit = used[design.unit].astype(str).to_numpy()
    return {str(n): unit[(names == n).to_numpy()] for n in pd.unique(names)}


def _interval_notes(design, results) -> tuple:
    """Say how the mean's interval was computed, and where it met the bounds."""
    notes = []
    if design.clustered:
        notes.append(
            f"the mean's interval is over the {design.unit}s' means (runs sharing a "
            f"{design.unit} are not independent); the mean weights each {design.unit} "
            "equally; the median has no interval"
        )
    elif design.unit is None:
        notes.append(
            "the design could not be inferred (no seed column): the intervals take "
            "every row as an independent run"
        )
    cut = [name for name, s in results.items() if s.clipped]
    if cut:
        notes.append(
            f"the mean's interval of {', '.join(cut)} was cut to the metric's bounds "
            f"[{design.bounds[0]:g}, {design.bounds[1]:g}] ({design.bounds_from})"
        )
    return tuple(notes)


@keyword_only("metric", "by")
@renamed_keywords(n_sim="n_resamples")
def best_of_k(
    df,
    *,
    metric: str,
    by=None,
    method=None,
    ks=(1, 3, 5, 10),
    n_resamples=100_000,
    higher_is_better=True,
    quantiles=(0.5, 0.9),
    relative=True,
    rng=None,
    progress=False,
) -> ResultTable:
    """The best-of-k illusion for each method's pooled runs (or one ``method``'s).

    ``progress`` (None: on a terminal only) shows a tqdm bar over the methods.
    """
    df = analysed_rows(df, metric, by)
    table = (
        {"all runs": metric_values(df, metric)}
        if by is None
        else groups(df, metric, by, min_runs=2)
    )
    if method is not None:
        if method not in table:
            raise DataError(f"method {method!r} not found (methods: {shown(table)}).")
        table = {method: table[method]}
    rng = as_rng(rng)  # one stream shared by the methods
    results = {}
    with progress_bar(len(table), "methods", progress if len(table) > 1 else False) as bar:
        for name, x in table.items():
            results[name] = stats.best_of_k(
                x, ks, n_resamples=n_resamples, higher_is_better=higher_is_better,
                quantiles=quantiles, relative=relative, rng=rng,
            )
            bar.update()
    rows = []
    for name, r in results.items():
        for i, k in enumerate(r.ks):
            row = {"method": name, "k": int(k)}
            row.update(
                {f"gap_q{q:g}": v for q, v in zip(r.quantiles, r.gap_quantiles[i], strict=True)}
            )
            row["mean_signed_difference"] = r.mean_signed_difference[i]
            rows.append(row)
    frame = pd.DataFrame(rows).set_index(["method", "k"])
    return ResultTable(
        "Apparent gap between two identical methods keeping their best of k", results, frame
    )


def _two_methods(df, by, a, b) -> tuple[str, str]:
    """Name the two methods to compare: as given, or the only two in the table."""
    if a is not None and b is not None:
        return str(a), str(b)
    names = list(pd.unique(labels(df, by, "method")))
    if len(names) != 2 or (a is not None or b is not None):
        raise DataError(
            f"name the two methods to compare (`a` and `b`); the table has {len(names)}: "
            f"{', '.join(map(str, names[:10]))}."
        )
    return str(names[0]), str(names[1])


def split_sizes(df, repeated=None, test_fraction=None, train_fraction=None):
    """``(n_train, n_test)`` when each replication re-drew the train/test split, else None.

    Whether it did and the shares are the design's
    (:func:`vareval.data.design.design_of`): ``repeated``,
    ``test_fraction`` and ``train_fraction`` as given, else a run store's
    declaration (``[randomness] split``, ``[params]`` sizes).

    Raises
    ------
    DataError
        If the split was re-drawn and no test fraction is known: the naive
        paired t test would then be anti-conservative.
    """
    return sizes_of(design_of(df, repeated=repeated, test_fraction=test_fraction,
                              train_fraction=train_fraction))  # fmt: skip


def sizes_of(design) -> tuple[int, int] | None:
    """The corrected test's ``(n_train, n_test)`` from a design, or None for fixed splits.

    Only their ratio ``n_test / n_train`` (the test share over the training
    share) enters the test.
    """
    if design.split != "re-drawn":
        return None
    test, train = design.test_fraction, design.train_fraction
    if test is None:
        raise DataError(
            f"each replication re-drew the train/test split ({design.split_from}), so "
            "replications share training data and the naive paired t test over them is "
            "anti-conservative (Nadeau and Bengio 2003); give the share of the data in "
            "each test split (test_fraction=, --test-fraction) for the corrected "
            "resampled t test."
        )
    counts = all(_is_count(x) for x in (test, train))
    for name, x, who in (("test_fraction", test, design.test_fraction_from),
                         ("train_fraction", train, design.train_fraction_from)):  # fmt: skip
        if x is not None and not counts and not is_share(x):
            raise ArgumentError(
                f"`{name}` must be a share of the data in (0, 1) ({who}); got {x!r}"
                + (" (a count needs the other size as a count too)." if _is_count(x) else ".")
            )
    if train is None:
        raise ArgumentError(
            f"the training share of each re-drawn split is unknown (test share {test!r}, "
            f"{design.test_fraction_from}); declare it (train_fraction=, --train-fraction, "
            "or train_size in the experiment's [params])."
        )
    if not counts and test + train > 1 + 1e-9:
        raise ArgumentError(
            f"test share {test!r} ({design.test_fraction_from}) and training share "
            f"{train!r} ({design.train_fraction_from}) add up to more than 1."
        )
    from fractions import Fraction  # for re-drawn splits only (~1 ms to import)

    ratio = Fraction(test).limit_denominator(10**6) / Fraction(train).limit_denominator(10**6)
    return ratio.denominator, ratio.numerator


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _split_notes(design) -> tuple:
    """Where the split's design came from, or that the naive test assumes fixed splits."""
    if design.split == "unknown":
        return (
            "the design does not say whether each seed re-drew the train/test split; "
            "the paired t test assumes fixed splits (if they were re-drawn: --test "
            "corrected --test-fraction F, or [randomness] split in the experiment)",
        )
    if design.split == "re-drawn":
        return (
            f"splits re-drawn ({design.split_from}); test share "
            f"{design.test_fraction:g} ({design.test_fraction_from}); training share "
            f"{design.train_fraction:g} ({design.train_fraction_from}): the corrected "
            f"test uses n_test/n_train = {design.test_fraction / design.train_fraction:.3g}",
        )
    return (f"splits fixed ({design.split_from})",)


def paired_units(df, metric, by, pair_on, design, a, b) -> tuple:
    """Matched scores of ``a`` and ``b``, and a note when runs were averaged to seed means.

    Paired on the replication unit alone (``pair_on`` the seed) while a seed
    holds several runs of a method (configurations, reruns), the pair is the
    two methods' seed means: the seeds are the independent replications, and
    a method's runs within a seed are averaged first. That needs the design to
    name those runs (a run store, or ``config``/``rerun`` columns); any other
    ``pair_on``, or a table without them, matches rows one to one, as given.
    """
    # several rows per seed are runs only where the design names them (a store's
    # configurations and reruns, or those columns); otherwise a duplicate is refused
    named = design.source == "store" or {"config", "rerun"} & set(df.columns)
    given = design.bounds if design.bounds_from == "given" else None
    if not (named and design.clustered and design.pair_on == (design.unit,)):
        xa, xb, _ = pairs(df, metric, by, pair_on, a, b, given)
        return xa, xb, ()
    keys = [by] if isinstance(by, str) else list(by)
    means = (
        df.assign(**{metric: metric_values(df, metric, given)})
        .groupby([*keys, design.unit], sort=False, as_index=False)[metric]
        .mean()
    )
    xa, xb, _ = pairs(means, metric, by, design.unit, a, b, given)
    return xa, xb, (
        f"paired on {design.unit} means: each method's runs within a {design.unit} (up to "
        f"{design.runs_per_unit}: configurations, reruns) averaged to one score per "
        f"{design.unit}, since the {design.unit}s are the independent replications",
    )


def comparisons(df, by, a=None, b=None, baseline=None, all_pairs=False) -> list:
    """The ``(A, B)`` pairs to compare: ``a`` and ``b``, each method against ``baseline``, or all.

    Without any of them, the table's only two methods.
    """
    chosen = [n for n, v in (("a/b", a is not None or b is not None),
                             ("baseline", baseline is not None),
                             ("all_pairs", bool(all_pairs))) if v]  # fmt: skip
    if len(chosen) > 1:
        raise ArgumentError(f"give one of a/b, baseline or all_pairs; got {', '.join(chosen)}.")
    if baseline is None and not all_pairs:
        return [_two_methods(df, by, a, b)]
    names = [str(n) for n in pd.unique(labels(df, by, "method"))]
    if all_pairs:
        return [(x, y) for i, x in enumerate(names) for y in names[i + 1 :]]
    if str(baseline) not in names:
        raise ArgumentError(
            f"`baseline` {baseline!r} is not a method; methods: {shown(names)}."
        )
    return [(x, str(baseline)) for x in names if x != str(baseline)]


@keyword_only("metric", "by", "pair_on")
@renamed_keywords(n_boot="n_resamples")
def paired(
    df,
    *,
    metric: str,
    by,
    pair_on,
    a=None,
    b=None,
    baseline=None,
    all_pairs=False,
    confidence=0.95,
    n_resamples=10_000,
    higher_is_better=True,
    repeated=None,
    test_fraction=None,
    train_fraction=None,
    rng=None,
    bounds=None,
    progress=False,
) -> ResultTable:
    """Paired difference A - B over replications matched on ``pair_on`` (e.g. seed).

    Two methods (``a`` and ``b``, or the table's only two), every method
    against ``baseline``, or ``all_pairs``; with several comparisons each
    draws its bootstrap from its own stream (spawned from ``rng``) and the
    table's ``pvalue_holm`` holds Holm-adjusted p-values, as ``vareval
    paired --baseline/--all-pairs`` prints.

    When each replication re-drew the train/test split (``repeated=
    "data-sampling"``, or a run store whose data-split source varies with
    the seed), the test is the corrected resampled t test with the ratio
    ``test_fraction / train_fraction`` (given, or the store's ``[params]``
    sizes), and without a test share a refusal; see :func:`sizes_of`. A
    score outside ``bounds`` (low, high), or outside the bounds the metric's
    name implies, is refused by row. ``progress`` (None: on a terminal only)
    shows a tqdm bar over several comparisons.
    """
    pairs_of = comparisons(df, by, a, b, baseline, all_pairs)
    df, survivors = _finished(analysed_rows(df, metric, by, bounds=bounds), metric, by)
    design = design_of(
        df, by=by, metric=metric, pair_on=pair_on, repeated=repeated,
        test_fraction=test_fraction, train_fraction=train_fraction, bounds=bounds,
    )  # fmt: skip
    sizes = sizes_of(design)
    streams = [rng] if len(pairs_of) == 1 else as_rng(rng).spawn(len(pairs_of))
    results, rows, unit_note = {}, [], ()
    shown_bar = progress if len(pairs_of) > 1 else False
    with progress_bar(len(pairs_of), "comparisons", shown_bar) as bar:
        for (x, y), stream in zip(pairs_of, streams, strict=True):
            xa, xb, unit_note = paired_units(df, metric, by, pair_on, design, x, y)
            r = stats.paired_difference(
                xa, xb, confidence=confidence, n_resamples=n_resamples,
                higher_is_better=higher_is_better, split_sizes=sizes, rng=stream,
            )  # fmt: skip
            results[f"{x} - {y}"] = r
            rows.append(_paired_row(f"{x} - {y}", r))
            bar.update()
    frame = pd.DataFrame(rows).set_index("comparison")
    if len(pairs_of) > 1:
        p = frame["pvalue"].to_numpy()
        holm = np.full(p.size, np.nan)
        defined = np.isfinite(p)
        holm[defined] = stats.adjust_pvalues(p[defined], "holm")
        frame.insert(frame.columns.get_loc("pvalue") + 1, "pvalue_holm", holm)
    title = f"Paired difference in {metric!r}, matched on {pair_on}"
    if len(pairs_of) > 1:
        title += f" ({len(pairs_of)} comparisons, p-values Holm-adjusted)"
    return ResultTable(
        title, results, frame, design=design,
        notes=survivors + unit_note + _split_notes(design),
    )  # fmt: skip


def _finished(df, metric, by) -> tuple:
    """The finished runs (a ``status`` column or a store says which), and what was left out.

    A store leaves its failed trials out when read; its export keeps them as
    rows with a ``status``: both give the paired analysis the same runs.
    """
    used, runs = usable_runs(df, metric, by, min_runs=2)
    return used, tuple(filter(None, (c.sentence(n, metric) for n, c in runs.items())))


def _paired_row(key: str, r) -> dict:
    """One comparison's row: the SE that made the interval (``se_corrected``) beside it."""
    return {
        "comparison": key,
        "pairs": r.k,
        "estimate": r.estimate,
        "se": r.se,
        "se_corrected": r.se_corrected,
        "test_train_ratio": r.test_train_ratio,
        "t_ci_low": r.low,
        "t_ci_high": r.high,
        "boot_ci_low": r.bootstrap_low,
        "boot_ci_high": r.bootstrap_high,
        "test": r.test,
        "pvalue": r.pvalue,
        "correlation": r.correlation,
        "var_a": r.var_a,
        "var_b": r.var_b,
        "cov": r.cov,
        "var_diff": r.var_diff,
        "se_unpaired": r.se_unpaired,
        "selected_gap": r.selected_gap,
    }


@keyword_only("metric", "by", "pair_on")
def plan(
    df,
    *,
    metric: str,
    by,
    pair_on,
    a=None,
    b=None,
    target_se=None,
    target_halfwidth=None,
    effect=None,
    power=0.8,
    alpha=0.05,
    confidence=0.95,
    repeated=None,
    test_fraction=None,
    train_fraction=None,
    bounds=None,
) -> ResultTable:
    """Pairs needed for a target, using a pilot table's SD of paired differences.

    The plan is for the test :func:`paired` runs on the same table: when the
    design says each replication re-drew the split (``repeated``, or a run
    store's ``[randomness] split``), for the corrected resampled t test with
    the same test share, whose SE has a floor more pairs cannot lower. A
    score outside ``bounds`` (or the name's bounds) is refused, as in :func:`paired`.
    """
    a, b = _two_methods(df, by, a, b)
    df, survivors = _finished(analysed_rows(df, metric, by, bounds=bounds), metric, by)
    design = design_of(
        df, by=by, metric=metric, pair_on=pair_on, repeated=repeated,
        test_fraction=test_fraction, train_fraction=train_fraction, bounds=bounds,
    )  # fmt: skip
    xa, xb, unit_note = paired_units(df, metric, by, pair_on, design, a, b)
    sizes = sizes_of(design)
    with np.errstate(over="ignore", invalid="ignore"):
        sd = float((xa - xb).std(ddof=1)) if xa.size >= 2 else float("nan")
    if sd == np.inf:
        raise DataError(
            f"the pilot's paired differences of {metric!r} overflow (scores near the largest "
            "float, 1.8e308); rescale the metric (divide it by a power of ten) to plan."
        )
    if not sd > 0:
        raise DataError(
            f"the pilot's paired differences of {metric!r} have no spread (or fewer than "
            "two pairs), so they cannot plan replications."
        )
    r = stats.plan_replications(
        sd,
        target_se=target_se,
        target_halfwidth=target_halfwidth,
        effect=effect,
        power=power,
        alpha=alpha,
        confidence=confidence,
        test_train_ratio=0.0 if sizes is None else sizes[1] / sizes[0],
    )
    frame = pd.DataFrame({"pairs": r.curve_k, "se": r.curve_se, "ci_halfwidth": r.curve_halfwidth})
    if r.curve_power is not None:
        frame["power"] = r.curve_power
    return ResultTable(
        f"Pairs needed ({a} - {b}, pilot SD of differences {sd:.4g})",
        {f"{a} - {b}": r},
        frame.set_index("pairs"),
        design=design,
        notes=survivors + unit_note + _split_notes(design),
    )


@keyword_only("metric", "by")
@renamed_keywords(n_sim="n_resamples")
def ranking_stability(
    df,
    *,
    metric: str,
    by,
    a=None,
    b=None,
    max_k=10,
    n_resamples=10_000,
    higher_is_better=True,
    rng=None,
) -> ResultTable:
    """How often best-, mean- and median-of-k rank two methods as their full means do."""
    a, b = _two_methods(df, by, a, b)
    table = groups(analysed_rows(df, metric, by), metric, by, min_runs=2)
    for m in (a, b):
        if m not in table:
            raise DataError(f"method {m!r} not found (methods: {shown(table)}).")
    r = stats.ranking_stability(
        table[a],
        table[b],
        max_k=max_k,
        n_resamples=n_resamples,
        higher_is_better=higher_is_better,
        rng=rng,
    )
    frame = pd.DataFrame(
        {
            "k": r.ks,
            "best_of_k": r.best_of_k,
            "mean_of_k": r.mean_of_k,
            "median_of_k": r.median_of_k,
        }
    ).set_index("k")
    return ResultTable(
        f"Share of experiments ranking {a} vs {b} as the full means do", {f"{a} vs {b}": r}, frame
    )
