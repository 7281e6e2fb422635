"""The experiment's whole life: grow a store, per-level spaces, provenance, curves."""

import json
import sqlite3
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vareval.data.store_table import SCHEMA_VERSION
from vareval.errors import ExperimentError
from vareval.experiment import Distribution, Store, replay, run
from vareval.experiment.spec import loads_spec
from vareval.experiment.streams import configurations

HERE = str(Path(__file__).resolve().parent)

_ROW = "factors, seed, config_index, rerun, config_label, config, seeds, status, metrics"


def _rows(path, where="1"):
    con = sqlite3.connect(path)
    try:
        return con.execute(f"SELECT id, {_ROW} FROM trials WHERE {where} ORDER BY id").fetchall()
    finally:
        con.close()


def _by_key(path):
    return {(r[1], r[2], r[3], r[4]): r[5:] for r in _rows(path)}


def test_growing_seeds_keeps_existing_trials_and_equals_a_fresh_store(tmp_path, make_spec):
    grown, fresh = tmp_path / "grown.db", tmp_path / "fresh.db"
    run(make_spec(seeds=2), grown, engine="serial", progress=False)
    before = _rows(grown)
    report = run(make_spec(seeds=2), grown, seeds=5, engine="serial", progress=False)
    assert report.added == report.trials - len(before) == 24
    assert report.ran == 24 and report.skipped == 16
    after = _rows(grown)
    assert after[: len(before)] == before  # byte-identical, same ids
    assert all(r[2] >= 2 for r in after[len(before):])  # appended, never interleaved
    run(make_spec(seeds=5), fresh, engine="serial", progress=False)
    assert _by_key(grown) == _by_key(fresh)  # configurations, streams and metrics
    with Store(grown) as st:
        assert st.spec().seeds == 5


def test_configurations_are_prefix_stable(make_spec):
    three = configurations(make_spec(configs=3, seeds=2))
    five = configurations(make_spec(configs=5, seeds=4))
    for seed in (0, 1):
        assert five[seed][:3] == three[seed]
    shared = configurations(make_spec(configs=2, nested=False))
    assert configurations(make_spec(configs=4, nested=False))[0][:2] == shared[0]


def test_growing_configs_and_reruns_and_a_factor_level(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    run(make_spec(), path, engine="serial", progress=False)
    before = _rows(path)
    run(make_spec(factors={"model": ["a", "b", "c"]}), path, configs=3, reruns=3,
        engine="serial", progress=False)
    after = _rows(path)
    assert after[: len(before)] == before
    assert len(after) == 3 * 3 * 3 * 3
    # a smaller declaration resumes the store as it is
    report = run(make_spec(seeds=1), path, engine="serial", progress=False)
    assert report.trials == 81 and report.ran == 0 and report.added == 0


@pytest.mark.parametrize("nested", [True, False])
def test_growing_inserts_only_new_trials_exactly_as_the_whole_grid_would(
    tmp_path, make_spec, monkeypatch, nested
):
    """Growth (seeds, configs, reruns, levels in random order) builds only the new rows;
    the store equals one where every prepare re-inserted the whole grid (the old path)."""
    rng = np.random.default_rng(3)
    steps = [dict(seeds=1, configs=1, reruns=1, factors={"model": ["a"], "opt": ["x"]})]
    for _ in range(6):
        step = dict(steps[-1])
        grow = rng.choice(["seeds", "configs", "reruns", "model", "opt"])
        if grow in ("model", "opt"):
            levels = {**step["factors"]}
            levels[grow] = [*levels[grow], f"{grow[0]}{len(levels[grow])}"]
            step["factors"] = levels
        else:
            step[grow] += int(rng.integers(1, 3))
        steps.append(step)
    new, old = tmp_path / "new.db", tmp_path / "old.db"
    for step in steps:
        spec = make_spec(nested=nested, **step)
        with Store(new, create=True) as st:
            st.prepare(spec)
        with monkeypatch.context() as m, Store(old, create=True) as st:
            m.setattr(Store, "_complete", lambda self, stored: None)
            st.prepare(spec)
        assert _rows(new) == _rows(old)
        assert len(_rows(new)) == spec.n_trials


def test_a_store_missing_trials_gets_the_whole_grid_again(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(make_spec())
    full = _rows(path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM trials WHERE id = 3")
    con.commit()
    con.close()
    with Store(path) as st:
        st.prepare(make_spec(seeds=4))
    assert {r[1:] for r in full} <= {r[1:] for r in _rows(path)}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"space": {"lr": Distribution("uniform", low=0.0, high=1.0)}}, "space"),
        ({"sources": ("init",), "fixed": ()}, "sources"),
        ({"entropy": 99}, "entropy"),
        ({"rerun_mode": "independent"}, "rerun_mode"),
        ({"params": {"epochs": 3}}, "params"),
        ({"factors": {"arch": ["a", "b"]}}, "factors"),
    ],
)
def test_a_change_to_existing_trials_is_refused_naming_it(tmp_path, make_spec, change, named):
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(make_spec())
        before = _rows(path)
        with pytest.raises(ExperimentError, match=rf"different experiment \({named} differs\)"):
            st.prepare(make_spec(seeds=4, **change))
    assert _rows(path) == before


