"""Fuzz target ``canonical``: the canonical JSON writer (``toolcanon.jsonvalue.canonical_json``).

The first input byte picks the indent, the rest is a program of :mod:`fuzz.values`. The writer must write
exactly the lossless values and raise :class:`~toolcanon.jsonvalue.NotLosslessJson` for every other one;
what it writes (with a whitespace indent) must parse back (``JSON.parse`` style) to a value it writes to the
same compact text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from fuzz import seeds
from fuzz.target import ACCEPTED, PropertyViolation, Target, rejected
from fuzz.values import build_value, encode_json
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, NotLosslessJson, canonical_json, is_lossless_json

__all__ = ["TARGET", "check"]

_INDENTS: Final[tuple[int | str | None, ...]] = (None, 2, 0, 4, 10, 11, -3, "", "\t", "--", "abcdefghijklmn", "\ud800")


# Indented text holds depth × indent characters per line: past this many, writing it shows the format's
# quadratic size, not the writer's speed.
_MAX_INDENTATION: Final = 2_000_000


def _indentation(value: Any, indent: int | str) -> int:
    """How many indent characters ``canonical_json(value, indent)`` writes (``value`` is lossless JSON)."""
    width = min(max(indent, 0), 10) if isinstance(indent, int) else len(indent[:10])
    total = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if children:
            total += width * depth * (len(children) + 1) + width * len(children)
            stack.extend((child, depth + 1) for child in children)
    return total


def _parse_int(text: str) -> int | float:
    number = int(text)
    return number if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER else float(text)


def _parsed(text: str) -> Any:
    """``text`` read back as ``JSON.parse`` would (numbers beyond the safe range become doubles)."""
    return json.loads(text, parse_int=_parse_int)


def check(data: bytes) -> str:
    """Write the object ``data[1:]`` builds with the indent ``data[0]`` picks, and read the text back."""
    indent = _INDENTS[data[0] % len(_INDENTS)] if data else None
    value = build_value(data[1:])
    lossless = is_lossless_json(value)
    try:
        compact = canonical_json(value)
    except NotLosslessJson as error:
        if lossless:
            raise PropertyViolation("canonical_json refuses a lossless value") from None
        return rejected(error)
    if not lossless:
        raise PropertyViolation(f"canonical_json wrote a value that is not lossless: {compact[:200]!r}")
    if indent is not None and _indentation(value, indent) > _MAX_INDENTATION:
        indent = None
    text = canonical_json(value, indent) if indent is not None else compact
    if isinstance(indent, str) and indent.strip(" \t\n\r"):
        return ACCEPTED  # like JSON.stringify's, a gap that is not whitespace makes text that is not JSON
    try:
        reread = _parsed(text)
    except RecursionError:
        return ACCEPTED  # deeper than the standard parser reads: nothing to compare with
    except ValueError as error:
        raise PropertyViolation(f"canonical_json wrote text that is not JSON ({error}): {text[:200]!r}") from None
    if canonical_json(reread) != compact:
        raise PropertyViolation(f"{text[:200]!r} does not read back to the value it was written from")
    return ACCEPTED


def _seeds() -> Iterator[bytes]:
    for position, document in enumerate(seeds.documents()):
        yield bytes((position % len(_INDENTS),)) + encode_json(document)
    for chunk in seeds.in_chunks(seeds.vector_numbers()) + seeds.in_chunks(seeds.vector_strings()):
        yield b"\x00" + encode_json(chunk)
    for document in seeds.vector_objects():
        yield b"\x01" + encode_json(document)


TARGET = Target(
    name="canonical",
    summary="toolcanon.jsonvalue.canonical_json of arbitrary Python objects, any indent",
    check=check,
    seeds=_seeds,
)
