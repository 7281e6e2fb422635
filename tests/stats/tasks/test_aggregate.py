import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from vareval.errors import ArgumentError
from vareval.stats.tasks import aggregate as agg
from vareval.stats.tasks.aggregate import (
    aggregate_scores,
    interval_estimates,
    normalize_scores,
    performance_profile,
    probability_of_improvement,
)


def scores(seed=0, shape=(3, 6, 5)):
    gen = np.random.default_rng(seed)
    return gen.gamma(2.0, 0.3, size=shape).round(2)  # rounded: ties are exercised


def brute_aggregates(values, gamma=1.0):
    """rliable's definitions on values[..., task, run], written out directly."""
    flat = values.reshape(*values.shape[:-2], -1)
    task_means = values.mean(axis=-1)
    return np.stack(
        [
            np.median(task_means, axis=-1),
            stats.trim_mean(flat, 0.25, axis=-1),
            flat.mean(axis=-1),
            gamma - np.minimum(flat, gamma).mean(axis=-1),
        ],
        axis=-1,
    )


def test_point_estimates_match_the_definitions():
    x = scores()
    np.testing.assert_allclose(aggregate_scores(x), brute_aggregates(x), rtol=1e-12)
    np.testing.assert_allclose(aggregate_scores(x[1]), brute_aggregates(x[1]), rtol=1e-12)


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 13])
def test_iqm_equals_scipy_trim_mean_for_every_remainder(n):
    x = scores(n, (1, 1, n))
    assert aggregate_scores(x, "iqm")[0, 0] == pytest.approx(stats.trim_mean(x.ravel(), 0.25))


