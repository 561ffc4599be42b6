"""The fused normalizer agrees exactly with the step-by-step snapshot → validate → freeze path."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import call, items_chain
from toolcanon import Output, Registry, ToolDefinition
from toolcanon._fused import NOT_LOSSLESS, FusedNormalization, NotNormalized, OutputRejected, compile_normalizer
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import MAX_SAFE_INTEGER, NotLosslessJson, snapshot_json
from toolcanon.schema import compile_validator, schema_violations

KEYS = ["a", "b", "1", "10", "0"]
STRINGS = ["x", "y", ""]
NUMBERS = [0, 1, 2, -3, 1.5, 2.0, 0.0]


class StrKey(str):
    __slots__ = ()


@cache
def scalar_schemas() -> st.SearchStrategy[dict[str, Any]]:
    def with_constraints(kind: str, pool: list[Any]) -> st.SearchStrategy[dict[str, Any]]:
        base = st.just({"type": kind})
        if not pool:
            return base
        enum = st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True).map(
            lambda values: {"type": kind, "enum": values}
        )
        const = st.sampled_from(pool).map(lambda value: {"type": kind, "const": value})
        return base | enum | const

    return (
        with_constraints("string", STRINGS)
        | with_constraints("number", NUMBERS)
        | with_constraints("integer", [0, 1, 2, -3])
        | with_constraints("boolean", [True, False])
        | with_constraints("null", [None])
    )


@cache  # one strategy for every draw: hypothesis reads the source of each composite it builds
def schemas() -> st.SearchStrategy[dict[str, Any]]:
    def containers(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        array = st.one_of(st.just({"type": "array"}), children.map(lambda item: {"type": "array", "items": item}))

        @st.composite
        def objects(draw: st.DrawFn) -> dict[str, Any]:
            properties = draw(st.dictionaries(st.sampled_from(KEYS), children, max_size=3))
            required = draw(st.lists(st.sampled_from(list(properties)), unique=True)) if properties else []
            schema: dict[str, Any] = {"type": "object", "additionalProperties": draw(st.booleans())}
            if properties or draw(st.booleans()):
                schema["properties"] = properties
            if required:
                schema["required"] = required
            return schema

        one_of = st.lists(children, min_size=2, max_size=3).map(lambda branches: {"oneOf": branches})
        return array | objects() | one_of

    return st.recursive(scalar_schemas() | st.just({}), containers, max_leaves=8)


_poison = st.sampled_from([math.nan, math.inf, -0.0, MAX_SAFE_INTEGER + 1, (1,), b"x", True])
values = st.recursive(
    st.none() | st.booleans() | st.sampled_from(STRINGS) | st.sampled_from(NUMBERS) | _poison,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS).map(StrKey), children, min_size=1, max_size=1)
    ),
    max_leaves=12,
)


_clean = st.recursive(
    st.none() | st.booleans() | st.sampled_from(STRINGS) | st.sampled_from(NUMBERS),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
    max_leaves=6,
)


def matching(schema: dict[str, Any], draw: st.DrawFn) -> Any:
    """A value built to match ``schema`` (oneOf may still match several branches)."""
    if "oneOf" in schema:
        return matching(draw(st.sampled_from(schema["oneOf"])), draw)
    kind = schema.get("type")
    if kind is None:
        return draw(_clean)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    pools: dict[str, list[Any]] = {
        "string": STRINGS,
        "number": NUMBERS,
        "integer": [0, 1, 2.0, -3],
        "boolean": [True, False],
        "null": [None],
    }
    if kind in pools:
        return draw(st.sampled_from(pools[kind]))
    if kind == "array":
        items = schema.get("items", {})
        return [matching(items, draw) for _ in range(draw(st.integers(0, 3)))]
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    produced = {
        key: matching(child, draw) for key, child in properties.items() if key in required or draw(st.booleans())
    }
    if schema.get("additionalProperties") is not False and draw(st.booleans()):
        produced[draw(st.sampled_from(["extra", "7"]))] = draw(_clean)
    return produced


@st.composite
def schema_and_value(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = draw(schemas())
    value = draw(values) if draw(st.booleans()) else matching(schema, draw)
    return schema, value


def _same_shape(left: Any, right: Any) -> bool:
    """Equal, with equal container types, key order and scalar types, all the way down."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same_shape(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(_same_shape(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


