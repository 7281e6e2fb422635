import numpy as np

from vareval.plots.significance import delta_distribution
from vareval.stats import paired_bootstrap, paired_randomization


def test_delta_distribution_draws_both_tests(tmp_path):
    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, 200)
    a = np.where(rng.random(200) < 0.8, g, 0)
    b = np.where(rng.random(200) < 0.7, g, 0)
    for test in (paired_bootstrap, paired_randomization):
        fig = delta_distribution(test(g, a, b, n_resamples=500, rng=0))
        path = tmp_path / f"{test.__name__}.png"
        fig.savefig(path)
        assert path.stat().st_size > 1000
        assert "δ" in fig.axes[0].get_xlabel()
