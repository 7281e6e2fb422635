"""A fast paired trial for the sequential runner's tests (imported by path in workers)."""

import time

from _trials import _log, hold


def shifted(trial):
    """A score: a seed's common part, the model's ``shift`` and the model's own noise.

    The common part comes from the ``init`` stream, which every model shares at a
    seed; the model's own noise from its ``noise_<model>`` stream. A difference
    of two models at a seed is then normal with mean the difference of their
    shifts and SD 0.5.

    With ``params['log']``, each trial is logged and may block (see ``_trials.hold``).
    """
    hold(trial.params.get("log"))
    time.sleep(trial.params.get("sleep", 0.0))
    _log(trial)
    model = trial.factors["model"]
    shift = trial.params["shift"].get(model, 0.0)
    common = trial.rng("init").normal(0.0, 1.0)
    own = trial.rng(f"noise_{model}").normal(0.0, 0.5 / 2**0.5)
    return {"score": float(common + shift + own)}
