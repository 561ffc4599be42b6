"""Generator tags: large and deep lossless JSON values, written compactly in a scenario.

A scenario writes a value too large or too deep to spell out (a million items, a hundred thousand levels) as a
tag, ``{"$generate": KIND, ...}`` (``docs/protocol.md``, "Generated values"). Unlike an exotic tag, a generator
tag stands for plain JSON: :func:`expand` replaces every tag of a document by the value it stands for, without
recursion, and an adapter runs the expanded document. :func:`tag_problems` checks the tags of a scenario
document, bounds included, so that no scenario can make an adapter build more than :data:`MAX_SIZE` values.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "GENERATORS",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_SIZE",
    "expand",
    "holds_generator_tags",
    "tag_problems",
    "utf16_length",
]

MAX_DEPTH: Final = 200_000
"""The deepest ``nest``."""
MAX_COUNT: Final = 1_000_000
"""The most items of a ``repeat`` and members of an ``object``."""
MAX_LENGTH: Final = 1_000_000
"""The longest ``string``, in UTF-16 code units."""
MAX_SIZE: Final = 4_000_000
"""The most a scenario's tags may expand to, all together, counted as :func:`tag_problems` says."""

GENERATORS: Final[dict[str, frozenset[str]]] = {
    "nest": frozenset({"$generate", "depth", "in", "key", "with", "leaf"}),
    "repeat": frozenset({"$generate", "count", "item"}),
    "string": frozenset({"$generate", "length", "unit"}),
    "object": frozenset({"$generate", "count", "key", "value"}),
}
"""Each generator and the members its tag may have."""

_REQUIRED: Final[dict[str, frozenset[str]]] = {
    "nest": frozenset({"$generate", "depth", "in", "leaf"}),
    "repeat": frozenset({"$generate", "count", "item"}),
    "string": frozenset({"$generate", "length"}),
    "object": frozenset({"$generate", "count", "key", "value"}),
}

