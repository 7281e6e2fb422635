"""Figures, one module per job, below the statistics layer.

Each function takes plain numbers (or a result's fields) and returns a bare
matplotlib ``Figure``; matplotlib is imported inside the functions. This
package imports nothing from ``vareval.stats``, ``vareval.data`` or above, so
a result's ``plot()`` and the report may both use it.
"""
