"""The evals figures: each model's score with its interval, and the matrix of differences."""

import functools

import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.text import Text

import vareval
from vareval import datasets
from vareval.cli import main
from vareval.cli.datasets import bundled
from vareval.errors import ArgumentError

ROLES = {"metric": "correct", "cluster": "image", "sample": "epoch"}


@functools.cache
def _digits():
    return datasets.load("digits_eval.csv")


@functools.cache
def _comparison():
    return vareval.compare_evals(_digits(), **ROLES, n_resamples=500, rng=0)


def _texts(fig):
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def test_the_scores_figure_sorts_the_models_and_names_the_unit():
    scores = vareval.eval_scores(_digits(), **ROLES)
    fig = scores.plot(width=3.3)
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    frame = scores.to_frame().sort_values("score", ascending=False)
    assert rows == list(frame["model"])  # best at the top: ticks run top to bottom
    texts = " ".join(_texts(fig))
    assert "95% Wilson interval over 200" in texts and "clusters" in texts
    assert "naive CLT interval" in texts
    assert ax.get_xlabel() == "correct (mean over questions)"
    # the faint line spans each model's naive interval, under its row
    (naive,) = [line for line in ax.get_lines() if line.get_label().startswith("naive")]
    x = naive.get_xdata().reshape(-1, 3)[:, :2]
    np.testing.assert_allclose(x, frame[["naive_low", "naive_high"]].to_numpy())


def test_the_matrix_shows_row_minus_column_and_stars_the_adjusted_p():
    comp = _comparison()
    fig = comp.plot(width=7, metric="correct")
    ax = fig.axes[0]
    d, p = comp.matrix("estimate"), comp.matrix("pvalue_adjusted")
    k = len(comp.models)
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
             for t in ax.texts}  # fmt: skip
    assert len(cells) == k * (k - 1)  # every cell but the diagonal
    for (i, j), text in cells.items():
        assert float(text.rstrip("*").replace("\u2212", "-")) == pytest.approx(d[i, j], abs=0.005)
        assert text.endswith("*") == (p[i, j] < comp.alpha)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(comp.models)
    bar = fig.axes[1]
    assert bar.get_ylabel() == "difference in correct"
    assert "row\nahead (red)" in " ".join(t.get_text() for t in bar.get_yticklabels())
    assert fig.get_supxlabel() == "*: Holm p < 0.05"


def test_kind_picks_the_forest_or_the_matrix():
    comp = _comparison()
    forest = comp.plot(kind="differences", width=3.3)
    assert len(forest.axes[0].get_yticklabels()) == len(comp.a)
    assert not forest.axes[0].texts
    with pytest.raises(ArgumentError, match="`kind` must be"):
        comp.plot(kind="heatmap")


def test_evals_score_and_compare_write_their_plot(tmp_path):
    path = str(bundled()["digits_eval.csv"])
    flags = ["--metric", "correct", "--cluster", "image"]
    for command, name in (("score", "s.png"), ("compare", "c.svg")):
        extra = ["--resamples", "200", "--seed", "0"] if command == "compare" else []
        r = CliRunner().invoke(
            main, ["evals", command, path, *flags, *extra, "--plot", str(tmp_path / name)]
        )
        assert r.exit_code == 0, r.output
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    assert b"row \xe2\x88\x92 column" in (tmp_path / "c.svg").read_bytes()
    r = CliRunner().invoke(main, ["evals", "score", path, *flags, "--plot",
                                  str(tmp_path / "s.nope")])  # fmt: skip
    assert r.exit_code == 2 and r.output.startswith("error: --plot")
    assert not (tmp_path / "s.nope").exists()


def test_the_report_draws_scores_and_from_three_models_the_matrix():
    from vareval.report.builder import collect

    spec = {"df": _digits(), **ROLES}
    _, sections, _, _ = collect(
        datasets.load("digits_runs.csv"), metric="accuracy", by="method", seed=0,
        n_resamples=300, best_of_k_resamples=200, extras={"evals": spec},
    )  # fmt: skip
    [section] = [s for s in sections if s.id == "evals"]
    names = [b.name for b in section.blocks if b.kind == "figure"]
    assert names == ["eval-scores", "eval-differences", "eval-matrix"]
