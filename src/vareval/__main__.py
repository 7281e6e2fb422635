"""``python -m vareval``: the same as the ``vareval`` command."""

from vareval.cli import main

main()
