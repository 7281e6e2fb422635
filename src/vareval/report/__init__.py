"""Presentation: plots (matplotlib, imported lazily) and the HTML report."""