def _make_v1(path, make_spec, configs=2):
    """A store as the released version wrote it: schema 1, configuration scheme 1."""
    with Store(path, create=True) as st:
        st.prepare(make_spec(configs=configs))
    con = sqlite3.connect(path)
    for table in ("runs", "curves", "artifacts"):
        con.execute(f"DROP TABLE {table}")
    con.execute("ALTER TABLE trials DROP COLUMN run_id")
    con.execute("DELETE FROM meta WHERE key = 'config_scheme'")
    old = configurations(make_spec(configs=configs), scheme=1)
    for (tid, seed, cidx) in con.execute("SELECT id, seed, config_index FROM trials").fetchall():
        con.execute("UPDATE trials SET config = ? WHERE id = ?",
                    (json.dumps(old[seed][cidx]), tid))
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()


def test_a_released_version_store_is_migrated_and_grows_seeds_not_configs(tmp_path, make_spec):
    path = tmp_path / "v1.db"
    _make_v1(path, make_spec)
    with Store(path, readonly=True) as st:  # readers need no migration
        assert st.provenance() is None and st.curves().empty
    before = _rows(path)
    run(make_spec(), path, seeds=4, engine="serial", progress=False)
    after = _rows(path)
    assert [r[:8] for r in after[: len(before)]] == [r[:8] for r in before]
    with Store(path) as st:
        assert st.con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert st.config_scheme() == 1
    # new seeds use the store's own (old) configuration scheme
    old = configurations(make_spec(seeds=4), scheme=1)
    new_rows = [r for r in after if r[2] == 3]
    assert all(json.loads(r[6]) == old[3][r[3]] for r in new_rows)
    with pytest.raises(ExperimentError, match="adding configurations would redraw them"):
        run(make_spec(), path, configs=3, engine="serial", progress=False)


LEVELS_TOML = textwrap.dedent(f"""
    [experiment]
    trial = "_trials:components"
    path = {HERE!r}
    seeds = 8
    configs = 6
    reruns = 3
    rerun_mode = "independent"
    entropy = 5

    [factors]
    model = ["forest", "svc"]

    [space]
    shared = {{ distribution = "uniform", low = 0, high = 1 }}

    [space.model.forest]
    n_trees = {{ distribution = "integer", low = 10, high = 500 }}
    depth = {{ distribution = "integer", low = 2, high = 12 }}

    [space.model.svc]
    kernel = {{ distribution = "choice", values = ["rbf", "linear"] }}
    C = {{ distribution = "log-uniform", low = 0.01, high = 100 }}
    gamma = {{ distribution = "log-uniform", low = 1e-4, high = 1, when = {{ kernel = "rbf" }} }}

    [randomness]
    sources = ["noise"]
""")


