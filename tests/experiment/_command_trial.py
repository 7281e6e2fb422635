"""A plain script run as a command trial; what it does is chosen by --mode.

It knows nothing of vareval's Python API except trial_seeds() in one mode.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--mode", default="stdout")
p.add_argument("--lr", type=float, default=0.0)
p.add_argument("--model", default="")
p.add_argument("--pidfile", default="")
p.add_argument("--sleep", type=float, default=0.0)
a = p.parse_args()

t0 = time.time()
time.sleep(a.sleep)
visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
metrics = {
    "lr": a.lr,
    "model_is_b": float(a.model == "b"),
    "init": int(os.environ["VAREVAL_SEED_INIT"]),
    "trial_id": int(os.environ["VAREVAL_TRIAL_ID"]),
    "omp": float(os.environ.get("OMP_NUM_THREADS", "0")),
    "n_devices": len([d for d in visible.split(",") if d]),
    "device": float(visible) if visible.isdigit() else -1.0,
    "t0": t0,
    "t1": time.time(),
}
for i in range(60):
    print(f"stderr line {i}", file=sys.stderr)
if a.mode == "stdout":
    print("some progress output")
    print(json.dumps(metrics))
elif a.mode == "file":
    print("no JSON here")
    with open(os.environ["VAREVAL_METRICS"], "w") as fh:
        json.dump(metrics, fh)
elif a.mode == "helper":
    from vareval.experiment import trial_seeds

    seeds = trial_seeds()
    print(json.dumps({"init": seeds["init"], "data_split": seeds["data_split"]}))
elif a.mode == "exit":
    print("fatal: out of memory", file=sys.stderr)
    sys.exit(3)
elif a.mode == "signal":
    os.kill(os.getpid(), signal.SIGKILL)
elif a.mode == "none":
    print("finished, but no metrics")
elif a.mode == "string":
    print(json.dumps({"acc": "high"}))
elif a.mode == "badfile":
    with open(os.environ["VAREVAL_METRICS"], "w") as fh:
        fh.write("{not json")
elif a.mode == "hang":
    # a child that ignores SIGTERM, in the same process group; both hang
    child = subprocess.Popen([sys.executable, "-c", (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "time.sleep(600)")])
    with open(a.pidfile, "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(600)
