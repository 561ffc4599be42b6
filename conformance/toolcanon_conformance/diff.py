"""Where two transcripts differ: the JSON paths, expected and actual, in document order.

Transcripts are compared byte for byte; only when the bytes differ is this module asked why. It parses both
texts keeping what ``json.loads`` would blur (key order, the written form of numbers), walks them side by side,
and yields a :class:`Difference` per differing place, the first one first. When the two parse to the same
data and still differ in bytes (whitespace, the escaping of a string), the difference is reported at the path
of the first differing byte.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Literal, TypeAlias

from toolcanon_conformance.deepjson import loads
from toolcanon_conformance.display import excerpts, first_difference, visible

__all__ = [
    "Difference",
    "DifferenceKind",
    "Path",
    "compare",
    "format_path",
    "is_under",
    "parse_path",
    "values_at",
]

Path: TypeAlias = tuple[str | int, ...]
DifferenceKind: TypeAlias = Literal["value", "type", "missing", "unexpected", "key-order", "format", "not-json"]

_MAX_DIFFERENCES = 100
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the actual transcript differs from the expected one.

    ``expected`` and ``actual`` are JSON texts, whole (a transcript that is not JSON too), ``None`` when that
    side has nothing there. ``detail`` says more when the texts alone do not (where two
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

    Differences at or under an ``ignore`` path do not count. When only ignored places differ the two agree,
    provided the rest of the texts is the same byte for byte. Any depth and any size is compared in time linear
    in the texts' lengths.
    """
    if expected == actual:
        return ()
    expected_text, actual_text = _decode(expected), _decode(actual)
    with _collector_paused():
        try:
            expected_tree = _parse(expected_text)
        except ValueError as error:
            return (Difference((), "not-json", expected_text, actual_text, f"expected: {error}"),)
        try:
            actual_tree = _parse(actual_text)
        except ValueError as error:
            return (Difference((), "not-json", expected_text, actual_text, str(error)),)
        walk = _Walk(_ignore_tree(ignore))
        walk.run(expected_tree, actual_tree)
    if walk.differences:
        return tuple(walk.differences)
    if walk.ignored_differ:
        # The data agree outside the ignored places; their bytes must too (spacing, escapes).
        masked_expected, masked_actual = _masked(expected_text, walk.ignore), _masked(actual_text, walk.ignore)
        if masked_expected == masked_actual:
            return ()
        return (_format_difference(masked_expected, masked_actual, "the ignored values left out"),)
    return (_format_difference(expected_text, actual_text),)


def values_at(data: bytes, paths: Sequence[Path]) -> list[tuple[str, str] | None]:
    """For each path, the JSON type (``string``, ``number``, …) and compact text of the value there in ``data``
    (a JSON text's bytes), or ``None`` when there is none; a ``ValueError`` when ``data`` is not JSON."""
    with _collector_paused():
        tree = _parse(_decode(data))
        found: list[tuple[str, str] | None] = []
        for path in paths:
            node: Any = tree
            for element in path:
                if isinstance(element, int) and type(node) is list and element < len(node):
                    node = node[element]
                elif isinstance(element, str) and type(node) is _Object and element in (members := dict(node)):
                    node = members[element]
                else:
                    found.append(None)
                    break
            else:
                found.append((_KIND[type(node)], _dump(node)))
    return found


def _decode(data: bytes) -> str:
    """The text of a transcript's bytes; a lone surrogate (written with ``surrogatepass``) stays itself."""
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    # The parsed trees hold no reference cycles; the collector's passes over millions of fresh containers
    # would cost as much as building them.
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# --- parsing that keeps key order and number text ------------------------------------------------------


class _Number(str):
    """A number with a fraction or an exponent (or a huge integer), as written: ``1.0`` and ``1.00`` differ.

    Other integers are parsed as :class:`int`, whose text is the written one (but for ``-0``, which the walk
    then finds equal to ``0`` and the byte comparison reports as a difference of form).
    """


class _Object(list[tuple[str, Any]]):
    """A JSON object as its list of members, in written order."""


def _parse(text: str) -> Any:
    try:
        return loads(text, object_pairs_hook=_Object, parse_float=_Number, parse_constant=_Number)
    except json.JSONDecodeError:
        raise
    except ValueError:
        # An integer too long for int() (sys.get_int_max_str_digits): every number as written, then.
        return loads(text, object_pairs_hook=_Object, parse_float=_Number, parse_int=_Number, parse_constant=_Number)


