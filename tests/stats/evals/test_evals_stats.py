"""The evals statistics against independent references.

statsmodels' cluster-robust OLS (SE of a mean and of a paired difference),
scipy's binomtest and statsmodels' proportion_confint (Wilson, Clopper-Pearson),
numerical integration of the Beta posterior, exact enumeration for the
permutation test, brute force over subsets for pass@k.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import integrate, optimize, stats
from statsmodels.stats.proportion import proportion_confint

from vareval.errors import ArgumentError, VarevalWarning
from vareval.stats.evals import (
    compare_models,
    compare_pass_at_k,
    compare_two,
    eval_score,
    pass_at_k,
    plan_eval,
)
from vareval.stats.evals.compare import adjust
from vareval.stats.evals.passk import pass_at_k_question
from vareval.stats.evals.score import beta_posterior


def _bench(rng, n=120, k=3, size=6, icc=0.3, shift=0.0):
    """Clustered 0/1 answers: k samples of n questions in clusters of ``size``."""
    g = n // size
    q = np.repeat(np.arange(n), k)
    c = q // size
    z = rng.normal(0, 1, g)[c] * math.sqrt(icc) + rng.normal(0, 1, n)[q] * math.sqrt(1 - icc)
    p = stats.norm.cdf(0.3 + z)
    a = (rng.random(q.size) < p).astype(float)
    b = (rng.random(q.size) < np.clip(p - shift, 0, 1)).astype(float)
    return a, b, q, c


def _ols_cluster_se(y, groups):
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    return float(fit.bse[0]), fit


def test_clustered_se_of_a_mean_is_statsmodels_cluster_ols(rng):
    a, _, q, c = _bench(rng)
    means = np.bincount(q, a) / np.bincount(q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        r = eval_score(a, q, c, interval="t")
    se, fit = _ols_cluster_se(means, np.arange(means.size) // 6)
    assert r.se == pytest.approx(se, rel=1e-10, abs=1e-14)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (r.low, r.high) == pytest.approx((low, high), rel=1e-10)
    assert r.n_clusters == 20 and r.df == 19


def test_without_clusters_the_se_is_that_of_question_means(rng):
    a, _, q, _ = _bench(rng, k=4)
    means = np.bincount(q, a) / np.bincount(q)
    r = eval_score(a, q, interval="t")
    assert r.se == pytest.approx(np.std(means, ddof=1) / math.sqrt(means.size), rel=1e-12)
    assert r.n_clusters == r.n_questions == 120 and r.samples_per_question == 4


def test_paired_difference_se_is_statsmodels_cluster_ols(rng):
    a, b, q, c = _bench(rng, shift=0.05)
    d = np.bincount(q, a - b) / np.bincount(q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        r = compare_two(a, b, q, c, test="t", interval="t")
    se, fit = _ols_cluster_se(d, np.arange(d.size) // 6)
    assert r.se == pytest.approx(se, rel=1e-10)
    assert r.pvalue == pytest.approx(float(fit.pvalues[0]), rel=1e-8)
    assert (r.low, r.high) == pytest.approx(tuple(fit.conf_int()[0]), rel=1e-10)


def test_few_clusters_warn_with_their_number(rng):
    a, _, q, c = _bench(rng)
    with pytest.warns(VarevalWarning, match="only 20 clusters"):
        eval_score(a, q, c)


def test_one_cluster_is_refused_naming_it():
    """G / (G - 1) is undefined at G = 1 (inspect_ai returns 0 there): an error, not a number."""
    x, q = [1.0, 0.0, 1.0, 0.0], ["q1", "q2", "q1", "q2"]
    with pytest.raises(ArgumentError, match=r"one cluster \('p'\).*at least 2 clusters"):
        eval_score(x[:2], q[:2], ["p", "p"])
    with pytest.raises(ArgumentError, match=r"one cluster \('p'\)"):
        compare_models(x, ["a", "a", "b", "b"], q, ["p"] * 4)


@pytest.mark.parametrize("n, k", [(10, 0), (10, 3), (30, 29), (100, 100), (1000, 437)])
def test_binomial_intervals_are_statsmodels_and_scipy(n, k):
    x = np.r_[np.ones(k), np.zeros(n - k)]
    for method, sm_method in (("wilson", "wilson"), ("clopper-pearson", "beta")):
        r = eval_score(x, interval=method)
        ref = proportion_confint(k, n, alpha=0.05, method=sm_method)
        assert (r.low, r.high) == pytest.approx(ref, abs=1e-10)
    cp = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    r = eval_score(x, interval="clopper-pearson")
    assert (r.low, r.high) == pytest.approx((cp.low, cp.high), abs=1e-10)


@pytest.mark.parametrize("n, k", [(10, 0), (10, 7), (30, 12), (100, 99)])
def test_bayes_interval_integrates_the_beta_posterior(n, k):
    # the posterior of a uniform prior, integrated numerically: p^k (1-p)^(n-k) / Z
    def dens(p):
        return math.exp(k * math.log(p) + (n - k) * math.log1p(-p)) if 0 < p < 1 else 0.0

    z = integrate.quad(dens, 0, 1, points=[k / n], epsabs=0, epsrel=1e-12, limit=200)[0]

    def cdf(x):
        return integrate.quad(dens, 0, x, epsabs=0, epsrel=1e-12, limit=200)[0] / z

    lo = optimize.brentq(lambda x: cdf(x) - 0.025, 1e-12, 1 - 1e-12, xtol=1e-14)
    hi = optimize.brentq(lambda x: cdf(x) - 0.975, 1e-12, 1 - 1e-12, xtol=1e-14)
    r = eval_score(np.r_[np.ones(k), np.zeros(n - k)], interval="bayes")
    assert (r.low, r.high) == pytest.approx((lo, hi), abs=1e-8)
    assert tuple(map(float, beta_posterior(k, n, 0.95))) == pytest.approx((lo, hi), abs=1e-8)


def test_partial_credit_refuses_a_binomial_interval(rng):
    with pytest.raises(ArgumentError, match="0/1 scores"):
        eval_score(rng.random(20), interval="wilson")
    assert eval_score(rng.random(20)).interval == "t"


def test_mcnemar_is_scipy_binomtest_and_the_permutation_test_agrees(rng):
    a = (rng.random(40) < 0.6).astype(float)
    b = (rng.random(40) < 0.45).astype(float)
    assert compare_two(a, b).test == "newcombe"  # the default: the interval's own test
    r = compare_two(a, b, test="mcnemar")
    a_only, b_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    assert r.test == "mcnemar" and (r.a_only, r.b_only) == (a_only, b_only)
    assert not r.agree and r.interval == "newcombe"  # two procedures, said so
    assert r.pvalue == pytest.approx(stats.binomtest(a_only, a_only + b_only).pvalue, rel=1e-12)
    # a sign flip on 0/1 differences is a fair coin per discordant question: the same law
    perm = compare_two(a, b, test="permutation", n_resamples=200_000, rng=1)
    assert perm.pvalue == pytest.approx(r.pvalue, abs=0.006)


def test_permutation_test_enumerates_every_flip_of_small_benchmarks(rng):
    a, b, q, c = rng.random(24), rng.random(24), np.arange(24), np.arange(24) // 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        r = compare_two(a, b, q, c, test="permutation", n_resamples=1000)
    assert r.exact and r.n_resamples == 2**8
    d = np.bincount(c, a - b)  # cluster totals
    obs = abs(d.sum())
    hits = sum(
        abs(np.dot(s, d)) >= obs - 1e-9 for s in itertools.product((-1, 1), repeat=8)
    )
    assert r.pvalue == pytest.approx(hits / 2**8, abs=1e-15)


def test_pass_at_k_is_brute_force_over_subsets(rng):
    for n, c, k in [(5, 2, 1), (5, 2, 3), (6, 0, 2), (6, 6, 4), (7, 3, 5), (8, 1, 8)]:
        outcomes = np.r_[np.ones(c), np.zeros(n - c)]
        subsets = list(itertools.combinations(range(n), k))
        brute = np.mean([outcomes[list(s)].max() for s in subsets])
        assert pass_at_k_question(n, c, k) == pytest.approx(brute, abs=1e-12)
    q = np.repeat(np.arange(30), 6)
    x = (rng.random(q.size) < 0.3).astype(float)
    r = pass_at_k(x, q, 2)
    per_q = pass_at_k_question(6, np.bincount(q, x), 2)
    assert r.estimate == pytest.approx(per_q.mean(), rel=1e-12)
    assert r.se == pytest.approx(np.std(per_q, ddof=1) / math.sqrt(30), rel=1e-12)
    assert pass_at_k(x, q, 1).estimate == pytest.approx(x.mean(), rel=1e-12)


def test_pass_at_k_comparison_is_the_paired_difference_of_per_question_values(rng):
    q = np.repeat(np.arange(40), 5)
    a = (rng.random(q.size) < 0.4).astype(float)
    b = (rng.random(q.size) < 0.3).astype(float)
    r = compare_pass_at_k(
        np.r_[a, b], np.repeat(["a", "b"], q.size), np.r_[q, q], 3, test="t"
    )
    d = pass_at_k_question(5, np.bincount(q, a), 3) - pass_at_k_question(5, np.bincount(q, b), 3)
    sign = 1 if r.a[0] == "a" else -1
    assert sign * r.estimate[0] == pytest.approx(d.mean(), rel=1e-12)
    assert r.pvalue[0] == pytest.approx(stats.ttest_1samp(d, 0).pvalue, rel=1e-9)


def test_holm_and_bh_adjustments_match_statsmodels(rng):
    from statsmodels.stats.multitest import multipletests

    p = rng.random(12) ** 3
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")):
        assert adjust(p, ours) == pytest.approx(multipletests(p, method=theirs)[1], abs=1e-12)


def test_several_models_pairs_tiers_and_the_matrix(rng):
    n = 300
    q = np.arange(n)
    base = rng.normal(0, 1, n)
    models = {"big": 0.8, "mid": 0.4, "twin": 0.38, "small": -0.5}
    rows = {m: (rng.random(n) < stats.norm.cdf(base + s)).astype(float) for m, s in models.items()}
    r = compare_models(
        np.concatenate(list(rows.values())), np.repeat(list(rows), n), np.tile(q, 4),
        n_resamples=2000, rng=0,
    )
    assert r.models[0] == "big" and len(r.a) == 6
    assert r.tier[r.models.index("mid")] == r.tier[r.models.index("twin")]
    assert r.tier[0] == 1 and r.tier[-1] > r.tier[0]
    m = r.matrix()
    assert np.allclose(m, -m.T, equal_nan=True)
    i, j = r.models.index("big"), r.models.index("small")
    assert m[i, j] == pytest.approx(rows["big"].mean() - rows["small"].mean())
    mc = compare_models(
        np.concatenate(list(rows.values())), np.repeat(list(rows), n), np.tile(q, 4),
        test="mcnemar",
    )
    for a, b, p in zip(mc.a, mc.b, mc.pvalue, strict=True):  # McNemar on every pair
        x, y = rows[a], rows[b]
        k1, k2 = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        assert p == pytest.approx(stats.binomtest(k1, k1 + k2).pvalue if k1 + k2 else 1.0)


def test_bootstrap_interval_and_test_resample_clusters(rng):
    a, b, q, c = _bench(rng, n=240, shift=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        boot = compare_two(a, b, q, c, test="bootstrap", interval="bootstrap", rng=3)
        t = compare_two(a, b, q, c, test="t")
        again = compare_two(a, b, q, c, test="bootstrap", interval="bootstrap", rng=3)
    assert (boot.low, boot.high, boot.pvalue) == (again.low, again.high, again.pvalue)
    # the cluster bootstrap SE is close to the cluster-robust SE (40 clusters)
    assert (boot.high - boot.low) / (t.high - t.low) == pytest.approx(1, abs=0.2)
    s = eval_score(a, q, c, interval="bootstrap", rng=0)
    assert s.low < s.estimate < s.high


def test_within_between_split_and_more_samples(rng):
    n, k = 400, 4
    q = np.repeat(np.arange(n), k)
    mu = rng.normal(0, 1.0, n)
    x = mu[q] + rng.normal(0, 2.0, q.size)  # between 1, within 4
    r = eval_score(x, q)
    assert r.within_variance == pytest.approx(4, rel=0.1)
    assert r.between_variance == pytest.approx(1, rel=0.3)
    assert float(r.se_with_samples(k)) == pytest.approx(r.se, rel=1e-12)
    expect = math.sqrt((r.se**2 - r.within_variance / (k * n)) + r.within_variance / (16 * n))
    assert float(r.se_with_samples(16)) == pytest.approx(expect, rel=1e-12)


def test_plan_inverts_its_own_se(rng):
    a, b, q, c = _bench(rng, n=240, shift=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        pilot = eval_score(a, q, c)
        plan = plan_eval(a, q, c, target_se=0.01, effect=0.03)
        paired = plan_eval(a, q, c, baseline=b, effect=0.03)
    assert plan.se == pytest.approx(pilot.se, rel=1e-12)
    assert plan_eval(a, q, c, n_questions=plan.questions_for_se).se <= 0.01
    assert plan_eval(a, q, c, n_questions=plan.questions_for_se - 1).se > 0.01
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert plan.mde == pytest.approx(z * pilot.se)
    big = plan_eval(a, q, c, n_questions=plan.questions_for_power)
    assert big.mde <= 0.03 < plan_eval(a, q, c, n_questions=plan.questions_for_power - 1).mde
    assert paired.paired and paired.questions_for_power > 0
    more = plan_eval(a, q, c, samples=12)
    assert more.se < plan.se


def test_bad_input_names_the_argument():
    with pytest.raises(ArgumentError, match="more than one cluster"):
        eval_score([1, 0, 1, 1], [0, 0, 1, 1], ["x", "y", "z", "z"])
    with pytest.raises(ArgumentError, match="no answer to question"):
        compare_models([1, 0, 1], ["a", "a", "b"], ["q1", "q2", "q1"])
    with pytest.raises(ArgumentError, match="pass@3 needs at least 3"):
        pass_at_k([1, 0, 1, 0], [0, 0, 1, 1], 3)
    with pytest.raises(ArgumentError, match="NaN"):
        eval_score([1, np.nan, 0])
    with pytest.raises(ArgumentError, match="`interval`"):
        eval_score([1, 0, 1], interval="clt")
