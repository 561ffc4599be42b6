"""Arbitrary Python objects built from fuzz bytes, and the bytes that rebuild a given JSON document.

The bytes are a small program read front to back: each node starts with an opcode byte (its value modulo the
number of opcodes) followed by its operands. Missing bytes read as zero, so every byte string builds something.
The objects cover what the snapshot walker and the canonical writer must refuse with a typed error: NaN,
infinities and negative zero, unsafe and huge integers, lone surrogates, subclasses of the scalar and container
types, tuples and sets, non-string keys (some unhashable or unprintable), objects whose every method raises,
shared references, cycles and nesting far deeper than the recursion limit.

:func:`encode_json` writes the program of a plain JSON document, so that project data can seed the fuzzer.
"""

from __future__ import annotations

import contextlib
import math
import struct
from collections.abc import Callable, Iterable
from typing import Any, Final, NoReturn

from toolcanon.frozen import FrozenDict, FrozenList

__all__ = ["ByteReader", "build_value", "encode_json"]

# Bounds that keep one input fast: nodes read from the program, children of one container, levels of one
# deep chain, and nodes of the whole value once shared references are counted as many times as they occur.
_MAX_NODES: Final = 3000
_MAX_CHILDREN: Final = 64
_MAX_DEEP: Final = 1500
_MAX_EXPANDED: Final = 6000
_MAX_TEXT: Final = 1024  # bytes of UTF-8
# Levels of the program itself (which is read recursively); deeper nesting is what the deep-chain opcode builds.
_MAX_PROGRAM_DEPTH: Final = 100


class ByteReader:
    """Reads operands from fuzz bytes; past the end every read yields zeros."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._position = 0
        self.nodes = 0
        self.depth = 0
        self.expanded = 0
        self._weights: dict[int, int] = {}

    def weight(self, value: object) -> int:
        """How many nodes ``value`` counts for when walked as a tree (a built container, or 1)."""
        return self._weights.get(id(value), 1)

    def weigh(self, container: object, children: Iterable[object], own: int = 1) -> None:
        """Record the tree size of a finished container: its ``own`` nodes and its (finished) children's."""
        self._weights[id(container)] = own + sum(self.weight(child) for child in children)

    @property
    def exhausted(self) -> bool:
        """True once every byte has been read."""
        return self._position >= len(self._data)

    def byte(self) -> int:
        """The next byte (0 past the end)."""
        position = self._position
        self._position += 1
        return self._data[position] if position < len(self._data) else 0

    def take(self, count: int) -> bytes:
        """The next ``count`` bytes, zero-padded past the end."""
        chunk = self._data[self._position : self._position + count]
        self._position += count
        return chunk + bytes(count - len(chunk))

    def take_present(self, count: int) -> bytes:
        """Up to ``count`` next bytes, only those there are."""
        chunk = self._data[self._position : self._position + count]
        self._position += count
        return chunk

    def unsigned(self, count: int) -> int:
        """The next ``count`` bytes as a big-endian unsigned integer."""
        return int.from_bytes(self.take(count), "big")

    def varint(self, limit: int) -> int:
        """An unsigned LEB128 integer, capped at ``limit``."""
        value, shift = 0, 0
        while shift < 35:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        return min(value, limit)

    def pick(self, options: tuple[Any, ...]) -> Any:
        """One of ``options``, chosen by the next byte."""
        return options[self.byte() % len(options)]


# --- the objects a value may hold besides JSON -----------------------------------------------------------


class Text(str):
    """A ``str`` subclass (not lossless JSON: only exact types are)."""


class Count(int):
    """An ``int`` subclass."""


class Real(float):
    """A ``float`` subclass."""


class Mapping(dict[Any, Any]):
    """A ``dict`` subclass."""


class Items(list[Any]):
    """A ``list`` subclass."""


class FrozenMapping(FrozenDict):
    """A subclass of the registry's own frozen object."""


