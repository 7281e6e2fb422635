"""The eval-log readers fed every JSON type in every field, and damaged archives.

Each case is either read (a table) or refused with one line, a DataError naming the
file; never another exception, never a traceback from the command.
"""

import copy
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.data.importers.evals import read_eval_log
from vareval.errors import DataError

LOGS = Path(__file__).parent / "importers" / "eval_logs"
TYPES = [None, True, 42, 1.5, "one", [1, 2], {"a": 1}]
SAMPLE = {"id": 1, "epoch": 1, "scores": {"match": {"value": "C", "answer": "x"}},
          "metadata": {"passage": "p"}, "error": None}
HEADER = {"model": "m", "task": "t", "run_id": "r"}
INSPECT_FIELDS = [
    ("eval",), ("eval", "model"), ("eval", "task"), ("eval", "run_id"), ("samples",),
    ("samples", 0), ("samples", 0, "id"), ("samples", 0, "epoch"), ("samples", 0, "scores"),
    ("samples", 0, "scores", "match"), ("samples", 0, "scores", "match", "value"),
    ("samples", 0, "metadata"), ("samples", 0, "error"),
]
LINE = {"doc_id": 0, "doc": {"passage": "p"}, "filter": "none", "metrics": ["acc"], "acc": 1.0,
        "filtered_resps": ["a"]}
LM_FIELDS = [(), ("doc_id",), ("doc",), ("filter",), ("metrics",), ("metrics", 0), ("acc",),
             ("filtered_resps",)]


def _set(obj, path, value):
    obj = copy.deepcopy(obj)
    if not path:
        return value
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


def _read_or_refuse(path):
    """The reader's answer: a table, or a one-line DataError that names the file."""
    try:
        df = read_eval_log(path)
    except DataError as err:
        text = str(err)
        assert "\n" not in text and Path(path).name in text, text
        return text
    assert isinstance(df, pd.DataFrame) and len(df) >= 1
    return df


def _write_eval(path, log):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({"eval": log["eval"]}))
        samples = log["samples"]
        for i, s in enumerate(samples if isinstance(samples, list) else [samples]):
            z.writestr(f"samples/{i}_epoch_1.json", json.dumps(s))


@pytest.mark.parametrize("suffix", [".json", ".eval"])
@pytest.mark.parametrize("field", INSPECT_FIELDS, ids=lambda f: "/".join(map(str, f)))
@pytest.mark.parametrize("value", TYPES, ids=lambda v: type(v).__name__)
def test_inspect_logs_with_any_json_type_in_any_field(tmp_path, suffix, field, value):
    log = _set({"eval": HEADER, "samples": [SAMPLE]}, field, value)
    path = tmp_path / f"log{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(log))
    else:
        _write_eval(path, log)
    got = _read_or_refuse(path)
    if field == ("eval",) or (field == ("eval", "model") and not isinstance(value, str)):
        assert isinstance(got, str)  # no model, no score: "eval": null is not a model ''
    if isinstance(got, pd.DataFrame):
        assert (got["model"] != "").all()


@pytest.mark.parametrize("field", LM_FIELDS, ids=lambda f: "/".join(map(str, f)) or "line")
@pytest.mark.parametrize("value", TYPES, ids=lambda v: type(v).__name__)
def test_lm_eval_lines_with_any_json_type_in_any_field(tmp_path, field, value):
    path = tmp_path / "samples_toy_2026-01-01T00-00-00.0.jsonl"
    path.write_text(json.dumps(_set(LINE, field, value)) + "\n")
    _read_or_refuse(path)


@pytest.mark.parametrize("value", TYPES + [[{"results": {}}]], ids=lambda v: type(v).__name__)
def test_lm_eval_results_file_of_any_type(tmp_path, value):
    (tmp_path / "samples_toy_2026-01-01T00-00-00.0.jsonl").write_text(json.dumps(LINE) + "\n")
    (tmp_path / "results_2026-01-01T00-00-00.0.json").write_text(json.dumps(value))
    _read_or_refuse(tmp_path)


def _damaged(tmp_path, how, at):
    data = bytearray((LOGS / "mock-b.eval").read_bytes())
    if how == "truncated":
        data = data[: int(len(data) * at)]
    else:  # flip bytes in the middle of the file
        i = int(len(data) * at)
        data[i:i + 16] = bytes(b ^ 0x5A for b in data[i:i + 16])
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how", ["truncated", "corrupt"])
@pytest.mark.parametrize("at", [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_and_corrupt_archives(tmp_path, how, at):
    _read_or_refuse(_damaged(tmp_path, how, at))


def _deflated(tmp_path, patch):
    path = tmp_path / "deflate.eval"
    _write_eval(path, {"eval": HEADER, "samples": [SAMPLE] * 3})
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo("samples/1_epoch_1.json")
    patch(data, info)
    path.write_bytes(bytes(data))
    return path


def test_corrupt_deflate_member_and_unknown_compression(tmp_path):
    def corrupt(data, info):
        start = info.header_offset + 30 + len(info.filename)
        data[start:start + 6] = b"\xff" * 6

    def method_99(data, info):
        for offset in (info.header_offset + 8, bytes(data).rfind(b"PK\x01\x02") + 10):
            data[offset:offset + 2] = (99).to_bytes(2, "little")

    for patch in (corrupt, method_99):
        assert isinstance(_read_or_refuse(_deflated(tmp_path, patch)), str)


@pytest.mark.parametrize("suffix", [".json", ".eval", ".jsonl"])
def test_deep_nesting_latin1_and_odd_lines(tmp_path, suffix):
    deep = "[" * 100_000 + "]" * 100_000
    name = "samples_toy_2026-01-01T00-00-00.0.jsonl" if suffix == ".jsonl" else f"x{suffix}"
    path = tmp_path / name
    if suffix == ".eval":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("header.json", json.dumps({"eval": HEADER}))
            z.writestr("samples/1_epoch_1.json", '{"id": 1, "metadata": ' + deep + "}")
    else:
        path.write_text('{"eval": ' + deep + "}" if suffix == ".json" else deep)
    assert "nested too deeply" in _read_or_refuse(path)
    if suffix == ".jsonl":
        for line in ("42", "[1, 2]", '"text"'):
            path.write_text(json.dumps(LINE) + "\n" + line + "\n")
            assert "line 2" in _read_or_refuse(path)
        path.write_bytes(json.dumps(LINE).encode() + b'\n{"doc_id": "caf\xe9"}')
        assert "line 2: byte 0xe9 is not UTF-8" in _read_or_refuse(path)


def test_a_document_logged_twice_is_refused_by_line(tmp_path):
    path = tmp_path / "samples_toy_2026-01-01T00-00-00.0.jsonl"
    path.write_text("\n".join(json.dumps(_set(LINE, ("doc_id",), i)) for i in (0, 1, 0)))
    assert "line 3: document 0 (filter 'none') is logged again (first on line 1)" in (
        _read_or_refuse(path))


@pytest.mark.parametrize("args", [
    ["score"], ["compare"], ["import"], ["table", "--metric", "match"],
])
def test_the_command_refuses_in_one_line_exit_2(tmp_path, args):
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"eval": None, "samples": [SAMPLE]}))
    r = CliRunner().invoke(main, ["evals", args[0], str(path), *args[1:]])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and r.output.startswith("error: ")
    assert "log.json: header: field 'eval' is null" in r.output
