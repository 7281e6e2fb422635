"""``vareval.data`` imports its names on first use: its map must say where each one lives."""

import importlib
import subprocess
import sys

import vareval.data as data


def test_every_public_name_is_mapped_to_the_module_that_defines_it():
    assert set(data.__all__) == set(data._EXPORTS)
    for module, names in data._MODULES.items():
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name), (module, name)
            assert getattr(data, name) is getattr(mod, name)


def test_every_name_and_module_imports_as_before():
    """``from vareval.data import X`` for every exported name, and the layer's modules."""
    code = (
        "from vareval.data import (TaskScores, groups, labels, metric_values, pairs, "
        "read_table, reference_scores, require_columns, task_scores); "
        "from vareval.data import io, filters; import vareval.data as d; "
        "print(d.tables.ResultTable.__module__, io.__name__, filters.__name__, callable(d.groups))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "vareval.data.tables", "vareval.data.io", "vareval.data.filters", "True"
    ]


def test_a_module_of_the_layer_does_not_load_the_others():
    code = (
        "import sys; import vareval.data.carried; "
        "print(' '.join(m for m in ('io', 'tasks', 'validate') "
        "if 'vareval.data.' + m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_an_unknown_name_is_an_attribute_error():
    try:
        data.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")
