"""One keyword spelling per idea across the public Python API.

The walk covers every callable in ``vareval.__all__`` and ``vareval.stats.__all__``
(functions added later included), and the field names and public method keywords
of every result type, so a new function or field that spells an idea differently
fails here. The old spellings still work for one release, with a
``DeprecationWarning`` naming the new one and the same result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest

import vareval
from vareval import stats
from vareval.errors import ArgumentError
from vareval.stats._result import Result

# Spellings of one idea; the first is the one every function uses.
SYNONYMS = [
    ("higher_is_better", "minimize", "maximize", "lower_is_better", "smaller_is_better",
     "greater_is_better"),
    ("n_resamples", "n_boot", "n_sim", "n_sims", "n_samples", "n_bootstrap", "n_permutations",
     "n_draws", "resamples", "bootstrap_samples"),
    ("n_trials", "n_simulations", "n_experiments", "n_reps"),
    ("confidence", "confidence_level", "level", "conf", "cl", "conf_level"),
    ("ci", "ci_method", "interval_method", "ci_type"),
    ("rng", "seed", "random_state", "random_seed"),
    ("pair_on", "pair_by", "match_on", "paired_on"),
    ("alpha", "significance_level", "sig_level"),
    ("metric", "score", "score_column", "metric_column"),  # the column holding the score
]  # fmt: skip

# Ideas whose default must be the same wherever they appear.
DEFAULTS = {"higher_is_better": True, "confidence": 0.95}


def public_functions():
    """Every public callable (not a class) as (qualified name, function)."""
    found = {}
    for module, prefix in ((vareval, "vareval"), (stats, "vareval.stats")):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
                found.setdefault(obj, f"{prefix}.{name}")
    return [(name, f) for f, name in found.items()]


def spelling_problems(functions) -> list[str]:
    """Two spellings of one idea across the functions, and split defaults."""
    params = {name: inspect.signature(f).parameters for name, f in functions}
    problems = []
    for spellings in SYNONYMS:
        used = {s: [n for n, p in params.items() if s in p] for s in spellings}
        used = {s: where for s, where in used.items() if where}
        if len(used) > 1 or (used and spellings[0] not in used):
            problems.append(f"one idea, spelled {sorted(used)}: {used}")
    for key, default in DEFAULTS.items():
        for name, p in params.items():
            if key in p and p[key].default is not inspect.Parameter.empty:
                if p[key].default != default:
                    problems.append(f"{name}({key}={p[key].default!r}), elsewhere {default!r}")
    return problems


def test_one_spelling_per_idea():
    functions = public_functions()
    assert len(functions) > 60  # the walk reaches both layers
    assert spelling_problems(functions) == []


def test_the_walk_catches_a_second_spelling():
    def fake(x, *, n_boot=100, higher_is_better=False):
        return x

    problems = spelling_problems([*public_functions(), ("fake", fake)])
    assert any("n_boot" in p for p in problems)
    assert any("fake(higher_is_better=False)" in p for p in problems)


def result_types() -> list[type]:
    """Every ``Result`` subclass that vareval defines."""
    for info in pkgutil.walk_packages(vareval.__path__, "vareval."):
        if not info.name.endswith("__main__"):
            with contextlib.suppress(ImportError):  # an optional dependency is absent
                importlib.import_module(info.name)
    found, todo = set(), [Result]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found and sub.__module__.startswith("vareval."):
                found.add(sub)
                todo.append(sub)
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


# Spellings from the table that a result uses for another idea: why each one stays.
FIELD_EXCEPTIONS = {
    "seed": "the integer seed a result records and prints (--seed); functions take rng=",
    "level": "a band's pointwise Beta level or half-width, not an interval's confidence",
    "ci_method": "a description of how the interval was computed, e.g. 'noncentral t'",
}
KEYWORD_EXCEPTIONS = {"confidence_level": "confidence_interval() keeps scipy's keyword"}
OLD_SPELLINGS = {old for spellings in SYNONYMS for old in spellings[1:]}


def result_spelling_problems(types) -> list[str]:
    """Old spellings among the result types' field names and public method keywords."""
    problems = []
    for cls in types:
        for field in dataclasses.fields(cls):
            if field.name in OLD_SPELLINGS.difference(FIELD_EXCEPTIONS):
                problems.append(f"{cls.__name__}.{field.name} (field)")
        for name, method in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("_"):
                continue
            for param in inspect.signature(method).parameters:
                if param in OLD_SPELLINGS.difference(KEYWORD_EXCEPTIONS):
                    problems.append(f"{cls.__name__}.{name}({param}=)")
    return problems


