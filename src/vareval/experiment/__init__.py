"""Experiment layer: declare a re-seeding design, run it, store every trial."""

from vareval.experiment.design import reseeding_design

__all__ = ["reseeding_design"]
