"""vareval's clustered and plain SE against inspect_ai's own ``stderr`` metric.

``tests/data/evals/inspect_stderr.json`` holds what inspect_ai 0.3.285 computes
(``_make_inspect_stderr.py``, run with inspect-ai installed): its ``stderr(cluster=
"passage")`` and ``stderr()`` on the fixture logs' epoch-reduced sample scores (the
same numbers its eval stored in the logs) and on three synthetic score lists, and
its ``ci(method="t")`` and ``ci_wilson`` intervals. The definitions are the same:
``sqrt(G / (G - 1) * sum_c (sum_{q in c} (x_q - mean))**2) / n`` over per-question
means (inspect_ai reduces epochs with its mean reducer first, vareval takes the
mean of per-question means), and ``sd(ddof=1) / sqrt(n)`` without clusters, so they
agree to rounding, far below inspect_ai's printed 3 decimals.
"""

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import vareval
from vareval.stats.evals import eval_score
from vareval.stats.evals.score import _binary_interval, binomial_n

DATA = Path(__file__).parents[2] / "data"
REF = json.loads((DATA / "evals" / "inspect_stderr.json").read_text())
LOGS = DATA / "importers" / "eval_logs"
TOL = 1e-12


def _log_scores(cluster, interval="t"):
    df = pd.concat([vareval.read_eval_log(LOGS / name) for name in REF["logs"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 6 clusters; errored answers excluded
        table = vareval.eval_scores(df, metric="match", cluster=cluster, sample="epoch",
                                    errors="exclude", interval=interval)  # fmt: skip
    return dict(zip(REF["logs"], table.results.values(), strict=True))


def test_the_logs_se_equal_inspect_ais_clustered_and_plain_stderr():
    clustered, plain = _log_scores("passage"), _log_scores(None)
    for name, ref in REF["logs"].items():
        assert ref["stderr_cluster"] == ref["in_log"]["stderr_cluster"]  # what its eval stored
        assert clustered[name].se == pytest.approx(ref["stderr_cluster"], rel=TOL)
        assert plain[name].se == pytest.approx(ref["stderr"], rel=TOL)
        assert clustered[name].n_questions == ref["scored_samples"]  # errored one left out
        t = ref["ci_t_cluster"]
        assert (clustered[name].low, clustered[name].high) == pytest.approx(
            (t["lower"], t["upper"]), rel=TOL
        )


@pytest.mark.parametrize("case", sorted(REF["synthetic"]))
def test_synthetic_scores_se_and_t_interval_equal_inspect_ais(case):
    ref = REF["synthetic"][case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clusters
        r = eval_score(ref["values"], cluster=ref["passage"], interval="t")
    assert r.se == pytest.approx(ref["stderr_cluster"], rel=TOL)
    assert eval_score(ref["values"]).se == pytest.approx(ref["stderr"], rel=TOL)
    t = ref["ci_t_cluster"]
    assert (r.low, r.high) == pytest.approx((t["lower"], t["upper"]), rel=TOL)


@pytest.mark.parametrize("case", ["unequal_clusters", "two_clusters"])
def test_wilson_with_one_answer_per_question_equals_inspect_ais_ci_wilson(case):
    ref = REF["synthetic"][case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = eval_score(ref["values"], cluster=ref["passage"], interval="wilson")
    w = ref["ci_wilson_cluster"]
    assert (r.low, r.high) == pytest.approx((w["lower"], w["upper"]), rel=TOL)


def test_wilson_with_epochs_differs_from_inspect_ai_only_by_the_cap_on_the_effective_size():
    """Both use Korn-Graubard's ``p (1 - p) / SE**2`` with a t critical value on G - 1 df.

    inspect_ai caps it at the number of (epoch-reduced) samples it sees, the
    questions; vareval at the number of answers (questions x epochs), the size of
    a binomial on every answer. With that one cap changed, vareval's interval is
    inspect_ai's.
    """
    ours = _log_scores("passage", interval="wilson")
    for name, ref in REF["logs"].items():
        r, w = ours[name], ref["ci_wilson_cluster"]
        assert r.high - r.low < w["upper"] - w["lower"]  # more answers than questions
        n = binomial_n(r.estimate, r.se, r.n_questions, r.n_questions, r.n_clusters, True, 0.95)
        capped = _binary_interval("wilson", r.estimate, float(n), 0.95)
        assert capped == pytest.approx((w["lower"], w["upper"]), rel=TOL)