def test_result_fields_and_methods_use_the_same_spellings():
    types = result_types()
    assert len(types) > 40  # the walk reaches every layer's results
    assert result_spelling_problems(types) == []


def test_the_result_walk_catches_an_old_field_and_keyword():
    @dataclasses.dataclass(frozen=True, repr=False)
    class Fake(Result):
        n_sim: int

        def curve(self, k, *, minimize=False):
            return k

    problems = result_spelling_problems([*result_types(), Fake])
    assert problems == ["Fake.n_sim (field)", "Fake.curve(minimize=)"]


A = np.array([0.71, 0.74, 0.69, 0.77, 0.73, 0.70, 0.76, 0.72, 0.75, 0.68])
B = A - np.array([0.01, 0.03, -0.02, 0.02, 0.00, 0.01, 0.04, -0.01, 0.02, 0.01])
RUNS = pd.DataFrame(
    {
        "method": ["a"] * 10 + ["b"] * 10,
        "seed": list(range(10)) * 2,
        "acc": np.r_[A, B],
    }
)
TASKS = pd.DataFrame(
    {
        "method": np.repeat(["a", "b", "c"], 8),
        "task": np.tile(np.repeat(["t1", "t2", "t3", "t4"], 2), 3),
        "seed": np.tile([0, 1], 12),
        "acc": np.r_[A[:8], B[:8], (A[:8] + B[:8]) / 2 + 0.003],
    }
)


ANSWERS = pd.DataFrame({
    "model": np.tile(["a", "b"], 20),
    "question": np.repeat(np.arange(10), 4).astype(str),
    "passage": np.repeat(np.arange(5), 8).astype(str),
    "correct": (np.arange(40) % 3 > 0).astype(float),
})  # fmt: skip
EVAL_KW = {"cluster": "passage", "sample": None}


def _sampler():
    return stats.ReflectedKDE(np.r_[A, B], bw=0.01, a=0.0, b=1.0)


