"""Every figure at print size: no text overlaps other text or leaves the figure.

Each figure is drawn at 3.3 in (one column of a paper) and 7 in (a full page)
with the Agg canvas; the tight bounding boxes of its visible text artists
(titles, axis labels, tick labels, legend entries, annotations) must not
overlap one another or cross the figure's edge. Each figure is also written
as PDF, SVG and PNG. The data are small so the whole module runs in seconds.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from vareval import stats
from vareval.errors import ArgumentError, VarevalWarning
from vareval.plots.figures import figure_for

WIDTHS = (3.3, 7.0)
SLACK = 0.5  # pixels: boxes that only touch do not overlap


@functools.cache
def _predictions():
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 3, 150)
    systems = {
        name: np.where(rng.random(150) < p, gold, rng.integers(0, 3, 150))
        for name, p in (("baseline", 0.7), ("bigger model", 0.8), ("ensemble", 0.75))
    }
    return gold, systems


@functools.cache
def _search():
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        {
            "model": np.repeat(["lstm", "mlp", "cnn"], 40),
            "f1": np.r_[rng.beta(8, 3, 40), rng.beta(7, 3, 40), rng.beta(9, 4, 40)],
        }
    )


@functools.cache
def _design():
    rng = np.random.default_rng(5)
    seeds, configs = np.meshgrid(np.arange(6), np.arange(5), indexing="ij")
    rows = []
    for exp, shift in (("adam", 0.0), ("sgd", -0.01)):
        seed_eff = rng.normal(0, 0.01, 6)
        conf_eff = rng.normal(0, 0.02, 5)
        for s, c in zip(seeds.ravel(), configs.ravel(), strict=True):
            for rerun in range(2):
                y = 0.8 + shift + seed_eff[s] + conf_eff[c] + rng.normal(0, 0.005)
                rows.append((exp, f"s{s}", f"{exp}-c{c}", rerun, y))
    return pd.DataFrame(rows, columns=["experiment", "seed", "config", "rerun", "accuracy"])


def _tasks():
    rng = np.random.default_rng(6)
    base = np.array([0.0, 0.05, 0.1, 0.12])[:, None, None]
    return np.clip(0.6 + base + rng.normal(0, 0.08, (4, 5, 8)), 0, 1)  # methods x tasks x runs


def _cases():
    """(name, result, plot options): every kind of result that has a figure."""
    import vareval

    rng = np.random.default_rng(0)
    a = 0.80 + rng.normal(0, 0.01, 12)
    b = a - 0.004 + rng.normal(0, 0.006, 12)
    gold, systems = _predictions()
    names = list(systems)
    pair = (gold, systems[names[1]], systems[names[0]])
    cdf_a = stats.cdf_band(_search()["f1"][:40], a=0, b=1)
    tuning = vareval.tuning_curve(_search(), metric="f1", by="model", bounds=(0, 1))
    variance = vareval.variance(_design(), metric="accuracy", intervals="profile")
    scores = _tasks()
    methods = ["DQN", "C51 (distributional)", "Rainbow", "IQN"]
    table = pd.DataFrame(
        {"method": np.repeat(["logreg", "mlp", "forest"], 12), "accuracy": np.r_[a, b, a + 0.003]}
    )
    yield "summary", stats.summarize(a), {"label": "logreg", "metric": "accuracy"}
    yield "summary-table", vareval.summarize(table, "accuracy", by="method"), {}
    yield "best-of-k", stats.best_of_k(a, n_resamples=2000, rng=0), {}
    yield "ranking-stability", stats.ranking_stability(a, b, n_resamples=500, rng=0), {}
    yield "paired", stats.paired_difference(a, b, n_resamples=500, rng=0), {"label": "mlp − logreg"}
    yield "plan", stats.plan_replications(0.006, target_se=0.001), {"pairs": 12}
    for alt in ("two-sided", "greater"):
        r = stats.paired_bootstrap(*pair, n_resamples=2000, alternative=alt, rng=0)
        yield f"bootstrap-{alt}", r, {}
    yield "bootstrap-macro-f1", stats.paired_bootstrap(
        *pair, metric="macro-f1", n_resamples=2000, rng=0
    ), {}
    yield "randomization", stats.paired_randomization(*pair, n_resamples=2000, rng=0), {}
    yield "comparison", stats.compare_systems(gold, systems, n_resamples=1000, rng=0), {}
    yield "tuning-curves", tuning, {}
    yield "tuning-band", cdf_a.tuning_curve(np.arange(1, 41)), {"label": "lstm"}
    yield "cdf-band", cdf_a, {}
    yield "tuning-comparison", stats.compare_tuning_curves(
        _search()["f1"][:40], _search()["f1"][40:80], a=0, b=1
    ), {"a": "lstm", "b": "mlp"}
    yield "variance", variance, {}
    yield "variance-intervals", variance.intervals, {}
    yield "mixed-fit", variance.fit, {"metric": "accuracy"}
    yield "intervals", stats.interval_estimates(
        scores, methods=methods, n_resamples=300, rng=0
    ), {"xlabel": "normalised score"}
    yield "profile", stats.performance_profile(
        scores, methods=methods, n_resamples=300, rng=0
    ), {}
    yield "improvement", stats.probability_of_improvement(
        scores[3], scores[0], labels=("IQN", "DQN"), n_resamples=300, rng=0
    ), {}
    with warnings.catch_warnings():  # well-separated methods: no spread in epsilon_min
        warnings.simplefilter("ignore", VarevalWarning)
        aso = stats.multi_aso(
            {m: scores[i].ravel() for i, m in enumerate(methods)}, n_resamples=200, rng=0
        )
    yield "aso", aso, {}
    yield "cd-diagram", stats.rank_methods(scores.mean(axis=2).T, methods), {}
    yield "confusion", stats.confusion_matrix(gold, systems["baseline"]), {}
    yield "coverage", stats.band_coverage(
        stats.ReflectedKDE(_search()["f1"][:40].to_numpy(), 0.05, a=0, b=1), n=20, n_trials=200,
        k=np.arange(1, 11), rng=0,
    ), {}
    yield "sequence", stats.confidence_sequence(a - b, margin=0.02), {"label": "mlp − logreg"}
    yield "signed-rank", stats.bayesian_signed_rank(
        scores[3].mean(axis=1), scores[0].mean(axis=1), rope=0.01, n_resamples=2000, rng=0
    ), {"a": "IQN", "b": "DQN"}


@functools.cache
def cases() -> dict:
    return {name: (result, kw) for name, result, kw in _cases()}


def text_boxes(fig):
    """The tight window extents of every visible, non-empty text artist, with its text."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    hidden = _undrawn_tick_labels(fig)
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in hidden:
            continue
        if any(not p.get_visible() for p in _parents(t)):
            continue
        box = t.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append((t.get_text(), box))
    return out


