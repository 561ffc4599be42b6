"""How Python values map onto the schema subset's kinds: records, plain arrays, JSON numbers, scalar types.

The mapping (decisions.md 1-2): a *record* is exactly a ``dict`` or :class:`FrozenDict` whose keys are all
exact ``str``; a *plain array* is exactly a ``list`` or :class:`FrozenList` (Python lists are always dense).
A *JSON number* is an ``int`` (never ``bool``) inside the I-JSON safe range ``±(2**53-1)``, or a finite
``float`` that is not ``-0.0``. Integers outside the safe range are not lossless JSON: they match neither
``number`` nor ``integer`` (in ``enum``/``const`` declarations and in values), because they cannot cross to
an ECMAScript peer without loss. A JSON *integer* is such a number with an integral value: ``2.0`` is one.
"""

from __future__ import annotations

import math
from typing import Any, Final, TypeGuard

from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, is_lossless_json

__all__ = [
    "ABSENT",
    "ANNOTATIONS",
    "RAW_TYPES",
    "SCALAR_TYPES",
    "SHAPE_KEYWORDS",
    "is_json_integer",
    "is_json_number",
    "is_lossless",
    "is_lossless_beside",
    "is_plain_array",
    "is_record",
    "matches_scalar_type",
]


class _Absent:
    """The marker for a key that is not present (Python has no ``undefined``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

ANNOTATIONS: Final = ("description", "title", "default", "examples")
CONSTRAINT_KEYWORDS: Final = frozenset(
    ("type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const")
)
# The fixed order in which the shape rules report keywords (digest 1.22).
SHAPE_KEYWORDS: Final = ("properties", "required", "additionalProperties", "items", "enum", "const")
SCALAR_TYPES: Final = ("string", "number", "integer", "boolean", "null")
RAW_TYPES: Final = ("object", "array", *SCALAR_TYPES)

_copysign = math.copysign


def is_record(value: object) -> TypeGuard[dict[str, Any]]:
    """True for a ``dict`` or :class:`FrozenDict` (exact types) whose keys are all exact ``str``."""
    kind = type(value)
    if kind is not dict and kind is not FrozenDict:
        return False
    return all(type(key) is str for key in value)  # type: ignore[attr-defined]


def is_plain_array(value: object) -> TypeGuard[list[Any]]:
    """True for a ``list`` or :class:`FrozenList` (exact types); tuples and other subclasses are not."""
    kind = type(value)
    return kind is list or kind is FrozenList


def is_json_number(value: object) -> bool:
    """True for a safe ``int`` (not ``bool``) or a finite ``float`` that is not ``-0.0``."""
    kind = type(value)
    if kind is float:
        number: float = value  # type: ignore[assignment]
        return number - number == 0.0 and (number != 0.0 or _copysign(1.0, number) > 0.0)
    return kind is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]


def is_json_integer(value: object) -> bool:
    """True for a JSON number with an integral value (``2`` and ``2.0``; ``1e300`` too, as in ECMAScript)."""
    kind = type(value)
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]
    if kind is float:
        number: float = value  # type: ignore[assignment]
        return number.is_integer() and (number != 0.0 or _copysign(1.0, number) > 0.0)
    return False


def matches_scalar_type(type_name: str, value: object) -> bool:
    """True when ``value`` is a value of the scalar schema type ``type_name`` (digest 1.22)."""
    if type_name == "string":
        return type(value) is str
    if type_name == "number":
        return is_json_number(value)
    if type_name == "integer":
        return is_json_integer(value)
    if type_name == "boolean":
        return type(value) is bool
    return value is None


def is_lossless(value: object) -> bool:
    """True when ``value`` is lossless JSON: ``is_lossless_json``'s answer, total and without copying.

    Depth is bounded by memory, not by recursion (see :func:`toolcanon.jsonvalue.is_lossless_json`).
    """
    try:
        return is_lossless_json(value)
    except RecursionError:
        raise
    except Exception:
        # Reading such a value ran foreign code that raised (e.g. a key's __repr__): it is not lossless JSON.
        return False


def is_lossless_beside(record: dict[Any, Any], declared: dict[str, Any]) -> bool:
    """Whether an object is lossless JSON, given that each of its ``declared`` properties is already valid.

    A value with no violation under a schema node is lossless JSON (every node kind ends in a lossless check
    of what its children did not check), and a container found inside one of its own valid children would make
    that child cyclic. So only the keys and the undeclared values remain to be checked (digest 1.27 step 4).
    """
    for key, item in record.items():
        if type(key) is not str:
            return False
        if key not in declared and not is_lossless(item):
            return False
    return True
