"""Presentation: the HTML report, its sections and plots.

``build_report(df, metric=..., by=...)`` returns one self-contained HTML page;
``write_report(path, df, ...)`` writes it. Jinja2 and matplotlib are imported
only when a report is built, so importing vareval stays fast.
"""

from vareval.report.builder import build_report, write_report

__all__ = ["build_report", "write_report"]
