"""The fast engine: each schema node compiled into two closures, a boolean check and a reporting check.

``valid(value)`` answers "no violation at all?" without allocating. ``collect(value, path, out)`` appends
the contract's violations in order; it descends only into children whose ``valid`` is false, and it builds
path text only for a violation. Both recurse along the schema (never along an unbounded value: any-JSON parts
use the bounded lossless check), so they run only schemas of bounded height (see ``_schema_deep``).

Invariant the object and array checks rely on: a value with no violation under a node is lossless JSON, so the
whole-container lossless check only has to look at what no child node checked (digest 1.27-1.28). The same
invariant lets ``collect`` into a :class:`Findings` tell whether an original value (not its snapshot) is
lossless JSON at all: only the parts holding a violation need a look.
"""

from __future__ import annotations

from typing import Any, Final

from toolcanon._schema_kinds import ABSENT, is_json_integer, is_json_number, is_lossless, is_lossless_beside
from toolcanon._schema_nodes import CollectFn, SchemaNode, ValidFn
from toolcanon._schema_paths import ValuePath, missing_required, must_be, must_match_one_branch, not_declared
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import es_key_order

__all__ = ["Findings", "compile_closures"]


class Findings(list[str]):
    """Violations collected from an original value, with whether that value is lossless JSON (``lossless``).

    Collecting into one adds no violation and changes none; it only notes, at each part holding a violation,
    whether that part is lossless JSON (the rest is, being valid). An object's keys are type-checked before any
    lookup, so none of the value's own code runs (a lookup may call a foreign key's ``__eq__``).
    """

    __slots__ = ("lossless",)

    def __init__(self) -> None:
        super().__init__()
        self.lossless = True


def _note(out: list[str], value: Any) -> None:
    """Note, when collecting into :class:`Findings`, whether ``value`` (which holds a violation) is lossless."""
    if type(out) is Findings and out.lossless and not is_lossless(value):
        out.lossless = False


def _not_lossless(out: list[str]) -> None:
    if type(out) is Findings:
        out.lossless = False


def compile_closures(node: SchemaNode) -> None:
    """Set ``node.valid`` and ``node.collect``; the node's children must already have theirs."""
    kind = node.kind
    if kind == "object":
        node.valid = _object_valid(node)
        node.collect = _object_collect(node)
    elif kind == "array":
        node.valid = _array_valid(node)
        node.collect = _array_collect(node)
    elif kind == "oneOf":
        node.valid = _one_of_valid(node)
        node.collect = _one_of_collect(node)
    elif kind == "any":
        node.valid = is_lossless
        node.collect = _any_collect
    else:
        node.valid = _scalar_valid(node)
        node.collect = _scalar_collect(node)


# --- boolean checks --------------------------------------------------------------------------------------


def _is_string(value: Any) -> bool:
    return type(value) is str


def _is_boolean(value: Any) -> bool:
    return type(value) is bool


def _is_null(value: Any) -> bool:
    return value is None


_TYPE_CHECKS: Final[dict[str, ValidFn]] = {
    "string": _is_string,
    "number": is_json_number,
    "integer": is_json_integer,
    "boolean": _is_boolean,
    "null": _is_null,
}


def _scalar_valid(node: SchemaNode) -> ValidFn:
    enum = node.enum
    const = node.const
    if node.kind == "string":
        # The commonest leaves get a single closure with the type test inlined.
        if enum is None and const is ABSENT:
            return _is_string
        if const is ABSENT:
            members = enum

            def valid_string_enum(value: Any) -> bool:
                return type(value) is str and value in members  # type: ignore[operator]

            return valid_string_enum
    is_type = _TYPE_CHECKS[node.kind]
    if enum is None and const is ABSENT:
        return is_type

    def valid_scalar(value: Any) -> bool:
        if not is_type(value):
            return False
        if enum is not None and value not in enum:
            return False
        return const is ABSENT or value == const

    return valid_scalar


def _object_valid(node: SchemaNode) -> ValidFn:
    checks: dict[str, ValidFn] = {key: child.valid for key, child in node.properties.items()}
    check_of = checks.get
    required = frozenset(node.required)
    required_count = len(required)
    # A closed object whose declared properties are all required is valid exactly when it has no other key
    # (every required name is declared, a rule of the subset: the counts tell).
    exact = node.closed and required_count == len(checks)

    if node.closed:

        def valid_closed(value: Any) -> bool:
            kind = type(value)
            if kind is not dict and kind is not FrozenDict:
                return False
            for key, item in value.items():
                if type(key) is not str:
                    return False
                check = check_of(key)
                if check is None or not check(item):
                    return False
            if exact:
                return len(value) == required_count
            return value.keys() >= required  # type: ignore[no-any-return]

        return valid_closed

    def valid_open(value: Any) -> bool:
        kind = type(value)
        if kind is not dict and kind is not FrozenDict:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            check = check_of(key)
            if check is None:
                if not is_lossless(item):
                    return False
            elif not check(item):
                return False
        return not required_count or value.keys() >= required

    return valid_open


