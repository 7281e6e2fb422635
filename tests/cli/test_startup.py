"""What a command imports: only what it uses (start-up is most of a small analysis's time)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from vareval import datasets


def test_help_imports_no_heavy_library():
    """`vareval --help` must stay fast: building the command imports no numpy, scipy or pandas.

    Nor the compiled bootstrap kernel, which is loaded when a bootstrap runs, nor
    ``importlib.resources`` (with tempfile, through ``importlib.abc``) or sqlite3.
    """
    code = (
        "import sys; from vareval.cli import main; "
        "heavy = [m for m in ('numpy', 'scipy', 'pandas', 'matplotlib', "
        "'vareval.stats.testset._bootkernel', 'importlib.resources', 'sqlite3') "
        "if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_vareval_warnings_print_as_one_line():
    import warnings

    import click
    from click.testing import CliRunner

    from vareval.cli import main
    from vareval.errors import VarevalWarning

    @click.command("warn-once")
    def warn_once():
        warnings.warn("ties in column 'f1'", VarevalWarning, stacklevel=1)

    main.add_command(warn_once)
    try:
        out = CliRunner().invoke(main, ["warn-once"])
    finally:
        main.commands.pop("warn-once")
    assert out.exit_code == 0
    assert out.output.strip() == "warning: ties in column 'f1'"


# The commands run in turn in one fresh interpreter, and after each the modules it must not
# have loaded are listed (a module one loads shows after it too: the first list to name it
# names the command): scipy.stats costs ~0.5 s of CPU to import (more than these analyses),
# scipy.optimize ~0.1 s, matplotlib is for --plot only.
_RUN_IN_TURN = """
import contextlib, io, json, sys
from vareval.cli import main
found = {}
for name, argv, unused in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit as e:
            assert not e.code, (name, e.code)
    found[name] = [m for m in unused if m in sys.modules]
