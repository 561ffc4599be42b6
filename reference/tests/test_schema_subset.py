"""The supported raw JSON Schema subset: node form, keywords, shape rules, order (digest 1.20-1.24)."""

from __future__ import annotations

import math
import sys
from collections import OrderedDict
from types import FrameType, MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BoundedAncestors, items_chain
from toolcanon._schema_kinds import ABSENT, ANNOTATIONS, CONSTRAINT_KEYWORDS, is_lossless
from toolcanon._schema_subset import _check_node, _copy_supported, _walk_violations
from toolcanon._schema_walk import run_walk
from toolcanon.errors import JsonSchemaError
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, NotLosslessJson, _Bail, canonical_json, snapshot_json
from toolcanon.schema import assert_object_schema, assert_supported_schema, schema_violations, supported_copy
from toolcanon_conformance.strategies import subset_schemas

UNSUPPORTED = (
    "is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const"
    " + annotations)"
)


class Opaque:
    """An instance of a user class."""


class Text(str):
    """A string subclass: equal to its text, yet not lossless JSON."""


# --- digest 1.20: node form -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "node",
    [
        None,
        True,
        1,
        "object",
        [],
        ("type", "object"),
        OrderedDict(type="object"),
        MappingProxyType({"type": "object"}),
        {1: "object"},
        Opaque(),
    ],
    ids=["None", "bool", "int", "str", "list", "tuple", "dict-subclass", "mappingproxy", "non-str-key", "opaque"],
)
def test_a_node_that_is_not_a_schema_record(node: Any) -> None:
    """digest 1.20: <p> must be a schema object, and no further checks."""
    assert schema_violations(node) == ["schema must be a schema object"]
    assert schema_violations({"type": "array", "items": node}) == ["schema.items must be a schema object"]


def test_frozen_dicts_are_schema_records() -> None:
    """digest 1.20: the registry's frozen dict counts as a plain record."""
    schema = FrozenDict({"type": "array", "items": FrozenDict({"type": "string", "enum": FrozenList(["a"])})})
    assert schema_violations(schema) == []


def bounded_violations(schema: Any) -> list[str]:
    """The violations of a walk whose ancestor set fails past a few adds: a walk round a cycle fails, not hangs."""
    out: list[str] = []
    run_walk(_check_node(schema, "schema", out, BoundedAncestors(4)))
    return out


def test_circular_node() -> None:
    """digest 1.20: a node seen again on its own ancestor path."""
    node: dict[str, Any] = {"type": "object", "properties": {}}
    node["properties"]["self"] = node
    one_of: dict[str, Any] = {"oneOf": [{"type": "null"}]}
    one_of["oneOf"].append({"type": "array", "items": one_of})
    # the bounded walks come first: on a check that misses the cycle they fail where the public calls hang
    assert bounded_violations(node) == ["schema.properties.self is circular"]
    assert bounded_violations(one_of) == ["schema.oneOf[1].items is circular"]
    assert schema_violations(node) == ["schema.properties.self is circular"]
    assert schema_violations(one_of) == ["schema.oneOf[1].items is circular"]


def test_sibling_reuse_is_fine() -> None:
    """digest 1.20: one node object reused by siblings is not circular."""
    shared = {"type": "string"}
    schema = {"type": "object", "properties": {"a": shared, "b": shared}, "required": ["a", "b"]}
    assert schema_violations({"oneOf": [schema, {"type": "array", "items": shared}]}) == []


def test_a_cycle_is_found_the_first_time_the_walk_comes_back() -> None:
    """digest 1.20: each node on the path is an ancestor, taken off again once walked."""
    node: dict[str, Any] = {"type": "array"}
    node["items"] = {"type": "object", "properties": {"self": node}}
    out: list[str] = []
    ancestors = BoundedAncestors(2)
    run_walk(_check_node(node, "schema", out, ancestors))
    assert out == ["schema.items.properties.self is circular"]
    assert ancestors == set()


def test_root_path_is_configurable() -> None:
    """digest 1.20: the root path is schema by default."""
    assert schema_violations(1, "output") == ["output must be a schema object"]