_Path = tuple[str | int, ...]


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (JavaScript's ``length``): an astral character counts 2."""
    return len(text) + sum(1 for char in text if char > "\uffff")


def holds_generator_tags(value: Any) -> bool:
    """True when ``value`` holds a generator tag somewhere (a walk without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            if "$generate" in item:
                return True
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


def tag_problems(document: Any) -> Iterator[tuple[_Path, str]]:
    """Every problem of the generator tags of a parsed document: ``(path, reason)``, in document order.

    A tag has exactly its generator's members, each in its bounds; a ``string``'s length is a whole number of
    its unit; a ``nest`` into objects names its ``key``, which its ``with`` members do not hold. The size of a
    document's expansion (1 per value, plus a string's length) must stay within :data:`MAX_SIZE`. The
    document itself nests shallowly (the kit's loader refuses deep ones first): the walk over tags recurses.
    """
    problems: list[tuple[_Path, str]] = []
    size = _size(document, (), problems)
    yield from problems
    if not problems and size > MAX_SIZE:
        yield (), f"its generator tags expand to more than {MAX_SIZE:,} values (a value counts 1, a string its length)"


def _size(node: Any, path: _Path, problems: list[tuple[_Path, str]]) -> int:
    """The size of ``node``'s expansion (capped just above the bound), recording problems on the way."""
    if type(node) is list:
        return _capped(1 + sum(_size(item, (*path, index), problems) for index, item in enumerate(node)))
    if type(node) is not dict:
        return 1
    if "$generate" not in node:
        return _capped(1 + sum(_size(item, (*path, key), problems) for key, item in node.items()))
    reason = _tag_problem(node)
    if reason is not None:
        problems.append((path, reason))
        return 1
    kind = node["$generate"]
    if kind == "string":
        return 1 + int(node["length"])
    if kind == "repeat":
        return _capped(1 + node["count"] * _size(node["item"], (*path, "item"), problems))
    if kind == "object":
        return _capped(1 + node["count"] * (1 + _size(node["value"], (*path, "value"), problems)))
    level = 1
    if node["in"] == "object":
        level += sum(_size(item, (*path, "with", key), problems) for key, item in node.get("with", {}).items())
    return _capped(node["depth"] * level + _size(node["leaf"], (*path, "leaf"), problems))


def _capped(size: int) -> int:
    return min(size, MAX_SIZE + 1)


def _tag_problem(tag: dict[str, Any]) -> str | None:
    kind = tag["$generate"]
    if type(kind) is not str or kind not in GENERATORS:
        return f"$generate must be one of {', '.join(GENERATORS)}, not {kind!r}"
    unknown = sorted(set(tag) - GENERATORS[kind])
    if unknown:
        return f"a {kind} tag has no member {unknown[0]!r}"
    missing = sorted(_REQUIRED[kind] - set(tag))
    if missing:
        return f"a {kind} tag needs {missing[0]!r}"
    if kind == "nest":
        return _nest_problem(tag)
    if kind == "string":
        return _string_problem(tag)
    bounded = _bounded(tag, "count", MAX_COUNT)
    if bounded is not None:
        return bounded
    if kind == "object" and type(tag["key"]) is not str:
        return "key must be a string"
    return None


def _bounded(tag: dict[str, Any], member: str, bound: int) -> str | None:
    number = tag[member]
    if type(number) is not int or not 0 <= number <= bound:
        return f"{member} must be an integer from 0 to {bound:,}"
    return None


def _nest_problem(tag: dict[str, Any]) -> str | None:
    bounded = _bounded(tag, "depth", MAX_DEPTH)
    if bounded is not None:
        return bounded
    if tag["in"] == "array":
        if "key" in tag or "with" in tag:
            return "a nest in arrays has no key and no with"
        return None
    if tag["in"] != "object":
        return 'in must be "array" or "object"'
    if type(tag.get("key")) is not str:
        return "a nest in objects needs a key, a string"
    surround = tag.get("with", {})
    if type(surround) is not dict or "$generate" in surround or "$exotic" in surround:
        return "with must be a plain object"
    if tag["key"] in surround:
        return f"with must not hold the key {tag['key']!r}"
    return None


def _string_problem(tag: dict[str, Any]) -> str | None:
    bounded = _bounded(tag, "length", MAX_LENGTH)
    if bounded is not None:
        return bounded
    unit = tag.get("unit", "a")
    if type(unit) is not str or not unit:
        return "unit must be a non-empty string"
    if tag["length"] % utf16_length(unit):
        return f"length must be a multiple of the unit's length ({utf16_length(unit)} UTF-16 code units)"
    return None


def expand(document: Any) -> Any:
    """``document`` with every generator tag replaced by its value: a fresh copy, built without recursion.

    A document without tags is returned as it is. The tags must be valid (:func:`tag_problems`).
    """
    if not holds_generator_tags(document):
        return document
    # a large expansion makes millions of containers, all kept: the cyclic collector would scan them again and again
    paused = gc.isenabled()
    gc.disable()
    try:
        return _expand(document)
    finally:
        if paused:
            gc.enable()


def _expand(document: Any) -> Any:
    root: list[Any] = [None]
    # each entry: a node of the document still to build, and the slot of the copy it goes to
    work: list[tuple[Any, Any, Any]] = [(document, root, 0)]
    while work:
        node, target, slot = work.pop()
        target[slot] = _build(node, work)
    return root[0]


def _build(node: Any, work: list[tuple[Any, Any, Any]]) -> Any:
    """The copy of one node; its children are left in ``work`` to be built into their slots."""
    kind = type(node)
    if kind is list:
        built: list[Any] = [None] * len(node)
        for index, item in enumerate(node):
            _place(item, built, index, work)
        return built
    if kind is not dict:
        return node
    generator = node.get("$generate")
    if generator is None:
        members: dict[str, Any] = {}
        for key, item in node.items():
            _place(item, members, key, work)
        return members
    if generator == "string":
        unit = node.get("unit", "a")
        return unit * (node["length"] // utf16_length(unit))
    if generator == "repeat":
        item, count = node["item"], node["count"]
        if type(item) is not dict and type(item) is not list:
            return [item] * count
        if not holds_generator_tags(item):
            return [_copy(item) for _ in range(count)]
        items: list[Any] = [None] * count
        for index in range(count):
            _place(item, items, index, work)
        return items
    if generator == "object":
        generated: dict[str, Any] = {}
        prefix = node["key"]
        for index in range(node["count"]):
            _place(node["value"], generated, f"{prefix}{index}", work)
        return generated
    return _nest(node, work)


def _nest(tag: dict[str, Any], work: list[tuple[Any, Any, Any]]) -> Any:
    depth = tag["depth"]
    if depth == 0:
        return _build(tag["leaf"], work)
    in_objects = tag["in"] == "object"
    key = tag.get("key")
    surround: dict[str, Any] = tag.get("with", {})
    holder: list[Any] = [None]
    target: Any = holder
    slot: Any = 0
    for _ in range(depth):
        level: Any
        if in_objects:
            level = {}
            for name, item in surround.items():
                _place(item, level, name, work)
            level[key] = None
            target[slot] = level
            target, slot = level, key
        else:
            level = [None]
            target[slot] = level
            target, slot = level, 0
    _place(tag["leaf"], target, slot, work)
    return holder[0]


def _copy(node: Any) -> Any:
    # a plain part of a scenario document: it nests shallowly (the loader refuses deep documents)
    if type(node) is dict:
        return {key: _copy(item) for key, item in node.items()}
    if type(node) is list:
        return [_copy(item) for item in node]
    return node


def _place(node: Any, target: Any, slot: Any, work: list[tuple[Any, Any, Any]]) -> None:
    if type(node) is dict or type(node) is list:
        target[slot] = None  # keeps an object's member order while the member waits to be built
        work.append((node, target, slot))
    else:
        target[slot] = node