print(json.dumps(found))
"""


def _loaded(commands, cwd):
    out = subprocess.run([sys.executable, "-c", _RUN_IN_TURN, json.dumps(commands)], cwd=cwd,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _bundled(name):
    return str(datasets.path(name))


def test_commands_load_no_scipy_stats_unless_they_use_it():
    # tqdm: a bar is drawn on a terminal only (here stderr is a pipe); sqlite3 is for a store
    # only, html for a notebook
    unused = ["scipy.stats", "scipy.optimize", "matplotlib", "tqdm", "sqlite3", "html"]
    runs, preds, evals = (_bundled(f) for f in
                          ("digits_runs.csv", "digits_predictions.csv", "digits_eval.csv"))
    commands = [
        ("summarize", ["summarize", runs, "--metric", "accuracy", "--by", "method"]),
        ("paired", ["paired", runs, "--metric", "accuracy", "--by", "method", "--pair-on",
                    "seed", "--compare", "mlp,logreg"]),
        ("best-of-k", ["best-of-k", runs, "--metric", "accuracy", "--by", "method"]),
        ("sequential", ["sequential", runs, "--metric", "accuracy", "--by", "method",
                        "--pair-on", "seed", "--compare", "mlp,logreg", "--bounds", "0,1"]),
        ("significance", ["significance", preds, "--gold", "gold", "--item", "item",
                          "--metric", "macro-f1", "--resamples", "200"]),
        ("metrics", ["metrics", preds, "--gold", "gold", "--item", "item"]),
        ("tuning-curve", ["tuning-curve", _bundled("hedwig.tsv"), "--metric", "f1", "--by",
                          "model_name", "--bounds", "0,1", "--ks", "1,5"]),
        ("evals score", ["evals", "score", evals, "--metric", "correct", "--cluster", "image"]),
        ("evals compare", ["evals", "compare", evals, "--metric", "correct", "--cluster",
                           "image"]),
        ("aggregate", ["aggregate", _bundled("sklearn_tasks.csv"), "--metric", "accuracy",
                       "--by", "method", "--task", "task", "--resamples", "200"]),
        ("variance", ["variance", _bundled("decovac_sim.csv"), "--metric", "accuracy",
                      "--fixed", "model,optimizer", "--random", "seed,config"]),
    ]  # fmt: skip
    found = _loaded([(n, a, [u for u in unused if u != "scipy.optimize"] if n == "variance"
                      else unused)
                     for n, a in commands],
                    cwd=None)
    assert found == {name: [] for name, _ in commands}


def test_a_mixed_model_at_an_interior_optimum_loads_no_scipy_optimize(tmp_path):
    """The Newton steps find it; L-BFGS-B (and scipy.optimize's import) is for a bound."""
    rng = np.random.default_rng(3)
    seed, config = np.meshgrid(np.arange(30), np.arange(30), indexing="ij")
    seed, config = seed.ravel(), config.ravel()
    y = rng.normal(0, 1, 30)[seed] + rng.normal(0, 1, 30)[config] + rng.normal(0, 1, seed.size)
    pd.DataFrame({"seed": seed, "config": config, "y": y}).to_csv(tmp_path / "t.csv", index=False)
    argv = ["variance", "t.csv", "--metric", "y", "--fixed", "", "--random", "seed,config"]
    assert _loaded([("variance", argv, ["scipy.optimize", "scipy.stats"])], cwd=tmp_path) == {
        "variance": []
    }


@pytest.mark.parametrize(("name", "attr"),
                         [("stats", "t"), ("special", "stdtrit"), ("linalg", "cholesky")])
def test_the_lazy_stand_in_gives_the_module_s_own_objects(name, attr):
    import importlib

    from vareval.stats import _lazy

    stand_in = getattr(_lazy, name)
    assert getattr(stand_in, attr) is getattr(importlib.import_module(f"scipy.{name}"), attr)
    assert "imported on first use" in repr(stand_in)


def test_each_command_is_registered_from_the_module_the_table_names():
    import importlib
    import pkgutil

    import vareval.cli
    from vareval.cli import _MODULE_OF

    defined = {}
    for info in pkgutil.iter_modules(vareval.cli.__path__):
        module = importlib.import_module(f"vareval.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            defined[command.name] = info.name
    assert defined == _MODULE_OF
    assert sorted(vareval.cli.main.commands) == sorted(_MODULE_OF)


def test_a_variance_command_loads_only_what_it_uses(tmp_path):
    """No other command's module; no bar's tqdm off a terminal; the LRTs' chi-square tails
    without scipy.special (the intercept-only model has no F test)."""
    rng = np.random.default_rng(4)
    seed, config = (a.ravel() for a in np.meshgrid(np.arange(12), np.arange(12), indexing="ij"))
    y = rng.normal(0, 1, 12)[seed] + rng.normal(0, 1, 12)[config] + rng.normal(0, 1, seed.size)
    pd.DataFrame({"seed": seed, "config": config, "y": y}).to_csv(tmp_path / "t.csv", index=False)
    argv = ["variance", "t.csv", "--metric", "y", "--fixed", "", "--random", "seed,config"]
    others = [f"vareval.cli.{m}" for m in ("repeated", "significance", "tuning", "aggregate",
                                           "ranking", "run", "report", "evals", "datasets")]
    unused = ["scipy.special", "scipy.stats", "tqdm", *others]
    assert _loaded([("variance", argv, unused)], cwd=tmp_path) == {"variance": []}


def test_a_variance_command_with_the_kernel_loads_no_scipy_linalg(tmp_path):
    """The fit's dense LAPACK calls and the supernodal kernel's BLAS go through scipy's Cython
    API without scipy.linalg's import (~35 ms): on a design fitted densely and on a banded one
    whose full model takes the sparse path."""
    from vareval.stats._compiled import compiled

    if compiled("vareval.stats.variance._superkernel") is None:
        pytest.skip("the compiled kernel is not built (or VAREVAL_NO_KERNEL is set)")
    rng = np.random.default_rng(5)
    seed = np.repeat(np.arange(600), 9)
    config = seed + np.tile(np.arange(-4, 5), 600)
    keep = (config >= 0) & (config < 600) & (rng.random(seed.size) < 0.83)
    seed, config = seed[keep], config[keep]
    task = rng.integers(0, 12, seed.size)
    y = (rng.normal(0, 1, 600)[seed] + rng.normal(0, 2, 600)[config]
         + rng.normal(0, 1, 12)[task] + rng.normal(0, 1, seed.size))
    pd.DataFrame({"seed": seed, "config": config, "task": task, "y": y}).to_csv(
        tmp_path / "band.csv", index=False)
    runs = ("banded", ["variance", "band.csv", "--metric", "y", "--fixed=", "--random",
                       "seed,config,task"], ["scipy.linalg"])
    dense = ("dense", ["variance", _bundled("decovac_sim.csv"), "--metric", "accuracy",
                       "--fixed", "model,optimizer", "--random", "seed,config"], ["scipy.linalg"])
    assert _loaded([runs, dense], cwd=tmp_path) == {"banded": [], "dense": []}


def test_collector_paused_for_a_commands_first_seconds_only():
    """A command's start runs without the cyclic collector, which comes back after the pause.

    A program that calls ``main`` in-process (here ``CliRunner``) keeps its collector.
    """
    import gc
    import time

    from click.testing import CliRunner

    from vareval import cli

    assert gc.isenabled()
    assert CliRunner().invoke(cli.main, ["--version"]).exit_code == 0
    assert gc.isenabled()
    try:
        cli._pause_collector(0.05)
        assert not gc.isenabled()
        deadline = time.monotonic() + 10
        while not gc.isenabled() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert gc.isenabled()
    finally:
        gc.enable()


def test_collector_back_on_in_a_command_that_runs_past_the_pause(tmp_path):
    """In a real ``vareval`` process the collector is off at the start and on after 2 s."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import gc, sys, time\n"
        "sys.argv = ['vareval', '--version']\n"
        "import vareval._interrupts as i; i.COMMAND = True\n"
        "import vareval.cli as c\n"
        "c._leave = lambda status: None\n"
        "c.main()\n"
        "print(gc.isenabled()); time.sleep(2.5); print(gc.isenabled())\n"
    )
    out = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-2:] == ["False", "True"]


def _imported(stderr: str) -> set[str]:
    """The modules named by ``python -X importtime``'s lines."""
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines()
            if line.startswith("import time:")}


def test_a_command_does_not_run_numpy_testing_or_f2py():
    """scipy's array-API layer walks dir(numpy), which would import both; a command defers them.

    ``python -m vareval`` is a real command process (``-X importtime`` lists what it runs).
    """
    argv = [sys.executable, "-X", "importtime", "-m", "vareval", "summarize",
            _bundled("digits_runs.csv"), "--metric", "accuracy", "--by", "method"]
    out = subprocess.run(argv, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    imported = _imported(out.stderr)
    assert "scipy" in imported  # the command did import scipy
    assert not {m for m in imported
                if m.split(".")[0] in ("unittest", "charset_normalizer")
                or m.startswith(("numpy.testing.", "numpy.f2py."))}


_DEFERRED = """
import sys
from vareval import cli
cli._defer_numpy_extras()
import numpy, scipy.sparse, scipy.linalg
print("unittest" in sys.modules, "charset_normalizer" in sys.modules)
from numpy.testing import assert_array_equal
assert_array_equal([1, 2], [1, 2])
try:
    numpy.testing.assert_allclose(1.0, 1.1)
except AssertionError:
    print("raised")
import numpy.f2py
print(numpy.f2py.get_include().endswith("src"), "unittest" in sys.modules)
print(any(isinstance(f, cli._BeforeScipy) and not f.done for f in sys.meta_path))
"""


def test_deferred_numpy_testing_and_f2py_load_on_use():
    out = subprocess.run([sys.executable, "-c", _DEFERRED], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False", "raised", "True", "True", "False"]


def test_deferral_leaves_loaded_and_missing_modules_alone():
    code = (
        "import sys, numpy.testing, scipy\n"
        "from vareval import cli\n"
        "before = sys.modules['numpy.testing']\n"
        "cli._defer_numpy_extras()\n"
        "print(any(isinstance(f, cli._BeforeScipy) for f in sys.meta_path))\n"
        "cli._lazy_submodule(numpy, 'testing'); cli._lazy_submodule(numpy, 'no_such_module')\n"
        "print(sys.modules['numpy.testing'] is before is numpy.testing)\n"
        "print('numpy.no_such_module' in sys.modules, 'no_such_module' in vars(numpy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "False", "False"]


def test_main_in_process_defers_nothing():
    """A program (here ``CliRunner``) that calls ``main`` keeps numpy as it is."""
    import importlib.util

    from click.testing import CliRunner

    from vareval import cli

    assert CliRunner().invoke(cli.main, ["--version"]).exit_code == 0
    assert not any(isinstance(f, cli._BeforeScipy) for f in sys.meta_path)
    for name in ("numpy.testing", "numpy.f2py"):
        module = sys.modules.get(name)
        assert module is None or not isinstance(module.__spec__.loader, importlib.util.LazyLoader)


def test_a_report_without_the_design_roles_loads_no_scipy_stats(tmp_path):
    """The allocation section (scipy.stats, scipy.optimize through the mixed model's
    intervals) is imported only when the data has experiment, seed and config."""
    argv = ["report", _bundled("digits_runs.csv"), "--metric", "accuracy", "--by", "method",
            "-o", str(tmp_path / "r.html")]
    found = _loaded([("report", argv, ["scipy.stats", "scipy.optimize"])], cwd=tmp_path)
    assert found == {"report": []}
