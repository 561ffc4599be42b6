"""Arguments, output normalization and the result union (digest 2.x, 4.x, 5.x, 12.3, 12.6)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from conftest import call, echo_tool, plain, raw_tool, text_render
from toolcanon import (
    ABSENT,
    Call,
    FrozenError,
    HarnessError,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
    define_tool,
)
from toolcanon.result import ErrorInfo, ToolError


def _output_error(tool: str, detail: str) -> str:
    return f'tool "{tool}" returned invalid output: {detail}'


def _assert_output_failure(result: Any, tool: str, detail: str) -> None:
    message = _output_error(tool, detail)
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError(message, ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"))
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]
    assert not hasattr(result, "value")


# --- arguments (digest 2.x) ----------------------------------------------------------------------------


def test_arguments_are_snapshot_frozen_and_not_aliased() -> None:
    """digest 2.2: every phase sees the same frozen copy; the caller's object is neither frozen nor aliased."""
    seen: list[Any] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: seen.append(args) or 1))
    registry.on_pre_execute(lambda run, nxt: (seen.append(run.arguments), nxt())[1])
    arguments = {"nested": {"list": [1, 2]}}
    result = call(registry, "t", arguments)
    assert not result.is_error
    assert seen[0] is seen[1]
    assert seen[0] == arguments and seen[0] is not arguments
    with pytest.raises(FrozenError):
        seen[0]["nested"]["list"].append(3)
    arguments["nested"]["list"].append(3)  # the caller's object stays mutable
    assert seen[0]["nested"]["list"] == [1, 2]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.0, 2**53, (1,), {1: "a"}, object(), len])
def test_argument_snapshot_failure_is_final(bad: Any) -> None:
    """digest 2.3: no phase runs; plain TypeError message without info; finalizer still runs once."""
    phases: list[str] = []
    finalized: list[Any] = []
    registry = Registry()
    registry.register(echo_tool(finalize_content=lambda run, result: finalized.append(run.arguments)))
    registry.on_pre_execute(lambda run, nxt: phases.append("pre"))
    registry.on_post_execute(lambda run, result, nxt: phases.append("post"))
    registry.on_result(lambda run, result: phases.append("observed"))
    result = call(registry, "echo", {"text": "a", "x": bad})
    message = "tool execution arguments must be losslessly JSON-serializable"
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError(message, None)
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]
    assert phases == ["observed"]
    assert finalized == [None]  # exec.arguments is absent


def test_argument_failure_beats_a_pre_aborted_signal() -> None:
    """digest 2.3 / 8.4."""
    from toolcanon import AbortController

    controller = AbortController()
    controller.abort()
    registry = Registry()
    registry.register(echo_tool())
    result = call(registry, "echo", {"x": math.nan}, signal=controller.signal)
    assert result.is_error and result.error.info is None


def test_invalid_args_come_from_define_tool_and_reach_post_execute() -> None:
    """digest 1.12 / 2.4 / 1.32: INVALID_ARGS thrown inside the body; post-execute still runs."""
    posts: list[Any] = []
    registry = Registry()
    registry.register(
        echo_tool(
            parameters={
                "text": {"type": "string", "required": True},
                "tags": {"type": "array", "items": {"type": "string"}},
            }
        )
    )
    registry.on_post_execute(lambda run, result, nxt: (posts.append(result), nxt())[1])
    result = call(registry, "echo", {"tags": ["a", 1]})
    assert isinstance(result, ToolFailure)
    message = 'invalid arguments: missing required property "text"; "tags[1]" must be a string'
    assert result.error == ToolError(message, ErrorInfo("ToolArgsError", "INVALID_ARGS"))
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]
    assert len(posts) == 1


def test_arguments_that_are_not_an_object() -> None:
    """digest 2.6: a raw string argument is rejected by define_tool as not an object."""
    registry = Registry()
    registry.register(echo_tool())
    result = call(registry, "echo", "not json")
    assert result.is_error and result.error.message == 'invalid arguments: "arguments" must be an object'


def test_extra_keys_are_allowed_and_defaults_never_applied() -> None:
    """digest 2.5."""
    seen: list[Any] = []
    registry = Registry()
    registry.register(
        echo_tool(
            parameters={"text": {"type": "string", "default": "d"}},
            execute=lambda args, run: seen.append(plain(args)) or "ok",
        )
    )
    assert not call(registry, "echo", {"extra": 1}).is_error
    assert seen == [{"extra": 1}]


def test_raw_tools_are_not_validated() -> None:
    """digest 2.4: raw definitions receive whatever snapshot was made."""
    seen: list[Any] = []
    registry = Registry()
    registry.register(
        raw_tool("t", lambda args, run: seen.append(args) or 1, parameters={"type": "object", "required": ["x"]})
    )
    assert not call(registry, "t", [1, 2]).is_error
    assert seen == [[1, 2]]


