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
from vareval.plots import _style
from vareval.plots.figures import figure_for

WIDTHS = (3.3, 7.0)
SLACK = 0.5  # pixels: boxes that only touch do not overlap
EDGE = 1.0  # pixels: constrained layout settles to within a pixel of the edge


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


def _answers():
    """Four models' 0/1 answers to 128 questions in 32 passages, 3 epochs each."""
    rng = np.random.default_rng(3)
    models = ["gpt-small", "a much longer model name/v2", "llama", "mock"]
    q = np.arange(128)
    rows = [
        (m, f"q{i}", f"p{i // 4}", e, int(rng.random() < 0.5 + 0.1 * k))
        for k, m in enumerate(models) for i in q for e in range(3)
    ]
    return pd.DataFrame(rows, columns=["model", "question", "passage", "epoch", "correct"])


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
    yield "summary-table", vareval.summarize(table, metric="accuracy", by="method"), {}
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
    items = pd.DataFrame({"item": np.arange(gold.size), "gold": gold, **systems})
    yield "metrics", vareval.metrics(items, gold="gold", item="item"), {}
    yield "classification", stats.classification_metrics(gold, systems["baseline"]), {}
    yield "contrasts", variance.pairs, {"metric": "accuracy"}
    binary = np.repeat([0, 1], 40)
    scored = {n: binary + rng.normal(0, s, 80) for n, s in (("gbm", 0.8), ("logreg", 1.2))}
    yield "auc", stats.compare_aucs(binary, scored, pos_label=1), {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pb = vareval.variance(_design(), metric="accuracy", bootstrap_lrt=True, n_resamples=40,
                              rng=0)  # fmt: skip
    yield "bootstrap-lrt", pb.pb_lrt[0], {}
    answers = _answers()
    yield "eval-scores", vareval.eval_scores(
        answers, metric="correct", cluster="passage", sample="epoch"
    ), {}
    yield "eval-matrix", vareval.compare_evals(
        answers, metric="correct", cluster="passage", sample="epoch", n_resamples=500, rng=0
    ), {"metric": "correct"}
    yield "eval-differences", vareval.compare_evals(
        answers, metric="correct", cluster="passage", sample="epoch", n_resamples=500, rng=0
    ), {"kind": "differences"}
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
        if b.x0 < -EDGE or b.y0 < -EDGE or b.x1 > W + EDGE or b.y1 > H + EDGE
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
        "evals": {"df": _answers(), "metric": "correct", "cluster": "passage",
                  "sample": "epoch"},
    }  # fmt: skip
    _, sections, _, _ = collect(
        table, metric="accuracy", by="method", pair_on="seed",
        n_resamples=500, best_of_k_resamples=2000,
        extras=extras,
    )  # fmt: skip
    blocks = figures(sections)
    names = [b.name for b in blocks]
    assert {"scores", "paired-differences", "tuning-curves", "variance-components",
            "eval-scores", "eval-differences", "eval-matrix"} <= set(names)  # fmt: skip
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
        return [t.get_text() for t in fig.legends[0].get_texts()]

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


# --- the user's labels: long, short, numeric-looking and hostile, 1 to 12 groups ------
#
# Each figure that shows user labels (methods, comparisons, classes, variance
# components) is drawn at 3.3 and 7 in with 1, 2, 6 and 12 groups and checked
# after drawing: no text leaves the figure or overlaps another; no two groups
# share a look (up to the palette's five colours no two share a colour; beyond,
# no two share colour and marker, hatch or line style); text is shown
# literally (a label "$\\frac{a}{b}$" is never typeset); a label short enough
# to fit is shown whole, both sides of "A − B" included. The default tier draws
# a representative subset, the slow tier the whole matrix.

COUNTS = (1, 2, 6, 12)


def _long(i):
    return f"protonet_adam_lr0.{i:03d}_warmup"


def _hostile(i):
    kinds = (
        "$\\frac{a}{b}$",
        "x" * 5000,
        "<b>bold</b> & 'q'",
        "tab\tand\nnewline",
        "%s {0} \\n",
        "   ",
    )
    return f"{kinds[i % len(kinds)]}#{i}"


LABELS = {
    "short": lambda i: chr(65 + i),
    "long": _long,
    "numeric": lambda i: f"{1000 + 7 * i}",
    "hostile": _hostile,
}


