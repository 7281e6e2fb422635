import os
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vareval.errors import ArgumentError, VarevalError
from vareval.report import build_report, write_report
from vareval.report.builder import collect

XSS = "<script>alert(1)</script>"


def note_table():
    """The three-seed worked example: A and B over three seeds."""
    return pd.DataFrame(
        {
            "method": ["A"] * 3 + ["B"] * 3,
            "seed": [0, 1, 2] * 2,
            "acc": [0.831, 0.847, 0.822, 0.818, 0.835, 0.809],
        }
    )


def runs_table(methods=("logreg", "mlp", "forest"), n=12, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i, m in enumerate(methods):
        for s in range(n):
            rows.append(
                {"method": m, "seed": s, "acc": 0.9 + 0.01 * i + 0.01 * rng.normal()}
            )
    return pd.DataFrame(rows)


def section_ids(html):
    return re.findall(r'<section id="([^"]+)"', html)


# -- escaping ---------------------------------------------------------------


def test_user_strings_are_escaped():
    df = note_table()
    df["method"] = df["method"].replace({"A": XSS, "B": "B & <b>bold</b>"})
    df = df.rename(columns={"acc": "acc<img src=x onerror=alert(2)>"})
    html = build_report(
        df,
        metric="acc<img src=x onerror=alert(2)>",
        by="method",
        pair_on="seed",
        title="<i>title</i>",
        source="<u>file</u>.csv",
    )
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html
    assert "<b>bold</b>" not in html and "B &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert "<i>title</i>" not in html and "&lt;i&gt;title&lt;/i&gt;" in html
    # the page has no script at all, and no event handler attribute anywhere
    assert "<script" not in html.lower()
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", html)


def test_svg_text_is_escaped():
    from vareval.plots._style import figure, to_svg

    with figure("t") as (fig, ax):
        ax.set_xlabel(XSS)
        ax.set_title('"><svg onload=alert(1)>')
        svg = to_svg(fig, "t")
    assert svg.startswith("<svg")
    assert "<script" not in svg
    assert "&lt;script&gt;" in svg
    assert "<svg onload" not in svg


def test_svg_ids_are_unique_per_figure():
    from vareval.plots._style import figure, to_svg

    out = []
    for name in ("one", "two"):
        with figure(name) as (fig, ax):
            ax.plot([0, 1], [0, 1])
            out.append(to_svg(fig, name))
    ids = [set(re.findall(r'id="([^"]+)"', s)) for s in out]
    assert ids[0] and ids[1] and not ids[0] & ids[1]


# -- self-containment ---------------------------------------------------------


def test_page_is_self_contained():
    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    # every href/src points inside the page or is an embedded image
    for ref in re.findall(r'(?:href|src)="([^"]*)"', html):
        assert ref.startswith("#") or ref.startswith("data:image/png;base64,"), ref
    assert not re.search(r"url\((?!#)", html)
    assert html.count("<svg") >= 3


# -- sections present or absent ------------------------------------------------


def test_sections_with_pairing():
    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    assert section_ids(html) == [
        "design",
        "summaries",
        "paired",
        "best-of-k",
        "checklist",
    ]


def test_no_paired_section_without_pairing():
    html = build_report(note_table(), metric="acc", by="method")
    ids = section_ids(html)
    assert "paired" not in ids
    assert ids[:2] == ["design", "summaries"] and ids[-1] == "checklist"
    assert "No pairing given" in html


def test_missing_analysis_omits_its_section(monkeypatch):
    import vareval.stats

    for name in ("best_of_k", "paired_difference"):  # gone, and not importable on first use
        monkeypatch.delattr(vareval.stats, name, raising=False)
        monkeypatch.delitem(vareval.stats._EXPORTS, name)
    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    assert section_ids(html) == ["design", "summaries", "checklist"]
    assert "could not be computed here" in html  # the checklist says why


def test_single_method_has_no_comparison():
    df = note_table().query("method == 'A'")
    with pytest.raises(ArgumentError, match="one method"):
        build_report(df, metric="acc", by="method", pair_on="seed")
    html = build_report(df, metric="acc", by="method")
    assert "paired" not in section_ids(html)
    assert "best-of-k" in section_ids(html)
    assert "One method only" in html


def test_failing_optional_section_becomes_a_note(monkeypatch):
    from vareval.report.sections import tuning

    def broken(data):
        raise RuntimeError("boom")

    monkeypatch.setattr(tuning, "build", broken)
    html = build_report(note_table(), metric="acc", by="method")
    assert 'id="notes"' in html and "Section &#39;tuning&#39; was left out" in html
    assert "RuntimeError: boom" in html


def test_store_randomness_is_listed():
    html = build_report(
        note_table(),
        metric="acc",
        by="method",
        randomness=[
            {"name": "data_split", "varied": False, "note": "fixed"},
            {"name": "init", "varied": True, "note": "per seed"},
        ],
    )
    assert "source of randomness" in html
    assert (
        "held fixed" in html and "Sources varied: init; held fixed: data_split." in html
    )


# -- numbers and the checklist ---------------------------------------------------


def checklist_items(html):
    block = html.split('<ul class="checklist">')[1].split("</ul>")[0]
    return re.findall(
        r'<li class="(\w+)"><span class="topic">([^<]+)</span>(.*?)</li>', block
    )


def test_checklist_is_filled_with_the_numbers():
    html = build_report(
        note_table(),
        metric="acc",
        by="method",
        pair_on="seed",
        test_set_held_out=True,
        repeated="training",
        search_effort="20 random-search trials per method",
        baseline="B",
    )
    items = {
        topic.rstrip("."): (status, text)
        for status, topic, text in checklist_items(html)
    }
    assert list(items) == [
        "Estimand and summary",
        "Repetitions and what was repeated",
        "Spread",
        "Paired differences",
        "Search effort, apart from final runs",
        "Best run labelled as selected",
        "Final test set held out",
    ]
    assert all(status == "ok" for status, _ in items.values())
    assert "A: mean 0.8333" in items["Estimand and summary"][1]
    assert "A: 3; B: 3" in items["Repetitions and what was repeated"][1]
    assert "training only" in items["Repetitions and what was repeated"][1]
    sd_a = np.std([0.831, 0.847, 0.822], ddof=1)
    assert f"A: {sd_a:.4g}" in items["Spread"][1]
    diff = np.mean([0.831 - 0.818, 0.847 - 0.835, 0.822 - 0.809])
    assert f"A \u2212 B = {diff:.4g}" in items["Paired differences"][1]
    assert "20 random-search trials" in items["Search effort, apart from final runs"][1]
    assert "A: 0.8470 (best of 3 runs)" in items["Best run labelled as selected"][1]
    assert "stayed outside" in items["Final test set held out"][1]


def test_checklist_flags_what_is_unknown():
    html = build_report(note_table(), metric="acc", by="method")
    items = {
        topic.rstrip("."): (status, text)
        for status, topic, text in checklist_items(html)
    }
    assert items["Final test set held out"][0] == "warn"
    assert "Unknown" in items["Final test set held out"][1]
    assert items["Repetitions and what was repeated"][0] == "warn"
    assert items["Search effort, apart from final runs"][0] == "warn"
    assert items["Paired differences"][0] == "warn"
    html = build_report(
        note_table(), metric="acc", by="method", test_set_held_out=False
    )
    items = {
        topic.rstrip("."): (status, text)
        for status, topic, text in checklist_items(html)
    }
    assert "used in modelling decisions" in items["Final test set held out"][1]


def test_best_run_is_labelled_selected_everywhere():
    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    assert "0.8470 (selected)" in html  # summary table
    assert "0.01200 (selected)" in html  # best-vs-best gap in the paired table
    assert "best run (selected)" in html  # the plot's legend


def test_lower_is_better_selects_the_minimum():
    df = note_table().rename(columns={"acc": "loss"})
    html = build_report(df, metric="loss", by="method", higher_is_better=False)
    assert "0.8220 (selected)" in html and "lower is better" in html


def test_every_section_states_its_estimand():
    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    sections = html.split('<section id="')[1:-1]
    for s in sections:
        assert '<p class="estimand"><strong>Estimand.</strong>' in s
        assert '<p class="read"><strong>How to read it.</strong>' in s


def test_many_runs_are_rasterised_but_all_drawn():
    df = runs_table(n=2000)
    data, sections, _, _ = collect(
        df, metric="acc", by="method", best_of_k_resamples=2000, n_resamples=500
    )
    from vareval.plots._style import to_svg

    summary = next(s for s in sections if s.id == "summaries")
    svg = to_svg(next(b.draw(width=7.0) for b in summary.blocks if b.kind == "figure"))
    assert "data:image/png;base64," in svg
    assert len(svg) < 1_000_000


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"metric": "nope", "by": "method"}, "metric column 'nope' not found"),
        ({"metric": "acc", "by": "nope"}, "column 'nope' not found"),
        ({"metric": "acc", "by": "method", "repeated": "always"}, "`repeated`"),
        ({"metric": "acc", "by": "method", "baseline": "C"}, "`baseline` 'C'"),
        ({"metric": "acc", "by": "method", "confidence": 1.5}, "`confidence`"),
        (
            {"metric": "acc", "by": "method", "test_set_held_out": "yes"},
            "test_set_held_out",
        ),
        ({"metric": "acc", "by": []}, "`by`"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(VarevalError, match=match):
        build_report(note_table(), **kwargs)


def test_unmatched_pairs_are_refused():
    df = note_table().iloc[:-1]
    with pytest.raises(VarevalError, match="unmatched pairs"):
        build_report(df, metric="acc", by="method", pair_on="seed")


def test_write_report_checks_the_suffix(tmp_path):
    with pytest.raises(VarevalError, match="must end in .html"):
        write_report(tmp_path / "r.pdf", note_table(), metric="acc", by="method")
    path = write_report(
        tmp_path / "sub" / "r.html", note_table(), metric="acc", by="method"
    )
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_same_seed_same_page_and_global_seed_has_no_effect():
    df = runs_table(n=15)
    np.random.seed(1)  # noqa: NPY002 - the global seed must have no effect
    a = build_report(df, metric="acc", by="method", pair_on="seed", seed=3)
    np.random.seed(2)  # noqa: NPY002
    b = build_report(df, metric="acc", by="method", pair_on="seed", seed=3)
    assert a == b
    c = build_report(df, metric="acc", by="method", pair_on="seed", seed=4)
    assert c != a  # the seed does drive the simulations


# -- a real browser ------------------------------------------------------------------


def test_report_in_headless_chromium(tmp_path, cdp):
    if cdp.find_chromium() is None:
        pytest.skip(
            "chromium is not installed: apt-get install -y --no-install-recommends "
            "chromium (Debian) to run the browser test"
        )
    # 1,500 runs per method: the scatters are rasterised (a PNG inside the SVG)
    df = runs_table(methods=("logreg", "mlp", XSS), n=1500)
    path = write_report(
        tmp_path / "report.html",
        df,
        metric="acc",
        by="method",
        pair_on="seed",
        title="Browser test",
        n_resamples=1000,
        best_of_k_resamples=2000,
        repeated="training",
    )
    shot = tmp_path / "report.png"
    try:
        result = cdp.inspect_page(path, screenshot=shot)
    except cdp.BrowserUnavailable as exc:
        pytest.skip(f"chromium is installed but cannot run here: {exc}")
    assert result["console_errors"] == []
    assert "data:image/png;base64," in path.read_text(encoding="utf-8")
    # the page itself and its own embedded images, nothing fetched
    fetched = [u for u in result["requests"] if not u.startswith("data:")]
    assert fetched == [result["url"]]
    assert result["dialogs"] == []  # the method name did not run as a script
    assert XSS in result["text"]  # ... it is shown as text
    assert result["title"] == "Browser test"
    assert (
        shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    )
    keep = os.environ.get("VAREVAL_REPORT_SCREENSHOT")  # e.g. to look at it after CI
    if keep:
        shutil.copy(shot, keep)


# -- sections for the other analyses (present once those modules are merged) ------


def predictions_table():
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 3, size=300)
    noisy = lambda p: np.where(rng.random(300) < p, gold, rng.integers(0, 3, 300))  # noqa: E731
    return pd.DataFrame({"gold": gold, "good": noisy(0.9), XSS: noisy(0.7)})


