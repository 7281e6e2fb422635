"""Labels are text, exactly as written, through every reader and the commands."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vareval
from vareval.cli import main
from vareval.data.validate import groups, join_label, labels, metric_values
from vareval.errors import DataError

TRIALS = str(Path(__file__).resolve().parents[1] / "experiment")
NASTY = ["1.1", "1.10", "01", "1", "NA", "None", "nan", "a/b", "true", "1.0", "-0", " x"]


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _write(df: pd.DataFrame, path: Path) -> Path:
    """Write ``df`` as its extension says: the way other tools write these files."""
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        df.to_csv(path, sep="\t", index=False)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in df.to_dict("records")))
    else:
        df.to_parquet(path, index=False)
    return path


V_CSV = (
    "method,seed,acc\n1.1,0,0.10\n1.1,1,0.11\n1.1,2,0.12\n"
    "1.10,0,0.90\n1.10,1,0.91\n1.10,2,0.92\n"
)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_numeric_looking_methods_stay_apart(tmp_path, suffix):
    df = pd.DataFrame(
        {
            "method": ["1.1"] * 3 + ["1.10"] * 3 + ["01"] * 2 + ["1"] * 2,
            "seed": [0, 1, 2, 0, 1, 2, 0, 1, 0, 1],
            "acc": [0.10, 0.11, 0.12, 0.90, 0.91, 0.92, 0.5, 0.6, 0.3, 0.4],
        }
    )
    back = vareval.read_table(_write(df, tmp_path / f"v{suffix}"))
    table = vareval.summarize(back, metric="acc", by="method")
    assert list(table) == ["1.1", "1.10", "01", "1"]
    assert table["1.1"].n == 3 and table["1.1"].mean == pytest.approx(0.11)
    assert table["1.10"].mean == pytest.approx(0.91)
    assert table["01"].mean == pytest.approx(0.55) and table["1"].mean == pytest.approx(0.35)


def test_issue_example_through_the_command(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text(V_CSV)
    res = _cli("summarize", path, "--metric", "acc", "--by", "method")
    assert res.exit_code == 0, res.output
    rows = [line.split() for line in res.output.splitlines()[2:4]]
    assert [r[:3] for r in rows] == [["1.1", "3", "0.1100"], ["1.10", "3", "0.9100"]]


def test_reader_keeps_text_and_converts_only_lossless_columns(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "a,b,c,d,e,f\n1.10,NA,3,0.25,1.0,0.90\n2,None,4,1e-05,2.0,1\n3,nan,5,0.5,3.0,0.5\n"
    )
    df = vareval.read_table(path)
    assert df["a"].tolist() == ["1.10", "2", "3"]  # 1.10 is not how 1.1 is written
    assert df["b"].tolist() == ["NA", "None", "nan"]  # text, not missing
    assert df["c"].dtype == np.int64 and df["d"].dtype == float
    assert df["e"].tolist() == ["1.0", "2.0", "3.0"]  # whole floats keep their spelling
    assert metric_values(df, "f").tolist() == [0.9, 1.0, 0.5]  # metrics parsed by role
    assert labels(df, "c", "seed").tolist() == ["3", "4", "5"]


def test_empty_cell_is_missing_and_refused_with_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("method,acc\na,0.1\n,0.2\nb,0.3\n,0.4\n")
    with pytest.raises(DataError, match=r"'method' is empty in data row\(s\) 2, 4"):
        groups(vareval.read_table(path), "acc", "method")
    res = _cli("summarize", path, "--metric", "acc", "--by", "method")
    assert res.exit_code == 2 and "data row(s) 2, 4" in res.output


def test_by_tuple_never_merges(tmp_path):
    df = pd.DataFrame(
        {
            "x": ["a/b", "a", "a/b", "a", 'q"', "q"],
            "y": ["c", "b/c", "c", "b/c", "r", '"r'],
            "acc": [0.1, 0.9, 0.2, 0.8, 0.5, 0.6],
        }
    )
    g = groups(df, "acc", ["x", "y"])
    assert list(g) == ['"a/b"/c', 'a/"b/c"', '"q"""/r', 'q/"""r"']
    assert g['"a/b"/c'].tolist() == [0.1, 0.2]
    assert join_label(["a/b", "c"]) == '"a/b"/c'
    path = _write(df.iloc[:4].assign(seed=[0, 0, 1, 1]), tmp_path / "by.csv")
    res = _cli("summarize", path, "--metric", "acc", "--by", "x,y")
    assert res.exit_code == 0, res.output
    assert '"a/b"/c' in res.output and 'a/"b/c"' in res.output
    res = _cli(
        "paired", path, "--metric", "acc", "--by", "x,y", "--pair-on", "seed",
        "--a", '"a/b"/c', "--b", 'a/"b/c"',
    )
    assert res.exit_code == 0, res.output
    assert "mean difference    -0.700 " in res.output


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("d.csv", "method,accuracy,accuracy\na,0.1,0.2\n"),
        ("d.tsv", "method\taccuracy\taccuracy\na\t0.1\t0.2\n"),
        ("d.jsonl", '{"method": "a", "accuracy": 0.1, "accuracy": 0.2}\n'),
    ],
)
def test_duplicated_column_is_refused(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match="names column 'accuracy' 2 times"):
        vareval.read_table(path)
    res = _cli("summarize", path, "--metric", "accuracy", "--by", "method")
    assert res.exit_code == 2 and "'accuracy' 2 times" in res.output


def test_duplicated_column_in_parquet_and_dataframe(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table([["a"], [0.1], [0.2]], names=["method", "acc", "acc"]), path)
    with pytest.raises(DataError, match="names column 'acc' 2 times"):
        vareval.read_table(path)
    df = pd.DataFrame([["a", 0.1, 0.2]], columns=["method", "acc", "acc"])
    with pytest.raises(DataError, match="'acc' appears 2 times"):
        metric_values(df, "acc")


def test_boolean_metric_refused_everywhere(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("method,ok\na,True\na,False\nb,True\nb,True\n")
    with pytest.raises(DataError, match=r"'ok' holds booleans \(data row\(s\) 1, 2, 3, 4\)"):
        vareval.summarize(vareval.read_table(path), metric="ok", by="method")
    df = pd.DataFrame({"method": ["a", "a"], "ok": [True, False]})
    with pytest.raises(DataError, match="holds booleans"):
        metric_values(df, "ok")
    with pytest.raises(vareval.errors.ArgumentError, match="holds booleans"):
        vareval.stats.summarize(np.array([True, False, True]))
    res = _cli("summarize", path, "--metric", "ok", "--by", "method")
    assert res.exit_code == 2 and "holds booleans" in res.output


def test_classes_named_like_missing_values(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("item,gold,sys\n1,NA,NA\n2,None,None\n3,nan,NA\n4,NA,nan\n5,None,None\n")
    rep = vareval.metrics(vareval.read_table(path), gold="gold", item="item")
    m = rep.systems["sys"]
    assert m.labels.tolist() == ["NA", "None", "nan"]
    assert m.support.tolist() == [2, 2, 1] and m.accuracy == pytest.approx(0.6)
    res = _cli("metrics", path, "--gold", "gold", "--item", "item")
    assert res.exit_code == 0 and "accuracy 0.6000" in res.output


def test_gold_labels_compared_as_written(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("item,gold,sys\n1,1,1.0\n2,2,2\n3,01,1\n")
    m = vareval.metrics(vareval.read_table(path), gold="gold", item="item").systems["sys"]
    assert m.accuracy == pytest.approx(1 / 3)  # "1.0" is not "1", "01" is not "1"


def _store(tmp_path, names):
    from vareval.experiment.runner import run
    from vareval.experiment.spec import ExperimentSpec

    spec = ExperimentSpec(
        name="labels",
        trial="_trials:streams",
        factors={"method": list(names)},
        seeds=2,
        sources=("init", "data_split"),
        paths=(TRIALS,),
    )
    path = tmp_path / "labels.db"
    run(spec, path, engine="serial", progress=False)
    return path


def _groups(df):
    return {k: sorted(v.tolist()) for k, v in groups(df, "init", "method").items()}


def test_store_and_its_exports_keep_labels(tmp_path):
    store = _store(tmp_path, NASTY)
    want = _groups(vareval.read_table(store))
    assert sorted(want) == sorted(NASTY)
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"export.{fmt}"
        res = _cli("export", store, "--format", fmt, "-o", out)
        assert res.exit_code == 0, res.output
        assert _groups(vareval.read_table(out)) == want, fmt


_label = st.one_of(
    st.sampled_from(NASTY + ["0.5", "1e-05", "1e+16", "2", "3", '"q"', "a,b"]),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=6),
)


_FIXTURES = [HealthCheck.function_scoped_fixture]


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURES)
@given(names=st.lists(_label, min_size=1, max_size=5, unique=True), data=st.data())
def test_round_trips_give_the_same_groups(tmp_path, names, data):
    method = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=12))
    df = pd.DataFrame({"method": method, "acc": np.linspace(0.1, 0.9, len(method))})
    want = {m: sorted(df["acc"][df["method"] == m].tolist()) for m in dict.fromkeys(method)}
    for suffix in (".csv", ".tsv", ".jsonl", ".parquet"):
        back = vareval.read_table(_write(df, tmp_path / f"t{suffix}"))
        got = {k: sorted(v.tolist()) for k, v in groups(back, "acc", "method").items()}
        assert got == want, suffix
    pandas_jsonl = tmp_path / "p.jsonl"
    pandas_jsonl.write_text(df.to_json(orient="records", lines=True))
    assert list(groups(vareval.read_table(pandas_jsonl), "acc", "method")) == list(want)


@settings(max_examples=4, deadline=None, suppress_health_check=_FIXTURES)
@given(names=st.lists(_label, min_size=2, max_size=3, unique=True))
def test_store_export_property(tmp_path_factory, names):
    tmp = tmp_path_factory.mktemp("store")
    store = _store(tmp, names)
    want = _groups(vareval.read_table(store))
    assert sorted(want) == sorted(names)
    out = tmp / "export.csv"
    assert _cli("export", store, "-o", out).exit_code == 0
    assert _groups(vareval.read_table(out)) == want
