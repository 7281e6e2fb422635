"""Per-trial overhead of the runner and store: 10,000 trivial trials, local engine.

overhead per trial = (wall time - sum of the trials' own time / workers) / trials

The wall time covers everything `vareval.experiment.run` does: creating the
store, inserting the grid, starting the worker processes, claiming, sending,
receiving and writing every trial. Target: under 2 ms per trial.

Provenance (trial code hash, git state, package versions, machine) is
captured once per run; its cost is timed on its own. Target: under 50 ms.

Command trials: the same small script run N times by ``subprocess.run`` in a
loop and as N command trials on the local engine with one worker, in
alternating rounds; overhead per trial = (vareval's wall - the loop's wall) / N,
which is what vareval adds beyond the script's own start-up (filling the
placeholders, the seed environment, reading the metrics, keeping stdout and
stderr, the store), and, from N and N/5 trials, what each further trial adds
without the run's fixed start-up. Target: under 20 ms per trial.

Threads: the same scikit-learn study (HistGradientBoosting, logistic regression,
SVC) on the local engine, with each worker limited to its share of the cores
(the default) and with ``threads_per_trial`` = all cores (what the libraries
take without a limit); the ratio of wall times, and whether the metrics agree.

    PYTHONPATH=src python bench/bench_runner.py [--trials 10000] [--workers 2]
        [--commands 100] [--study-trials 24] [--only commands,threads]

With ``--slurm`` it times the slurm engine instead (a running cluster, e.g.
``.ci/slurm-up``): the same trivial trials, ``--slurm-trials`` of them, batched
``--trials-per-task`` to an array task; reported, no target. The overhead per
trial is then the wall time per trial: submission, scheduling, each array
task's Python start-up and import, and the result files.

    PYTHONPATH=src python bench/bench_runner.py --slurm [--slurm-trials 200] \
        [--trials-per-task 200,50,10]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vareval.experiment import ExperimentSpec, Store, run

HERE = Path(__file__).resolve().parent


def bench(trials: int, workers: int | None, engine: str, slurm=None) -> float:
    seeds = trials // 100
    spec = ExperimentSpec(
        trial="vareval.experiment._demo:trivial_trial",
        factors={"model": ["a", "b"]},
        seeds=seeds,
        configs=10,
        reruns=5,
        space={"lr": {"distribution": "log-uniform", "low": 1e-4, "high": 1e-1}},
        sources=("data_split", "init"),
        entropy=1,
    )
    assert spec.n_trials == trials
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        with Store(path, create=True) as st:
            st.prepare(spec)
        t_prepare = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = run(spec, path, engine=engine, workers=workers, progress=False,
                     slurm=slurm)
        wall = time.perf_counter() - t0
        with Store(path) as st:
            own = st.con.execute(
                "SELECT sum(finished - started) FROM trials WHERE status = 'done'"
            ).fetchone()[0]
            assert st.counts()["done"] == trials
    k = report.workers
    if engine == "slurm":
        per = wall / trials
        print(
            f"slurm engine, {slurm['trials_per_task']} trials per array task "
            f"({report.workers} array tasks), {trials} trials: wall {wall:.2f} s, "
            f"trials' own time {own:.3f} s; {per * 1e3:.1f} ms per trial"
        )
        return per
    per = (wall - own / k) / trials
    print(
        f"{engine:>6} engine, {k} workers, {trials} trials: wall {wall:.2f} s, "
        f"trials' own time {own:.3f} s; overhead {per * 1e3:.3f} ms per trial "
        f"(target < 2 ms: {'met' if per < 2e-3 else 'NOT met'}); "
        f"grid insert {t_prepare * 1e3 / trials:.3f} ms per trial"
    )
    return per


def bench_provenance(repeats: int = 5) -> float:
    from vareval.experiment import _demo
    from vareval.experiment.provenance import capture

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        record = capture(_demo.trivial_trial)
        times.append(time.perf_counter() - t0)
    best, worst = min(times), max(times)
    print(
        f"provenance per run: best {best * 1e3:.1f} ms, worst {worst * 1e3:.1f} ms of "
        f"{repeats} (git {'found' if record['git'] else 'absent'}, "
        f"{len(record['packages'])} packages; target < 50 ms: "
        f"{'met' if worst < 0.05 else 'NOT met'})"
    )
    return worst


SCRIPT = 'import json, os; print(json.dumps({"x": int(os.environ.get("N", "1"))}))'


def _command_spec(n: int) -> ExperimentSpec:
    return ExperimentSpec(
        trial={"command": [sys.executable, "-I", "-S", "-c",
                           SCRIPT.replace("{", "{{").replace("}", "}}")]},
        factors={"model": ["a"]},
        seeds=n,
        sources=("init",),
        entropy=1,
    )


def _loop(n: int) -> float:
    argv = [sys.executable, "-I", "-S", "-c", SCRIPT]
    t0 = time.perf_counter()
    for _ in range(n):
        out = subprocess.run(argv, capture_output=True, check=True)
        json.loads(out.stdout.decode().splitlines()[-1])
    return time.perf_counter() - t0


def _vareval(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = run(_command_spec(n), Path(tmp) / "c.db", engine="local", workers=1,
                     progress=False)
        wall = time.perf_counter() - t0
    assert report.done == n, report
    return wall


def bench_commands(n: int, rounds: int = 3) -> float:
    """Command trials against ``subprocess.run`` of the same script, alternating.

    Two sizes, ``n`` and ``n // 5``: the difference of the differences is the
    cost of each further trial, without the run's fixed start-up (worker
    server, provenance, the store's creation).
    """
    small = max(1, n // 5)
    times: dict = {}
    for _ in range(rounds):
        for size in (n, small):
            times.setdefault(("loop", size), []).append(_loop(size))
            times.setdefault(("vareval", size), []).append(_vareval(size))
    best = {k: min(v) for k, v in times.items()}
    loop, wall = best["loop", n], best["vareval", n]
    per = (wall - loop) / n
    slope = ((wall - best["vareval", small]) - (loop - best["loop", small])) / (n - small)
    fixed = (best["vareval", small] - best["loop", small]) - slope * small
    print(
        f"command trials, local engine, 1 worker, {n} trials: vareval {wall:.2f} s, "
        f"subprocess.run loop {loop:.2f} s (best of {rounds} each); ratio "
        f"{wall / loop:.2f}; overhead {per * 1e3:.1f} ms per trial including the run's "
        f"start-up, beyond the script's own start-up of {loop / n * 1e3:.1f} ms"
    )
    print(
        f"  each further trial ({small} vs {n} trials): {slope * 1e3:.1f} ms beyond the "
        f"script's start-up (target < 20 ms: {'met' if slope < 0.02 else 'NOT met'}); "
        f"the run's fixed start-up {fixed:.2f} s"
    )
    return slope


def study_trial(trial):
    """One scikit-learn fit (the model is the factor) on a synthetic data set."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    x, y = make_classification(n_samples=3000, n_features=40, n_informative=12,
                               random_state=trial.int_seed("data_split"))
    model = trial.factors["model"]
    if model == "hgb":
        clf = HistGradientBoostingClassifier(max_iter=60, early_stopping=False,
                                             random_state=trial.int_seed("init"))
    elif model == "logreg":
        clf = LogisticRegression(C=trial.config["C"], max_iter=500)
    else:
        clf = SVC(C=trial.config["C"])
    clf.fit(x[:2000], y[:2000])
    return {"accuracy": float(clf.score(x[2000:], y[2000:]))}