def test_per_level_spaces_and_conditional_parameters(tmp_path):
    spec = loads_spec(LEVELS_TOML)
    assert set(spec.space_for({"model": "svc"})) == {"shared", "kernel", "C", "gamma"}
    path = tmp_path / "levels.db"
    run(spec, path, engine="serial", progress=False)
    with Store(path) as st:
        df = st.frame()
    forest, svc = df[df.model == "forest"], df[df.model == "svc"]
    assert forest[["kernel", "C", "gamma"]].isna().all().all()
    assert svc[["n_trees", "depth"]].isna().all().all()
    assert forest[["n_trees", "depth", "shared"]].notna().all().all()
    rbf = svc.kernel == "rbf"
    assert 0 < rbf.sum() < len(svc)
    assert svc.loc[rbf, "gamma"].notna().all() and svc.loc[~rbf, "gamma"].isna().all()
    # the shared parameter is common to both models at a (seed, config)
    key = ["seed", "config_index", "rerun"]
    assert np.array_equal(forest.sort_values(key)["shared"], svc.sort_values(key)["shared"])
    from click.testing import CliRunner

    from vareval.cli import main

    status = CliRunner().invoke(main, ["status", str(path)]).output
    assert "spaces       shared: shared; model=forest: n_trees, depth; model=svc: kernel, C, " \
        "gamma" in status
    assert "last run     trial code " in status and "numpy " in status
    with pytest.raises(ExperimentError, match=r"\[space.model.boost\]: 'boost' is not a level"):
        loads_spec(LEVELS_TOML + '\n[space.model.boost]\nx = { distribution = "uniform", '
                   'low = 0, high = 1 }\n')
    with pytest.raises(ExperimentError, match="also declared in the shared"):
        loads_spec(LEVELS_TOML.replace("n_trees =", "shared ="))
    with pytest.raises(ExperimentError, match="`when` names 'kernel'"):
        loads_spec(LEVELS_TOML.replace('kernel = { distribution = "choice", values = ["rbf", '
                                       '"linear"] }\n', ""))


def test_curves_and_artifacts(tmp_path, make_spec, monkeypatch):
    import vareval.experiment.store as store_module

    monkeypatch.setattr(store_module, "ARTIFACT_INLINE_LIMIT", 2000)
    path = tmp_path / "runs.db"
    run(make_spec(fn="curvy", seeds=1, params={"blob_kb": 1}), path, engine="serial",
        progress=False)
    with Store(path) as st:
        curves = st.curves()
        assert len(curves) == 8 * 6  # trials x steps 0..5
        assert sorted(curves.columns[-2:]) == ["acc", "loss"]
        last = curves[curves.step == 5]
        assert last["acc"].isna().all() and (last["loss"] == 0).all()
        assert st.artifact(3, "note.txt") == b"trial 3"
        assert st.artifact(3, "blob.bin") == bytes(range(256)) * 4  # 1024 B: inside
        with pytest.raises(ExperimentError, match="has no artifact 'x'; it has: blob.bin"):
            st.artifact(3, "x")
    # a larger artifact goes beside the store, checked by its hash
    run(make_spec(fn="curvy", seeds=1, params={"blob_kb": 1}), tmp_path / "big.db",
        engine="serial", progress=False)
    run(make_spec(fn="curvy", seeds=1, params={"blob_kb": 4}), tmp_path / "big2.db",
        engine="serial", progress=False)
    with Store(tmp_path / "big2.db") as st:
        row = st.con.execute("SELECT data, path FROM artifacts WHERE trial_id = 2 AND "
                             "name = 'blob.bin'").fetchone()
        assert row[0] is None and row[1] == "big2.db.artifacts/2/blob.bin"
        assert st.artifact(2, "blob.bin") == bytes(range(256)) * 16


