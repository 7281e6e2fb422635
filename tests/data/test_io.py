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


def test_numbers_reads_metric_columns_as_floats(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("method,accuracy,loss\n1.10,0.970370,nan\n01,0.95,inf\n")
    df = read_table(path, numbers=["accuracy", "loss"])
    assert df["accuracy"].tolist() == [0.97037, 0.95]
    assert df["loss"].isna().iloc[0] and df["loss"].iloc[1] == float("inf")
    assert df["method"].tolist() == ["1.10", "01"]  # labels stay text
    assert read_table(path)["accuracy"].tolist() == ["0.970370", "0.95"]  # not asked: as written
    assert read_table(path, numbers="accuracy")["accuracy"].dtype.kind == "f"


@pytest.mark.parametrize(
    ("numbers", "match"),
    [(["accuracy"], r"'accuracy' has 'x' in row 1"), (["acc"], "did you mean 'accuracy'")],
)
def test_numbers_refuses_text_and_unknown_columns(tmp_path, numbers, match):
    path = tmp_path / "runs.csv"
    path.write_text("method,accuracy\na,0.9\nb,x\n")
    with pytest.raises(DataError, match=match):
        read_table(path, numbers=numbers)
