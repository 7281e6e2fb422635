"""Argument checks shared by the statistics layer.

Each returns the normalised value or raises :class:`ArgumentError` with a
message that names the argument, what was wrong and what is accepted.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings

import numpy as np

from vareval.errors import ArgumentError


def as_scores(x, name: str, *, min_n: int = 1) -> np.ndarray:
    """Return ``x`` as a 1-D float array of finite numbers with at least ``min_n``.

    Booleans are refused, as the runner refuses a boolean metric: a score is a
    number, and ``True`` is not silently 1.
    """
    if np.asarray(x).dtype.kind == "b":
        raise ArgumentError(
            f"`{name}` holds booleans; a score must be a number: pass 1/0 "
            "(e.g. ``x.astype(int)``) if that is what it means."
        )
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"`{name}` must be numbers; got non-numeric values.") from None
    if arr.ndim != 1:
        raise ArgumentError(f"`{name}` must be one-dimensional; got {arr.ndim} dimensions.")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        shown = ", ".join(str(i) for i in bad[:5]) + (" ..." if bad.size > 5 else "")
        raise ArgumentError(
            f"`{name}` has {bad.size} NaN or infinite value(s) at position(s) {shown}; "
            "remove or fix them explicitly."
        )
    if arr.size < min_n:
        raise ArgumentError(f"`{name}` needs at least {min_n} value(s); got {arr.size}.")
    return arr


def mean_sd(x: np.ndarray) -> tuple[float, float]:
    """Mean and SD (ddof=1) of finite ``x``, computed on ``x / max|x|`` so sums cannot overflow.

    Scores near the largest float (1e308) would otherwise give an infinite mean.
    """
    scale = float(np.max(np.abs(x)))
    if not 0 < scale < np.inf:
        return float(np.mean(x)), float(np.std(x, ddof=1))
    y = x / scale
    return float(np.mean(y)) * scale, float(np.std(y, ddof=1)) * scale


def constant_differences(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a - b`` is the same for every pair, up to the rounding of the subtraction.

    ``0.5 - 0.49`` and ``0.6 - 0.59`` differ in the last bits; a t statistic
    built on that noise would be astronomically large, so it counts as equal.
    """
    d = a - b
    noise = 8 * np.finfo(float).eps * max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return float(np.ptp(d)) <= noise


def as_confidence(confidence, name: str = "confidence") -> float:
    """Return a confidence level strictly between 0 and 1."""
    if not isinstance(confidence, numbers.Real) or not 0 < float(confidence) < 1:
        raise ArgumentError(
            f"`{name}` must be a number strictly between 0 and 1; got {confidence!r}."
        )
    return float(confidence)


def as_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int that is at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ArgumentError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def as_int_array(values, name: str, *, minimum: int = 1) -> np.ndarray:
    """Return a 1-D array of integers that are each at least ``minimum``."""
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentError(f"`{name}` must be a non-empty list of integers; got {values!r}.")
    if (arr < minimum).any():
        raise ArgumentError(f"`{name}` values must be >= {minimum}; got {arr[arr < minimum][0]}.")
    return arr.astype(np.int64)


def as_alternative(alternative: str) -> str:
    """Return the alternative hypothesis name, one of two-sided, greater, less."""
    if alternative not in ("two-sided", "greater", "less"):
        raise ArgumentError(
            f"`alternative` must be 'two-sided', 'greater' or 'less'; got {alternative!r}."
        )
    return alternative


