"""Compiling a schema at registration: its checked frozen copy, and the caches keyed by its JSON text."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fused import StrKey, poisoned, schemas

from toolcanon.errors import JsonSchemaError
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, snapshot_json
from toolcanon.schema import compile_validator, schema_violations, supported_copy


def _frozen_all_the_way(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(_frozen_all_the_way(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is FrozenList and all(_frozen_all_the_way(item) for item in value)
    return True


@st.composite
def schemas_in_and_out_of_the_subset(draw: st.DrawFn) -> Any:
    """A supported schema, or one with one place broken: a value that is not lossless, a foreign key, ..."""
    schema = draw(schemas())
    return poisoned(schema, draw) if draw(st.booleans()) else schema


@settings(max_examples=3 * settings().max_examples, deadline=None)
@given(schemas_in_and_out_of_the_subset())
def test_the_supported_copy_has_the_schemas_own_violations(schema: Any) -> None:
    """The check on the frozen copy reports exactly what the check on the schema itself reports."""
    violations = schema_violations(schema)
    if violations:
        with pytest.raises(JsonSchemaError) as raised:
            supported_copy(schema)
        assert list(raised.value.violations) == violations
    else:
        copy = supported_copy(schema)
        assert copy == snapshot_json(schema) and _frozen_all_the_way(copy)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "enum": [math.nan]},
        {"type": "string", "default": (1, 2)},
        {"type": "object", "properties": {StrKey("a"): {"type": "string"}}},
        OrderedDict(type="string"),
        {"type": "integer", "const": MAX_SAFE_INTEGER + 1},
    ],
    ids=["nan-enum", "tuple-annotation", "foreign-key", "dict-subclass", "unsafe-const"],
)
def test_a_schema_that_is_not_lossless_fails_with_its_violations(schema: Any) -> None:
    with pytest.raises(JsonSchemaError) as raised:
        supported_copy(schema)
    assert list(raised.value.violations) == schema_violations(schema) != []


class Count(int):
    """An ``int`` subclass: the C encoder writes it as a plain integer."""


@pytest.mark.parametrize(
    ("first", "second", "value"),
    [
        ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": ("a",)}, "a"),
        ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": [StrKey("a")]}, "a"),
        ({"type": "integer", "const": 1}, {"type": "integer", "const": Count(1)}, 1),
        ({"type": "object", "properties": {"1": {}}}, {"type": "object", "properties": {1: {}}}, {"1": 2}),
        ({"type": "number", "const": 1}, {"type": "number", "const": 1.0}, 1),
    ],
    ids=["tuple", "str-subclass", "int-subclass", "int-key", "int-float"],
)
def test_data_that_only_looks_alike_is_compiled_apart(first: Any, second: Any, value: Any) -> None:
    """Lookalikes the C encoder writes the same way never share a cached compilation, in either order."""
    from toolcanon._schema_subset import _walk_violations
    from toolcanon._schema_validate import _compile

    for order in ((first, second), (second, first)):
        for schema in order:
            violations = schema_violations(schema)
            assert violations == list(_walk_violations(schema, "schema"))
            if not violations:
                assert compile_validator(schema).violations(value) == _compile(schema).violations(value)


def test_a_deep_schema_is_cached_by_its_canonical_text() -> None:
    """Too deep for the C encoder, a schema still compiles once per distinct text."""
    chain: dict[str, Any] = {"type": "string"}
    for _ in range(3_000):
        chain = {"type": "array", "items": chain}
    assert compile_validator(chain) is compile_validator(snapshot_json(chain))


def test_the_cache_holds_a_bounded_length_of_text() -> None:
    """Compiled forms of large schemas do not pile up: the oldest go once the texts' length passes the budget."""
    from toolcanon._text_cache import TextKeyedCache

    compiled: list[Any] = []
    cache: TextKeyedCache[int] = TextKeyedCache(size=10, budget=100)

    def compile_(data: Any) -> int:
        compiled.append(data)
        return len(compiled)

    small, large = ["a"], ["x" * 60]
    assert cache.get(small, compile_) == cache.get(small, compile_) == 1
    assert cache.get(large, compile_) == 2
    assert cache.get(["y" * 60], compile_) == 3  # past the budget: the oldest entries go, first to last
    assert cache.get(large, compile_) == 4
    assert cache.get(small, compile_) == 5
    assert cache.get(large, compile_) == 4
    assert cache.get(["z" * 500], compile_) == 6  # longer than the whole budget, and still kept
    assert cache.get(["z" * 500], compile_) == 6
    assert cache.get(small, compile_) == 7


@pytest.mark.parametrize(
    ("schema", "violation"),
    [
        ({"type": "strng"}, "output.type must be one of object/array/string/number/integer/boolean/null"),
        ({"type": "number", "enum": [math.nan]}, "output.enum must be a non-empty array of number values"),
    ],
    ids=["lossless", "not-lossless"],
)
def test_the_supported_copy_names_the_path_it_is_given(schema: Any, violation: str) -> None:
    with pytest.raises(JsonSchemaError) as raised:
        supported_copy(schema, "output")
    assert list(raised.value.violations) == [violation]
