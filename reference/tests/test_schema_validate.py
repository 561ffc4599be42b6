"""The compiled subset validator: paths, per-type checks, objects, arrays, oneOf, totality (digest 1.25-1.32)."""

from __future__ import annotations

import math
import sys
from collections import OrderedDict
from typing import Any

import pytest

from conftest import items_chain
from toolcanon._schema_deep import CLOSURE_HEIGHT, collect_without_closures, valid_iteratively
from toolcanon.errors import JsonSchemaError, ToolArgsError, ToolOutputError
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, snapshot_json
from toolcanon.schema import Validator, compile_parameters, compile_validator, compile_value_schema


def check(schema: Any, value: Any, root: str = "value") -> list[str]:
    """Validate, and cross-check is_valid, the step engine and the tall schemas' boolean check (neither of which
    uses the closures)."""
    validator = compile_validator(schema)
    violations = validator.violations(value, root)
    assert validator.is_valid(value) == (not violations)
    assert collect_without_closures(validator._node, value, root) == violations
    for height in (0, 1, 2):
        assert valid_iteratively(validator._node, value, height) in (None, not violations)
    return violations


class Opaque:
    """An instance of a user class."""

    def __repr__(self) -> str:  # a stable test id: the default repr holds the address
        return "Opaque()"


def _cyclic_list() -> list[Any]:
    cycle: list[Any] = []
    cycle.append(cycle)
    return cycle


def _cyclic_dict() -> dict[str, Any]:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    return cycle


# --- digest 1.25: paths ---------------------------------------------------------------------------------


def test_root_label() -> None:
    """digest 1.25: the diagnostic path is the root label; every message quotes its path."""
    assert check({"type": "string"}, 1) == ['"value" must be a string']
    assert check({"type": "string"}, 1, "output") == ['"output" must be a string']


def test_empty_root_renders_as_arguments() -> None:
    """digest 1.25: root '' renders as arguments."""
    assert check({"type": "object"}, "raw", "") == ['"arguments" must be an object']


def test_property_and_item_paths() -> None:
    """digest 1.25: <parent>.<key>, bare <key> under the empty root, <parent>[<i>]."""
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "o": {"type": "object", "properties": {"x": {"type": "null"}}},
        },
    }
    value = {"tags": ["a", 1], "o": {"x": 0}}
    assert check(schema, value, "") == ['"tags[1]" must be a string', '"o.x" must be null']
    assert check(schema, value) == ['"value.tags[1]" must be a string', '"value.o.x" must be null']
    assert check({"type": "array", "items": {"type": "array", "items": {"type": "null"}}}, [[None, 1]]) == [
        '"value[0][1]" must be null'
    ]
    assert check({"type": "array", "items": {"type": "null"}}, [0], "") == ['"[0]" must be null']


def test_keys_are_written_raw_in_paths() -> None:
    """digest 1.25: keys are not escaped; an empty key under the empty root renders as the root label."""
    schema = {
        "type": "object",
        "properties": {'quote"': {"type": "null"}, "x y": {"type": "null"}, "": {"type": "null"}},
    }
    assert check(schema, {'quote"': 1, "x y": 1, "": 1}) == [
        '"value.quote"" must be null',
        '"value.x y" must be null',
        '"value." must be null',
    ]
    assert check(schema, {"": 1}, "") == ['"arguments" must be null']


def test_a_missing_or_undeclared_empty_key_under_the_empty_root_is_written_empty() -> None:
    """digest 1.27: a missing or undeclared property is named by its raw path, as the original's propertyPath
    writes it, so an empty key under the arguments root is ``""``; a violation at that node reads ``arguments``."""
    schema = {"type": "object", "properties": {"": {"type": "null"}}, "required": [""]}
    assert check(schema, {}, "") == ['missing required property ""']
    assert check(schema, {}) == ['missing required property "value."']
    closed = {"type": "object", "properties": {"x": {"type": "object", "additionalProperties": False}}}
    assert check(closed, {"x": {"": 1}}, "") == ['"x." is not a declared property (additionalProperties: false)']
    assert check({"type": "object", "additionalProperties": False}, {"": 1}, "") == [
        '"" is not a declared property (additionalProperties: false)'
    ]