def labels_of(kind: str, m: int) -> list[str]:
    return [LABELS[kind](i) for i in range(m)]


def _rng(labels):
    return np.random.default_rng(len(labels))


# --- one builder per figure that shows user labels: (labels, width) -> Figure ---------


def _scores(labels, width):
    from vareval.plots.summary import strip_plot

    rng = _rng(labels)
    runs = {s: stats.summarize(0.8 + rng.normal(0, 0.01, 8)) for s in labels}
    return strip_plot(runs, labels[0], width=width)


def _pairs(labels):
    return [f"{a} \u2212 {b}" for a, b in zip(labels, labels[1:] + labels[:1], strict=True)]


def _paired(labels, width):
    from vareval.plots.paired import differences_plot

    rng = _rng(labels)
    a = rng.normal(0.8, 0.01, 10)
    results = {
        p: stats.paired_difference(
            a, a - 0.003 * i + rng.normal(0, 0.005, 10), n_resamples=200, rng=0
        )
        for i, p in enumerate(_pairs(labels))
    }
    return differences_plot(results, "accuracy", width=width)


def _planning(labels, width):
    from vareval.plots.paired import planning_plot

    plans = {
        p: stats.plan_replications(0.01 * (1 + 0.02 * i + 0.3 * (i % 3)), target_se=0.001)
        for i, p in enumerate(_pairs(labels))
    }
    return planning_plot(plans, dict.fromkeys(plans, 10), "accuracy", width=width)


def _best_of_k(labels, width):
    from vareval.plots.best_of_k import best_of_k_plot

    rng = _rng(labels)
    results = {
        s: stats.best_of_k(rng.normal(0.8, 0.01 * (1 + i), 12), n_resamples=300, rng=0)
        for i, s in enumerate(labels)
    }
    return best_of_k_plot(results, width=width)


def _forest(labels, width):
    from vareval.plots.comparisons import forest_plot

    m = len(labels)
    est = np.linspace(-0.02, 0.03, m)
    return forest_plot(_pairs(labels), est, est - 0.01, est + 0.01, "\u03b4 in accuracy",
                       width=width)  # fmt: skip


def _tuning(labels, width):
    import vareval

    rng = _rng(labels)
    frame = pd.DataFrame(
        {
            "model": np.repeat(labels, 20),
            "f1": np.concatenate([rng.beta(8 + i % 4, 3, 20) for i in range(len(labels))]),
        }
    )
    return vareval.tuning_curve(frame, metric="f1", by="model", bounds=(0, 1)).plot(width=width)


def _task_scores(labels):
    rng = _rng(labels)
    base = np.linspace(0, 0.1, len(labels))[:, None, None]
    return np.clip(0.6 + base + rng.normal(0, 0.08, (len(labels), 5, 4)), 0, 1)


def _intervals(labels, width):
    from vareval.plots.aggregate import interval_plot

    r = stats.interval_estimates(_task_scores(labels), methods=labels, n_resamples=100, rng=0)
    return interval_plot(r, width=width)


def _profile(labels, width):
    from vareval.plots.aggregate import profile_plot

    r = stats.performance_profile(_task_scores(labels), methods=labels, n_resamples=100, rng=0)
    return profile_plot(r, width=width)


def _improvement(labels, width):
    from vareval.plots.aggregate import improvement_plot

    s = _task_scores(labels + ["base"])
    results = [
        stats.probability_of_improvement(s[i], s[-1], labels=(x, "base"), n_resamples=100, rng=0)
        for i, x in enumerate(labels)
    ]
    return improvement_plot(results, width=width)


def _aso(labels, width):
    from vareval.plots.ranking import aso_matrix

    m = len(labels)
    values = np.random.default_rng(m).uniform(0, 1, (m, m))
    return aso_matrix(labels, values, values < 0.2, title="epsilon_min", width=width)


def _cd(labels, width):
    if len(labels) < 2:
        pytest.skip("a ranking needs two methods")
    rng = _rng(labels)  # tasks x methods, no ties (ties send Wilcoxon to permutations)
    scores = np.linspace(0.6, 0.7, len(labels)) + rng.normal(0, 0.05, (10, len(labels)))
    return stats.rank_methods(scores, labels).plot(width=width)


