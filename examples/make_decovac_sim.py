"""Generate src/vareval/datasets/decovac_sim.csv: a simulated DECoVaC experiment.

3 models x 2 optimizers, 10 seeds, 5 hyper-parameter configurations sampled per
seed (nested), 3 reruns each: 900 rows. The response is simulated with KNOWN
components: seed SD 0.010, configuration SD 0.020, residual (rerun) SD 0.008,
and experiment means below. Run from the repository root:

    PYTHONPATH=src python examples/make_decovac_sim.py
"""

from pathlib import Path

from vareval.experiment.design import reseeding_design
from vareval.experiment.simulate import simulate_responses

MEANS = {
    "protonet_sgd": 0.760,
    "protonet_adam": 0.765,
    "matchnet_sgd": 0.740,
    "matchnet_adam": 0.742,
    "tadam_sgd": 0.775,
    "tadam_adam": 0.776,
}
SD_SEED, SD_CONFIG, SD_RESIDUAL = 0.010, 0.020, 0.008

design = reseeding_design(
    {"model": ["protonet", "matchnet", "tadam"], "optimizer": ["sgd", "adam"]},
    seeds=10,
    configs=5,
    reruns=3,
    nested=True,
)
data = simulate_responses(
    design,
    means=MEANS,
    sd_seed=SD_SEED,
    sd_config=SD_CONFIG,
    sd_residual=SD_RESIDUAL,
    column="accuracy",
    rng=20261129,
)
data["accuracy"] = data["accuracy"].round(6)
out = Path(__file__).resolve().parents[1] / "src" / "vareval" / "datasets"
data.drop(columns=["config_index"]).to_csv(out / "decovac_sim.csv", index=False)
print(f"wrote {len(data)} rows to {out / 'decovac_sim.csv'}")
