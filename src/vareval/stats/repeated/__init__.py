"""Repeated runs: summaries, the best-of-k illusion, paired differences and planning."""
