"""Write crossed_sparse.csv: a crossed seed x configuration design (no nesting).

300 seeds and 300 configurations in a ring of 12 sweeps, 6 runs per seed (1,800
rows), from bench/bench_mixed.py's ``make_crossed``. Run from the repository root:

    python tests/data/lme4/make_crossed_sparse.py
"""

import sys
from pathlib import Path

root = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(root / "bench"))
from bench_mixed import make_crossed  # noqa: E402

make_crossed(12, rng=3).to_csv(
    root / "tests/data/lme4/crossed_sparse.csv", index=False, float_format="%.17g"
)