def search_table():
    rng = np.random.default_rng(2)
    return pd.DataFrame(
        {
            "method": ["lstm"] * 40 + ["mlp"] * 40,
            "acc": np.concatenate([rng.beta(8, 3, 40), rng.beta(5, 5, 40)]),
        }
    )


def design_table():
    rng = np.random.default_rng(3)
    rows = []
    seed_eff = rng.normal(0, 0.01, 6)
    for e, shift in (("a", 0.0), ("b", 0.02)):
        for s in range(6):
            for c in range(4):
                conf_eff = rng.normal(0, 0.02)
                for _ in range(2):
                    rows.append(
                        {
                            "experiment": e,
                            "seed": s,
                            "config": f"s{s}_c{c}",
                            "acc": 0.7
                            + shift
                            + seed_eff[s]
                            + conf_eff
                            + rng.normal(0, 0.005),
                        }
                    )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "name, module, extras",
    [
        (
            "significance",
            "vareval.data.significance",
            {"significance": {"df": None, "gold": "gold"}},
        ),
        ("tuning", "vareval.data.tuning", {"tuning": {"df": None, "bounds": (0, 1)}}),
        ("variance", "vareval.data.variance", {"variance": {"random": ["seed"]}}),
    ],
)
def test_asked_for_but_not_installed_is_an_error(monkeypatch, name, module, extras):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # import now fails
    with pytest.raises(VarevalError, match=f"the {name} section cannot be built.*not installed"):
        build_report(note_table(), metric="acc", by="method", extras=extras)


