"""Cancellation with an explicit abort signal (digest 8.x, 6.2, 6.6)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    Call,
    Deny,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
)
from toolcanon.result import ErrorInfo, ToolError

BEFORE = ToolError("tool call aborted before dispatch", ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH"))
AFTER = ToolError("tool call aborted", ErrorInfo("AbortError", "ABORTED"))


def _aborted() -> AbortController:
    controller = AbortController()
    controller.abort("stop")
    return controller


def test_pre_aborted_call_runs_no_phase() -> None:
    """digest 8.1 / 12.3 / 6.2: final-result, zero phases, finalizer once, one observer notification."""
    phases: list[str] = []
    registry = Registry()
    registry.register(echo_tool(finalize_content=lambda run, result: phases.append("finalize")))
    registry.on_pre_execute(lambda run, nxt: phases.append("pre"))
    registry.on_post_execute(lambda run, result, nxt: phases.append("post"))
    registry.on_result(lambda run, result: phases.append("observed"))
    result = call(registry, "echo", {"text": "x"}, signal=_aborted().signal)
    assert isinstance(result, ToolFailure) and result.error == BEFORE
    assert plain(result.content) == [{"type": "text", "text": "Error: tool call aborted before dispatch"}]
    assert phases == ["finalize", "observed"]


def test_late_cancel_after_allow_is_a_post_result() -> None:
    """digest 6.6 / 8.2: cancelled during pre-execute, after allow and guards."""
    controller = AbortController()
    posts: list[Any] = []
    registry = Registry()
    registry.register(echo_tool())

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        controller.abort()
        return await nxt()

    registry.on_pre_execute(pre)
    registry.on_post_execute(lambda run, result, nxt: (posts.append(result), nxt())[1])
    result = call(registry, "echo", signal=controller.signal)
    assert result.error == BEFORE  # type: ignore[union-attr]
    assert len(posts) == 1


def test_denial_beats_cancellation() -> None:
    """digest 6.5 / 8.4: a denial that settles after cancellation keeps the denial."""
    controller = AbortController()
    registry = Registry()
    registry.register(echo_tool())

    def pre(run: ToolExecution, nxt: Any) -> Any:
        controller.abort()
        return Deny("denied")

    registry.on_pre_execute(pre)
    result = call(registry, "echo", signal=controller.signal)
    assert result.error == ToolError("denied")  # type: ignore[union-attr]


def test_approval_cancelled_with_cancelled_caller() -> None:
    """digest 6.3 / 8.2: approval-cancelled plus a cancelled caller gives ABORTED_BEFORE_DISPATCH."""
    from toolcanon import Ask

    controller = AbortController()

    def approve(request: Any) -> str:
        controller.abort()
        return "cancelled"

    registry = Registry(approval=approve)
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Ask())
    result = call(registry, "echo", signal=controller.signal, agent="a")
    assert result.error == BEFORE  # type: ignore[union-attr]


def test_wrapper_replacement_signal_aborted_before_body() -> None:
    """digest 8.2: the fused signal is checked before tool resolution, even for an unknown tool."""
    replacement = _aborted()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        run.signal = replacement.signal
        return await nxt()

    bodies: list[int] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: bodies.append(1) or 1))
    registry.on_execute(wrapper)
    assert call(registry, "t").error == BEFORE  # type: ignore[union-attr]
    assert call(registry, "missing").error == BEFORE  # type: ignore[union-attr]
    assert bodies == []


def test_abort_while_the_body_runs_gives_aborted_after_it_settles() -> None:
    """digest 8.1 / 8.3 / 8.5: a started body is always awaited; ABORTED only after it settles."""
    controller = AbortController()
    events: list[str] = []

    async def body(args: Any, run: ToolExecution) -> Any:
        controller.abort()
        await run.signal.wait()  # type: ignore[union-attr]
        await asyncio.sleep(0.01)
        events.append("body settled")
        return "woke"

    registry = Registry()
    registry.register(raw_tool("t", body))
    registry.on_result(lambda run, result: events.append("observed"))
    result = call(registry, "t", signal=controller.signal)
    assert result.error == AFTER  # type: ignore[union-attr]
    assert events == ["body settled", "observed"]


def test_abort_after_next_replaces_the_success() -> None:
    """digest 8.3: cancelled by the end of the around stage; contexts kept; value/meta dropped."""
    controller = AbortController()

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d"})
        return "v"

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        controller.abort()
        return result

    registry = Registry()
    registry.register(echo_tool(execute=body))
    registry.on_execute(wrapper)
    result = call(registry, "echo", signal=controller.signal)
    assert isinstance(result, ToolFailure) and result.error == AFTER
    assert plain(result.additional_contexts) == [{"id": "d"}]
    assert not result.has_meta


def test_abort_during_post_replaces_the_success() -> None:
    """digest 8.3 / 6.8 step 7."""
    controller = AbortController()

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        controller.abort()
        return await nxt()

    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(post)
    assert call(registry, "echo", signal=controller.signal).error == AFTER  # type: ignore[union-attr]


def test_short_circuit_success_with_cancelled_caller_is_before_dispatch() -> None:
    """digest 8.2: bodyInvoked=false successes become ABORTED_BEFORE_DISPATCH, contexts preserved."""
    controller = AbortController()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        controller.abort()
        return ToolSuccess("short", [], additional_contexts=[{"id": "w"}])

    registry = Registry()
    registry.register(echo_tool())
    registry.on_execute(wrapper)
    result = call(registry, "echo", signal=controller.signal)
    assert result.error == BEFORE  # type: ignore[union-attr]
    assert plain(result.additional_contexts) == [{"id": "w"}]


def test_a_cancellation_drops_an_empty_list_of_contexts_at_every_point() -> None:
    """digest 6.11 / 8.3: as the original's cancellation results, contexts only when there are some; a success
    that is not cancelled keeps its empty list (R-RES-5)."""
    controller: AbortController | None = None

    def cancel() -> None:
        assert controller is not None
        controller.abort()

    async def short_circuit(run: ToolExecution, nxt: Any) -> Any:
        if run.call_id != "kept":
            cancel()
        return ToolSuccess("short", [], additional_contexts=[])

    async def spread_after_next(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        if run.call_id == "around":
            cancel()
        return dataclasses.replace(result, additional_contexts=[])

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.call_id == "post":
            cancel()
        return await nxt()

    for wrapper, call_id, error in [
        (short_circuit, "kept", None),
        (short_circuit, "short", BEFORE),
        (spread_after_next, "around", AFTER),
        (spread_after_next, "post", AFTER),
    ]:
        controller = AbortController()
        registry = Registry()
        registry.register(echo_tool())
        registry.on_execute(wrapper)
        registry.on_post_execute(post)
        result = call(registry, "echo", {"text": "x"}, call_id=call_id, signal=controller.signal)
        if error is None:
            assert isinstance(result, ToolSuccess) and plain(result.additional_contexts) == []
        else:
            assert isinstance(result, ToolFailure) and result.error == error, call_id
            assert result.additional_contexts is ABSENT, call_id


def test_every_failure_beats_cancellation() -> None:
    """digest 8.4: a body error (incl. an output error) keeps its own message when the caller aborts."""
    controller = AbortController()

    def body(args: Any, run: ToolExecution) -> Any:
        controller.abort()
        return 5  # not a string: INVALID_TOOL_OUTPUT

    registry = Registry()
    registry.register(echo_tool(execute=body))
    result = call(registry, "echo", signal=controller.signal)
    assert result.error.info == ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT")  # type: ignore[union-attr]


def test_invalid_args_count_as_body_invoked() -> None:
    """digest 8.5: a define_tool argument failure counts as invoked, so a later cancellation is ABORTED."""
    controller = AbortController()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        failed = await nxt()
        assert failed.is_error
        controller.abort()
        return ToolSuccess("recovered", [])

    registry = Registry()
    registry.register(echo_tool(parameters={"text": {"type": "string", "required": True}}))
    registry.on_execute(wrapper)
    assert call(registry, "echo", {}, signal=controller.signal).error == AFTER  # type: ignore[union-attr]


def test_signal_listeners_are_released_after_the_call() -> None:
    """Fusing must not leak listeners on a long-lived caller signal."""
    controller = AbortController()
    registry = Registry()
    registry.register(echo_tool())

    async def many() -> None:
        for index in range(50):
            await registry.execute(Call(f"c{index}", "echo", {}, signal=controller.signal))

    asyncio.run(many())
    assert not controller.signal._listeners