def _array_valid(node: SchemaNode) -> ValidFn:
    if node.items is None:

        def valid_any_array(value: Any) -> bool:
            kind = type(value)
            return (kind is list or kind is FrozenList) and is_lossless(value)

        return valid_any_array
    check = node.items.valid

    def valid_array(value: Any) -> bool:
        kind = type(value)
        if kind is not list and kind is not FrozenList:
            return False
        # A plain loop: as fast as all(map(...)), faster than all() over a generator.
        for item in value:  # noqa: SIM110
            if not check(item):
                return False
        return True

    return valid_array


def _one_of_valid(node: SchemaNode) -> ValidFn:
    checks = tuple(branch.valid for branch in node.branches)

    def valid_one_of(value: Any) -> bool:
        matched = False
        for check in checks:
            if check(value):
                if matched:
                    return False
                matched = True
        return matched

    return valid_one_of


# --- reporting checks ------------------------------------------------------------------------------------


def _any_collect(value: Any, path: ValuePath, out: list[str]) -> None:
    if not is_lossless(value):
        out.append(must_be(path, "a lossless JSON value"))
        _not_lossless(out)


def _type_violation(kind: str, value: Any) -> str:
    if kind == "number":
        value_type = type(value)
        return "a finite JSON number" if value_type is int or value_type is float else "a number"
    return _TYPE_WORDS[kind]


_TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}


def _scalar_collect(node: SchemaNode) -> CollectFn:
    kind = node.kind
    is_type = _TYPE_CHECKS[kind]
    enum = node.enum
    const = node.const
    one_of_enum = f"one of {node.enum_json}"
    const_json = node.const_json

    def collect_scalar(value: Any, path: ValuePath, out: list[str]) -> None:
        if not is_type(value):
            out.append(must_be(path, _type_violation(kind, value)))
            _note(out, value)
        elif enum is not None and value not in enum:
            out.append(must_be(path, one_of_enum))
        elif const is not ABSENT and value != const:
            out.append(must_be(path, const_json))

    return collect_scalar


def _object_collect(node: SchemaNode) -> CollectFn:
    properties = tuple(node.properties.items())
    declared = node.properties
    required = node.required
    closed = node.closed

    def collect_object(value: Any, path: ValuePath, out: list[str]) -> None:
        kind = type(value)
        if kind is not dict and kind is not FrozenDict:
            out.append(must_be(path, "an object"))
            _note(out, value)
            return
        if type(out) is Findings and not all(type(key) is str for key in value):
            out.lossless = False
            return
        start = len(out)
        try:
            for key in required:
                if key not in value:
                    out.append(missing_required(path, key))
            for key, child in properties:
                if key in value:
                    item = value[key]
                    if not child.valid(item):
                        child.collect(item, (path, key), out)
            if closed:
                for key in es_key_order([key for key in value if type(key) is str]):
                    if key not in declared:
                        out.append(not_declared(path, key))
            if len(out) == start:
                if not is_lossless_beside(value, declared):
                    out.append(must_be(path, "a lossless JSON object"))
                    _not_lossless(out)
            elif type(out) is Findings and out.lossless and not is_lossless_beside(value, declared):
                out.lossless = False
        except RecursionError:
            raise
        except Exception:
            # Reading the value ran foreign code that raised (a key's __eq__ or __hash__): digest 1.31.
            del out[start:]
            out.append(must_be(path, "a lossless JSON value"))
            _not_lossless(out)

    return collect_object


def _array_collect(node: SchemaNode) -> CollectFn:
    items = node.items

    def collect_array(value: Any, path: ValuePath, out: list[str]) -> None:
        kind = type(value)
        if kind is not list and kind is not FrozenList:
            out.append(must_be(path, "an array"))
            _note(out, value)
            return
        if items is None:
            if not is_lossless(value):
                out.append(must_be(path, "a dense lossless JSON array"))
                _not_lossless(out)
            return
        # With items, the whole-array check cannot fail once every item is valid (see is_lossless_beside).
        valid = items.valid
        collect = items.collect
        for index, item in enumerate(value):
            if not valid(item):
                collect(item, (path, index), out)

    return collect_array


def _one_of_collect(node: SchemaNode) -> CollectFn:
    checks = tuple(branch.valid for branch in node.branches)

    def collect_one_of(value: Any, path: ValuePath, out: list[str]) -> None:
        matched = 0
        for check in checks:
            if check(value):
                matched += 1
        if matched != 1:
            out.append(must_match_one_branch(path, matched))
            if not matched:  # a value matching a branch is valid there, so lossless
                _note(out, value)

    return collect_one_of