def _explode(*args: object) -> NoReturn:
    raise RuntimeError("hostile object touched")


class Explosive:
    """Every protocol method raises (hashing, comparing, iterating, printing, attribute access)."""

    __eq__ = _explode
    __hash__ = _explode
    __iter__ = _explode
    __len__ = _explode
    __str__ = _explode
    __repr__ = _explode
    __getattr__ = _explode


class UnprintableKey(str):
    """A hashable ``str`` subclass whose ``repr`` raises."""

    __repr__ = _explode


class LyingDict(dict[Any, Any]):
    """Claims to hold ``{"a": 1}`` whatever it holds."""

    def items(self) -> Any:
        return [("a", 1)]

    def keys(self) -> Any:
        return ["a"]

    def __iter__(self) -> Any:
        return iter(["a"])

    def __len__(self) -> int:
        return 1


class LyingList(list[Any]):
    """Claims to be empty and raises when iterated."""

    def __iter__(self) -> Any:
        raise RuntimeError("iterated")

    def __len__(self) -> int:
        return 0


class ClassLiar:
    """Claims to be a ``dict`` through ``__class__`` (``isinstance`` believes it, ``type()`` does not)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict


def _other_object(reader: ByteReader) -> object:
    """One object of a type JSON does not have."""
    choice = reader.byte() % 12
    if choice == 0:
        return reader.take(reader.byte() % 8)
    if choice == 1:
        return bytearray(reader.take(reader.byte() % 8))
    if choice == 2:
        return complex(reader.byte(), reader.byte())
    if choice == 3:
        return object()
    if choice == 4:
        return Explosive()
    if choice == 5:
        return ClassLiar()
    if choice == 6:
        return LyingDict({"a": math.nan})
    if choice == 7:
        return LyingList([1])
    if choice == 8:
        return range(reader.byte())
    if choice == 9:
        return ...
    if choice == 10:
        return type
    return Explosive


# --- scalars ---------------------------------------------------------------------------------------------

_BOUNDARY_INTS: Final = (
    2**53 - 1,
    2**53,
    -(2**53 - 1),
    -(2**53),
    2**31,
    2**32 - 2,
    2**32 - 1,
    2**63,
    -(2**63),
    2**64,
)
_SPECIAL_FLOATS: Final = (
    math.nan,
    -math.nan,
    math.inf,
    -math.inf,
    -0.0,
    0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    1e21,
    1e-7,
    1e16,
    1e-4,
    0.1,
    9007199254740993.0,
)
_INDEX_KEYS: Final = ("0", "1", "9", "10", "01", "-1", "4294967294", "4294967295", "1e3", "0x1", " 1", "١")


def _text(reader: ByteReader) -> str:
    """A string: a byte count, then UTF-8 in which encoded surrogates stand for themselves (lone ones too).

    Bytes that are not UTF-8 at all become lone low surrogates, one per byte.
    """
    raw = reader.take_present(reader.varint(_MAX_TEXT))
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def _integer(reader: ByteReader) -> int:
    width = reader.pick((1, 2, 4, 7, 8))
    magnitude = reader.unsigned(width)
    return -magnitude if reader.byte() & 1 else magnitude


def _huge_integer(reader: ByteReader) -> int:
    """A power of two up to 2**20000 (past the 4,300-digit limit of ``int`` to ``str``), shifted a little."""
    return (1 << reader.varint(20000)) * (-1 if reader.byte() & 1 else 1) + (reader.byte() - 128)


def _any_float(reader: ByteReader) -> float:
    """Any binary64, NaN payloads and subnormals included."""
    number: float = struct.unpack(">d", reader.take(8))[0]
    return number


# --- the program -----------------------------------------------------------------------------------------

_Builder = Callable[[ByteReader, list[Any], list[Any]], Any]


def _container(reader: ByteReader, open_path: list[Any], built: list[Any], kind: str) -> Any:
    """A container whose children are built while it is on the path, so they may refer back to it (a cycle)."""
    count = reader.varint(_MAX_CHILDREN)
    if kind in ("dict", "mapping"):
        mapping: dict[Any, Any] = {} if kind == "dict" else Mapping()
        open_path.append(mapping)
        for _ in range(count):
            if reader.exhausted:
                break
            key = _key(reader, open_path, built)
            child = _node(reader, open_path, built)
            with contextlib.suppress(Exception):  # an unhashable or exploding key: the object goes without it
                mapping[key] = child
        open_path.pop()
        reader.weigh(mapping, dict.values(mapping))
        built.append(mapping)
        return mapping
    items: list[Any] = [] if kind == "list" else Items()
    open_path.append(items)
    for _ in range(count):
        if reader.exhausted:
            break
        items.append(_node(reader, open_path, built))
    open_path.pop()
    reader.weigh(items, list.__iter__(items))
    built.append(items)
    return items


def _frozen(reader: ByteReader, open_path: list[Any], built: list[Any], kind: str) -> Any:
    """A container made from finished children: frozen, tuple, set and frozenset (never part of a cycle)."""
    count = reader.varint(_MAX_CHILDREN)
    children = []
    for _ in range(count):
        if reader.exhausted:
            break
        children.append(_node(reader, open_path, built))
    made: Any
    if kind == "frozen-list":
        made = FrozenList(children)
    elif kind == "tuple":
        made = tuple(children)
    elif kind == "frozen-dict":
        made = FrozenDict({_text(reader): child for child in children})
    elif kind == "frozen-mapping":
        made = FrozenMapping({_text(reader): child for child in children})
    else:
        hashable = []
        for child in children:
            try:
                hash(child)
            except Exception:
                continue
            hashable.append(child)
        try:
            made = set(hashable) if kind == "set" else frozenset(hashable)
        except Exception:  # equal-but-exploding members
            made = set()
    reader.weigh(made, children)
    built.append(made)
    return made


def _deep(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    """A chain of lists and one-key objects ``levels`` deep around one leaf (far past the recursion limit)."""
    levels = min(reader.varint(_MAX_DEEP), max(0, _MAX_EXPANDED - reader.expanded))
    reader.expanded += levels
    pattern = reader.byte()
    key = reader.pick(("k", "0", "", "\ud800"))
    leaf: Any = _node(reader, open_path, built)
    value = leaf
    for level in range(levels):
        value = {key: value} if (pattern >> (level % 8)) & 1 else [value]
    if levels:
        reader.weigh(value, (leaf,), own=levels)
        built.append(value)
    return value


def _cycle(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    """A container that is still being built: an ancestor of this place."""
    if not open_path:
        return None
    return open_path[reader.byte() % len(open_path)]


def _shared(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    """A container built earlier elsewhere: a shared (acyclic) reference."""
    if not built:
        return []
    shared = built[reader.byte() % len(built)]
    weight = reader.weight(shared)
    if reader.expanded + weight > _MAX_EXPANDED:
        return None
    reader.expanded += weight - 1  # the node itself was counted already
    return shared


def _subclass(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    choice = reader.byte() % 4
    if choice == 0:
        return Text(_text(reader))
    if choice == 1:
        return Count(_integer(reader))
    if choice == 2:
        return Real(_any_float(reader))
    return UnprintableKey(_text(reader))


_OPS: Final[tuple[_Builder, ...]] = (
    lambda r, p, b: None,
    lambda r, p, b: True,
    lambda r, p, b: False,
    lambda r, p, b: _integer(r),
    lambda r, p, b: _any_float(r),
    lambda r, p, b: _text(r),
    lambda r, p, b: _container(r, p, b, "list"),
    lambda r, p, b: _container(r, p, b, "dict"),
    lambda r, p, b: r.pick(_BOUNDARY_INTS) + (r.byte() % 3) - 1,
    lambda r, p, b: _huge_integer(r),
    lambda r, p, b: r.pick(_SPECIAL_FLOATS),
    lambda r, p, b: r.pick(_INDEX_KEYS),
    _subclass,
    lambda r, p, b: _container(r, p, b, "mapping"),
    lambda r, p, b: _container(r, p, b, "items"),
    lambda r, p, b: _frozen(r, p, b, "frozen-list"),
    lambda r, p, b: _frozen(r, p, b, "frozen-dict"),
    lambda r, p, b: _frozen(r, p, b, "frozen-mapping"),
    lambda r, p, b: _frozen(r, p, b, "tuple"),
    lambda r, p, b: _frozen(r, p, b, "set"),
    lambda r, p, b: _frozen(r, p, b, "frozenset"),
    _cycle,
    _shared,
    _deep,
    lambda r, p, b: _other_object(r),
)
_OP: Final = {
    name: index for index, name in enumerate(("null", "true", "false", "int", "float", "str", "list", "dict"))
}


def _node(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    reader.nodes += 1
    reader.expanded += 1
    if reader.nodes > _MAX_NODES or reader.depth >= _MAX_PROGRAM_DEPTH or reader.expanded > _MAX_EXPANDED:
        return None
    reader.depth += 1
    try:
        return _OPS[reader.byte() % len(_OPS)](reader, open_path, built)
    finally:
        reader.depth -= 1


def _key(reader: ByteReader, open_path: list[Any], built: list[Any]) -> Any:
    """A dict key: mostly a string (array-index-like ones often), sometimes any hashable or hostile object."""
    choice = reader.byte() % 16
    if choice < 9:
        return _text(reader)
    if choice < 12:
        return reader.pick(_INDEX_KEYS)
    if choice == 12:
        return _node(reader, open_path, built)
    if choice == 13:
        return UnprintableKey(_text(reader))
    if choice == 14:
        return _huge_integer(reader)
    return reader.pick((None, True, 0, 1.5, math.nan, -0.0, (), ("a",), frozenset({1}), b"k"))


def build_value(data: bytes) -> Any:
    """The object ``data`` describes (see the module docstring); any byte string builds one."""
    return _node(ByteReader(data), [], [])


# --- seeds -----------------------------------------------------------------------------------------------


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low = number & 0x7F
        number >>= 7
        if number:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _encode_text(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    while len(raw) > _MAX_TEXT:  # cut on a character boundary
        text = text[: len(text) * _MAX_TEXT // len(raw)]
        raw = text.encode("utf-8", "surrogatepass")
    return _varint(len(raw)) + raw


def encode_json(document: Any) -> bytes:
    """The program that builds ``document`` (a plain JSON value as ``json.loads`` returns it)."""
    out = bytearray()
    stack: list[Any] = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, _KeyMarker):
            out.append(0)  # the key selector: a string key
            out += _encode_text(value.key)
        elif value is None:
            out.append(_OP["null"])
        elif value is True or value is False:
            out.append(_OP["true" if value else "false"])
        elif isinstance(value, int) and abs(value) < 2**64:
            out.append(_OP["int"])
            out += bytes((4,)) + abs(value).to_bytes(8, "big") + bytes((1 if value < 0 else 0,))
        elif isinstance(value, int | float):
            out.append(_OP["float"])
            out += struct.pack(">d", float(value))
        elif isinstance(value, str):
            out.append(_OP["str"])
            out += _encode_text(value)
        elif isinstance(value, list):
            out.append(_OP["list"])
            kept = value[:_MAX_CHILDREN]
            out += _varint(len(kept))
            stack.extend(reversed(kept))
        elif isinstance(value, dict):
            out.append(_OP["dict"])
            pairs = list(value.items())[:_MAX_CHILDREN]
            out += _varint(len(pairs))
            for key, item in reversed(pairs):
                stack.append(item)
                stack.append(_KeyMarker(key))
        else:
            raise TypeError(f"not a JSON document: {type(value).__name__}")
    return bytes(out)


class _KeyMarker:
    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key
