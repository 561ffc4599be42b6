"""Time-bounded fuzz targets for the reference and the kit: ``python -m fuzz`` (or ``nox -s fuzz``).

Each target feeds fuzz bytes to one entry point that reads untrusted input and accepts only its documented
typed errors; any other exception, a ``RecursionError`` or an input slower than the per-input bound is a
crash. ``docs/fuzzing.md`` says how to run them and read the results.
"""

from __future__ import annotations

import importlib
from typing import Final

from fuzz.target import Target

__all__ = ["TARGETS", "load_target"]

TARGETS: Final = {
    "snapshot": "fuzz.snapshot_walker",
    "canonical": "fuzz.canonical_writer",
    "session-log": "fuzz.session_log",
    "protocol": "fuzz.protocol_decoder",
    "scenario": "fuzz.scenario_loader",
}
"""Every target's name and the module defining it (imported only when the target is loaded)."""


def load_target(name: str) -> Target:
    """The target called ``name``; its module (and the project modules it fuzzes) is imported now."""
    try:
        module = TARGETS[name]
    except KeyError:
        raise ValueError(f"no fuzz target {name!r} (there are {', '.join(TARGETS)})") from None
    target: Target = importlib.import_module(module).TARGET
    return target
