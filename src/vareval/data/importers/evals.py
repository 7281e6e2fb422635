"""Import language-model eval logs: inspect_ai eval logs and lm-evaluation-harness samples.

Both give one row per answer, the table ``vareval evals`` reads:

- ``model``, ``task``, ``question`` (the sample id / doc id, as text);
- ``run`` (inspect_ai: the eval's run id; lm-evaluation-harness: the run's
  date stamp) and ``log`` (the file's name): a run's identity, so variants
  of one model (prompts, shots) can be told apart or compared (``model="run"``);
- ``epoch`` (inspect_ai: the k-th sample of the question, from 1) or
  ``filter`` (lm-evaluation-harness: the response filter a score is for);
- ``group`` (lm-evaluation-harness: the innermost group that lists the task in the
  results' ``group_subtasks``, '' for a task in no group); ``df.attrs["groups"]`` maps
  every group, outer ones included, to its tasks (subgroups expanded), in the harness'
  order;
- one numeric column per score: inspect_ai's scorers (``C``/``I``/``P``/``N``
  read as 1/0/0.5/0, as inspect_ai's ``value_to_float``; a dict-valued score
  gives ``scorer.key`` columns), lm-evaluation-harness' metrics (``acc``,
  ``exact_match`` ...); their names are in ``df.attrs["scores"]``;
- ``status``: ``done``, or ``failed`` for an errored sample (its scores are
  empty and ``error`` holds the message): errored samples are rows, never
  dropped;
- ``answer`` (inspect_ai: the scorer's answer) or ``response`` (the filtered
  response, as JSON text);
- the sample's metadata (inspect_ai) or the document's fields
  (lm-evaluation-harness) as columns, so a passage or subject can be the
  cluster; a name that collides with the columns above is prefixed
  ``metadata.`` / ``doc.``. Values that are not scalars are JSON text.

``.eval`` files are zip archives whose members inspect_ai compresses with
zstd (older logs: deflate); they are read here with :mod:`zipfile` and
``zstandard``, without inspect-ai, and the samples sorted as inspect_ai's
``read_eval_log`` sorts them (by epoch, then id). ``.json`` logs are read
with the standard library. Every field is checked as it is read: a file that
is not what the harness writes is refused in one line naming the file, the
sample (or line) and the field.
"""

from __future__ import annotations

import json
import math
import struct
import zipfile
import zlib
from pathlib import Path

from vareval.errors import DataError

_INSPECT_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_FIXED = ("model", "task", "question", "epoch", "filter", "status", "error", "answer",
          "response", "run", "log", "group")
# What reading a damaged archive member can raise: zlib, zipfile (an unknown
# compression method), struct, a short read.
_ARCHIVE_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
                   struct.error, ValueError, RuntimeError)


def _kind(value) -> str:
    """The JSON type of ``value`` in words, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    return "a list" if isinstance(value, list) else "an object"


def _need(value, types, where: str, field: str, accepted: str):
    """``value`` if it is of ``types`` (a bool is not a number), else one line naming it."""
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
        return value
    raise DataError(f"{where}: field {field!r} is {_kind(value)}; expected {accepted}.")


def _loads(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{where}: not JSON ({err}).") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read.") from None


def _text(data: bytes, where: str) -> str:
    """UTF-8 text, or one line naming the line and byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataError(
            f"{where}, line {line}: byte 0x{data[err.start]:02x} is not UTF-8; "
            "the harnesses write UTF-8 text."
        ) from None


def _cell(value):
    """A scalar as is (None stays missing); lists and dicts as JSON text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _score_value(value, where: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value in _INSPECT_VALUES:
            return _INSPECT_VALUES[value]
        try:
            return float(value)
        except ValueError:
            pass
    raise DataError(
        f"{where}: score {_kind(value)} is not a number nor one of C, I, P, N; "
        "vareval reads numeric scores only."
    )


def _extras(row: dict, fields: dict, prefix: str) -> None:
    for key, value in (fields or {}).items():
        name = key if key not in _FIXED and key not in row else f"{prefix}.{key}"
        row[name] = _cell(value)


def _frame(rows: list[dict], scores: list[str], source: str):
    import pandas as pd

    if not rows:
        raise DataError(f"{source} holds no samples.")
    for row in rows:
        for col in scores:
            row.setdefault(col, None)
            if isinstance(row[col], float) and math.isnan(row[col]):
                row[col] = None
    df = pd.DataFrame.from_records(rows)
    for col in scores:
        df[col] = pd.to_numeric(df[col], errors="raise").astype(float)
    df.attrs["scores"] = scores
    df.attrs["source"] = source
    return df


# --- inspect_ai -------------------------------------------------------------------


def _inspect_log(path: Path) -> tuple[dict, list]:
    """The log's ``eval`` header and its samples, each checked to be an object."""
    if path.suffix != ".json":
        try:
            with zipfile.ZipFile(path) as archive:
                return _eval_archive(archive, path)
        except _ARCHIVE_ERRORS as err:
            if isinstance(err, DataError):
                raise
            raise DataError(f"{path}: not a readable inspect_ai .eval log ({err}).") from None
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: not a readable inspect_ai JSON log ({err}).") from None
    log = _need(_loads(_text(data, str(path)), str(path)), dict, str(path), "(the log)",
                "an object with 'eval' and 'samples'")
    if "eval" not in log:
        raise DataError(f"{path}: not an inspect_ai log (no 'eval' header).")
    samples = log.get("samples")
    if samples is None:
        raise DataError(
            f"{path}: the log holds no samples (was it written with --no-log-samples?)."
        )
    samples = _need(samples, list, str(path), "samples", "a list of samples")
    return log["eval"], samples


