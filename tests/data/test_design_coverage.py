"""Coverage of the summary's interval on nested designs (slow), and one answer per path.

Each simulated experiment is one "method" of a single table: 6 seeds x 4
configurations nested in the seed x 2 reruns, score = mu + seed + config +
rerun noise (SDs 0.02, 0.01, 0.005). The 95 % interval for the mean must
cover mu within Monte Carlo error of 95 %; the i.i.d. interval over the 48
rows (what summarize gave before it read the design) covers far less.
"""

from __future__ import annotations

import json
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sps

import vareval
from vareval.cli import main


@pytest.mark.slow
def test_the_clustered_interval_covers_and_the_iid_one_does_not(rng, scaled):
    n_sim, seeds, configs, reruns, mu = scaled(2000), 6, 4, 2, 0.8
    shape = (n_sim, seeds, configs, reruns)
    y = (
        mu
        + 0.02 * rng.standard_normal((n_sim, seeds, 1, 1))
        + 0.01 * rng.standard_normal((n_sim, seeds, configs, 1))
        + 0.005 * rng.standard_normal(shape)
    )
    idx = np.indices(shape).reshape(4, -1)
    df = pd.DataFrame({
        "sim": idx[0].astype(str), "seed": idx[1],
        "config": [f"s{s}_c{c}" for s, c in zip(idx[1], idx[2], strict=True)],
        "rerun": idx[3], "accuracy": y.ravel(),
    })  # fmt: skip
    frame = vareval.summarize(df, metric="accuracy", by="sim").to_frame()
    assert (frame["units"] == seeds).all()
    covered = (frame["mean_ci_low"] <= mu) & (mu <= frame["mean_ci_high"])
    flat = y.reshape(n_sim, -1)
    half = sps.t.ppf(0.975, flat.shape[1] - 1) * sps.sem(flat, axis=1)
    iid = np.abs(flat.mean(axis=1) - mu) <= half
    mc = 3 * np.sqrt(0.95 * 0.05 / n_sim)
    print(f"coverage over {n_sim} designs: clustered {covered.mean():.4f}, "
          f"i.i.d. {iid.mean():.4f}")  # fmt: skip
    assert abs(covered.mean() - 0.95) < mc
    assert iid.mean() < 0.8


# --- one design, one answer, whatever path the data took -------------------------------
#
# Random small designs run through `vareval run` (tests/data/_design_trials.py: a
# deterministic trial whose reruns repeat bit for bit, a noisy one, one with a failed
# trial; shared or per-model search spaces; re-drawn splits with declared sizes). For
# each, the store, its export (CSV and Parquet, every trial with its status), the
# `select -o` output (CSV and Parquet) and the Python API give the same estimate, SE,
# interval and p in summarize, paired and plan; the store and its exports give the same
# variance pairwise differences (or the same refusal) and tuning-curve bands.

SIZES = ("test_size = 0.25", "train_size = 0.5\ntest_size = 0.25",
         "val_size = 0.2\ntest_size = 0.2")  # fmt: skip
HERE = Path(__file__).resolve().parent
KEYS = {
    "summarize": ("mean", "se", "mean_low", "mean_high"),
    "paired": ("estimate", "se", "se_corrected", "low", "high", "pvalue", "test_train_ratio"),
    "plan": ("sd_diff", "k_required", "test_train_ratio"),
}


