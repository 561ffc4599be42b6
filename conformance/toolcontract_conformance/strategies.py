"""Hypothesis strategies for lossless JSON values, schemas of the supported subset, and values valid for them.

Reusable by implementers and renderer authors (``pip install hypothesis``). Every strategy is a function that
returns a :class:`~hypothesis.strategies.SearchStrategy` (built once and cached where it takes no schema);
generated values are plain ``dict``/``list`` data.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from hypothesis import strategies as st

from toolcontract.jsonvalue import MAX_SAFE_INTEGER, JsonValue
from toolcontract.schema import compile_validator

__all__ = [
    "finite_floats",
    "json_strings",
    "lossless_values",
    "object_keys",
    "safe_integers",
    "subset_schemas",
    "values_for",
]

SearchStrategy = st.SearchStrategy

# Strings that exercise the canonical writer and key ordering: escapes, astral pairs, lone surrogates.
_SPECIAL_STRINGS: Final = ("", "a", "😀", "\ud800", "\udc00x", 'quote"', "back\\", "\u2028", "\x00", "名前", "x y")
_SPECIAL_CHARS: Final = ("a", "é", "😀", "\ud800", "\udfff", '"', "\\", "\n", "\u2028", "\x7f", "\x00")
# Keys whose ECMAScript order differs from insertion order, and near-misses that are not array indices.
_INDEX_LIKE_KEYS: Final = ("0", "1", "2", "10", "4294967294", "4294967295", "01", "-1", "1.5", "1e3", " 1")
_ORDINARY_KEYS: Final = ("a", "b", "z", "__proto__", "toString", "constructor", "x y", 'quote"', "名前", "😀", "")
_SCALAR_TYPES: Final = ("string", "number", "integer", "boolean", "null")


@cache
def safe_integers() -> SearchStrategy[int]:
    """Integers in the I-JSON safe range ``±(2**53-1)``, the only ints that are lossless JSON."""
    return st.one_of(
        st.integers(-1000, 1000),
        st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        st.sampled_from((MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER)),
    )


@cache
def finite_floats() -> SearchStrategy[float]:
    """Finite floats, never ``-0.0`` (integral ones such as ``2.0`` and ``1e300`` included)."""
    return st.floats(allow_nan=False, allow_infinity=False).map(lambda number: 0.0 if number == 0 else number)


@cache
def json_strings() -> SearchStrategy[str]:
    """Any strings, weighted towards astral characters, lone surrogates and characters JSON must escape."""
    return st.one_of(
        st.sampled_from(_SPECIAL_STRINGS),
        st.text(st.sampled_from(_SPECIAL_CHARS), max_size=6),
        st.text(st.characters(exclude_categories=()), max_size=8),
    )


@cache
def object_keys() -> SearchStrategy[str]:
    """Object keys: array-index-like keys (``"10"``, ``"2"``), near-misses (``"01"``, ``"-1"``) and ordinary ones."""
    return st.one_of(
        st.sampled_from(_INDEX_LIKE_KEYS),
        st.sampled_from(_ORDINARY_KEYS),
        st.integers(0, 2**32).map(str),
        json_strings(),
    )


@cache
def lossless_values(max_leaves: int = 20) -> SearchStrategy[JsonValue]:
    """Lossless JSON values: ``None``, booleans, safe ints, finite floats (not ``-0.0``), strings with astral
    characters and lone surrogates, and nested lists and dicts whose keys mix index-like and ordinary keys.
    """
    scalars = st.one_of(st.none(), st.booleans(), safe_integers(), finite_floats(), json_strings())
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(object_keys(), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


@cache
def _scalar_values(type_name: str) -> SearchStrategy[JsonValue]:
    if type_name == "string":
        return json_strings()
    if type_name == "number":
        return st.one_of(safe_integers(), finite_floats())
    if type_name == "integer":
        integral_floats = st.one_of(
            st.integers(-(2**53), 2**53).map(float), st.sampled_from((1e300, -1e20, 2.0)).map(float)
        )
        return st.one_of(safe_integers(), integral_floats)
    if type_name == "boolean":
        return st.booleans()
    return st.none()


@cache
def _annotations() -> SearchStrategy[dict[str, Any]]:
    # Half the nodes carry none: annotations never change validation, and drawing them is costly.
    return st.one_of(
        st.just({}),
        st.fixed_dictionaries(
            {},
            optional={
                "description": json_strings(),
                "title": json_strings(),
                "default": lossless_values(max_leaves=3),
                "examples": st.lists(lossless_values(max_leaves=3), max_size=2),
            },
        ),
    )


@cache
def _enums(type_name: str) -> SearchStrategy[list[Any] | None]:
    return st.one_of(st.none(), st.lists(_scalar_values(type_name), min_size=1, max_size=4))


@st.composite
def _scalar_schema(draw: st.DrawFn, type_name: str) -> dict[str, Any]:
    values = _scalar_values(type_name)
    schema: dict[str, Any] = {"type": type_name, **draw(_annotations())}
    enum = draw(_enums(type_name))
    if enum is not None:
        schema["enum"] = enum
    if draw(st.booleans()):
        schema["const"] = enum[draw(st.integers(0, len(enum) - 1))] if enum else draw(values)
    return schema


@cache
def _scalar_schemas(*type_names: str) -> SearchStrategy[dict[str, Any]]:
    return st.one_of([_scalar_schema(type_name) for type_name in type_names])


@cache
def _property_names() -> SearchStrategy[list[str]]:
    return st.lists(object_keys(), max_size=4, unique=True)


_ADDITIONAL_PROPERTIES: Final = st.sampled_from((None, True, False))


@st.composite
def _object_schema(draw: st.DrawFn, children: SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    keys = draw(_property_names())
    schema: dict[str, Any] = {"type": "object", **draw(_annotations())}
    if bool(keys) or draw(st.booleans()):
        schema["properties"] = {key: draw(children) for key in keys}
    required = [key for key in keys if draw(st.booleans())]
    if required:
        schema["required"] = required
    additional = draw(_ADDITIONAL_PROPERTIES)
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


@st.composite
def _array_schema(draw: st.DrawFn, children: SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", **draw(_annotations())}
    if draw(st.booleans()):
        schema["items"] = draw(children)
    return schema


@st.composite
def _one_of_schema(
    draw: st.DrawFn, branches: dict[str, SearchStrategy[dict[str, Any]]], choices: SearchStrategy[list[str]]
) -> dict[str, Any]:
    """A oneOf whose branches come from distinct entries of ``branches`` (schemas grouped by what they accept)."""
    return {"oneOf": [draw(branches[group]) for group in draw(choices)], **draw(_annotations())}


def _compound_schemas(children: SearchStrategy[dict[str, Any]], disjoint: bool) -> SearchStrategy[dict[str, Any]]:
    objects = _object_schema(children)
    arrays = _array_schema(children)
    if disjoint:
        # Values of different groups never match each other's schemas (number and integer share a group).
        groups = {
            "string": _scalar_schemas("string"),
            "number": _scalar_schemas("number", "integer"),
            "boolean": _scalar_schemas("boolean"),
            "null": _scalar_schemas("null"),
            "object": objects,
            "array": arrays,
        }
    else:
        groups = {str(index): children for index in range(4)}
    choices = st.lists(st.sampled_from(sorted(groups)), min_size=2, max_size=4, unique=True)
    return st.one_of(objects, arrays, _one_of_schema(groups, choices))


@cache
def subset_schemas(max_leaves: int = 12, disjoint_one_of: bool = True) -> SearchStrategy[dict[str, Any]]:
    """Raw schemas of the supported subset (``schema_violations`` finds nothing in them).

    Scalar nodes with optional ``enum``/``const`` (the const drawn from the enum), any-JSON nodes, arrays with
    optional ``items``, objects with index-like and ordinary property names, optional ``required`` and
    ``additionalProperties`` absent/true/false, and ``oneOf`` with two to four branches; annotations anywhere.
    With ``disjoint_one_of`` (the default) the branches of a ``oneOf`` accept pairwise disjoint kinds of value,
    so every schema accepts some value and :func:`values_for` always finds one. Without it, branches may
    overlap (``oneOf [number, integer]``, ``oneOf [{}, …]``), which exercises exact-one counting but can make
    a schema unsatisfiable.
    """
    base = st.one_of(_scalar_schemas(*_SCALAR_TYPES), _annotations())
    return st.recursive(base, lambda children: _compound_schemas(children, disjoint_one_of), max_leaves=max_leaves)


def values_for(schema: JsonValue) -> SearchStrategy[JsonValue]:
    """Values valid against a schema of the supported subset.

    Each node's values are constructed (enum/const members, required plus optional properties, extra keys on
    open objects, items); a ``oneOf`` draws from its branches and keeps only values that match exactly one
    branch, so its schema must be satisfiable (see :func:`subset_schemas`).
    """
    if "oneOf" in schema:
        exactly_one = compile_validator(schema)
        return st.one_of([values_for(branch) for branch in schema["oneOf"]]).filter(exactly_one.is_valid)
    type_name = schema.get("type")
    if type_name is None:
        return lossless_values()
    if type_name == "array":
        items = values_for(schema["items"]) if "items" in schema else lossless_values(max_leaves=6)
        return st.lists(items, max_size=4)
    if type_name == "object":
        return _object_values(schema)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return _scalar_values(type_name)


def _object_values(schema: JsonValue) -> SearchStrategy[JsonValue]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    present = {key: values_for(node) for key, node in properties.items() if key in required}
    optional = {key: values_for(node) for key, node in properties.items() if key not in required}
    declared = st.fixed_dictionaries(present, optional=optional)
    if schema.get("additionalProperties") is False:
        return declared
    extra_keys = object_keys().filter(lambda key: key not in properties)
    extras = st.dictionaries(extra_keys, lossless_values(max_leaves=4), max_size=2)
    return st.tuples(extras, declared).map(lambda pair: {**pair[0], **pair[1]})
