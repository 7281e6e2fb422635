"""Import language-model eval logs: inspect_ai eval logs and lm-evaluation-harness samples.

Both give one row per answer, the table ``vareval evals`` reads:

- ``model``, ``task``, ``question`` (the sample id / doc id, as text);
- ``epoch`` (inspect_ai: the k-th sample of the question, from 1) or
  ``filter`` (lm-evaluation-harness: the response filter a score is for);
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
with the standard library.
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
_FIXED = ("model", "task", "question", "epoch", "filter", "status", "error", "answer", "response")


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
        f"{where}: score {value!r} is not a number nor one of C, I, P, N; "
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
    df = pd.DataFrame.from_records(rows)
    for col in scores:
        df[col] = pd.to_numeric(df[col], errors="raise").astype(float)
    df.attrs["scores"] = scores
    df.attrs["source"] = source
    return df


# --- inspect_ai -------------------------------------------------------------------


def _inspect_log(path: Path) -> dict:
    """The log as plain dicts: ``eval`` (the header) and ``samples``."""
    if path.suffix == ".json":
        try:
            log = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise DataError(f"{path}: not a readable inspect_ai JSON log ({err}).") from None
        if not isinstance(log, dict) or "eval" not in log:
            raise DataError(f"{path}: not an inspect_ai log (no 'eval' header).")
        return log
    try:
        with zipfile.ZipFile(path) as archive:
            return _eval_archive(archive, path)
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError,
            struct.error, ValueError) as err:
        raise DataError(f"{path}: not a readable inspect_ai .eval log ({err}).") from None


def _eval_archive(archive: zipfile.ZipFile, path: Path) -> dict:
    # A re-logged sample appends a second member of the same name: the last one
    # counts, as in inspect_ai's reader.
    members = {info.filename: info for info in archive.infolist()}
    # header.json is written when the run ends; a run cut short has only the journal.
    head = next((n for n in ("header.json", "_journal/start.json") if n in members), None)
    if head is None:
        raise DataError(f"{path}: not an inspect_ai log (no header.json in the archive).")
    header = json.loads(_member(archive, members[head]))
    if "eval" not in header:
        raise DataError(f"{path}: not an inspect_ai log (no 'eval' header).")
    samples = [json.loads(_member(archive, info)) for name, info in members.items()
               if name.startswith("samples/") and name.endswith(".json")]
    samples.sort(key=lambda s: (s.get("epoch") or 1, _sort_id(s.get("id"))))
    return {"eval": header["eval"], "samples": samples}


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
    log = _inspect_log(path)
    header = log.get("eval") or {}
    model, task = header.get("model", ""), header.get("task", "")
    samples = log.get("samples")
    if samples is None:
        raise DataError(
            f"{path}: the log holds no samples (was it written with --no-log-samples?)."
        )
    rows, scores = [], []
    for s in samples:
        row = {"model": model, "task": task, "question": str(s.get("id")),
               "epoch": int(s.get("epoch") or 1)}
        error = s.get("error")
        row["status"] = "failed" if error else "done"
        row["error"] = (error.get("message") if isinstance(error, dict) else error) or ""
        answers = []
        for name, score in (s.get("scores") or {}).items():
            value = score.get("value") if isinstance(score, dict) else score
            where = f"{path}: sample {row['question']} epoch {row['epoch']}"
            parts = value.items() if isinstance(value, dict) else [(None, value)]
            for key, v in parts:
                col = name if key is None else f"{name}.{key}"
                if col not in scores:
                    scores.append(col)
                row[col] = None if v is None else _score_value(v, where)
            if isinstance(score, dict) and score.get("answer") is not None:
                answers.append(str(score["answer"]))
        row["answer"] = answers[0] if answers else ""
        _extras(row, s.get("metadata"), "metadata")
        rows.append(row)
    for row in rows:
        for col in scores:
            row.setdefault(col, None)
    return _frame(rows, scores, f"inspect_ai log {path.name}")


# --- lm-evaluation-harness -----------------------------------------------------------


def _results_beside(samples: Path) -> dict:
    """The ``results_*.json`` beside a samples file (the newest), or {}."""
    found = sorted(samples.parent.glob("results_*.json"))
    if not found:
        return {}
    try:
        return json.loads(found[-1].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise DataError(
            f"{found[-1]}: not a readable lm-evaluation-harness results file."
        ) from None


def _lm_eval_model(results: dict, folder: Path) -> str:
    config = results.get("config") or {}
    name = results.get("model_name") or config.get("model_args") or config.get("model")
    return str(name) if name else folder.name


def from_lm_eval(path):
    """Read lm-evaluation-harness ``--log_samples`` output into one row per answer.

    Parameters
    ----------
    path : str or Path
        A ``samples_<task>_<date>.jsonl`` file, or the folder holding them (every
        task's newest file) beside ``results_<date>.json``, which names the model.

    Returns
    -------
    pandas.DataFrame
        See the module docstring: a row per document and filter, a column per
        metric the harness scored on it.
    """
    path = Path(path)
    files = [path] if path.is_file() else _newest_samples(path)
    results = _results_beside(files[0])
    model = _lm_eval_model(results, files[0].parent)
    rows, scores = [], []
    for file in files:
        task = _task_of(file)
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                raise DataError(f"{file}, line {lineno}: not JSON.") from None
            metrics = rec.get("metrics") or []
            row = {"model": model, "task": task, "question": str(rec.get("doc_id")),
                   "filter": rec.get("filter", "none"), "status": "done", "error": ""}
            for m in metrics:
                if m not in scores:
                    scores.append(m)
                v = rec.get(m)
                row[m] = None if v is None else _score_value(v, f"{file}, line {lineno}")
            row["response"] = _cell(rec.get("filtered_resps"))
            doc = rec.get("doc")
            _extras(row, doc if isinstance(doc, dict) else {}, "doc")
            rows.append(row)
    for row in rows:
        for col in scores:
            row.setdefault(col, None)
            if isinstance(row[col], float) and math.isnan(row[col]):
                row[col] = None
    return _frame(rows, scores, f"lm-evaluation-harness samples in {files[0].parent}")


def _task_of(file: Path) -> str:
    # samples_<task>_<date>.jsonl; the date has no underscore, the task may
    stem = file.stem
    return stem[len("samples_"):].rsplit("_", 1)[0] if stem.startswith("samples_") else stem


def _newest_samples(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise DataError(f"{folder}: no such file or folder.")
    by_task = {}
    for f in sorted(folder.glob("samples_*.jsonl")):
        by_task[_task_of(f)] = f  # sorted by date: the last one is the newest
    if not by_task:
        raise DataError(f"{folder}: no samples_<task>_<date>.jsonl files (run with --log_samples).")
    return list(by_task.values())


def read_eval_log(path):
    """Any eval file: an inspect_ai log, lm-evaluation-harness samples, or a plain table.

    ``.eval`` and inspect_ai ``.json`` logs go to :func:`from_inspect`;
    ``samples_*.jsonl`` files and folders holding them to :func:`from_lm_eval`;
    anything else to :func:`vareval.read_table` (CSV, TSV, JSON Lines, Parquet).
    """
    p = Path(path)
    if p.suffix == ".eval" or (p.suffix == ".json" and _looks_inspect(p)):
        return from_inspect(p)
    if (p.is_file() and p.name.startswith("samples_") and p.suffix == ".jsonl") or (
        p.is_dir() and any(p.glob("samples_*.jsonl"))
    ):
        return from_lm_eval(p)
    from vareval.data.io import read_table

    return read_table(p)


def _looks_inspect(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return head.lstrip().startswith("{") and '"eval"' in head
