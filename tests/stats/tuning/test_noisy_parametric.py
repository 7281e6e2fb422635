"""The noisy quadratic distribution against opda 0.8's ``parametric.NoisyQuadraticDistribution``.

Precision asserted, and why:

- pdf and cdf: 1e-10 for even ``c`` (opda's integer partial moments are exact
  recursions); for odd ``c`` opda approximates the half-integer moments by
  minimax polynomials (stated error up to ~1e-5), so there vareval (exact) is
  checked against an independent ``scipy.integrate.quad`` convolution to 1e-10
  and against opda to 5e-5 (the density only against the reference, 1e-8
  relative: opda's odd-``c`` density is off by up to a few per cent at ``c = 1``).
- ppf: opda bisects 30 times on ``[a - 6 o, b + 6 o]``, so it is right only to
  ``(b - a + 12 o) 2^-31``; vareval solves to rounding.
- average curve: opda integrates by trapezoids to ``1e-6 (b - a + 12 o)``;
  vareval's equals the mean at ``k = 1`` to 1e-10.
- sample: the same generator gives the same draws to 1e-12.
"""

import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from vareval.errors import ArgumentError
from vareval.stats import NoisyQuadraticDistribution, QuadraticDistribution

opda_parametric = pytest.importorskip("opda.parametric")
O = opda_parametric.NoisyQuadraticDistribution  # noqa: E741


def _cases(rng, m=40):
    for _ in range(m):
        a = rng.uniform(-2, 2)
        b = a + rng.uniform(0.05, 3)
        yield a, b, int(rng.integers(1, 11)), (b - a) * 10 ** rng.uniform(-5.5, 1.5), bool(
            rng.integers(2)
        )


def _reference(dist, y):
    """(f(y), F(y)) of X + E as E[phi((y - X) / o) / o], E[Phi((y - X) / o)], X quadratic,
    by quadrature over X's quantiles."""
    q, o = QuadraticDistribution(dist.a, dist.b, dist.c, dist.convex), dist.o
    u0, u1 = q.cdf(y - 12 * o), q.cdf(y + 12 * o)  # Phi is 1 below u0, 0 above u1
    kw = {"epsabs": 1e-14, "epsrel": 1e-12, "limit": 400}
    pdf = integrate.quad(lambda u: stats.norm.pdf((y - q.ppf(u)) / o) / o, u0, u1, **kw)[0]
    cdf = integrate.quad(lambda u: stats.norm.cdf((y - q.ppf(u)) / o), u0, u1, **kw)[0]
    return pdf, u0 + cdf


def test_values_and_curves_equal_opda_on_40_held_out_cases(rng):
    for a, b, c, o, convex in _cases(rng):
        ours, theirs = NoisyQuadraticDistribution(a, b, c, o, convex), O(a, b, c, o, convex)
        width = b - a + 12 * o
        ys = rng.uniform(a - 0.2 * width, b + 0.2 * width, 100)
        ps, ks = rng.uniform(0.001, 0.999, 100), rng.uniform(1, 500, 20)
        assert ours.mean == pytest.approx(theirs.mean, abs=1e-12)
        assert ours.variance == pytest.approx(theirs.variance, rel=1e-12)
        tol = 1e-10 if c % 2 == 0 or ours._regime != "noisy" else 5e-5
        np.testing.assert_allclose(ours.cdf(ys), theirs.cdf(ys), rtol=0, atol=tol)
        if tol == 1e-10:  # opda's odd-c density (a Chebyshev or minimax approximation) is off
            np.testing.assert_allclose(ours.pdf(ys), theirs.pdf(ys), rtol=1e-9, atol=1e-10)
        if ours._regime == "noisy":
            y = ys[(ys > a - 6 * o) & (ys < b + 6 * o)][:4]
            pdf, cdf = np.transpose([_reference(ours, v) for v in y])
            np.testing.assert_allclose(ours.cdf(y), cdf, atol=1e-10)
            np.testing.assert_allclose(ours.pdf(y), pdf, rtol=1e-8, atol=1e-10)
        ppf_tol = width * 2**-30 + (0 if tol == 1e-10 else 1e-3 * width)
        np.testing.assert_allclose(ours.ppf(ps), theirs.ppf(ps), rtol=0, atol=ppf_tol)
        for minimize in (False, True):
            hib = not minimize
            np.testing.assert_allclose(
                ours.quantile_tuning_curve(ks, 0.5, higher_is_better=hib),
                theirs.quantile_tuning_curve(ks, 0.5, minimize=minimize), rtol=0,
                atol=ppf_tol + (0 if tol == 1e-10 else 1e-3 * width),
            )  # fmt: skip
            np.testing.assert_allclose(
                ours.average_tuning_curve(ks, higher_is_better=hib),
                theirs.average_tuning_curve(ks, minimize=minimize), rtol=0,
                atol=3e-6 * width + (0 if tol == 1e-10 else 1e-3 * width),
            )  # fmt: skip
            assert ours.average_tuning_curve(1.0, higher_is_better=hib) == pytest.approx(
                ours.mean, abs=1e-10 * width
            )


def test_ppf_inverts_the_cdf_to_rounding(rng):
    for a, b, c, o, convex in _cases(rng, 10):
        dist = NoisyQuadraticDistribution(a, b, c, o, convex)
        ps = rng.uniform(1e-6, 1 - 1e-6, 50)
        np.testing.assert_allclose(dist.cdf(dist.ppf(ps)), ps, atol=1e-12)