def test_significance_section():
    pytest.importorskip("vareval.data.significance")
    preds = predictions_table()
    html = build_report(
        note_table(),
        metric="acc",
        by="method",
        extras={"significance": {"df": preds, "gold": "gold", "source": "p.csv"}},
    )
    assert "significance" in section_ids(html)
    assert XSS not in html and "&lt;script&gt;" in html
    acc = {c: float(np.mean(preds[c] == preds["gold"])) for c in ("good", XSS)}
    delta = acc[XSS] - acc["good"]
    assert f"{delta:.4g}".replace("-", "\u2212") in html


def test_tuning_section_and_search_effort():
    pytest.importorskip("vareval.data.tuning")
    html = build_report(
        note_table(),
        metric="acc",
        by="method",
        extras={"tuning": {"df": search_table(), "bounds": (0, 1), "source": "s.csv"}},
    )
    assert "tuning" in section_ids(html)
    assert "verdict by number of search iterations k" in html
    items = {t.rstrip("."): (s_, x) for s_, t, x in checklist_items(html)}
    status, text = items["Search effort, apart from final runs"]
    assert status == "ok" and "lstm: 40 iterations" in text


def test_variance_section():
    pytest.importorskip("vareval.data.variance")
    df = design_table()
    html = build_report(
        df,
        metric="acc",
        by="experiment",
        extras={"variance": {"random": ["seed", "config"]}},
    )
    assert "variance" in section_ids(html)
    for text in ("Residual", "LRT statistic", "kenward-roger", "a - b"):
        assert text in html


