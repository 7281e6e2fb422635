"""``vareval.stats`` imports its names on first use: its map must say where each one lives."""

import importlib

import vareval.stats as stats


def test_every_public_name_is_mapped_to_the_module_that_defines_it():
    assert set(stats.__all__) == set(stats._EXPORTS)
    for module, names in stats._MODULES.items():
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name), (module, name)
            assert getattr(stats, name) is getattr(mod, name)


def test_an_unknown_name_is_an_attribute_error():
    try:
        stats.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")
