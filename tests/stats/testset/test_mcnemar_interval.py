"""McNemar's interval for the accuracy difference: Newcombe's (1998) method 10.

Checked against a published value, Wilson's interval against scipy, its
exact coverage by enumerating every paired 2x2 table, and (slow tier) a
simulation of coverage on per-item outcomes.
"""

import numpy as np
import pytest
from scipy import special, stats

from vareval.stats import mcnemar_exact
from vareval.stats.testset.significance import _newcombe_paired_ci, _wilson_ci


def _items(both, only_a, only_b, neither):
    """Gold labels and two systems' predictions with the given 2x2 counts."""
    n = both + only_a + only_b + neither
    gold = np.zeros(n, dtype=int)
    a = np.r_[np.zeros(both + only_a), np.ones(only_b + neither)].astype(int)
    b = np.r_[np.zeros(both), np.ones(only_a), np.zeros(only_b), np.ones(neither)].astype(int)
    return gold, a, b


def test_matches_the_published_value():
    # Fagerland, Lydersen & Laake (2017), ch. 8: table [[59, 6], [16, 80]],
    # Newcombe's square-and-add interval -0.0621 (95% CI -0.1186 to -0.0046)
    r = mcnemar_exact(*_items(59, 6, 16, 80))
    assert r.estimate == pytest.approx(-0.0621, abs=5e-5)
    assert r.confidence_interval() == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_wilson_matches_scipy():
    z = special.ndtri(0.975)
    for k, n in [(0, 3), (3, 3), (7, 20), (59, 161)]:
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert _wilson_ci(k, n, z) == pytest.approx((ci.low, ci.high), abs=1e-12)


@pytest.mark.parametrize("counts", [(0, 0, 3, 0), (0, 8, 0, 0), (5, 0, 0, 5)])
def test_one_sided_discordance_has_a_real_interval(counts):
    """All discordant items one way (or none): the Wald interval was a point."""
    r = mcnemar_exact(*_items(*counts))
    lo, hi = r.confidence_interval()
    assert hi - lo > 0.2 and lo <= r.estimate <= hi and -1 <= lo and hi <= 1
    if counts == (0, 0, 3, 0):
        # pA = 0/3, pB = 3/3: Wilson's upper limit of pA and lower of pB (phi = 0)
        u = stats.binomtest(0, 3).proportion_ci(method="wilson").high
        assert (lo, hi) == pytest.approx((-1.0, -1.0 + np.sqrt(2) * u))


def _tables(n):
    grid = [(a, b, c) for a in range(n + 1) for b in range(n + 1 - a) for c in range(n + 1 - a - b)]
    t = np.array(grid)
    return np.column_stack([t, n - t.sum(axis=1)])


def _exact_coverage(n, probs, interval):
    t = _tables(n)
    weight = stats.multinomial.pmf(t, n, probs)
    lo, hi = interval(t)
    d = probs[1] - probs[2]
    return weight[(lo <= d) & (d <= hi)].sum()


def _wald(t):
    n = t.sum(axis=1)
    delta, m = (t[:, 1] - t[:, 2]) / n, t[:, 1] + t[:, 2]
    half = 1.959964 * np.sqrt(np.maximum(m - n * delta**2, 0)) / n
    return delta - half, delta + half


PROBS = [  # both right, only A, only B, neither
    (0.4875, 0.2625, 0.1625, 0.0875),  # A right w.p. 0.75, B 0.65, independent
    (0.6, 0.15, 0.05, 0.2),
    (0.45, 0.3, 0.2, 0.05),
    (0.85, 0.1, 0.02, 0.03),
    (0.9, 0.05, 0.05, 0.0),
]