def _eval_archive(archive: zipfile.ZipFile, path: Path) -> tuple[dict, list]:
    # A re-logged sample appends a second member of the same name: the last one
    # counts, as in inspect_ai's reader.
    members = {info.filename: info for info in archive.infolist()}
    # header.json is written when the run ends; a run cut short has only the journal.
    head = next((n for n in ("header.json", "_journal/start.json") if n in members), None)
    if head is None:
        raise DataError(f"{path}: not an inspect_ai log (no header.json in the archive).")
    header = _need(_json_member(archive, members[head], path), dict, f"{path}: {head}",
                   "(the header)", "an object with an 'eval' field")
    if "eval" not in header:
        raise DataError(f"{path}: not an inspect_ai log (no 'eval' header).")
    samples = [_json_member(archive, info, path) for name, info in members.items()
               if name.startswith("samples/") and name.endswith(".json")]
    if not samples:
        raise DataError(
            f"{path}: the log holds no samples (was it written with --no-log-samples?)."
        )
    for name, sample in zip([n for n in members if n.startswith("samples/")
                             and n.endswith(".json")], samples, strict=True):
        _need(sample, dict, f"{path}: {name}", "(the sample)", "an object")
    samples.sort(key=lambda s: (_epoch(s, path), _sort_id(s.get("id"))))
    return header["eval"], samples


def _json_member(archive, info, path):
    where = f"{path}: {info.filename}"
    try:
        data = _member(archive, info)
    except _ARCHIVE_ERRORS as err:
        raise DataError(f"{path}: not a readable inspect_ai .eval log "
                        f"(member {info.filename}: {err}).") from None
    return _loads(_text(data, where), where)


def _epoch(sample: dict, path) -> int:
    epoch = sample.get("epoch")
    if epoch is None:
        return 1
    where = f"{path}: sample {sample.get('id')!r}"
    _need(epoch, int, where, "epoch", "a whole number from 1")
    if epoch < 1:
        raise DataError(f"{where}: field 'epoch' is {epoch}; expected a whole number from 1.")
    return epoch


def _sort_id(sample_id) -> str:
    """inspect_ai's order: string ids as they are, numbers zero-padded."""
    return sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20)


