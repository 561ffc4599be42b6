"""Lossless JSON values: snapshot (check + copy + freeze), ECMAScript key order, canonical JSON text.

A *lossless JSON value* is ``None``, ``bool``, an ``int`` in the I-JSON safe range, a finite ``float`` that is
not negative zero, a ``str`` (lone surrogates included), a ``list`` of such values, or a ``dict`` with ``str``
keys and such values; the registry's own :class:`FrozenDict` / :class:`FrozenList` count as dict and list.
Anything else is rejected with a path and a reason kind (see :class:`Rejection`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from toolcanon._collector import without_collector
from toolcanon.frozen import FrozenDict, FrozenList

__all__ = [
    "MAX_SAFE_INTEGER",
    "JsonValue",
    "NotLosslessJson",
    "Rejection",
    "canonical_json",
    "es_key_order",
    "format_number",
    "freeze",
    "in_es_order",
    "is_array_index",
    "is_lossless_json",
    "iter_rejections",
    "plain_str",
    "snapshot_json",
    "thaw",
    "type_name",
]

JsonValue: TypeAlias = Any
"""A lossless JSON value (see the module docstring); typed loosely because it is recursive."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
_MAX_ARRAY_INDEX: Final = 2**32 - 2
# Values nested deeper than this take the iterative walk, so depth is bounded by memory, not the C stack.
_FAST_DEPTH: Final = 400

PathElement: TypeAlias = str | int


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why one place in a value is not lossless JSON.

    ``kind`` is one of ``nan``, ``infinity``, ``negative-infinity``, ``negative-zero``, ``unsafe-integer``,
    ``non-string-key``, ``cycle`` or ``unsupported-type:<type name>``.
    """

    path: tuple[PathElement, ...]
    kind: str

    def __str__(self) -> str:
        return f"{format_path(self.path)}: {self.kind}"


class NotLosslessJson(ValueError):
    """A value is not lossless JSON; ``rejections`` lists every offending place, in walk order."""

    def __init__(self, rejections: list[Rejection]) -> None:
        self.rejections = rejections
        shown = "; ".join(str(r) for r in rejections[:5])
        more = f" (and {len(rejections) - 5} more)" if len(rejections) > 5 else ""
        super().__init__(f"not lossless JSON: {shown}{more}")


def format_path(path: tuple[PathElement, ...], root: str = "value") -> str:
    """Render a path as ``root.key[0].other`` (diagnostics only, never part of a contract message)."""
    parts = [root]
    for element in path:
        parts.append(f"[{element}]" if isinstance(element, int) else f".{element}")
    return "".join(parts)


def is_array_index(key: str) -> bool:
    """True when ``key`` is a canonical ECMAScript array index (``"0"`` … ``"4294967294"``)."""
    if not key or not ("0" <= key[0] <= "9"):
        return False
    if key == "0":
        return True
    return key[0] != "0" and key.isascii() and key.isdigit() and int(key) <= _MAX_ARRAY_INDEX


def es_key_order(keys: list[str]) -> list[str]:
    """Order keys as ECMAScript own-property order: array indices ascending, then insertion order."""
    if not _needs_reorder(keys):
        return keys
    indices = [k for k in keys if is_array_index(k)]
    if not indices:
        return keys
    indices.sort(key=int)
    return indices + [k for k in keys if not is_array_index(k)]


def _needs_reorder(keys: Any) -> bool:
    for key in keys:  # noqa: SIM110 - a plain loop: any() over a generator costs twice as much on this hot path
        if type(key) is str and key and "0" <= key[0] <= "9" and is_array_index(key):
            return True
    return False


def _reordered(mapping: dict[str, Any]) -> FrozenDict:
    """``mapping`` as a frozen object laid out in ECMAScript key order."""
    return FrozenDict({key: mapping[key] for key in es_key_order(list(mapping))})


def in_es_order(mapping: FrozenDict) -> FrozenDict:
    """A frozen object in ECMAScript key order: ``mapping`` itself when it already is."""
    return _reordered(mapping) if _needs_reorder(mapping) else mapping


def _scalar_rejection(value: object) -> str | None:
    """The reason kind for a non-container value, or ``None`` when it is an accepted scalar."""
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return None
    if kind is int:
        return None if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else "unsafe-integer"  # type: ignore[operator]
    if kind is float:
        number: float = value  # type: ignore[assignment]
        if number != number:
            return "nan"
        if number in (math.inf, -math.inf):
            return "infinity" if number > 0 else "negative-infinity"
        if number == 0.0 and math.copysign(1.0, number) < 0:
            return "negative-zero"
        return None
    return f"unsupported-type:{_type_name(kind)}"


def _path_key(key: object) -> PathElement:
    """A non-string key as a rejection path element, built without running any of the key's own code.

    A key is foreign data: its ``__class__``, ``__format__``, ``__repr__`` or ``__hash__`` may raise or lie, so
    an ``int`` or ``str`` subclass becomes its exact-type copy and anything else a text naming its type.
    """
    kind = type(key)
    if kind is int or kind is bool:
        number: int = key  # type: ignore[assignment]
    elif issubclass(kind, str):
        return str.__str__(key)
    elif issubclass(kind, int):
        number = int.__pos__(key)  # type: ignore[arg-type]
    else:
        return _key_text(key)
    # beyond the safe range the decimal text may be refused (int_max_str_digits): name it instead
    return number if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER else f"<{_type_name(kind)} key>"


def _key_text(key: object) -> str:
    """A non-string, non-integer key's text: the ``repr`` of a built-in scalar, else its type's name."""
    kind = type(key)
    if kind is float or kind is bytes or kind is complex or key is None:
        return repr(key)
    return f"<{_type_name(kind)} key>"


def _type_name(kind: type) -> str:
    # read through type's own descriptor: a metaclass may define __qualname__ (or __getattribute__) itself
    name = _QUALNAME.__get__(kind)
    return name if type(name) is str else "<unnamed type>"


_QUALNAME: Final[Any] = type.__dict__["__qualname__"]


def type_name(kind: type) -> str:
    """The qualified name of a class, read without running any code of the class or its metaclass."""
    return _type_name(kind)


def plain_str(value: object) -> str | None:
    """``value`` as an exact ``str`` (a ``str`` subclass is copied without running its code), else ``None``."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]
    if issubclass(kind, str):
        return str.__str__(value)
    return None