def bench_threads(trials: int, workers: int) -> float:
    """The same study with each worker's share of the cores and with all cores each."""
    cores = os.cpu_count() or 1
    base = dict(
        trial="bench_runner:study_trial",
        factors={"model": ["hgb", "logreg", "svc"]},
        seeds=max(1, trials // 3),
        space={"C": {"distribution": "log-uniform", "low": 0.1, "high": 10.0}},
        sources=("data_split", "init"),
        entropy=3,
        paths=(str(HERE),),
    )
    walls, frames = {}, {}
    for label, threads in (("limited", None), ("unlimited", cores)):
        spec = ExperimentSpec(
            **base, resources={"threads_per_trial": threads} if threads else {}
        )
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            report = run(spec, Path(tmp) / "s.db", workers=workers, progress=False)
            walls[label] = time.perf_counter() - t0
            with Store(Path(tmp) / "s.db") as st:
                frames[label] = st.frame()["accuracy"].tolist()
        print(f"  {label:>9}: {report.threads} threads per trial, {workers} workers, "
              f"{report.done} trials: wall {walls[label]:.1f} s")
    ratio = walls["unlimited"] / walls["limited"]
    print(
        f"threads: the study took {ratio:.2f} times as long without the limit "
        f"({cores} cores, {workers} workers); metrics identical: "
        f"{'yes' if frames['limited'] == frames['unlimited'] else 'NO'}"
    )
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slurm", action="store_true",
                        help="time the slurm engine (needs a running cluster) instead")
    parser.add_argument("--slurm-trials", type=int, default=200)
    parser.add_argument("--trials-per-task", default="200,50,10")
    parser.add_argument("--commands", type=int, default=100)
    parser.add_argument("--study-trials", type=int, default=24)
    parser.add_argument("--only", default="trivial,provenance,commands,threads")
    args = parser.parse_args()
    if args.slurm:
        for per_task in map(int, args.trials_per_task.split(",")):
            bench(args.slurm_trials, None, "slurm", {"trials_per_task": per_task})
        raise SystemExit
    parts = set(args.only.split(","))
    if "trivial" in parts:
        print("cold: the first run in this process also starts the worker server")
        bench(args.trials, args.workers, "local")
        print("warm: a second run (workers fork from the already running server)")
        bench(args.trials, args.workers, "local")
        bench(args.trials, 1, "serial")
    if "provenance" in parts:
        bench_provenance()
    if "commands" in parts:
        bench_commands(args.commands)
    if "threads" in parts:
        bench_threads(args.study_trials, args.workers)