# function, positional arguments, fixed keywords, old keyword, its value, new keyword and value
RENAMES = [
    (vareval.paired, (RUNS,), {"metric": "acc", "by": "method", "pair_on": "seed", "rng": 0},
     "n_boot", 300, "n_resamples", 300),
    (vareval.best_of_k, (RUNS,), {"metric": "acc", "by": "method", "ks": [1, 2], "rng": 0},
     "n_sim", 300, "n_resamples", 300),
    (vareval.ranking_stability, (RUNS, "acc", "method"), {"max_k": 3, "rng": 0}, "n_sim", 300,
     "n_resamples", 300),
    (vareval.rank, (TASKS, "acc", "method", "task"), {"rope": 0.01, "rng": 0}, "n_samples", 300,
     "n_resamples", 300),
    (vareval.tuning_curve, (RUNS,), {"metric": "acc", "by": "method", "bounds": (0, 1)},
     "minimize", True, "higher_is_better", False),
    (vareval.eval_scores, (ANSWERS,), EVAL_KW, "score", "correct", "metric", "correct"),
    (vareval.compare_evals, (ANSWERS,), {**EVAL_KW, "rng": 0, "n_resamples": 64}, "score",
     "correct", "metric", "correct"),
    (vareval.eval_pass_at_k, (ANSWERS,), {**EVAL_KW, "k": 1}, "score", "correct", "metric",
     "correct"),
    (vareval.compare_evals_pass_at_k, (ANSWERS,), {**EVAL_KW, "k": 1, "rng": 0,
     "n_resamples": 64}, "score", "correct", "metric", "correct"),
    (vareval.plan_evals, (ANSWERS,), {**EVAL_KW, "target_se": 0.05}, "score", "correct",
     "metric", "correct"),
    (stats.paired_difference, (A, B), {"rng": 0}, "n_boot", 300, "n_resamples", 300),
    (stats.best_of_k, (A,), {"ks": [1, 2], "rng": 0}, "n_sim", 300, "n_resamples", 300),
    (stats.ranking_stability, (A, B), {"max_k": 3, "rng": 0}, "n_sim", 300, "n_resamples", 300),
    (stats.bayesian_signed_rank, (A, B), {"rope": 0.01, "rng": 0}, "n_samples", 300,
     "n_resamples", 300),
    (stats.compare_tuning_curves, (A, B, [1, 2]), {"a": 0, "b": 1}, "minimize", True,
     "higher_is_better", False),
    (stats.project_iterations, (A, B, 2), {"a": 0, "b": 1, "max_iterations": 40}, "minimize",
     True, "higher_is_better", False),
    (stats.bootstrap_bands, (A, [1, 2]), {"rng": 0}, "n_bootstrap", 50, "n_resamples", 50),
    (stats.bootstrap_bands, (A, [1, 2]), {"rng": 0, "n_resamples": 50}, "minimize", True,
     "higher_is_better", False),
    (stats.simulated_tuning_curve, (_sampler(), [1, 2]), {"rng": 0}, "n_sims", 200,
     "n_trials", 200),
    (stats.simulated_tuning_curve, (_sampler(), [1, 2]), {"rng": 0, "n_trials": 200}, "minimize",
     True, "higher_is_better", False),
    (stats.bootstrap_coverage, (_sampler(), 10, [1, 2], [0.7, 0.75]),
     {"n_trials": 5, "rng": 0}, "n_bootstrap", 20, "n_resamples", 20),
    (stats.band_coverage, (_sampler(), 10), {"n_trials": 20, "k": [1, 2], "rng": 0}, "minimize",
     True, "higher_is_better", False),
    # the methods of the distribution objects
    *[(method, ([1, 2],), {}, "minimize", True, "higher_is_better", False) for method in (
        stats.cdf_band(A, a=0, b=1).tuning_curve,
        stats.EmpiricalDistribution(A, a=0, b=1).quantile_tuning_curve,
        stats.EmpiricalDistribution(A, a=0, b=1).average_tuning_curve,
        stats.EmpiricalDistribution(A).v_statistic,
        stats.EmpiricalDistribution(A).u_statistic,
        _sampler().quantile_tuning_curve,
        _sampler().average_tuning_curve,
    )],
]  # fmt: skip


def _ids():
    return [f"{f.__name__}-{old}" for f, _, _, old, *_ in RENAMES]


def _same(x, y):
    """Equal results: compared through their plain-value form."""
    if hasattr(x, "to_dict"):
        x, y = x.to_dict(), y.to_dict()
    if isinstance(x, tuple | list):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, np.ndarray | float):
        return np.array_equal(x, y, equal_nan=True)
    return x == y


@pytest.mark.parametrize(("f", "args", "kw", "old", "old_value", "new", "new_value"), RENAMES,
                         ids=_ids())  # fmt: skip