@pytest.mark.parametrize("probs", PROBS)
def test_exact_coverage_by_enumeration(probs):
    """Every table of n = 20 items weighted by its multinomial probability."""
    probs = np.array(probs)
    cover = _exact_coverage(20, probs, lambda t: _newcombe_paired_ci(*t.T, 0.95))
    assert 0.94 <= cover <= 1.0
    if probs[2] == 0.02:  # few discordant items: the Wald interval falls short
        assert _exact_coverage(20, probs, _wald) < 0.9


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 30, 100])
def test_simulated_coverage(n, rng, scaled):
    """Per-item outcomes drawn at random; the interval's coverage at 95 %."""
    sims = scaled(20_000, minimum=4000)
    pa, pb = 0.75, 0.65
    ra = rng.random((sims, n)) < pa
    rb = rng.random((sims, n)) < pb
    counts = [np.sum(x, axis=1) for x in (ra & rb, ra & ~rb, ~ra & rb, ~ra & ~rb)]
    lo, hi = _newcombe_paired_ci(*counts, 0.95)
    cover = np.mean((lo <= pa - pb) & (pa - pb <= hi))
    mc = 3 * np.sqrt(0.95 * 0.05 / sims)
    assert 0.95 - mc - 0.005 <= cover <= 0.985, cover
    print(f"n={n}: coverage {cover:.4f} over {sims} sets")


def _grid(step):
    """Every (both, only A, only B, neither) on the simplex in steps of ``step``."""
    m = round(1 / step)
    return _tables(m) / m


# docs/significance.md's table: for each n, the minimum exact coverage of Newcombe's interval over
# the 0.02-grid of parameters, a parameter where it occurs (the mirror image, A and B swapped,
# ties it), the mean over the grid and the share of the grid below 0.93. It dips where almost
# every item is discordant, far from the usual case.
TABLE = {10: (0.860, (0, 0.2, 0.8, 0), 0.956, 0.070),
         20: (0.883, (0.02, 0, 0.96, 0.02), 0.954, 0.010),
         30: (0.905, (0.02, 0, 0.96, 0.02), 0.954, 0.004),
         50: (0.896, (0.48, 0, 0.04, 0.48), 0.952, 0.003)}  # fmt: skip


def _grid_coverage(n, grid, chunk=1000):
    """Exact coverage at each grid parameter: every table of n items, weighted multinomially."""
    t = _tables(n).astype(float)
    lo, hi = _newcombe_paired_ci(*t.T, 0.95)
    log_count = special.gammaln(n + 1) - special.gammaln(t + 1).sum(axis=1)
    log_g = np.log(np.maximum(grid, 1e-300))  # an empty cell: probability 0 to machine precision
    d = grid[:, 1] - grid[:, 2]
    cover = np.empty(len(grid))
    for s in range(0, len(grid), chunk):  # chunks of parameters x every table
        rows = slice(s, s + chunk)
        p = np.exp(log_count + log_g[rows] @ t.T)
        inside = (lo - 1e-12 <= d[rows, None]) & (d[rows, None] <= hi + 1e-12)
        cover[rows] = np.einsum("ij,ij->i", p, inside)
    return cover


def test_grid_coverage_matches_scipy_multinomial():
    """The vectorised enumeration equals scipy's multinomial pmf summed over covering tables."""
    grid = np.array([(0.0, 0.2, 0.8, 0.0), (0.25, 0.25, 0.25, 0.25), (0.6, 0.15, 0.05, 0.2)])
    for probs, cover in zip(grid, _grid_coverage(10, grid), strict=True):
        assert cover == pytest.approx(
            _exact_coverage(10, probs, lambda t: _newcombe_paired_ci(*t.T, 0.95)), abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("n", sorted(TABLE))
def test_minimum_exact_coverage_table(n):
    """Exact enumeration over every table and a grid of parameters: the documented table."""
    grid = _grid(0.02)
    cover = _grid_coverage(n, grid)
    low, where, mean, share = TABLE[n]
    assert cover.min() == pytest.approx(low, abs=5e-4)
    at = np.flatnonzero(np.all(np.abs(grid - np.array(where)) < 1e-9, axis=1))
    assert cover[at] == pytest.approx(cover.min(), abs=1e-9)
    assert cover.mean() == pytest.approx(mean, abs=5e-4)
    assert (cover < 0.93).mean() == pytest.approx(share, abs=5e-4)
    print(f"n={n}: minimum {cover.min():.3f} at {grid[np.argmin(cover)]}, mean {cover.mean():.3f}")