def as_rng(rng) -> np.random.Generator:
    """Return a Generator from ``None``, an int seed, a SeedSequence or a Generator (SPEC 7)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(rng, numbers.Integral) and rng < 0:
            raise ArgumentError(f"`rng` seed must be a non-negative integer; got {rng}.")
        return np.random.default_rng(rng)
    raise ArgumentError(
        f"`rng` must be None, a non-negative int or a numpy Generator; got {type(rng).__name__}."
    )


def _label_kind(arr: np.ndarray, name: str, original) -> str:
    """'text' or 'number' for a label array; refuse missing labels and a mix of both."""
    if arr.dtype.kind in "US":
        if not isinstance(original, np.ndarray) and any(
            not isinstance(v, str) for v in np.asarray(original, dtype=object).ravel()
        ):
            kinds = {"text", "number"}
        else:
            return "text"
    elif arr.dtype.kind in "biuf":
        missing = np.flatnonzero(np.isnan(arr)) if arr.dtype.kind == "f" else np.array([])
        if missing.size:
            raise ArgumentError(
                f"`{name}` has missing (NaN) labels at position(s) "
                f"{', '.join(map(str, missing[:5]))}; every item needs a label."
            )
        return "number"
    else:
        cells = arr.ravel()
        missing = np.flatnonzero([v is None or (isinstance(v, float) and v != v) for v in cells])
        if missing.size:
            raise ArgumentError(
                f"`{name}` has missing (None or NaN) labels at position(s) "
                f"{', '.join(map(str, missing[:5]))}; every item needs a label."
            )
        kinds = {"text" if isinstance(v, str) else "number" for v in cells}
    if len(kinds) > 1:
        raise ArgumentError(
            f"`{name}` mixes text and number labels; as scikit-learn, vareval refuses a mix "
            "(is 1 the class '1'?): convert every label to text (or every one to a number)."
        )
    return kinds.pop() if kinds else "number"


def as_labels(**arrays) -> dict:
    """Return each label array as a 1-D numpy array; refuse NaN/None and mixed kinds.

    Labels are compared as given: all text or all numbers (within and across
    the arrays), the rule of scikit-learn's ``unique_labels``. ``None`` values
    in the keyword arguments are passed through.
    """
    out, kinds = {}, {}
    for name, x in arrays.items():
        if x is None:
            out[name] = None
            continue
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ArgumentError(f"`{name}` must be one-dimensional; got {arr.ndim} dimensions.")
        if arr.size:
            kinds[name] = _label_kind(arr, name, x)
        out[name] = arr
    if len(set(kinds.values())) > 1:
        text = [n for n, k in kinds.items() if k == "text"]
        numbers = [n for n, k in kinds.items() if k == "number"]
        raise ArgumentError(
            f"labels mix kinds: {', '.join(f'`{n}`' for n in text)} text but "
            f"{', '.join(f'`{n}`' for n in numbers)} numbers; as scikit-learn, vareval refuses "
            "a mix (is 1 the class '1'?): convert all labels to one kind."
        )
    return out


MAX_DRAWS = 10**8  # resamples or simulations per request: 800 MB of float64 statistics


def check_size(value, name: str, *, limit: int = MAX_DRAWS, bytes_each: int = 8) -> int:
    """Refuse, up front, a number of resamples or simulations that cannot fit.

    Every resample (or simulated comparison) keeps at least ``bytes_each``
    bytes and costs at least about 10 ns, so ``value`` above ``limit``, or
    one whose results would fill more than half of this machine's memory, is
    refused with the memory and the least time it would need, instead of
    running out of memory or for days.
    """
    if not isinstance(value, numbers.Integral):
        return value
    memory = _memory_bytes()
    if value > limit or value * bytes_each > memory / 2:
        fits = min(limit, max(1, int(memory / 2 // bytes_each)))
        raise ArgumentError(
            f"{name} {value:,} is too large: it would keep "
            f"{human_bytes(value * bytes_each)} of results in memory and take at least "
            f"{human_seconds(value * 1e-8)}; at most {fits:,} is accepted here."
        )
    return value


def check_memory(nbytes: float, what: str, hint: str = "") -> None:
    """Refuse, before allocating, an array of ``nbytes`` above half of this machine's memory.

    ``what`` says what would be held (``"the confusion matrix of 10 classes"``);
    the message gives the figure, so a user sees the cause instead of a
    ``MemoryError`` or a machine that swaps.
    """
    memory = _memory_bytes()
    if nbytes > memory / 2:
        raise ArgumentError(
            f"{what} would need {human_bytes(nbytes)} of memory, more than half of this "
            f"machine's {human_bytes(memory)}" + (f"; {hint}" if hint else "") + "."
        )


def _memory_bytes() -> float:
    """The physical memory of the machine (16 GB where the system does not say)."""
    import os

    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16e9


def human_bytes(n: float) -> str:
    """``3.2 GB``-style size."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    raise AssertionError  # unreachable