@pytest.mark.parametrize("resample_tasks", [False, True])
def test_bootstrap_equals_brute_force_on_the_same_draws(resample_tasks):
    x = scores()
    r = interval_estimates(x, n_resamples=300, rng=4, resample_tasks=resample_tasks)
    cells = agg._draw_cells(np.random.default_rng(4), 300, x.shape, resample_tasks)
    brute = brute_aggregates(x.reshape(-1)[cells % x.size])
    np.testing.assert_allclose(r.bootstrap_distribution, brute, rtol=1e-12, atol=1e-12)
    lo, hi = np.percentile(brute, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(r.low, lo)
    np.testing.assert_allclose(r.high, hi)


@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_equals_sorting_each_resample_on_random_designs(seed):
    # the IQM from multiplicities over the sorted scores and the median of many task
    # means by partition equal the definitions on each resample, across several
    # chunks of draws and parts of a chunk, with ties and one- or many-run tasks
    gen = np.random.default_rng(seed)
    shape = (int(gen.integers(1, 4)), int(gen.integers(70, 400)), int(gen.integers(2, 9)))
    x = gen.normal(0.5, 0.3, shape)
    if seed % 2:
        x = np.round(x * 8) / 8  # many ties
    resample_tasks = seed >= 2
    r = interval_estimates(x, n_resamples=160, rng=seed, resample_tasks=resample_tasks,
                           gamma=1.2, ci="bca")
    draws = np.random.default_rng(seed)
    cells = np.concatenate([agg._draw_cells(draws, b, shape, resample_tasks)
                            for b in agg._chunks(160, x.size)])
    brute = brute_aggregates(x.reshape(-1)[cells], gamma=1.2)
    np.testing.assert_allclose(r.bootstrap_distribution, brute, rtol=0, atol=1e-12)
    axis = 1 if resample_tasks else 2
    jack = np.stack([brute_aggregates(np.delete(x, j, axis=axis), gamma=1.2)
                     for j in range(shape[axis])])
    np.testing.assert_allclose(r.jackknife, jack, rtol=0, atol=1e-12)


def test_stratified_draws_keep_runs_within_their_task():
    cells = agg._draw_cells(np.random.default_rng(0), 50, (2, 4, 3), False)
    assert ((cells >= 0) & (cells < 24)).all()  # indices into the scores themselves
    method, task = np.divmod(cells // 3, 4)
    assert (method == np.arange(2)[:, None, None]).all()
    assert (task == np.arange(4)[:, None]).all()


def test_one_task_one_method_bca_matches_scipy_bootstrap():
    x = np.random.default_rng(1).normal(size=(1, 40))
    ref = stats.bootstrap((x[0],), np.mean, n_resamples=20_000, method="BCa", rng=2)
    for ci in ("percentile", "bca"):
        r = interval_estimates(x, ["mean"], n_resamples=20_000, ci=ci, rng=3)
        if ci == "bca":
            expect = ref.confidence_interval
        else:
            expect = stats.bootstrap(
                (x[0],), np.mean, n_resamples=20_000, method="percentile", rng=2
            ).confidence_interval
        assert r.low[0, 0] == pytest.approx(expect.low, abs=0.02)
        assert r.high[0, 0] == pytest.approx(expect.high, abs=0.02)


def test_jackknife_is_leave_one_run_out():
    x = scores()
    r = interval_estimates(x, n_resamples=10, ci="bca", rng=0)
    brute = np.stack([brute_aggregates(np.delete(x, j, axis=2)) for j in range(x.shape[2])])
    np.testing.assert_allclose(r.jackknife, brute, rtol=1e-12)
    r = interval_estimates(x, n_resamples=10, ci="bca", resample_tasks=True, rng=0)
    brute = np.stack([brute_aggregates(np.delete(x, j, axis=1)) for j in range(x.shape[1])])
    np.testing.assert_allclose(r.jackknife, brute, rtol=1e-12)


def test_confidence_interval_recomputes_from_stored_resamples():
    r = interval_estimates(scores(), n_resamples=500, rng=0)
    lo, hi = r.confidence_interval(0.5)
    assert (lo >= r.low).all() and (hi <= r.high).all()
    bca_lo, _ = r.confidence_interval(ci="bca")
    assert bca_lo.shape == r.low.shape
    assert len(r.records()) == 3 * 4
    assert "bootstrap_distribution" not in r.to_dict()


def test_same_rng_same_answer_and_global_seed_has_no_effect():
    np.random.seed(0)
    a = interval_estimates(scores(), n_resamples=200, rng=7)
    np.random.seed(1)
    b = interval_estimates(scores(), n_resamples=200, rng=7)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    p1 = probability_of_improvement(scores()[0], scores()[1], n_resamples=100, rng=7)
    p2 = probability_of_improvement(scores()[0], scores()[1], n_resamples=100, rng=7)
    np.testing.assert_array_equal(p1.bootstrap_distribution, p2.bootstrap_distribution)


def test_normalisation():
    x = scores()
    mm = normalize_scores(x)
    assert mm.min(axis=(0, 2)) == pytest.approx(0) and mm.max(axis=(0, 2)) == pytest.approx(1)
    low, high = np.full(6, 0.1), np.linspace(1, 2, 6)
    ref = normalize_scores(x, (low, high))
    np.testing.assert_allclose(ref * (high - low)[:, None] + low[:, None], x)
    with pytest.raises(ArgumentError, match="one low and one high score per task"):
        normalize_scores(x, (low[:3], high))
    with pytest.raises(ArgumentError, match="task 0: its scores are all equal"):
        normalize_scores(np.ones((2, 3, 4)))


def test_probability_of_improvement_is_mann_whitney_per_task():
    x, y = scores(1, (8, 7)), scores(2, (8, 5))
    r = probability_of_improvement(x, y, n_resamples=50, rng=0)
    ref = [stats.mannwhitneyu(x[t], y[t], alternative="greater").statistic / 35 for t in range(8)]
    np.testing.assert_allclose(r.per_task, ref, rtol=1e-12)
    assert r.estimate == pytest.approx(np.mean(ref))
    same = probability_of_improvement(x, x, n_resamples=50, rng=0)
    assert same.estimate == 0.5


def test_probability_of_improvement_resamples_equal_brute_force():
    x, y = scores(1, (4, 6)), scores(2, (4, 6))
    r = probability_of_improvement(x, y, n_resamples=40, rng=5)
    gen = np.random.default_rng(5)
    rx = gen.integers(0, 6, (40, 4, 6), dtype=np.uint8)
    ry = gen.integers(0, 6, (40, 4, 6), dtype=np.uint8)
    xs, ys = np.take_along_axis(x[None], rx, -1), np.take_along_axis(y[None], ry, -1)
    gt = (xs[..., :, None] > ys[..., None, :]).mean(axis=(-2, -1))
    eq = (xs[..., :, None] == ys[..., None, :]).mean(axis=(-2, -1))
    np.testing.assert_allclose(r.bootstrap_distribution, (gt + 0.5 * eq).mean(axis=1))


@pytest.mark.parametrize("resample_tasks", [False, True])
def test_probability_of_improvement_with_ties_equals_brute_force(resample_tasks):
    # the cumulative-count path against every pair of drawn runs, on the same draws
    x, y = np.round(scores(1, (5, 6)), 1), np.round(scores(2, (5, 4)), 1)
    r = probability_of_improvement(x, y, n_resamples=30, resample_tasks=resample_tasks, rng=5)
    gen = np.random.default_rng(5)
    t = gen.integers(0, 5, (30, 5)) if resample_tasks else np.broadcast_to(np.arange(5), (30, 5))
    rx = gen.integers(0, 6, (30, 5, 6), dtype=np.uint8)
    ry = gen.integers(0, 4, (30, 5, 4), dtype=np.uint8)
    xs, ys = np.take_along_axis(x[t], rx, -1), np.take_along_axis(y[t], ry, -1)
    win = (xs[..., :, None] > ys[..., None, :]) + 0.5 * (xs[..., :, None] == ys[..., None, :])
    np.testing.assert_allclose(r.bootstrap_distribution, win.mean(axis=(-2, -1)).mean(axis=1))


def test_probabilities_of_improvement_equal_one_call_per_pair():
    from vareval.stats import probabilities_of_improvement

    x = np.round(scores(3, (6, 7, 8)), 1)
    pairs = [(0, 1), (5, 2), (3, 4), (1, 0)]
    for resample_tasks in (False, True):
        many = probabilities_of_improvement(
            x, pairs, n_resamples=200, resample_tasks=resample_tasks, family=1, rng=11
        )
        gens = np.random.default_rng(11).spawn(len(pairs))
        for (i, j), got, gen in zip(pairs, many, gens, strict=True):
            one = probability_of_improvement(
                x[i], x[j], labels=(str(i), str(j)), n_resamples=200,
                resample_tasks=resample_tasks, rng=gen,
            )  # fmt: skip
            assert got.to_dict() == one.to_dict()
            np.testing.assert_array_equal(got.bootstrap_distribution, one.bootstrap_distribution)


@pytest.mark.parametrize("kind", ["runs", "mean"])
def test_profile_estimate_and_resamples_match_direct_counts(kind):
    x = scores()
    taus = np.linspace(0, 2, 41)
    r = performance_profile(x, taus, kind=kind, n_resamples=100, rng=3)

    def direct(v):
        flat = v.mean(-1) if kind == "mean" else v.reshape(*v.shape[:-2], -1)
        return (flat[..., None] > taus).mean(axis=-2)

    np.testing.assert_allclose(r.estimate, direct(x))
    cells = agg._draw_cells(np.random.default_rng(3), 100, x.shape, False)
    np.testing.assert_allclose(r.bootstrap_distribution, direct(x.reshape(-1)[cells % x.size]))
    # by construction the band holds at least 95 % of the bootstrap curves whole
    # (where every curve has one value the band is NaN: not computable, not violated)
    interior = (r.estimate > 0) & (r.estimate < 1)
    flat = (np.ptp(r.bootstrap_distribution, axis=0) == 0) & interior
    assert np.isnan(r.band_low[flat]).all() and not np.isnan(r.band_low[~flat]).any()
    inside = (r.bootstrap_distribution >= r.band_low - 1e-12) & (
        r.bootstrap_distribution <= r.band_high + 1e-12
    ) | flat
    assert (inside.all(axis=-1).mean(axis=0) >= 0.95).all()


def test_bad_inputs_are_one_clear_line():
    x = scores()
    with pytest.raises(ArgumentError, match="`gamma` 0.001 is below the scores' range"):
        interval_estimates(x + 0.01, gamma=0.001)
    bad = x.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ArgumentError, match=r"NaN or infinite scores \(first at index \(1, 2, 3\)"):
        aggregate_scores(bad)
    with pytest.raises(ArgumentError, match="2-D \\[task, run\\] or 3-D"):
        aggregate_scores(x.ravel())
    with pytest.raises(ArgumentError, match="`aggregates` must name some of"):
        aggregate_scores(x, ["mode"])
    with pytest.raises(ArgumentError, match="has 1 task"):
        interval_estimates(x[:, :1], resample_tasks=True)
    with pytest.raises(ArgumentError, match="same tasks"):
        probability_of_improvement(x[0], x[1, :4])
    with pytest.raises(ArgumentError, match="strictly increasing"):
        performance_profile(x, [0.5, 0.2])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 3), st.integers(2, 6), st.integers(1, 7), st.integers(0, 2**32 - 1),
    st.floats(-5, 5),
)  # fmt: skip
def test_invariances(n_methods, n_tasks, n_runs, seed, shift):
    gen = np.random.default_rng(seed)
    x = gen.normal(size=(n_methods, n_tasks, n_runs)).round(1)  # ties included
    base = aggregate_scores(x, ["median", "iqm", "mean"])
    shuffled = x[:, gen.permutation(n_tasks)][..., gen.permutation(n_runs)]
    np.testing.assert_allclose(
        aggregate_scores(shuffled, ["median", "iqm", "mean"]), base, atol=1e-12
    )
    np.testing.assert_allclose(
        aggregate_scores(x + shift, ["median", "iqm", "mean"]), base + shift, atol=1e-9
    )
    np.testing.assert_allclose(
        brute_aggregates(x, gamma=x.max())[..., 1], base[:, 1], rtol=1e-12, atol=1e-12
    )


