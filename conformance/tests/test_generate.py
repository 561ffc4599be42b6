"""Generator tags: what each expands to, exactly, at any depth, and what the kit's loader refuses."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolcanon_conformance.generate import MAX_DEPTH, MAX_SIZE, expand, tag_problems, utf16_length
from toolcanon_conformance.scenario import ScenarioError, scenario_from_data


def nest(depth: int, leaf: Any, **members: Any) -> dict[str, Any]:
    within = "object" if "key" in members else "array"
    return {"$generate": "nest", "depth": depth, "in": within, **members, "leaf": leaf}


def scenario(value: Any, requires: tuple[str, ...] = ("generated-values",)) -> dict[str, Any]:
    return {
        "formatVersion": 1,
        "id": "generated",
        "requires": list(requires),
        "tools": {
            "t": {"parameters": {}, "output": {"render": {"kind": "json"}}, "body": {"kind": "return", "value": value}}
        },
        "steps": [{"id": "c", "call": {"name": "t", "arguments": {}}}],
    }


def depth_of(value: Any) -> int:
    levels = 0
    while isinstance(value, list | dict):
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        levels += 1
    return levels


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        (nest(0, "leaf"), "leaf"),
        (nest(3, 0), [[[0]]]),
        (nest(2, 1, key="k"), {"k": {"k": 1}}),
        (
            nest(2, {}, key="items", **{"with": {"type": "array"}}),
            {"type": "array", "items": {"type": "array", "items": {}}},
        ),
        ({"$generate": "repeat", "count": 3, "item": {"a": [1]}}, [{"a": [1]}] * 3),
        ({"$generate": "repeat", "count": 0, "item": 1}, []),
        ({"$generate": "object", "count": 3, "key": "k", "value": None}, {"k0": None, "k1": None, "k2": None}),
        ({"$generate": "object", "count": 2, "key": "", "value": 1}, {"0": 1, "1": 1}),
        ({"$generate": "string", "length": 3}, "aaa"),
        ({"$generate": "string", "length": 4, "unit": "\U0001f600"}, "\U0001f600\U0001f600"),
        ({"$generate": "string", "length": 6, "unit": "a\U0001f600"}, "a\U0001f600a\U0001f600"),
        ({"$generate": "string", "length": 0, "unit": "xy"}, ""),
    ],
)
def test_each_generator_expands_exactly(tag: dict[str, Any], expected: Any) -> None:
    assert list(tag_problems(tag)) == []
    assert expand(tag) == expected
    if isinstance(expected, dict):
        assert list(expand(tag)) == list(expected)  # member order too


def test_the_with_members_come_before_the_key_at_every_level() -> None:
    tag = nest(2, 0, key="next", **{"with": {"z": 1, "a": {"$generate": "string", "length": 2}}})
    assert expand(tag) == {"z": 1, "a": "aa", "next": {"z": 1, "a": "aa", "next": 0}}
    assert list(expand(tag)) == ["z", "a", "next"]


def test_tags_nest_and_every_copy_is_its_own() -> None:
    tag = {"$generate": "repeat", "count": 2, "item": {"$generate": "repeat", "count": 2, "item": nest(1, [0])}}
    expanded = expand(tag)
    assert expanded == [[[[0]], [[0]]], [[[0]], [[0]]]]
    assert expanded[0] is not expanded[1] and expanded[0][0] is not expanded[0][1]
    assert expanded[0][0][0] is not expanded[1][1][0]


def test_a_tag_inside_plain_json_and_exotic_tags_inside_a_tag_stay_where_they_are() -> None:
    document = {"a": [1, {"$generate": "repeat", "count": 2, "item": {"$exotic": "nan"}}], "b": {"c": True}}
    assert expand(document) == {"a": [1, [{"$exotic": "nan"}, {"$exotic": "nan"}]], "b": {"c": True}}


def test_a_document_without_tags_is_returned_as_it_is() -> None:
    document = {"a": [1, 2]}
    assert expand(document) is document


def test_expansion_does_not_change_the_document() -> None:
    document = scenario({"x": nest(3, {"$generate": "string", "length": 2})})
    before = copy.deepcopy(document)
    expand(document)
    assert document == before


def test_the_deepest_nest_expands_without_recursion() -> None:
    for within in ({}, {"key": "k"}):
        value = expand(nest(MAX_DEPTH, 0, **within))
        assert depth_of(value) == MAX_DEPTH


def test_a_deep_nest_of_wide_repeats_keeps_every_level() -> None:
    value = expand(nest(1000, {"$generate": "repeat", "count": 3, "item": nest(2, 1)}))
    assert depth_of(value) == 1003


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert [utf16_length(text) for text in ("", "a", "é", "\U0001f600", "a\U0001f600é", "\ud800")] == [0, 1, 1, 2, 4, 1]


@pytest.mark.parametrize(
    ("tag", "reason"),
    [
        ({"$generate": "nope"}, "$generate must be one of nest, repeat, string, object, not 'nope'"),
        ({"$generate": ["nest"]}, "$generate must be one of nest, repeat, string, object, not ['nest']"),
        ({"$generate": "repeat", "count": 1}, "a repeat tag needs 'item'"),
        ({"$generate": "repeat", "count": 1, "item": 0, "extra": 1}, "a repeat tag has no member 'extra'"),
        ({"$generate": "repeat", "count": -1, "item": 0}, "count must be an integer from 0 to 1,000,000"),
        ({"$generate": "repeat", "count": 1_000_001, "item": 0}, "count must be an integer from 0 to 1,000,000"),
        ({"$generate": "repeat", "count": True, "item": 0}, "count must be an integer from 0 to 1,000,000"),
        ({"$generate": "repeat", "count": 2.0, "item": 0}, "count must be an integer from 0 to 1,000,000"),
        ({"$generate": "object", "count": 1, "key": 1, "value": 0}, "key must be a string"),
        (nest(MAX_DEPTH + 1, 0), "depth must be an integer from 0 to 200,000"),
        ({"$generate": "nest", "depth": 1, "in": "set", "leaf": 0}, 'in must be "array" or "object"'),
        (
            {"$generate": "nest", "depth": 1, "in": "array", "key": "k", "leaf": 0},
            "a nest in arrays has no key and no with",
        ),
        ({"$generate": "nest", "depth": 1, "in": "object", "leaf": 0}, "a nest in objects needs a key, a string"),
        (nest(1, 0, key="k", **{"with": {"k": 1}}), "with must not hold the key 'k'"),
        (nest(1, 0, key="k", **{"with": {"$exotic": "nan"}}), "with must be a plain object"),
        ({"$generate": "string", "length": 1_000_001}, "length must be an integer from 0 to 1,000,000"),
        ({"$generate": "string", "length": 1, "unit": ""}, "unit must be a non-empty string"),
        (
            {"$generate": "string", "length": 3, "unit": "\U0001f600"},
            "length must be a multiple of the unit's length (2 UTF-16 code units)",
        ),
    ],
)
def test_a_malformed_tag_is_named_with_its_reason(tag: dict[str, Any], reason: str) -> None:
    assert list(tag_problems({"v": [tag]})) == [(("v", 0), reason)]


def test_tags_that_expand_beyond_the_bound_are_refused_in_all() -> None:
    inner = {"$generate": "repeat", "count": 1_000_000, "item": 0}
    huge = {"$generate": "repeat", "count": 1_000_000, "item": inner}
    assert [reason for _, reason in tag_problems(huge)] == [
        f"its generator tags expand to more than {MAX_SIZE:,} values (a value counts 1, a string its length)"
    ]
    four_strings = [{"$generate": "string", "length": 1_000_000}] * 4
    assert list(tag_problems(four_strings)) != []
    assert list(tag_problems(four_strings[:3])) == []


def test_the_loader_refuses_a_tag_out_of_bounds_naming_its_path() -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(scenario({"deep": nest(MAX_DEPTH + 1, 0)}))
    assert raised.value.json_path.startswith("$.tools.t.body.value")
    assert "200000" in raised.value.reason


def test_the_loader_refuses_a_tag_with_an_unknown_member() -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(scenario({"$generate": "repeat", "count": 1, "item": 0, "times": 2}))
    assert raised.value.json_path.startswith("$.tools.t.body.value")


def test_the_loader_checks_tags_where_the_schema_does_not_look() -> None:
    data = scenario(1)
    data["tools"]["t"]["parameters"] = {"p": {"$generate": "string", "length": 3, "unit": "ab"}}
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(data)
    assert (raised.value.json_path, raised.value.reason) == (
        "$.tools.t.parameters.p",
        "length must be a multiple of the unit's length (2 UTF-16 code units)",
    )


def test_a_scenario_holding_a_tag_requires_the_capability() -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(scenario(nest(2, 0), requires=()))
    assert (raised.value.json_path, raised.value.reason) == (
        "$.requires",
        "a scenario holding generator tags requires generated-values",
    )
    assert scenario_from_data(scenario(nest(2, 0))).requires == ("generated-values",)


def test_a_generated_probe_path_repeats_one_key_or_index() -> None:
    data = scenario(nest(3, 0))
    data["steps"].append(
        {"id": "p", "probe": {"step": "c", "target": "value", "path": {"$generate": "repeat", "count": 2, "item": 0}}}
    )
    scenario_from_data(data)
    data["steps"][1]["probe"]["path"] = {"$generate": "repeat", "count": 2, "item": [0]}
    with pytest.raises(ScenarioError) as raised:
        scenario_from_data(data)
    assert raised.value.reason == "a generated path is a repeat of one key or index"
