"""Draws that a fixed seed alone decides.

Hypothesis mixes into its draws the literals of every local module imported so far (its "local constants"), so
what a fixed seed draws depends on which tests ran before in the same process: under ``pytest-xdist`` each
worker holds another set. Inside :func:`draws_of_the_seed_alone` it draws from its own constants only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis.internal.conjecture import providers

__all__ = ["draws_of_the_seed_alone"]


@contextmanager
def draws_of_the_seed_alone() -> Iterator[None]:
    """Hypothesis draws without the constants of the local modules imported so far."""
    collect = providers._get_local_constants
    providers._get_local_constants = providers.Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = collect
        providers.CONSTANTS_CACHE.cache.clear()