@settings(max_examples=5 * settings().max_examples // 2, deadline=None)
@given(schema_and_value())
def test_fused_equals_the_step_by_step_path(pair: tuple[dict[str, Any], Any]) -> None:
    """Accepts exactly the valid lossless values, and then returns exactly the snapshot."""
    schema, value = pair
    assert schema_violations(schema) == []
    normalizer = compile_normalizer(schema)
    assert normalizer is not None
    try:
        expected: Any = snapshot_json(value)
        valid = compile_validator(schema).is_valid(expected)
    except NotLosslessJson:
        valid = False
    try:
        produced = normalizer(value)
    except NotNormalized:
        assert not valid, f"fused declined a valid lossless value: {value!r} for {schema!r}"
        return
    assert valid, f"fused accepted {value!r} for {schema!r}"
    assert _same_shape(produced, expected)


def test_fused_output_is_frozen_and_detached() -> None:
    schema = {"type": "object", "additionalProperties": True, "properties": {"a": {"type": "array"}}}
    normalizer = compile_normalizer(schema)
    assert normalizer is not None
    source = {"a": [1, {"b": 2}], "2": "x", "1": "y"}
    produced = normalizer(source)
    assert list(produced) == ["1", "2", "a"]
    assert type(produced) is FrozenDict and type(produced["a"]) is FrozenList
    assert produced["a"] is not source["a"]


def test_too_deep_schema_is_not_fused() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "array", "items": schema}
    assert compile_normalizer(schema) is None


def test_normalization_is_generated_once_it_pays_off() -> None:
    """Small values take the step-by-step path until enough data was seen; a large value generates at once."""
    schema = {"type": "array", "items": {"type": "integer"}}
    small = FusedNormalization(schema, threshold=10)
    for _ in range(4):
        with pytest.raises(NotNormalized):
            small([1])
    assert small([1, 2, 3]) == [1, 2, 3]
    large = FusedNormalization(schema, threshold=10)
    assert type(large(list(range(20)))) is FrozenList
    with pytest.raises(NotNormalized):
        large(["not an integer"])


def test_registry_results_are_the_same_on_both_paths() -> None:
    """The first calls (step-by-step) and later calls (fused) of one tool give equal frozen values."""
    registry = Registry()
    registry.register(
        ToolDefinition(
            "t",
            "",
            {"type": "object"},
            Output({"type": "array", "items": {"type": "object", "additionalProperties": True}}, lambda a, v: []),
            lambda args, run: [{"b": 1, "2": [1.5], "a": None}] * 10,
        )
    )
    results = [call(registry, "t", call_id=f"c{index}") for index in range(12)]
    values = [result.value for result in results]  # type: ignore[union-attr]
    assert all(value == values[0] for value in values)
    assert all(list(value[0]) == ["2", "b", "a"] for value in values)


def _step_by_step(schema: Any, value: Any) -> tuple[str, Any]:
    """The contract's three steps, one after the other: ``("value", snapshot)`` or ``("rejected", messages)``."""
    try:
        snapshot = snapshot_json(value)
    except NotLosslessJson:
        return "rejected", [NOT_LOSSLESS]
    violations = compile_validator(schema).violations(snapshot, "value")
    return ("rejected", violations) if violations else ("value", snapshot)


def _normalized(normalization: FusedNormalization, value: Any) -> tuple[str, Any]:
    try:
        return "value", normalization.normalize(value)
    except OutputRejected as rejected:
        return "rejected", rejected.violations


def poisoned(value: Any, draw: st.DrawFn) -> Any:
    """``value`` with one place made not lossless JSON: a value replaced, an undeclared one added, a key foreign."""
    descend = draw(st.integers(0, 3)) > 0
    if type(value) is list and value and descend:
        index = draw(st.integers(0, len(value) - 1))
        return [poisoned(item, draw) if position == index else item for position, item in enumerate(value)]
    if type(value) is dict and descend:
        copy: dict[Any, Any] = dict(value)
        choice = draw(st.sampled_from(["replace", "foreign key", "extra"] if value else ["extra"]))
        if choice == "extra":
            copy[draw(st.sampled_from(["extra", *KEYS]))] = draw(_poison)
        else:
            key = draw(st.sampled_from(list(value)))
            if choice == "replace":
                copy[key] = poisoned(value[key], draw)
            else:
                copy[StrKey(key)] = copy.pop(key)
        return copy
    return draw(_poison | st.lists(_poison, min_size=1, max_size=2) | st.just({"a": math.nan}))


@st.composite
def schema_and_suspect_value(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """A schema and a value that is arbitrary, matching, or matching but for one place that is not lossless."""
    schema = draw(schemas())
    choice = draw(st.sampled_from(["arbitrary", "matching", "poisoned"]))
    if choice == "arbitrary":
        return schema, draw(values)
    value = matching(schema, draw)
    return schema, poisoned(value, draw) if choice == "poisoned" else value


_CLOSED = {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}}}
_OPEN = {"type": "object", "additionalProperties": True, "properties": {"a": {"type": "string"}}}