def test_one_run_per_task_is_refused_unless_tasks_are_resampled():
    from vareval.errors import ArgumentError
    from vareval.stats import interval_estimates, performance_profile, probabilities_of_improvement

    x = np.random.default_rng(0).uniform(size=(2, 6, 1))
    for call in (
        lambda **k: interval_estimates(x, n_resamples=50, **k),
        lambda **k: performance_profile(x, n_resamples=50, **k),
        lambda **k: probabilities_of_improvement(x, [(0, 1)], n_resamples=50, **k),
        lambda **k: probability_of_improvement(x[0], x[1], n_resamples=50, **k),
    ):
        with pytest.raises(ArgumentError, match="one run per task"):
            call()
        call(resample_tasks=True)  # tasks resampled: the interval has width
    r = interval_estimates(x, n_resamples=200, resample_tasks=True, rng=0)
    assert (r.high > r.low).all()


def test_profile_band_is_one_half_width_from_the_max_deviation():
    from vareval.stats import performance_profile

    x = np.random.default_rng(3).normal(size=(2, 8, 6))
    p = performance_profile(x, n_resamples=400, rng=1)
    dev = np.abs(p.bootstrap_distribution - p.estimate).max(axis=-1)
    crit = np.quantile(dev, 0.95, axis=0) * 6 / 5
    assert p.band_critical == pytest.approx(crit)
    assert np.allclose(p.band_low, np.clip(p.estimate - crit[:, None], 0, 1))
    # at the sample maximum the estimate is 0; the band still reaches above it
    assert p.estimate[:, -1].max() == 0 and (p.band_high[:, -1] > 0).all()
    assert p.band_note == ""
    assert performance_profile(x[:, :4, :3], n_resamples=50, rng=1).band_note == ""
    few = performance_profile(x[:, :, :2], n_resamples=50, rng=1)
    assert "8 tasks x 2 runs the band's whole-curve coverage is unknown" in few.band_note
    assert "3 tasks x 6 runs" in performance_profile(
        x[:, :3], n_resamples=50, resample_tasks=True, rng=1
    ).band_note


