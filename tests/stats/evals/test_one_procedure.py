"""`evals compare`: the interval and the test are one procedure.

An ``"auto"`` interval inverts the test and an ``"auto"`` test inverts the
interval, so the interval at level ``c`` excludes 0 exactly when ``p < 1 - c``.
The sign-flip interval is checked against brute-force enumeration of every flip;
the smallest attainable p is printed where it is not below alpha; ``plan`` says
when a design cannot reach alpha. The slow tier measures the agreement rate on
simulated benchmarks (it must be 100 %).
"""

from __future__ import annotations

import importlib.util
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vareval.errors import VarevalWarning
from vareval.stats.evals import compare_models, plan_eval
from vareval.stats.evals.compare import compare_two

_spec = importlib.util.spec_from_file_location(
    "vareval_test_evals_calibration_2", Path(__file__).with_name("_calibration.py")
)
cal = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cal)
PROCEDURES = [("auto", "auto"), ("permutation", "auto"), ("bootstrap", "auto"), ("t", "auto"),
              ("auto", "t"), ("auto", "permutation"), ("auto", "bootstrap")]


def _agrees(r, alpha=0.05) -> np.ndarray:
    excluded = (np.asarray(r.low) > 0) | (np.asarray(r.high) < 0)
    return excluded == (np.asarray(r.pvalue) < alpha)


def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        return f(*args, **kw)


def test_the_sign_flip_interval_is_the_set_of_shifts_the_enumerated_test_keeps(rng):
    a, b = rng.random(24), rng.random(24) - 0.2
    q, c = np.arange(24), np.arange(24) // 3  # 8 clusters: 256 flips
    r = _quiet(compare_two, a, b, q, c, test="permutation", n_resamples=1000)
    assert r.exact and r.agree and r.interval == "permutation"
    totals, sizes = np.bincount(c, a - b), np.bincount(c)
    flips = np.array(list(itertools.product((-1, 1), repeat=8)))

    def p_brute(delta0):  # every flip of the shifted cluster totals, by enumeration
        shifted = totals - sizes * delta0
        return np.mean(np.abs(flips @ shifted) >= abs(shifted.sum()) - 1e-9)

    assert r.pvalue == pytest.approx(p_brute(0.0))
    assert r.min_pvalue == pytest.approx(2 / 256)
    for d0 in np.linspace(r.low - 0.3, r.high + 0.3, 241):
        if min(abs(d0 - r.low), abs(d0 - r.high)) > 1e-6:
            assert (p_brute(d0) >= 0.05) == (r.low <= d0 <= r.high), d0


@pytest.mark.parametrize(("test", "interval"), PROCEDURES)
def test_interval_and_test_agree_at_every_level(rng, test, interval):
    a, b, q, c, *_ = cal.benchmark(rng, 30, 3, 0.3, shift=0.25)
    for level in (0.8, 0.9, 0.95, 0.99):
        r = _quiet(compare_two, a, b, q, c, test=test, interval=interval, confidence=level,
                   n_resamples=999, rng=1)
        assert r.agree and _agrees(r, 1 - level).all(), (level, r.pvalue, r.low, r.high)


def test_mcnemar_with_newcombe_says_they_are_two_procedures(rng):
    a, b = (rng.random(40) < 0.6) * 1.0, (rng.random(40) < 0.4) * 1.0
    assert not compare_two(a, b, test="mcnemar").agree
    assert compare_two(a, b).agree and compare_two(a, b).test == "newcombe"


def test_few_clusters_print_the_smallest_attainable_p():
    """The issue's case: 6 clusters, 72/72 right against 72/72 wrong, Holm over 3 pairs."""
    import pandas as pd

    from vareval.cli import main

    q = np.arange(72)
    rows = pd.DataFrame({
        "model": np.repeat(["right", "wrong", "half"], 72), "question": np.tile(q, 3),
        "passage": np.tile(q // 12, 3),
        "correct": np.concatenate([np.ones(72), np.zeros(72), q % 2]),
    })
    runner = CliRunner()
    with runner.isolated_filesystem():
        rows.to_csv("answers.csv", index=False)
        base = ["evals", "compare", "answers.csv", "--metric", "correct", "--cluster", "passage"]
        perm = runner.invoke(main, [*base, "--test", "permutation"])
        default = runner.invoke(main, base)
    assert perm.exit_code == 0 and default.exit_code == 0, perm.output
    assert ("smallest attainable p on this design: 0.03125; adjusted by holm over 3 pairs "
            "at least 0.09375 (not below alpha 0.05): no pair can be separated") in perm.stdout
    assert "the interval inverts the test" in perm.stdout
    assert "tiers (adjusted p >= alpha 0.05: the data cannot separate models within a tier): " \
        "right, half, wrong" in perm.stdout
    assert "smallest attainable" not in default.stdout  # Newcombe's test can reach alpha
    assert "right | half | wrong" in default.stdout


def test_plan_says_when_a_sign_flip_test_cannot_reach_alpha(rng):
    a = (rng.random(40) < 0.6) * 1.0
    q, c = np.arange(40), np.arange(40) // 8  # 5 clusters: smallest p 2/32
    p = _quiet(plan_eval, a, q, c)
    assert p.n_clusters == 5 and p.min_pvalue == pytest.approx(1 / 16) and not p.reaches_alpha
    p = _quiet(plan_eval, a, q, c, n_questions=48)  # 6 clusters at the pilot's size
    assert p.n_clusters == 6 and p.reaches_alpha


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 30])
def test_interval_and_test_agree_on_every_simulated_benchmark(n, rng, scaled):
    """The agreement rate of interval and test in `evals compare`, per procedure: 100 %."""
    sims = scaled(200, minimum=50)
    agree = {p: 0 for p in PROCEDURES}
    total = 0
    for icc, k in ((0.0, 1), (0.3, 1), (0.3, 3)):
        for _ in range(sims):
            a, b, q, c, *_ = cal.benchmark(rng, n, k, icc, shift=rng.choice([0.0, 0.4]))
            x = np.concatenate([a, b, np.roll(a, 1)])
            m = np.repeat(["a", "b", "c"], a.size)
            for test, interval in PROCEDURES:
                r = _quiet(compare_models, x, m, np.tile(q, 3), None if c is None else
                           np.tile(c, 3), test=test, interval=interval, n_resamples=499, rng=0)
                agree[(test, interval)] += int(_agrees(r).all())
            total += 1
    print({f"{t}/{i}": f"{v / total:.3f}" for (t, i), v in agree.items()})
    assert all(v == total for v in agree.values()), agree