_ZSTD = 93  # the zip compression method number of Zstandard


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One member's bytes; zstd members (which this Python's zipfile lacks) by hand."""
    if info.compress_type != _ZSTD or hasattr(zipfile, "ZIP_ZSTANDARD"):
        return archive.read(info)
    import zstandard

    fp = archive.fp
    fp.seek(info.header_offset)
    local = fp.read(30)  # the local file header; its name and extra lengths end it
    if local[:4] != b"PK\x03\x04":
        raise ValueError(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    try:
        data = zstandard.ZstdDecompressor().decompress(
            fp.read(info.compress_size), max_output_size=info.file_size)
    except zstandard.ZstdError as err:  # not a ValueError: the caller's one line needs it
        raise ValueError(f"{info.filename}: {err}") from None
    if zlib.crc32(data) != info.CRC:
        raise ValueError(f"CRC mismatch in {info.filename}")
    return data


def _header(header, path: Path) -> tuple[str, str, str]:
    """The model, task and run identity, each checked to be text."""
    where = f"{path}: header"
    header = _need(header, dict, where, "eval", "an object naming the model and task")
    model = _need(header.get("model"), str, where, "eval.model", "the model's name")
    if not model:
        raise DataError(f"{where}: field 'eval.model' is empty; expected the model's name.")
    task = _need(header.get("task", ""), str, where, "eval.task", "the task's name")
    run = header.get("run_id") or header.get("eval_id") or path.name
    return model, task, _need(run, str, where, "eval.run_id", "text")


def from_inspect(path):
    """Read an inspect_ai eval log (``.eval`` or ``.json``) into one row per answer.

    Parameters
    ----------
    path : str or Path
        The log file.

    Returns
    -------
    pandas.DataFrame
        See the module docstring. Every sample and epoch is a row; an errored
        sample is a row with ``status = "failed"``, its ``error`` and empty scores.
    """
    path = Path(path)
    header, samples = _inspect_log(path)
    model, task, run = _header(header, path)
    rows, scores = [], []
    for i, s in enumerate(samples, 1):
        _need(s, dict, f"{path}: sample {i}", "(the sample)", "an object")
        sid = _need(s.get("id"), (str, int), f"{path}: sample {i}", "id", "text or a number")
        row = {"model": model, "task": task, "run": run, "log": path.name,
               "question": str(sid), "epoch": _epoch(s, path)}
        where = f"{path}: sample {row['question']!r} epoch {row['epoch']}"
        error = _need(s.get("error"), (dict, str, type(None)), where, "error",
                      "an object, text or null")
        row["status"] = "failed" if error else "done"
        row["error"] = str((error.get("message") if isinstance(error, dict) else error) or "")
        answers = []
        given = _need(s.get("scores") or {}, dict, where, "scores",
                      "an object of scorer names")
        for name, score in given.items():
            value = score.get("value") if isinstance(score, dict) else score
            field = f"{where}, field 'scores.{name}'"
            parts = value.items() if isinstance(value, dict) else [(None, value)]
            for key, v in parts:
                col = name if key is None else f"{name}.{key}"
                if col not in scores:
                    scores.append(col)
                row[col] = None if v is None else _score_value(v, field)
            if isinstance(score, dict) and score.get("answer") is not None:
                answers.append(str(score["answer"]))
        row["answer"] = answers[0] if answers else ""
        _extras(row, _need(s.get("metadata") or {}, dict, where, "metadata", "an object"),
                "metadata")
        rows.append(row)
    return _frame(rows, scores, f"inspect_ai log {path.name}")


# --- lm-evaluation-harness -----------------------------------------------------------


def _results(folder: Path, date: str) -> dict:
    """The ``results_<date>.json`` of a run (else the newest beside it), or {}."""
    found = sorted(folder.glob("results_*.json"))
    own = [f for f in found if f.stem == f"results_{date}"]
    if not (own or found):
        return {}
    file = (own or found)[-1]
    try:
        data = file.read_bytes()
    except OSError as err:
        raise DataError(f"{file}: not a readable results file ({err}).") from None
    results = _loads(_text(data, str(file)), str(file))
    return _need(results, dict, str(file), "(the results)", "an object with 'results'")


def _lm_eval_model(results: dict, folder: Path) -> str:
    config = results.get("config") or {}
    if not isinstance(config, dict):
        raise DataError(f"{folder}: results field 'config' is {_kind(config)}; expected an object.")
    name = results.get("model_name") or config.get("model_args") or config.get("model")
    return str(name) if name else folder.name


def from_lm_eval(path):
    """Read lm-evaluation-harness ``--log_samples`` output into one row per answer.

    Parameters
    ----------
    path : str or Path
        A ``samples_<task>_<date>.jsonl`` file; the folder holding them beside
        ``results_<date>.json`` (which names the model); or lm-evaluation-harness'
        ``--output_path`` folder, with one such folder per model one level down.

    Returns
    -------
    pandas.DataFrame
        See the module docstring: a row per document and filter, a column per
        metric the harness scored on it. ``run`` is the run's date stamp, so two
        runs of one model (0-shot, 5-shot) in one folder stay apart.
    """
    path = Path(path)
    files = [path] if path.is_file() else _samples_files(path)
    rows, scores, groups = [], [], {}
    for file in files:
        date = _date_of(file)
        results = _results(file.parent, date)
        model = _lm_eval_model(results, file.parent)
        own = _group_subtasks(results, file.parent)
        for group, members in own.items():
            groups.setdefault(group, [m for m in members if m not in groups.get(group, ())])
        parent = _innermost_groups(own)
        found = _lm_eval_rows(file, model, date, scores)
        for row in found:
            row["group"] = parent.get(row["task"], "")
        rows += found
    df = _frame(rows, scores, f"lm-evaluation-harness samples in {path}")
    tasks = set(df["task"])
    df.attrs["groups"] = {g: leaves for g in groups
                          if (leaves := [t for t in group_tasks(groups, g) if t in tasks])}
    return df


def _group_subtasks(results: dict, folder: Path) -> dict[str, list[str]]:
    """The run's ``group_subtasks``: each group's direct members (tasks or groups)."""
    found = results.get("group_subtasks") or {}
    where = f"{folder}: results field 'group_subtasks'"
    _need(found, dict, where, "(the groups)", "an object of group names")
    for group, members in found.items():
        _need(members, list, where, str(group), "a list of task names")
        for m in members:
            _need(m, str, where, f"{group}[]", "task or group names (text)")
    return {str(g): list(m) for g, m in found.items() if m}


def _innermost_groups(groups: dict[str, list[str]]) -> dict[str, str]:
    """Each task's innermost group: the group that lists it directly."""
    return {m: g for g, members in groups.items() for m in members if m not in groups}


