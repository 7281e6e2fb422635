"""A confidence sequence on a finished results table: how the answer evolved, pair by pair."""

from __future__ import annotations

import numpy as np

from vareval.data.design import analysed_rows
from vareval.data.validate import pairs
from vareval.errors import ArgumentError
from vareval.stats.budget.sequential import BOUNDED_METHODS, ConfidenceSequence, confidence_sequence


def difference_bounds(bounds) -> tuple[float, float] | None:
    """The bounds of ``x_a - x_b`` when each metric value lies in ``bounds = (low, high)``."""
    if bounds is None:
        return None
    try:
        low, high = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ArgumentError(f"--bounds must be two numbers low,high; got {bounds!r}.") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ArgumentError(f"--bounds must be finite with low < high; got {bounds!r}.")
    return low - high, high - low


def sequence(
    df,
    metric: str,
    by,
    pair_on,
    a: str,
    b: str,
    *,
    bounds=None,
    method: str | None = None,
    margin=None,
    confidence: float = 0.95,
    batch: int | None = None,
    budget: int | None = None,
) -> ConfidenceSequence:
    """The confidence sequence of ``metric(a) - metric(b)`` over the table's pairs, in row order.

    Pairs are matched on ``pair_on`` (one row per key and method, every key
    with both methods) and taken in the order of ``a``'s rows, the order in
    which a run store wrote them. ``bounds`` are the metric's own bounds
    (``(0, 1)`` for an accuracy): with them a non-asymptotic sequence,
    ``method`` ``"betting"`` (default) or ``"empirical-bernstein"``; without
    them the asymptotic normal-mixture one. The stopping rule looks after every ``batch`` pairs
    (default every pair); ``budget`` tunes the normal-mixture sequence and
    is where the rule would have stopped at the latest.
    """
    if method is not None and (bounds is None or method not in BOUNDED_METHODS):
        raise ArgumentError(
            f"--cs must be one of {', '.join(BOUNDED_METHODS)}, with --bounds (without them the "
            f"normal-mixture sequence is the only one); got {method!r}"
            + ("" if bounds is not None else " and no --bounds") + "."
        )
    limits = difference_bounds(bounds) and tuple(map(float, bounds))  # checked first
    # refuses a score outside the bounds
    rows = analysed_rows(df, metric, by, bounds=limits or None)
    xa, xb, _ = pairs(rows, metric, by, pair_on, a, b, limits)
    d = xa - xb
    if batch is not None and (isinstance(batch, bool) or int(batch) != batch or batch < 1):
        raise ArgumentError(f"--batch must be an integer >= 1; got {batch!r}.")
    looks = None if batch is None else sorted({*range(batch, d.size + 1, batch), d.size})
    return confidence_sequence(
        d,
        bounds=difference_bounds(bounds),
        confidence=confidence,
        margin=margin,
        budget=budget,
        looks=looks,
        method=method,
    )
