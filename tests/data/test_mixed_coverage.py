"""Slow tier: end-to-end coverage of the default analyses on simulated experiments.

Designs with known seed, configuration, seed x model, stream-noise and
nondeterminism variances (``_mixed_coverage.py``; 13 designs, 5 of them null),
analysed with the defaults: ``variance``'s pairwise difference (seed x model
term added where seeds are shared), ``paired``'s difference over seeds and
``summarize``'s mean. The 95 % intervals must cover within Monte Carlo error
of 95 % and the tests reject at <= 5 % (within Monte Carlo error) under the
null. The bulk draws scores for whole tables at once; the first table of each
design is analysed by the public API too and must equal the fast path, and one
design is run through ``vareval run`` to show the store gives the same layout,
labels and analysis as the direct path.
"""

import importlib.util
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sst

import vareval
from vareval.cli import main
from vareval.data.variance import design_arrays
from vareval.errors import VarevalWarning
from vareval.stats import fit_mixed, pairwise

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_mixed_coverage", HERE / "_mixed_coverage.py")
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)


def _random(d):
    # one configuration per seed is the seed itself (refused as confounded):
    # only the seed is a grouping factor then
    return ["seed", "config"] if d["config"].nunique() > d["seed"].nunique() else ["seed"]


def _seed_means(design, Y, d):
    """Per replicate and model, the mean of each seed: shape (n_rep, 2, seeds)."""
    seeds = M.DESIGNS[design][0]
    m = pd.factorize(d["model"], sort=True)[0]
    s = d["seed"].to_numpy()
    cell = m * seeds + s
    counts = np.bincount(cell, minlength=2 * seeds)
    sums = np.stack([np.bincount(cell, weights=y, minlength=2 * seeds) for y in Y])
    return (sums / counts).reshape(len(Y), 2, seeds)


def _t_interval(x, conf=0.95):
    """Mean and t interval along the last axis."""
    k = x.shape[-1]
    mean = x.mean(axis=-1)
    se = x.std(axis=-1, ddof=1) / np.sqrt(k)
    h = sst.t.ppf(0.5 + conf / 2, k - 1) * se
    return mean, mean - h, mean + h, 2 * sst.t.sf(np.abs(mean / se), k - 1)


