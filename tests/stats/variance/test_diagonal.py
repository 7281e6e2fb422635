"""The diagonal Schur complement's factor (stats/variance/diagonal.py).

A diagonal pattern gives through :class:`DiagonalCholesky` what the supernodal
:class:`SparseCholesky` gives (to 1e-12, on its numpy path and its compiled
kernel) and what numpy's dense linear algebra gives; a model whose Schur
complement is diagonal (a factor nested in the largest one) takes that path,
with the evaluations and analysis of the supernodal one.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from vareval.data.variance import variance
from vareval.errors import VarevalWarning
from vareval.stats.variance import fit as mixed
from vareval.stats.variance import sparse, supernodal
from vareval.stats.variance.diagonal import DiagonalCholesky, DiagonalFactor
from vareval.stats.variance.fit import _Crossprods
from vareval.stats.variance.supernodal import SparseCholesky
from vareval.stats.variance.tests import _Schur

TOL = 1e-12


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL * np.max(np.abs(want)))


@pytest.mark.parametrize("engine", ["numpy", "kernel"])
@pytest.mark.parametrize("n", [1, 7, 500])
def test_diagonal_pattern_equals_the_supernodal_factor_and_dense(n, engine, kernel_switch):
    if kernel_switch(supernodal._kernel, on=engine == "kernel") is None and engine == "kernel":
        pytest.skip("the compiled supernodal kernel is not built")
    rng = np.random.default_rng(n)
    idx = rng.permutation(n)  # entries in any order
    values = rng.uniform(1e-3, 1e3, n)
    diag, general = DiagonalCholesky(idx, idx, n), SparseCholesky(idx, idx, n)
    f, g = diag.factor(values), general.factor(values)
    S = np.zeros((n, n))
    S[idx, idx] = values
    assert f.logdet == pytest.approx(g.logdet, rel=TOL, abs=TOL)
    assert f.logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=TOL, abs=TOL)
    b, B = rng.normal(size=n), rng.normal(size=(n, 3))
    for rhs in (b, B):
        x = f.solve(rhs)
        assert x.shape == rhs.shape
        _close(x, g.solve(rhs))
        _close(x, np.linalg.solve(S, rhs))
    _close(f.inverse_on_pattern(), g.inverse_on_pattern())
    _close(f.inverse_on_pattern(), np.linalg.inv(S)[idx, idx])
    assert diag.factor_nnz == diag.nnz_l == general.nnz_l == n  # no fill
    assert diag.seconds() < general.seconds()


def test_not_positive_definite_and_bad_input():
    chol = DiagonalCholesky([1, 0, 2], [1, 0, 2], 3)
    for bad in ([1.0, 0.0, 2.0], [1.0, -1e-300, 2.0], [1.0, np.nan, 2.0], [1.0, np.inf, 1.0]):
        with pytest.raises(np.linalg.LinAlgError):
            chol.factor(bad)
    with pytest.raises(ValueError, match="expected 3 values"):
        chol.factor([1.0, 2.0])
    with pytest.raises(TypeError):
        chol.factor(np.ones(3) + 1e-3j)
    with pytest.raises(ValueError):
        chol.factor([1.0, 2.0, 3.0]).solve(np.ones(4))
    with pytest.raises(ValueError, match="off the diagonal"):
        DiagonalCholesky([0, 1], [0, 0], 2)
    with pytest.raises(ValueError, match="once"):
        DiagonalCholesky([0, 0], [0, 0], 2)
    with pytest.raises(ValueError, match="once"):
        DiagonalCholesky([0], [0], 2)


def _nested(rng, n_seed=150, n=1200):
    """Seeds, seed:experiment (nested in seed, the largest factor) and y."""
    seed = rng.integers(0, n_seed, n)
    exp = rng.integers(0, 6, n)
    cell = np.unique(seed * 6 + exp, return_inverse=True)[1]
    y = 0.5 * rng.normal(size=n_seed)[seed] + 0.3 * rng.normal(size=cell.max() + 1)[cell]
    X = np.column_stack([np.ones(n), exp == 1, exp == 2])
    return y + rng.normal(size=n), X, [seed, cell], [n_seed, int(cell.max()) + 1]


def test_a_nested_model_takes_the_diagonal_path_and_evaluates_as_the_supernodal(monkeypatch):
    y, X, codes, levels = _nested(np.random.default_rng(8))
    diag = _Crossprods(y, X, codes, levels, path="sparse")
    assert diag.big == 1 and isinstance(diag.schur.chol, DiagonalCholesky)
    monkeypatch.setattr(sparse, "DiagonalCholesky", SparseCholesky)
    general = _Crossprods(y, X, codes, levels, path="sparse")
    assert isinstance(general.schur.chol, SparseCholesky)
    dense = _Crossprods(y, X, codes, levels, path="dense")
    for theta in ([0.7, 1.9], [0.0, 1.4], [1.1, 0.0]):
        theta = np.array(theta)
        a = diag.evaluate(theta, reml=True, information=True)
        assert isinstance(diag.schur.factor(theta), DiagonalFactor)
        b = general.evaluate(theta, reml=True, information=True)
        for part in ("dev", "beta", "grad", "dlogdetA", "dr2", "dlogdetRX2", "information"):
            np.testing.assert_allclose(a[part], b[part], rtol=TOL, atol=TOL)
        c = dense.evaluate(theta, reml=True, grad=True)
        assert a["dev"] == pytest.approx(c["dev"], rel=1e-12)
        np.testing.assert_allclose(a["grad"], c["grad"], rtol=1e-9, atol=1e-9)
        ta = _Schur(diag, theta).traces(len(y), 1.3)
        tb = _Schur(general, theta).traces(len(y), 1.3)
        np.testing.assert_allclose(ta, tb, rtol=1e-9)


def test_the_lrt_refit_without_config_is_diagonal_and_changes_no_number(monkeypatch):
    # seed + config + seed:experiment: dropping config leaves seed:experiment
    # nested in seed, a diagonal Schur complement on the seeds
    rng = np.random.default_rng(3)
    n, n_seed, n_cfg = 1500, 250, 240
    seed, cfg, exp = rng.integers(0, n_seed, n), rng.integers(0, n_cfg, n), rng.integers(0, 4, n)
    d = pd.DataFrame(
        {
            "seed": seed.astype(str),
            "config": cfg.astype(str),
            "experiment": np.array(["a", "b", "c", "d"])[exp],
            "y": 0.1 * exp
            + rng.normal(size=n_seed)[seed]
            + 1.5 * rng.normal(size=n_cfg)[cfg]
            + rng.normal(size=n),
        }
    )
    monkeypatch.setattr(mixed, "FORCE_PATH", "sparse")
    made = []
    real = sparse.SparseSchur.__init__

    def spy(self, cp):
        real(self, cp)
        made.append(type(self.chol))

    monkeypatch.setattr(sparse.SparseSchur, "__init__", spy)

    def analyse():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarevalWarning)
            a = variance(d, metric="y", fixed=["experiment"], random=["seed", "config"],
                         seed_by_experiment=True)  # fmt: skip
        out = [a.fit.coef, a.fit.se, a.fit.sd, [a.fit.criterion]]
        out += [[t.statistic for t in a.lrt], [t.loglik_reduced for t in a.lrt]]
        for tests in a.f_tests.values():
            out += [[t.statistic for t in tests], [t.ddf for t in tests]]
        return np.concatenate([np.ravel(x) for x in out])

    fast = analyse()
    assert DiagonalCholesky in made
    made.clear()
    monkeypatch.setattr(sparse, "DiagonalCholesky", SparseCholesky)
    general = analyse()
    assert DiagonalCholesky not in made
    np.testing.assert_allclose(fast, general, rtol=1e-10)
