"""Token-bound provenance: what a wrapper may return and what is re-normalized (digest 7.x)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import pickle
from typing import Any

import pytest

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    Accept,
    Call,
    DispatchToken,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
    define_tool,
)
from toolcanon.result import ErrorInfo, ToolError


def test_untouched_next_result_passes_as_is() -> None:
    """digest 7.2: the very object next() returned is trusted; nothing is re-rendered."""
    renders: list[Any] = []
    returned: list[Any] = []

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        returned.append(result)
        return result

    registry = Registry()
    registry.register(echo_tool(output=Output({"type": "string"}, lambda a, v: renders.append(v) or [])))
    registry.on_execute(wrapper)
    result = call(registry, "echo", {"text": "x"})
    assert renders == ["x"]
    assert result is returned[0]


def test_authored_success_is_renormalized() -> None:
    """digest 7.4: value revalidated, re-rendered with this call's arguments; content/meta discarded."""
    bodies: list[Any] = []

    async def short_circuit(run: ToolExecution, nxt: Any) -> Any:
        return ToolSuccess("short-circuited", [{"type": "text", "text": "ignored"}], 1, [{"id": "w"}], True)

    registry = Registry()
    registry.register(echo_tool(execute=lambda args, run: bodies.append(1) or "x"))
    registry.on_execute(short_circuit)
    result = call(registry, "echo", {"text": "x"})
    assert isinstance(result, ToolSuccess)
    assert result.value == "short-circuited"
    assert plain(result.content) == [{"type": "text", "text": "render:short-circuited"}]
    assert result.meta == {"projected": "short-circuited"}
    assert plain(result.additional_contexts) == [{"id": "w"}]
    assert result.concludes_turn is False  # recomputed from this call's mark
    assert bodies == []


def test_spread_copy_is_renormalized() -> None:
    """digest 7.4: a copy of the real result is a new object, so it is re-normalized."""
    renders: list[Any] = []

    async def spread(run: ToolExecution, nxt: Any) -> Any:
        return dataclasses.replace(await nxt(), content=[{"type": "text", "text": "forged"}])

    registry = Registry()
    registry.register(
        echo_tool(output=Output({"type": "string"}, lambda a, v: renders.append(v) or [{"type": "text", "text": v}]))
    )
    registry.on_execute(spread)
    result = call(registry, "echo", {"text": "x"})
    assert plain(result.content) == [{"type": "text", "text": "x"}]
    assert renders == ["x", "x"]


def test_cached_result_from_another_tool_is_validated_against_this_tool() -> None:
    """digest 7.4: a cached success is revalidated under the active declaration; the body never runs."""
    cache: dict[str, Any] = {}
    bodies: list[str] = []

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        if run.call_id == "first":
            cache["first"] = await nxt()
            return cache["first"]
        return cache["first"]

    registry = Registry()
    registry.register(echo_tool())
    registry.register(
        define_tool(
            name="shout",
            description="",
            parameters={"text": {"type": "string"}},
            output=Output({"type": "string"}, lambda a, v: [{"type": "text", "text": "SHOUT:" + v}], lambda a, v: v),
            execute=lambda args, run: bodies.append("shout") or "never",
        )
    )
    registry.register(
        define_tool(
            name="closed",
            description="",
            parameters={},
            output=Output(
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"n": {"type": "number", "required": True}},
                },
                lambda a, v: [],
            ),
            execute=lambda args, run: bodies.append("closed") or {"n": 1},
        )
    )
    registry.on_execute(wrapper)
    call(registry, "echo", {"text": "cached"}, call_id="first")
    reuse = call(registry, "shout", {"text": "other args"}, call_id="reuse")
    assert isinstance(reuse, ToolSuccess)
    assert reuse.value == "cached" and reuse.meta == "cached"
    assert plain(reuse.content) == [{"type": "text", "text": "SHOUT:cached"}]
    mismatch = call(registry, "closed", call_id="mismatch")
    assert mismatch.error == ToolError(  # type: ignore[union-attr]
        'tool "closed" returned invalid output: "value" must be an object',
        ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"),
    )
    assert bodies == []