def _confusion(labels, width):
    rng = _rng(labels)
    gold = rng.choice(labels, 60)
    pred = np.where(rng.random(60) < 0.7, gold, rng.choice(labels, 60))
    return stats.confusion_matrix(gold, pred).plot(width=width)


def _variance(labels, width):
    from vareval.plots.variance import variance_plot

    m = len(labels)
    v = np.linspace(1, 3, m + 1) * 1e-4
    return variance_plot([*labels, "residual"], v, np.sqrt(v), "accuracy", width=width)


def _signed_rank(labels, width):
    rng = _rng(labels)
    a = rng.normal(0.8, 0.02, 10)
    r = stats.bayesian_signed_rank(a, a - 0.01, rope=0.005, n_resamples=500, rng=0)
    return r.plot(a=labels[0], b=labels[-1], width=width)


def _sequence(labels, width):
    rng = _rng(labels)
    cs = stats.confidence_sequence(rng.normal(0.001, 0.01, 30), margin=0.0005)
    return cs.plot(label=_pairs(labels)[0], width=width)


def _tuning_comparison(labels, width):
    rng = _rng(labels)
    r = stats.compare_tuning_curves(rng.beta(8, 3, 30), rng.beta(7, 3, 30), a=0, b=1)
    return r.plot(a=labels[0], b=labels[-1], width=width)


def _eval_scores(labels, width):
    from vareval.plots.evals import scores_plot

    est = np.linspace(0.4, 0.9, len(labels))
    return scores_plot(labels, est, est - 0.05, est + 0.04, naive=(est - 0.02, est + 0.02),
                       interval="95% Wilson interval over 200 clusters", metric="correct",
                       width=width)  # fmt: skip


def _eval_matrix(labels, width):
    from vareval.plots.evals import differences_matrix

    scores = np.linspace(0.9, 0.4, len(labels))
    d = scores[:, None] - scores[None, :]
    p = np.where(np.abs(d) > 0.1, 0.001, 0.4)
    np.fill_diagonal(d, np.nan)
    return differences_matrix(labels, d, p, alpha=0.05, correction="holm", metric="correct",
                              width=width)  # fmt: skip


# builder -> whether each group is drawn as a tagged series (checked for distinct looks)
FIGURES = {
    "scores": (_scores, True),
    "paired": (_paired, True),
    "planning": (_planning, False),  # alike curves are merged into one series
    "best-of-k": (_best_of_k, True),
    "forest": (_forest, False),
    "tuning": (_tuning, True),
    "intervals": (_intervals, True),
    "profile": (_profile, True),
    "improvement": (_improvement, False),
    "aso": (_aso, False),
    "cd": (_cd, False),
    "confusion": (_confusion, False),
    "variance": (_variance, True),
    "signed-rank": (_signed_rank, False),
    "sequence": (_sequence, False),
    "tuning-comparison": (_tuning_comparison, True),
    "eval-scores": (_eval_scores, False),
    "eval-matrix": (_eval_matrix, False),
}


def _looks(fig) -> dict:
    """Each tagged series' set of (colour, marker/hatch/line style) it is drawn with."""
    from matplotlib.colors import to_hex
    from matplotlib.lines import Line2D

    out: dict = {}
    for artist in fig.findobj(lambda a: hasattr(a, "_vareval_series")):
        if isinstance(artist, Line2D):
            style = str(artist.get_linestyle())
            look = (to_hex(artist.get_color()), artist.get_marker() or "", style)
        else:
            look = (to_hex(artist.get_facecolor()), artist.get_hatch() or "", "")
        out.setdefault(artist._vareval_series, set()).add(look)
    return out


def look_problems(fig) -> list[str]:
    """Two series that share a look (a colour while the palette has colours to spare)."""
    looks = _looks(fig)
    problems = []
    spare = len(looks) <= len(_style.CYCLE)
    for i, j in itertools.combinations(sorted(looks), 2):
        colours_i = {c for c, *_ in looks[i]}
        colours_j = {c for c, *_ in looks[j]}
        if spare and colours_i & colours_j:
            problems.append(f"series {i} and {j} share a colour with {len(looks)} series")
        elif looks[i] & looks[j]:
            problems.append(f"series {i} and {j} look alike: {looks[i] & looks[j]}")
    return problems