def test_unknown_tool_goes_through_the_pipeline() -> None:
    """digest 2.7: pre, guards and wrappers run; failure in the body stage; post runs."""
    phases: list[str] = []
    registry = Registry()
    registry.on_pre_execute(lambda run, nxt: (phases.append("pre"), nxt())[1])
    registry.add_guard(lambda run: phases.append("guard"))
    registry.on_execute(lambda run, nxt: (phases.append("execute"), nxt())[1])
    registry.on_post_execute(lambda run, result, nxt: (phases.append("post"), nxt())[1])
    result = call(registry, "nope")
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError('unknown tool "nope"', ErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL"))
    assert plain(result.content) == [{"type": "text", "text": 'Error: unknown tool "nope"'}]
    assert phases == ["pre", "guard", "execute", "post"]


# --- normalization (digest 4.x) ----------------------------------------------------------------------


def test_normalization_order_and_frozen_value() -> None:
    """digest 1.1 / 1.2 / 1.3 / 4.1: render and meta get the frozen args and frozen value."""
    seen: dict[str, Any] = {}

    def render(args: Any, value: Any) -> Any:
        seen["render"] = (args, value)
        return [{"type": "text", "text": value["a"]}]

    def meta(args: Any, value: Any) -> Any:
        seen["meta"] = (args, value)
        return {"len": len(value["a"])}

    registry = Registry()
    registry.register(
        define_tool(
            name="t",
            description="",
            parameters={"q": {"type": "string"}},
            output=Output({"type": "object", "additionalProperties": True}, render, meta),
            execute=lambda args, run: {"a": "xyz"},
        )
    )
    result = call(registry, "t", {"q": "1"})
    assert isinstance(result, ToolSuccess)
    assert result.value == {"a": "xyz"}
    assert seen["render"][1] is result.value and seen["meta"][1] is result.value
    assert seen["render"][0] == {"q": "1"}
    assert result.meta == {"len": 3}
    with pytest.raises(FrozenError):
        result.value["b"] = 1


@pytest.mark.parametrize("bad", [math.nan, [1, math.inf], {"k": (1,)}, {1: 2}, object()])
def test_non_lossless_body_value(bad: Any) -> None:
    """digest 4.7 / 3.7 value row / 4.2."""
    registry = Registry()
    registry.register(raw_tool("num", lambda a, r: bad))
    _assert_output_failure(call(registry, "num"), "num", "value is not lossless JSON")


def test_schema_violations_listed_in_order() -> None:
    """digest 4.1 step 2 / 1.32: root label ``value``."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"x": {"type": "string"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    }
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: {"x": 1, "z": True}, schema=schema))
    _assert_output_failure(
        call(registry, "t"),
        "t",
        'missing required property "value.y"; "value.x" must be a string; '
        '"value.z" is not a declared property (additionalProperties: false)',
    )


def test_render_failure_and_non_lossless_render() -> None:
    """digest 4.1 steps 4-5."""

    def explode(args: Any, value: Any) -> Any:
        raise ValueError("render exploded")

    registry = Registry()
    registry.register(raw_tool("r", lambda a, r: "ok", output=Output({}, explode)))
    registry.register(raw_tool("n", lambda a, r: "ok", output=Output({}, lambda a, v: [{"text": math.nan}])))
    _assert_output_failure(call(registry, "r"), "r", "output.render failed: render exploded")
    _assert_output_failure(call(registry, "n"), "n", "output.render returned non-lossless JSON")


def test_render_output_shape_is_not_checked() -> None:
    """digest 0.2 / 4.6 (pinned leniency): only losslessness is checked."""
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, lambda a, v: "not blocks")))
    result = call(registry, "t")
    assert not result.is_error and result.content == "not blocks"


def test_presentation_meta_rules() -> None:
    """digest 4.4: null kept as present; absent without projector; failures are ToolOutputErrors."""

    def boom(args: Any, value: Any) -> Any:
        raise RuntimeError("meta boom")

    registry = Registry()
    registry.register(raw_tool("null", lambda a, r: 1, output=Output({}, text_render(), lambda a, v: None)))
    registry.register(raw_tool("none", lambda a, r: 1))
    registry.register(raw_tool("raise", lambda a, r: 1, output=Output({}, text_render(), boom)))
    registry.register(raw_tool("fn", lambda a, r: 1, output=Output({}, text_render(), lambda a, v: len)))
    null = call(registry, "null")
    assert null.has_meta and null.meta is None
    none = call(registry, "none")
    assert not none.has_meta and none.meta is ABSENT
    _assert_output_failure(call(registry, "raise"), "raise", "output.presentationMeta failed: meta boom")
    _assert_output_failure(call(registry, "fn"), "fn", "output.presentationMeta returned non-lossless JSON")


def test_meta_only_for_direct_calls() -> None:
    """digest 4.4 / 0.5: any parent token makes the call nested; nested calls get no meta."""
    from toolcanon import DispatchToken

    registry = Registry()
    registry.register(echo_tool())
    direct = call(registry, "echo", {"text": "a"})
    nested = call(registry, "echo", {"text": "a"}, parent=DispatchToken())
    assert direct.meta == {"projected": "a"}
    assert not nested.has_meta


def test_render_runs_on_every_normalization() -> None:
    """digest 4.5: not cached (body, then a post-execute value replacement)."""
    from toolcanon import Accept

    renders: list[Any] = []
    registry = Registry()
    registry.register(echo_tool(output=Output({"type": "string"}, lambda a, v: renders.append(v) or [])))
    registry.on_post_execute(lambda run, result, nxt: Accept(value="policy"))
    result = call(registry, "echo", {"text": "body"})
    assert renders == ["body", "policy"]
    assert result.value == "policy"


# --- the result union (digest 5.x) --------------------------------------------------------------------


class DiskError(HarnessError):
    def __init__(self) -> None:
        super().__init__("disk full", "ENOSPC")


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("cannot print")


class _WithMessage:
    message = "object message"


class _BadMessageError(Exception):
    pass


@pytest.mark.parametrize(
    ("thrown", "message", "info"),
    [
        (DiskError(), "disk full", ErrorInfo("DiskError", "ENOSPC")),
        (HarnessError("plain", "CODE"), "plain", ErrorInfo("HarnessError", "CODE")),
        (HarnessError("named", "CODE", name="Custom"), "named", ErrorInfo("Custom", "CODE")),
        (ValueError("plain error"), "plain error", None),
        (TypeError("type error"), "type error", None),
        (KeyError("k"), "k", None),
    ],
    ids=["subclass", "base", "named", "value-error", "type-error", "key-error"],
)
def test_info_only_for_harness_errors(thrown: BaseException, message: str, info: ErrorInfo | None) -> None:
    """digest 0.3 / 12.3 / 5.4 / 5.6: info {name, code} exactly for HarnessErrors."""

    def body(args: Any, run: ToolExecution) -> Any:
        raise thrown

    registry = Registry()
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError(message, info)
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]


def test_message_extraction_is_total() -> None:
    """digest 5.5: objects with a string message, anything else str(); unprintable values."""
    from toolcanon.errors import error_message

    assert error_message(_WithMessage()) == "object message"
    assert error_message("kaboom") == "kaboom"
    assert error_message({"code": 500}) == "{'code': 500}"
    assert error_message(_Unprintable()) == "<unprintable thrown value>"
    assert error_message(_BadMessageError()) == ""


def test_failure_never_has_value_or_concludes() -> None:
    """digest 5.2."""
    registry = Registry()

    def body(args: Any, run: ToolExecution) -> Any:
        run.conclude_turn()
        raise RuntimeError("x")

    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert result.is_error and not hasattr(result, "value") and result.concludes_turn is False


def test_success_fields_and_concludes_turn() -> None:
    """digest 5.1 / 6.12."""
    registry = Registry()

    def body(args: Any, run: ToolExecution) -> Any:
        run.conclude_turn()
        return 1

    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess)
    assert result.concludes_turn is True and result.additional_contexts is ABSENT


def test_final_result_is_deep_frozen() -> None:
    """digest 0.4 / 3.8 / 5.3 / 12.6: value, content, meta and contexts are frozen."""
    registry = Registry()

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d", "text": "t"})
        return {"a": [1]}

    registry.register(
        raw_tool(
            "t",
            body,
            output=Output({}, lambda a, v: [{"type": "text", "text": "x"}], lambda a, v: {"m": [1]}),
        )
    )
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess)
    for container in (
        result.value["a"],
        result.content,
        result.content[0],
        result.meta["m"],
        result.additional_contexts[0],
    ):
        with pytest.raises(FrozenError):
            container.clear()
    with pytest.raises(AttributeError):
        result.value = 2  # type: ignore[misc]


def test_async_bodies_and_renderers_callers() -> None:
    """decisions 11: bodies may be async."""

    async def body(args: Any, run: ToolExecution) -> Any:
        await asyncio.sleep(0)
        return "async"

    registry = Registry()
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert not result.is_error and result.value == "async"


def test_call_input_defaults() -> None:
    """digest 2.1: rootCallId defaults to callId."""
    seen: list[ToolExecution] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: seen.append(run) or 1))
    asyncio.run(registry.execute(Call("id-1", "t", {})))
    asyncio.run(registry.execute(Call("id-2", "t", {}, root_call_id="root")))
    assert (seen[0].call_id, seen[0].root_call_id) == ("id-1", "id-1")
    assert (seen[1].call_id, seen[1].root_call_id) == ("id-2", "root")
