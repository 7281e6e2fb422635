"""Tuning curves: the empirical distribution of search outcomes, simultaneous bands, coverage."""


def __getattr__(name: str):
    # vareval.stats.tuning was one module (now .curves): its names still resolve, with a warning.
    import importlib
    import warnings

    # not `from vareval.stats.tuning import curves`: before .curves is loaded, that looks the
    # name up here first, and so would recurse
    curves = importlib.import_module("vareval.stats.tuning.curves")

    if name.startswith("__") or not hasattr(curves, name):
        raise AttributeError(f"module 'vareval.stats.tuning' has no attribute {name!r}")
    warnings.warn(
        f"vareval.stats.tuning.{name} moved to vareval.stats.tuning.curves.{name}; "
        "the old path goes in the next release.",
        DeprecationWarning,
        stacklevel=2,
    )
    value = globals()[name] = getattr(curves, name)  # warn once
    return value
