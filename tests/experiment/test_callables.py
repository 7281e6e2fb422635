"""Trials given as Python callables: notebooks, scripts, the progress bar in Jupyter."""

import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from vareval.experiment import ExperimentSpec, Store, replay, run
from vareval.experiment.runner import in_notebook

SRC = str(Path(__file__).resolve().parents[2] / "src")

TRAIN = '''
import numpy as np

OFFSET = 10.0

def train(trial):
    trial.report(0, loss=1.0)
    return {"x": OFFSET + float(trial.rng("init").normal()) + trial.config["lr"]}
'''


def _notebook_function():
    """A function as a notebook defines it: module ``__main__``, no source file."""
    namespace = {"__name__": "__main__"}
    exec(compile(TRAIN, "<cell>", "exec"), namespace)  # noqa: S102 - a notebook cell
    return namespace["train"]


def _spec(trial="unused:train", **kw):
    return ExperimentSpec(
        trial=trial,
        factors={"model": ["a", "b"]},
        seeds=3,
        configs=2,
        space={"lr": {"distribution": "uniform", "low": 0.0, "high": 1.0}},
        sources=("init",),
        entropy=3,
        **kw,
    )


@pytest.mark.parametrize("engine", ["local", "serial"])
def test_a_notebook_function_runs_by_value(tmp_path, engine):
    train = _notebook_function()
    assert train.__module__ == "__main__"
    path = tmp_path / "nb.db"
    report = run(_spec(), path, trial=train, engine=engine, workers=2, progress=False)
    assert report.done == 12 and report.failed == 0
    with Store(path) as st:
        df = st.frame()
        assert st.spec().trial == "__main__:train"
        assert len(st.curves()) == 12
    assert (df["x"] > 5).all()  # the function's global OFFSET travelled with it
    r = replay(path, 5, trial=train)
    assert r.identical and r.comparable
    with pytest.raises(Exception, match="replay.*trial=fn"):
        replay(path, 5)


def test_the_same_results_as_a_spec_given_the_callable(tmp_path):
    train = _notebook_function()
    run(_spec(), tmp_path / "a.db", trial=train, engine="serial", progress=False)
    run(_spec(trial=train), tmp_path / "b.db", engine="local", workers=2, progress=False)
    with Store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        assert a.frame()["x"].tolist() == b.frame()["x"].tolist()


def test_a_script_runs_its_function_on_the_local_engine(tmp_path):
    script = tmp_path / "experiment.py"
    script.write_text(TRAIN + textwrap.dedent('''
        from vareval.experiment import ExperimentSpec, run

        if __name__ == "__main__":   # workers import this script again: guard the run
            spec = ExperimentSpec(
                trial=train, factors={"model": ["a"]}, seeds=4, entropy=1, sources=("init",),
                space={"lr": {"distribution": "uniform", "low": 0.0, "high": 1.0}},
            )
            print(run(spec, "script.db", engine="local", workers=2, progress=False).done)
    '''))
    env = {**os.environ, "PYTHONPATH": SRC}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"


def test_in_notebook_recognises_a_kernel(monkeypatch):
    assert not in_notebook()
    shell = types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert in_notebook()
    terminal = types.SimpleNamespace(config={"TerminalIPythonApp": {}})
    monkeypatch.setitem(sys.modules, "IPython",
                        types.SimpleNamespace(get_ipython=lambda: terminal))
    assert not in_notebook()


def test_progress_bar_in_a_jupyter_kernel(tmp_path, monkeypatch):
    """A notebook cell defines the trial and runs it on the local engine; the bar shows."""
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat (Jupyter) to run a kernel")
    nbclient = pytest.importorskip("nbclient", reason="needs nbclient to execute a notebook")
    pytest.importorskip("ipykernel", reason="needs ipykernel for a Jupyter kernel")
    cell = TRAIN + textwrap.dedent('''
        from vareval.experiment import ExperimentSpec, run
        spec = ExperimentSpec(
            trial=train, factors={"model": ["a", "b"]}, seeds=3, entropy=1, sources=("init",),
            space={"lr": {"distribution": "uniform", "low": 0.0, "high": 1.0}},
        )
        print("done", run(spec, "nb.db", engine="local", workers=2).done)
    ''')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    monkeypatch.setenv("PYTHONPATH", SRC)  # the kernel imports this checkout's vareval
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    text = "".join(o.get("text", "") for o in outputs)
    widgets = [o for o in outputs if o.get("output_type") == "display_data"]
    assert "done 6" in text
    assert "6/6" in text or widgets  # the text bar on stderr, or tqdm's widget


def test_progress_bar_on_a_terminal(tmp_path):
    """Under a pseudo-terminal (stderr is a tty, as in a terminal) the bar is drawn."""
    pty = pytest.importorskip("pty", reason="needs a POSIX pseudo-terminal")
    script = tmp_path / "bar.py"
    script.write_text(textwrap.dedent('''
        import sys
        from vareval.experiment import ExperimentSpec, run

        if __name__ == "__main__":
            spec = ExperimentSpec(trial="vareval.experiment._demo:trivial_trial",
                                  factors={"model": ["a"]}, seeds=5, entropy=1,
                                  sources=("init",))
            run(spec, sys.argv[1], engine="serial")
    '''))
    import fcntl
    import struct
    import termios

    env = {**os.environ, "PYTHONPATH": SRC}
    leader, follower = pty.openpty()
    # a new pseudo-terminal is 0 x 0: give it 24 rows of 80 columns, as a terminal has
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        proc = subprocess.run([sys.executable, str(script), str(tmp_path / "tty.db")],
                              env=env, stderr=follower, stdout=subprocess.DEVNULL, timeout=120)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert "5/5" in b"".join(chunks).decode(errors="replace")