class _Bail(Exception):
    """The fast copy met something it does not handle; the thorough walk takes over.

    Raised as the class, a new instance each time: a shared instance would gather the traceback (and the
    context) of every raise, whose frames hold the values walked and their partial copies.
    """


class _TooDeep(_Bail):
    """The recursive fast copy or check would go deeper than it may: the iterative one takes over."""


def _fast_copy(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return value
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _Bail
    if kind is float:
        if value - value == 0.0 and (value != 0.0 or math.copysign(1.0, value) > 0):
            return value
        raise _Bail
    if depth > _FAST_DEPTH:
        raise _TooDeep
    if kind is dict or kind is FrozenDict:
        copied = {}
        reorder = False
        depth += 1
        for key, item in value.items():
            if type(key) is not str:
                raise _Bail
            if key and "0" <= key[0] <= "9" and is_array_index(key):
                reorder = True
            # a string, the commonest member, is taken here: a call for it would cost as much as the rest
            copied[key] = item if type(item) is str else _fast_copy(item, depth)
        return _reordered(copied) if reorder else FrozenDict(copied)
    if kind is list or kind is FrozenList:
        depth += 1
        return FrozenList([item if type(item) is str else _fast_copy(item, depth) for item in value])
    raise _Bail


def _is_plain_scalar(value: Any) -> bool:
    """True for an accepted value that is not a container: what the fast copy and check take as it is."""
    # _fast_check and _fast_copy write the same test inline: their loops run it for every scalar, where a call
    # each would cost
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[no-any-return]
    if kind is float:
        return value - value == 0.0 and (value != 0.0 or math.copysign(1.0, value) > 0.0)
    return False


def _deep_walk(root: Any, build: bool) -> Any:
    """The fast copy (or, without ``build``, the fast check) of a container nested deeper than recursion may go.

    It returns the frozen copy of a lossless value (``None`` when only checking) and raises :class:`_Bail` at the
    first thing it does not take (a rejected scalar, a non-string key, a cycle): the thorough walk then decides,
    and names every rejection. A frame is ``[children left, copied pairs or items, is_dict, needs reordering,
    key of the child being walked, the container's id]``.
    """
    frames: list[list[Any]] = []
    on_path: set[int] = set()
    value = root
    while True:
        kind = type(value)  # value: a container to open, or (at the root only) a scalar
        if kind is dict or kind is FrozenDict:
            identity = id(value)
            if identity in on_path:
                raise _Bail
            on_path.add(identity)
            frames.append([iter(value.items()), {}, True, False, None, identity])
        elif kind is list or kind is FrozenList:
            identity = id(value)
            if identity in on_path:
                raise _Bail
            on_path.add(identity)
            frames.append([iter(value), [], False, False, None, identity])
        else:
            raise _Bail  # a scalar root is never too deep for the recursive paths: theirs to take
        while True:  # take the innermost open container's next child; close the containers that have none
            frame = frames[-1]
            children, built = frame[0], frame[1]
            if frame[2]:
                for key, child in children:
                    if type(key) is not str:
                        raise _Bail
                    if key and "0" <= key[0] <= "9" and is_array_index(key):
                        frame[3] = True
                    kind = type(child)
                    if kind is dict or kind is FrozenDict or kind is list or kind is FrozenList:
                        frame[4] = key
                        break
                    if not _is_plain_scalar(child):
                        raise _Bail
                    if build:
                        built[key] = child
                else:
                    child = _END
            else:
                for child in children:
                    kind = type(child)
                    if kind is dict or kind is FrozenDict or kind is list or kind is FrozenList:
                        break
                    if not _is_plain_scalar(child):
                        raise _Bail
                    if build:
                        built.append(child)
                else:
                    child = _END
            if child is not _END:
                value = child
                break
            frames.pop()
            on_path.discard(frame[5])
            copy: Any
            if not build:
                copy = None
            elif frame[2]:
                copy = _reordered(built) if frame[3] else FrozenDict(built)
            else:
                copy = FrozenList(built)
            if not frames:
                return copy
            parent = frames[-1]
            if build:
                if parent[2]:
                    parent[1][parent[4]] = copy
                else:
                    parent[1].append(copy)


def _thorough_walk(root: Any, build: bool) -> tuple[Any, list[Rejection]]:
    """Iterative walk: collect every rejection, and (if ``build``) return the frozen copy when none."""
    rejections: list[Rejection] = []
    # A frame is [container, pending (key, child) iterator, built pairs or items, is_dict, current key].
    frames: list[list[Any]] = []
    on_path: set[int] = set()

    def reject(kind: str, extra: PathElement | None = None) -> None:
        path = [frame[4] for frame in frames]
        if extra is not None:
            path.append(extra)
        rejections.append(Rejection(tuple(path), kind))

    def open_container(value: Any) -> list[Any]:
        on_path.add(id(value))
        if type(value) is dict or type(value) is FrozenDict:
            return [value, iter(list(value.items())), [], True, None]
        return [value, enumerate(list(value)), [], False, None]

    result: Any = None
    pending: Any = root
    has_pending = True
    while True:
        if has_pending:
            has_pending = False
            kind = type(pending)
            if kind is dict or kind is FrozenDict or kind is list or kind is FrozenList:
                if id(pending) in on_path:
                    reject("cycle")
                    produced: Any = None
                else:
                    frames.append(open_container(pending))
                    continue
            else:
                reason = _scalar_rejection(pending)
                if reason is not None:
                    reject(reason)
                produced = pending
            if not frames:
                result = produced
                break
            frames[-1][2].append((frames[-1][4], produced))
        frame = frames[-1]
        advanced = next(frame[1], None)
        if advanced is not None:
            key, child = advanced
            if frame[3] and type(key) is not str:
                frame[4] = _path_key(key)
                reject("non-string-key")
                frame[4] = None
                continue
            frame[4] = key
            pending = child
            has_pending = True
            continue
        frames.pop()
        on_path.discard(id(frame[0]))
        built: Any = None
        if build and not rejections:
            built = _reordered(dict(frame[2])) if frame[3] else FrozenList([item for _, item in frame[2]])
        if not frames:
            result = built
            break
        frames[-1][2].append((frames[-1][4], built))
    return result, rejections


def snapshot_json(value: Any) -> JsonValue:
    """Return a deep-frozen lossless copy of ``value`` with ECMAScript key order.

    Raises :class:`NotLosslessJson` naming every rejected place. Shared (acyclic) references are copied
    separately; a cycle is rejected. Depth is bounded by memory, not by recursion.
    """
    try:
        return _fast_copy(value, 0)
    except (_TooDeep, RecursionError):
        try:  # too deep for the recursive copy: the iterative one, unless it meets a cycle or a rejection
            return without_collector(_deep_walk, value, True)
        except _Bail:
            pass
    except _Bail:
        pass  # a rejection: the thorough walk names every one
    # the walk keeps every open container's frame alive: without the pause, a deep value triggers full collections
    copy, rejections = without_collector(_thorough_walk, value, True)
    if rejections:
        raise NotLosslessJson(rejections)
    return copy


def freeze(value: JsonValue) -> JsonValue:
    """Deep-freeze a lossless JSON value (a frozen copy; the input is left untouched)."""
    return snapshot_json(value)


def thaw(value: JsonValue) -> JsonValue:
    """A plain, mutable deep copy of a JSON value (frozen containers become ``dict`` / ``list``)."""
    if type(value) not in (dict, list, FrozenDict, FrozenList):
        return value
    root: Any = {} if isinstance(value, dict) else []
    work: list[tuple[Any, Any]] = [(value, root)]
    while work:
        source, target = work.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if type(item) in (dict, list, FrozenDict, FrozenList):
                copied: Any = {} if isinstance(item, dict) else []
                work.append((item, copied))
                item = copied
            if isinstance(target, dict):
                target[key] = item
            else:
                target.append(item)
    return root


def iter_rejections(value: Any) -> Iterator[Rejection]:
    """Yield every place in ``value`` that is not lossless JSON, in walk order."""
    _, rejections = without_collector(_thorough_walk, value, False)
    yield from rejections


def _fast_check(value: Any, depth: int) -> bool:
    # The loops are plain for-loops on purpose: faster than all() over a generator on this hot path.
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[no-any-return]
    if kind is float:
        return value - value == 0.0 and (value != 0.0 or math.copysign(1.0, value) > 0.0)
    if kind is dict or kind is FrozenDict:
        if depth > _FAST_DEPTH:
            raise _TooDeep
        depth += 1
        for key, item in value.items():  # noqa: SIM110
            if type(key) is not str or not _fast_check(item, depth):
                return False
        return True
    if kind is list or kind is FrozenList:
        if depth > _FAST_DEPTH:
            raise _TooDeep
        depth += 1
        for item in value:  # noqa: SIM110
            if not _fast_check(item, depth):
                return False
        return True
    return False


def is_lossless_json(value: Any) -> bool:
    """True when ``value`` is lossless JSON (nothing is copied)."""
    try:
        return _fast_check(value, 0)
    except (_Bail, RecursionError):
        pass  # too deep for the recursive check, or a cycle (infinitely deep): the iterative check decides
    try:
        without_collector(_deep_walk, value, False)
    except _Bail:
        pass  # a rejection or a cycle, most likely: the thorough walk decides
    else:
        return True
    return not without_collector(_thorough_walk, value, False)[1]


# --- canonical JSON text -------------------------------------------------------------------------------

_encode_string_basic = json.encoder.encode_basestring
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _surrogate_escape(match: re.Match[str]) -> str:
    text = match.group()
    if len(text) == 2:
        high, low = ord(text[0]), ord(text[1])
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return f"\\u{ord(text):04x}"


def encode_string(text: str) -> str:
    """A JSON string literal exactly as ECMAScript ``JSON.stringify`` writes it."""
    encoded: str = _encode_string_basic(text)
    if not encoded.isascii() and _SURROGATES.search(encoded):
        return _SURROGATES.sub(_surrogate_escape, encoded)
    return encoded


def format_number(number: int | float) -> str:
    """ECMAScript ``Number::toString`` of a finite number (``1`` for ``1.0``, ``1e+21``, ``1e-7``)."""
    if type(number) is int:
        if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
            return str(number)
        number = float(number)
    magnitude = abs(number)
    if 1e-4 <= magnitude < 1e16:
        text = repr(number)
        return text[:-2] if text.endswith(".0") else text
    if number == 0:
        return "0"
    if number != number or magnitude == math.inf:
        raise ValueError(f"{number!r} is not a finite JSON number")
    # Outside [1e-4, 1e16) Python's repr is always "d[.ddd]e±x": shortest round-trip digits, like ECMAScript.
    mantissa, _, exponent_text = repr(magnitude).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = int(exponent_text) + 1  # ECMAScript's n: value = 0.d1d2… × 10^n
    digits = digits.rstrip("0") or "0"
    count = len(digits)
    sign = "-" if number < 0 else ""
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    exp_text = f"e+{exp}" if exp >= 0 else f"e-{-exp}"
    if count == 1:
        return sign + digits + exp_text
    return sign + digits[0] + "." + digits[1:] + exp_text


def _ordered_items(mapping: dict[str, Any]) -> Any:
    if _needs_reorder(mapping):
        # reordering reads every key as text: any other key (a str subclass too) is refused before its code runs
        for key in mapping:
            if type(key) is not str:
                raise NotLosslessJson([Rejection((), "non-string-key")])
        return [(k, mapping[k]) for k in es_key_order(list(mapping))]
    return mapping.items()


def canonical_json(value: JsonValue, indent: float | str | None = None) -> str:
    """Write ``value`` as ECMAScript ``JSON.stringify(value, null, indent)`` would, byte for byte.

    Keys are written in ECMAScript own-property order. ``value`` must be lossless JSON; anything else
    (a cycle included) raises :class:`NotLosslessJson`. Iterative: any depth is written. ``indent`` is the
    space argument, as V8 reads it: a number above 0 is truncated to an integer and clamped to 10 spaces (one
    below 1 breaks lines without indenting them), a string is cut to its first 10 UTF-16 code units, anything
    else (0, a negative number, NaN, a boolean) is no indent.
    """
    indent = _gap(indent)
    kind = type(value)
    if (kind is dict or kind is FrozenDict or kind is list or kind is FrozenList) and value:
        # the writer keeps a frame per open container: without the pause, a deep value triggers full collections
        return without_collector(_write_json, value, indent)
    return _leaf_text(value)


def _gap(space: object) -> str | None:
    """The gap ``JSON.stringify`` takes from its space argument (ECMA-262 JSON.stringify, steps 6 to 8), ``None``
    for none."""
    kind = type(space)
    if kind is bool or not isinstance(space, int | float | str):
        return None
    if isinstance(space, str):
        units = space.encode("utf-16-le", "surrogatepass")
        if len(units) > 20:  # cut between code units, as String.prototype.substring does: a pair may be split
            space = units[:20].decode("utf-16-le", "surrogatepass")
        return space or None
    if not space > 0:  # 0, a negative number, NaN
        return None
    # a fraction below 1 is an empty gap, not none: V8 then still breaks lines (ECMA-262 says it would not)
    return " " * (10 if space >= 10 else int(space))


def _write_json(value: Any, indent: str | None) -> str:
    """The text of a non-empty container (see :func:`canonical_json`); ``indent`` is normalized."""
    key_separator = ": " if indent is not None else ":"
    parts: list[str] = []
    append = parts.append
    # stack entries: [children left (pairs for an object), is_dict, no child written yet, the container's id]
    stack: list[list[Any]] = []
    open_containers: set[int] = set()  # ids of the containers being written: meeting one again is a cycle
    pending: Any = value  # the next value to write
    while True:
        kind = type(pending)
        if (kind is dict or kind is FrozenDict) and pending:
            if id(pending) in open_containers:
                raise NotLosslessJson([Rejection((), "cycle")])
            open_containers.add(id(pending))
            append("{")
            stack.append([iter(_ordered_items(pending)), True, True, id(pending)])
        elif (kind is list or kind is FrozenList) and pending:
            if id(pending) in open_containers:
                raise NotLosslessJson([Rejection((), "cycle")])
            open_containers.add(id(pending))
            append("[")
            stack.append([iter(pending), False, True, id(pending)])
        else:
            append(_leaf_text(pending))
        descend = False
        while stack and not descend:  # write the innermost container's children up to the next non-empty one
            entry = stack[-1]
            is_dict = entry[1]
            for child in entry[0]:
                if entry[2]:
                    entry[2] = False
                else:
                    append(",")
                if indent is not None:
                    append("\n" + indent * len(stack))
                if is_dict:
                    key, child = child
                    if type(key) is not str:
                        raise NotLosslessJson([Rejection((), "non-string-key")])
                    append(encode_string(key))
                    append(key_separator)
                kind = type(child)
                if (kind is dict or kind is FrozenDict or kind is list or kind is FrozenList) and child:
                    pending = child
                    descend = True
                    break
                append(_leaf_text(child))
            else:
                stack.pop()
                open_containers.discard(entry[3])
                if indent is not None:
                    append("\n" + indent * len(stack))
                append("}" if is_dict else "]")
        if not descend:
            return "".join(parts)


def _leaf_text(value: Any) -> str:
    """The JSON text of a scalar or an empty container; :class:`NotLosslessJson` for anything else."""
    kind = type(value)
    if kind is str:
        return encode_string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        reason = _scalar_rejection(value)
        if reason is not None:
            raise NotLosslessJson([Rejection((), reason)])
        return format_number(value)
    if kind is dict or kind is FrozenDict:
        return "{}"
    if kind is list or kind is FrozenList:
        return "[]"
    raise NotLosslessJson([Rejection((), f"unsupported-type:{_type_name(kind)}")])


_END: Final = object()