@settings(max_examples=3 * settings().max_examples, deadline=None)
@given(schema_and_suspect_value())
# each place where a violation may hide a part that is not lossless JSON
@example(({"type": "string"}, [math.nan]))
@example((_CLOSED, {"a": "x", "extra": math.nan}))
@example((_OPEN, {"a": 1, "extra": [math.inf]}))
@example((_OPEN, {"a": 1, StrKey("b"): 2}))
@example(({"oneOf": [{"type": "string"}, {"type": "null"}]}, {"a": -0.0}))
@example(({"type": "array", "items": {"type": "integer"}}, (1,)))
@example(({"type": "array", "items": {"type": "integer"}}, [1, "x", {"a": math.nan}]))
def test_normalize_equals_the_step_by_step_path(pair: tuple[dict[str, Any], Any]) -> None:
    """Fused or not, a value normalizes to the snapshot, or fails with the step-by-step path's exact messages.

    The validator finds the same messages on the value itself, and ``None`` exactly when the snapshot fails.
    """
    schema, value = pair
    expected = _step_by_step(schema, value)
    for threshold in (0, 10**9):  # generated at once; never generated
        kind, produced = _normalized(FusedNormalization(schema, threshold=threshold), value)
        assert kind == expected[0], (schema, value, produced)
        if kind == "value":
            assert _same_shape(produced, expected[1])
        else:
            assert produced == expected[1]
    found = compile_validator(schema).violations_if_lossless(value)
    if expected[1] == [NOT_LOSSLESS]:
        assert found is None
    else:
        assert found == ([] if expected[0] == "value" else expected[1])


class WatchedKey(str):
    """A string key whose comparison is foreign code; it records every call."""

    __slots__ = ()
    calls: list[str] = []  # noqa: RUF012

    def __eq__(self, other: object) -> bool:
        WatchedKey.calls.append("__eq__")
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        WatchedKey.calls.append("__hash__")
        return str.__hash__(self)


def test_an_invalid_value_runs_none_of_its_own_code() -> None:
    """A declined value is judged without a lookup that could call a foreign key's ``__eq__``."""
    schema = {
        "type": "array",
        "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    }
    normalization = FusedNormalization(schema, threshold=0)
    value = [{"name": "a"}, {WatchedKey("name"): 1}, {"name": 2}]
    WatchedKey.calls.clear()
    with pytest.raises(OutputRejected) as rejected:
        normalization.normalize(value)
    assert rejected.value.violations == [NOT_LOSSLESS]
    assert WatchedKey.calls == []


@cache
def wide_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Objects with more properties than the generated code unrolls, of scalar and container children."""
    child = scalar_schemas() | scalar_schemas().map(lambda item: {"type": "array", "items": item}) | st.just({})

    @st.composite
    def wide(draw: st.DrawFn) -> dict[str, Any]:
        count = draw(st.integers(33, 40))
        properties = {f"p{index}" if index % 7 else str(index): draw(child) for index in range(count)}
        required = [key for key in properties if draw(st.booleans())]
        schema: dict[str, Any] = {"type": "object", "additionalProperties": draw(st.booleans())}
        schema["properties"] = properties
        if required:
            schema["required"] = required
        return schema

    return wide()


@st.composite
def wide_schema_and_value(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = draw(wide_schemas())
    value = matching(schema, draw)
    if draw(st.booleans()):  # break it: drop, add or replace one property
        key = draw(st.sampled_from([*schema["properties"], "extra"]))
        replacement = draw(values)
        if key in value and draw(st.booleans()):
            del value[key]
        else:
            value[key] = replacement
    return schema, value


@settings(deadline=None)
@given(wide_schema_and_value())
def test_wide_objects_normalize_like_the_step_by_step_path(pair: tuple[dict[str, Any], Any]) -> None:
    schema, value = pair
    expected = _step_by_step(schema, value)
    kind, produced = _normalized(FusedNormalization(schema, threshold=0), value)
    assert kind == expected[0], (schema, value, produced)
    if kind == "value":
        assert _same_shape(produced, expected[1])
    else:
        assert produced == expected[1]


def test_a_wide_schema_generates_short_code() -> None:
    """The generated code of a wide object does not grow with its width: one loop, one check per scalar kind."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {f"p{index}": {"type": "integer"} for index in range(5_000)},
    }
    normalizer = compile_normalizer(schema)
    assert normalizer is not None and normalizer.__doc__ is not None
    assert normalizer.__doc__.count("\n") < 40
    assert normalizer({"p1": 1, "p4999": 2.0}) == {"p1": 1, "p4999": 2.0}
    with pytest.raises(NotNormalized):
        normalizer({"p1": "one"})