def human_seconds(s: float) -> str:
    """``40 s``, ``12 min``, ``3.5 h`` or ``2.1 days``."""
    if s < 120:
        return f"{s:.2g} s"
    if s < 7200:
        return f"{s / 60:.2g} min"
    if s < 2 * 86400:
        return f"{s / 3600:.2g} h"
    return f"{s / 86400:.3g} days"


def _not(value):
    # a non-bool passes through unchanged so the new keyword's check refuses it
    return not value if isinstance(value, bool | np.bool_) else value


# ``minimize=True`` is ``higher_is_better=False``.
MINIMIZE = ("higher_is_better", _not)


def renamed_keywords(**renames):
    """Keep deprecated keyword spellings working for one release.

    ``renamed_keywords(n_sim="n_resamples", minimize=MINIMIZE)``: each old
    keyword is passed on under its new name (through the transform when the
    value is ``(new, transform)``) with a :class:`DeprecationWarning` that
    names the new one. Giving both spellings is an :class:`ArgumentError`.
    The wrapped function's signature shows only the new names.
    """
    table = {
        old: (spec, None) if isinstance(spec, str) else spec for old, spec in renames.items()
    }

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old in table.keys() & kwargs.keys():
                new, transform = table[old]
                if new in kwargs:
                    raise ArgumentError(
                        f"{func.__name__}() got both `{old}` and `{new}`; `{old}` is the "
                        f"old spelling of `{new}`: pass only `{new}`."
                    )
                hint = f" ({old}=True is {new}=False)" if transform is _not else ""
                warnings.warn(
                    f"{func.__name__}({old}=...) is deprecated and will be removed in the "
                    f"next release; use {new}= instead{hint}.",
                    DeprecationWarning,
                    stacklevel=2,
                )
                value = kwargs.pop(old)
                kwargs[new] = value if transform is None else transform(value)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def keyword_only(*names):
    """Keep the old positional form of keyword-only arguments working for one release.

    ``keyword_only("metric", "by")`` on ``f(df, *, metric, by)``: a call
    ``f(df, "acc", "method")`` passes the extra positional values on as
    ``metric=`` and ``by=``, with a :class:`DeprecationWarning` naming the
    keywords. Giving one both ways is an :class:`ArgumentError`.
    """

    def decorate(func):
        params = inspect.signature(func).parameters.values()
        n_pos = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            extra = args[n_pos:]
            if not extra:
                return func(*args, **kwargs)
            if len(extra) > len(names):
                raise ArgumentError(
                    f"{func.__name__}() takes {n_pos} positional argument(s), then "
                    f"keywords; got {len(args)} positional."
                )
            given = names[: len(extra)]
            for name in set(given) & kwargs.keys():
                raise ArgumentError(f"{func.__name__}() got `{name}` by position and by keyword.")
            warnings.warn(
                f"{func.__name__}() with {', '.join(given)} by position is deprecated and "
                "will be removed in the next release; pass "
                f"{', '.join(f'{n}=' for n in given)} by keyword.",
                DeprecationWarning,
                stacklevel=2,
            )
            return func(*args[:n_pos], **dict(zip(given, extra, strict=True)), **kwargs)

        return wrapper

    return decorate


def as_bool(value, name: str) -> bool:
    """Return ``value`` as a bool, refusing anything but True/False."""
    if not isinstance(value, bool | np.bool_):
        raise ArgumentError(f"`{name}` must be True or False; got {value!r}.")
    return bool(value)
