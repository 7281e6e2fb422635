"""Declaring an experiment: a TOML file or the same as a frozen dataclass.

An experiment is a re-seeding design (DECoVaC): every combination of the fixed
factors' levels is an *experiment*; each is run for ``seeds`` seeds, with
``configs`` hyper-parameter configurations sampled from the search space (anew
for each seed when ``nested``, else shared), and every (configuration, seed)
run ``reruns`` times. The trial function is the user's code,
``package.module:function``; it receives a :class:`~vareval.experiment.streams.Trial`
and returns a mapping of metric names to numbers.

The TOML form::

    [experiment]
    name = "mlp-vs-logreg"
    trial = "trial:run"           # module:function; the file's folder is on the path
    # or any script: trial = { command = ["python", "train.py", "--lr", "{learning_rate}"] }
    seeds = 3
    configs = 2                   # per seed (nested = true) or shared
    nested = true
    reruns = 2
    rerun_mode = "same"           # or "independent"
    entropy = 20261129            # root entropy; drawn and stored if omitted
    timeout = 120                 # seconds per trial

    [factors]
    model = ["mlp", "logreg"]
    optimizer = ["sgd", "adam"]

    [space]
    learning_rate = { distribution = "log-uniform", low = 1e-4, high = 1e-1 }
    batch_size = { distribution = "choice", values = [32, 64, 128] }
    hidden = { distribution = "integer", low = 16, high = 64 }

    [space.model.mlp]             # parameters only the level "mlp" of factor model has
    momentum = { distribution = "uniform", low = 0.5, high = 0.99 }
    kernel = { distribution = "choice", values = ["rbf", "linear"] }
    gamma = { distribution = "log-uniform", low = 1e-4, high = 1.0, when = { kernel = "rbf" } }

    [randomness]
    sources = ["data_split", "init", "batch_order"]
    fixed = ["data_split"]        # the same stream for every seed
    split = "data_split"          # the source that draws the train/test split

    [params]                      # constants passed to every trial
    epochs = 10

    [resources]                   # per trial
    threads_per_trial = 1         # native threads (default: the worker's share of cores)
    gpus_per_trial = 1            # devices of --gpus per running trial
    num_cpus = 1                  # for the ray engine
    num_gpus = 0
    memory = "2GB"

    [runtime_env]                 # Ray's runtime_env for the run
    pip = ["scikit-learn"]

    [slurm]                       # for the slurm engine (docs/runner.md, "Clusters")
    partition = "gpu"
    time = "01:00:00"
    gpus_per_trial = 1
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import numbers
import re
import shlex
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from vareval.errors import ExperimentError

RERUN_MODES = ("same", "independent")
DISTRIBUTIONS = ("uniform", "log-uniform", "integer", "choice")
_DIST_ALIASES = {
    "uniform": "uniform",
    "log-uniform": "log-uniform",
    "loguniform": "log-uniform",
    "log_uniform": "log-uniform",
    "integer": "integer",
    "int": "integer",
    "randint": "integer",
    "choice": "choice",
    "categorical": "choice",
}
DEFAULT_SOURCES = ("data_split", "init", "batch_order")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_RESERVED = (
    "experiment",
    "seed",
    "config",
    "config_index",
    "rerun",
    "trial_id",
    "status",
)


@dataclasses.dataclass(frozen=True)
class Distribution:
    """One hyper-parameter's search distribution.

    ``uniform`` and ``log-uniform`` draw a float in ``[low, high)`` (the latter
    uniform in ``log``); ``integer`` draws an int in ``[low, high]`` inclusive;
    ``choice`` draws one of ``values`` with equal probability.
    """

    kind: str
    low: float | int | None = None
    high: float | int | None = None
    values: tuple = ()
    when: tuple = ()  # ((parameter, (allowed values...)), ...): a conditional parameter

    def to_dict(self) -> dict:
        """Return the TOML/JSON form of the distribution."""
        out = (
            {"distribution": "choice", "values": list(self.values)}
            if self.kind == "choice"
            else {"distribution": self.kind, "low": self.low, "high": self.high}
        )
        if self.when:
            out["when"] = {k: list(v) for k, v in self.when}
        return out


@dataclasses.dataclass(frozen=True)
class ExperimentSpec:
    """A re-seeding experiment, as declared in an ``experiment.toml``.

    Parameters
    ----------
    trial : str or mapping
        The trial function, ``package.module:function``, or a command:
        ``{"command": ["python", "train.py", "--lr", "{lr}"]}`` (see
        :mod:`vareval.experiment.execution`); a command is stored as that
        mapping and ``trial`` then holds its label ``command: python ...``.
    factors : mapping of str to sequence
        Fixed factors and their levels; every combination is an experiment.
    seeds : int
        Number of seed indices ``0 .. seeds-1``.
    configs : int, default 1
        Configurations sampled per seed (``nested``) or in all (shared).
    nested : bool, default True
        Sample configurations anew for each seed (as in DECoVaC) or share them.
    reruns : int, default 1
        Runs of each (experiment, seed, configuration).
    rerun_mode : {"same", "independent"}, default "same"
        ``"same"``: a rerun gets exactly the same streams, so reruns measure
        nondeterminism only (DECoVaC's meaning). ``"independent"``: each rerun
        gets fresh streams, so reruns are independent replications.
    space : mapping of str to Distribution
        The hyper-parameter search space every experiment shares.
    level_spaces : mapping
        ``{factor: {level: {parameter: Distribution}}}``: parameters only the
        experiments at that factor level have (``[space.model.forest]``).
    sources : tuple of str
        Named sources of randomness the trial consumes.
    fixed : tuple of str
        Sources whose stream is the same for every seed and rerun.
    split : str or None
        The source whose stream draws the train/test split, if the trial
        draws one: the split is then re-drawn with each seed unless the source
        is ``fixed`` (the share in the test set is ``params["test_size"]`` or
        ``params["test_fraction"]``). None: the declaration does not say, and
        the analyses state that they assume fixed splits.
    entropy : int or None
        Root entropy of every stream; ``None`` lets the runner draw one and
        record it in the store.
    timeout : float or None
        Seconds a trial may take before its worker is killed.
    params : mapping
        Constants passed to every trial as ``trial.params``.
    paths : tuple of str
        Folders put on ``sys.path`` before importing the trial function.
    name : str
        A label for people.
    resources : mapping
        Per-trial resources: ``threads_per_trial`` (native threads; default
        each worker's share of the cores), ``gpus_per_trial`` (devices per
        running trial); for the ray engine ``num_cpus``, ``num_gpus``,
        ``memory`` (bytes, or a string such as ``"8GB"`` or ``"512MiB"``).
    runtime_env : mapping
        Ray's ``runtime_env`` for the run (``pip``, ``env_vars``, ``working_dir`` ...).
    slurm : mapping
        Options of the slurm engine (``partition``, ``time``, ``gpus_per_trial``,
        ``trials_per_task`` ...; see :mod:`vareval.experiment.slurm`).

    The trial may also be a Python callable (a function defined in a script
    or notebook): it is recorded under ``module:qualname`` and shipped to the
    workers by value when it cannot be imported there (see :func:`run`).
    """

    trial: str
    factors: Mapping[str, tuple]
    seeds: int
    configs: int = 1
    nested: bool = True
    reruns: int = 1
    rerun_mode: str = "same"
    space: Mapping[str, Distribution] = dataclasses.field(default_factory=dict)
    level_spaces: Mapping = dataclasses.field(default_factory=dict)
    sources: tuple[str, ...] = DEFAULT_SOURCES
    fixed: tuple[str, ...] = ()
    split: str | None = None
    entropy: int | None = None
    timeout: float | None = None
    params: Mapping = dataclasses.field(default_factory=dict)
    paths: tuple[str, ...] = ()
    name: str = "experiment"
    resources: Mapping = dataclasses.field(default_factory=dict)
    runtime_env: Mapping = dataclasses.field(default_factory=dict)
    slurm: Mapping = dataclasses.field(default_factory=dict)
    _callable: object = dataclasses.field(default=None, compare=False, repr=False)
    _command: tuple | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if callable(self.trial):
            object.__setattr__(self, "_callable", self.trial)
            object.__setattr__(self, "trial", callable_label(self.trial))
        elif isinstance(self.trial, Mapping) or isinstance(self.trial, list | tuple):
            command = _check_command(self.trial)
            object.__setattr__(self, "_command", command)
            object.__setattr__(self, "trial", command_label(command))
        checked = _spec_iv(self)
        for key, value in checked.items():
            object.__setattr__(self, key, value)

    @property
    def callable(self):
        """The trial function when it was given as a Python callable, else None."""
        return self._callable

    @property
    def command(self) -> tuple | None:
        """The trial's command (argument templates) when it is a script, else None."""
        return self._command

    @property
    def cwd(self) -> str | None:
        """Where a command trial runs: the experiment file's folder (the first path)."""
        return self.paths[0] if self.paths else None

    def with_trial(self, fn) -> ExperimentSpec:
        """Return a copy whose trial is the callable ``fn``."""
        return dataclasses.replace(self, trial=fn, _command=None)

    def space_for(self, factors: Mapping) -> dict:
        """The search space of the experiment at these factor levels (shared first)."""
        space = dict(self.space)
        for factor, levels in self.level_spaces.items():
            level = factors.get(factor)
            if level is not None:
                space.update(levels.get(str(level), {}))
        return space

    # -- serialisation -------------------------------------------------
    def to_dict(self) -> dict:
        """Return the spec as JSON-ready values (the form stored in a run store)."""
        return {
            "name": self.name,
            "trial": {"command": list(self._command)} if self._command else self.trial,
            "factors": {k: list(v) for k, v in self.factors.items()},
            "seeds": self.seeds,
            "configs": self.configs,
            "nested": self.nested,
            "reruns": self.reruns,
            "rerun_mode": self.rerun_mode,
            "space": {k: d.to_dict() for k, d in self.space.items()},
            **(
                {
                    "level_spaces": {
                        f: {
                            lev: {k: d.to_dict() for k, d in sp.items()}
                            for lev, sp in levels.items()
                        }
                        for f, levels in self.level_spaces.items()
                    }
                }
                if self.level_spaces
                else {}
            ),
            "sources": list(self.sources),
            "fixed": list(self.fixed),
            **({"split": self.split} if self.split is not None else {}),
            "entropy": self.entropy,
            "timeout": self.timeout,
            "params": dict(self.params),
            "paths": list(self.paths),
            **({"resources": dict(self.resources)} if self.resources else {}),
            **({"runtime_env": dict(self.runtime_env)} if self.runtime_env else {}),
            **({"slurm": dict(self.slurm)} if self.slurm else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> ExperimentSpec:
        """Rebuild a spec from :meth:`to_dict` output."""
        data = dict(data)
        data["space"] = {
            k: _distribution(k, v) for k, v in data.get("space", {}).items()
        }
        data["level_spaces"] = {
            f: {lev: {k: _distribution(k, v) for k, v in sp.items()} for lev, sp in levels.items()}
            for f, levels in data.get("level_spaces", {}).items()
        }
        for key in ("sources", "fixed", "paths"):
            if key in data:
                data[key] = tuple(data[key])
        return cls(**data)

    def identity(self) -> dict:
        """The fields that define the trials (a store takes a spec if they match)."""
        d = self.to_dict()
        for key in ("name", "timeout", "paths", "resources", "runtime_env", "slurm", "split"):
            d.pop(key, None)
        d.setdefault("level_spaces", {})
        return d

    def with_entropy(self, entropy: int) -> ExperimentSpec:
        """Return a copy with the root entropy set."""
        return dataclasses.replace(self, entropy=entropy)

    def grown(self, *, seeds=None, configs=None, reruns=None) -> ExperimentSpec:
        """Return a copy with more seeds, configurations or reruns (None keeps)."""
        return dataclasses.replace(
            self,
            seeds=self.seeds if seeds is None else seeds,
            configs=self.configs if configs is None else configs,
            reruns=self.reruns if reruns is None else reruns,
        )

    @property
    def n_trials(self) -> int:
        """Number of trials in the grid."""
        return math.prod(len(v) for v in self.factors.values()) * (
            self.seeds * self.configs * self.reruns
        )


def _spec_iv(spec: ExperimentSpec) -> dict:
    """Validate every field of a spec and return the normalised values."""
    out = {}
    if spec.command is None and (
        not isinstance(spec.trial, str) or not _FUNCTION.match(spec.trial)
    ):
        raise ExperimentError(
            "`trial` must name a function as 'package.module:function' or a command "
            f"as {{ command = [\"python\", \"train.py\", ...] }}; got {spec.trial!r}."
        )
    if not isinstance(spec.factors, Mapping) or not spec.factors:
        raise ExperimentError(
            "`factors` must name at least one factor with its levels, e.g. "
            "model = ['mlp', 'logreg']."
        )
    factors = {}
    for name, levels in spec.factors.items():
        _check_name(name, "factor")
        if (
            isinstance(levels, str | bytes)
            or not hasattr(levels, "__len__")
            or not levels
        ):
            raise ExperimentError(
                f"factor {name!r} needs a non-empty list of levels; got {levels!r}."
            )
        levels = tuple(levels)
        for level in levels:
            if not isinstance(level, str | int | float | bool):
                raise ExperimentError(
                    f"factor {name!r}: level {level!r} must be a string or number."
                )
        if len({str(v) for v in levels}) != len(levels):
            raise ExperimentError(
                f"factor {name!r} has repeated levels: {list(levels)!r}."
            )
        factors[name] = levels
    out["factors"] = factors
    for key in ("seeds", "configs", "reruns"):
        value = getattr(spec, key)
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Integral)
            or value < 1
        ):
            raise ExperimentError(f"`{key}` must be an integer >= 1; got {value!r}.")
        out[key] = int(value)
    if not isinstance(spec.nested, bool):
        raise ExperimentError(f"`nested` must be true or false; got {spec.nested!r}.")
    if spec.rerun_mode not in RERUN_MODES:
        raise ExperimentError(
            f"`rerun_mode` must be 'same' (reruns measure nondeterminism) or "
            f"'independent' (fresh streams per rerun); got {spec.rerun_mode!r}."
        )
    space = _check_space(spec.space, factors, "[space]")
    level_spaces = _check_level_spaces(spec.level_spaces, factors, space)
    out["level_spaces"] = level_spaces
    if not space and not level_spaces and out["configs"] > 1:
        raise ExperimentError(
            f"the search space [space] is empty, so all {out['configs']} "
            "configurations "
            "would be identical; add a parameter (uniform, log-uniform, integer, "
            "choice) "
            "or set configs = 1."
        )
    out["space"] = space
    sources = tuple(spec.sources)
    if not sources:
        raise ExperimentError(
            "`sources` must name at least one source of randomness, e.g. "
            "['data_split', 'init']."
        )
    for s in sources:
        _check_name(s, "source of randomness")
    if len(set(sources)) != len(sources):
        raise ExperimentError(f"`sources` has repeated names: {list(sources)!r}.")
    out["sources"] = sources
    fixed = tuple(spec.fixed)
    unknown = [s for s in fixed if s not in sources]
    if unknown:
        raise ExperimentError(
            f"`fixed` names {unknown[0]!r}, which is not a declared source "
            f"(sources: {', '.join(sources)})."
        )
    out["fixed"] = fixed
    if spec.split is not None and spec.split not in sources:
        raise ExperimentError(
            f"`split` names {spec.split!r}, which is not a declared source "
            f"(sources: {', '.join(sources)})."
        )
    if spec.entropy is not None and (
        isinstance(spec.entropy, bool)
        or not isinstance(spec.entropy, numbers.Integral)
        or spec.entropy < 0
    ):
        raise ExperimentError(
            f"`entropy` must be a non-negative integer; got {spec.entropy!r}."
        )
    if spec.timeout is not None:
        if (
            isinstance(spec.timeout, bool)
            or not isinstance(spec.timeout, numbers.Real)
            or not 0 < spec.timeout < math.inf
        ):
            raise ExperimentError(
                f"`timeout` must be a finite positive number of seconds (leave it out "
                f"for no limit); got {spec.timeout!r}."
            )
        out["timeout"] = float(spec.timeout)
    if not isinstance(spec.params, Mapping):
        raise ExperimentError(
            f"`params` must be a table of constants; got {spec.params!r}."
        )
    try:
        json.dumps(dict(spec.params))
    except (TypeError, ValueError):
        raise ExperimentError(
            "`params` must hold only JSON values (numbers, strings, lists)."
        ) from None
    out["params"] = dict(spec.params)
    out["paths"] = tuple(str(p) for p in spec.paths)
    _check_grid_size(factors, out["seeds"], out["configs"], out["reruns"])
    out["resources"] = _check_resources(spec.resources)
    if spec.command is not None:
        _check_placeholders(spec.command, factors, space, level_spaces, out["params"])
    if not isinstance(spec.runtime_env, Mapping):
        raise ExperimentError(
            f"`runtime_env` must be a table (Ray's runtime_env); got {spec.runtime_env!r}."
        )
    out["runtime_env"] = dict(spec.runtime_env)
    from vareval.experiment.slurm import check_options

    out["slurm"] = check_options(spec.slurm)
    return out


def _check_command(raw) -> tuple:
    """``{command = [...]}`` (a list of arguments, or one string split as a shell would)."""
    if isinstance(raw, Mapping):
        extra = set(raw) - {"command"}
        if extra or "command" not in raw:
            raise ExperimentError(
                "`trial` as a table takes one key, `command` (a list of arguments); got "
                f"{sorted(raw)!r}."
            )
        raw = raw["command"]
    if isinstance(raw, str):
        raw = shlex.split(raw)
    if (
        not isinstance(raw, list | tuple)
        or not raw
        or not all(isinstance(a, str) for a in raw)
    ):
        raise ExperimentError(
            "`trial` command must be a non-empty list of strings, e.g. "
            f'["python", "train.py", "--lr", "{{learning_rate}}"]; got {raw!r}.'
        )
    return tuple(raw)


def command_label(command) -> str:
    """How a command trial is named for people: ``command: python train.py ...``."""
    return "command: " + shlex.join(command)


def _check_placeholders(command, factors, space, level_spaces, params) -> None:
    """Every ``{name}`` of a command must be something a trial has a value for."""
    from vareval.experiment.execution import BUILTIN_FIELDS, placeholders

    try:
        names = placeholders(command)
    except ValueError as exc:
        raise ExperimentError(
            f"`trial` command: {exc} (write a literal brace as {{{{ or }}}})."
        ) from None
    known = {*factors, *space, *params, *BUILTIN_FIELDS}
    known |= {n for levels in level_spaces.values() for sp in levels.values() for n in sp}
    for name in names:
        if name not in known:
            raise ExperimentError(
                f"`trial` command placeholder {{{name}}} names no factor, search-space "
                f"parameter or param; known: {', '.join(sorted(known))}."
            )


def callable_label(fn) -> str:
    """``module:qualname`` of a callable, the name a store records for it."""
    module = getattr(fn, "__module__", None) or "__main__"
    name = re.sub(r"\W", "_", getattr(fn, "__qualname__", None) or type(fn).__name__)
    return f"{module}:{name if re.match(r'[A-Za-z_]', name) else '_' + name}"


def _check_space(raw, factors, where: str, before=()) -> dict:
    if not isinstance(raw, Mapping):
        raise ExperimentError(f"{where} must be a table of parameters; got {raw!r}.")
    space = {}
    for name, dist in dict(raw).items():
        _check_name(name, "search-space parameter")
        if name in factors:
            raise ExperimentError(
                f"search-space parameter {name!r} is also a factor; rename one of them."
            )
        space[name] = dist if isinstance(dist, Distribution) else _distribution(name, dist)
        _check_distribution(name, space[name])
        for other, _ in space[name].when:
            if (other not in space and other not in before) or other == name:
                raise ExperimentError(
                    f"{where} {name}: `when` names {other!r}, which is not a parameter "
                    "declared before it (in this space or the shared [space])."
                )
    return space


def _check_level_spaces(raw, factors, shared) -> dict:
    """``{factor: {level: {param: dist}}}`` checked against the factors and [space]."""
    if not isinstance(raw, Mapping):
        raise ExperimentError(f"`level_spaces` must be a table; got {raw!r}.")
    out = {}
    for factor, levels in raw.items():
        if factor not in factors:
            raise ExperimentError(
                f"[space.{factor}] names no factor; factors: {', '.join(factors)}."
            )
        if not isinstance(levels, Mapping):
            raise ExperimentError(f"[space.{factor}] must hold one table per level.")
        known = {str(v) for v in factors[factor]}
        out[factor] = {}
        for level, space in levels.items():
            if str(level) not in known:
                raise ExperimentError(
                    f"[space.{factor}.{level}]: {level!r} is not a level of {factor} "
                    f"({', '.join(sorted(known))})."
                )
            where = f"[space.{factor}.{level}]"
            checked = _check_space(space, factors, where, before=shared)
            both = sorted(set(checked) & set(shared))
            if both:
                raise ExperimentError(
                    f"{where} {both[0]}: also declared in the shared [space]; declare it "
                    "in one place."
                )
            out[factor][str(level)] = checked
    taken: dict[str, str] = {}
    for factor, levels in out.items():
        for name in {n for sp in levels.values() for n in sp}:
            if name in taken:
                raise ExperimentError(
                    f"search-space parameter {name!r} is declared under both "
                    f"[space.{taken[name]}] and [space.{factor}]; a parameter belongs to "
                    "one factor's levels."
                )
            taken[name] = factor
    return out


RESOURCES = ("num_cpus", "num_gpus", "memory", "threads_per_trial", "gpus_per_trial")
_MEMORY = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def memory_bytes(value) -> int:
    """``8GB`` (10^9), ``512MiB`` (2^20) or a number of bytes, as an int."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value > 0:
        return int(value)
    m = _MEMORY.match(str(value)) if isinstance(value, str) else None
    if not m or float(m.group(1)) <= 0:
        raise ExperimentError(
            f"[resources] memory must be a positive number of bytes or a size such as "
            f"'8GB' or '512MiB'; got {value!r}."
        )
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "B").lower()])


def _check_resources(raw) -> dict:
    if not isinstance(raw, Mapping):
        raise ExperimentError(f"[resources] must be a table; got {raw!r}.")
    bad = set(raw) - set(RESOURCES)
    if bad:
        raise ExperimentError(
            f"[resources] unknown key {sorted(bad)[0]!r}; accepted: {', '.join(RESOURCES)}."
        )
    out = dict(raw)
    for key in ("threads_per_trial", "gpus_per_trial"):
        v = out.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v < 1e6
        ):
            raise ExperimentError(f"[resources] {key} must be an integer >= 1; got {v!r}.")
    for key in ("num_cpus", "num_gpus"):
        v = out.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < 1e6
        ):
            raise ExperimentError(f"[resources] {key} must be a number >= 0; got {v!r}.")
    if "memory" in out:
        memory_bytes(out["memory"])
    return out


MAX_TRIALS = 10**7
_STORE_BYTES_PER_TRIAL = 500  # a trial's row and index entries, with a few metrics
_INSERT_SECONDS_PER_TRIAL = 5e-5  # writing its row when the grid is first stored


def _check_grid_size(factors, seeds: int, configs: int, reruns: int) -> None:
    """Refuse up front a grid too large to store (it would fill the disk or take hours)."""
    experiments = math.prod(len(v) for v in factors.values())
    n = experiments * seeds * configs * reruns
    if n > MAX_TRIALS:
        from vareval.stats._checks import human_bytes, human_seconds

        raise ExperimentError(
            f"the design has {n:,} trials ({experiments} experiments x {seeds:,} seeds "
            f"x {configs:,} configs x {reruns:,} reruns); its store would need about "
            f"{human_bytes(n * _STORE_BYTES_PER_TRIAL)} and writing the grid at least "
            f"{human_seconds(n * _INSERT_SECONDS_PER_TRIAL)}, before any trial runs; "
            f"at most {MAX_TRIALS:,} trials per store are accepted."
        )


def _check_name(name, what: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ExperimentError(
            f"{what} name {name!r} must be an identifier (letters, digits, "
            "underscores)."
        )
    if name in _RESERVED:
        raise ExperimentError(
            f"{what} name {name!r} is reserved for the design's own columns "
            f"({', '.join(_RESERVED)})."
        )


def _distribution(name: str, raw) -> Distribution:
    """Parse ``{distribution = ..., low/high | values}`` into a Distribution."""
    if isinstance(raw, Distribution):
        return raw
    if not isinstance(raw, Mapping) or "distribution" not in raw:
        raise ExperimentError(
            f'[space] {name}: expected a table like {{ distribution = "uniform", '
            f"low = 0.0, high = 1.0 }}; got {raw!r}."
        )
    kind = _DIST_ALIASES.get(str(raw["distribution"]).lower())
    if kind is None:
        raise ExperimentError(
            f"[space] {name}: unknown distribution {raw['distribution']!r}; "
            f"accepted: {', '.join(DISTRIBUTIONS)}."
        )
    allowed = (
        {"distribution", "values", "when"}
        if kind == "choice"
        else {"distribution", "low", "high", "when"}
    )
    extra = set(raw) - allowed
    if extra:
        expected = "values" if kind == "choice" else "low, high"
        raise ExperimentError(
            f"[space] {name}: unexpected key(s) {', '.join(sorted(extra))} for "
            f"{kind}; expected: {expected}."
        )
    if kind == "choice":
        values = raw.get("values")
        if not isinstance(values, list | tuple):
            raise ExperimentError(
                f"[space] {name}: choice needs a list `values`; got {values!r}."
            )
        return Distribution(kind, values=tuple(values), when=_when(name, raw))
    if "low" not in raw or "high" not in raw:
        raise ExperimentError(f"[space] {name}: {kind} needs both `low` and `high`.")
    return Distribution(kind, low=raw["low"], high=raw["high"], when=_when(name, raw))


def _when(name: str, raw: Mapping) -> tuple:
    """``when = { kernel = "rbf" }`` or ``{ kernel = ["rbf", "poly"] }`` as a tuple."""
    when = raw.get("when", {})
    if not isinstance(when, Mapping):
        raise ExperimentError(
            f"[space] {name}: `when` must be a table such as {{ kernel = \"rbf\" }}; "
            f"got {when!r}."
        )
    return tuple(
        (str(k), tuple(v) if isinstance(v, list | tuple) else (v,)) for k, v in when.items()
    )


def _check_distribution(name: str, d: Distribution) -> None:
    if d.kind not in DISTRIBUTIONS:
        raise ExperimentError(
            f"[space] {name}: unknown distribution {d.kind!r}; accepted: "
            f"{', '.join(DISTRIBUTIONS)}."
        )
    if d.kind == "choice":
        if len(d.values) == 0:
            raise ExperimentError(
                f"[space] {name}: choice has an empty list of values."
            )
        for v in d.values:
            try:
                json.dumps(v)
            except (TypeError, ValueError):
                raise ExperimentError(
                    f"[space] {name}: choice value {v!r} is not a JSON value."
                ) from None
        return
    for bound in ("low", "high"):
        v = getattr(d, bound)
        if (
            isinstance(v, bool)
            or not isinstance(v, numbers.Real)
            or not math.isfinite(v)
        ):
            raise ExperimentError(
                f"[space] {name}: `{bound}` must be a finite number; got {v!r}."
            )
        if d.kind == "integer" and not isinstance(v, numbers.Integral):
            raise ExperimentError(
                f"[space] {name}: integer `{bound}` must be an integer; got {v!r}."
            )
    if d.kind == "integer" and d.low > d.high:
        raise ExperimentError(
            f"[space] {name}: integer needs low <= high; got low = {d.low}, high = "
            f"{d.high}."
        )
    if d.kind != "integer" and not d.low < d.high:
        raise ExperimentError(
            f"[space] {name}: {d.kind} needs low < high; got low = {d.low}, high = "
            f"{d.high}."
        )
    if d.kind == "log-uniform" and d.low <= 0:
        raise ExperimentError(
            f"[space] {name}: log-uniform needs 0 < low < high; got low = {d.low}."
        )


# -- TOML --------------------------------------------------------------

_TOP = {
    "experiment", "factors", "space", "randomness", "params", "resources", "runtime_env", "slurm"
}
_EXPERIMENT_KEYS = {
    "name",
    "trial",
    "seeds",
    "configs",
    "nested",
    "reruns",
    "rerun_mode",
    "entropy",
    "timeout",
    "path",
}
_RANDOMNESS_KEYS = {"sources", "fixed", "split"}


def load_spec(path) -> ExperimentSpec:
    """Read and validate an experiment declaration from a TOML file.

    Parameters
    ----------
    path : str or path-like
        The ``experiment.toml`` file. Its folder is put first on the trial's
        ``sys.path`` (plus any folders named by ``path`` in ``[experiment]``,
        relative to the file).

    Raises
    ------
    ExperimentError
        For a missing file, a TOML syntax error (with line and column) or an
        invalid declaration (naming the table and key, and its line where it
        can be found).
    """
    path = Path(path)
    if not path.is_file():
        raise ExperimentError(
            f"experiment file '{path}' does not exist or is not a file."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ExperimentError(
            f"experiment file '{path}' is not UTF-8 text (byte {exc.object[exc.start]:#04x} "
            f"at offset {exc.start}); an experiment.toml must be UTF-8."
        ) from None
    except OSError as exc:
        raise ExperimentError(
            f"experiment file '{path}' could not be read: {exc.strerror}."
        ) from None
    return loads_spec(text, source=str(path), base=path.resolve().parent)


def loads_spec(text: str, *, source: str = "<string>", base=None) -> ExperimentSpec:
    """Parse an experiment declaration from TOML text (see :func:`load_spec`)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{source}: TOML syntax error: {exc}") from None
    try:
        return _spec_from_toml(doc, base)
    except ExperimentError as exc:
        where = _locate(text, str(exc))
        raise ExperimentError(f"{source}{where}: {exc}") from None


def _spec_from_toml(doc: dict, base) -> ExperimentSpec:
    unknown = set(doc) - _TOP
    if unknown:
        raise ExperimentError(
            f"unknown table or key {sorted(unknown)[0]!r}; accepted: "
            f"{', '.join('[' + t + ']' for t in sorted(_TOP))}."
        )
    exp = doc.get("experiment")
    if not isinstance(exp, dict):
        raise ExperimentError(
            "missing table [experiment] with at least `trial` and `seeds`."
        )
    bad = set(exp) - _EXPERIMENT_KEYS
    if bad:
        raise ExperimentError(
            f"[experiment] unknown key {sorted(bad)[0]!r}; accepted: "
            f"{', '.join(sorted(_EXPERIMENT_KEYS))}."
        )
    for key in ("trial", "seeds"):
        if key not in exp:
            raise ExperimentError(f"[experiment] is missing `{key}`.")
    for table in ("factors", "space", "randomness", "params"):
        if not isinstance(doc.get(table, {}), dict):
            raise ExperimentError(
                f"`{table}` must be a table [{table}]; got {doc[table]!r}."
            )
    rnd = doc.get("randomness", {})
    bad = set(rnd) - _RANDOMNESS_KEYS
    if bad:
        raise ExperimentError(
            f"[randomness] unknown key {sorted(bad)[0]!r}; accepted: sources, fixed, "
            "split."
        )
    for key in ("sources", "fixed"):
        if not isinstance(rnd.get(key, []), list):
            raise ExperimentError(
                f"[randomness] `{key}` must be a list of names; got {rnd[key]!r}."
            )
    raw_paths = exp.get("path", [])
    raw_paths = [raw_paths] if isinstance(raw_paths, str) else raw_paths
    if not isinstance(raw_paths, list) or not all(isinstance(p, str) for p in raw_paths):
        raise ExperimentError(
            "[experiment] `path` must be a folder or a list of folders (strings); "
            f"got {exp['path']!r}."
        )
    paths = []
    if base is not None:
        paths.append(str(base))
        paths += [str((Path(base) / p).resolve()) for p in raw_paths]
    else:
        paths += [str(p) for p in raw_paths]
    space = doc.get("space", {})
    factors = doc.get("factors", {})
    level_spaces = {}
    if isinstance(space, dict) and isinstance(factors, dict):
        level_spaces = {
            k: v
            for k, v in space.items()
            if k in factors and isinstance(v, dict) and "distribution" not in v
        }
        space = {k: v for k, v in space.items() if k not in level_spaces}
    return ExperimentSpec(
        trial=exp["trial"],
        factors=doc.get("factors", {}),
        seeds=exp["seeds"],
        configs=exp.get("configs", 1),
        nested=exp.get("nested", True),
        reruns=exp.get("reruns", 1),
        rerun_mode=exp.get("rerun_mode", "same"),
        space={k: _distribution(k, v) for k, v in space.items()},
        level_spaces=level_spaces,
        sources=tuple(rnd.get("sources", DEFAULT_SOURCES)),
        fixed=tuple(rnd.get("fixed", ())),
        split=rnd.get("split"),
        entropy=exp.get("entropy"),
        timeout=exp.get("timeout"),
        params=doc.get("params", {}),
        paths=tuple(dict.fromkeys(paths)),
        name=str(exp.get("name", "experiment")),
        resources=doc.get("resources", {}),
        runtime_env=doc.get("runtime_env", {}),
        slurm=doc.get("slurm", {}),
    )


def _locate(text: str, message: str) -> str:
    """Best effort: the line where the key named in an error message is defined."""
    m = re.match(r"\[space\] (\w+):", message) or re.search(r"`(\w+)`", message)
    m = m or re.search(r"(?:factor|name) '(\w+)'", message)
    if not m:
        return ""
    key = re.escape(m.group(1))
    for i, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"\s*{key}\s*=", line):
            return f", line {i}"
    return ""


# -- the trial function -----------------------------------------------


def resolve_function(path: str, paths=()):
    """Import ``package.module:function`` (with ``paths`` on ``sys.path``).

    Raises
    ------
    ExperimentError
        If the module cannot be imported, lacks the attribute, or it is not callable.
    """
    for p in reversed(tuple(paths)):
        if p not in sys.path:
            sys.path.insert(0, p)
    module_name, _, func_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ExperimentError(
            f"trial function {path!r}: module {exc.name!r} not found "
            f"(searched the experiment folder and sys.path)."
        ) from None
    except Exception as exc:  # the user's module raised while importing
        raise ExperimentError(
            f"trial function {path!r}: importing {module_name!r} raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
    fn = getattr(module, func_name, None)
    if fn is None:
        raise ExperimentError(
            f"trial function {path!r}: module {module_name!r} has no attribute "
            f"{func_name!r}."
        )
    if not callable(fn):
        raise ExperimentError(f"trial function {path!r} is not callable.")
    return fn
