"""Properties of the subset validator: it agrees with jsonschema, and with itself (decisions 10a)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolcanon._schema_deep import collect_without_closures, valid_iteratively
from toolcanon._schema_kinds import is_lossless
from toolcanon.jsonvalue import is_lossless_json, snapshot_json
from toolcanon.schema import compile_validator, schema_violations
from toolcanon_conformance.strategies import lossless_values, subset_schemas, values_for

SETTINGS = settings(
    max_examples=2 * settings().max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def schema_and_value(draw: st.DrawFn, disjoint_one_of: bool = True) -> tuple[dict[str, Any], Any]:
    """A subset schema and a value that is valid for it, or for another schema, or any lossless value."""
    schema = draw(subset_schemas(disjoint_one_of=disjoint_one_of))
    source = draw(st.sampled_from(("own", "other", "any")))
    if source == "own" and disjoint_one_of:
        return schema, draw(values_for(schema))
    if source == "other":
        return schema, draw(values_for(draw(subset_schemas(max_leaves=6))))
    return schema, draw(lossless_values(max_leaves=10))


@SETTINGS
@given(schema_and_value())
def test_agrees_with_jsonschema(pair: tuple[dict[str, Any], Any]) -> None:
    """decisions 10a / digest 1.26-1.30: valid/invalid agrees with Draft 2020-12 on lossless values."""
    schema, value = pair
    assert compile_validator(schema).is_valid(value) == Draft202012Validator(schema).is_valid(value)


@SETTINGS
@given(schema_and_value(disjoint_one_of=False))
def test_agrees_with_jsonschema_on_overlapping_one_of(pair: tuple[dict[str, Any], Any]) -> None:
    """digest 1.30: exact-one counting agrees too when branches overlap."""
    schema, value = pair
    assert compile_validator(schema).is_valid(value) == Draft202012Validator(schema).is_valid(value)


@SETTINGS
@given(st.data())
def test_values_for_are_valid(data: st.DataObject) -> None:
    """values_for(schema) generates only valid values (plain and frozen)."""
    schema = data.draw(subset_schemas())
    value = data.draw(values_for(schema))
    validator = compile_validator(schema)
    assert validator.violations(value) == []
    assert validator.is_valid(snapshot_json(value))


@SETTINGS
@given(subset_schemas(disjoint_one_of=False))
def test_generated_schemas_are_supported(schema: dict[str, Any]) -> None:
    """digest 1.20-1.23: subset_schemas generates only supported schemas."""
    assert schema_violations(schema) == []
    assert schema_violations(snapshot_json(schema)) == []


@SETTINGS
@given(schema_and_value(disjoint_one_of=False), st.sampled_from(("value", "", "out")))
def test_engines_and_methods_agree(pair: tuple[dict[str, Any], Any], root: str) -> None:
    """The closures, the iterative engine and is_valid give the same answer (digest 1.25-1.31)."""
    schema, value = pair
    validator = compile_validator(schema)
    violations = validator.violations(value, root)
    assert validator.is_valid(value) == (violations == [])
    assert collect_without_closures(validator._node, value, root) == violations
    for height in (0, 1, 2):
        assert valid_iteratively(validator._node, value, height) in (None, not violations)


@SETTINGS
@given(lossless_values())
def test_lossless_values_are_lossless(value: Any) -> None:
    """lossless_values generates lossless JSON; the validator's fast check agrees with jsonvalue's."""
    assert is_lossless_json(value)
    assert is_lossless(value)