# --- digest 1.26: per-type checks -----------------------------------------------------------------------

TYPE_CASES: list[tuple[str, Any, str]] = [
    ("string", 1, "must be a string"),
    ("string", None, "must be a string"),
    ("string", b"x", "must be a string"),
    ("number", "1", "must be a number"),
    ("number", True, "must be a number"),
    ("number", None, "must be a number"),
    ("number", [1], "must be a number"),
    ("number", math.nan, "must be a finite JSON number"),
    ("number", math.inf, "must be a finite JSON number"),
    ("number", -math.inf, "must be a finite JSON number"),
    ("number", -0.0, "must be a finite JSON number"),
    ("number", MAX_SAFE_INTEGER + 1, "must be a finite JSON number"),
    ("integer", 1.5, "must be an integer"),
    ("integer", "1", "must be an integer"),
    ("integer", True, "must be an integer"),
    ("integer", math.nan, "must be an integer"),
    ("integer", math.inf, "must be an integer"),
    ("integer", -0.0, "must be an integer"),
    ("integer", -(MAX_SAFE_INTEGER + 1), "must be an integer"),
    ("boolean", 0, "must be a boolean"),
    ("boolean", "true", "must be a boolean"),
    ("null", 0, "must be null"),
    ("null", False, "must be null"),
    ("object", [], "must be an object"),
    ("object", None, "must be an object"),
    ("object", Opaque(), "must be an object"),
    ("object", OrderedDict(), "must be an object"),
    ("array", {}, "must be an array"),
    ("array", (1,), "must be an array"),
    ("array", "abc", "must be an array"),
]


@pytest.mark.parametrize(("type_name", "value", "message"), TYPE_CASES, ids=lambda x: repr(x)[:20])
def test_type_failures(type_name: str, value: Any, message: str) -> None:
    """digest 1.26: the per-type failure messages."""
    assert check({"type": type_name}, value) == [f'"value" {message}']


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("string", "\ud800"),
        ("number", 0),
        ("number", 0.0),
        ("number", 1e308),
        ("number", MAX_SAFE_INTEGER),
        ("integer", 2.0),
        ("integer", 1e300),
        ("integer", -MAX_SAFE_INTEGER),
        ("boolean", False),
        ("null", None),
        ("object", FrozenDict()),
        ("array", FrozenList()),
    ],
    ids=repr,
)
def test_type_successes(type_name: str, value: Any) -> None:
    """digest 1.26 + decisions 2: integer accepts integral floats; frozen containers are objects and arrays."""
    assert check({"type": type_name}, value) == []


def test_enum_and_const_messages_quote_json() -> None:
    """digest 1.26 + decisions 8: must be one of <JSON of enum>, must be <JSON of const>."""
    assert check({"type": "string", "enum": ["red", "green"]}, "blue") == ['"value" must be one of ["red","green"]']
    assert check({"type": "integer", "enum": [1, 2.0]}, 3) == ['"value" must be one of [1,2]']
    assert check({"type": "number", "enum": [1e21, 1e-7]}, 3) == ['"value" must be one of [1e+21,1e-7]']
    assert check({"type": "string", "const": "EUR"}, "USD") == ['"value" must be "EUR"']
    assert check({"type": "string", "const": 'q"\u2028\ud800'}, "x") == ['"value" must be "q\\"\u2028\\ud800"']
    assert check({"type": "boolean", "const": True}, False) == ['"value" must be true']
    assert check({"type": "null", "enum": [None]}, None) == []


def test_enum_and_const_compare_numbers_by_value() -> None:
    """digest 1.26: 1 and 1.0 are the same number."""
    assert check({"type": "number", "enum": [1, 2]}, 1.0) == []
    assert check({"type": "integer", "const": 2.0}, 2) == []


def test_type_check_comes_before_enum_and_enum_before_const() -> None:
    """digest 1.26: only the first failing check is reported."""
    schema = {"type": "string", "enum": ["a", "b"], "const": "a"}
    assert check(schema, 1) == ['"value" must be a string']
    assert check(schema, "c") == ['"value" must be one of ["a","b"]']
    assert check(schema, "b") == ['"value" must be "a"']


