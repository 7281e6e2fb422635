"""Build the optional compiled bootstrap kernel; everything else is in pyproject.toml.

Where the C compiler or Python's headers are missing, the build skips the
extension (``optional=True``) and vareval uses its numpy path.
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
    ]
)
