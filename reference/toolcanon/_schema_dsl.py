"""The value-schema DSL: compile an author's value or parameter schema to raw JSON Schema (digest 1.15-19)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon._schema_kinds import ANNOTATIONS, SCALAR_TYPES, is_plain_array, is_record
from toolcanon._schema_paths import SchemaPath, schema_path_text
from toolcanon._schema_subset import schema_violations
from toolcanon._schema_walk import Step, run_walk
from toolcanon.errors import JsonSchemaError
from toolcanon.jsonvalue import JsonValue, es_key_order, snapshot_json

__all__ = ["compile_parameters", "compile_value_schema"]

_ANNOTATIONS: Final = frozenset(ANNOTATIONS)
# The keys each node kind accepts besides the annotations (and ``required`` in property position).
_ONE_OF_KEYS: Final = frozenset(("oneOf", "type"))
_JSON_KEYS: Final = frozenset(("type",))
_OBJECT_KEYS: Final = frozenset(("type", "properties", "additionalProperties"))
_ARRAY_KEYS: Final = frozenset(("type", "items"))
_SCALAR_KEYS: Final = frozenset(("type", "enum", "const"))
_SCALARS: Final = frozenset(SCALAR_TYPES)


def compile_value_schema(spec: object, path: str = "schema") -> JsonValue:
    """Compile a DSL value node into a frozen raw JSON Schema, then assert the raw subset on the result.

    Raises :class:`JsonSchemaError`: with one violation for the first DSL problem (depth-first, declaration
    order, from ``path``), or with every raw-subset violation of the compiled schema, from the root ``schema``
    (digest 1.18-1.19).
    """
    compiled = run_walk(_value_node(spec, path, False, set()))
    return _checked(compiled)


def compile_parameters(spec: object, path: str = "parameters") -> JsonValue:
    """Compile a DSL property map into ``{type: "object", properties, required?}`` (open, digest 1.16).

    Raises :class:`JsonSchemaError` like :func:`compile_value_schema`: a DSL problem from ``path``, a raw-subset
    violation of the compiled object from the root ``schema`` (``schema.properties.<key>…``). Returns a frozen
    schema.
    """
    properties, required = run_walk(_property_map(spec, path, set()))
    compiled: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        compiled["required"] = required
    return _checked(compiled)


def _checked(compiled: dict[str, Any]) -> JsonValue:
    # The raw check is the original's assertSupportedJsonSchema, whose paths start at `schema` whatever compiled.
    violations = schema_violations(compiled, "schema")
    if violations:
        raise JsonSchemaError(violations)
    return snapshot_json(compiled)


def _fail(violation: str) -> JsonSchemaError:
    return JsonSchemaError([violation])


def _property_map(spec: object, path: SchemaPath, ancestors: set[int]) -> Step[tuple[dict[str, Any], list[str]]]:
    if not is_record(spec):
        raise _fail(f"{schema_path_text(path)} must be an object of value schemas")
    if id(spec) in ancestors:
        raise _fail(f"{schema_path_text(path)} is circular")
    ancestors.add(id(spec))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key in es_key_order(list(spec)):
        child_path = (path, f".{key}")
        node = spec[key]
        if not is_record(node):
            raise _fail(f"{schema_path_text(child_path)} must be a value schema object")
        is_required = "required" in node
        if is_required and node["required"] is not True:
            raise _fail(f"{schema_path_text(child_path)}.required must be true when present")
        properties[key] = yield _value_node(node, child_path, True, ancestors)
        if is_required:
            required.append(key)
    ancestors.discard(id(spec))
    return properties, required


def _value_node(spec: object, path: SchemaPath, in_property: bool, ancestors: set[int]) -> Step[dict[str, Any]]:
    if not is_record(spec):
        raise _fail(f"{schema_path_text(path)} must be a value schema object")
    if id(spec) in ancestors:
        raise _fail(f"{schema_path_text(path)} is circular")
    ancestors.add(id(spec))
    if "oneOf" in spec:
        compiled = yield from _one_of_node(spec, path, in_property, ancestors)
    else:
        compiled = yield from _typed_node(spec, path, in_property, ancestors)
    ancestors.discard(id(spec))
    return compiled


def _one_of_node(
    spec: dict[str, Any], path: SchemaPath, in_property: bool, ancestors: set[int]
) -> Step[dict[str, Any]]:
    _check_vocabulary(spec, path, _ONE_OF_KEYS, in_property)
    if "type" in spec:
        raise _fail(f"{schema_path_text(path)} cannot declare both type and oneOf")
    branches = spec["oneOf"]
    if not is_plain_array(branches):
        raise _fail(f"{schema_path_text(path)}.oneOf must be an array of at least two value schemas")
    compiled_branches = []
    for index, branch in enumerate(list(branches)):
        compiled_branches.append((yield _value_node(branch, (path, f".oneOf[{index}]"), False, ancestors)))
    return {"oneOf": compiled_branches, **_annotations(spec)}


def _typed_node(spec: dict[str, Any], path: SchemaPath, in_property: bool, ancestors: set[int]) -> Step[dict[str, Any]]:
    kind = spec.get("type")
    if type(kind) is not str:
        kind = None
    if kind == "json":
        _check_vocabulary(spec, path, _JSON_KEYS, in_property)
        return _annotations(spec)
    if kind == "object":
        _check_vocabulary(spec, path, _OBJECT_KEYS, in_property)
        additional = spec.get("additionalProperties")
        if type(additional) is not bool:
            raise _fail(f"{schema_path_text(path)}.additionalProperties must be explicitly true or false")
        compiled: dict[str, Any] = {
            "type": "object",
            **_annotations(spec),
            "additionalProperties": additional,
        }
        if "properties" in spec:
            properties, required = yield _property_map(spec["properties"], (path, ".properties"), ancestors)
            compiled["properties"] = properties
            if required:
                compiled["required"] = required
        return compiled
    if kind == "array":
        _check_vocabulary(spec, path, _ARRAY_KEYS, in_property)
        compiled = {"type": "array", **_annotations(spec)}
        if "items" in spec:
            compiled["items"] = yield _value_node(spec["items"], (path, ".items"), False, ancestors)
        return compiled
    if kind in _SCALARS:
        _check_vocabulary(spec, path, _SCALAR_KEYS, in_property)
        compiled = {"type": kind, **_annotations(spec)}
        if "enum" in spec:
            enum = spec["enum"]
            if not is_plain_array(enum):
                raise _fail(f"{schema_path_text(path)}.enum must be a non-empty array of scalar values")
            compiled["enum"] = list(enum)
        if "const" in spec:
            compiled["const"] = spec["const"]
        return compiled
    raise _fail(
        f"{schema_path_text(path)}.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
    )


def _check_vocabulary(spec: dict[str, Any], path: SchemaPath, allowed: frozenset[str], in_property: bool) -> None:
    for key in es_key_order(list(spec)):
        if key in allowed or key in _ANNOTATIONS or (in_property and key == "required"):
            continue
        raise _fail(f"{schema_path_text(path)}.{key} is not supported by the value schema DSL")


def _annotations(spec: dict[str, Any]) -> dict[str, Any]:
    return {key: spec[key] for key in ANNOTATIONS if key in spec}
