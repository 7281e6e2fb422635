import json

import pandas as pd
import pytest

from vareval.data import read_table
from vareval.errors import DataError

FRAME = pd.DataFrame({"method": ["A", "A", "B"], "seed": [0, 1, 0], "acc": [0.8, 0.81, 0.79]})


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_every_format_round_trips(tmp_path, suffix):
    path = tmp_path / f"runs{suffix}"
    if suffix == ".csv":
        FRAME.to_csv(path, index=False)
    elif suffix == ".tsv":
        FRAME.to_csv(path, sep="\t", index=False)
    elif suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in FRAME.to_dict("records")))
    else:
        FRAME.to_parquet(path)
    pd.testing.assert_frame_equal(read_table(path), FRAME, check_dtype=False)


def test_empty_cells_are_kept_not_dropped(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("method,acc\nA,0.8\nA,\nB,0.7\n")
    df = read_table(path)
    assert len(df) == 3 and df["acc"].isna().sum() == 1


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("runs.xlsx", "x", "unknown file type"),
        ("runs", "x", "unknown file type"),
        ("runs.csv", "", "is empty"),
        ("runs.csv", "method,acc\n", "no data rows"),
        ("runs.jsonl", "{not json", "could not be read"),
        ("runs.parquet", "not parquet", "could not be read"),
    ],
)
def test_bad_files(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=match):
        read_table(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
