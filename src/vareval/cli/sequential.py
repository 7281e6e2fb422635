"""``vareval sequential``: how a confidence sequence for a paired difference evolved."""

from __future__ import annotations

import click

from vareval.cli._common import (
    emit,
    json_option,
    metric_option,
    results_file,
    split_columns,
    with_design,
)

_EXPLAIN = {
    "difference": "the sequence excludes 0",
    "equivalent within margin": "the sequence lies inside +-margin",
    "budget": "the budget is spent",
    "not settled": "the table ends before the rule stopped",
}


def parse_pair(text: str, option: str) -> tuple[str, str]:
    """``a,b`` as two labels exactly as written (:func:`split_labels`); the comparison is a - b."""
    from vareval.cli._common import split_labels
    from vareval.errors import ArgumentError

    parts = split_labels(text, option)
    if len(parts) != 2:
        raise ArgumentError(
            f"{option} must name two things separated by a comma (CSV quotes around a label "
            f"holding a comma); got {text!r}."
        )
    return parts[0], parts[1]


def parse_bounds(text: str | None):
    """``low,high`` as two floats (None passes through)."""
    from vareval.errors import ArgumentError

    if text is None:
        return None
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise ArgumentError(f"--bounds must be two numbers low,high; got {text!r}.") from None
    return low, high


def cs_option(f):
    """``--cs``: which non-asymptotic sequence a bounded metric gets (stats' BOUNDED_METHODS)."""
    return click.option(
        "--cs", "cs_method", type=click.Choice(("betting", "empirical-bernstein")), default=None,
        help="With --bounds: the hedged-capital betting sequence (tighter) or the "
        "empirical-Bernstein one [default: betting; a resumed store: the one it recorded].",
    )(f)


_KIND = {
    "betting": "betting (hedged-capital) confidence sequence",
    "empirical-bernstein": "empirical-Bernstein confidence sequence",
}


def shown_rows(n_max: int, extra=()) -> list[int]:
    """A compact set of n to print: 1, 2, 3, 5 x powers of ten ..., the last, and ``extra``."""
    grid = {1, 2, 3, 5, n_max, *extra}
    step = 10
    while step <= n_max:
        grid.update(m * step // 10 for m in (10, 15, 20, 30, 50, 70))
        step *= 10
    return sorted(v for v in grid if 1 <= v <= n_max)


def render(cs, title: str, extra=()) -> str:
    """The sequence as a table of n, estimate, low, high, with the rule's stop."""
    import numpy as np

    from vareval._format import formatter

    kind = (
        f"{_KIND[cs.method]} (a difference lies in "
        f"[{cs.bounds[0]:g}, {cs.bounds[1]:g}]), non-asymptotic"
        if cs.bounds is not None
        else "normal-mixture confidence sequence (no bounds), asymptotic"
    )
    margin = f"; margin +-{cs.margin:g}" if cs.margin is not None else ""
    f = formatter(cs.estimate, cs.low[np.isfinite(cs.low)], cs.high[np.isfinite(cs.high)])
    lines = [
        title,
        f"{kind}: {cs.confidence:.0%} simultaneously over every n{margin}",
        f"{'n':>6}  {'estimate':>10}  {'low':>10}  {'high':>10}",
    ]
    for n in shown_rows(int(cs.n[-1]), (*extra, *([cs.stop] if cs.stop else []))):
        i = n - 1
        mark = "  <- stop" if n == cs.stop else ""
        lines.append(
            f"{n:>6}  {f(cs.estimate[i]):>10}  {_bound(f, cs.low[i]):>10}  "
            f"{_bound(f, cs.high[i]):>10}{mark}"
        )
    if cs.stop:
        lines.append(f"stop: n = {cs.stop}, {cs.reason} ({_EXPLAIN[cs.reason]})")
    else:
        lines.append(f"not settled after {cs.n[-1]} pairs ({_EXPLAIN['not settled']})")
    ci = cs.confidence_interval()
    lines.append(
        f"at n = {cs.n[-1]}: estimate {f(cs.estimate[-1])}, interval "
        f"[{_bound(f, ci.low)}, {_bound(f, ci.high)}] (valid whenever the run stopped)"
    )
    return "\n".join(lines)


def _bound(f, value) -> str:
    return f(value) if abs(value) != float("inf") else ("-inf" if value < 0 else "inf")


@click.command()
@results_file
@metric_option
@click.option("--compare", required=True, help="The two methods a,b; the difference is a - b.")
@click.option(
    "--by", default=None,
    help="Column naming the method [default: experiment for a run store, else method].",
)
@click.option("--pair-on", default="seed", show_default=True,
              help="Column(s) matching runs across methods.")
@click.option("--bounds", default=None,
              help="The metric's bounds low,high (0,1 for an accuracy): non-asymptotic sequence.")
@cs_option
@click.option("--margin", type=float, default=None,
              help="Stop as equivalent once the sequence lies inside +-margin.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Simultaneous level over every n.")
@click.option("--batch", type=int, default=None,
              help="The rule looks after every BATCH pairs [default: every pair].")
@click.option("--budget", type=int, default=None,
              help="The planned number of pairs (tunes the normal-mixture sequence).")
@json_option
def sequential(results, metric, compare, by, pair_on, bounds, cs_method, margin, confidence,
               batch, budget, as_json):
    """How an anytime-valid confidence sequence for a paired difference evolved, pair by pair.

    Pairs are taken in the table's row order (a run store's: seed order).
    """
    from vareval.data.sequential import sequence

    a, b = parse_pair(compare, "--compare")
    if by is None:
        by = "experiment" if results.attrs.get("spec") else "method"
    cs = sequence(
        results, metric, split_columns(by), split_columns(pair_on), a, b,
        bounds=parse_bounds(bounds), method=cs_method, margin=margin, confidence=confidence,
        batch=batch, budget=budget,
    )
    title = f"{metric}: {a} - {b}, paired on {pair_on}, {cs.n[-1]} pairs"
    emit(as_json, *with_design(results, cs.to_dict(),
                               render(cs, title, tuple(cs.looks) if batch else ()),
                               by=split_columns(by), metric=metric))  # fmt: skip


COMMANDS = [sequential]