# --- digest 1.21: keyword classes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "keyword", ["anyOf", "allOf", "not", "$ref", "pattern", "minimum", "maxLength", "patternProperties", "format"]
)
def test_unknown_keywords_are_unsupported(keyword: str) -> None:
    """digest 1.21: <p>.<key> is not a supported keyword (...)."""
    assert schema_violations({"type": "string", keyword: 1}) == [f"schema.{keyword} {UNSUPPORTED}"]


def test_unsupported_keyword_exact_text() -> None:
    """digest 1.21: the exact message."""
    assert schema_violations({"type": "string", "pattern": "x"}) == [
        "schema.pattern is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties"
        "/items/enum/const + annotations)"
    ]


def test_annotations_are_supported_on_any_node() -> None:
    """digest 1.21: description, title, default and examples."""
    annotations = {"description": "d", "title": "t", "default": {"a": [1, None]}, "examples": [{"x": 1.5}]}
    assert schema_violations({**annotations}) == []
    assert schema_violations({"type": "integer", **annotations}) == []
    assert schema_violations({"oneOf": [{"type": "null"}, {"type": "string"}], **annotations}) == []


def _cycle() -> list[Any]:
    cycle: list[Any] = []
    cycle.append(cycle)
    return cycle


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        -0.0,
        MAX_SAFE_INTEGER + 1,
        (1, 2),
        {1: "a"},
        {"a": {1, 2}},
        Opaque(),
        b"x",
        _cycle(),
        OrderedDict(),
    ],
    ids=[
        "nan",
        "inf",
        "-inf",
        "-0",
        "unsafe-int",
        "tuple",
        "non-str-key",
        "nested-set",
        "opaque",
        "bytes",
        "cycle",
        "dict-subclass",
    ],
)
def test_annotation_that_is_not_lossless(value: Any) -> None:
    """digest 1.21: <p>.<key> annotation must be lossless JSON data."""
    assert schema_violations({"type": "string", "default": value}) == [
        "schema.default annotation must be lossless JSON data"
    ]
    assert schema_violations({"examples": [value]}) == ["schema.examples annotation must be lossless JSON data"]


