from vareval import datasets
from vareval.report import build_report


def test_across_tasks_section_with_its_three_figures():
    df = datasets.load("sklearn_tasks.csv")
    html = build_report(
        df, metric="accuracy", by="method", pair_on=["task", "seed"],
        n_resamples=200, best_of_k_resamples=200,
        extras={"tasks": {"task": ["task"]}},
    )  # fmt: skip
    assert 'id="aggregate"' in html
    for figure in ("aggregate-intervals", "aggregate-profile", "aggregate-improvement"):
        assert f'data-figure="{figure}"' in html
    assert "IQM 95% CI" in html and "whole curve at once" in html


def test_no_section_without_a_task_column():
    df = datasets.load("sklearn_tasks.csv")
    html = build_report(
        df, metric="accuracy", by="method", n_resamples=200, best_of_k_resamples=200
    )
    assert 'id="aggregate"' not in html