# --- digest 1.27: object nodes --------------------------------------------------------------------------


def test_object_violation_order() -> None:
    """digest 1.27: required (required order), declared properties (properties order), undeclared keys."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}, "c": {"type": "string"}},
        "required": ["c", "a"],
    }
    value = {"z": 1, "a": 1, "b": 2, "y": 0}
    assert check(schema, value) == [
        'missing required property "value.c"',
        '"value.b" must be a string',
        '"value.a" must be a string',
        '"value.z" is not a declared property (additionalProperties: false)',
        '"value.y" is not a declared property (additionalProperties: false)',
    ]


def test_undeclared_keys_in_ecmascript_order() -> None:
    """digest 1.27 + decisions 4: the value's own keys, array indices first."""
    schema = {"type": "object", "additionalProperties": False}
    assert check(schema, {"b": 1, "10": 1, "2": 1}) == [
        '"value.2" is not a declared property (additionalProperties: false)',
        '"value.10" is not a declared property (additionalProperties: false)',
        '"value.b" is not a declared property (additionalProperties: false)',
    ]


def test_properties_in_ecmascript_order() -> None:
    """digest 1.27 + decisions 4: declared properties are validated in ECMAScript key order."""
    schema = {"type": "object", "properties": {k: {"type": "null"} for k in ("b", "10", "2")}, "required": ["b"]}
    assert check(schema, {"b": 1, "10": 1, "2": 1}) == [
        '"value.2" must be null',
        '"value.10" must be null',
        '"value.b" must be null',
    ]


def test_absent_properties_are_not_validated_and_open_objects_accept_extras() -> None:
    """digest 1.27: only present properties are validated; missing or true additionalProperties is open."""
    for additional in ({}, {"additionalProperties": True}):
        schema = {"type": "object", "properties": {"a": {"type": "string"}}, **additional}
        assert check(schema, {"extra": [1, {"x": None}]}) == []