def test_sampling_matches_opda_s_stream_and_the_law(rng):
    ours, theirs = NoisyQuadraticDistribution(0.1, 0.9, 3, 0.05), O(0.1, 0.9, 3, 0.05)
    np.testing.assert_allclose(
        ours.sample(50, rng=np.random.default_rng(3)),
        theirs.sample(50, generator=np.random.default_rng(3)), atol=1e-12,
    )  # fmt: skip
    assert stats.kstest(ours.sample(20_000, rng=rng), ours.cdf).pvalue > 1e-3


def _fit_at_least_as_good(ys, limits=(-np.inf, np.inf), constraints=None):
    ours = NoisyQuadraticDistribution.fit(ys, limits, constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = O.fit(ys, limits, constraints, generator=np.random.default_rng(0))
    theirs = NoisyQuadraticDistribution(t.a, t.b, int(t.c), t.o, t.convex)
    # the same objective with the exact CDF: vareval's optimum is as low as opda's or lower
    assert ours.spacing_loss(ys, limits) <= theirs.spacing_loss(ys, limits) + 1e-9
    return ours


@pytest.mark.parametrize("m", [pytest.param(40, marks=pytest.mark.slow), 2])
def test_fits_reach_opda_s_optimum_on_held_out_samples(rng, scaled, m):
    # each opda fit takes seconds: 40 cases at full scale, 10 in CI's bounded slow tier
    m = scaled(m, minimum=10) if m > 2 else m
    for a, b, c, _, convex in list(_cases(rng, m)):
        o = (b - a) * 10 ** rng.uniform(-3, -0.5)
        ys = NoisyQuadraticDistribution(a, b, min(c, 5), o, convex).sample(30, rng=rng)
        _fit_at_least_as_good(ys, constraints={"convex": convex})


@pytest.mark.slow
def test_opda_s_documented_fit_examples():
    ys = [0.59, 0.86, 0.94, 0.81, 0.68, 0.90, 0.93, 0.75]
    loss = [5.0, 2.9, 5.1, 6.8, 3.2]
    _fit_at_least_as_good(ys)
    _fit_at_least_as_good(loss, constraints={"convex": True})
    _fit_at_least_as_good(loss, limits=(-np.inf, 5.0), constraints={"convex": True})
    _fit_at_least_as_good(loss, limits=(1.0, 10.0))
    assert _fit_at_least_as_good(ys, constraints={"b": (0.0, 1.0)}).b <= 1.0
    assert _fit_at_least_as_good(ys, constraints={"c": (1, 3)}).c <= 3
    assert _fit_at_least_as_good(ys, constraints={"c": 1}).c == 1


def test_fixed_zero_noise_is_the_quadratic_fit():
    ys = [0.59, 0.86, 0.94, 0.81, 0.68, 0.90, 0.93, 0.75]
    fit = NoisyQuadraticDistribution.fit(ys, constraints={"o": 0.0, "convex": False})
    quad = QuadraticDistribution.fit(ys, constraints={"convex": False})
    assert (fit.a, fit.b, fit.c, fit.o) == (quad.a, quad.b, quad.c, 0.0)


def test_bad_parameters_name_the_argument():
    with pytest.raises(ArgumentError, match="`o`"):
        NoisyQuadraticDistribution(0, 1, 2, -0.1)
    with pytest.raises(ArgumentError, match="`c`"):
        NoisyQuadraticDistribution(0, 1, 11, 0.1)
    with pytest.raises(ArgumentError, match="unknown constraint"):
        NoisyQuadraticDistribution.fit([0.1, 0.5, 0.7], constraints={"d": 1})


def test_parametric_curve_command_fits_the_noisy_family(rng, tmp_path):
    import json

    from click.testing import CliRunner

    from vareval.cli import main

    ys = NoisyQuadraticDistribution(0.5, 0.9, 3, 0.01).sample(30, rng=rng)
    path = tmp_path / "s.csv"
    path.write_text("m,acc\n" + "".join(f"x,{float(y)!r}\n" for y in ys))
    args = ["parametric-curve", str(path), "--metric", "acc", "--by", "m", "--ks", "1,10,100",
            "--resamples", "10", "--family", "noisy-quadratic", "--json"]  # fmt: skip
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    js = json.loads(out.output)
    assert js["model"].startswith("noisy quadratic") and js["curves"]["x"]["o"] > 0
    assert js["curves"]["x"]["label"][-1] == "model-based extrapolation"
    bad = CliRunner().invoke(main, [*args[:-3], "--family", "cubic"])
    assert bad.exit_code == 2 and "--family" in bad.output


@pytest.mark.parametrize("scale", [1.01e-6, 1e-4, 0.02, 0.3, 9.9])
def test_odd_moment_table_equals_the_quadrature(rng, scale):
    """Many points of an odd c go through a piecewise Chebyshev table of M_p: it equals
    the exact quadrature to 1e-12, or to the rounding of loc (1e-16 / scale) at tiny scales."""
    from vareval.stats.tuning.parametric import _MomentTable, _partial_moment

    loc = np.concatenate([rng.uniform(-10 * scale, 1 + 10 * scale, 5000),
                          rng.uniform(-12 * scale, 12 * scale, 2000),
                          1 + rng.uniform(-12 * scale, 12 * scale, 2000)])
    for p in (-1, 1, 3, 9):
        exact = _partial_moment(loc, scale, p)
        tol = max(1e-12, 5e-16 / scale) * np.maximum(1.0, np.abs(exact))
        assert np.all(np.abs(_MomentTable(scale, p)(loc) - exact) <= tol)
    d = NoisyQuadraticDistribution(0.1, 0.9, 3, 0.8 * scale)
    ys = np.linspace(0.0, 1.0, 2000)  # many points: the table; one point: the quadrature
    np.testing.assert_allclose(d.cdf(ys)[::50], [float(d.cdf(y)) for y in ys[::50]],
                               rtol=0, atol=max(1e-12, 5e-16 / scale))