def test_old_keyword_warns_and_gives_the_same_result(f, args, kw, old, old_value, new, new_value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tie and band warnings are not the point here
        want = f(*args, **kw, **{new: new_value})
    with pytest.warns(DeprecationWarning, match=rf"{old}=.*use {new}="):
        got = f(*args, **kw, **{old: old_value})
    assert _same(got, want)
    assert new in inspect.signature(f).parameters
    assert old not in inspect.signature(f).parameters


@pytest.mark.parametrize(("f", "args", "kw", "old", "old_value", "new", "new_value"),
                         RENAMES[:1] + RENAMES[4:5], ids=_ids()[:1] + _ids()[4:5])  # fmt: skip
def test_old_and_new_keyword_together_is_an_error(f, args, kw, old, old_value, new, new_value):
    with pytest.raises(ArgumentError, match=rf"both `{old}` and `{new}`"):
        f(*args, **kw, **{old: old_value, new: new_value})


def test_minimize_must_still_be_a_bool():
    with pytest.warns(DeprecationWarning), pytest.raises(ArgumentError, match="higher_is_better"):
        stats.compare_tuning_curves(A, B, [1], a=0, b=1, minimize="yes")


def test_report_keywords_renamed():
    from vareval.report.builder import build_report

    kw = {"metric": "acc", "by": "method", "pair_on": "seed"}
    want = build_report(RUNS, **kw, n_resamples=300, best_of_k_resamples=300)
    with pytest.warns(DeprecationWarning, match=r"n_boot=.*use n_resamples="):
        got = build_report(RUNS, **kw, n_boot=300, best_of_k_resamples=300)
    assert got == want
    with pytest.warns(DeprecationWarning, match=r"n_sim=.*use best_of_k_resamples="):
        assert build_report(RUNS, **kw, n_resamples=300, n_sim=300) == want


# a result, its old field name, the new one, and the old field's value from the result
DEPRECATED_FIELDS = [
    (lambda: stats.best_of_k(A, ks=[1, 2], n_resamples=300, rng=0), "n_sim", "n_resamples",
     lambda r: r.n_resamples),
    (lambda: stats.ranking_stability(A, B, max_k=3, n_resamples=300, rng=0), "n_sim",
     "n_resamples", lambda r: r.n_resamples),
    (lambda: stats.bayesian_signed_rank(A, B, rope=0.01, n_resamples=300, rng=0), "n_samples",
     "n_resamples", lambda r: r.n_resamples),
    *[(lambda hib=hib: stats.cdf_band(A, a=0, b=1).tuning_curve([1, 2], higher_is_better=hib),
       "minimize", "higher_is_better", lambda r, hib=hib: not hib) for hib in (True, False)],
    *[(lambda hib=hib: vareval.tuning_curve(RUNS, metric="acc", by="method", bounds=(0, 1),
                                            higher_is_better=hib),
       "minimize", "higher_is_better", lambda r, hib=hib: not hib) for hib in (True, False)],
]  # fmt: skip


@pytest.mark.parametrize(("make", "old", "new", "value"), DEPRECATED_FIELDS,
                         ids=lambda v: v if isinstance(v, str) else None)  # fmt: skip
def test_old_field_warns_and_gives_its_value(make, old, new, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tie warnings are not the point here
        r = make()
    with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated.*use \.{new}"):
        got = getattr(r, old)
    assert got == value(r) and type(got) is type(value(r))
    assert old not in r.to_dict() and new in r.to_dict()


def test_metric_is_keyword_only_everywhere():
    """`metric` (and the role columns after it) is keyword-only in every public function."""
    positional = [
        name for name, f in public_functions()
        if (p := inspect.signature(f).parameters.get("metric")) is not None
        and p.kind is not p.KEYWORD_ONLY and name.startswith("vareval.") and "stats." not in name
    ]  # fmt: skip
    assert positional == []


@pytest.mark.parametrize(
    ("name", "args", "kw"),
    [
        ("summarize", ("acc", "method"), {}),
        ("best_of_k", ("acc", "method"), {"ks": [1, 2], "n_resamples": 300, "rng": 0}),
        ("paired", ("acc", "method", "seed"), {"rng": 0, "n_resamples": 300}),
        ("plan", ("acc", "method", "seed"), {"target_se": 0.001}),
        ("eval_scores", ("correct", "model"), {"cluster": "passage"}),
        ("compare_evals", ("correct", "model"), {"rng": 0, "n_resamples": 64}),
    ],
)
def test_positional_metric_warns_and_gives_the_same_result(name, args, kw):
    f = getattr(vareval, name)
    df, second = (ANSWERS, "model") if name.endswith("evals") or "eval_" in name else (RUNS, "by")
    keys = ("metric", second, "pair_on")[: len(args)]
    want = f(df, **dict(zip(keys, args, strict=True)), **kw).to_frame()
    with pytest.warns(DeprecationWarning, match=rf"by position is deprecated.*metric=, {second}="):
        got = f(df, *args, **kw).to_frame()
    pd.testing.assert_frame_equal(got, want)
    with pytest.raises(ArgumentError, match="`metric` by position and by keyword"):
        f(df, args[0], metric=args[0])
