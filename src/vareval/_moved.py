"""Old module paths of the first releases, kept importable for one release.

The statistics layer was regrouped by the researcher's question
(``vareval.stats.bands`` is now ``vareval.stats.tuning.bands``) and the figures
moved below it (``vareval.report.plots`` is now ``vareval.plots``). Importing an
old path warns with the new one and gives the very module object, so state and
monkeypatches are shared. ``vareval.stats.tuning`` itself is a package now; its
old names are served by its ``__getattr__``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

MOVED = {
    "vareval.cli.allocate": "vareval.cli.allocation",
    "vareval.report.figures": "vareval.plots.figures",
    "vareval.report.plots": "vareval.plots",
    "vareval.report.plots._style": "vareval.plots._style",
    "vareval.report.plots.aggregate": "vareval.plots.aggregate",
    "vareval.report.plots.classification": "vareval.plots.classification",
    "vareval.report.plots.comparisons": "vareval.plots.comparisons",
    "vareval.report.plots.paired": "vareval.plots.paired",
    "vareval.report.plots.ranking": "vareval.plots.ranking",
    "vareval.report.plots.selection": "vareval.plots.best_of_k",
    "vareval.report.plots.sequential": "vareval.plots.sequential",
    "vareval.report.plots.significance": "vareval.plots.significance",
    "vareval.report.plots.summary": "vareval.plots.summary",
    "vareval.report.plots.tuning": "vareval.plots.tuning",
    "vareval.report.plots.variance": "vareval.plots.variance",
    "vareval.report.sections.summaries": "vareval.report.sections.summary",
    "vareval.stats.aggregate": "vareval.stats.tasks.aggregate",
    "vareval.stats.allocation": "vareval.stats.budget.allocation",
    "vareval.stats.bands": "vareval.stats.tuning.bands",
    "vareval.stats.classification": "vareval.stats.testset.classification",
    "vareval.stats.coverage": "vareval.stats.tuning.coverage",
    "vareval.stats.crossval": "vareval.stats.testset.crossval",
    "vareval.stats.dominance": "vareval.stats.tasks.dominance",
    "vareval.stats.mixed": "vareval.stats.variance.fit",
    "vareval.stats.mixed_bootstrap": "vareval.stats.variance.bootstrap",
    "vareval.stats.mixed_intervals": "vareval.stats.variance.intervals",
    "vareval.stats.mixed_slopes": "vareval.stats.variance.slopes",
    "vareval.stats.mixed_sparse": "vareval.stats.variance.sparse",
    "vareval.stats.mixed_tests": "vareval.stats.variance.tests",
    "vareval.stats.paired": "vareval.stats.repeated.paired",
    "vareval.stats.ranking": "vareval.stats.tasks.ranking",
    "vareval.stats.resampling": "vareval.stats.testset.resampling",
    "vareval.stats.roc": "vareval.stats.testset.roc",
    "vareval.stats.selection": "vareval.stats.repeated.best_of_k",
    "vareval.stats.sequential": "vareval.stats.budget.sequential",
    "vareval.stats.significance": "vareval.stats.testset.significance",
    "vareval.stats.summary": "vareval.stats.repeated.summary",
}


class _Alias:
    """Finds an old path and loads it as the module at its new path.

    A finder and loader by its methods alone: ``importlib.abc``'s base classes
    would import ``importlib.resources`` and ``tempfile`` at every start (~12 ms).
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}; the old path goes in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        sys.modules[module.__spec__.name] = module  # the new module, under the old name too


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