def test_trial_report_and_artifact_reject_bad_input(make_spec):
    from vareval.experiment.engines import make_trial

    trial = make_trial({"id": 1, "factors": {}, "config": {}, "seed": 0, "config_index": 0,
                        "config_label": "c0", "rerun": 0, "seeds": {}})
    with pytest.raises(ExperimentError, match="`step` must be an integer >= 0"):
        trial.report(-1, loss=1.0)
    with pytest.raises(ExperimentError, match="reported metric 'loss' is str"):
        trial.report(0, loss="high")
    with pytest.raises(ExperimentError, match="must be a plain file name"):
        trial.artifact("../x", b"")
    with pytest.raises(ExperimentError, match="must be bytes or a file path"):
        trial.artifact("x", 3)


def test_provenance_is_recorded_once_per_run(tmp_path, make_spec):
    path = tmp_path / "runs.db"
    run(make_spec(seeds=1), path, engine="serial", progress=False)
    run(make_spec(seeds=2), path, engine="serial", progress=False)
    with Store(path) as st:
        runs = pd.read_sql_query("SELECT * FROM runs", st.con)
        assert len(runs) == 2
        p = json.loads(runs.provenance[0])
        assert p["trial"]["of"].endswith("_trials.py")
        assert p["packages"]["numpy"] == np.__version__
        assert p["python"] and p["host"] and p["cpu"]
        assert p["git"] is None or len(p["git"]["commit"]) == 40
        ids = st.con.execute("SELECT DISTINCT run_id FROM trials ORDER BY 1").fetchall()
        assert ids == [(1,), (2,)]


def test_changed_trial_code_is_refused_and_replay_not_comparable(tmp_path, make_spec):
    module = tmp_path / "mytrial.py"
    module.write_text("def train(trial):\n    return {'x': 1.0}\n")
    spec = make_spec(fn="x", trial="mytrial:train", paths=(str(tmp_path),), seeds=1)
    path = tmp_path / "runs.db"
    run(spec, path, engine="serial", progress=False)
    r = replay(path, 1)
    assert r.identical and r.comparable and not r.differences
    module.write_text("def train(trial):\n    return {'x': 1.0}  # edited\n")
    import sys

    sys.modules.pop("mytrial", None)
    r = replay(path, 1)
    assert r.stored == r.replayed and r.comparable is False and not r.identical
    assert r.differences[0].startswith("trial code changed since the run")
    with pytest.raises(ExperimentError, match="trial code changed since the run"):
        run(spec, path, seeds=2, engine="serial", progress=False)
    report = run(spec, path, seeds=2, engine="serial", progress=False, accept_code_change=True)
    assert report.ran == 8 and report.changes[0].startswith("trial code changed")
    sys.modules.pop("mytrial", None)


