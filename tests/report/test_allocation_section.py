"""The allocation section: the plan and the naive designs for the leading pair."""

import re

import pytest

from vareval import datasets
from vareval.report import build_report


def test_allocation_section_on_decovac_sim():
    pytest.importorskip("vareval.data.allocation")
    df = datasets.load("decovac_sim.csv")
    html = build_report(
        df,
        metric="accuracy",
        by="experiment",
        extras={"variance": {"random": ["seed", "config"], "fixed": ["experiment"]}},
    )
    assert "allocation" in re.findall(r'<section id="([^"]+)"', html)
    # the two leading experiments (tadam) and the pilot's size: 150 trials per experiment
    assert "tadam_adam \u2212 tadam_sgd" in html
    assert "at most 150 trials per experiment" in html
    for design in ("optimal", "all seeds", "all configs", "all reruns"):
        assert f">{design}<" in html


def test_no_allocation_section_without_design_roles():
    df = datasets.load("decovac_sim.csv").drop(columns=["config"]).rename(
        columns={"experiment": "method"})
    html = build_report(df, metric="accuracy", by="method")
    assert "allocation" not in re.findall(r'<section id="([^"]+)"', html)
