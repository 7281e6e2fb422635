"""``vareval.stats`` and ``vareval.data`` import their names on first use: each map
must say where every name lives, and the names must import as eager imports gave them."""

import importlib
import subprocess
import sys

import pytest

import vareval.data
import vareval.stats

LAZY = [vareval.stats, vareval.data]


@pytest.mark.parametrize("package", LAZY, ids=lambda p: p.__name__)
def test_every_public_name_is_mapped_to_the_module_that_defines_it(package):
    assert set(package.__all__) == set(package._EXPORTS)
    for module, names in package._MODULES.items():
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name), (module, name)
            assert getattr(package, name) is getattr(mod, name)


@pytest.mark.parametrize("package", LAZY, ids=lambda p: p.__name__)
def test_an_unknown_name_is_an_attribute_error(package):
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout


def test_every_data_name_and_module_imports_as_before():
    """``from vareval.data import X`` for every exported name, and the layer's modules."""
    out = _run(
        "from vareval.data import (TaskScores, groups, labels, metric_values, pairs, "
        "read_table, reference_scores, require_columns, task_scores); "
        "from vareval.data import io, filters; import vareval.data as d; "
        "print(d.tables.ResultTable.__module__, io.__name__, filters.__name__, callable(d.groups))"
    )
    assert out.split() == ["vareval.data.tables", "vareval.data.io", "vareval.data.filters", "True"]


def test_a_module_of_the_data_layer_does_not_load_the_others():
    out = _run(
        "import sys; import vareval.data.carried; "
        "print(' '.join(m for m in ('io', 'tasks', 'validate') "
        "if 'vareval.data.' + m in sys.modules))"
    )
    assert out.strip() == ""