def _undrawn_tick_labels(fig) -> set[int]:
    """Tick labels matplotlib keeps but does not draw: their tick is outside the view."""
    out = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            tol = 1e-9 * max(1.0, abs(hi - lo))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - tol <= tick.get_loc() <= hi + tol:
                    out.update((id(tick.label1), id(tick.label2)))
    return out


def _parents(artist):
    """The axes and legend holding ``artist`` (their visibility hides it)."""
    axes = artist.axes
    found = [axes] if axes is not None else []
    legend = getattr(artist, "_legend", None)
    return found + ([legend] if legend is not None else [])


def layout_problems(fig) -> list[str]:
    """Pairs of overlapping texts and texts beyond the figure, after drawing it."""
    fig.canvas.draw()
    boxes = text_boxes(fig)
    W, H = fig.bbox.width, fig.bbox.height
    problems = [
        f"{text!r} leaves the figure"
        for text, b in boxes
        if b.x0 < -SLACK or b.y0 < -SLACK or b.x1 > W + SLACK or b.y1 > H + SLACK
    ]
    for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2):
        w = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        h = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        if w > SLACK and h > SLACK:
            problems.append(f"{t1!r} overlaps {t2!r}")
    return problems


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(cases()))
def test_no_text_overlaps_at_print_size(name, width):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    result, kw = cases()[name]
    fig = figure_for(result, width=width, **kw)
    assert isinstance(fig, Figure)
    assert isinstance(fig.canvas, FigureCanvasAgg)
    assert fig.get_figwidth() == pytest.approx(width)
    assert layout_problems(fig) == []


def test_the_overlap_check_finds_overlap():
    from vareval.plots._style import figure

    with figure("bad", width=3.3, height=2) as (fig, ax):
        ax.set_title("a title long enough to reach the other one", loc="left")
        ax.set_title("a right title", loc="right")
        ax.text(1.5, 0.5, "beyond the edge", transform=ax.transAxes)
    problems = layout_problems(fig)
    assert any("overlaps" in p for p in problems)
    assert any("leaves the figure" in p for p in problems)


MAGIC = {"pdf": b"%PDF", "svg": b"<?xml", "png": b"\x89PNG"}


def _exports(tmp_path, names, fmt):
    from vareval.plots._style import save

    for name in names:
        result, kw = cases()[name]
        path = tmp_path / f"{name}.{fmt}"
        save(figure_for(result, width=3.3, **kw), path)
        data = path.read_bytes()
        assert data.startswith(MAGIC[fmt]) and len(data) > 1000, name


@pytest.mark.parametrize("fmt", list(MAGIC))
def test_figures_export_as_pdf_svg_png(tmp_path, fmt):
    _exports(tmp_path, ["tuning-curves", "variance", "bootstrap-greater"], fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(MAGIC))