def test_whole_object_lossless_check_only_when_nothing_else_failed() -> None:
    """digest 1.27 step 4: extra open keys are checked only for losslessness."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert check(schema, {"a": "x", "extra": math.nan}) == ['"value" must be a lossless JSON object']
    assert check(schema, {"a": "x", "extra": (1,)}) == ['"value" must be a lossless JSON object']
    assert check(schema, {"a": 1, "extra": math.nan}) == ['"value.a" must be a string']
    closed = {"type": "object", "additionalProperties": False}
    assert check(closed, {"extra": math.nan}) == [
        '"value.extra" is not a declared property (additionalProperties: false)'
    ]


def test_non_string_keys_make_the_object_not_lossless() -> None:
    """digest 1.27 + 13.3: non-str keys play the part of symbol keys: skipped, then caught by step 4."""
    closed = {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}}}
    assert check(closed, {"a": "x", 1: "y"}) == ['"value" must be a lossless JSON object']
    assert check({"type": "object"}, {("t",): 1}) == ['"value" must be a lossless JSON object']

    class Key(str):
        """A str subclass key (decisions 1: not a JSON key)."""

    assert check(closed, {Key("a"): "x"}) == ['"value" must be a lossless JSON object']


def test_cycles_inside_objects() -> None:
    """digest 1.27: a cycle is caught where an unchecked (open, any-JSON) part reaches it."""
    assert check({"type": "object"}, _cyclic_dict()) == ['"value" must be a lossless JSON object']
    schema = {"type": "object", "properties": {"self": {"type": "object"}}}
    assert check(schema, _cyclic_dict()) == ['"value.self" must be a lossless JSON object']


def test_required_on_frozen_values() -> None:
    """digest 1.27: a frozen snapshot validates like the plain value."""
    schema = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {}}, "required": ["x", "y"]}
    assert check(schema, snapshot_json({"x": 1.5})) == [
        'missing required property "value.y"',
        '"value.x" must be an integer',
    ]


# --- digest 1.28: array nodes ---------------------------------------------------------------------------


def test_items_are_validated_in_order() -> None:
    """digest 1.28: each index against items."""
    assert check({"type": "array", "items": {"type": "string"}}, ["a", 1, "b", None]) == [
        '"value[1]" must be a string',
        '"value[3]" must be a string',
    ]


def test_whole_array_lossless_check() -> None:
    """digest 1.28: only when the items produce no violation."""
    assert check({"type": "array"}, [1, math.nan]) == ['"value" must be a dense lossless JSON array']
    assert check({"type": "array"}, _cyclic_list()) == ['"value" must be a dense lossless JSON array']
    assert check({"type": "array", "items": {}}, [1, math.nan]) == ['"value[1]" must be a lossless JSON value']
    assert check({"type": "array", "items": {"type": "string"}}, ["a"]) == []


def test_sequence_types_other_than_list_are_not_arrays() -> None:
    """digest 1.28 + 13.3: tuples and list subclasses are not arrays."""

    class Items(list[Any]):
        """A list subclass."""

    assert check({"type": "array"}, Items([1])) == ['"value" must be an array']
    assert check({"type": "array"}, (1,)) == ['"value" must be an array']


# --- digest 1.29: any-JSON nodes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [math.nan, -0.0, MAX_SAFE_INTEGER + 1, (1,), {1, 2}, Opaque(), b"x", OrderedDict(), {"a": [math.inf]}],
    ids=repr,
)
def test_any_json_rejects_non_lossless_values(value: Any) -> None:
    """digest 1.29: "<p>" must be a lossless JSON value."""
    assert check({}, value) == ['"value" must be a lossless JSON value']
    assert check({"description": "anything"}, value) == ['"value" must be a lossless JSON value']


def test_any_json_accepts_every_lossless_value() -> None:
    """digest 1.29"""
    for value in (None, True, 0, -1.5, "\udc00", [], {}, {"1": [{"a": None}]}, FrozenList([FrozenDict()])):
        assert check({}, value) == []


def _deep_list(depth: int) -> tuple[list[Any], list[Any]]:
    top: list[Any] = []
    bottom = top
    for _ in range(depth):
        child: list[Any] = []
        bottom.append(child)
        bottom = child
    return top, bottom


@pytest.mark.parametrize("depth", [5_000, pytest.param(100_000, marks=pytest.mark.thorough)])  # 100,000: a second
def test_a_deep_list_under_any_json(depth: int) -> None:
    """digest 1.29 + 3.1: depth is bounded by memory, not recursion (5,000 is five times the recursion limit)."""
    deep, bottom = _deep_list(depth)
    validator = compile_validator({})
    assert validator.is_valid(deep)
    bottom.append(math.nan)
    assert validator.violations(deep) == ['"value" must be a lossless JSON value']


def test_deep_cycles_and_deep_items() -> None:
    """digest 1.29 + 1.28: a cycle at the bottom of a deep value; a deep item under an items-less array."""
    deep, bottom = _deep_list(5_000)
    array = compile_validator({"type": "array", "items": {"type": "array"}})
    assert array.violations(deep) == []
    bottom.append(deep)
    assert not compile_validator({}).is_valid(deep)
    assert array.violations(deep) == ['"value[0]" must be a dense lossless JSON array']


# --- digest 1.30: oneOf ---------------------------------------------------------------------------------


def test_one_of_is_exact_one() -> None:
    """digest 1.30: under oneOf [number, integer] the value 1 matches 2 branches and fails."""
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    assert check(schema, 1) == ['"value" must match exactly one oneOf branch (matched 2)']
    assert check(schema, 1.5) == []
    assert check(schema, "x") == ['"value" must match exactly one oneOf branch (matched 0)']


def test_one_of_branch_details_are_discarded() -> None:
    """digest 1.30: only the count of clean branches matters."""
    schema = {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "object", "required": ["a"], "properties": {"a": {}}}, {"type": "null"}]}
        },
    }
    assert check(schema, {"v": {}}, "") == ['"v" must match exactly one oneOf branch (matched 0)']
    three = {"oneOf": [{}, {"type": "string"}, {"type": "string", "enum": ["a"]}]}
    assert check(three, "a") == ['"value" must match exactly one oneOf branch (matched 3)']
    assert check(three, math.nan) == ['"value" must match exactly one oneOf branch (matched 0)']


# --- digest 1.31: totality ------------------------------------------------------------------------------


class RaisingKey:
    """A key whose comparison raises (its hash collides with the string "a")."""

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compare")


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "string"},
        {"type": "number", "enum": [1]},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "additionalProperties": False},
        {"type": "array", "items": {"type": "object"}},
        {"oneOf": [{"type": "object"}, {"type": "array"}]},
    ],
    ids=repr,
)
def test_the_validator_never_raises(schema: dict[str, Any]) -> None:
    """digest 1.31: the validator never throws for any value."""
    hostile: dict[Any, Any] = {RaisingKey(): 1}
    values = [
        Opaque(),
        {1, 2},
        b"x",
        _cyclic_list(),
        _cyclic_dict(),
        hostile,
        [hostile],
        {"a": hostile},
        OrderedDict(a=1),
        math.nan,
        10**400,
        print,
        object,
    ]
    validator = compile_validator(schema)
    for value in values:
        violations = validator.violations(value)
        assert validator.is_valid(value) == (not violations)


def test_a_raising_read_becomes_a_lossless_value_violation() -> None:
    """digest 1.31: an exception while reading the value is reported at the node that met it."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert check(schema, {RaisingKey(): 1}) == ['"value" must be a lossless JSON value']
    nested = {"type": "array", "items": schema}
    assert check(nested, [{"a": "x"}, {RaisingKey(): 1}]) == ['"value[1]" must be a lossless JSON value']