_KIND: dict[type, str] = {
    int: "number",
    _Number: "number",
    str: "string",
    bool: "boolean",
    type(None): "null",
    _Object: "object",
    list: "array",
}


# --- walking two trees side by side --------------------------------------------------------------------

#: A path as a chain of links (parent link, key), so that going one level down costs the same at any depth.
_Link: TypeAlias = "tuple[_Link, str | int] | None"


def _path(link: _Link) -> Path:
    parts: list[str | int] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


class _Ignored:
    """The mark of an ignored subtree in the tree of ignore paths."""


_IGNORED = _Ignored()

#: The ignore paths as a tree: each key leads to the paths below it, or to :data:`_IGNORED`.
_IgnoreTree: TypeAlias = "dict[str | int, _IgnoreTree | _Ignored]"


def _ignore_tree(ignore: Sequence[Path]) -> _IgnoreTree | _Ignored | None:
    root: _IgnoreTree = {}
    for prefix in sorted(ignore, key=len):
        if not prefix:
            return _IGNORED
        node: _IgnoreTree | _Ignored = root
        for element in prefix[:-1]:
            if isinstance(node, _Ignored):
                break
            node = node.setdefault(element, {})
        if isinstance(node, dict):
            node[prefix[-1]] = _IGNORED
    return root or None


class _Enough(Exception):
    """Raised once the walk has found as many differences as are reported."""


#: The child pairs a container's walk hands back: its link, its ignore tree, expected and actual.
_Pair: TypeAlias = tuple[_Link, "_IgnoreTree | _Ignored | None", Any, Any]


class _Walk:
    """Both trees side by side, depth first, in document order; each container is a generator of child pairs.

    Equal scalars are passed over where they are found; only containers and differing values go through the
    driver loop, whose stack of generators stands in for recursion.
    """

    def __init__(self, ignore: _IgnoreTree | _Ignored | None) -> None:
        self.ignore = ignore
        self.differences: list[Difference] = []
        #: Whether some ignored place differs (then only ignored places differing means the two agree).
        self.ignored_differ = False

    def run(self, expected: Any, actual: Any) -> None:
        stack: list[Iterator[_Pair]] = []
        with contextlib.suppress(_Enough):
            self._visit(stack, (None, self.ignore, expected, actual))
            while stack:
                pair = next(stack[-1], None)
                if pair is None:
                    stack.pop()
                else:
                    self._visit(stack, pair)

    def _emit(
        self, link: _Link, kind: DifferenceKind, expected: str | None, actual: str | None, detail: str = ""
    ) -> None:
        self.differences.append(Difference(_path(link), kind, expected, actual, detail))
        if len(self.differences) >= _MAX_DIFFERENCES:
            raise _Enough

    def _visit(self, stack: list[Iterator[_Pair]], pair: _Pair) -> None:
        link, ignore, expected, actual = pair
        if isinstance(ignore, _Ignored):
            self.ignored_differ = self.ignored_differ or not _same(expected, actual)
            return
        kind = type(expected)
        if kind is not type(actual) and _KIND[kind] != _KIND[type(actual)]:
            expected_kind, actual_kind = _KIND[kind], _KIND[type(actual)]
            self._emit(link, "type", _show(expected), _show(actual), f"{expected_kind} ≠ {actual_kind}")
        elif kind is _Object:
            stack.append(self._object(link, ignore, expected, actual))
        elif kind is list:
            stack.append(self._array(link, ignore, expected, actual))
        elif kind is not type(actual) or expected != actual:
            self._emit(link, "value", _show(expected), _show(actual), _value_detail(expected, actual))

    def _absent(self, link: _Link, ignore: _IgnoreTree | _Ignored | None, kind: DifferenceKind, value: Any) -> None:
        if ignore is _IGNORED:
            self.ignored_differ = True
        elif kind == "missing":
            self._emit(link, kind, _show(value), None)
        else:
            self._emit(link, kind, None, _show(value))

    def _object(self, link: _Link, ignore: _IgnoreTree | None, expected: _Object, actual: _Object) -> Iterator[_Pair]:
        expected_keys, actual_keys = [key for key, _ in expected], [key for key, _ in actual]
        if expected_keys == actual_keys:
            # Members in the same order, the usual case: compared pairwise, no lookup.
            if len(set(expected_keys)) != len(expected_keys):
                self._emit(link, "format", None, None, "a key is repeated in the expected object")
                return
            for (key, value), (_, other) in zip(expected, actual, strict=True):
                kind = type(value)
                if kind is type(other) and kind is not _Object and kind is not list and value == other:
                    continue
                yield (link, key), ignore.get(key) if ignore else None, value, other
            return
        expected_members, actual_members = dict(expected), dict(actual)
        if len(expected_members) != len(expected) or len(actual_members) != len(actual):
            side = "expected" if len(expected_members) != len(expected) else "actual"
            self._emit(link, "format", None, None, f"a key is repeated in the {side} object")
            return
        before = len(self.differences)
        for key, value in expected:
            below = ignore.get(key) if ignore else None
            if key in actual_members:
                yield (link, key), below, value, actual_members[key]
            else:
                self._absent((link, key), below, "missing", value)
        for key, value in actual:
            if key not in expected_members:
                self._absent((link, key), ignore.get(key) if ignore else None, "unexpected", value)
        if len(self.differences) == before and expected_members.keys() == actual_members.keys():
            self._emit(link, "key-order", _show(expected_keys), _show(actual_keys), "same members in another order")

    def _array(
        self, link: _Link, ignore: _IgnoreTree | None, expected: list[Any], actual: list[Any]
    ) -> Iterator[_Pair]:
        for index, (value, other) in enumerate(zip(expected, actual, strict=False)):
            kind = type(value)
            if kind is type(other) and kind is not _Object and kind is not list and value == other:
                continue
            yield (link, index), ignore.get(index) if ignore else None, value, other
        for index in range(len(actual), len(expected)):
            self._absent((link, index), ignore.get(index) if ignore else None, "missing", expected[index])
        for index in range(len(expected), len(actual)):
            self._absent((link, index), ignore.get(index) if ignore else None, "unexpected", actual[index])