def simulate(design, n_rep, rng, seed_by_experiment=True):
    """Coverage and rejection of the three analyses over ``n_rep`` tables."""
    delta = M.DESIGNS[design][-1]
    Y = M.draw(design, rng, n_rep)
    d0 = M.frame(design, Y[0])
    Y = Y[:, d0.index.to_numpy()]  # the collapsed reruns, if any
    x = design_arrays(d0, metric="y", fixed=["model"], random=_random(d0),
                      seed_by_experiment=seed_by_experiment)  # fmt: skip
    lo, hi, p = np.empty(n_rep), np.empty(n_rep), np.empty(n_rep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        for i, y in enumerate(Y):  # one mixed-model fit per table: no batch form
            f = fit_mixed(y, x.X, x.groups, group_names=x.group_names)
            c = pairwise(f, x.cell_means, labels=x.cell_labels)
            lo[i], hi[i], p[i] = c.ci_low[0], c.ci_high[0], c.pvalue[0]
    sm = _seed_means(design, Y, d0)
    diff = _t_interval(sm[:, 0] - sm[:, 1])
    mean_a = _t_interval(sm[:, 0])
    return {
        "first": (lo[0], hi[0], p[0], diff, mean_a),
        "variance": float(np.mean((lo <= -delta) & (-delta <= hi))),
        "variance_reject": float(np.mean(p < 0.05)),
        "paired": float(np.mean((diff[1] <= -delta) & (-delta <= diff[2]))),
        "paired_reject": float(np.mean(diff[3] < 0.05)),
        "summarize": float(np.mean((mean_a[1] <= M.MEAN_A) & (M.MEAN_A <= mean_a[2]))),
        "d0": d0,
        "n": n_rep,
    }


def _api_equals_fast_path(r):
    """The first table through the public API gives the fast path's numbers."""
    d = r["d0"]
    lo, hi, p, diff, mean_a = r["first"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        a = vareval.variance(d, metric="y", fixed=["model"], random=_random(d))
    row = a.pairs_frame().iloc[0]
    assert row["contrast"] == "a - b"
    assert (row["ci_low"], row["ci_high"], row["p"]) == pytest.approx((lo, hi, p), rel=1e-8)
    pr = vareval.paired(d, metric="y", by="model", pair_on="seed").to_frame().iloc[0]
    assert (pr["t_ci_low"], pr["t_ci_high"], pr["pvalue"]) == pytest.approx(
        (diff[1][0], diff[2][0], diff[3][0]), rel=1e-8)
    s = vareval.summarize(d, metric="y", by="model").to_frame().loc["a"]
    assert (s["mean_ci_low"], s["mean_ci_high"]) == pytest.approx(
        (mean_a[1][0], mean_a[2][0]), rel=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("design", list(M.DESIGNS))
def test_default_intervals_cover_and_tests_keep_their_level(design, rng, scaled):
    n = scaled(400, minimum=100)
    r = simulate(design, n, rng)
    _api_equals_fast_path(r)
    floor = 0.95 - 3 * np.sqrt(0.95 * 0.05 / n)
    for key in ("variance", "paired", "summarize"):
        assert r[key] >= floor, (key, r[key])
    if M.DESIGNS[design][-1] == 0:
        ceiling = 0.05 + 3 * np.sqrt(0.05 * 0.95 / n)
        assert r["variance_reject"] <= ceiling and r["paired_reject"] <= ceiling, r


@pytest.mark.slow
def test_the_store_gives_the_direct_paths_table(tmp_path):
    design = "same streams, nondeterminism"
    seeds, configs, reruns, mode, *sd = M.DESIGNS[design]
    names = ("sd_seed", "sd_sm", "sd_config", "sd_noise", "sd_nondet", "delta")
    params = "\n".join(f"{k} = {v}" for k, v in zip(names, sd, strict=True))
    toml = tmp_path / "exp.toml"
    toml.write_text(textwrap.dedent(f"""
        [experiment]
        trial = "_mixed_coverage:known"
        path = "{HERE}"
        seeds = {seeds}
        configs = {configs}
        nested = true
        reruns = {reruns}
        rerun_mode = "{mode}"
        entropy = 32
        [factors]
        model = ["a", "b"]
        [space]
        u = {{ distribution = "uniform", low = 0, high = 1 }}
        [randomness]
        sources = ["init", "batch_order"]
        [params]
    """) + params + "\n")
    store = tmp_path / "s.db"
    res = CliRunner().invoke(main, ["run", str(toml), "--store", str(store), "--engine", "serial"])
    assert res.exit_code == 0, res.output
    t = vareval.read_store_table(store)
    direct = M.frame(design, np.zeros(2 * seeds * configs * reruns))
    key = ["model", "seed", "config", "rerun"]
    got = t[key].astype(str).sort_values(key).to_numpy()
    want = direct[key].astype(str).sort_values(key).to_numpy()
    np.testing.assert_array_equal(got, want)  # the same runs under the same labels
    # what the streams promise: a seed's draw is shared by the models, reruns
    # repeat their streams and differ by the nondeterminism alone
    y = t.set_index(key)["y"]
    spread = y.groupby(level=["model", "seed", "config"]).std()
    assert 0 < spread.mean() < 4 * sd[4]
    # the store and its table give the direct path's analysis
    out = CliRunner().invoke(main, ["variance", str(store), "--metric", "y", "--fixed", "model",
                                    "--json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    import json

    cli = json.loads(out.stdout[out.stdout.index("{"):])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarevalWarning)
        api = vareval.variance(t, metric="y", fixed=["model"], random=["seed", "config"])
    assert cli["seed_term"] == api.seed_term == "seed:model"
    assert cli["pairwise"][0]["se"] == pytest.approx(api.pairs_frame()["se"].iloc[0], rel=1e-9)


def table(n_rep=200, seed=32):
    """The coverage table of docs/mixed.md, printed a row at a time.

    Beside the defaults, in brackets, the model without the seed x model term
    on the same tables.
    """
    rng = np.random.default_rng(seed)
    print("| design | variance pairwise CI (without seed x model) | its rejections at 5 % "
          "(without) | paired CI | paired rejections | summarize CI |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for design in M.DESIGNS:
        state = rng.bit_generator.state
        new = simulate(design, n_rep, rng)
        rng.bit_generator.state = state  # the same tables for both models
        old = simulate(design, n_rep, rng, seed_by_experiment=False)
        null = M.DESIGNS[design][-1] == 0
        rej = f"{new['variance_reject']:.3f} ({old['variance_reject']:.3f})" if null else "-"
        paired_rej = f"{new['paired_reject']:.3f}" if null else "-"
        print(f"| {design}{' (null)' if null else ''} | {new['variance']:.3f} "
              f"({old['variance']:.3f}) | {rej} | {new['paired']:.3f} | {paired_rej} | "
              f"{new['summarize']:.3f} |", flush=True)  # fmt: skip


if __name__ == "__main__":  # PYTHONPATH=src python tests/data/test_mixed_coverage.py
    table()
