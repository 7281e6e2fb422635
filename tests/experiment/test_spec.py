import textwrap

import pytest

from vareval.errors import ExperimentError, VarevalError
from vareval.experiment.spec import (
    Distribution,
    ExperimentSpec,
    load_spec,
    loads_spec,
    resolve_function,
)

GOOD = """
[experiment]
name = "toy"
trial = "_trials:streams"
seeds = 3
configs = 2
nested = false
reruns = 2
rerun_mode = "independent"
entropy = 7
timeout = 30

[factors]
model = ["mlp", "logreg"]
optimizer = ["sgd", "adam"]

[space]
lr = { distribution = "log-uniform", low = 1e-4, high = 1e-1 }
momentum = { distribution = "uniform", low = 0.0, high = 0.99 }
batch = { distribution = "choice", values = [32, 64] }
hidden = { distribution = "integer", low = 8, high = 64 }

[randomness]
sources = ["data_split", "init", "batch_order", "augmentation"]
fixed = ["data_split"]

[params]
epochs = 3
"""


def test_toml_and_python_give_the_same_spec(tmp_path):
    path = tmp_path / "experiment.toml"
    path.write_text(GOOD)
    spec = load_spec(path)
    same = ExperimentSpec(
        name="toy",
        trial="_trials:streams",
        factors={"model": ["mlp", "logreg"], "optimizer": ["sgd", "adam"]},
        seeds=3,
        configs=2,
        nested=False,
        reruns=2,
        rerun_mode="independent",
        entropy=7,
        timeout=30,
        space={
            "lr": Distribution("log-uniform", 1e-4, 1e-1),
            "momentum": Distribution("uniform", 0.0, 0.99),
            "batch": Distribution("choice", values=(32, 64)),
            "hidden": Distribution("integer", 8, 64),
        },
        sources=("data_split", "init", "batch_order", "augmentation"),
        fixed=("data_split",),
        params={"epochs": 3},
        paths=(str(tmp_path.resolve()),),
    )
    assert spec == same
    assert spec.n_trials == 4 * 3 * 2 * 2
    assert ExperimentSpec.from_dict(spec.to_dict()) == spec
    assert spec.timeout == 30.0
    assert spec.paths[0] == str(tmp_path.resolve())


def test_defaults():
    spec = loads_spec(
        '[experiment]\ntrial = "m:f"\nseeds = 2\n[factors]\nmodel = ["a"]\n'
    )
    assert spec.configs == 1 and spec.reruns == 1 and spec.nested
    assert spec.rerun_mode == "same"
    assert spec.sources == ("data_split", "init", "batch_order")
    assert spec.entropy is None and spec.timeout is None


def test_toml_syntax_error_names_line_and_column():
    text = GOOD.replace("seeds = 3", "seeds = = 3")
    with pytest.raises(ExperimentError, match=r"TOML syntax error.*line 5, column 9"):
        loads_spec(text, source="experiment.toml")


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        (
            "low = 1e-4, high = 1e-1 }",
            "low = 0.0, high = 1e-1 }",
            r"line 18: \[space\] lr: log-uniform needs 0 < low < high; got low = 0.0",
        ),
        (
            "low = 1e-4, high = 1e-1 }",
            "low = -1.0, high = 1e-1 }",
            r"log-uniform needs 0 < low",
        ),
        (
            "low = 0.0, high = 0.99",
            "low = 1.0, high = 0.5",
            r"uniform needs low < high",
        ),
        (
            "low = 8, high = 64",
            "low = 8.5, high = 64",
            r"integer `low` must be an integer",
        ),
        ("values = [32, 64]", "values = []", r"choice has an empty list"),
        ('"choice"', '"normal"', r"unknown distribution 'normal'; accepted: uniform"),
        ('fixed = ["data_split"]', 'fixed = ["dataset"]', r"`fixed` names 'dataset'"),
        (
            'rerun_mode = "independent"',
            'rerun_mode = "again"',
            r"`rerun_mode` must be 'same'",
        ),
        ("seeds = 3", "seeds = 0", r"`seeds` must be an integer >= 1; got 0"),
        (
            'trial = "_trials:streams"',
            'trial = "_trials.streams"',
            r"`trial` must name a function as 'package.module:function'",
        ),
        (
            'model = ["mlp", "logreg"]',
            "model = []",
            r"factor 'model' needs a non-empty list",
        ),
        ('model = ["mlp", "logreg"]', 'seed = ["mlp"]', r"reserved"),
        ("timeout = 30", "timeout = -1", r"`timeout` must be a finite positive number"),
        ("timeout = 30", "timeouts = 30", r"unknown key 'timeouts'"),
        ("sources = [", 'sources = ["init", ', r"`sources` has repeated names"),
    ],
)
def test_invalid_declarations(old, new, match):
    assert old in GOOD
    with pytest.raises(ExperimentError, match=match) as info:
        loads_spec(GOOD.replace(old, new, 1), source="experiment.toml")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("experiment.toml")


def test_empty_search_space():
    text = GOOD.split("[space]")[0] + "[space]\n"
    with pytest.raises(
        ExperimentError, match=r"search space \[space\] is empty.*configs = 1"
    ):
        loads_spec(text)
    # one configuration needs no search space
    assert loads_spec(text.replace("configs = 2", "configs = 1")).space == {}


def test_python_spec_validates_too():
    with pytest.raises(ExperimentError, match="log-uniform needs 0 < low"):
        ExperimentSpec(
            trial="m:f",
            factors={"m": ["a"]},
            seeds=1,
            space={"lr": Distribution("log-uniform", 0, 1)},
        )
    with pytest.raises(ExperimentError, match="also a factor"):
        ExperimentSpec(
            trial="m:f",
            factors={"lr": ["a"]},
            seeds=1,
            space={"lr": {"distribution": "uniform", "low": 0, "high": 1}},
        )
    assert issubclass(ExperimentError, VarevalError)


def test_unknown_function_path(tmp_path):
    (tmp_path / "mymod.py").write_text(
        "def f(trial):\n    return {'x': 1}\nvalue = 3\n"
    )
    assert resolve_function("mymod:f", [str(tmp_path)])(None) == {"x": 1}
    with pytest.raises(ExperimentError, match=r"module 'no_such_module' not found"):
        resolve_function("no_such_module:f")
    with pytest.raises(ExperimentError, match=r"module 'mymod' has no attribute 'g'"):
        resolve_function("mymod:g", [str(tmp_path)])
    with pytest.raises(ExperimentError, match=r"'mymod:value' is not callable"):
        resolve_function("mymod:value", [str(tmp_path)])


def test_missing_file(tmp_path):
    with pytest.raises(ExperimentError, match="does not exist"):
        load_spec(tmp_path / "nope.toml")


def test_extra_path_is_relative_to_the_file(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "experiment.toml").write_text(
        textwrap.dedent("""
        [experiment]
        trial = "m:f"
        seeds = 1
        path = "code"
        [factors]
        model = ["a"]
    """)
    )
    spec = load_spec(tmp_path / "experiment.toml")
    assert spec.paths == (str(tmp_path.resolve()), str((tmp_path / "code").resolve()))