def test_markup_is_well_nested():
    from html.parser import HTMLParser

    void = {"meta", "br", "img", "hr", "input", "link", "col", "wbr"}

    class Checker(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack, self.errors = [], []

        def handle_starttag(self, tag, attrs):
            if tag not in void:
                self.stack.append(tag)

        def handle_endtag(self, tag):
            if not self.stack or self.stack[-1] != tag:
                self.errors.append((tag, list(self.stack[-3:])))
            else:
                self.stack.pop()

    html = build_report(note_table(), metric="acc", by="method", pair_on="seed")
    checker = Checker()
    checker.feed(html)
    assert checker.errors == [] and checker.stack == []
    # each table's caption follows it outside its scrolling box, so it is never clipped
    assert html.count('<figure class="table"><div class="table-wrap"><table>') == html.count(
        "<table>"
    )
    for table in html.split("<table>")[1:]:
        assert table.split("</table></div>", 1)[1].lstrip().startswith("<figcaption>")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=4))
def test_any_text_in_a_table_comes_back_as_the_same_text(cells):
    """Whatever a user names things, the browser's text equals the name."""
    from html.parser import HTMLParser

    from vareval.report.builder import render
    from vareval.report.sections._base import ReportData, Section, Table

    data = ReportData(df=note_table(), metric="acc", by=["method"], groups={"A": [1.0]})
    table = Table(["c"] * len(cells), [cells])
    section = Section("s", "title", "estimand", "read", [table])
    html = render(data, [section], [], [])

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.inside, self.found, self.tags = False, [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            if tag == "td":
                self.inside = True
                self.found.append("")

        def handle_endtag(self, tag):
            if tag == "td":
                self.inside = False

        def handle_data(self, text):
            if self.inside:
                self.found[-1] += text

    parser = Cells()
    parser.feed(html)
    assert "script" not in parser.tags
    # HTML normalises CR and CRLF to LF when parsing; compare on that footing
    expected = [c.replace("\r\n", "\n").replace("\r", "\n") for c in cells]
    assert [
        f.replace("\r\n", "\n").replace("\r", "\n") for f in parser.found
    ] == expected


def test_svg_with_a_link_is_refused():
    from vareval.plots._style import figure, to_svg

    with figure("link") as (fig, ax):
        (line,) = ax.plot([0, 1], [0, 1])
        line.set_url("https://example.com/")
        with pytest.raises(RuntimeError, match="active content"):
            to_svg(fig, "link")


def test_building_leaves_the_users_matplotlib_alone():
    import matplotlib
    import matplotlib.pyplot as plt

    backend = matplotlib.get_backend()
    before = plt.get_fignums()
    build_report(note_table(), metric="acc", by="method", pair_on="seed")
    assert matplotlib.get_backend() == backend
    assert plt.get_fignums() == before


def test_variance_section_withholds_tests_of_a_fit_that_did_not_converge(
    monkeypatch,
):
    pytest.importorskip("vareval.data.variance")
    import vareval.stats.variance.fit as mixed
    from vareval.data.variance import WITHHELD

    def no_polish(cp, reml, x, f, g, counter, steps=6):
        return x, f, g, np.inf, None  # as if the Newton step were unusable

    monkeypatch.setattr(mixed, "_newton_polish", no_polish)
    html = build_report(
        design_table(),
        metric="acc",
        by="experiment",
        extras={"variance": {"random": ["seed", "config"]}},
    )
    assert "variance" in section_ids(html)
    assert "the fit did NOT converge" in html
    assert f"H3 and pairwise differences: {WITHHELD}" in html
    assert html.count(WITHHELD) == 1
    for text in ("kenward-roger", "a - b", "den df"):
        assert text not in html


def test_failed_runs_show_their_error_text_and_long_names_wrap():
    df = runs_table(methods=("logreg", "m" * 5000), n=6)
    df["status"] = "done"
    df["error"] = ""
    df.loc[df.index[:2], ["status", "acc"]] = ["failed", np.nan]
    df.loc[df.index[:2], "error"] = ["CUDA out of memory <at step 3>", "x" * 3000]
    html = build_report(df, metric="acc", by="method")
    assert "CUDA out of memory &lt;at step 3&gt;" in html  # shown, and escaped
    assert "x" * 2000 + "\u2026 (1,000 more characters)" in html
    assert "The failed runs and the error each raised" in html
    # text cells wrap anywhere: a 5,000-character name cannot push the numbers away
    assert "td:not(.num), th:not(.num) { overflow-wrap: anywhere;" in html