def test_improvement_family_gives_bonferroni_intervals():
    from scipy import special

    from vareval.stats import probabilities_of_improvement

    x = np.random.default_rng(4).normal(size=(3, 5, 6))
    one, = probabilities_of_improvement(x, [(0, 1)], n_resamples=300, rng=2)
    assert one.family == 1
    percentile = np.percentile(one.bootstrap_distribution, [2.5, 97.5])
    assert (one.low, one.high) == pytest.approx(percentile)
    adj, = probabilities_of_improvement(x, [(0, 1)], n_resamples=300, family=3, rng=2)
    half = special.ndtri(1 - 0.05 / 6) * adj.bootstrap_distribution.std(ddof=1) * np.sqrt(6 / 5)
    assert (adj.low, adj.high) == pytest.approx((adj.estimate - half, adj.estimate + half))


def test_bca_counts_float_noise_around_the_estimate_as_ties():
    """A resampled IQM of 40-item accuracies can differ from the estimate by 1e-16 alone."""
    from vareval.stats.tasks.aggregate import _bca_interval

    rng = np.random.default_rng(5)
    estimate = np.array([[0.7]])
    # a tenth of the resamples equal the estimate (as on a lattice), the rest spread around it
    exact = np.concatenate([rng.normal(0.7, 0.05, 900), np.full(100, 0.7)])[:, None, None]
    noisy = np.where(exact == 0.7, 0.7 - 1e-16, exact)  # all just below: no longer "ties"
    assert (noisy != 0.7).sum() > (exact != 0.7).sum()  # the noise is there
    jack = rng.normal(0.7, 0.01, size=(10, 1, 1))
    assert _bca_interval(noisy, estimate, jack, 0.95) == _bca_interval(exact, estimate, jack, 0.95)
