"""The value-schema DSL: node kinds, property maps, compiled output and compile errors (digest 1.15-1.19)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from conftest import BoundedAncestors
from toolcanon._schema_dsl import _property_map, _value_node
from toolcanon._schema_walk import run_walk
from toolcanon.errors import JsonSchemaError
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.schema import compile_parameters, compile_value_schema

ANNOTATED = {"description": "d", "title": "t", "default": None, "examples": [1]}


def dsl_violations(spec: Any, *, parameters: bool = False) -> list[str]:
    """The violations a DSL compile raises (the test fails if it compiles)."""
    with pytest.raises(JsonSchemaError) as raised:
        compile_parameters(spec) if parameters else compile_value_schema(spec)
    assert raised.value.code == "UNSUPPORTED_SCHEMA"
    assert raised.value.message == "unsupported JSON schema: " + "; ".join(raised.value.violations)
    return list(raised.value.violations)


# --- digest 1.15: node kinds ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["string", "number", "integer", "boolean", "null"])
def test_scalar_kinds_compile_with_optional_enum_and_const(kind: str) -> None:
    """digest 1.15: scalar nodes take optional enum and const."""
    samples = {"string": "a", "number": 1.5, "integer": 2, "boolean": True, "null": None}
    sample = samples[kind]
    assert compile_value_schema({"type": kind}) == {"type": kind}
    assert compile_value_schema({"type": kind, "enum": [sample], "const": sample}) == {
        "type": kind,
        "enum": [sample],
        "const": sample,
    }


def test_array_takes_optional_items() -> None:
    """digest 1.15: array nodes take optional items."""
    assert compile_value_schema({"type": "array"}) == {"type": "array"}
    assert compile_value_schema({"type": "array", "items": {"type": "string"}}) == {
        "type": "array",
        "items": {"type": "string"},
    }


def test_object_requires_explicit_additional_properties() -> None:
    """digest 1.15: object nodes need a boolean additionalProperties; properties is a property map."""
    assert compile_value_schema({"type": "object", "additionalProperties": True}) == {
        "type": "object",
        "additionalProperties": True,
    }
    assert dsl_violations({"type": "object"}) == ["schema.additionalProperties must be explicitly true or false"]


def test_json_and_one_of_kinds() -> None:
    """digest 1.15: json is any lossless JSON; oneOf has no type and at least two branches."""
    assert compile_value_schema({"type": "json"}) == {}
    assert compile_value_schema({"oneOf": [{"type": "string"}, {"type": "null"}]}) == {
        "oneOf": [{"type": "string"}, {"type": "null"}]
    }


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "string"},
        {"type": "array"},
        {"type": "object", "additionalProperties": False},
        {"type": "json"},
        {"oneOf": [{"type": "string"}, {"type": "null"}]},
    ],
    ids=["scalar", "array", "object", "json", "oneOf"],
)
def test_every_node_kind_accepts_the_annotations(spec: dict[str, Any]) -> None:
    """digest 1.15: description, title, default and examples are allowed on every node."""
    compiled = compile_value_schema({**spec, **ANNOTATED})
    assert {key: compiled[key] for key in ANNOTATED} == ANNOTATED


# --- digest 1.16: property maps -----------------------------------------------------------------------------


def test_parameter_root_compiles_to_an_open_object() -> None:
    """digest 1.16: {type:'object', properties, required?} and no additionalProperties."""
    compiled = compile_parameters(
        {"path": {"type": "string", "required": True}, "limit": {"type": "integer"}, "all": {"type": "boolean"}}
    )
    assert compiled == {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}, "all": {"type": "boolean"}},
        "required": ["path"],
    }
    assert list(compiled) == ["type", "properties", "required"]


def test_required_is_emitted_only_when_a_property_is_required() -> None:
    """digest 1.16"""
    assert compile_parameters({"a": {"type": "string"}}) == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert compile_parameters({}) == {"type": "object", "properties": {}}


def test_required_lists_keys_in_map_order_with_ecmascript_key_order() -> None:
    """digest 1.16 + decisions 4: a map declaring "b","10","2" is handled as "2","10","b"."""
    spec = {name: {"type": "string", "required": True} for name in ("b", "10", "2")}
    compiled = compile_parameters(spec)
    assert list(compiled["properties"]) == ["2", "10", "b"]
    assert compiled["required"] == ["2", "10", "b"]
    nested = compile_value_schema({"type": "object", "additionalProperties": False, "properties": spec})
    assert list(nested["properties"]) == ["2", "10", "b"]
    assert nested["required"] == ["2", "10", "b"]


def test_only_true_is_accepted_for_required() -> None:
    """digest 1.16: required: true is the only accepted value (1 and "true" are not true)."""
    for bad in (False, 1, "true", None):
        assert dsl_violations({"a": {"type": "string", "required": bad}}, parameters=True) == [
            "parameters.a.required must be true when present"
        ]


def test_required_on_nested_property_maps() -> None:
    """digest 1.16: a nested object's property map also emits required."""
    compiled = compile_value_schema(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"x": {"type": "string", "required": True}, "y": {"type": "null"}},
        }
    )
    assert compiled["required"] == ["x"]
    assert "required" not in compiled["properties"]["x"]