def test_every_figure_exports(tmp_path, fmt):
    _exports(tmp_path, list(cases()), fmt)


def test_report_figures_have_no_overlap_at_both_widths(tmp_path):
    from vareval.report.builder import collect, export_figures, figures

    gold, systems = _predictions()
    items = pd.DataFrame({"gold": gold, **systems})
    search = _search()
    table = pd.DataFrame(
        {
            "method": np.repeat(["logreg", "a rather long method name", "forest"], 8),
            "seed": np.tile(np.arange(8), 3),
            "accuracy": 0.9 + np.random.default_rng(1).normal(0, 0.01, 24),
        }
    )
    extras = {
        "significance": {"df": items, "gold": "gold", "n_resamples": 1000},
        "tuning": {"df": search, "metric": "f1", "by": ["model"], "bounds": (0, 1)},
        "variance": {"df": _design(), "metric": "accuracy", "fixed": ["experiment"],
                     "random": ["seed", "config"], "intervals": None},
    }  # fmt: skip
    _, sections, _, _ = collect(
        table, metric="accuracy", by="method", pair_on="seed",
        n_resamples=500, best_of_k_resamples=2000,
        extras=extras,
    )  # fmt: skip
    blocks = figures(sections)
    names = [b.name for b in blocks]
    assert {"scores", "paired-differences", "tuning-curves", "variance-components"} <= set(names)
    for block in blocks:
        for width in WIDTHS:
            assert layout_problems(block.draw(width=width)) == [], (block.name, width)
    paths = export_figures(sections, tmp_path / "figs", "svg", width=3.3)
    assert [p.name for p in paths] == [f"{n}.svg" for n in names]
    assert all(p.read_bytes().startswith(MAGIC["svg"]) for p in paths)


def test_a_result_without_a_figure_is_named():
    r = stats.paired_t(np.arange(5.0), np.arange(5.0) + [0.1, 0.3, 0.2, 0.5, 0.1])
    with pytest.raises(ArgumentError, match=f"no figure for {type(r).__name__}"):
        figure_for(r)


def test_bins_sit_on_the_accuracy_lattice():
    from vareval.plots.significance import lattice_bins, lattice_step

    result, _ = cases()["bootstrap-two-sided"]
    step = lattice_step(result.distribution, result.n)
    assert step == pytest.approx(1 / result.n)
    edges = lattice_bins(result.distribution, step)
    # every bin holds the same number of lattice points, centred between edges
    widths = np.diff(edges) / step
    assert np.allclose(widths, np.round(widths[0]))
    dist = result.distribution
    assert np.all(np.abs(dist[None, :] - edges[:, None]).min(axis=0) > step / 4)
    assert lattice_step(cases()["bootstrap-macro-f1"][0].distribution, result.n) is None
    # random swaps move both systems: the null lives on multiples of 2/n, no empty bins
    null, _ = cases()["randomization"]
    assert lattice_step(null.distribution, null.n) == pytest.approx(2 / null.n)
    counts, _ = np.histogram(null.distribution, lattice_bins(null.distribution, 2 / null.n))
    inner = counts[np.argmax(counts > 0) : len(counts) - np.argmax(counts[::-1] > 0)]
    assert (inner > 0).mean() > 0.9


def test_two_delta_line_only_on_one_sided_tests():
    def labels(name):
        result, kw = cases()[name]
        fig = figure_for(result, **kw)
        return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]

    assert any("2δ" in t for t in labels("bootstrap-greater"))
    assert not any("2δ" in t for t in labels("bootstrap-two-sided"))


def test_variance_segments_are_shares_not_sds():
    result, _ = cases()["variance"]
    fig = figure_for(result)
    comp = result.components_frame()
    bars = [p for p in fig.axes[0].patches]
    assert [round(p.get_width(), 6) for p in bars] == [
        round(100 * v / comp["variance"].sum(), 6) for v in comp["variance"]
    ]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert all("SD" in t and "%" in t for t in legend)


def test_tuning_panels_share_axes_one_per_model():
    result, _ = cases()["tuning-curves"]
    fig = figure_for(result, width=3.3)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len(result.methods)
    assert len({ax.get_ylim() for ax in axes}) == 1 and len({ax.get_xlim() for ax in axes}) == 1
    lo, hi = axes[0].get_ylim()
    assert hi - lo < 0.6 * (result.bounds[1] - result.bounds[0])  # zoomed, not 0..1


def test_figures_leave_global_matplotlib_state_alone():
    import matplotlib

    before = dict(matplotlib.rcParams)
    for name in ("summary", "tuning-curves", "variance"):
        result, kw = cases()[name]
        figure_for(result, width=3.3, **kw).canvas.draw()
    assert dict(matplotlib.rcParams) == before
