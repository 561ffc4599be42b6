"""Where two transcripts differ: the JSON paths, expected and actual, in document order.

Transcripts are compared byte for byte; only when the bytes differ is this module asked why. It parses both
texts keeping what ``json.loads`` would blur (key order, the written form of numbers), walks them side by side,
and yields a :class:`Difference` per differing place, the first one first. When the two parse to the same
data and still differ in bytes (whitespace, the escaping of a string), the difference is reported at the path
of the first differing byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Literal, TypeAlias

from toolcontract_conformance.display import excerpts, visible

__all__ = [
    "Difference",
    "DifferenceKind",
    "Path",
    "compare",
    "format_path",
    "is_under",
    "parse_path",
]

Path: TypeAlias = tuple[str | int, ...]
DifferenceKind: TypeAlias = Literal["value", "type", "missing", "unexpected", "key-order", "format", "not-json"]

_MAX_DIFFERENCES = 100
_SHOWN = 300
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the actual transcript differs from the expected one.

    ``expected`` and ``actual`` are JSON texts, whole (only a transcript that is not JSON is shortened),
    ``None`` when that side has nothing there. ``detail`` says more when the texts alone do not (where two
    strings part, a key order, ...). Its text form shows long texts around where they first differ.
    """

    path: Path
    kind: DifferenceKind
    expected: str | None
    actual: str | None
    detail: str = ""

    @property
    def where(self) -> str:
        """The path written as ``$.steps.c1.result.content[0].text``."""
        return format_path(self.path)

    def __str__(self) -> str:
        expected, actual = excerpts(self.expected, self.actual)
        lines = [f"{self.where}: {self.kind}" + (f" ({self.detail})" if self.detail else "")]
        lines.append(f"  expected: {'<nothing>' if expected is None else expected}")
        lines.append(f"  actual:   {'<nothing>' if actual is None else actual}")
        return visible("\n".join(lines))


def format_path(path: Path) -> str:
    """``$`` followed by ``.key`` (or ``["key"]`` when the key is not a plain name) and ``[index]`` parts."""
    parts = ["$"]
    for element in path:
        if isinstance(element, int):
            parts.append(f"[{element}]")
        elif _SIMPLE_KEY.match(element):
            parts.append(f".{element}")
        else:
            parts.append(f"[{json.dumps(element, ensure_ascii=False)}]")
    return "".join(parts)