def _cli(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def _design(case: int) -> dict:
    """Design ``case``: the first two fixed to cover every kind, the rest drawn at random."""
    fixed = [
        {"trial": "deterministic", "space": "per-model", "nested": True, "sizes": SIZES[1]},
        {"trial": "flaky", "space": "shared", "nested": False, "sizes": SIZES[2]},
    ]
    g = np.random.default_rng(case)
    drawn = {
        "trial": ["scored", "deterministic", "flaky"][g.integers(3)],
        "space": ["per-model", "shared"][g.integers(2)],
        "nested": bool(g.integers(2)),
        "sizes": SIZES[g.integers(len(SIZES))],
    }
    design = fixed[case] if case < len(fixed) else drawn
    return {**design, "seeds": int(g.integers(3, 6)), "configs": int(g.integers(2, 4)),
            "reruns": int(g.integers(1, 3)), "entropy": 1000 + case}  # fmt: skip


def _store(tmp: Path, d: dict) -> Path:
    spaces = {
        "per-model": """
            [space.model.logreg]
            C = { distribution = "uniform", low = 0, high = 1 }
            [space.model.forest]
            depth = { distribution = "uniform", low = 0, high = 1 }""",
        "shared": """
            [space]
            lr = { distribution = "uniform", low = 0, high = 1 }""",
    }
    toml = tmp / "exp.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_design_trials:{d['trial']}"
        path = "{HERE}"
        seeds = {d['seeds']}
        configs = {d['configs']}
        nested = {str(d['nested']).lower()}
        reruns = {d['reruns']}
        entropy = {d['entropy']}
        [factors]
        model = ["logreg", "forest"]
        {textwrap.dedent(spaces[d['space']])}
        [randomness]
        sources = ["data_split", "init"]
        split = "data_split"
        [params]
        {d['sizes']}
    """))
    store = tmp / "s.db"
    CliRunner().invoke(main, ["run", str(toml), "--store", str(store), "--engine", "serial"])
    return store


def _answers(path, target, test="accuracy", by="model") -> dict:
    """summarize, paired and plan (for the SE ``target``) through the command on one file."""
    base = ("--metric", test, "--by", by)
    pair = (*base, "--pair-on", "seed", "--compare", "forest,logreg")
    summ = json.loads(_cli("summarize", path, *base, "--json"))
    paired = json.loads(_cli("paired", path, *pair, "--json"))["forest - logreg"]
    plan = json.loads(_cli("plan", path, *pair, "--target-se", target, "--json"))
    return {
        "summarize": {m: summ[m] for m in ("logreg", "forest")},
        "paired": paired,
        "plan": plan["forest - logreg"],
    }


def _api(df, target=None, test="accuracy") -> dict:
    """The same three answers from the Python API on a DataFrame."""
    kw = {"metric": test, "by": "model"}
    pair = {**kw, "pair_on": "seed", "a": "forest", "b": "logreg"}
    summ = vareval.summarize(df, **kw)
    paired = vareval.paired(df, **pair, rng=0)
    # a reachable target: a little above the corrected SE at the pilot's size
    target = target or 1.05 * paired["forest - logreg"].se_corrected
    plan = vareval.plan(df, **pair, target_se=target)
    assert "design (run store" in paired._repr_html_()  # the notebook view states it
    return {
        "summarize": {m: summ[m].to_dict() for m in ("logreg", "forest")},
        "paired": paired["forest - logreg"].to_dict(),
        "plan": plan["forest - logreg"].to_dict(),
    }


def _same(got: dict, want: dict, where: str) -> None:
    for job, keys in KEYS.items():
        rows = (got[job].items() if job == "summarize" else [("", got[job])])
        for m, row in rows:
            ref = want[job][m] if job == "summarize" else want[job]
            for key in keys:
                assert row[key] == pytest.approx(ref[key], rel=1e-9, nan_ok=True), (
                    where, job, m, key)


def _same_report(path, paired: dict) -> None:
    from vareval.report.builder import collect

    data, *_ = collect(vareval.read_table(path), metric="accuracy", by="model",
                       pair_on="seed", baseline="logreg")  # fmt: skip
    r = data.facts["paired"]["forest \u2212 logreg"]
    for key in ("estimate", "se_corrected", "low", "high", "pvalue"):
        assert getattr(r, key) == pytest.approx(paired[key], rel=1e-9), (path, key)


def _model_answers(df) -> dict:
    """variance's pairwise difference (or its refusal) and the tuning curves' bands."""
    out = {}
    try:
        a = vareval.variance(df, metric="accuracy", fixed=["model"], random=["seed", "config"])
        out["variance"] = a.pairs_frame().select_dtypes("number").to_numpy()
    except vareval.errors.VarevalError as exc:
        out["variance"] = type(exc).__name__
    curves = vareval.tuning_curve(df, metric="accuracy", by="model", bounds=(0, 1))
    out["tuning-curve"] = curves.to_frame().select_dtypes("number").to_numpy()
    return out


def _same_models(got: dict, want: dict, where: str) -> None:
    for job, ref in want.items():
        if isinstance(ref, str):
            assert got[job] == ref, (where, job)
        else:
            np.testing.assert_allclose(got[job], ref, rtol=1e-9, err_msg=f"{where}: {job}")


def _one_answer_per_path(case: int, tmp: Path) -> None:
    d = _design(case)
    store = _store(tmp, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vareval.errors.VarevalWarning)  # the failed trial
        want = _api(vareval.read_table(store))
        models = _model_answers(vareval.read_table(store))
        target = 1.05 * want["paired"]["se_corrected"]
        assert want["paired"]["test"] == "corrected resampled t", d
        _same(_answers(store, target), want, "the store")
        for name in ("all.csv", "all.parquet"):
            _cli("export", store, "-o", tmp / name)
            _same(_answers(tmp / name, target), want, name)
            _same(_api(vareval.read_table(tmp / name), target), want, f"API on {name}")
            _same_models(_model_answers(vareval.read_table(tmp / name)), models, name)
        for path in (store, tmp / "all.parquet"):  # the report's paired section
            _same_report(path, want["paired"])
        # the selection's output: the command's CSV and Parquet, and the API's table
        sel = ("--validation", "val_accuracy", "--test", "accuracy", "--by", "model")
        chosen = vareval.select(vareval.read_table(store), validation="val_accuracy",
                                test="accuracy", by="model").table  # fmt: skip
        want = _api(chosen)
        target = 1.05 * want["paired"]["se_corrected"]
        assert want["paired"]["test"] == "corrected resampled t", d
        for name in ("chosen.csv", "chosen.parquet"):
            _cli("select", store, *sel, "-o", tmp / name)
            _same(_answers(tmp / name, target), want, name)
    ratio = {SIZES[0]: 1 / 3, SIZES[1]: 0.5, SIZES[2]: 0.2 / 0.6}[d["sizes"]]
    assert want["paired"]["test_train_ratio"] == pytest.approx(ratio)


@pytest.mark.parametrize("case", range(2))
def test_store_export_selection_and_api_give_one_answer(case, tmp_path):
    _one_answer_per_path(case, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(2, 8))
def test_store_export_selection_and_api_give_one_answer_on_more_designs(case, tmp_path):
    _one_answer_per_path(case, tmp_path)