def text_problems(fig, labels) -> list[str]:
    """Text typeset as mathtext, or a comparison whose second side cannot be read."""
    from matplotlib.text import Text

    texts = [t for t in fig.findobj(Text) if t.get_text()]
    problems = [f"{t.get_text()[:30]!r} is parsed as mathtext" for t in texts
                if "$" in t.get_text() and t.get_parse_math()]  # fmt: skip
    drawn = "".join("".join(t.get_text().split()) for t in texts)  # wrapping aside
    for label in labels:
        if len(label) <= 40 and label.strip():  # short enough to be shown whole
            if "".join(label.split()) not in drawn:
                problems.append(f"{label!r} is not shown whole")
    return problems


def check(name: str, kind: str, m: int, width: float) -> list[str]:
    build, tagged = FIGURES[name]
    labels = labels_of(kind, m)
    fig = build(labels, width)
    problems = layout_problems(fig) + text_problems(fig, _shown(name, labels))
    if tagged:
        problems += look_problems(fig)
        n = len(_looks(fig))
        expected = {"tuning-comparison": 2, "variance": m + 1}.get(name, m)  # + residual
        if n != expected:
            problems.append(f"{n} tagged series for {expected} groups")
    return problems


def _shown(name: str, labels: list[str]) -> list[str]:
    """The labels a figure must show whole (its ticks, titles or key)."""
    if name in {"signed-rank", "tuning-comparison", "cd", "aso", "confusion", "eval-matrix"}:
        return []  # one-line labels: start and end, ellipsis in the middle
    if name == "planning" or (name == "best-of-k" and len(labels) == 1):
        return []  # alike curves share one key entry; one method needs no key
    return labels[:2] if name == "sequence" else labels  # each side of "a − b" is shown


# Representative: every figure at one column with six hostile labels, and at a page
# with twelve long ones (the hardest of each kind); the slow tier runs the matrix.
FAST = [(n, "hostile", 6, 3.3) for n in FIGURES] + [(n, "long", 12, 7.0) for n in FIGURES]


@pytest.mark.parametrize("name,kind,m,width", FAST)
def test_figure_with_user_labels(name, kind, m, width):
    assert check(name, kind, m, width) == []


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("m", COUNTS)
@pytest.mark.parametrize("kind", list(LABELS))
@pytest.mark.parametrize("name", list(FIGURES))
def test_every_figure_every_label_kind_and_count(name, kind, m, width):
    assert check(name, kind, m, width) == []


def test_the_look_check_finds_two_methods_in_one_colour():
    from vareval.plots._style import figure, series

    with figure("bad", width=3.3) as (fig, ax):
        for i in range(3):
            series(ax.plot([0, 1], [i, i], color=_style.colour(i % 2))[0], i)
    assert any("share a colour" in p for p in look_problems(fig))


def test_the_text_check_finds_mathtext_and_a_cut_label():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.set_title("$\\frac{a}{b}$")
    ax.set_xlabel("protonet_adam \u2212 tad\u2026")
    problems = text_problems(fig, ["protonet_adam \u2212 tadam_sgd"])
    assert any("mathtext" in p for p in problems)
    assert any("not shown whole" in p for p in problems)


def test_a_label_stays_literal_and_whole_when_wrapped():
    from vareval.plots._style import short_label

    assert short_label("protonet_adam \u2212 tadam_sgd", 16) == "protonet_adam \u2212\ntadam_sgd"
    assert short_label("$\\frac{a}{b}$", 16) == "$\\frac{a}{b}$"
    cut = short_label("x" * 5000 + "#7", 16)
    assert cut.count("\n") == 1 and cut.endswith("#7") and "\u2026" in cut


def test_a_discrete_null_is_drawn_as_stems_not_a_histogram():
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    gold = np.zeros(50, int)
    b = gold.copy()
    b[:2] = 1  # two discordant items: the exact null takes three values
    r = stats.paired_randomization(gold, gold, b, n_resamples=2000, rng=0)
    ax = figure_for(r, width=3.3).axes[0]
    assert not [p for p in ax.patches if isinstance(p, Rectangle)]  # no histogram bars
    (stems,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(stems.get_segments()) == np.unique(r.distribution).size == 3
