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
from toolcanon._text_cache import TextKeyedCache, remember_lossless_text
from toolcanon.errors import JsonSchemaError
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import (
    JsonValue,
    NotLosslessJson,
    _Bail,
    _fast_copy,
    _reordered,
    es_key_order,
    is_array_index,
    snapshot_json,
)

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
    so the copy's text, remembered by identity, is the one key its compiled forms are cached under. A schema
    that breaks no rule is checked while it is copied, in one walk (:func:`_copy_supported`).
    """
    try:
        copy = without_collector(_copy_supported, schema, 0)
    except (_Bail, RecursionError):
        pass  # a violation, something the one walk does not take, or a schema too deep for it: the two steps
    else:
        text = remember_lossless_text(copy)
        if text is not None:
            _CHECKED.put(text, (), path)
        return copy
    try:
        copy = without_collector(snapshot_json, schema)
    except NotLosslessJson:
        # a schema that is not lossless JSON breaks a rule of the subset, which the walk names
        assert_supported_schema(schema, path)
        raise AssertionError("a schema that is not lossless JSON passed the subset check") from None
    assert_supported_schema(copy, path)
    return copy


# Schema objects nested deeper than this many JSON levels (a property is two) are copied and checked in two steps.
# Well inside the recursive lossless check's reach, so the copy's text is the one any copy of it is given.
_COPY_DEPTH: Final = 300
_NOTHING: Final = frozenset[str]()
# What each kind of schema object may hold and break no rule: annotations, and its type's shape keywords.
_ANNOTATION_KEYS: Final = frozenset(ANNOTATIONS)
_ALLOWED_KEYS: Final[dict[str | None, frozenset[str]]] = {
    **{name: _ANNOTATION_KEYS | {"type"} | allowed for name, allowed in _PLACEMENT.items()},
    None: _ANNOTATION_KEYS,  # neither type nor oneOf
}
_ONE_OF_KEYS: Final = _ANNOTATION_KEYS | {"oneOf"}
# The copy of a property that is a scalar type alone, one per type: frozen, so every property may share it.
_TYPE_ALONE: Final = {name: FrozenDict({"type": name}) for name in _SCALAR_TYPE_NAMES}


def _copy_supported(node: Any, depth: int) -> FrozenDict:
    """The frozen copy of a schema object that breaks no rule of the subset, made and checked in one walk.

    It raises :class:`_Bail` at the first thing it does not take (any violation, a cycle, a schema nested deeper
    than it goes); the copy and the walk that names every violation then decide. Whatever it returns is what
    ``snapshot_json`` returns for ``node``, and the subset walk finds no violation in it.
    """
    kind = type(node)
    if kind is not dict and kind is not FrozenDict:
        raise _Bail
    if depth > _COPY_DEPTH:
        raise _Bail  # deep, or circular
    copied: dict[str, Any] = {}
    for key, item in node.items():
        if type(key) is not str:
            raise _Bail
        if key in {"type", "description", "title"}:
            if type(item) is not str:
                raise _Bail
            copied[key] = item
        elif key == "properties":
            copied[key] = _copy_properties(item, depth + 1)
        elif key == "items":
            copied[key] = _copy_supported(item, depth + 1)
        elif key == "required":
            kind = type(item)
            if kind is not list and kind is not FrozenList:
                raise _Bail
            for name in item:
                if type(name) is not str:
                    raise _Bail
            copied[key] = FrozenList(item)
        elif key == "oneOf":
            kind = type(item)
            if (kind is not list and kind is not FrozenList) or len(item) < 2:
                raise _Bail
            copied[key] = FrozenList([_copy_supported(branch, depth + 2) for branch in item])
        elif key == "additionalProperties":
            if type(item) is not bool:
                raise _Bail
            copied[key] = item
        elif key in {"enum", "const", "default", "examples"}:
            copied[key] = _fast_copy(item, depth + 1)
        else:
            raise _Bail  # not a keyword of the subset
    type_name = copied.get("type")
    allowed = _ONE_OF_KEYS if "oneOf" in copied else _ALLOWED_KEYS.get(type_name)  # type beside oneOf: a violation
    if allowed is None or not copied.keys() <= allowed:
        raise _Bail
    if type_name == "object":
        if "required" in copied:
            declared = copied.get("properties", _NOTHING)
            for name in copied["required"]:
                if name not in declared:
                    raise _Bail
    elif type_name in _SCALAR_TYPE_NAMES and len(copied) > 1:
        _check_scalar_copy(copied, type_name)
    return FrozenDict(copied)


def _copy_properties(declared: Any, depth: int) -> FrozenDict:
    kind = type(declared)
    if kind is not dict and kind is not FrozenDict:
        raise _Bail
    copied: dict[str, Any] = {}
    reorder = False
    depth += 1
    for key, item in declared.items():
        if type(key) is not str:
            raise _Bail
        if key and "0" <= key[0] <= "9" and is_array_index(key):
            reorder = True
        kind = type(item)
        if (kind is dict or kind is FrozenDict) and len(item) == 1:
            # the commonest property, a scalar type alone, copied here (a call each would cost a third more)
            for only, type_name in item.items():
                if type(only) is str and only == "type" and type(type_name) is str and type_name in _SCALAR_TYPE_NAMES:
                    copied[key] = _TYPE_ALONE[type_name]
                else:
                    copied[key] = _copy_supported(item, depth)
        else:
            copied[key] = _copy_supported(item, depth)
    return _reordered(copied) if reorder else FrozenDict(copied)


def _check_scalar_copy(copied: dict[str, Any], type_name: str) -> None:
    """Raise :class:`_Bail` when a scalar schema's ``enum`` or ``const`` breaks a rule (see :func:`_check_scalar`)."""
    violations: list[str] = []
    _check_scalar(copied, type_name, "schema", violations)
    if violations:
        raise _Bail


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