# --- digest 1.17: compilation output ----------------------------------------------------------------------


def test_json_node_compiles_to_its_annotations_only() -> None:
    """digest 1.17"""
    assert compile_value_schema({"type": "json"}) == {}
    assert compile_value_schema({"type": "json", "description": "anything"}) == {"description": "anything"}


def test_compiled_key_order_per_node_kind() -> None:
    """digest 1.17: the key order of each kind's output (annotations in description/title/default/examples)."""
    annotations = {"examples": [1], "default": 1, "title": "t", "description": "d"}
    names = ["description", "title", "default", "examples"]
    one_of = compile_value_schema({**annotations, "oneOf": [{"type": "null"}, {"type": "string"}]})
    assert list(one_of) == ["oneOf", *names]
    obj = compile_value_schema(
        {
            "properties": {"a": {"type": "string", "required": True}},
            "additionalProperties": True,
            **annotations,
            "type": "object",
        }
    )
    assert list(obj) == ["type", *names, "additionalProperties", "properties", "required"]
    array = compile_value_schema({"items": {"type": "null"}, **annotations, "type": "array"})
    assert list(array) == ["type", *names, "items"]
    scalar = compile_value_schema({"const": 1, "enum": [1], **annotations, "type": "integer"})
    assert list(scalar) == ["type", *names, "enum", "const"]


def test_annotations_are_copied_only_when_present() -> None:
    """digest 1.17"""
    assert compile_value_schema({"type": "string", "title": "t"}) == {"type": "string", "title": "t"}


def test_a_property_named_proto_is_ordinary_data() -> None:
    """digest 1.17: a property literally named __proto__ is preserved."""
    compiled = compile_parameters({"__proto__": {"type": "string", "required": True}})
    assert compiled["properties"] == {"__proto__": {"type": "string"}}
    assert compiled["required"] == ["__proto__"]


def test_compiled_schema_is_frozen_and_detached() -> None:
    """digest 1.17 + decisions 9: the result is a frozen copy; annotation data is ordered like a snapshot."""
    default = {"b": 1, "1": 2}
    spec = {"type": "json", "default": default}
    compiled = compile_value_schema(spec)
    assert type(compiled) is FrozenDict
    assert type(compile_value_schema({"type": "array", "items": {"type": "null"}})["items"]) is FrozenDict
    assert type(compile_parameters({"a": {"type": "null", "required": True}})["required"]) is FrozenList
    default["c"] = 3
    assert compiled["default"] == {"1": 2, "b": 1}
    assert list(compiled["default"]) == ["1", "b"]


def test_frozen_and_plain_specs_compile_alike() -> None:
    """digest 1.17: a FrozenDict spec is a plain record."""
    spec = FrozenDict({"type": "array", "items": FrozenDict({"type": "string"})})
    assert compile_value_schema(spec) == {"type": "array", "items": {"type": "string"}}


# --- digest 1.18: DSL compile errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [None, "string", 1, ["type"], ("type", "string"), OrderedDict(type="string"), {1: "string"}],
    ids=["None", "str", "int", "list", "tuple", "dict-subclass", "non-string-key"],
)
def test_node_that_is_not_a_plain_record(spec: Any) -> None:
    """digest 1.18: <p> must be a value schema object."""
    assert dsl_violations(spec) == ["schema must be a value schema object"]


def test_property_node_that_is_not_a_plain_record() -> None:
    """digest 1.18: also per property."""
    assert dsl_violations({"a": "string"}, parameters=True) == ["parameters.a must be a value schema object"]
    assert dsl_violations({"type": "object", "additionalProperties": True, "properties": {"a": 1}}) == [
        "schema.properties.a must be a value schema object"
    ]


@pytest.mark.parametrize("spec", [None, [], "x", OrderedDict()], ids=["None", "list", "str", "dict-subclass"])
def test_property_map_that_is_not_a_record(spec: Any) -> None:
    """digest 1.18: <p> must be an object of value schemas."""
    assert dsl_violations(spec, parameters=True) == ["parameters must be an object of value schemas"]
    assert dsl_violations({"type": "object", "additionalProperties": True, "properties": spec}) == [
        "schema.properties must be an object of value schemas"
    ]


