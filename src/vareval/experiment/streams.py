"""Independent random streams per trial and per source of randomness.

Every stream is a :class:`numpy.random.SeedSequence` built from the
experiment's root entropy and a *spawn key* that names what the stream is
for, never from seed arithmetic (``seed + 1`` streams overlap and correlate):

- a trial's source ``s`` at seed index ``i`` and rerun ``r`` gets
  ``SeedSequence(entropy, spawn_key=(TRIAL, 1, i, r', *h(s)))`` where ``h``
  is a fixed 64-bit hash of the source's name and ``r'`` is ``r`` for
  independent reruns and ``0`` for DECoVaC's "same" reruns;
- a source held *fixed* gets ``(TRIAL, 0, 0, 0, *h(s))``: the same stream at
  every seed and rerun (e.g. one data split for all seeds);
- parameter ``p`` of configuration ``j`` of seed ``i`` is drawn from its own
  stream ``(CONFIG, 1, i, j, *h("config:" + p))`` (nested) or
  ``(CONFIG, 0, 0, j, *h("config:" + p))`` (shared), streams no trial
  consumes. Configuration ``j`` is therefore the same whatever ``configs`` is
  and whichever other parameters a factor level's search space declares
  (prefix-stable: a sweep grows without redrawing what exists). Stores made
  before this scheme (``config_scheme`` 1) drew each seed's configurations
  as one sequence from ``(CONFIG, 1, i, 0, *h("config"))``; they keep it.

The streams do not depend on the factor levels: seed ``i`` gives every model
and optimizer the same data split and the same configurations (common random
numbers), as in the DECoVaC design. The exact entropy and spawn key of every
source is recorded in the store, so one trial can be replayed bit for bit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import numbers
import os
import random
from collections.abc import Mapping

import numpy as np

from vareval.errors import ExperimentError

_TRIAL = 1
_CONFIG = 2
CONFIG_SCHEME = 2  # per-configuration, per-parameter streams (prefix-stable)


def _name_words(name: str) -> tuple[int, int]:
    """A fixed (platform- and run-independent) 64-bit hash of a name, as two words."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")


def source_key(
    seed: int, rerun: int, source: str, *, fixed: bool, rerun_mode: str
) -> tuple:
    """The spawn key of ``source`` for a trial at (``seed``, ``rerun``)."""
    if fixed:
        return (_TRIAL, 0, 0, 0, *_name_words(source))
    r = rerun if rerun_mode == "independent" else 0
    return (_TRIAL, 1, int(seed), int(r), *_name_words(source))


def config_key(seed: int, *, nested: bool) -> tuple:
    """The spawn key of the configuration-sampling stream for ``seed``."""
    return (
        (_CONFIG, 1, int(seed), 0, *_name_words("config"))
        if nested
        else (_CONFIG, 0, 0, 0, *_name_words("config"))
    )


def trial_seeds(spec, seed: int, rerun: int) -> dict[str, dict]:
    """The ``{"entropy": e, "spawn_key": [...]}`` record of every source of a trial."""
    _need_entropy(spec)
    return {
        s: {
            "entropy": int(spec.entropy),
            "spawn_key": list(
                source_key(
                    seed, rerun, s, fixed=s in spec.fixed, rerun_mode=spec.rerun_mode
                )
            ),
        }
        for s in spec.sources
    }


def seed_sequence(record: Mapping) -> np.random.SeedSequence:
    """Rebuild the SeedSequence from a stored ``{"entropy", "spawn_key"}`` record."""
    return np.random.SeedSequence(
        int(record["entropy"]), spawn_key=tuple(record["spawn_key"])
    )


# -- configurations ----------------------------------------------------


def sample_configs(space: Mapping, n: int, rng: np.random.Generator) -> list[dict]:
    """Draw ``n`` configurations from ``space`` with ``rng``.

    Each parameter is drawn for all ``n`` configurations at once, in the
    order the space declares them. Values are plain Python numbers (floats
    round-trip exactly through JSON, so a stored configuration replays exactly).
    """
    columns = {}
    for name, d in space.items():
        if d.kind == "uniform":
            columns[name] = [float(v) for v in rng.uniform(d.low, d.high, size=n)]
        elif d.kind == "log-uniform":
            logs = rng.uniform(np.log(d.low), np.log(d.high), size=n)
            columns[name] = [float(v) for v in np.clip(np.exp(logs), d.low, d.high)]
        elif d.kind == "integer":
            columns[name] = [
                int(v) for v in rng.integers(d.low, d.high, size=n, endpoint=True)
            ]
        else:  # choice
            idx = rng.integers(0, len(d.values), size=n)
            columns[name] = [d.values[int(i)] for i in idx]
    return [{name: columns[name][j] for name in space} for j in range(n)]


