"""Per-trial overhead of the runner and store: 10,000 trivial trials, local engine.

overhead per trial = (wall time - sum of the trials' own time / workers) / trials

The wall time covers everything `vareval.experiment.run` does: creating the
store, inserting the grid, starting the worker processes, claiming, sending,
receiving and writing every trial. Target: under 2 ms per trial.

Provenance (trial code hash, git state, package versions, machine) is
captured once per run; its cost is timed on its own. Target: under 50 ms.

    PYTHONPATH=src python bench/bench_runner.py [--trials 10000] [--workers 2]

With ``--slurm`` it times the slurm engine instead (a running cluster, e.g.
``.ci/slurm-up``): the same trivial trials, ``--slurm-trials`` of them, batched
``--trials-per-task`` to an array task; reported, no target. The overhead per
trial is then the wall time per trial: submission, scheduling, each array
task's Python start-up and import, and the result files.

    PYTHONPATH=src python bench/bench_runner.py --slurm [--slurm-trials 200] \
        [--trials-per-task 200,50,10]
"""

import argparse
import tempfile
import time
from pathlib import Path

from vareval.experiment import ExperimentSpec, Store, run


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


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slurm", action="store_true",
                        help="time the slurm engine (needs a running cluster) instead")
    parser.add_argument("--slurm-trials", type=int, default=200)
    parser.add_argument("--trials-per-task", default="200,50,10")
    args = parser.parse_args()
    if args.slurm:
        for per_task in map(int, args.trials_per_task.split(",")):
            bench(args.slurm_trials, None, "slurm", {"trials_per_task": per_task})
        raise SystemExit
    print("cold: the first run in this process also starts the worker server")
    bench(args.trials, args.workers, "local")
    print("warm: a second run (workers fork from the already running server)")
    bench(args.trials, args.workers, "local")
    bench(args.trials, 1, "serial")
    bench_provenance()
