"""The thresholds where the reference changes engine or a policy changes its answer, each measured one way.

Generated scenarios (:func:`toolcanon_conformance.strategies.scenarios`) draw values, schemas, bounds and budgets
just below, at and just above each of these, and :mod:`toolcanon_conformance.reach` says which side of each a
scenario reaches. The numbers mirror the reference's own constants (``conformance/tests/test_thresholds.py``
holds them equal), so that the kit names them in one place without reaching into the reference's private
modules. A threshold's :attr:`~Threshold.last_within` is the largest measure still handled the first way: the
recursive snapshot, the step-by-step normalization, the inlined property checks, the recursive validator
closures, the text kept whole, the timer armed, the budget refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "CLOSURE_HEIGHT",
    "FAST_DEPTH",
    "FUSED_SCHEMA_DEPTH",
    "FUSED_THRESHOLD",
    "MAX_TIMER_DELAY_MS",
    "SIDES",
    "THRESHOLDS",
    "UNROLLED_PROPERTIES",
    "Side",
    "Threshold",
    "side_of",
]

FAST_DEPTH: Final = 400
"""``toolcanon.jsonvalue``: the deepest container level (the root at 0) the recursive snapshot and check take."""
FUSED_THRESHOLD: Final = 64
"""``toolcanon._fused.FusedNormalization``: the data a tool's normalizations see (1 per value plus the items of
its root container) before its fused walk is generated."""
FUSED_SCHEMA_DEPTH: Final = 64
"""``toolcanon._fused``: the deepest container schema level (the root at 0) the fused walk is generated for."""
UNROLLED_PROPERTIES: Final = 32
"""``toolcanon._fused``: the most properties of an object schema checked by inlined code, not by a table."""
CLOSURE_HEIGHT: Final = 100
"""``toolcanon._schema_deep``: the tallest schema (a leaf 1) the recursive validator closures check alone."""
MAX_TIMER_DELAY_MS: Final = 2_147_483_647
"""``toolcanon.timeout``: the longest budget the timeout policy arms a timer for (``setTimeout``'s bound)."""

Side = Literal["below", "at", "above"]
SIDES: Final[tuple[Side, ...]] = ("below", "at", "above")


@dataclass(frozen=True, slots=True)
class Threshold:
    """One threshold: its name, what its measure counts, and the largest measure handled the first way."""

    name: str
    measure: str
    last_within: int


THRESHOLDS: Final[tuple[Threshold, ...]] = (
    Threshold(
        "snapshot-depth",
        "containers nested in one value, the root counted (past it: the iterative snapshot and check)",
        FAST_DEPTH + 1,
    ),
    Threshold(
        "fused-items",
        "items of the root container of a tool's first value (past it: the fused walk from that value on)",
        FUSED_THRESHOLD - 2,
    ),
    Threshold(
        "fused-schema-depth",
        "container, any-JSON and oneOf nodes nested in one output schema, the root counted (past it: never fused)",
        FUSED_SCHEMA_DEPTH + 1,
    ),
    Threshold(
        "fused-properties",
        "properties of one object node of an output schema (past it: checked through a table)",
        UNROLLED_PROPERTIES,
    ),
    Threshold(
        "closure-height",
        "the height of an output or parameter schema, a leaf 1 (past it: the iterative validator)",
        CLOSURE_HEIGHT,
    ),
    Threshold(
        "spill-bound",
        "UTF-8 bytes of a direct call's text past the spill policy's maxBytes (past it: spilled)",
        0,
    ),
    Threshold(
        "timer-delay",
        "a tool's timeoutMs (past it: the timeout wrapper raises instead of arming a timer)",
        MAX_TIMER_DELAY_MS,
    ),
    Threshold(
        "timeout-floor",
        "a tool's timeoutMs (up to it: registration refuses the tool)",
        0,
    ),
)
"""Every threshold generated scenarios reach, by name."""


def side_of(measure: float, threshold: Threshold) -> Side | None:
    """Where ``measure`` lies: ``at`` the threshold's last measure handled the first way, ``below`` it by at most
    one, ``above`` it by at most one; ``None`` farther off."""
    last = threshold.last_within
    if measure == last:
        return "at"
    if last - 1 <= measure < last:
        return "below"
    if last < measure <= last + 1:
        return "above"
    return None