def bounded_violations(spec: Any, *, parameters: bool = False) -> list[str]:
    """The violations of a walk whose ancestor set fails past a few adds: a walk round a cycle fails, not hangs."""
    with pytest.raises(JsonSchemaError) as raised:
        if parameters:
            run_walk(_property_map(spec, "parameters", BoundedAncestors(4)))
        else:
            run_walk(_value_node(spec, "schema", False, BoundedAncestors(4)))
    return list(raised.value.violations)


def test_circular_node_and_map() -> None:
    """digest 1.18: the same record revisited on the current path is circular."""
    node: dict[str, Any] = {"type": "array"}
    node["items"] = node
    branchy: dict[str, Any] = {"oneOf": [{"type": "null"}]}
    branchy["oneOf"].append(branchy)
    properties: dict[str, Any] = {}
    properties["self"] = {"type": "object", "additionalProperties": True, "properties": properties}
    # the bounded walks come first: on a compiler that misses the cycle they fail where the public calls hang
    assert bounded_violations(node) == ["schema.items is circular"]
    assert bounded_violations(branchy) == ["schema.oneOf[1] is circular"]
    assert bounded_violations(properties, parameters=True) == ["parameters.self.properties is circular"]
    assert dsl_violations(node) == ["schema.items is circular"]
    assert dsl_violations(branchy) == ["schema.oneOf[1] is circular"]
    assert dsl_violations(properties, parameters=True) == ["parameters.self.properties is circular"]


def test_a_cycle_is_found_the_first_time_the_walk_comes_back() -> None:
    """digest 1.18: each record on the path is an ancestor, taken off again once compiled."""
    spec: dict[str, Any] = {"type": "array"}
    spec["items"] = {"oneOf": [{"type": "null"}, spec]}
    with pytest.raises(JsonSchemaError) as raised:
        run_walk(_value_node(spec, "schema", False, BoundedAncestors(3)))
    assert list(raised.value.violations) == ["schema.items.oneOf[1] is circular"]


def test_sibling_reuse_is_allowed() -> None:
    """digest 1.18: one record object used by two siblings is not circular."""
    shared = {"type": "string"}
    compiled = compile_parameters({"a": shared, "b": shared, "c": {"type": "array", "items": shared}})
    assert compiled["properties"] == {
        "a": {"type": "string"},
        "b": {"type": "string"},
        "c": {
            "type": "array",
            "items": {"type": "string"},
        },
    }


def test_a_property_map_shared_by_two_objects_is_not_circular() -> None:
    """digest 1.18: one property-map object used by two sibling object nodes is no cycle."""
    shared = {"x": {"type": "string"}}
    child = {"type": "object", "additionalProperties": True, "properties": shared}
    other = {"type": "object", "additionalProperties": True, "properties": shared}
    compiled = compile_value_schema(
        {"type": "object", "additionalProperties": True, "properties": {"a": child, "b": other}}
    )
    assert compiled["properties"]["a"]["properties"] == compiled["properties"]["b"]["properties"]