def test_unsupported_schemas_do_not_compile() -> None:
    """digest 1.31: a validator exists only for a schema that passed the subset check."""
    with pytest.raises(JsonSchemaError) as raised:
        compile_validator({"type": "date"})
    assert raised.value.violations == ("schema.type must be one of object/array/string/number/integer/boolean/null",)


def test_tall_schemas_use_the_iterative_engine() -> None:
    """digest 1.31: a schema taller than the recursion bound is validated with an explicit stack."""
    schema: dict[str, Any] = {"type": "string"}
    value: Any = "leaf"
    for _ in range(5000):
        schema = {"type": "object", "properties": {"k": schema}, "required": ["k"]}
        value = {"k": value}
    validator = compile_validator(schema)
    assert validator.is_valid(value)
    assert validator.violations(value) == []
    bottom = value
    while isinstance(bottom["k"], dict):
        bottom = bottom["k"]
    bottom["k"] = 1
    assert validator.violations(value, "") == ['"k' + ".k" * 4999 + '" must be a string']
    assert not validator.is_valid(value)


def test_five_thousand_nested_one_ofs_validate() -> None:
    """digest 1.31 + 1.23: validation of a 5,000-deep oneOf chain does not recurse."""
    schema: dict[str, Any] = {"type": "null"}
    for _ in range(5000):
        schema = {"oneOf": [schema, {"type": "string"}]}
    validator = compile_validator(schema)
    assert validator.violations(None) == []
    assert validator.violations("x") == ['"value" must match exactly one oneOf branch (matched 2)']
    assert validator.violations(1) == ['"value" must match exactly one oneOf branch (matched 0)']


def test_a_caller_deep_in_the_stack_still_gets_an_answer() -> None:
    """digest 1.31: a RecursionError in the closures falls back to the iterative engine."""
    schema: dict[str, Any] = {"type": "integer"}
    value: Any = "x"
    valid: Any = 1
    for _ in range(CLOSURE_HEIGHT - 1):
        schema = {"type": "array", "items": schema}
        value = [value]
        valid = [valid]
    validator = compile_validator(schema)
    expected = ['"value' + "[0]" * (CLOSURE_HEIGHT - 1) + '" must be an integer']
    limit = sys.getrecursionlimit()

    def nest(depth: int) -> tuple[list[str], bool, bool]:
        if depth:
            return nest(depth - 1)
        return validator.violations(value), validator.is_valid(value), validator.is_valid(valid)

    sys.setrecursionlimit(400)
    try:
        assert nest(300) == (expected, False, True)
    finally:
        sys.setrecursionlimit(limit)


