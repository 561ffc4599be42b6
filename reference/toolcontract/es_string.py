"""ECMAScript ``String(value)`` of a lossless JSON value: how a denial reason that is not a string reads as text.

The contract writes a denial's content as a template literal, ``Error: ${reason}``; for a JSON value that is
``String(reason)``: a number in ``Number::toString`` form, ``null``, ``true`` / ``false``, an array's items
joined with ``,`` (nested arrays the same way, ``null`` items as empty text), and ``[object Object]`` for an
object. The walk is iterative, so depth is bounded by memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from toolcontract.jsonvalue import JsonValue, format_number

__all__ = ["es_string"]

_OBJECT: Final = "[object Object]"


def _scalar(value: JsonValue) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int | float):
        return format_number(value)
    return _OBJECT


def es_string(value: JsonValue) -> str:
    """``String(value)`` for a lossless JSON value (a snapshot: exact or frozen ``dict`` / ``list`` only)."""
    if not isinstance(value, list):
        return _scalar(value)
    parts: list[str] = []
    stack: list[tuple[Iterator[JsonValue], list[bool]]] = [(iter(value), [True])]
    while stack:
        items, first = stack[-1]
        item = next(items, _END)
        if item is _END:
            stack.pop()
            continue
        if not first[0]:
            parts.append(",")
        first[0] = False
        if isinstance(item, list):
            stack.append((iter(item), [True]))
        elif item is not None:  # Array.prototype.join writes null (and undefined) items as empty text
            parts.append(_scalar(item))
    return "".join(parts)


_END: Final = object()