def _same(expected: Any, actual: Any) -> bool:
    """Whether the walk would find no difference at all between two trees (ignore paths aside)."""
    pairs = [(expected, actual)]
    while pairs:
        left, right = pairs.pop()
        kind = type(left)
        if kind is not type(right):
            return False
        if kind is _Object:
            keys = [key for key, _ in left]
            if keys != [key for key, _ in right] or len(set(keys)) != len(keys):
                return False
            pairs.extend((value, other) for (_, value), (_, other) in zip(left, right, strict=True))
        elif kind is list:
            if len(left) != len(right):
                return False
            pairs.extend(zip(left, right, strict=True))
        elif left != right:
            return False
    return True


def _value_detail(expected: Any, actual: Any) -> str:
    if _KIND[type(expected)] == "number" and _KIND[type(actual)] == "number":
        try:
            if float(expected) == float(actual):
                return "the same number written differently"
        except (ValueError, OverflowError):
            pass
        return ""
    if isinstance(expected, str) and isinstance(actual, str):
        return f"strings part at character {first_difference(expected, actual)}"
    return ""


# --- showing values ------------------------------------------------------------------------------------


class _Text(str):
    """Punctuation of a JSON text being written, as opposed to a string value."""


def _dump(value: Any) -> str:
    """The compact JSON text of a parsed tree, written without recursion."""
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is _Text or kind is _Number:
            parts.append(item)
        elif kind is int:
            parts.append(str(item))
        elif kind is str:
            parts.append(json.dumps(item, ensure_ascii=False))
        elif item is None:
            parts.append("null")
        elif kind is bool:
            parts.append("true" if item else "false")
        elif kind is _Object:
            stack.append(_Text("}"))
            for index in range(len(item) - 1, -1, -1):
                key, member = item[index]
                stack.append(member)
                stack.append(_Text(("," if index else "") + json.dumps(key, ensure_ascii=False) + ":"))
            stack.append(_Text("{"))
        else:
            stack.append(_Text("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Text(","))
            stack.append(_Text("["))
    return "".join(parts)


def _show(value: Any) -> str:
    return _dump(value)


# --- differences of form only --------------------------------------------------------------------------


def _format_difference(expected: str, actual: str, note: str = "") -> Difference:
    offset = first_difference(expected, actual)
    start = max(0, offset - 30)
    return Difference(
        _path_at(expected, offset),
        "format",
        expected[start : offset + 30],
        actual[start : offset + 30],
        f"the same data written differently, from character {offset}" + (f" ({note})" if note else ""),
    )


#: A JSON text's lexemes: strings, punctuation, the text of a number or literal, whitespace.
_LEXEME = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^ \t\n\r{}\[\],:"]+|[ \t\n\r]+')


def _masked(text: str, ignore: _IgnoreTree | _Ignored | None) -> str:
    """``text`` (valid JSON) as it reads without the values at ignore paths (an object's member with its key, an
    array's item, and the comma that parted it from the others), all else kept byte for byte."""
    if isinstance(ignore, _Ignored):
        return ""
    parts: list[str] = []
    # Per open container: its ignore tree, whether it is an object, and [its current key or index, whether a key
    # comes next, where in parts the last comma goes if the member after it is kept, whether a member was kept].
    frames: list[tuple[_IgnoreTree | None, bool, list[Any]]] = []
    skipping = 0  # how deep inside a left-out container value
    dropping = False  # between a left-out member's key and its value
    for match in _LEXEME.finditer(text):
        token = match.group()
        char = token[0]
        if skipping:
            skipping += 1 if char in "{[" else -1 if char in "}]" else 0
            continue
        if char in " \t\n\r:":
            if not dropping:
                parts.append(token)
            continue
        if char == ",":
            _, is_object, state = frames[-1]
            state[2] = len(parts)
            parts.append("")
            if is_object:
                state[1] = True
            else:
                state[0] += 1
            continue
        if char in "}]":
            parts.append(token)
            frames.pop()
            continue
        node: _IgnoreTree | _Ignored | None = ignore
        if frames:
            tree, is_object, state = frames[-1]
            if dropping:
                dropping = False
                skipping = 1 if char in "{[" else 0
                continue
            key_next = is_object and state[1]
            if key_next:
                state[0], state[1] = scanstring(text, match.start() + 1)[0], False
            node = tree.get(state[0]) if tree else None
            if key_next or not is_object:
                if isinstance(node, _Ignored):
                    dropping = key_next
                    skipping = 1 if not key_next and char in "{[" else 0
                    continue
                if state[2] is not None and state[3]:
                    parts[state[2]] = ","
                state[3] = True
                if key_next:
                    parts.append(token)
                    continue
        parts.append(token)
        if char in "{[":
            below = node if isinstance(node, dict) else None
            frames.append((below, char == "{", [None, True, None, False] if char == "{" else [0, False, None, False]))
    return "".join(parts)


#: What moves a path through a JSON text: strings (keys among them) and punctuation. Numbers, literals and
#: whitespace lie in the gaps between them.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]')
_SCALAR = re.compile(r"[^ \t\n\r]+")


def _path_at(text: str, offset: int) -> Path:
    """The path of the innermost value of ``text`` (valid JSON) that holds character ``offset``."""
    # Per open container: the key or index of its current member (None before an object's next key), whether
    # it is an object, and whether a key comes next.
    members: list[str | int | None] = []
    objects: list[bool] = []
    key_next: list[bool] = []

    def container() -> Path:
        return tuple(members[:-1])  # type: ignore[arg-type]

    def current() -> Path:
        return tuple(members) if members and members[-1] is not None else container()  # type: ignore[arg-type]

    gap_start, gap_end = 0, len(text)
    for token in _TOKEN.finditer(text):
        position = token.start()
        if position > offset:
            gap_end = position
            break
        char = text[position]
        if char == '"':
            is_key = bool(members) and objects[-1] and key_next[-1]
            if offset < token.end():
                return container() if is_key else current()
            if is_key:
                key_next[-1] = False
                members[-1] = scanstring(text, position + 1)[0]
        elif offset == position:
            return current() if char in "{[" else container()
        elif char in "{[":
            members.append(None if char == "{" else 0)
            objects.append(char == "{")
            key_next.append(True)
        elif char in "}]":
            members.pop()
            objects.pop()
            key_next.pop()
        elif char == ",":
            if objects[-1]:
                key_next[-1] = True
                members[-1] = None
            else:
                members[-1] = int(members[-1] or 0) + 1
        gap_start = token.end()
    # The offset lies between two tokens: in a number or literal, or in whitespace.
    scalar = _SCALAR.search(text, gap_start, gap_end)
    if scalar is not None and scalar.start() <= offset < scalar.end():
        return current()
    return container()
