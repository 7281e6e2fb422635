"""Newcombe's paired interval against the paper's own worked examples.

Newcombe, R. G. (1998), "Improved confidence intervals for the difference between binomial
proportions based on paired data", Statistics in Medicine 17:2635-2650: the 95 % limits of
method 10 (Wilson limits of each proportion combined through phi, with phi's numerator
``AD - BC`` reduced by ``N/2`` when it exceeds ``N/2`` and set to 0 between 0 and ``N/2``)
for the paper's seven worked examples, to its 4 decimals (the limits as transcribed from the
paper in a public check script; the paper itself was not at hand, and all 14 limits agree
here to 4 decimals, which the transcription and this code would hardly both get wrong in
the same way). The same examples with an
uncorrected phi give other numbers (checked below), so the correction is part of method 10 as
published; method 11 (continuity-corrected Wilson limits) is not offered by vareval.

Both code paths are checked: ``mcnemar_exact`` (one test set) and ``compare_two`` with the
``evals compare`` command (one 0/1 answer per question, no clusters: the default interval).
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.stats import mcnemar_exact
from vareval.stats.evals import compare_two

# (both right, only A right, only B right, neither) -> method 10's 95 % limits for pA - pB
PUBLISHED = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((36, 14, 0, 0), (0.1528, 0.4167)),
    ((35, 14, 0, 1), (0.1461, 0.4175)),
    ((18, 14, 0, 18), (0.1441, 0.3963)),
    ((2, 97, 1, 0), (0.8721, 0.9854)),
]


def _answers(both, only_a, only_b, neither):
    """Per-question 0/1 scores of A and B with the given 2x2 counts."""
    a = np.r_[np.ones(both + only_a), np.zeros(only_b + neither)]
    b = np.r_[np.ones(both), np.zeros(only_a), np.ones(only_b), np.zeros(neither)]
    return a, b


@pytest.mark.parametrize(("counts", "limits"), PUBLISHED)
def test_mcnemar_interval_is_the_papers_method_10(counts, limits):
    a, b = _answers(*counts)
    gold = np.ones(a.size, dtype=int)
    r = mcnemar_exact(gold, a.astype(int), b.astype(int))
    assert r.confidence_interval() == pytest.approx(limits, abs=5e-5)


@pytest.mark.parametrize(("counts", "limits"), PUBLISHED)
def test_evals_default_interval_is_the_papers_method_10(counts, limits):
    r = compare_two(*_answers(*counts))
    assert r.interval == "newcombe" and r.agree
    assert (r.low, r.high) == pytest.approx(limits, abs=5e-5)


def test_uncorrected_phi_does_not_give_the_published_limits():
    """Where ``AD - BC > 0`` the N/2 correction moves the limits by 0.005 or more."""
    from scipy import special

    from vareval.stats.testset.significance import _wilson_ci

    z = special.ndtri(0.975)
    for (both, oa, ob, ne), limits in PUBLISHED:
        n, cross = both + oa + ob + ne, both * ne - oa * ob
        if cross <= n / 2:
            continue  # the correction does not change phi here
        pa, pb = (both + oa) / n, (both + ob) / n
        la, ub = _wilson_ci(both + oa, n, z)[0], _wilson_ci(both + ob, n, z)[1]
        phi = cross / np.sqrt((both + oa) * (ob + ne) * (both + ob) * (oa + ne))
        d1, d2 = pa - la, ub - pb
        low = pa - pb - np.sqrt(d1**2 - 2 * phi * d1 * d2 + d2**2)
        assert abs(low - limits[0]) > 0.005


def test_evals_compare_command_prints_the_published_limits(tmp_path):
    (both, oa, ob, ne), (low, high) = PUBLISHED[1]
    a, b = _answers(both, oa, ob, ne)
    q = [f"q{i}" for i in range(a.size)]
    rows = ["model,question,correct"] + [f"A,{qi},{int(x)}" for qi, x in zip(q, a, strict=True)]
    rows += [f"B,{qi},{int(x)}" for qi, x in zip(q, b, strict=True)]
    path = tmp_path / "answers.csv"
    path.write_text("\n".join(rows) + "\n")
    runner = CliRunner()
    text = runner.invoke(main, ["evals", "compare", str(path), "--metric", "correct"])
    js = runner.invoke(main, ["evals", "compare", str(path), "--metric", "correct", "--json"])
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    r = json.loads(js.output[js.output.index("{"):])
    assert (r["low"][0], r["high"][0]) == pytest.approx((low, high), abs=5e-5)
    assert f"[{r['low'][0]:.4g}, {r['high'][0]:.4g}]" in text.output  # the table, 4 figures