def test_renormalization_failure_is_final() -> None:
    """digest 7.4: post-execute does not run and deferred contexts are lost."""
    posts: list[Any] = []

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        run.defer_context({"id": "d"})
        return ToolSuccess(5, [])

    registry = Registry()
    registry.register(echo_tool())
    registry.on_execute(wrapper)
    registry.on_post_execute(lambda run, result, nxt: posts.append(result))
    result = call(registry, "echo")
    assert result.is_error and posts == [] and result.additional_contexts is ABSENT


def test_authored_failure_is_kept_field_by_field() -> None:
    """digest 7.3: error, content (verbatim), meta and contexts kept; nothing re-validated."""

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        return ToolFailure(ToolError("authored", ErrorInfo("X", "Y")), [{"type": "text", "text": "verbatim"}], {"m": 1})

    posts: list[Any] = []
    registry = Registry()
    registry.register(echo_tool())
    registry.on_execute(wrapper)
    registry.on_post_execute(lambda run, result, nxt: (posts.append(result), nxt())[1])
    result = call(registry, "echo")
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError("authored", ErrorInfo("X", "Y"))
    assert plain(result.content) == [{"type": "text", "text": "verbatim"}]
    assert result.meta == {"m": 1}
    assert len(posts) == 1


def test_tool_gone_during_policy() -> None:
    """digest 2.7 / 7.4: the body stage and re-normalization resolve the tool again."""
    registry = Registry()
    dispose = registry.register(echo_tool())

    async def dispose_then_next(run: ToolExecution, nxt: Any) -> Any:
        dispose()
        return await nxt()

    registry.on_execute(dispose_then_next)
    result = call(registry, "echo")
    assert result.error == ToolError('unknown tool "echo"', ErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL"))  # type: ignore[union-attr]


def test_value_replacement_after_the_tool_is_gone() -> None:
    """digest 6.8 step 4: a value replacement resolves the tool again."""
    registry = Registry()
    dispose = registry.register(echo_tool())

    def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        dispose()
        return Accept(value="v")

    registry.on_post_execute(post)
    result = call(registry, "echo")
    assert result.error.message == 'unknown tool "echo"'  # type: ignore[union-attr]


@pytest.mark.parametrize("returned", [None, "text", {"isError": False, "value": 1}, 42])
def test_malformed_wrapper_return_is_a_final_failure(returned: Any) -> None:
    """digest 7.4: a malformed return surfaces as a final-result error (host-specific message)."""
    posts: list[Any] = []
    registry = Registry()
    registry.register(echo_tool())
    registry.on_execute(lambda run, nxt: returned)
    registry.on_post_execute(lambda run, result, nxt: posts.append(result))
    result = call(registry, "echo")
    assert result.is_error
    assert result.error.message == f"tools/execute returned {type(returned).__name__}, not a tool result"
    assert posts == []


def test_tokens_are_opaque_identities() -> None:
    """decisions 10: no public value; not picklable, not copyable; identity decides."""
    token = DispatchToken()
    assert token != DispatchToken()
    for attempt in (lambda: pickle.dumps(token), lambda: copy.copy(token), lambda: copy.deepcopy(token)):
        with pytest.raises(TypeError):
            attempt()


def test_each_call_gets_a_fresh_token_and_results_do_not_carry_it() -> None:
    """digest 7.1: the registry, not the result, remembers the binding."""
    tokens: list[DispatchToken] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: tokens.append(run.token) or 1))
    result = call(registry, "t")
    call(registry, "t")
    assert tokens[0] is not tokens[1]
    assert not any(isinstance(getattr(result, field.name), DispatchToken) for field in dataclasses.fields(result))


def test_result_from_a_concurrent_call_of_the_same_tool_is_renormalized() -> None:
    """digest 7.2: trust is per call token, not per tool."""
    renders: list[Any] = []
    stash: dict[str, Any] = {}

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        if run.call_id == "a":
            stash["a"] = await nxt()
            return stash["a"]
        return stash["a"]

    registry = Registry()
    registry.register(echo_tool(output=Output({"type": "string"}, lambda a, v: renders.append(a["text"]) or [])))
    registry.on_execute(wrapper)

    async def scenario() -> None:
        await registry.execute(Call("a", "echo", {"text": "first"}))
        await registry.execute(Call("b", "echo", {"text": "second"}))

    asyncio.run(scenario())
    assert renders == ["first", "second"]  # re-rendered with b's arguments