def test_unsupported_keys_per_node_kind() -> None:
    """digest 1.18: <p>.<key> is not supported by the value schema DSL, per kind vocabulary."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({"type": "string", "items": {}}, "schema.items"),
        ({"type": "string", "pattern": "x"}, "schema.pattern"),
        ({"type": "number", "properties": {}}, "schema.properties"),
        ({"type": "array", "enum": []}, "schema.enum"),
        ({"type": "array", "additionalProperties": True}, "schema.additionalProperties"),
        ({"type": "object", "additionalProperties": True, "items": {}}, "schema.items"),
        ({"type": "object", "additionalProperties": True, "const": {}}, "schema.const"),
        ({"type": "json", "enum": [1]}, "schema.enum"),
        ({"type": "json", "properties": {}}, "schema.properties"),
        ({"oneOf": [{"type": "null"}, {"type": "string"}], "enum": [None]}, "schema.enum"),
        ({"oneOf": [{"type": "null"}, {"type": "string"}], "items": {}}, "schema.items"),
        ({"type": "string", "required": True}, "schema.required"),
    ]
    for spec, key_path in cases:
        assert dsl_violations(spec) == [f"{key_path} is not supported by the value schema DSL"], spec


def test_required_is_rejected_outside_property_position() -> None:
    """digest 1.18: array items and oneOf branches are not property positions."""
    assert dsl_violations({"type": "array", "items": {"type": "string", "required": True}}) == [
        "schema.items.required is not supported by the value schema DSL"
    ]
    assert dsl_violations({"oneOf": [{"type": "string", "required": True}, {"type": "null"}]}) == [
        "schema.oneOf[0].required is not supported by the value schema DSL"
    ]


def test_required_is_accepted_on_every_kind_in_property_position() -> None:
    """digest 1.18: the vocabulary includes required in property position, for every kind."""
    compiled = compile_parameters(
        {
            "j": {"type": "json", "required": True},
            "o": {"oneOf": [{"type": "string"}, {"type": "null"}], "required": True},
            "a": {"type": "array", "required": True},
            "ob": {"type": "object", "additionalProperties": True, "required": True},
        }
    )
    assert compiled["required"] == ["j", "o", "a", "ob"]


def test_first_unsupported_key_in_key_order() -> None:
    """digest 1.18 + decisions 4: the vocabulary check stops at the first bad key, in ECMAScript key order."""
    assert dsl_violations({"type": "string", "zz": 1, "7": 1, "aa": 1}) == [
        "schema.7 is not supported by the value schema DSL"
    ]


def test_one_of_with_type() -> None:
    """digest 1.18: <p> cannot declare both type and oneOf."""
    assert dsl_violations({"type": "json", "oneOf": [{"type": "null"}, {"type": "string"}]}) == [
        "schema cannot declare both type and oneOf"
    ]


@pytest.mark.parametrize("branches", [None, {"0": {"type": "null"}}, ({"type": "null"}, {"type": "string"})])
def test_one_of_that_is_not_a_plain_array(branches: Any) -> None:
    """digest 1.18: <p>.oneOf must be an array of at least two value schemas."""
    assert dsl_violations({"oneOf": branches}) == ["schema.oneOf must be an array of at least two value schemas"]


def test_short_one_of_passes_the_dsl_and_fails_the_raw_check() -> None:
    """digest 1.18: a length of 1 (or 0) passes the DSL; the raw check rejects it."""
    assert dsl_violations({"oneOf": [{"type": "null"}]}) == ["schema.oneOf must be an array of at least two schemas"]
    assert dsl_violations({"oneOf": []}) == ["schema.oneOf must be an array of at least two schemas"]


@pytest.mark.parametrize("value", [None, 0, "false", [True]], ids=repr)
def test_object_without_boolean_additional_properties(value: Any) -> None:
    """digest 1.18: <p>.additionalProperties must be explicitly true or false."""
    assert dsl_violations({"type": "object", "additionalProperties": value}) == [
        "schema.additionalProperties must be explicitly true or false"
    ]


@pytest.mark.parametrize("enum", [None, "ab", ("a", "b"), {"0": "a"}], ids=repr)
def test_scalar_enum_that_is_not_a_plain_array(enum: Any) -> None:
    """digest 1.18: <p>.enum must be a non-empty array of scalar values."""
    assert dsl_violations({"type": "string", "enum": enum}) == [
        "schema.enum must be a non-empty array of scalar values"
    ]


def test_empty_or_mistyped_enum_is_left_to_the_raw_check() -> None:
    """digest 1.18: emptiness and type mismatch are caught by the raw check."""
    assert dsl_violations({"type": "string", "enum": []}) == ["schema.enum must be a non-empty array of string values"]


@pytest.mark.parametrize(
    "spec",
    [{}, {"type": None}, {"type": "float"}, {"type": ["string"]}, {"type": "oneOf"}, {"description": "x"}],
    ids=repr,
)
def test_missing_or_unknown_type(spec: dict[str, Any]) -> None:
    """digest 1.18: <p>.type must be string/number/integer/boolean/null/array/object/json, or use oneOf."""
    assert dsl_violations(spec) == [
        "schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    ]


def test_child_paths() -> None:
    """digest 1.18: <p>.properties.<key>, parameters.<key>, <p>.items, <p>.oneOf[<i>]."""
    bad = {"type": "bogus"}
    message = ".type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    assert dsl_violations({"x": bad}, parameters=True) == ["parameters.x" + message]
    assert dsl_violations({"type": "object", "additionalProperties": True, "properties": {"x": bad}}) == [
        "schema.properties.x" + message
    ]
    assert dsl_violations({"type": "array", "items": bad}) == ["schema.items" + message]
    assert dsl_violations({"oneOf": [{"type": "null"}, bad]}) == ["schema.oneOf[1]" + message]
    deep = {
        "type": "array",
        "items": {
            "oneOf": [
                {"type": "object", "additionalProperties": True, "properties": {"k": {"type": "array", "items": bad}}},
                {"type": "null"},
            ]
        },
    }
    assert dsl_violations(deep) == ["schema.items.oneOf[0].properties.k.items" + message]


def test_custom_root_path() -> None:
    """digest 1.18: paths start at the given root."""
    with pytest.raises(JsonSchemaError) as raised:
        compile_value_schema({"type": "object"}, "output.schema")
    assert raised.value.violations == ("output.schema.additionalProperties must be explicitly true or false",)


def test_first_problem_depth_first_in_declaration_order() -> None:
    """digest 1.18: a single violation, the first met depth-first in declaration order."""
    spec = {
        "a": {"type": "array", "items": {"type": "object"}},
        "b": {"type": "bogus"},
    }
    assert dsl_violations(spec, parameters=True) == [
        "parameters.a.items.additionalProperties must be explicitly true or false"
    ]
    # Within a node: vocabulary before additionalProperties before the property map.
    assert dsl_violations({"type": "object", "properties": 1, "x": 1}) == [
        "schema.x is not supported by the value schema DSL"
    ]
    assert dsl_violations({"type": "object", "properties": 1}) == [
        "schema.additionalProperties must be explicitly true or false"
    ]
    # The required check of a property comes before its node check.
    assert dsl_violations({"a": {"type": "bogus", "required": False}}, parameters=True) == [
        "parameters.a.required must be true when present"
    ]
    # oneOf: vocabulary, then type-and-oneOf, then the array check.
    assert dsl_violations({"oneOf": 1, "type": "string", "x": 1}) == [
        "schema.x is not supported by the value schema DSL"
    ]
    assert dsl_violations({"oneOf": 1, "type": "string"}) == ["schema cannot declare both type and oneOf"]


def test_deep_specs_compile_without_recursion_error() -> None:
    """digest 1.18: the walk is iterative, so a 3,000-deep spec compiles (and a deep error is still found)."""
    spec: dict[str, Any] = {"type": "string"}
    for _ in range(3000):
        spec = {"type": "array", "items": spec}
    compiled = compile_value_schema(spec)
    depth = 0
    while "items" in compiled:
        compiled = compiled["items"]
        depth += 1
    assert depth == 3000
    bad: dict[str, Any] = {"type": "bogus"}
    for _ in range(3000):
        bad = {"oneOf": [{"type": "null"}, bad]}
    (violation,) = dsl_violations(bad)
    assert violation.startswith("schema" + ".oneOf[1]" * 3000 + ".type must be")


# --- digest 1.19: the raw-subset assertion after compiling ---------------------------------------------


def test_raw_check_runs_after_compiling() -> None:
    """digest 1.19: {type:'number', enum:['1']} passes the DSL but not the raw check."""
    assert dsl_violations({"type": "number", "enum": ["1"]}) == [
        "schema.enum must be a non-empty array of number values"
    ]


def test_raw_check_reports_several_violations_at_once() -> None:
    """digest 1.19: unlike the DSL pass, the raw check reports every violation."""
    spec = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "integer", "enum": [1.5], "const": "x"},
            "b": {"type": "json", "description": 3, "default": float("nan")},
            "c": {"oneOf": [{"type": "null"}]},
        },
    }
    assert dsl_violations(spec) == [
        "schema.properties.a.enum must be a non-empty array of integer values",
        "schema.properties.a.const must be a integer value",
        "schema.properties.b.default annotation must be lossless JSON data",
        "schema.properties.b.description must be a string",
        "schema.properties.c.oneOf must be an array of at least two schemas",
    ]


def test_raw_check_of_parameters_reports_from_the_schema_root() -> None:
    """digest 1.19: the compiled parameter object is checked as the original's assertSupportedJsonSchema checks
    it, from the root ``schema``, every violation; a DSL problem still reports from ``parameters``."""
    spec = {
        "x": {"type": "string", "const": 1},
        "outer": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"inner": {"type": "integer", "enum": ["a"]}, "choice": {"oneOf": [{"type": "null"}]}},
        },
    }
    assert dsl_violations(spec, parameters=True) == [
        "schema.properties.x.const must be a string value",
        "schema.properties.outer.properties.inner.enum must be a non-empty array of integer values",
        "schema.properties.outer.properties.choice.oneOf must be an array of at least two schemas",
    ]
    assert dsl_violations({"x": {"type": "nope"}}, parameters=True) == [
        "parameters.x.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    ]


def test_const_not_in_enum_is_caught_by_the_raw_check() -> None:
    """digest 1.19"""
    assert dsl_violations({"type": "string", "enum": ["a"], "const": "b"}) == [
        "schema.const must be one of schema.enum when both are declared"
    ]