def draw(d, rng: np.random.Generator):
    """One value of distribution ``d`` (a plain Python number or choice value)."""
    if d.kind == "uniform":
        return float(rng.uniform(d.low, d.high))
    if d.kind == "log-uniform":
        return float(np.clip(np.exp(rng.uniform(np.log(d.low), np.log(d.high))), d.low, d.high))
    if d.kind == "integer":
        return int(rng.integers(d.low, d.high, endpoint=True))
    return d.values[int(rng.integers(0, len(d.values)))]


def parameter_key(seed: int, config: int, name: str, *, nested: bool) -> tuple:
    """The spawn key of parameter ``name`` of configuration ``config`` at ``seed``."""
    words = _name_words("config:" + name)
    return (_CONFIG, 1, int(seed), int(config), *words) if nested else (
        _CONFIG, 0, 0, int(config), *words
    )


def active(space: Mapping, values: Mapping) -> dict:
    """Keep the parameters whose ``when`` condition holds (in declaration order)."""
    out = {}
    for name, d in space.items():
        if all(out.get(k, _MISSING) in allowed for k, allowed in d.when):
            out[name] = values[name]
    return out


_MISSING = object()


def configuration(spec, seed: int, config: int, factors: Mapping | None = None) -> dict:
    """Configuration ``config`` of ``seed`` for the experiment with these factor levels.

    Every parameter comes from its own stream (see the module notes), so the
    value does not depend on ``spec.configs`` nor on the other parameters;
    conditional parameters whose ``when`` fails are left out.
    """
    _need_entropy(spec)
    space = spec.space_for(factors or {})
    values = {
        name: draw(
            d,
            np.random.default_rng(
                np.random.SeedSequence(
                    spec.entropy,
                    spawn_key=parameter_key(seed, config, name, nested=spec.nested),
                )
            ),
        )
        for name, d in space.items()
    }
    return active(space, values)


def configurations(spec, factors: Mapping | None = None, *, scheme: int = CONFIG_SCHEME):
    """Every configuration of the design: ``{seed: [config_0, config_1, ...]}``.

    ``scheme`` 2 (the default) draws each configuration's parameters from their
    own streams (:func:`configuration`); scheme 1 is the sampling of stores
    made before it: each seed's configurations drawn as one sequence
    (nested), or one sequence shared by all seeds; its configuration ``j``
    changes with ``configs``.
    """
    _need_entropy(spec)
    if scheme == CONFIG_SCHEME:
        return {
            s: [configuration(spec, s, j, factors) for j in range(spec.configs)]
            for s in range(spec.seeds)
        }
    if scheme != 1:
        raise ExperimentError(f"unknown configuration scheme {scheme!r}; accepted: 1, 2.")
    space = spec.space_for(factors or {})
    if not spec.nested:
        rng = np.random.default_rng(
            np.random.SeedSequence(spec.entropy, spawn_key=config_key(0, nested=False))
        )
        shared = sample_configs(space, spec.configs, rng)
        return {s: shared for s in range(spec.seeds)}
    out = {}
    for s in range(spec.seeds):
        ss = np.random.SeedSequence(spec.entropy, spawn_key=config_key(s, nested=True))
        out[s] = sample_configs(space, spec.configs, np.random.default_rng(ss))
    return out


def _need_entropy(spec) -> None:
    if spec.entropy is None:
        raise ExperimentError(
            "the experiment has no root `entropy` yet; set one or let run() draw it."
        )


# -- seeding the libraries -------------------------------------------


def seed_everything(stream, deterministic: bool = False) -> int:
    """Seed Python's ``random``, numpy's legacy global state and PyTorch from a stream.

    Parameters
    ----------
    stream : numpy.random.SeedSequence or numpy.random.Generator
        A SeedSequence (its first 32-bit word is used, the sequence is not
        consumed) or a Generator (one 32-bit draw is consumed).
    deterministic : bool, default False
        Also ask PyTorch, where installed, for deterministic algorithms
        (``torch.use_deterministic_algorithms(True)``, cuDNN deterministic and
        not benchmarking, ``CUBLAS_WORKSPACE_CONFIG``).

    Returns
    -------
    int
        The 32-bit seed given to each library.
    """
    if isinstance(stream, np.random.SeedSequence):
        seed = int(stream.generate_state(1, dtype=np.uint32)[0])
    elif isinstance(stream, np.random.Generator):
        seed = int(stream.integers(0, 2**32, dtype=np.uint64))
    else:
        raise ExperimentError(
            "`stream` must be a numpy SeedSequence or Generator; got "
            f"{type(stream).__name__}."
        )
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - seeding the legacy global state is the point
    try:
        import torch
    except ImportError:
        return seed
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed


