"""Pausing the cyclic garbage collector around walks that allocate only acyclic data.

A walk over a large or deep value keeps one or more containers per node alive until it ends, so they outlive the
young generations and push the collector into full collections, each of which rescans the whole heap: the walk's
cost then grows faster than its size. Nothing such a walk allocates is cyclic, so reference counting frees all of
it and pausing the collector loses nothing; cyclic garbage made meanwhile elsewhere is collected once it resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["without_collector"]

_T = TypeVar("_T")

_lock = threading.Lock()
_holders = 0
_resume = False


def without_collector(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` with the cyclic garbage collector paused, and its previous state restored after.

    Exception-safe, re-entrant and thread-safe: nested and concurrent calls share one pause, which ends when the
    last of them returns or raises; the collector is then re-enabled only if it was enabled when the first began
    (a collector the caller had disabled stays disabled).
    """
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        return function(*args)
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