def test_a_value_that_changes_while_it_is_read_is_not_lossless() -> None:
    """A dict that grows while the lossless check reads it (a profile hook here; another thread could) makes the
    read raise: the answer is that the value is not lossless JSON, not the error."""
    inner: dict[str, Any] = {}
    outer: dict[str, Any] = {"a": inner}

    def grow(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and "b" not in outer and frame.f_locals.get("value") is inner:
            outer["b"] = 1

    sys.setprofile(grow)
    try:
        answer = is_lossless(outer)
    finally:
        sys.setprofile(None)
    assert "b" in outer
    assert answer is False


def test_the_absent_marker_reads_absent() -> None:
    """The marker of a const that is not declared names itself."""
    assert repr(ABSENT) == "ABSENT"


def test_description_and_title_must_be_strings() -> None:
    """digest 1.21: after the key loop, description then title."""
    assert schema_violations({"title": 1, "description": None}) == [
        "schema.description must be a string",
        "schema.title must be a string",
    ]


def test_a_non_lossless_description_gets_both_messages() -> None:
    """digest 1.21: the annotation pass and the string check both report."""
    assert schema_violations({"description": math.nan}) == [
        "schema.description annotation must be lossless JSON data",
        "schema.description must be a string",
    ]


def test_keyword_pass_runs_in_key_order() -> None:
    """digest 1.21 + decisions 4: keys are visited in ECMAScript order (array indices first)."""
    schema = {"type": "string", "zeta": 1, "default": math.inf, "10": 1, "alpha": 1, "2": 1}
    assert schema_violations(schema) == [
        f"schema.2 {UNSUPPORTED}",
        f"schema.10 {UNSUPPORTED}",
        f"schema.zeta {UNSUPPORTED}",
        "schema.default annotation must be lossless JSON data",
        f"schema.alpha {UNSUPPORTED}",
    ]


# --- digest 1.22: shape rules ---------------------------------------------------------------------------


def test_type_and_one_of_together() -> None:
    """digest 1.22: <p> cannot declare both type and oneOf, and the node is not checked further."""
    schema = {"type": "bogus", "oneOf": [1], "items": 1, "enum": []}
    assert schema_violations(schema) == ["schema cannot declare both type and oneOf"]


def test_any_json_nodes() -> None:
    """digest 1.22: neither type nor oneOf, only annotations (or nothing): the any-JSON schema."""
    assert schema_violations({}) == []
    assert schema_violations({"description": "any"}) == []


def test_constraints_without_type_or_one_of() -> None:
    """digest 1.22: <p>.<key> requires type or oneOf, in the fixed order."""
    schema = {"const": 1, "enum": [1], "items": {}, "additionalProperties": True, "required": [], "properties": {}}
    assert schema_violations(schema) == [
        "schema.properties requires type or oneOf",
        "schema.required requires type or oneOf",
        "schema.additionalProperties requires type or oneOf",
        "schema.items requires type or oneOf",
        "schema.enum requires type or oneOf",
        "schema.const requires type or oneOf",
    ]


def test_children_of_a_typeless_node_are_not_walked() -> None:
    """digest 1.22: the node gets no further checks."""
    assert schema_violations({"items": {"type": "bogus"}}) == ["schema.items requires type or oneOf"]


@pytest.mark.parametrize(
    "branches",
    [None, 1, {"0": {}}, ({}, {}), [], [{"type": "null"}]],
    ids=["None", "int", "dict", "tuple", "empty", "one"],
)
def test_one_of_must_be_an_array_of_at_least_two(branches: Any) -> None:
    """digest 1.22: <p>.oneOf must be an array of at least two schemas."""
    assert schema_violations({"oneOf": branches}) == ["schema.oneOf must be an array of at least two schemas"]


def test_the_branches_of_a_one_of_of_fewer_than_two_are_not_walked() -> None:
    """digest 1.22: as in the original, a one-branch oneOf is one violation, its siblings still reported after it;
    two branches are walked, and so is the rest of the schema beside a one-branch oneOf."""
    one = "schema.oneOf must be an array of at least two schemas"
    assert schema_violations({"oneOf": [{"type": "bogus"}]}) == [one]
    assert schema_violations({"oneOf": [{"type": "string", "enum": [1], "extra": True}], "const": 1, "items": {}}) == [
        one,
        "schema.items is not supported beside oneOf",
        "schema.const is not supported beside oneOf",
    ]
    assert schema_violations({"oneOf": [{"type": "bogus"}, {"type": "string", "const": 1}]}) == [
        "schema.oneOf[0].type must be one of object/array/string/number/integer/boolean/null",
        "schema.oneOf[1].const must be a string value",
    ]
    beside = {"type": "object", "properties": {"a": {"oneOf": [{"type": "bogus"}]}, "b": {"type": "bogus"}}}
    assert schema_violations(beside) == [
        "schema.properties.a.oneOf must be an array of at least two schemas",
        "schema.properties.b.type must be one of object/array/string/number/integer/boolean/null",
    ]


def test_one_of_branches_then_siblings() -> None:
    """digest 1.22: branches at <p>.oneOf[<i>], then each sibling keyword is not supported beside oneOf."""
    schema = {
        "const": 1,
        "oneOf": [{"type": "null"}, 1, {"type": "string", "items": {}}],
        "properties": {},
        "enum": [],
        "items": {},
        "additionalProperties": False,
        "required": [],
    }
    assert schema_violations(schema) == [
        "schema.oneOf[1] must be a schema object",
        'schema.oneOf[2].items is not supported on type "string"',
        "schema.properties is not supported beside oneOf",
        "schema.required is not supported beside oneOf",
        "schema.additionalProperties is not supported beside oneOf",
        "schema.items is not supported beside oneOf",
        "schema.enum is not supported beside oneOf",
        "schema.const is not supported beside oneOf",
    ]


@pytest.mark.parametrize("type_value", [["string"], ["string", "null"], [], FrozenList(["string"])], ids=repr)
def test_type_arrays(type_value: Any) -> None:
    """digest 1.22: an array type yields the type-arrays message and stops."""
    assert schema_violations({"type": type_value, "items": 1}) == [
        "schema.type must be a single type string (type arrays are not supported)"
    ]


@pytest.mark.parametrize("type_value", ["json", "float", "Object", None, 1, ("string",)], ids=repr)
def test_unknown_type(type_value: Any) -> None:
    """digest 1.22: anything else yields the one-of-seven message and stops."""
    assert schema_violations({"type": type_value, "items": 1}) == [
        "schema.type must be one of object/array/string/number/integer/boolean/null"
    ]


@pytest.mark.parametrize(
    ("type_name", "misplaced"),
    [
        ("object", ["items", "enum", "const"]),
        ("array", ["properties", "required", "additionalProperties", "enum", "const"]),
        ("string", ["properties", "required", "additionalProperties", "items"]),
        ("number", ["properties", "required", "additionalProperties", "items"]),
        ("integer", ["properties", "required", "additionalProperties", "items"]),
        ("boolean", ["properties", "required", "additionalProperties", "items"]),
        ("null", ["properties", "required", "additionalProperties", "items"]),
    ],
)
def test_misplaced_keywords(type_name: str, misplaced: list[str]) -> None:
    """digest 1.22: <p>.<key> is not supported on type "<type>", in the fixed order; their contents are not walked."""
    values = {"properties": {}, "required": [], "additionalProperties": True, "items": {}, "enum": [], "const": 0}
    schema = {"type": type_name, **{key: values[key] for key in reversed(misplaced)}}
    assert schema_violations(schema) == [f'schema.{key} is not supported on type "{type_name}"' for key in misplaced]


def test_object_properties_must_be_a_record_of_schemas() -> None:
    """digest 1.22: <p>.properties must be an object of schemas; otherwise each child is checked."""
    for properties in (None, [], "x", OrderedDict(), {1: {}}):
        assert schema_violations({"type": "object", "properties": properties}) == [
            "schema.properties must be an object of schemas"
        ]
    assert schema_violations({"type": "object", "properties": {"a": {"type": "x"}, "b": []}}) == [
        "schema.properties.a.type must be one of object/array/string/number/integer/boolean/null",
        "schema.properties.b must be a schema object",
    ]


def test_object_required_must_be_an_array_of_strings() -> None:
    """digest 1.22: <p>.required must be an array of strings."""
    for required in ("a", ("a",), ["a", 1], [None], {"a": True}):
        assert schema_violations({"type": "object", "properties": {"a": {}}, "required": required}) == [
            "schema.required must be an array of strings"
        ]


def test_object_required_names_must_be_declared() -> None:
    """digest 1.22: <p>.required names "<key>" which is not in properties; invalid properties count as {}."""
    assert schema_violations({"type": "object", "properties": {"a": {}}, "required": ["b", "a", "c"]}) == [
        'schema.required names "b" which is not in properties',
        'schema.required names "c" which is not in properties',
    ]
    assert schema_violations({"type": "object", "required": ["a"]}) == [
        'schema.required names "a" which is not in properties'
    ]
    assert schema_violations({"type": "object", "properties": 1, "required": ["a"]}) == [
        "schema.properties must be an object of schemas",
        'schema.required names "a" which is not in properties',
    ]


@pytest.mark.parametrize("name", ["toString", "__class__", "keys", "__proto__"])
def test_inherited_names_are_not_properties(name: str) -> None:
    """digest 1.22: only own keys of properties count."""
    assert schema_violations({"type": "object", "properties": {}, "required": [name]}) == [
        f'schema.required names "{name}" which is not in properties'
    ]


def test_object_additional_properties_must_be_a_boolean() -> None:
    """digest 1.22: <p>.additionalProperties must be a boolean (absent is fine: open)."""
    assert schema_violations({"type": "object"}) == []
    for value in (None, 0, "false", {}):
        assert schema_violations({"type": "object", "additionalProperties": value}) == [
            "schema.additionalProperties must be a boolean"
        ]


def test_array_items_are_checked() -> None:
    """digest 1.22: items is checked at <p>.items."""
    assert schema_violations({"type": "array", "items": {"type": "array", "items": []}}) == [
        "schema.items.items must be a schema object"
    ]


SCALAR_SAMPLES: dict[str, tuple[list[Any], list[Any]]] = {
    # type: (values that match, values that do not)
    "string": (["", "a", "\ud800", "😀"], [1, None, True, b"a", ["a"]]),
    "number": (
        [0, 1, -1, 1.5, 0.0, 1e300, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER],
        [True, "1", None, math.nan, math.inf, -math.inf, -0.0, MAX_SAFE_INTEGER + 1, [1]],
    ),
    "integer": (
        [0, 2, -2, 2.0, 1e300, MAX_SAFE_INTEGER],
        [1.5, True, False, "2", math.nan, math.inf, -0.0, -(MAX_SAFE_INTEGER + 1)],
    ),
    "boolean": ([True, False], [0, 1, "true", None]),
    "null": ([None], [0, False, "", []]),
}


@pytest.mark.parametrize("type_name", list(SCALAR_SAMPLES))
def test_scalar_enum_entries_must_match_the_type(type_name: str) -> None:
    """digest 1.22: <p>.enum must be a non-empty array of <type> values."""
    good, bad = SCALAR_SAMPLES[type_name]
    assert schema_violations({"type": type_name, "enum": good}) == []
    message = f"schema.enum must be a non-empty array of {type_name} values"
    for value in bad:
        assert schema_violations({"type": type_name, "enum": [*good, value]}) == [message], value
    for enum in ([], None, tuple(good), {"0": good[0]}):
        assert schema_violations({"type": type_name, "enum": enum}) == [message], enum


@pytest.mark.parametrize("type_name", list(SCALAR_SAMPLES))
def test_scalar_const_must_match_the_type(type_name: str) -> None:
    """digest 1.22: <p>.const must be a <type> value (the article is always "a")."""
    good, bad = SCALAR_SAMPLES[type_name]
    for value in good:
        assert schema_violations({"type": type_name, "const": value}) == []
    for value in bad:
        assert schema_violations({"type": type_name, "const": value}) == [f"schema.const must be a {type_name} value"]


def test_const_must_be_in_enum_when_both_are_valid() -> None:
    """digest 1.22: <p>.const must be one of <p>.enum when both are declared."""
    assert schema_violations({"type": "integer", "enum": [1, 2], "const": 2.0}) == []
    assert schema_violations({"type": "string", "enum": ["a"], "const": "b"}) == [
        "schema.const must be one of schema.enum when both are declared"
    ]
    # Only when both are valid.
    assert schema_violations({"type": "string", "enum": [1], "const": "b"}) == [
        "schema.enum must be a non-empty array of string values"
    ]
    assert schema_violations({"type": "string", "enum": ["a"], "const": 1}) == ["schema.const must be a string value"]


# --- digest 1.23: violation order -----------------------------------------------------------------------


def test_every_violation_in_the_documented_order() -> None:
    """digest 1.23: keywords; description/title; shape; misplaced; properties record; descendants; tail."""
    schema = {
        "type": "object",
        "title": 7,
        "required": ["ghost", 1],
        "items": {},
        "zz": 1,
        "properties": {
            "b": {"type": "array", "items": {"type": "number", "enum": [math.nan]}, "minItems": 1},
            "a": {"oneOf": [{"type": ["x"]}, {}], "enum": [1]},
            "1": {"type": "object", "additionalProperties": "no", "properties": {"x": {"default": math.nan}}},
        },
        "additionalProperties": 1,
    }
    assert schema_violations(schema) == [
        f"schema.zz {UNSUPPORTED}",
        "schema.title must be a string",
        'schema.items is not supported on type "object"',
        "schema.properties.1.properties.x.default annotation must be lossless JSON data",
        "schema.properties.1.additionalProperties must be a boolean",
        f"schema.properties.b.minItems {UNSUPPORTED}",
        "schema.properties.b.items.enum must be a non-empty array of number values",
        "schema.properties.a.oneOf[0].type must be a single type string (type arrays are not supported)",
        "schema.properties.a.enum is not supported beside oneOf",
        "schema.required must be an array of strings",
        "schema.additionalProperties must be a boolean",
    ]


def test_five_thousand_nested_one_ofs() -> None:
    """digest 1.23: depth is bounded by memory, not by a call stack."""
    schema: dict[str, Any] = {"type": "null"}
    for _ in range(5000):
        schema = {"oneOf": [schema, {"type": "string"}]}
    assert schema_violations(schema) == []
    broken: dict[str, Any] = {"type": "bogus"}
    for _ in range(5000):
        broken = {"oneOf": [{"type": "string"}, broken]}
    assert schema_violations(broken) == [
        "schema" + ".oneOf[1]" * 5000 + ".type must be one of object/array/string/number/integer/boolean/null"
    ]


def test_deeply_nested_properties_and_items() -> None:
    """digest 1.23: 20,000 nested objects and arrays, no RecursionError."""
    schema: dict[str, Any] = {}
    for level in range(20000):
        schema = {"type": "object", "properties": {"k": schema}} if level % 2 else {"type": "array", "items": schema}
    assert schema_violations(schema) == []


def test_schema_violations_is_total() -> None:
    """digest 1.23: the check never raises, whatever it is given."""

    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

        def __hash__(self) -> int:
            return 1

        def __repr__(self) -> str:
            raise RuntimeError("repr")

    hostile_key: dict[Any, Any] = {Hostile(): 1, "type": "string"}
    for schema in (Hostile(), hostile_key, {"type": "string", "default": hostile_key}, {"enum": [Hostile()]}):
        assert schema_violations(schema)


# --- digest 1.24: object-rooted schemas, and the assertion ------------------------------------------------


def test_assert_object_schema() -> None:
    """digest 1.24: the same checks plus a root type "object"."""
    assert_object_schema({"type": "object", "properties": {"a": {}}})
    for schema in ({"type": "array"}, {}, {"oneOf": [{"type": "object"}, {"type": "null"}]}):
        with pytest.raises(JsonSchemaError) as raised:
            assert_object_schema(schema)
        assert raised.value.violations == ('schema.type must be "object" (structured output is object-rooted)',)
    with pytest.raises(JsonSchemaError) as raised:
        assert_object_schema({"type": "string", "pattern": "x"})
    assert raised.value.violations == (
        f"schema.pattern {UNSUPPORTED}",
        'schema.type must be "object" (structured output is object-rooted)',
    )


@pytest.mark.parametrize("schema", [[], "object", None, 1])
def test_assert_object_schema_of_a_schema_that_is_no_object(schema: object) -> None:
    """A schema that is no JSON object breaks both rules, each named; the check reads nothing else of it."""
    with pytest.raises(JsonSchemaError) as raised:
        assert_object_schema(schema)
    assert raised.value.violations == (
        "schema must be a schema object",
        'schema.type must be "object" (structured output is object-rooted)',
    )


def test_scalar_array_and_null_roots_are_legal_outputs() -> None:
    """digest 1.24: tool outputs do not use the object-rooted check."""
    for schema in ({"type": "string"}, {"type": "array"}, {"type": "null"}, {}):
        assert_supported_schema(schema)


def test_assert_supported_schema_raises_every_violation() -> None:
    """digest 1.5 / 1.21: JsonSchemaError, code UNSUPPORTED_SCHEMA, violations joined by "; "."""
    with pytest.raises(JsonSchemaError) as raised:
        assert_supported_schema({"type": "string", "pattern": "x", "title": 1})
    error = raised.value
    assert error.code == "UNSUPPORTED_SCHEMA"
    assert error.name == "JsonSchemaError"
    assert str(error) == (
        "unsupported JSON schema: schema.pattern is not a supported keyword (subset: type/oneOf/properties/"
        "required/additionalProperties/items/enum/const + annotations); schema.title must be a string"
    )
    with pytest.raises(JsonSchemaError) as missing:
        assert_supported_schema(None)
    assert str(missing.value) == "unsupported JSON schema: schema must be a schema object"


# --- registration's copy: checked while copied, the same verdict as the two steps ------------------------


def _two_steps(schema: Any) -> Any:
    """What ``supported_copy`` answers by the snapshot, then the walk on it: the copy, or the violations.

    The walk is run itself, not through the cache of its verdicts, which the one walk fills.
    """
    try:
        copy = snapshot_json(schema)
    except NotLosslessJson:
        return ("violations", list(_walk_violations(schema, "schema")))
    violations = list(_walk_violations(copy, "schema"))
    return ("violations", violations) if violations else ("copy", copy)


def _one_answer(schema: Any) -> Any:
    try:
        return ("copy", supported_copy(schema))
    except JsonSchemaError as error:
        return ("violations", list(error.violations))


def _laid_out(value: Any) -> Any:
    """``value`` with every container's exact type and key order spelled out, to compare copies exactly."""
    if type(value) in (dict, FrozenDict):
        return (type(value), [(key, _laid_out(item)) for key, item in value.items()])
    if type(value) in (list, FrozenList):
        return (type(value), [_laid_out(item) for item in value])
    return (type(value), value)


def _agrees(schema: Any) -> bool:
    """Whether ``supported_copy`` gives the two steps' answer, and the one walk accepts only what they accept."""
    expected_kind, expected = _two_steps(schema)
    kind, answer = _one_answer(schema)
    assert (kind, _laid_out(answer)) == (expected_kind, _laid_out(expected))
    try:
        accepted = _copy_supported(schema, 0)
    except (_Bail, RecursionError):
        return False
    assert expected_kind == "copy"
    assert _laid_out(accepted) == _laid_out(expected)
    return True


_NEAR_TYPES = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null", "oneOf", ""])
_NEAR_KEYS = st.sampled_from([*CONSTRAINT_KEYWORDS, *ANNOTATIONS, "minimum", "0", "7", "$ref"])


def _near_schemas() -> st.SearchStrategy[Any]:
    """Schema-like data: subset keywords and others holding schemas, lists, names, types and stray values."""
    leaves = st.one_of(
        st.fixed_dictionaries({}, optional={"type": _NEAR_TYPES}),
        st.fixed_dictionaries(
            {"type": _NEAR_TYPES, "enum": st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=1)))}
        ),
    )
    strays = st.one_of(_NEAR_TYPES, st.booleans(), st.none(), st.just(math.nan), st.just(2**60), st.floats(-2, 2))
    return st.recursive(
        leaves,
        lambda children: st.dictionaries(
            _NEAR_KEYS,
            st.one_of(
                children,
                st.lists(children, max_size=3),
                st.dictionaries(st.sampled_from(["a", "b", "0", "12", "01"]), children, max_size=3),
                st.lists(st.sampled_from(["a", "b", "0"]), max_size=3),
                strays,
            ),
            max_size=4,
        ),
        max_leaves=10,
    )


