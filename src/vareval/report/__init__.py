"""Presentation: plots (matplotlib, imported lazily) and the HTML report.

``build_report(df, metric=..., by=...)`` returns one self-contained HTML page;
``write_report(path, df, ...)`` writes it. The heavy imports (jinja2,
matplotlib) happen inside, so importing vareval stays fast.
"""


def build_report(df, **kwargs) -> str:  # noqa: D103 - documented in builder
    from vareval.report.builder import build_report as _build

    return _build(df, **kwargs)


def write_report(path, df, **kwargs):  # noqa: D103 - documented in builder
    from vareval.report.builder import write_report as _write

    return _write(path, df, **kwargs)


build_report.__doc__ = (
    "Build the HTML report of a results table; see vareval.report.builder."
)
write_report.__doc__ = "Write the HTML report to ``path``; see vareval.report.builder."

__all__ = ["build_report", "write_report"]
