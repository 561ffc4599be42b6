"""Factory options: the caps a family takes are positive integers, as the original's plugin configs require."""

from __future__ import annotations

__all__ = ["positive_integer"]


def positive_integer(name: str, value: object) -> int:
    """``value`` when it is a positive integer (``2.0`` counts as ``2``), else a :class:`ValueError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