def test_a_deep_callers_fallback_keeps_the_violations_found_before_a_closure_failed() -> None:
    """digest 1.31: when a caller deep in the stack makes the closures of one item fail, the iterative engine
    discards only what that item's closures wrote: a violation found before it in an earlier item stays, first."""
    chain: dict[str, Any] = {"type": "integer"}
    deep: Any = "x"
    for _ in range(CLOSURE_HEIGHT - 2):
        chain = {"type": "array", "items": chain}
        deep = [deep]
    validator = compile_validator({"type": "array", "items": chain})
    expected = ['"value[0]" must be an array', '"value[1]' + "[0]" * (CLOSURE_HEIGHT - 2) + '" must be an integer']
    assert validator.violations([1, deep]) == expected
    limit = sys.getrecursionlimit()

    def nest(depth: int) -> list[str]:
        if depth:
            return nest(depth - 1)
        return validator.violations([1, deep])

    sys.setrecursionlimit(400)
    try:
        assert nest(300) == expected
    finally:
        sys.setrecursionlimit(limit)


# --- digest 1.32: the two roots in use -------------------------------------------------------------------


def test_tool_output_root() -> None:
    """digest 1.32: ToolOutputError messages use the root value."""
    output = compile_validator(
        compile_value_schema(
            {"type": "object", "additionalProperties": True, "properties": {"x": {"type": "string", "required": True}}}
        )
    )
    assert output.violations(1) == ['"value" must be an object']
    assert output.violations({}) == ['missing required property "value.x"']
    error = ToolOutputError("t", compile_validator({"type": "string"}).violations(1))
    assert error.message == 'tool "t" returned invalid output: "value" must be a string'


def test_tool_arguments_root() -> None:
    """digest 1.32: ToolArgsError messages use the root ''."""
    parameters = compile_validator(
        compile_parameters(
            {"path": {"type": "string", "required": True}, "tags": {"type": "array", "items": {"type": "string"}}}
        )
    )
    assert parameters.violations({}, "") == ['missing required property "path"']
    assert parameters.violations("not json", "") == ['"arguments" must be an object']
    assert parameters.violations({"path": "p", "tags": ["a", 1]}, "") == ['"tags[1]" must be a string']
    assert parameters.violations({"path": "p", "extra": {"x": [1]}}, "") == []
    error = ToolArgsError(parameters.violations({"tags": [1]}, ""))
    assert error.message == 'invalid arguments: missing required property "path"; "tags[0]" must be a string'


def test_validator_is_reusable_and_public() -> None:
    """digest 1.32: one Validator per schema, used for any number of values."""
    validator = compile_validator({"type": "string"})
    assert isinstance(validator, Validator)
    assert [validator.is_valid(v) for v in ("a", 1, "b")] == [True, False, True]


def test_a_hostile_key_below_an_object_makes_its_findings_not_lossless_unread() -> None:
    """digest 1.31 for a value expected to be invalid: a member whose key is not a string, whose comparison with
    the key looked up would raise, is refused before it is read; the value is not lossless JSON, so there are no
    violations to report for it."""
    inner = {"type": "object", "properties": {"a": {}}, "required": ["a"]}
    validator = compile_validator({"type": "object", "properties": {"a": inner}})
    value = {"a": {RaisingKey(): 1}}
    assert validator.violations(value) == ['"value.a" must be a lossless JSON value']
    assert validator.violations_if_lossless(value) is None


def test_an_object_that_is_not_lossless_beside_its_declared_properties_is_named_at_its_own_path() -> None:
    """A Python caller of ``violations`` on a value that is not lossless JSON: the object holding the undeclared
    member that is not lossless is named, at its own path."""
    validator = compile_validator({"type": "object", "properties": {"a": {"type": "string"}}})
    assert validator.violations({"a": "x", "b": math.nan}) == ['"value" must be a lossless JSON object']
    assert validator.violations({"b": math.inf}, "result") == ['"result" must be a lossless JSON object']


