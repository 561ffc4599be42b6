"""Scenario parts built from one drawn seed: one hypothesis choice each, and the simplest part at seed 0.

Every choice hypothesis makes has a cost of its own (a span to record, a constraint to check, a node of its
tree), and a lossless value drawn from :func:`~toolcanon_conformance.strategies.lossless_values` is dozens
of them. The scenario strategies draw the parts whose inner shape matters little to shrinking — values,
messages, schemas, the details of a behaviour — as one integer, a seed of at most :data:`SEED_BITS` bits, and
build the part with the builders of this module from :func:`generator` of that seed. The alphabets are the
same as the strategies' (escapes, astral characters, lone surrogates, array-index-like keys), so what is drawn
stays as broad.

Shrinking a seed ends at 0, which builds with :data:`SIMPLEST`: a generator whose every choice is the first
one. The builders are written so that the first choice is the simplest (``None``, ``""``, an empty container,
no optional key, the first message), so a shrunk scenario holds the simplest part that still fails.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from toolcanon.jsonvalue import MAX_SAFE_INTEGER

__all__ = [
    "INDEX_LIKE_KEYS",
    "ORDINARY_KEYS",
    "SCALAR_TYPES",
    "SEED_BITS",
    "SIMPLEST",
    "SPECIAL_CHARS",
    "SPECIAL_STRINGS",
    "Build",
    "chance",
    "exotic_tag",
    "finite_float",
    "generator",
    "key",
    "pick",
    "safe_integer",
    "scalar",
    "scalar_of_type",
    "schema",
    "string",
    "value",
    "value_for",
    "weighted",
    "with_exotics",
]

_T = TypeVar("_T")
Build = Callable[[random.Random], _T]
"""A builder: makes one part from a seeded generator."""

# Strings that exercise the canonical writer and key ordering: escapes, astral pairs, lone surrogates.
SPECIAL_STRINGS: Final = ("", "a", "😀", "\ud800", "\udc00x", 'quote"', "back\\", "\u2028", "\x00", "名前", "x y")
SPECIAL_CHARS: Final = ("a", "é", "😀", "\ud800", "\udfff", '"', "\\", "\n", "\u2028", "\x7f", "\x00")
# Keys whose ECMAScript order differs from insertion order, and near-misses that are not array indices.
INDEX_LIKE_KEYS: Final = ("0", "1", "2", "10", "4294967294", "4294967295", "01", "-1", "1.5", "1e3", " 1")
ORDINARY_KEYS: Final = ("a", "b", "z", "__proto__", "toString", "constructor", "x y", 'quote"', "名前", "😀", "")
SCALAR_TYPES: Final = ("string", "number", "integer", "boolean", "null")

# Floats the canonical writer formats in a way of their own: exponent thresholds, the extremes, halves.
_SPECIAL_FLOATS: Final = (
    0.0,
    0.5,
    -1.5,
    0.1,
    1 / 3,
    2.0,
    1e21,
    1e-7,
    123456789.125,
    1e300,
    -1e20,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    float(2**53),
    -float(2**53),
    1.192092896e-07,
)
_SPECIAL_INTEGERS: Final = (MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 2**31, -(2**31), 2**32 - 1, 2**32, 2**53 - 2)
_INTEGRAL_FLOATS: Final = (1e300, -1e20, 2.0)

SEED_BITS: Final = 32
"""The size of a seed: enough that two parts of a run hardly ever share one."""


class _Simplest(random.Random):
    """A generator whose every choice is the first: ``random()`` is 0.0 and every random bit is 0."""

    def random(self) -> float:
        return 0.0

    def getrandbits(self, k: int, /) -> int:
        return 0


SIMPLEST: Final[random.Random] = _Simplest(0)
"""What seed 0 builds with (``randrange`` gives its start, ``choice`` the first item, :func:`chance` false)."""


def generator(seed: int) -> random.Random:
    """The generator a seed builds with: :data:`SIMPLEST` for 0, else ``random.Random(seed)``."""
    return SIMPLEST if seed == 0 else random.Random(seed)


def chance(rng: random.Random, probability: float) -> bool:
    """True with ``probability`` (never with :data:`SIMPLEST`)."""
    return rng.random() >= 1.0 - probability


def pick(rng: random.Random, items: Sequence[_T]) -> _T:
    """One of ``items`` (the first with :data:`SIMPLEST`)."""
    return items[rng.randrange(len(items))]


def weighted(rng: random.Random, choices: Sequence[tuple[int, _T]]) -> _T:
    """One of the items of ``(weight, item)`` pairs, by weight (the first with :data:`SIMPLEST`)."""
    point = rng.randrange(sum(weight for weight, _ in choices))
    for weight, item in choices:
        if point < weight:
            return item
        point -= weight
    raise AssertionError("unreachable: the point is below the total weight")


# --- scalars -------------------------------------------------------------------------------------------


def _character(rng: random.Random) -> str:
    # Mostly ASCII, then the BMP (lone surrogates included), then any code point.
    ceiling = pick(rng, (0x80, 0x80, 0x10000, 0x110000))
    return chr(rng.randrange(ceiling))


def string(rng: random.Random) -> str:
    """A string: a special one, a few special characters, or a few characters of any kind."""
    form = rng.randrange(3)
    if form == 0:
        return pick(rng, SPECIAL_STRINGS)
    if form == 1:
        return "".join(pick(rng, SPECIAL_CHARS) for _ in range(rng.randrange(7)))
    return "".join(_character(rng) for _ in range(rng.randrange(9)))


def key(rng: random.Random) -> str:
    """An object key: array-index-like, a near miss, ordinary, a decimal integer or any string; never
    ``"$exotic"`` (a scenario would read the object as an exotic tag)."""
    form = rng.randrange(4)
    if form == 0:
        return pick(rng, INDEX_LIKE_KEYS)
    if form == 1:
        return pick(rng, ORDINARY_KEYS)
    if form == 2:
        return str(rng.randrange(2**32 + 1))
    drawn = string(rng)
    return "exotic" if drawn == "$exotic" else drawn


def _signed(rng: random.Random, bound: int) -> int:
    # 0 first, then both signs up to bound.
    drawn = rng.randrange(2 * bound + 1)
    return drawn if drawn <= bound else bound - drawn


def safe_integer(rng: random.Random) -> int:
    """An integer in the safe range: small, of any magnitude, or at a boundary."""
    form = weighted(rng, ((4, "small"), (3, "any"), (1, "edge")))
    if form == "small":
        return _signed(rng, 1000)
    if form == "edge":
        return pick(rng, _SPECIAL_INTEGERS)
    magnitude = min(rng.getrandbits(rng.randrange(54)), MAX_SAFE_INTEGER)
    return -magnitude if chance(rng, 0.5) else magnitude


def finite_float(rng: random.Random) -> float:
    """A finite float, never ``-0.0``: a special one, an integral or short decimal one, or any bit pattern."""
    form = rng.randrange(4)
    if form == 0:
        return pick(rng, _SPECIAL_FLOATS)
    if form == 1:
        return float(_signed(rng, 10**6))
    if form == 2:
        return _signed(rng, 10**6) / 10.0 ** rng.randrange(1, 8)
    number = float(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
    if not math.isfinite(number) or number == 0:
        return 0.0
    return number


def scalar(rng: random.Random) -> Any:
    """``None``, a boolean, a safe integer, a finite float or a string."""
    form = rng.randrange(5)
    if form == 0:
        return None
    if form == 1:
        return chance(rng, 0.5)
    if form == 2:
        return safe_integer(rng)
    if form == 3:
        return finite_float(rng)
    return string(rng)


def scalar_of_type(rng: random.Random, type_name: str) -> Any:
    """A value of a scalar schema type (``integer`` includes integral floats such as ``2.0`` and ``1e300``)."""
    if type_name == "string":
        return string(rng)
    if type_name == "number":
        return finite_float(rng) if chance(rng, 0.5) else safe_integer(rng)
    if type_name == "integer":
        if not chance(rng, 0.5):
            return safe_integer(rng)
        return pick(rng, _INTEGRAL_FLOATS) if chance(rng, 0.25) else float(_signed(rng, 2**53))
    if type_name == "boolean":
        return chance(rng, 0.5)
    return None


# --- values --------------------------------------------------------------------------------------------


def value(rng: random.Random, max_leaves: int) -> Any:
    """A lossless JSON value of at most ``max_leaves`` nodes: scalars, and lists and objects of up to four
    items whose keys mix array-index-like and ordinary ones. It holds no exotic tag."""
    return _value(rng, [max_leaves])


def _value(rng: random.Random, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] <= 0 or not chance(rng, 0.5):
        return scalar(rng)
    size = rng.randrange(5)
    if chance(rng, 0.5):
        return {key(rng): _value(rng, budget) for _ in range(size)}
    return [_value(rng, budget) for _ in range(size)]


def exotic_tag(rng: random.Random, kinds: Sequence[str]) -> dict[str, str]:
    """An exotic tag of one of ``kinds`` (``throwing-getter`` half the time with a ``message``, when it is one)."""
    if "throwing-getter" in kinds and chance(rng, 0.5):
        return {"$exotic": "throwing-getter", "message": string(rng)}
    return {"$exotic": pick(rng, kinds)}


def with_exotics(rng: random.Random, kinds: Sequence[str]) -> Any:
    """A value holding one exotic tag of ``kinds``: bare, in a list, or in an object of lossless values."""
    form = rng.randrange(3)
    tag = exotic_tag(rng, kinds)
    if form == 0:
        return tag
    if form == 1:
        items = [value(rng, 4) for _ in range(rng.randrange(3))]
        items.insert(rng.randrange(3), tag)
        return items
    members = {key(rng): value(rng, 4) for _ in range(rng.randrange(3))}
    members[key(rng)] = tag
    return members


# --- schemas and the values valid for them -------------------------------------------------------------


def _annotations(rng: random.Random) -> dict[str, Any]:
    # Half the nodes carry none: annotations never change validation.
    if not chance(rng, 0.5):
        return {}
    annotations: dict[str, Any] = {}
    if chance(rng, 0.5):
        annotations["description"] = string(rng)
    if chance(rng, 0.5):
        annotations["title"] = string(rng)
    if chance(rng, 0.5):
        annotations["default"] = value(rng, 3)
    if chance(rng, 0.5):
        annotations["examples"] = [value(rng, 3) for _ in range(rng.randrange(3))]
    return annotations


def _scalar_schema(rng: random.Random, type_name: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": type_name, **_annotations(rng)}
    enum = [scalar_of_type(rng, type_name) for _ in range(rng.randint(1, 4))] if chance(rng, 0.5) else None
    if enum is not None:
        node["enum"] = enum
    if chance(rng, 0.5):
        node["const"] = pick(rng, enum) if enum else scalar_of_type(rng, type_name)
    return node


def schema(rng: random.Random, max_leaves: int) -> dict[str, Any]:
    """A raw schema of the supported subset, as :func:`~toolcanon_conformance.strategies.subset_schemas`
    draws them (``disjoint_one_of``): scalar nodes with optional ``enum``/``const``, any-JSON nodes, arrays
    with optional ``items``, objects with optional ``required`` and ``additionalProperties``, and ``oneOf``
    nodes whose two to four branches accept pairwise disjoint kinds of value; annotations anywhere."""
    return _schema(rng, [max_leaves])


def _schema(rng: random.Random, budget: list[int]) -> dict[str, Any]:
    budget[0] -= 1
    if budget[0] <= 0 or not chance(rng, 0.5):
        if chance(rng, 0.5):
            return _annotations(rng)
        return _scalar_schema(rng, pick(rng, SCALAR_TYPES))
    form = rng.randrange(3)
    if form == 0:
        return _object_schema(rng, budget)
    if form == 1:
        return _array_schema(rng, budget)
    groups = ["string", "number", "boolean", "null", "object", "array"]
    rng.shuffle(groups)
    branches = []
    for group in sorted(groups[: rng.randint(2, 4)]):
        if group == "object":
            branches.append(_object_schema(rng, budget))
        elif group == "array":
            branches.append(_array_schema(rng, budget))
        else:
            # Values of different groups never match each other's schemas (number and integer share one).
            type_name = pick(rng, ("number", "integer")) if group == "number" else group
            branches.append(_scalar_schema(rng, type_name))
    return {"oneOf": branches, **_annotations(rng)}


def _object_schema(rng: random.Random, budget: list[int]) -> dict[str, Any]:
    keys = list(dict.fromkeys(key(rng) for _ in range(rng.randrange(5))))
    node: dict[str, Any] = {"type": "object", **_annotations(rng)}
    if keys or chance(rng, 0.5):
        node["properties"] = {name: _schema(rng, budget) for name in keys}
    required = [name for name in keys if chance(rng, 0.5)]
    if required:
        node["required"] = required
    additional = pick(rng, (None, True, False))
    if additional is not None:
        node["additionalProperties"] = additional
    return node


def _array_schema(rng: random.Random, budget: list[int]) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "array", **_annotations(rng)}
    if chance(rng, 0.5):
        node["items"] = _schema(rng, budget)
    return node


def value_for(
    node: Mapping[str, Any], rng: random.Random, exactly_one: Callable[[Any, Any], bool] | None = None
) -> Any:
    """A value valid against a schema of the supported subset, as
    :func:`~toolcanon_conformance.strategies.values_for` draws them: enum and const members, required
    properties plus some optional ones, a few extra keys on open objects, items.

    A ``oneOf`` takes a value of one branch. Branches of :func:`schema` are disjoint, so that value matches
    exactly one; for other schemas pass ``exactly_one(node, value)``, and the value is drawn again until it
    holds (a ``ValueError`` when 100 draws fail: the schema is not satisfiable this way).
    """
    if "oneOf" in node:
        branches = node["oneOf"]
        for _ in range(100):
            candidate = value_for(pick(rng, branches), rng, exactly_one)
            if exactly_one is None or exactly_one(node, candidate):
                return candidate
        raise ValueError("no value matching exactly one oneOf branch was found")
    type_name = node.get("type")
    if type_name is None:
        return value(rng, 20)
    if type_name == "array":
        items = node.get("items")
        size = rng.randrange(5)
        if items is None:
            return [value(rng, 6) for _ in range(size)]
        return [value_for(items, rng, exactly_one) for _ in range(size)]
    if type_name == "object":
        return _object_value(node, rng, exactly_one)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return pick(rng, node["enum"])
    return scalar_of_type(rng, type_name)


def _object_value(node: Mapping[str, Any], rng: random.Random, exactly_one: Callable[[Any, Any], bool] | None) -> Any:
    properties: Mapping[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    result: dict[str, Any] = {}
    if node.get("additionalProperties") is not False:
        for _ in range(rng.randrange(3)):
            extra = key(rng)
            if extra not in properties:
                result[extra] = value(rng, 4)
    for name, child in properties.items():
        if name in required:
            result[name] = value_for(child, rng, exactly_one)
    for name, child in properties.items():
        if name not in required and chance(rng, 0.5):
            result[name] = value_for(child, rng, exactly_one)
    return result
