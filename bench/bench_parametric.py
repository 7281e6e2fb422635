"""Parametric tuning curves: vareval's QuadraticDistribution against opda 0.8's.

Times (best of several runs) the vectorised functions on 10^6 points and the
maximum-spacing fit on samples of 30, 100 and 1,000, unconstrained and with
the concave form fixed (as when maximising); prints opda / vareval ratios
(> 1: vareval faster) and the fit's spacing loss beside opda's (lower is
better; both minimise the same objective).

    PYTHONPATH=src python bench/bench_parametric.py
"""

import sys
import time
import warnings

import numpy as np
from opda.parametric import NoisyQuadraticDistribution as NoisyOpda
from opda.parametric import QuadraticDistribution as Opda

from vareval.stats import NoisyQuadraticDistribution, QuadraticDistribution


def best_time(f, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    rng = np.random.default_rng(0)
    ours, theirs = QuadraticDistribution(0.1, 0.9, 4), Opda(0.1, 0.9, 4)
    ys, ps, ks = rng.uniform(0, 1, 10**6), rng.uniform(0, 1, 10**6), rng.uniform(1, 1e4, 10**6)
    print("function on 10^6 points      vareval s    opda s   opda/vareval")
    calls = {
        "pdf": (lambda: ours.pdf(ys), lambda: theirs.pdf(ys)),
        "cdf": (lambda: ours.cdf(ys), lambda: theirs.cdf(ys)),
        "ppf": (lambda: ours.ppf(ps), lambda: theirs.ppf(ps)),
        "quantile_tuning_curve": (lambda: ours.quantile_tuning_curve(ks),
                                  lambda: theirs.quantile_tuning_curve(ks)),
        "average_tuning_curve": (lambda: ours.average_tuning_curve(ks),
                                 lambda: theirs.average_tuning_curve(ks)),
    }  # fmt: skip
    for name, (f, g) in calls.items():
        tf, a = best_time(f)
        tg, b = best_time(g)
        assert np.allclose(a, b, rtol=0, atol=1e-10)
        print(f"{name:<26} {tf:10.4f} {tg:9.4f} {tg / tf:12.2f}")
    print("\nfit (maximum spacing)   n  constraint   vareval s   opda s  opda/vareval"
          "   loss vareval - opda")  # fmt: skip
    for n in (30, 100, 1000):
        sample = Opda(0.2, 0.8, 3).sample(n, generator=np.random.default_rng(n))
        for constraints in (None, {"convex": False}):
            def ours_fit(sample=sample, constraints=constraints):
                return QuadraticDistribution.fit(sample, constraints=constraints)

            def opda_fit(sample=sample, constraints=constraints):
                return Opda.fit(sample, constraints=constraints, generator=np.random.default_rng(0))

            tf, fit = best_time(ours_fit)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tg, ofit = best_time(opda_fit)
            as_ours = QuadraticDistribution(ofit.a, ofit.b, int(ofit.c), ofit.convex)
            gap = fit.spacing_loss(sample) - as_ours.spacing_loss(sample)
            label = "concave" if constraints else "none"
            print(f"{'':>19}{n:5d}  {label:<10} {tf:10.3f} {tg:8.3f} {tg / tf:12.2f} {gap:+18.2e}")


def noisy():
    """The noisy quadratic: functions on 10^4 points (c = 3 and 4), fits on n = 30."""
    rng = np.random.default_rng(1)
    ys, ps, ks = rng.uniform(0, 1, 10**4), rng.uniform(0, 1, 10**4), rng.uniform(1, 1e3, 100)
    print("\nnoisy quadratic, 10^4 points   vareval s    opda s   opda/vareval")
    for c in (3, 4):
        points = {"pdf": ys, "cdf": ys, "ppf": ps, "average_tuning_curve": ks}
        for name, x in points.items():
            # a fresh distribution per call, so vareval's odd-c moment table is built each time
            def f(x=x, name=name, c=c):
                return getattr(NoisyQuadraticDistribution(0.1, 0.9, c, 0.02), name)(x)

            def g(x=x, name=name, c=c):
                return getattr(NoisyOpda(0.1, 0.9, c, 0.02), name)(x)

            tf, _ = best_time(f)
            tg, _ = best_time(g)
            print(f"c={c} {name:<26} {tf:10.4f} {tg:9.4f} {tg / tf:12.2f}")
    print("\nnoisy fit, n = 30, concave   vareval s   opda s  opda/vareval   loss vareval - opda")
    for seed in range(3):
        sample = NoisyQuadraticDistribution(0.2, 0.8, 3, 0.02).sample(30, rng=seed)
        tf, fit = best_time(lambda s=sample: NoisyQuadraticDistribution.fit(
            s, constraints={"convex": False}), repeat=1)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tg, o = best_time(lambda s=sample: NoisyOpda.fit(
                s, constraints={"convex": False}, generator=np.random.default_rng(0)), repeat=1)
        theirs = NoisyQuadraticDistribution(o.a, o.b, int(o.c), o.o, o.convex)
        gap = fit.spacing_loss(sample) - theirs.spacing_loss(sample)
        print(f"{'':>20}seed {seed} {tf:10.3f} {tg:8.3f} {tg / tf:12.2f} {gap:+18.2e}")


if __name__ == "__main__":
    if "--noisy" not in sys.argv:
        main()
    noisy()