# -- what a trial function receives -------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class Trial:
    """One trial of the design, as the trial function receives it.

    Attributes
    ----------
    trial_id : int
        The trial's row id in the store.
    factors : dict
        The factor levels, e.g. ``{"model": "mlp", "optimizer": "adam"}``.
    config : dict
        The sampled hyper-parameter configuration.
    params : dict
        The experiment's constant ``[params]``.
    seed, config_index, rerun : int
        The trial's position in the design.
    config_label : str
        ``s{seed}_c{j}`` (nested) or ``c{j}`` (shared).
    seeds : dict
        Per source, the ``{"entropy", "spawn_key"}`` record of its stream.

    Methods :meth:`report` (learning curves) and :meth:`artifact` (small
    files) keep what the trial hands them; the runner writes it to the store
    with the trial's result.
    """

    trial_id: int
    factors: dict
    config: dict
    params: dict
    seed: int
    config_index: int
    config_label: str
    rerun: int
    seeds: dict
    _generators: dict = dataclasses.field(default_factory=dict, compare=False)
    _curves: list = dataclasses.field(default_factory=list, compare=False)
    _artifacts: dict = dataclasses.field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return (
            f"Trial(id={self.trial_id}, factors={self.factors}, seed={self.seed}, "
            f"config={self.config_label} {self.config}, rerun={self.rerun})"
        )

    def report(self, step: int, **metrics) -> None:
        """Record intermediate metrics at ``step`` (a learning curve).

        Parameters
        ----------
        step : int
            A non-negative step (epoch, iteration); reporting a step again
            replaces its values.
        **metrics : real numbers
            E.g. ``trial.report(epoch, loss=0.31, val_accuracy=0.88)``.
        """
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 0:
            raise ExperimentError(f"`step` must be an integer >= 0; got {step!r}.")
        if not metrics:
            raise ExperimentError("report() needs at least one metric, e.g. loss=0.3.")
        for name, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ExperimentError(
                    f"reported metric {name!r} is {type(value).__name__}; expected a real "
                    "number."
                )
            self._curves.append((int(step), name, float(value)))

    def artifact(self, name: str, data) -> None:
        """Keep a small file with the trial's result.

        Parameters
        ----------
        name : str
            A file name (no folders), e.g. ``"confusion.png"``.
        data : bytes or str or path-like
            The content, or the path of a file to read now.

        Artifacts up to ``vareval.experiment.store.ARTIFACT_INLINE_LIMIT``
        (1 MiB) are kept inside the store; larger ones are written beside it,
        in ``<store>.artifacts/<trial id>/<name>``.
        """
        if not isinstance(name, str) or not name or "/" in name or "\\" in name or (
            name in (".", "..")
        ):
            raise ExperimentError(
                f"artifact name {name!r} must be a plain file name (no folders)."
            )
        if isinstance(data, bytes | bytearray | memoryview):
            content = bytes(data)
        elif isinstance(data, str | os.PathLike):
            try:
                with open(data, "rb") as fh:
                    content = fh.read()
            except OSError as exc:
                raise ExperimentError(f"artifact {name!r}: cannot read {data!r}: {exc}.") from None
        else:
            raise ExperimentError(
                f"artifact {name!r}: `data` must be bytes or a file path; got "
                f"{type(data).__name__}."
            )
        self._artifacts[name] = content

    def _record(self, source: str) -> Mapping:
        try:
            return self.seeds[source]
        except KeyError:
            raise ExperimentError(
                f"source of randomness {source!r} is not declared; declared: "
                f"{', '.join(self.seeds)} (add it to [randomness] sources)."
            ) from None

    def seed_sequence(self, source: str) -> np.random.SeedSequence:
        """A fresh SeedSequence for ``source`` (the root of its stream)."""
        return seed_sequence(self._record(source))

    def rng(self, source: str) -> np.random.Generator:
        """The Generator of ``source``: the same object on every call in the trial."""
        gen = self._generators.get(source)
        if gen is None:
            gen = np.random.default_rng(self.seed_sequence(source))
            self._generators[source] = gen
        return gen

    def random_state(self, source: str) -> np.random.RandomState:
        """A fresh legacy ``RandomState`` (MT19937) on the stream of ``source``.

        For libraries that take ``random_state=`` (scikit-learn); it is seeded
        from the SeedSequence directly, not from an integer.
        """
        return np.random.RandomState(np.random.MT19937(self.seed_sequence(source)))

    def int_seed(self, source: str) -> int:
        """A 32-bit integer seed derived from the stream of ``source``."""
        return int(self.seed_sequence(source).generate_state(1, dtype=np.uint32)[0])

    def seed_everything(self, source: str, deterministic: bool = False) -> int:
        """Seed ``random``, numpy's global state and torch from ``source``.

        See :func:`seed_everything`.
        """
        return seed_everything(self.seed_sequence(source), deterministic=deterministic)
