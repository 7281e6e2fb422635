"""Build the optional compiled kernels; everything else is in pyproject.toml.

Where the C compiler or Python's headers are missing, the build skips the
extensions (``optional=True``) and vareval uses its numpy paths.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "vareval.stats.testset._bootkernel",
            ["src/vareval/stats/testset/_bootkernel.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(  # the table reader's spelling checks (vareval.data.io)
            "vareval.data._readkernel",
            ["src/vareval/data/_readkernel.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(  # the mixed model's supernodal Cholesky (BLAS from scipy, no link step)
            "vareval.stats.variance._superkernel",
            ["src/vareval/stats/variance/_superkernel.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ]
)
