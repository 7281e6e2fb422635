"""The report's across-tasks rank and ASO sections."""

import re

from vareval.datasets import load
from vareval.report import build_report


def _ids(html):
    return re.findall(r'<section[^>]*id="([^"]+)"', html)


def test_task_column_adds_ranking_and_aso_sections():
    df = load("sklearn_tasks.csv")
    html = build_report(
        df,
        metric="accuracy",
        by="method",
        extras={"tasks": {"task": ["task"], "pair_on": ["seed"]}},
    )
    ids = _ids(html)
    assert "ranking" in ids and "dominance" in ids
    assert 'data-figure="cd-diagram"' in html and 'data-figure="aso-matrix"' in html
    assert "Iman-Davenport" in html and "tasks on which row dominates column" in html


def test_aso_on_one_table_on_request():
    df = load("digits_runs.csv")
    plain = build_report(df, metric="accuracy", by="method")
    assert "dominance" not in _ids(plain) and "ranking" not in _ids(plain)
    html = build_report(df, metric="accuracy", by="method", extras={"aso": True})
    assert "dominance" in _ids(html) and "epsilon_min of row over column" in html