@settings(max_examples=2 * settings().max_examples, deadline=None)
@given(_near_schemas())
def test_registration_copy_agrees_with_the_two_steps(schema: Any) -> None:
    """``supported_copy`` checks while copying: the same copy (types, key order) or the same violations."""
    _agrees(schema)


@settings(max_examples=settings().max_examples, deadline=None)
@given(subset_schemas(disjoint_one_of=False))
def test_every_supported_schema_is_copied_in_one_walk(schema: dict[str, Any]) -> None:
    """A supported schema never needs the second walk (nesting within reach), as raw data or frozen."""
    assert _agrees(schema)
    assert _agrees(snapshot_json(schema))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
        {"type": "object", "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "oneOf"}}},
        {"type": "object", "properties": {"a": {"type": "object", "0": {}}}},
        {"type": "object", "properties": {"a": {1: "string"}}},
        {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 1]}}},
        {"type": "object", "properties": {"a": {"type": "string", "const": "y", "enum": ["x"]}}},
        {"type": "object", "properties": {"a": {"type": "integer", "const": 2.0}}},
        {"type": "string", "description": 1},
        {"type": "string", "default": math.nan},
        {"type": "array", "items": {"type": "string", "items": {}}},
        {"oneOf": [{}, {"type": "null"}], "type": "null"},
        {"oneOf": [{}, {"type": "null"}], "enum": [None]},
        {"oneOf": [{}]},
        {"enum": [1]},
        {"type": ["string"]},
        {"type": "object", "properties": {"9": {"type": "null"}, "b": {}, "1": {"type": "string"}}},
        {"type": "object", "properties": OrderedDict(a={"type": "string"})},
        {"type": "object", "properties": {"a": OrderedDict(type="string")}},
        {"type": "object", "properties": {"a": {"type": Opaque()}}},
        {"type": "object", "additionalProperties": 0},
        {"type": "object", "required": ("a",), "properties": {"a": {}}},
        {"type": "object", "required": ["a", 1], "properties": {"a": {}}},
        {"type": "object", "required": [Text("a")], "properties": {"a": {}}},
        {"type": "object", "properties": {"a": {"type": Text("string")}}},
        {"type": "object", "properties": {Text("a"): {"type": "string"}}},
        {"type": "object", "default": {"0": 1, "a": [2]}, "examples": [{"b": 1, "1": 2}]},
        {"type": "object", "properties": {"b": {"type": "string"}, "0": {"type": "null"}}},
        {"type": "object", "properties": {"b": {"type": "string"}, "9": {"type": "null"}}},
    ],
)
def test_registration_copy_agrees_on_each_rule(schema: Any) -> None:
    """Each rule the one walk checks, broken once (or kept), as the two steps judge it."""
    _agrees(schema)


