"""Section placeholder: wired to its analysis once that lands."""

from __future__ import annotations


def build(data):
    return None
