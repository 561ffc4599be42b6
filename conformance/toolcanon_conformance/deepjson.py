"""JSON of any depth: parsed and measured without recursion, and the nesting limit of the kit's own documents.

The standard parser recurses once per level and raises :class:`RecursionError` near a thousand levels, while
the contract allows values 100,000 levels deep. :func:`loads` parses with the fast standard parser and falls
back to an iterative one only when that runs out of stack, so a transcript of any depth can be judged.

The documents the kit reads besides transcripts (adapter answers, scenario files, baselines) are shallow by
nature and go where recursion is unavoidable: JSON Schema validation, the reports' writers, the standard JSON
reader of an adapter in another language. They are refused beyond :data:`NESTING_LIMIT` levels, a limit
checked while parsing, so that no deep input is ever built in memory just to be refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["NESTING_LIMIT", "TooDeep", "first_too_deep", "loads"]

NESTING_LIMIT: Final = 64
"""How deeply an adapter answer, a scenario file or a baseline may nest (the outermost value is level 1)."""

_Path = tuple[str | int, ...]

_scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_SPACES: Final = frozenset(" \t\n\r")
_NUMBER: Final = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}
_CONSTANTS: Final = ("NaN", "Infinity", "-Infinity")


class TooDeep(ValueError):
    """A JSON text or value nested deeper than a limit; ``path`` is where the first too-deep value starts."""

    def __init__(self, limit: int, path: _Path) -> None:
        super().__init__(f"nested deeper than {limit} levels")
        self.limit = limit
        self.path = path


def loads(
    text: str,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
    max_depth: int | None = None,
) -> Any:
    """``json.loads(text, ...)`` at any depth; beyond ``max_depth`` levels (when given) :class:`TooDeep`.

    ``max_depth`` counts levels as :func:`first_too_deep` does, so it goes with the default object type.
    Raises :class:`ValueError` (a :class:`json.JSONDecodeError` for malformed text) as ``json.loads`` does.
    """
    try:
        value = json.loads(
            text,
            object_pairs_hook=object_pairs_hook,
            parse_float=parse_float,
            parse_int=parse_int,
            parse_constant=parse_constant,
        )
    except RecursionError:
        return _IterativeParser(text, object_pairs_hook, parse_float, parse_int, parse_constant, max_depth).parse()
    if max_depth is not None:
        path = first_too_deep(value, max_depth)
        if path is not None:
            raise TooDeep(max_depth, path)
    return value


def first_too_deep(value: Any, limit: int) -> _Path | None:
    """The path of the first container (in document order) nested deeper than ``limit``, or ``None``.

    Dicts are objects, lists and tuples arrays; a cycle counts as infinitely deep.
    """
    # Each entry: the value, its depth, and the entry of its parent with the key that leads to it.
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(value, 1, None)]
    while stack:
        entry = stack.pop()
        item, depth, _ = entry
        if isinstance(item, dict):
            children: list[tuple[str | int, Any]] = list(item.items())
        elif isinstance(item, list | tuple):
            children = list(enumerate(item))
        else:
            continue
        if depth > limit:
            return _path_of(entry)
        for key, child in reversed(children):
            stack.append((child, depth + 1, (entry, key)))
    return None


def _path_of(entry: tuple[Any, int, tuple[Any, ...] | None]) -> _Path:
    parts: list[str | int] = []
    link = entry[2]
    while link is not None:
        parent, key = link
        parts.append(key)
        link = parent[2]
    return tuple(reversed(parts))


class _IterativeParser:
    """The grammar of ``json.loads``, with an explicit stack instead of recursion."""

    def __init__(
        self,
        text: str,
        object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
        parse_float: Callable[[str], Any] | None,
        parse_int: Callable[[str], Any] | None,
        parse_constant: Callable[[str], Any] | None,
        max_depth: int | None,
    ) -> None:
        self.text = text
        self.make_object: Callable[[list[tuple[str, Any]]], Any] = object_pairs_hook or dict
        self.parse_float: Callable[[str], Any] = parse_float or float
        self.parse_int: Callable[[str], Any] = parse_int or int
        self.parse_constant: Callable[[str], Any] = parse_constant or float
        self.max_depth = max_depth

    def parse(self) -> Any:
        text, length, space = self.text, len(self.text), _WHITESPACE.match
        # The open containers, innermost last: their members so far, and for an object the pending key.
        members: list[list[Any]] = []
        keys: list[str | None] = []
        position = space(text, 0).end()  # type: ignore[union-attr]
        while True:
            char = text[position] if position < length else ""
            if char in {"{", "["}:
                if self.max_depth is not None and len(members) >= self.max_depth:
                    raise TooDeep(self.max_depth, self._path(members, keys))
                position += 1
                if position < length and text[position] in _SPACES:
                    position = space(text, position).end()  # type: ignore[union-attr]
                if text.startswith("}" if char == "{" else "]", position):
                    value: Any = self.make_object([]) if char == "{" else []
                    position += 1
                else:
                    members.append([])
                    if char == "{":
                        key, position = self._key(position)
                        keys.append(key)
                    else:
                        keys.append(None)
                    continue
            else:
                value, position = self._scalar(position)
            while True:
                if position < length and text[position] in _SPACES:
                    position = space(text, position).end()  # type: ignore[union-attr]
                if not members:
                    if position != length:
                        raise json.JSONDecodeError("Extra data", text, position)
                    return value
                pending = keys[-1]
                members[-1].append(value if pending is None else (pending, value))
                char = text[position] if position < length else ""
                if char == ",":
                    position += 1
                    if position < length and text[position] in _SPACES:
                        position = space(text, position).end()  # type: ignore[union-attr]
                    if pending is not None:
                        keys[-1], position = self._key(position)
                    break
                if char != ("]" if pending is None else "}"):
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, position)
                items = members.pop()
                keys.pop()
                value = items if pending is None else self.make_object(items)
                position += 1

    def _key(self, position: int) -> tuple[str, int]:
        text = self.text
        if not text.startswith('"', position):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, position)
        key, position = _scanstring(text, position + 1, True)
        if not text.startswith(":", position):
            position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
            if not text.startswith(":", position):
                raise json.JSONDecodeError("Expecting ':' delimiter", text, position)
        position += 1
        if position < len(text) and text[position] in _SPACES:
            position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
        return key, position

    def _scalar(self, position: int) -> tuple[Any, int]:
        text = self.text
        if text.startswith('"', position):
            return _scanstring(text, position + 1, True)
        number = _NUMBER.match(text, position)
        if number is not None:
            integer, fraction, exponent = number.groups()
            if fraction or exponent:
                return self.parse_float(number.group()), number.end()
            return self.parse_int(integer), number.end()
        for literal, literal_value in _LITERALS.items():
            if text.startswith(literal, position):
                return literal_value, position + len(literal)
        for constant in _CONSTANTS:
            if text.startswith(constant, position):
                return self.parse_constant(constant), position + len(constant)
        raise json.JSONDecodeError("Expecting value", text, position)

    @staticmethod
    def _path(members: list[list[Any]], keys: list[str | None]) -> _Path:
        return tuple(len(items) if key is None else key for items, key in zip(members, keys, strict=True))