def test_the_normalization_waits_for_its_threshold_of_items() -> None:
    """Below its threshold the fused walk is not generated (NotNormalized); the value that reaches it is walked."""
    normalization = FusedNormalization({"type": "string"}, threshold=2)
    with pytest.raises(NotNormalized):
        normalization("a")
    assert normalization("b") == "b"


def test_a_scalar_property_is_checked_in_place() -> None:
    """A scalar property's check is written inside its object's function: the generated code has one function."""
    normalizer = compile_normalizer(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
    )
    assert normalizer is not None
    assert (normalizer.__doc__ or "").count("def ") == 1


def test_the_generated_functions_are_numbered_from_one() -> None:
    """The generated functions are named n1, n2, … in the order generated: the entry is n1, the next container n2."""
    normalizer = compile_normalizer({"type": "array", "items": {"type": "object"}})
    assert normalizer is not None
    assert normalizer.__name__ == "n1"
    assert [line for line in (normalizer.__doc__ or "").splitlines() if line.startswith("def ")] == [
        "def n2(v):",
        "def n1(v):",
    ]


def _wide_objects_around_a_string(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        properties: dict[str, Any] = {f"p{index}": {"type": "integer"} for index in range(32)}
        properties["next"] = schema
        schema = {"type": "object", "properties": properties}
    return schema


def test_the_depth_bound_is_exact() -> None:
    """A schema of 65 nested containers is fused, one of 66 is not: the bound is 64 levels below the root."""
    assert compile_normalizer(items_chain(34)) is not None
    assert compile_normalizer(items_chain(65)) is not None
    assert compile_normalizer(items_chain(66)) is None


def test_the_depth_bound_counts_wide_objects() -> None:
    """Wide objects (a table of properties rather than unrolled checks) count one level each, as narrow ones do."""
    assert compile_normalizer(_wide_objects_around_a_string(34)) is not None
    assert compile_normalizer(_wide_objects_around_a_string(65)) is not None
    assert compile_normalizer(_wide_objects_around_a_string(66)) is None


def test_the_default_threshold_is_64_items() -> None:
    """A container counts one plus its length: 63 items seen decline, 64 generate the fused walk."""
    with pytest.raises(NotNormalized):
        FusedNormalization({"type": "array"})(list(range(62)))
    assert type(FusedNormalization({"type": "array"})(list(range(63)))) is FrozenList


def test_normalize_counts_toward_the_threshold() -> None:
    """The data normalize sees counts toward the threshold as the data the walk alone sees does."""
    scalars = FusedNormalization({"type": "string"}, threshold=2)
    scalars.normalize("a")
    assert scalars("b") == "b"
    containers = FusedNormalization({"type": "array"}, threshold=4)
    containers.normalize([1, 2, 3])
    assert containers([1]) == [1]


def test_output_rejected_text_joins_the_violations() -> None:
    """The fused walk's rejection carries its violations and reads as them, joined as the registry joins them."""
    rejected = OutputRejected(["a", "b"])
    assert str(rejected) == "a; b"
    assert rejected.violations == ["a", "b"]


def test_thirty_two_properties_are_unrolled() -> None:
    """An object of up to 32 properties gets a check per property; one of 33 gets the table loop."""

    def code(width: int) -> str:
        properties = {f"p{index}": {"type": "integer"} for index in range(width)}
        normalizer = compile_normalizer({"type": "object", "additionalProperties": False, "properties": properties})
        assert normalizer is not None
        return normalizer.__doc__ or ""

    assert "for k, needed, f, copies in" not in code(32)
    assert "for k, needed, f, copies in" in code(33)


def test_a_narrow_closed_object_accepts_a_missing_optional_property() -> None:
    """The unrolled checks of a closed object let an optional property be absent."""
    normalizer = compile_normalizer(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"],
        }
    )
    assert normalizer is not None
    assert normalizer({"a": "x"}) == {"a": "x"}


def test_a_number_may_be_a_fraction() -> None:
    """A number place takes a fraction, at the root and as an item."""
    root = compile_normalizer({"type": "number"})
    items = compile_normalizer({"type": "array", "items": {"type": "number"}})
    assert root is not None and items is not None
    assert root(1.5) == 1.5
    assert items([1.5]) == [1.5]
