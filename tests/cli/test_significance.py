import json

import pandas as pd
import pytest
from click.testing import CliRunner

from vareval.cli import main
from vareval.cli.significance import demo_section
from vareval.data.significance import example_path


@pytest.fixture
def example_file():
    return str(example_path())


def _run(args):
    return CliRunner().invoke(main, args)


def test_significance_table(example_file):
    res = _run(
        [
            "significance",
            example_file,
            "--gold",
            "gold",
            "--item",
            "item",
            "--system",
            "logreg,knn",
            "--system",
            "naive_bayes",
            "--metric",
            "macro-f1",
            "--resamples",
            "2000",
            "--seed",
            "1",
        ]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert (
        "paired bootstrap test, metric macro-f1, 899 items, 2,000 resamples, seed 1"
        in out
    )
    assert "knn" in out and "p (Holm)" in out and "95% CI (BCa)" in out


def test_significance_json_all_pairs_randomization(example_file):
    res = _run(
        [
            "significance",
            example_file,
            "--gold",
            "gold",
            "--item",
            "item",
            "--test",
            "randomization",
            "--all-pairs",
            "--correction",
            "bonferroni",
            "--resamples",
            "500",
            "--seed",
            "0",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert len(data["pairs"]) == 6 and data["correction"] == "bonferroni"
    assert data["results"][0]["test"] == "approximate randomization"
    again = _run(
        [
            "significance",
            example_file,
            "--gold",
            "gold",
            "--item",
            "item",
            "--test",
            "randomization",
            "--all-pairs",
            "--correction",
            "bonferroni",
            "--resamples",
            "500",
            "--seed",
            "0",
            "--json",
        ]
    )
    assert again.output == res.output


def test_unsmoothed_flag(example_file):
    args = ["significance", example_file, "--gold", "gold", "--item", "item",
            "--system", "logreg,naive_bayes", "--seed", "0", "--resamples", "1000"]
    res = _run(args + ["--unsmoothed", "--json"])
    r = json.loads(res.output)["results"][0]
    assert r["pvalue"] == 0.0 and not r["smooth"]
    assert "hits / B (unsmoothed)" in _run(args + ["--unsmoothed"]).output
    smoothed = json.loads(_run(args + ["--json"]).output)["results"][0]
    assert smoothed["pvalue"] == 1 / 1001


def test_long_format(tmp_path, example_file):
    long = pd.read_csv(example_file).melt(
        id_vars=["item", "gold"], var_name="model", value_name="pred"
    )
    path = tmp_path / "long.csv"
    long.to_csv(path, index=False)
    res = _run(
        [
            "significance",
            str(path),
            "--gold",
            "gold",
            "--item",
            "item",
            "--system-column",
            "model",
            "--prediction",
            "pred",
            "--system",
            "logreg,knn",
            "--baseline",
            "knn",
            "--seed",
            "0",
            "--resamples",
            "300",
        ]
    )
    assert res.exit_code == 0, res.output
    assert "logreg  knn" in res.output.replace("   ", "  ")


def test_metrics_command(example_file):
    res = _run(
        ["metrics", example_file, "--gold", "gold", "--item", "item", "--system", "knn"]
    )
    assert res.exit_code == 0, res.output
    assert "system knn: accuracy 0.9733" in res.output
    assert "macro avg" in res.output and "gold \\ predicted" in res.output
    res = _run(["metrics", example_file, "--gold", "gold", "--item", "item", "--json"])
    assert set(json.loads(res.output)) == {
        "logreg",
        "knn",
        "random_forest",
        "naive_bayes",
    }


@pytest.mark.parametrize(
    "args, match",
    [
        (["--metric", "bleu"], "metric"),
        (["--resamples", "0"], "--resamples"),
        (["--system", "logreg,nope"], "'nope' not found"),
        (["--baseline", "svm"], "baseline"),
        (["--baseline", "knn", "--all-pairs"], "not both"),
        (["--gold", "label"], "gold column 'label' not found"),
    ],
)
def test_user_errors_exit_2_with_one_line(example_file, args, match):
    base = [
        "significance",
        example_file,
        "--gold",
        "gold",
        "--item",
        "item",
        "--seed",
        "0",
    ]
    res = _run(base + args)
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0]
    assert "Traceback" not in res.output


def test_different_lengths_and_nan(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("gold,a,b\n0,0,1\n1,1,\n1,0,1\n")
    res = _run(["significance", str(path), "--gold", "gold", "--seed", "0"])
    assert res.exit_code == 2 and "column 'b' is empty in data row(s) 2" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = _run(["metrics", str(tmp_path / "missing.csv"), "--gold", "gold"])
    assert res.exit_code == 2 and res.output.startswith("error: ")


def test_demo_section():
    text = demo_section()
    assert "digits" in text and "macro-f1" in text and "p (Holm)" in text


@pytest.mark.parametrize("test", ["mcnemar", "wilcoxon", "t"])
def test_classical_tests_on_per_item_scores_match_scipy(test, tmp_path):
    import pandas as pd
    from scipy import stats as sps

    from vareval import datasets
    from vareval.cli import main
    from vareval.stats import adjust_pvalues

    path = tmp_path / "p.csv"
    path.write_bytes(datasets.path("digits_predictions.csv").read_bytes())
    df = pd.read_csv(path)
    out = CliRunner().invoke(
        main, ["significance", str(path), "--gold", "gold", "--item", "item", "--test", test,
               "--json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    correct = {s: (df[s] == df["gold"]).to_numpy(float) for s in df.columns[2:]}
    want = []
    for row in _records(got):
        a, b = correct[row["system"]], correct[row["versus"]]
        if test == "mcnemar":
            n_ab, n_ba = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
            p = sps.binomtest(n_ab, n_ab + n_ba, 0.5).pvalue
        elif test == "wilcoxon":
            p = sps.wilcoxon(a, b).pvalue
        else:
            p = sps.ttest_rel(a, b).pvalue
        assert row["pvalue"] == pytest.approx(p, rel=1e-12)
        assert row["estimate"] == pytest.approx(a.mean() - b.mean(), abs=1e-12)
        want.append(p)
    holm = [r["adjusted_pvalue"] for r in _records(got)]
    assert holm == pytest.approx(adjust_pvalues(want, "holm"), rel=1e-12)


def _records(payload):
    return [
        {"system": a, "versus": b, "pvalue": r["pvalue"], "estimate": r["estimate"],
         "adjusted_pvalue": adj}
        for (a, b), r, adj in zip(payload["pairs"], payload["results"],
                                  payload["adjusted_pvalues"], strict=True)
    ]  # fmt: skip


def test_classical_tests_refuse_corpus_metrics(tmp_path):
    from vareval import datasets
    from vareval.cli import main

    path = tmp_path / "p.csv"
    path.write_bytes(datasets.path("digits_predictions.csv").read_bytes())
    out = CliRunner().invoke(
        main, ["significance", str(path), "--gold", "gold", "--item", "item", "--test", "t",
               "--metric", "macro-f1"],
    )  # fmt: skip
    assert out.exit_code == 2
    assert "--test 't' needs --metric 'accuracy' or 'mean'" in out.stderr


def test_several_metrics_give_one_block_each_corrected_within_a_metric(tmp_path):
    from vareval import datasets
    from vareval.cli import main

    path = tmp_path / "p.csv"
    path.write_bytes(datasets.path("digits_predictions.csv").read_bytes())
    args = ["significance", str(path), "--gold", "gold", "--item", "item", "--resamples", "500"]
    both = CliRunner().invoke(main, [*args, "--metric", "accuracy,macro-f1", "--json"])
    assert both.exit_code == 0, both.output
    got = json.loads(both.stdout)
    assert list(got) == ["accuracy", "macro-f1"]
    for metric in got:
        alone = CliRunner().invoke(main, [*args, "--metric", metric, "--json"])
        assert got[metric] == json.loads(alone.stdout)


def test_mcnemar_interval_has_width_when_discordance_goes_one_way(tmp_path):
    """3 items all won by B: the Wald interval was the point [1, 1] beside p = 0.25."""
    from vareval.stats import mcnemar_exact

    path = tmp_path / "three.csv"
    path.write_text("item,gold,A,B\n1,1,0,1\n2,1,0,1\n3,0,1,0\n")
    args = ["significance", str(path), "--gold", "gold", "--item", "item", "--test", "mcnemar"]
    text, js = _run(args), _run([*args, "--json"])
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    row = json.loads(js.stdout)["results"][0]
    api = mcnemar_exact([1, 1, 0], [1, 1, 0], [0, 0, 1])  # B's outputs first, as "system"
    assert (row["low"], row["high"]) == pytest.approx(api.confidence_interval())
    assert (row["low"], row["high"]) == pytest.approx((0.2059, 1.0), abs=5e-5)
    assert row["pvalue"] == 0.25
    assert "95% CI (Newcombe score)" in text.output and "[+0.2059, +1.0000]" in text.output


@pytest.mark.parametrize("command", ["significance", "metrics"])
def test_dropna_checks_the_system_columns_not_the_metric_name(tmp_path, command):
    """--dropna took the metric name for a column, and ignored --system's columns."""
    from vareval import metrics, significance

    path = tmp_path / "p.csv"
    path.write_text("item,gold,A,B\n1,1,1,1\n2,0,0,1\n3,1,1,\n4,0,0,0\n5,1,0,1\n6,1,1,1\n")
    base = [command, str(path), "--gold", "gold", "--item", "item", "--json"]
    refused = _run([*base, "--system", "A,B"])
    assert refused.exit_code == 2
    assert "system column 'B' is empty in data row(s) 3" in refused.output
    for extra in (["--system", "A,B"], [], ["--metric", "accuracy"] * (command == "significance")):
        out = CliRunner().invoke(main, [*base, *extra, "--dropna"])
        assert out.exit_code == 0, out.output
        assert "dropped 1 of 6 rows" in out.stderr
    kept = pd.read_csv(path, dtype=str).drop(index=2)
    if command == "significance":
        api = significance(kept, gold="gold", item="item").comparison.results[0]
        assert json.loads(out.stdout)["results"][0]["estimate"] == pytest.approx(api.estimate)
    else:
        api = metrics(kept, gold="gold", item="item").systems["B"]
        assert json.loads(out.stdout)["B"]["accuracy"] == pytest.approx(api.accuracy)


def test_a_metric_undefined_on_some_resamples_gives_the_pvalue_and_no_interval(tmp_path):
    """20 items, 3 of class b: some bootstrap resamples hold one gold class, where adjusted
    balanced accuracy is 0/0. That failed the whole command; the randomization p-value keeps
    every gold label and is given, the interval is n/a with the reason."""
    import itertools

    import numpy as np
    from sklearn.metrics import balanced_accuracy_score

    import vareval

    gold = ["a"] * 17 + ["b"] * 3
    sys_a = ["a"] * 15 + ["b", "b"] + ["b", "b", "a"]
    sys_b = ["a"] * 13 + ["b"] * 4 + ["a", "b", "a"]
    df = pd.DataFrame({"item": range(20), "gold": gold, "A": sys_a, "B": sys_b})
    path = tmp_path / "twenty.csv"
    df.to_csv(path, index=False)
    args = ["significance", str(path), "--gold", "gold", "--item", "item",
            "--metric", "adjusted_balanced_accuracy", "--json"]  # fmt: skip
    res = _run(args)
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)["results"][0]
    assert row["low"] is None and row["high"] is None
    assert "undefined on" in row["ci_note"] and "one gold class" in row["ci_note"]
    text = _run(args[:-1]).output
    assert "CI n/a: metric 'adjusted_balanced_accuracy' is undefined on" in text

    # the exact permutation p-value, by enumerating swaps of the discordant items with sklearn
    def score(pred):
        return balanced_accuracy_score(gold, pred, adjusted=True)

    first, second = np.array(sys_b), np.array(sys_a)  # "system" order as the command reads
    observed = score(first) - score(second)
    differ = np.flatnonzero(first != second)
    deltas = []
    for swap in itertools.product([False, True], repeat=differ.size):
        x, y = first.copy(), second.copy()
        idx = differ[list(swap)]
        x[idx], y[idx] = second[idx], first[idx]
        deltas.append(score(x) - score(y))
    exact = np.mean(np.abs(deltas) >= abs(observed) - 1e-12)
    assert row["pvalue"] == pytest.approx(exact)
    api = vareval.significance(df, gold="gold", item="item", metric="adjusted_balanced_accuracy")
    assert api.to_frame()["pvalue"].iloc[0] == pytest.approx(exact)


def test_metrics_positive_names_the_system_that_breaks_the_binary_rule(tmp_path):
    import vareval

    path = tmp_path / "pos.csv"
    path.write_text("item,gold,A,B\n1,x,x,z\n2,y,y,z\n3,x,x,x\n4,y,y,x\n5,x,y,x\n6,y,x,x\n")
    res = _run(["metrics", str(path), "--gold", "gold", "--item", "item", "--positive", "y"])
    assert res.exit_code == 2 and "system 'B': sensitivity and specificity need two" in res.output
    assert "Traceback" not in res.output
    with pytest.raises(vareval.errors.ArgumentError, match="system 'B'"):
        vareval.metrics(pd.read_csv(path), gold="gold", item="item", positive="y")
    ok = _run(["metrics", str(path), "--gold", "gold", "--item", "item", "--system", "A",
               "--positive", "y"])  # fmt: skip
    assert ok.exit_code == 0 and "sensitivity 0.6667" in ok.output


@pytest.mark.parametrize("long", [False, True])
def test_reads_only_the_columns_it_uses(tmp_path, example_file, monkeypatch, long):
    """With the systems named, significance reads the role columns only and answers
    as it does on the file without the other columns; --where reads every column."""
    from vareval.data import io

    df = pd.read_csv(example_file, dtype=str, keep_default_na=False)
    if long:
        df = df.melt(id_vars=["item", "gold"], var_name="system", value_name="output")
        roles = ["--system-column", "system", "--prediction", "output", "--system", "logreg,knn"]
    else:
        roles = ["--system", "logreg,knn"]
    used = list(df.columns) if long else ["item", "gold", "logreg", "knn"]
    extra = df.assign(note="NA", score="0.970370")
    extra.to_csv(tmp_path / "extra.csv", index=False)
    df[used].to_csv(tmp_path / "used.csv", index=False)
    asked = []
    read = io.read_table
    monkeypatch.setattr(io, "read_table", lambda p, **kw: asked.append(kw) or read(p, **kw))
    args = ["--gold", "gold", "--item", "item", *roles, "--resamples", "500", "--json"]
    outputs = [_run(["significance", str(tmp_path / f), *args]).output
               for f in ("extra.csv", "used.csv")]
    assert outputs[0] == outputs[1] and json.loads(outputs[0])
    assert sorted(asked[0]["columns"]) == sorted(used)
    _run(["significance", str(tmp_path / "extra.csv"), *args, "--where", "note == 'NA'"])
    assert asked[-1]["columns"] is None