def test_the_tall_schemas_boolean_check_opens_containers_without_recursing() -> None:
    """digest 1.31: the boolean check of a schema taller than the recursion bound opens each container itself,
    so it answers for a valid and an invalid value alike without recursing along the schema."""
    schema: dict[str, Any] = {"type": "string"}
    value: Any = "leaf"
    for _ in range(3000):
        schema = {"type": "object", "properties": {"k": schema}}
        value = {"k": value}
    node = compile_validator(schema)._node
    assert valid_iteratively(node, value) is True
    bottom = value
    while isinstance(bottom["k"], dict):
        bottom = bottom["k"]
    bottom["k"] = 1
    assert valid_iteratively(node, value) is False


def _nested_lists(levels: int, leaf: Any) -> Any:
    for _ in range(levels):
        leaf = [leaf]
    return leaf


def test_the_tall_boolean_check_opens_an_items_chain_without_recursing() -> None:
    """digest 1.31: a tall array is opened by the boolean check itself, as a tall object is."""
    node = compile_validator(items_chain(3000, {"type": "integer"}))._node
    assert valid_iteratively(node, _nested_lists(3000, 1)) is True
    assert valid_iteratively(node, _nested_lists(3000, "x")) is False


def test_a_oneof_with_a_branch_past_the_height_is_unsure() -> None:
    """A oneOf whose branch is taller than the closures' height cannot be counted by the boolean check: it
    answers None (unsure), and the reporting walk decides."""
    node = compile_validator({"oneOf": [items_chain(1000, {"type": "integer"}), {"type": "string"}]})._node
    assert valid_iteratively(node, "s") is None
    assert valid_iteratively(node, _nested_lists(1000, 1)) is None


def test_a_oneof_whose_branches_reach_the_height_is_counted() -> None:
    """A oneOf one level over the height, its tallest branch at the height, is counted by its branches' closures."""
    node = compile_validator({"oneOf": [{"type": "null"}, items_chain(CLOSURE_HEIGHT - 1, {"type": "string"})]})._node
    assert valid_iteratively(node, None) is True
    assert valid_iteratively(node, _nested_lists(CLOSURE_HEIGHT - 1, "s")) is True
    assert valid_iteratively(node, 1) is False


