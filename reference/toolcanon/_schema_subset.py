"""The raw JSON Schema subset: every violation of a schema, in the contract's order (digest 1.20-1.24)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon._collector import without_collector
from toolcanon._schema_kinds import (
    ANNOTATIONS,
    CONSTRAINT_KEYWORDS,
    RAW_TYPES,
    SHAPE_KEYWORDS,
    is_lossless,
    is_plain_array,
    is_record,
    matches_scalar_type,
)
from toolcanon._schema_paths import SchemaPath, schema_path_text
from toolcanon._schema_walk import Step, run_walk
from toolcanon._text_cache import TextKeyedCache
from toolcanon.errors import JsonSchemaError
from toolcanon.frozen import FrozenDict
from toolcanon.jsonvalue import JsonValue, NotLosslessJson, es_key_order, snapshot_json

__all__ = ["assert_object_schema", "assert_supported_schema", "schema_violations", "supported_copy"]

_UNSUPPORTED_KEYWORD: Final = (
    "is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const"
    " + annotations)"
)
_TYPE_LIST: Final = "/".join(RAW_TYPES)
# Which shape keywords each type accepts; the others are "not supported on type".
_PLACEMENT: Final = {
    "object": frozenset(("properties", "required", "additionalProperties")),
    "array": frozenset(("items",)),
    **{name: frozenset(("enum", "const")) for name in ("string", "number", "integer", "boolean", "null")},
}
_SCALAR_TYPE_NAMES: Final = frozenset(("string", "number", "integer", "boolean", "null"))
_LEAF_ONLY_KEYS: Final = frozenset(("enum", "const"))
_STRING_ANNOTATIONS: Final = frozenset(("description", "title"))


def schema_violations(schema: object, path: str = "schema") -> list[str]:
    """Every way ``schema`` leaves the supported subset, in the contract's order; empty when it is supported.

    Total: never raises, for any Python object. Iterative: nesting depth is bounded by memory.
    """
    return list(_CHECKED.get(schema, lambda data: without_collector(_walk_violations, data, path), path))


def _walk_violations(schema: object, path: str) -> tuple[str, ...]:
    violations: list[str] = []
    run_walk(_check_node(schema, path, violations, set()))
    return tuple(violations)


_CHECKED: TextKeyedCache[tuple[str, ...]] = TextKeyedCache()


def assert_supported_schema(schema: object, path: str = "schema") -> None:
    """Raise :class:`JsonSchemaError` listing every violation when ``schema`` is outside the subset."""
    violations = schema_violations(schema, path)
    if violations:
        raise JsonSchemaError(violations)


def supported_copy(schema: object, path: str = "schema") -> JsonValue:
    """The frozen copy of a supported schema; raises :class:`JsonSchemaError` like :func:`assert_supported_schema`.

    The subset is checked on the copy (the same violations: the walk reads keys in ECMAScript order either way),
    so the copy's text, remembered by identity, is the one key its compiled forms are cached under.
    """
    try:
        copy = without_collector(snapshot_json, schema)
    except NotLosslessJson:
        # a schema that is not lossless JSON breaks a rule of the subset, which the walk names
        assert_supported_schema(schema, path)
        raise AssertionError("a schema that is not lossless JSON passed the subset check") from None
    assert_supported_schema(copy, path)
    return copy


def assert_object_schema(schema: object) -> None:
    """Like :func:`assert_supported_schema`, and also require a root ``type: "object"`` (digest 1.24)."""
    violations = schema_violations(schema)
    root_type = schema.get("type") if is_record(schema) else None
    if type(root_type) is not str or root_type != "object":
        violations.append('schema.type must be "object" (structured output is object-rooted)')
    if violations:
        raise JsonSchemaError(violations)


def _check_node(node: object, path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None]:
    if not is_record(node):
        out.append(f"{schema_path_text(path)} must be a schema object")
        return
    if id(node) in ancestors:
        out.append(f"{schema_path_text(path)} is circular")
        return
    ancestors.add(id(node))
    yield from _check_record(node, path, out, ancestors)
    ancestors.discard(id(node))


def _child_step(node: object, path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None] | None:
    """Check a plain scalar schema at once (nothing in it can nest); any other schema is a step to walk."""
    type_name = _plain_scalar_type(node)
    if type_name is None:
        return _check_node(node, path, out, ancestors)
    if len(node) > 1:  # type: ignore[arg-type]
        _check_scalar(node, type_name, path, out)  # type: ignore[arg-type]
    return None


def _plain_scalar_type(node: object) -> str | None:
    """The type of a schema object holding only a scalar ``type``, string annotations, ``enum`` and ``const``.

    Such a schema can break no rule but those of its ``enum`` and ``const`` (every other rule holds for it), and
    it has no child to walk. Any other object is ``None``: the full walk checks it.
    """
    kind = type(node)
    if kind is not dict and kind is not FrozenDict:
        return None
    type_name: object = None
    for key, item in node.items():  # type: ignore[attr-defined]
        if type(key) is not str:
            return None
        if key == "type":
            type_name = item
        elif key not in _LEAF_ONLY_KEYS and (key not in _STRING_ANNOTATIONS or type(item) is not str):
            return None
    if type(type_name) is not str or type_name not in _SCALAR_TYPE_NAMES:
        return None
    return type_name


def _check_record(node: dict[str, Any], path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None]:
    for key in es_key_order(list(node)):
        if key in CONSTRAINT_KEYWORDS:
            continue
        if key in ANNOTATIONS:
            if not is_lossless(node[key]):
                out.append(f"{schema_path_text(path)}.{key} annotation must be lossless JSON data")
        else:
            out.append(f"{schema_path_text(path)}.{key} {_UNSUPPORTED_KEYWORD}")
    for key in ("description", "title"):
        if key in node and type(node[key]) is not str:
            out.append(f"{schema_path_text(path)}.{key} must be a string")

    has_type = "type" in node
    has_one_of = "oneOf" in node
    if has_type and has_one_of:
        out.append(f"{schema_path_text(path)} cannot declare both type and oneOf")
    elif has_one_of:
        yield from _check_one_of(node, path, out, ancestors)
    elif has_type:
        yield from _check_typed(node, path, out, ancestors)
    else:
        for key in SHAPE_KEYWORDS:
            if key in node:
                out.append(f"{schema_path_text(path)}.{key} requires type or oneOf")


def _check_one_of(node: dict[str, Any], path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None]:
    branches = node["oneOf"]
    if not is_plain_array(branches) or len(branches) < 2:
        # As in the original, a oneOf of fewer than two schemas is this one violation: its branches are not walked.
        out.append(f"{schema_path_text(path)}.oneOf must be an array of at least two schemas")
    else:
        for index, branch in enumerate(list(branches)):
            step = _child_step(branch, (path, f".oneOf[{index}]"), out, ancestors)
            if step is not None:
                yield step
    for key in SHAPE_KEYWORDS:
        if key in node:
            out.append(f"{schema_path_text(path)}.{key} is not supported beside oneOf")


def _check_typed(node: dict[str, Any], path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None]:
    type_name = node["type"]
    if is_plain_array(type_name):
        out.append(f"{schema_path_text(path)}.type must be a single type string (type arrays are not supported)")
        return
    if type(type_name) is not str or type_name not in _PLACEMENT:
        out.append(f"{schema_path_text(path)}.type must be one of {_TYPE_LIST}")
        return
    allowed = _PLACEMENT[type_name]
    for key in SHAPE_KEYWORDS:
        if key in node and key not in allowed:
            out.append(f'{schema_path_text(path)}.{key} is not supported on type "{type_name}"')
    if type_name == "object":
        yield from _check_object(node, path, out, ancestors)
    elif type_name == "array":
        if "items" in node:
            step = _child_step(node["items"], (path, ".items"), out, ancestors)
            if step is not None:
                yield step
    else:
        _check_scalar(node, type_name, path, out)


def _check_object(node: dict[str, Any], path: SchemaPath, out: list[str], ancestors: set[int]) -> Step[None]:
    properties: dict[str, Any] = {}
    if "properties" in node:
        declared = node["properties"]
        if is_record(declared):
            properties = declared
            for key in es_key_order(list(declared)):
                step = _child_step(declared[key], (path, f".properties.{key}"), out, ancestors)
                if step is not None:
                    yield step
        else:
            out.append(f"{schema_path_text(path)}.properties must be an object of schemas")
    if "required" in node:
        required = node["required"]
        if not is_plain_array(required) or any(type(name) is not str for name in required):
            out.append(f"{schema_path_text(path)}.required must be an array of strings")
        else:
            for name in required:
                if name not in properties:
                    out.append(f'{schema_path_text(path)}.required names "{name}" which is not in properties')
    if "additionalProperties" in node and type(node["additionalProperties"]) is not bool:
        out.append(f"{schema_path_text(path)}.additionalProperties must be a boolean")


def _check_scalar(node: dict[str, Any], type_name: str, path: SchemaPath, out: list[str]) -> None:
    enum_ok = False
    if "enum" in node:
        enum = node["enum"]
        if is_plain_array(enum) and enum and all(matches_scalar_type(type_name, entry) for entry in enum):
            enum_ok = True
        else:
            out.append(f"{schema_path_text(path)}.enum must be a non-empty array of {type_name} values")
    const_ok = False
    if "const" in node:
        if matches_scalar_type(type_name, node["const"]):
            const_ok = True
        else:
            out.append(f"{schema_path_text(path)}.const must be a {type_name} value")
    if enum_ok and const_ok and node["const"] not in node["enum"]:
        text = schema_path_text(path)
        out.append(f"{text}.const must be one of {text}.enum when both are declared")
