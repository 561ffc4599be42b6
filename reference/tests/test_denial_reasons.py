"""R-PRE-8: a denial reason that is not a string is the message as its JSON value, its content its String()."""

from __future__ import annotations

import math
from typing import Any

import pytest
from test_hostile import NOT_JSON, Phases, failed

from conftest import call, plain, raw_tool
from toolcanon import Accept, Deny, Registry, ToolFailure
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.renderers._ecma import js_string


def registry_denying(reason: object) -> Registry:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_pre_execute(lambda run, nxt: Deny(reason))
    return registry


JSON_REASONS = [
    pytest.param(5, "5", id="number"),
    pytest.param(-0.5, "-0.5", id="negative-float"),
    pytest.param(1e21, "1e+21", id="float-1e21"),
    pytest.param(1e-7, "1e-7", id="float-1e-7"),
    pytest.param(2.0, "2", id="integral-float"),
    pytest.param(None, "null", id="null"),
    pytest.param(True, "true", id="true"),
    pytest.param(False, "false", id="false"),
    pytest.param({"a": 1}, "[object Object]", id="object"),
    pytest.param([1, "x"], "1,x", id="list"),
    pytest.param([[1, [2, None]], [], {"b": 2}, "y"], "1,2,,,[object Object],y", id="nested"),
    pytest.param([], "", id="empty-list"),
    pytest.param([None, None], ",", id="null-items"),
]


@pytest.mark.parametrize(("reason", "text"), JSON_REASONS)
def test_a_json_reason_is_the_message_and_its_string_the_content(reason: Any, text: str) -> None:
    registry = registry_denying(reason)
    phases = Phases(registry)
    result = call(registry, "t")
    assert type(result) is ToolFailure and result.error.info is None
    assert (result.error.message == reason and type(result.error.message) is type(reason)) or (
        isinstance(reason, dict | list) and isinstance(result.error.message, FrozenDict | FrozenList)
    )
    assert plain(result.content) == [{"type": "text", "text": "Error: " + text}]
    assert phases.seen == ["post"]


def test_the_message_is_a_frozen_copy() -> None:
    reason: dict[str, Any] = {"a": [1]}
    result = call(registry_denying(reason), "t")
    reason["a"].append(2)
    assert type(result.error.message) is FrozenDict and result.error.message == {"a": [1]}  # type: ignore[union-attr]


def test_post_execute_replacing_the_content_keeps_the_json_message() -> None:
    registry = registry_denying([1, 2])
    registry.on_post_execute(lambda run, result, nxt: Accept(content=[{"type": "text", "text": "replaced"}]))
    result = call(registry, "t")
    assert type(result) is ToolFailure and result.error.message == [1, 2]
    assert plain(result.content) == [{"type": "text", "text": "replaced"}]


class DictSub(dict[str, Any]):
    pass


class StrRaises:
    def __str__(self) -> str:
        raise RuntimeError("__str__ ran")


def _cycle() -> list[Any]:
    items: list[Any] = []
    items.append(items)
    return items


HOSTILE_REASONS = [
    pytest.param(lambda: DictSub(a=1), id="dict-subclass"),
    pytest.param(_cycle, id="cycle"),
    pytest.param(lambda: math.nan, id="nan"),
    pytest.param(lambda: -0.0, id="negative-zero"),
    pytest.param(lambda: 10**5000, id="huge-int"),
    pytest.param(lambda: 2**53, id="unsafe-integer"),
    pytest.param(StrRaises, id="str-raises"),
    pytest.param(lambda: [1, {"a": math.inf}], id="nested-infinity"),
    pytest.param(lambda: (1, 2), id="tuple"),
]


@pytest.mark.parametrize("reason", HOSTILE_REASONS)
def test_a_reason_that_is_not_lossless_json_is_a_final_failure(reason: Any) -> None:
    """As its materialization fails: a TypeError of the contract's text, no info, post-execute skipped."""
    registry = registry_denying(reason())
    phases = Phases(registry)
    failed(call(registry, "t"), NOT_JSON)
    assert phases.seen == []


def test_a_guard_reason_follows_the_same_rule() -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.add_guard(lambda run: [1, [None, "x"]])
    result = call(registry, "t")
    assert type(result) is ToolFailure and result.error.message == [1, [None, "x"]]
    assert plain(result.content) == [{"type": "text", "text": "Error: 1,,x"}]


def test_js_string_of_a_deep_list_is_iterative() -> None:
    deep: list[Any] = [7]
    for _ in range(100_000):
        deep = [deep, None]
    assert js_string(deep) == "7" + "," * 100_000


def test_a_denials_error_is_kept_as_it_is_through_post_execute() -> None:
    """The failure post-execute sees and the one execute returns after replacing its content share one error."""
    seen: list[ToolFailure] = []

    def replace_content(run: Any, result: Any, nxt: Any) -> Accept:
        seen.append(result)
        return Accept(content=[{"type": "text", "text": "replaced"}])

    registry = registry_denying({"why": [1, 2]})
    registry.on_post_execute(replace_content)
    result = call(registry, "t")
    assert type(result) is ToolFailure and result.error == seen[0].error
    assert result.error is seen[0].error and result.error.message is seen[0].error.message