def test_registration_copy_of_a_circular_or_deep_schema() -> None:
    """A cycle and a nesting past the one walk's reach take the two steps, with their answer."""
    circular: dict[str, Any] = {"type": "array"}
    circular["items"] = circular
    assert bounded_violations(circular) == ["schema.items is circular"]
    with pytest.raises(JsonSchemaError):
        supported_copy(circular)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(2_000):
        deep = {"type": "array", "items": deep}
    with pytest.raises(_Bail):
        _copy_supported(deep, 0)
    copy = supported_copy(deep)
    assert type(copy) is FrozenDict
    assert canonical_json(copy) == canonical_json(deep)


def _property_chain(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"k": schema}}
    return schema


def _one_of_chain(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"oneOf": [schema, {"type": "null"}]}
    return schema


def test_the_one_walk_goes_as_deep_as_its_bound_and_no_deeper() -> None:
    """A property and a oneOf branch are each two JSON levels toward the one walk's bound, an array's items one: a
    schema within it is copied in one walk, one a level deeper is left to the two steps, which copy it all the
    same."""
    assert _agrees(_property_chain(151))
    assert not _agrees(_property_chain(152))
    assert _agrees(_one_of_chain(150))
    assert not _agrees(_one_of_chain(151))
    assert _agrees(items_chain(300))
    assert not _agrees(items_chain(301))


