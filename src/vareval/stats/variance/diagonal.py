"""The Cholesky factor of a diagonal pattern: one square root per level.

A likelihood-ratio refit that keeps a factor and one nested in it (``seed`` and
``seed:experiment`` once ``config`` is dropped) has a diagonal Schur complement:
every level of the largest factor meets one level of the other. A supernodal
analysis (:mod:`vareval.stats.variance.supernodal`) of such a pattern orders,
partitions and walks one supernode per level for nothing; here the factor is
``L = diag(sqrt(s))``, and its solve, log-determinant and selected inverse (the
whole inverse) are elementwise. :class:`DiagonalCholesky` has the interface of
:class:`~vareval.stats.variance.supernodal.SparseCholesky` that
:class:`~vareval.stats.variance.sparse.SparseSchur` uses, and
:class:`DiagonalFactor` that of its factor.
"""

from __future__ import annotations

import numpy as np

# seconds per level of one mixed-model evaluation (SparseCholesky.seconds):
# a few elementwise passes
_EVAL_PER_LEVEL = 1e-8


class DiagonalCholesky:
    """The analysis of a diagonal pattern: nothing to order, no fill.

    Parameters
    ----------
    row, col : array_like of int
        The pattern's entries, all on the diagonal (``row == col``), each
        diagonal entry once. Values given to :meth:`factor` follow this order.
    n : int
        The order of the matrix.

    Attributes
    ----------
    perm : ndarray of int
        The identity order (no elimination order is needed).
    n_supernodes, nnz_l, factor_nnz : int
        ``n``: one single-column supernode per level, no fill.
    flops : float
        0.
    """

    def __init__(self, row, col, n):
        n = int(n)
        if n < 1:
            raise ValueError("n must be positive")
        row = np.asarray(row, dtype=np.int64)
        if not np.array_equal(row, np.asarray(col)):
            raise ValueError("the pattern has entries off the diagonal")
        if not np.array_equal(np.sort(row), np.arange(n)):
            raise ValueError(f"expected each of the {n} diagonal entries once")
        self.n = self.n_entries = n
        self.n_supernodes = self.nnz_l = self.factor_nnz = n
        self.flops = 0.0
        self.perm = np.arange(n)
        self._index = row  # entry -> level

    def seconds(self):
        """Estimated seconds of one mixed-model evaluation on this pattern."""
        return _EVAL_PER_LEVEL * self.n

    def factor(self, values):
        """The factor of the diagonal matrix with these values.

        Raises
        ------
        numpy.linalg.LinAlgError
            If a value is not positive (or not finite).
        """
        if np.iscomplexobj(values):
            raise TypeError("values must be real")
        values = np.asarray(values, dtype=float)
        if values.shape != (self.n_entries,):
            raise ValueError(f"expected {self.n_entries} values, got shape {values.shape}")
        s = np.empty(self.n)
        s[self._index] = values
        return DiagonalFactor(self, s)


class DiagonalFactor:
    """``S = L L'`` with ``L = diag(sqrt(s))``.

    Attributes
    ----------
    logdet : float
        ``log|S| = 2 sum log L_ii``.
    """

    def __init__(self, symbolic, s):
        if not np.all(s > 0):  # NaN fails too
            raise np.linalg.LinAlgError("the matrix is not positive definite")
        self._sym = symbolic
        diag = np.sqrt(s)
        self._rinv = 1.0 / diag
        self.logdet = 2.0 * float(np.sum(np.log(diag)))
        if not np.isfinite(self.logdet):
            raise np.linalg.LinAlgError("the matrix is not positive definite")

    def solve(self, rhs):
        """``S^-1 rhs`` for ``rhs`` of shape ``(n,)`` or ``(n, m)``: ``L^-T (L^-1 rhs)``."""
        n = self._sym.n
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim not in (1, 2) or rhs.shape[0] != n:
            raise ValueError(f"rhs must be of shape ({n},) or ({n}, m)")
        rinv = self._rinv if rhs.ndim == 1 else self._rinv[:, None]
        return rhs * rinv * rinv

    def inverse_on_pattern(self):
        """The entries of ``S^-1`` on the pattern, one per entry given to the constructor."""
        return (self._rinv * self._rinv)[self._sym._index]
