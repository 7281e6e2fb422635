"""The rest of opda's surface, in opda's words, against opda 0.8 itself."""

import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.errors import ArgumentError
from vareval.stats import (
    EmpiricalDistribution,
    beta_equal_tailed_interval,
    beta_highest_density_interval,
    cdf_band,
    compare_tuning_curves,
    dkw_epsilon,
)

opda = pytest.importorskip("opda")
from opda import nonparametric, utils  # noqa: E402


@pytest.mark.parametrize("minimize", [False, True])
def test_naive_tuning_curve_equals_opda(rng, minimize):
    ys = rng.uniform(size=25)
    ks = np.arange(1, 31)
    ours = EmpiricalDistribution(ys, a=0, b=1).naive_tuning_curve(ks, higher_is_better=not minimize)
    theirs = nonparametric.EmpiricalDistribution(ys, a=0, b=1).naive_tuning_curve(ks, minimize)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("minimize", [False, True])
def test_curves_below_one_iteration_equal_opda(rng, minimize):
    ys = rng.uniform(size=17)
    ks = np.array([0.05, 0.2, 0.5, 0.75, 0.999, 1.0, 2.5])
    ours = EmpiricalDistribution(ys, a=0, b=1)
    theirs = nonparametric.EmpiricalDistribution(ys, a=0, b=1)
    hib = not minimize
    np.testing.assert_allclose(ours.average_tuning_curve(ks, higher_is_better=hib),
                               theirs.average_tuning_curve(ks, minimize), atol=1e-12)  # fmt: skip
    # opda's v_tuning_curve takes whole k only; for any k > 0 V is the average curve
    np.testing.assert_allclose(ours.v_statistic(ks, higher_is_better=hib),
                               theirs.average_tuning_curve(ks, minimize), atol=1e-12)  # fmt: skip
    q = 0.3  # away from the exact jumps where opda's float sums differ (see docs/tuning.md)
    want = theirs.quantile_tuning_curve(ks, q, minimize)
    np.testing.assert_allclose(ours.quantile_tuning_curve(ks, q, higher_is_better=hib), want,
                               atol=1e-12)  # fmt: skip
    with pytest.raises(ArgumentError, match="> 0"):
        ours.average_tuning_curve(-1.0)


def test_beta_intervals_and_dkw_equal_opda(rng):
    a, b, cov = rng.uniform(0.2, 40, 300), rng.uniform(0.2, 40, 300), rng.uniform(0, 1, 300)
    lo, hi = beta_equal_tailed_interval(a, b, cov)
    olo, ohi = utils.beta_equal_tailed_interval(a, b, cov)
    np.testing.assert_allclose(lo, olo, atol=1e-12)
    np.testing.assert_allclose(hi, ohi, atol=1e-12)
    # both > 1: opda's mode clipping makes its interval wrong when one of a, b is < 1
    # (Beta(1.13, 0.24) at 0.91: opda [0, 0.99996], the shortest is [0.3795, 1])
    ok = (a > 1) & (b > 1)
    lo, hi = beta_highest_density_interval(a[ok], b[ok], cov[ok])
    olo, ohi = utils.beta_highest_density_interval(a[ok], b[ok], cov[ok])  # bisection to 1e-10
    np.testing.assert_allclose(lo, olo, atol=2e-10)
    np.testing.assert_allclose(hi, ohi, atol=2e-10)
    for n, c in [(1, 0.5), (10, 0.9), (1000, 0.99), (7, 1.0)]:
        assert dkw_epsilon(n, c) == utils.dkw_epsilon(n, c)
    with pytest.raises(ArgumentError, match="a > 1 or b > 1"):
        beta_highest_density_interval(0.5, 0.5, 0.9)


def test_highest_density_interval_is_the_shortest_with_its_mass():
    from scipy import stats

    for a, b, cov in [(2.0, 5.0, 0.9), (30.0, 3.0, 0.5), (0.5, 4.0, 0.8), (4.0, 0.7, 0.6),
                         (1.1316778497682345, 0.24106558421754717, 0.9109647250049212)]:
        lo, hi = beta_highest_density_interval(a, b, cov)
        law = stats.beta(a, b)
        assert law.cdf(hi) - law.cdf(lo) == pytest.approx(cov, abs=1e-12)
        starts = np.linspace(0, law.ppf(1 - cov), 2001)
        widths = law.ppf(law.cdf(starts) + cov) - starts
        assert hi - lo <= widths.min() + 1e-9


def test_opda_method_names_are_aliases(rng):
    ys = rng.uniform(size=20)
    for alias, name in [("ld_highest_density", "ld-hd"), ("ld_equal_tailed", "ld-et")]:
        band = cdf_band(ys, 0.9, a=0, b=1, method=alias)
        assert band.method == name
        same = cdf_band(ys, 0.9, a=0, b=1, method=name)
        np.testing.assert_array_equal(band.upper_cdf, same.upper_cdf)
    with pytest.raises(ArgumentError, match="ld_highest_density"):
        cdf_band(ys, 0.9, a=0, b=1, method="highest")


def test_bands_pinned_to_the_bound_say_so():
    a = np.r_[np.ones(15), 0.9, 0.8]
    b = np.r_[np.ones(14), 0.7, 0.95, 0.6]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_tuning_curves(a, b, [1, 2, 4, 8], a=0, b=1)
    pinned = (cmp.band_a.lower == 1) & (cmp.band_b.lower == 1)
    assert pinned[1:].all()
    assert (cmp.verdict[pinned] == "bands coincide at the bound").all()
    assert cmp.verdict[0] == "need more data"


def test_cli_spells_out_the_band_and_accepts_opda_names(tmp_path):
    path = tmp_path / "search.csv"
    path.write_text("model,f1\n" + "".join(f"a,{x:.3f}\nb,{x / 2:.3f}\n" for x in
                                           np.linspace(0.1, 0.9, 12)))  # fmt: skip
    out = CliRunner().invoke(main, ["tuning-curve", str(path), "--metric", "f1", "--by", "model",
                                    "--bounds", "0,1", "--band", "ld_highest_density"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "ld-hd band (Learned-Miller-DeStefano highest-density band;" in out.output
    assert out.output.count("Learned-Miller-DeStefano") == 1
