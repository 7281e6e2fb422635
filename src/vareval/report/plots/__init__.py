"""Plots, one module per job; matplotlib is imported inside the functions."""