def group_tasks(groups: dict[str, list[str]], group: str) -> list[str]:
    """The tasks of ``group``, its subgroups expanded (lm-evaluation-harness' nesting)."""
    out, todo, seen = [], list(groups.get(group, [])), {group}
    while todo:
        m = todo.pop(0)
        if m in groups:
            if m not in seen:  # a group listed twice, or a cycle, is expanded once
                seen.add(m)
                todo[:0] = groups[m]
        elif m not in out:
            out.append(m)
    return out


def _lm_eval_rows(file: Path, model: str, run: str, scores: list) -> list[dict]:
    task, rows, seen = _task_of(file), [], {}
    try:
        data = file.read_bytes()
    except OSError as err:
        raise DataError(f"{file}: not readable ({err}).") from None
    for lineno, line in enumerate(_text(data, str(file)).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{file}, line {lineno}"
        rec = _need(_loads(line, where), dict, where, "(the line)", "an object per document")
        doc_id = _need(rec.get("doc_id"), (int, str), where, "doc_id", "a number or text")
        filt = _need(rec.get("filter", "none"), str, where, "filter", "the filter's name")
        key = (str(doc_id), filt)
        if key in seen:
            raise DataError(
                f"{where}: document {doc_id!r} (filter {filt!r}) is logged again (first on "
                f"line {seen[key]}); each document is logged once per filter."
            )
        seen[key] = lineno
        metrics = _need(rec.get("metrics") or [], list, where, "metrics", "a list of names")
        row = {"model": model, "task": task, "run": run, "log": file.name,
               "question": key[0], "filter": filt, "status": "done", "error": ""}
        for m in metrics:
            _need(m, str, where, "metrics[]", "metric names (text)")
            if m not in scores:
                scores.append(m)
            v = rec.get(m)
            row[m] = None if v is None else _score_value(v, f"{where}, field {m!r}")
        row["response"] = _cell(rec.get("filtered_resps"))
        doc = rec.get("doc")
        _extras(row, doc if isinstance(doc, dict) else {}, "doc")
        rows.append(row)
    return rows


def _task_of(file: Path) -> str:
    # samples_<task>_<date>.jsonl; the date has no underscore, the task may
    stem = file.stem
    return stem[len("samples_"):].rsplit("_", 1)[0] if stem.startswith("samples_") else stem


def _date_of(file: Path) -> str:
    stem = file.stem
    return stem.rsplit("_", 1)[1] if stem.startswith("samples_") and "_" in stem[8:] else stem


def _samples_files(folder: Path) -> list[Path]:
    """Every samples file of the folder, or of its model folders one level down."""
    if not folder.is_dir():
        raise DataError(f"{folder}: no such file or folder.")
    found = sorted(folder.glob("samples_*.jsonl")) or sorted(folder.glob("*/samples_*.jsonl"))
    if not found:
        raise DataError(
            f"{folder}: no samples_<task>_<date>.jsonl files here or one folder down "
            "(run lm-evaluation-harness with --log_samples)."
        )
    return found


def is_eval_log(path) -> bool:
    """True for an inspect_ai log or lm-evaluation-harness samples (a file or their folder)."""
    p = Path(path)
    if p.suffix == ".eval" or (p.suffix == ".json" and _looks_inspect(p)):
        return True
    return (p.is_file() and p.name.startswith("samples_") and p.suffix == ".jsonl") or (
        p.is_dir() and (any(p.glob("samples_*.jsonl")) or any(p.glob("*/samples_*.jsonl")))
    )


def read_eval_log(path):
    """Any eval file: an inspect_ai log, lm-evaluation-harness samples, or a plain table.

    ``.eval`` and inspect_ai ``.json`` logs go to :func:`from_inspect`;
    ``samples_*.jsonl`` files and folders holding them to :func:`from_lm_eval`;
    anything else to :func:`vareval.read_table` (CSV, TSV, JSON Lines, Parquet).
    """
    p = Path(path)
    if is_eval_log(p):
        return from_lm_eval(p) if p.is_dir() or p.suffix == ".jsonl" else from_inspect(p)
    from vareval.data.io import read_table

    return read_table(p)


def _looks_inspect(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return head.lstrip().startswith("{") and '"eval"' in head
