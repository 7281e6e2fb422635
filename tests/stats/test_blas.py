"""One BLAS thread for the many small products of a fit: limited by threadpoolctl, or already so."""

import json
import os
import subprocess
import sys

import pytest

_PROBE = """
import json, sys
import numpy, scipy.linalg
from vareval.stats._blas import one_blas_thread
with one_blas_thread():
    loaded = "threadpoolctl" in sys.modules
    from threadpoolctl import threadpool_info
    threads = sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
print(json.dumps([loaded, threads]))
"""


def _probe(**env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("env", [{"OPENBLAS_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "1"},
                                 {"OPENBLAS_NUM_THREADS": "0", "OMP_NUM_THREADS": "1"}])
def test_blas_started_with_one_thread_is_left_alone(env):
    from threadpoolctl import threadpool_info

    if not all(i["internal_api"] == "openblas" for i in threadpool_info()
               if i["user_api"] == "blas"):
        pytest.skip("numpy's BLAS is not OpenBLAS here")
    assert _probe(**env) == [False, [1]]  # one thread, without threadpoolctl's scan


@pytest.mark.parametrize("env", [{}, {"OPENBLAS_NUM_THREADS": "2"},
                                 {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"}])
def test_more_threads_are_limited_to_one(env):
    assert _probe(**env) == [True, [1]]