@pytest.mark.parametrize(
    "schema",
    [{"type": "string"}, {"type": "integer", "enum": [1, 2], "description": "d"}, {"type": "null", "const": None}],
)
def test_a_plain_scalar_schema_is_checked_at_once(schema: dict[str, Any]) -> None:
    """A scalar schema of only a type, string annotations, enum and const has no child: the subset walk checks it
    on the spot instead of making it a step of its own."""
    from toolcanon._schema_subset import _child_step

    out: list[str] = []
    assert _child_step(schema, "schema", out, set()) is None
    assert out == []
    assert _child_step({"type": "object"}, "schema", out, set()) is not None


def _nested_list(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_the_one_walk_copies_annotation_values_400_levels_deep_and_no_deeper() -> None:
    """A default (or enum, const, examples) value 400 levels deep is copied in the one walk; 401 take the two steps."""
    _copy_supported({"default": _nested_list(400)}, 0)
    with pytest.raises(_Bail):
        _copy_supported({"default": _nested_list(401)}, 0)


def test_one_schema_checked_under_two_root_paths() -> None:
    """The memo of checked schemas keeps each root path's messages apart."""
    schema = {"type": "strng"}
    assert schema_violations(schema) == ["schema.type must be one of object/array/string/number/integer/boolean/null"]
    assert schema_violations(schema, "output") == [
        "output.type must be one of object/array/string/number/integer/boolean/null"
    ]


def test_supported_copy_takes_the_one_walk_up_to_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema of 300 levels of items is copied by the one walk, with no step of the two-step path."""
    import toolcanon._schema_subset as subset

    monkeypatch.setattr(subset, "snapshot_json", lambda value: pytest.fail("the two steps ran"))
    supported_copy(items_chain(300))