def test_the_step_engine_without_closures_never_asks_a_containers_closures() -> None:
    """collect_without_closures judges every container by its own steps: the object's closures are not run."""
    validator = compile_validator({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    node = validator._node
    asked: list[str] = []
    valid, collect = node.valid, node.collect

    def spy_valid(value: Any) -> bool:
        asked.append("valid")
        return valid(value)

    def spy_collect(value: Any, path: Any, out: list[str]) -> None:
        asked.append("collect")
        collect(value, path, out)

    node.valid, node.collect = spy_valid, spy_collect
    try:
        assert collect_without_closures(node, {"a": 1}, "value") == ['"value.a" must be a string']
        assert collect_without_closures(node, {}, "value") == ['missing required property "value.a"']
    finally:
        node.valid, node.collect = valid, collect
    assert asked == []


def test_findings_note_an_object_that_is_not_lossless_beside_a_violation() -> None:
    """Collecting into Findings: an object holding a violation and an undeclared member that is not lossless JSON
    is noted not lossless (the flag is False), the violation itself still reported."""
    from toolcanon._schema_closures import Findings

    validator = compile_validator({"type": "object", "properties": {"a": {"type": "string"}}})
    findings = Findings()
    validator._node.collect({"a": 1, "b": math.nan}, "value", findings)
    assert list(findings) == ['"value.a" must be a string']
    assert findings.lossless is False


def test_a_tall_schemas_findings_on_the_value_itself_name_the_root() -> None:
    """violations_if_lossless on a schema taller than the recursion bound: the violations of a lossless value,
    at paths under the root given, and None for a value that is not lossless JSON."""
    schema: dict[str, Any] = {"type": "string"}
    value: Any = 1
    for _ in range(CLOSURE_HEIGHT + 20):
        schema = {"type": "object", "properties": {"k": schema}}
        value = {"k": value}
    validator = compile_validator(schema)
    expected = ['"result' + ".k" * (CLOSURE_HEIGHT + 20) + '" must be a string']
    assert validator.violations_if_lossless(value, "result") == expected
    assert validator.violations_if_lossless({"k": math.nan}, "result") is None


def test_findings_note_a_scalar_violation_that_is_not_lossless() -> None:
    """Collecting into Findings: a member of the wrong type that is not lossless JSON (NaN where a string belongs)
    is reported, and the flag is exactly False."""
    from toolcanon._schema_closures import Findings

    validator = compile_validator({"type": "object", "properties": {"a": {"type": "string"}}})
    findings = Findings()
    validator._node.collect({"a": math.nan}, "value", findings)
    assert list(findings) == ['"value.a" must be a string']
    assert findings.lossless is False


class ComparedKey:
    """A key whose hash collides with the string "a" and that records every comparison made with it."""

    def __init__(self, compared: list[object]) -> None:
        self.compared = compared

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        self.compared.append(other)
        return False


def test_findings_refuse_an_object_with_a_key_that_is_no_string_before_any_lookup() -> None:
    """Collecting into Findings: an object holding a key that is not a string is not lossless JSON, found before any
    lookup, so none of the key's own code runs and no violation is added for it."""
    from toolcanon._schema_closures import Findings

    validator = compile_validator({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    compared: list[object] = []
    findings = Findings()
    validator._node.collect({ComparedKey(compared): 1}, "value", findings)
    assert compared == []
    assert list(findings) == []
    assert findings.lossless is False


def test_a_closure_names_a_raising_read_at_the_object_that_met_it() -> None:
    """digest 1.31 in the closures themselves: an object whose read raises (a key's comparison) is named a lossless
    JSON value violation at its own path, at the root and below a property."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    out: list[str] = []
    compile_validator(schema)._node.collect({RaisingKey(): 1}, "value", out)
    assert out == ['"value" must be a lossless JSON value']
    nested: list[str] = []
    compile_validator({"type": "object", "properties": {"b": schema}})._node.collect(
        {"b": {RaisingKey(): 1}}, "value", nested
    )
    assert nested == ['"value.b" must be a lossless JSON value']


def test_a_tall_schemas_valid_value_is_answered_by_the_boolean_check_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """digest 1.31: a schema taller than the recursion bound answers a valid value with its boolean check (a fraction
    of the reporting walk's memory): is_valid and violations never run the reporting walk for it."""
    import toolcanon._schema_validate as schema_validate

    schema: dict[str, Any] = {"type": "string"}
    value: Any = "leaf"
    for _ in range(CLOSURE_HEIGHT + 20):
        schema = {"type": "object", "properties": {"k": schema}}
        value = {"k": value}
    validator = compile_validator(schema)

    def walk(*args: Any) -> list[str]:
        raise AssertionError("the reporting walk ran for a valid value")

    monkeypatch.setattr(schema_validate, "collect_iteratively", walk)
    assert validator.is_valid(value) is True
    assert validator.violations(value) == []


def test_a_value_that_is_not_lossless_is_named_at_its_own_property() -> None:
    """An any-JSON node and an array without items, each under an object property, name their own place."""
    assert check({"type": "object", "properties": {"x": {}}}, {"x": math.nan}) == [
        '"value.x" must be a lossless JSON value'
    ]
    assert check({"type": "object", "properties": {"l": {"type": "array"}}}, {"l": [math.nan]}) == [
        '"value.l" must be a dense lossless JSON array'
    ]


def test_findings_mark_a_value_that_is_not_lossless_as_false() -> None:
    """Collecting into Findings sets its flag to False itself, not merely to something falsy."""
    from toolcanon._schema_closures import Findings

    for schema, value in (({"type": "array"}, [math.nan]), ({}, math.nan), ({"type": "object"}, {"extra": math.nan})):
        findings = Findings()
        compile_validator(schema)._node.collect(value, "value", findings)
        assert findings.lossless is False