def test_variance_nests_configurations_in_model(tmp_path):
    """`vareval variance` on a store with per-model spaces nests config in model."""
    from _trials import SD
    from click.testing import CliRunner

    from vareval.cli import main

    path = tmp_path / "levels.db"
    spec = loads_spec(LEVELS_TOML.replace("seeds = 8", "seeds = 12"))
    run(spec, path, engine="serial", progress=False)
    res = CliRunner().invoke(
        main, ["variance", str(path), "--metric", "score", "--fixed", "model", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    # one label per setting (forest/s0_c0), so (1|config) is nested in the model
    assert "configurations nested in seed and model" in out["design"]
    comps = {c["component"]: c["sd"] for c in out["components"]}
    levels = {c["component"]: c["levels"] for c in out["components"]}
    # the models share seeds, so the seed x model term is fitted too (no such variance here)
    assert set(comps) == {"seed", "config", "seed:model", "Residual"}
    assert levels["config"] == 2 * 12 * 6 and levels["seed:model"] == 2 * 12
    assert comps["config"] == pytest.approx(SD["config"], rel=0.3)
    assert comps["Residual"] == pytest.approx(SD["residual"], rel=0.2)
    assert comps["seed"] == pytest.approx(SD["seed"], rel=0.6)


def test_plan_prints_the_command_that_grows_the_store(tmp_path):
    import shlex

    from click.testing import CliRunner

    from vareval.cli import main

    path = tmp_path / "runs.db"
    pilot = LEVELS_TOML.replace("seeds = 8", "seeds = 3").replace("configs = 6", "configs = 2")
    run(loads_spec(pilot.replace("reruns = 3", "reruns = 1")), path, engine="serial",
        progress=False)
    args = ["plan", str(path), "--metric", "score", "--by", "model", "--pair-on",
            "seed,config_index", "--compare", "forest,svc", "--target-se", "0.01",
            "--store", str(path), "--json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    grow = json.loads(res.output)["grow"]
    k = int(grow["message"].split(" pairs")[0])
    assert grow["command"].startswith(f"vareval run --store {shlex.quote(str(path))} --seeds ")
    seeds = int(grow["command"].rsplit(" ", 1)[1])
    assert seeds == -(-k // 2) > 3  # two configurations per seed
    res = CliRunner().invoke(main, shlex.split(grow["command"])[1:] + ["--engine", "serial"])
    assert res.exit_code == 0, res.output
    assert "grew the store by" in res.output
    with Store(path) as st:
        assert st.spec().seeds == seeds
    loose = [("0.1" if a == "0.01" else a) for a in args]  # a target the store already meets
    done = CliRunner().invoke(main, loose)
    assert "already has" in json.loads(done.output)["grow"]["message"]


def test_a_new_level_may_bring_its_own_space(tmp_path):
    path = tmp_path / "levels.db"
    small = LEVELS_TOML.replace("seeds = 8", "seeds = 1").replace("reruns = 3", "reruns = 1")
    run(loads_spec(small), path, engine="serial", progress=False)
    before = _rows(path)
    boost = small.replace('["forest", "svc"]', '["forest", "svc", "boost"]') + (
        '\n[space.model.boost]\ndepth = { distribution = "integer", low = 1, high = 3 }\n'
    )
    run(loads_spec(boost), path, engine="serial", progress=False)
    assert _rows(path)[: len(before)] == before
    with Store(path) as st:
        df = st.frame()
    assert df.loc[df.model == "boost", "depth"].between(1, 3).all()
    assert df.loc[df.model == "boost", ["n_trees", "kernel"]].isna().all().all()
    changed = boost.replace("low = 10, high = 500", "low = 10, high = 600")
    with pytest.raises(ExperimentError, match=r"level_spaces differs"):
        run(loads_spec(changed), path, engine="serial", progress=False)


def test_resources_for_ray_are_checked_and_not_part_of_the_identity(tmp_path, make_spec):
    from vareval.experiment.engines import ray_options
    from vareval.experiment.spec import memory_bytes

    assert memory_bytes("8GB") == 8 * 10**9
    assert memory_bytes("512MiB") == 512 * 2**20
    assert memory_bytes(1024) == 1024
    for bad in ("lots", "-1GB", 0, True):
        with pytest.raises(ExperimentError, match="memory must be a positive number"):
            memory_bytes(bad)
    assert ray_options({"num_gpus": 1, "memory": "2GB"}) == {
        "num_cpus": 1, "num_gpus": 1, "memory": 2 * 10**9}
    with pytest.raises(ExperimentError, match=r"\[resources\] unknown key 'gpus'"):
        make_spec(resources={"gpus": 1})
    with pytest.raises(ExperimentError, match=r"\[resources\] num_cpus must be a number"):
        make_spec(resources={"num_cpus": "four"})
    toml = textwrap.dedent(f"""
        [experiment]
        trial = "_trials:streams"
        path = {HERE!r}
        seeds = 1

        [factors]
        model = ["a"]

        [resources]
        num_cpus = 2
        memory = "1GB"

        [runtime_env]
        env_vars = {{ A = "1" }}
    """)
    spec = loads_spec(toml)
    assert spec.resources == {"num_cpus": 2, "memory": "1GB"}
    assert spec.runtime_env == {"env_vars": {"A": "1"}}
    path = tmp_path / "runs.db"
    with Store(path, create=True) as st:
        st.prepare(spec)
        # other hardware, same trials: a store resumes with other resources
        assert st.prepare(loads_spec(toml.replace("num_cpus = 2", "num_cpus = 8"))).resources[
            "num_cpus"] == 8
