"""Experiment layer: declare a re-seeding design, run it, store every trial."""

from vareval.experiment.design import reseeding_design
from vareval.experiment.execution import run_trial, trial_seeds
from vareval.experiment.runner import ReplayResult, RunReport, replay, run
from vareval.experiment.simulate import simulate_responses
from vareval.experiment.spec import Distribution, ExperimentSpec, load_spec, loads_spec
from vareval.experiment.store import Store
from vareval.experiment.streams import Trial, seed_everything

__all__ = [
    "Distribution",
    "ExperimentSpec",
    "ReplayResult",
    "RunReport",
    "Store",
    "Trial",
    "load_spec",
    "loads_spec",
    "replay",
    "reseeding_design",
    "run",
    "run_trial",
    "seed_everything",
    "simulate_responses",
    "trial_seeds",
]