_PATH_PART = re.compile(r'\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def parse_path(text: str) -> Path:
    """The inverse of :func:`format_path`; the leading ``$`` and ``.`` are optional (``steps.c1.result``)."""
    rest = text.strip()
    if rest.startswith("$"):
        rest = rest[1:]
    if rest and not rest.startswith((".", "[")):
        rest = "." + rest
    path: list[str | int] = []
    position = 0
    while position < len(rest):
        match = _PATH_PART.match(rest, position)
        if match is None:
            raise ValueError(f"not a JSON path: {text!r} (at {rest[position:]!r})")
        name, index, quoted = match.groups()
        if name is not None:
            path.append(name)
        elif index is not None:
            path.append(int(index))
        else:
            path.append(json.loads(quoted))
        position = match.end()
    return tuple(path)


def is_under(path: Path, prefix: Path) -> bool:
    """True when ``path`` is ``prefix`` or lies inside it."""
    return path[: len(prefix)] == prefix


def compare(expected: bytes, actual: bytes, ignore: Sequence[Path] = ()) -> tuple[Difference, ...]:
    """The differences of ``actual`` from ``expected`` (empty when they agree), at most 100, first first.

    Differences at or under an ``ignore`` path do not count. When only ignored places differ the two agree.
    """
    if expected == actual:
        return ()
    expected_text = expected.decode("utf-8", errors="replace")
    actual_text = actual.decode("utf-8", errors="replace")
    try:
        expected_tree = _parse(expected_text)
    except ValueError as error:
        return (Difference((), "not-json", _excerpt(expected_text), _excerpt(actual_text), f"expected: {error}"),)
    try:
        actual_tree = _parse(actual_text)
    except ValueError as error:
        return (Difference((), "not-json", _excerpt(expected_text), _excerpt(actual_text), str(error)),)
    differences: list[Difference] = []
    structural = 0
    for difference in _walk((), expected_tree, actual_tree):
        structural += 1
        if not any(is_under(difference.path, prefix) for prefix in ignore):
            differences.append(difference)
            if len(differences) >= _MAX_DIFFERENCES:
                break
    if structural:
        return tuple(differences)
    return (_format_difference(expected_text, actual_text),)


# --- parsing that keeps key order and number text ------------------------------------------------------


class _Number(str):
    """A number as written, so that ``1`` and ``1.0`` differ as they do in bytes."""


class _Object(list[tuple[str, Any]]):
    """A JSON object as its list of members, in written order."""


def _parse(text: str) -> Any:
    return json.loads(
        text,
        object_pairs_hook=_Object,
        parse_float=_Number,
        parse_int=_Number,
        parse_constant=_Number,
    )


def _type_name(value: Any) -> str:
    if isinstance(value, _Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, _Object):
        return "object"
    return "array"


def _walk(path: Path, expected: Any, actual: Any) -> Iterator[Difference]:
    expected_type, actual_type = _type_name(expected), _type_name(actual)
    if expected_type != actual_type:
        yield Difference(path, "type", _show(expected), _show(actual), f"{expected_type} ≠ {actual_type}")
    elif expected_type == "object":
        yield from _walk_object(path, expected, actual)
    elif expected_type == "array":
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            yield from _walk((*path, index), left, right)
        for index in range(len(actual), len(expected)):
            yield Difference((*path, index), "missing", _show(expected[index]), None)
        for index in range(len(expected), len(actual)):
            yield Difference((*path, index), "unexpected", None, _show(actual[index]))
    elif expected != actual or type(expected) is not type(actual):
        yield Difference(path, "value", _show(expected), _show(actual), _value_detail(expected, actual))


def _walk_object(path: Path, expected: _Object, actual: _Object) -> Iterator[Difference]:
    expected_members, actual_members = dict(expected), dict(actual)
    if len(expected_members) != len(expected) or len(actual_members) != len(actual):
        side = "expected" if len(expected_members) != len(expected) else "actual"
        yield Difference(path, "format", None, None, f"a key is repeated in the {side} object")
        return
    emitted = False
    for key, value in expected:
        if key in actual_members:
            for difference in _walk((*path, key), value, actual_members[key]):
                emitted = True
                yield difference
        else:
            emitted = True
            yield Difference((*path, key), "missing", _show(value), None)
    for key, value in actual:
        if key not in expected_members:
            emitted = True
            yield Difference((*path, key), "unexpected", None, _show(value))
    if not emitted and [key for key, _ in expected] != [key for key, _ in actual]:
        yield Difference(
            path,
            "key-order",
            _show([key for key, _ in expected]),
            _show([key for key, _ in actual]),
            "same members in another order",
        )


def _value_detail(expected: Any, actual: Any) -> str:
    if isinstance(expected, _Number) and isinstance(actual, _Number):
        try:
            if float(expected) == float(actual):
                return "the same number written differently"
        except ValueError:
            pass
        return ""
    if isinstance(expected, str) and isinstance(actual, str):
        index = next(
            (i for i, (left, right) in enumerate(zip(expected, actual, strict=False)) if left != right),
            min(len(expected), len(actual)),
        )
        detail = f"strings part at character {index}"
        if len(expected) > _SHOWN or len(actual) > _SHOWN:
            start = max(0, index - 40)
            detail += f": expected …{_dump(expected[start : index + 40])}… actual …{_dump(actual[start : index + 40])}…"
        return detail
    return ""


# --- showing values ------------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _Object):
        return "{" + ",".join(f"{_dump(key)}:{_dump(member)}" for key, member in value) + "}"
    return "[" + ",".join(_dump(item) for item in value) + "]"


def _show(value: Any) -> str:
    return _dump(value)


def _excerpt(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"… ({len(text)} characters)"


# --- differences of form only --------------------------------------------------------------------------


def _format_difference(expected: str, actual: str) -> Difference:
    offset = next(
        (i for i, (left, right) in enumerate(zip(expected, actual, strict=False)) if left != right),
        min(len(expected), len(actual)),
    )
    start = max(0, offset - 30)
    return Difference(
        _path_at(expected, offset),
        "format",
        expected[start : offset + 30],
        actual[start : offset + 30],
        f"the same data written differently, from character {offset}",
    )


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _path_at(text: str, offset: int) -> Path:
    """The path of the innermost value of ``text`` (valid JSON) that holds character ``offset``."""
    # Each frame: [is_object, path of the container, index of the current item, expecting a key]
    stack: list[list[Any]] = []
    path: Path = ()
    position, length = 0, len(text)
    while position < length:
        position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
        container: Path = stack[-1][1] if stack else ()
        if position >= length or position > offset:
            return container
        char = text[position]
        end = position + 1
        if char == '"':
            string, end = scanstring(text, position + 1)
            is_key = bool(stack) and stack[-1][0] and stack[-1][3]
            if offset < end:
                return container if is_key else path
            if is_key:
                stack[-1][3] = False
                path = (*container, string)
        elif char in "{[":
            if offset == position:
                return path
            stack.append([char == "{", path, 0, True])
            if char == "[":
                path = (*path, 0)
        elif char in "}]":
            if offset == position:
                return container
            stack.pop()
            path = container
        elif char == ",":
            if offset == position:
                return container
            frame = stack[-1]
            if frame[0]:
                frame[3] = True
                path = container
            else:
                frame[2] += 1
                path = (*container, frame[2])
        elif char == ":":
            if offset == position:
                return container
        else:
            match = _NUMBER.match(text, position)
            end = match.end() if match and match.end() > position else position + (5 if char == "f" else 4)
            if offset < end:
                return path
        position = end
    return path
