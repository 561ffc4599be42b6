"""The pipeline: pre-execute, guards, wrappers, post-execute, finish, observers, contexts (digest 6.x, 12.x)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    Accept,
    Allow,
    ApprovalRequest,
    Ask,
    Block,
    Call,
    Deny,
    HarnessError,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
)
from toolcanon.result import ErrorInfo, ToolError


class Recorder:
    """Installs one pass-through hook per stage and records the order the stages are entered."""

    def __init__(self, registry: Registry) -> None:
        self.phases: list[str] = []
        registry.on_pre_execute(self.pre)
        registry.add_guard(self.guard)
        registry.on_execute(self.execute)
        registry.on_post_execute(self.post)
        registry.on_result(self.observe)

    async def pre(self, run: ToolExecution, nxt: Any) -> Any:
        self.phases.append("pre")
        return await nxt()

    def guard(self, run: ToolExecution) -> None:
        self.phases.append("guard")

    async def execute(self, run: ToolExecution, nxt: Any) -> Any:
        self.phases.append("execute:before")
        result = await nxt()
        self.phases.append("execute:after")
        return result

    async def post(self, run: ToolExecution, result: Any, nxt: Any) -> Any:
        self.phases.append("post")
        return await nxt()

    def observe(self, run: ToolExecution, result: Any) -> None:
        self.phases.append("observed")


def _registry_with_echo(**overrides: Any) -> tuple[Registry, Recorder, list[str]]:
    registry = Registry()
    recorder = Recorder(registry)
    body_calls: list[str] = []

    def body(args: Any, run: ToolExecution) -> Any:
        recorder.phases.append("body")
        body_calls.append(args.get("text", ""))
        return args.get("text", "")

    registry.register(echo_tool(execute=body, **overrides))
    return registry, recorder, body_calls


def test_phase_order() -> None:
    """digest 6.1 / 6.14 / 6.7: pre → execute:before → body → execute:after → post, then the observer."""
    registry, recorder, _ = _registry_with_echo()
    result = call(registry, "echo", {"text": "hi"})
    assert not result.is_error
    assert recorder.phases == ["pre", "guard", "execute:before", "body", "execute:after", "post", "observed"]


# --- pre-execute (6.3-6.6) --------------------------------------------------------------------------


def test_deny_is_a_post_result_without_info() -> None:
    """digest 6.5: denial content ``Error: <reason>``; post-execute sees it already frozen; no wrapper."""
    registry, recorder, _ = _registry_with_echo()
    seen: list[Any] = []
    registry.on_pre_execute(lambda run, nxt: Deny("denied by policy"))
    registry.on_post_execute(lambda run, result, nxt: (seen.append(result), nxt())[1])
    result = call(registry, "echo", {"text": "x"})
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError("denied by policy", None)
    assert plain(result.content) == [{"type": "text", "text": "Error: denied by policy"}]
    assert recorder.phases == ["pre", "post", "observed"]
    with pytest.raises(TypeError):
        seen[0].content.append(1)


def test_listener_without_next_vetoes_inner_listeners() -> None:
    """digest 6.3: outermost first in registration order; prepend makes a listener outermost."""
    order: list[str] = []
    registry = Registry()
    registry.register(echo_tool())

    async def outer(run: ToolExecution, nxt: Any) -> Any:
        order.append("outer")
        return await nxt()

    def veto(run: ToolExecution, nxt: Any) -> Any:
        order.append("veto")
        return Deny("vetoed")

    registry.on_pre_execute(veto)
    registry.on_pre_execute(lambda run, nxt: order.append("inner"))
    registry.on_pre_execute(outer, prepend=True)
    result = call(registry, "echo")
    assert order == ["outer", "veto"]
    assert result.is_error and result.error.message == "vetoed"


def test_ask_without_approval_service() -> None:
    """digest 6.3: deny with the ask reason, or the default text."""
    registry, _, _ = _registry_with_echo()
    dispose = registry.on_pre_execute(lambda run, nxt: Ask())
    assert call(registry, "echo").error.message == 'tool "echo" requires approval (not yet supported)'  # type: ignore[union-attr]
    dispose()
    registry.on_pre_execute(lambda run, nxt: Ask("needs approval"))
    assert call(registry, "echo").error.message == "needs approval"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ("allowed-once", None),
        ("rejected", 'the user rejected tool "echo"'),
        ("cancelled", 'approval for tool "echo" was cancelled'),
        ("unavailable", 'tool "echo" requires approval, but no approval channel is available'),
        ("maybe", 'unreachable variant in ApprovalOutcome: "maybe"'),
    ],
)
def test_approval_outcomes(outcome: str, expected: str | None) -> None:
    """digest 6.3 / 12.7: the request carries agent, tool name, call id, reason and the caller signal."""
    requests: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> str:
        requests.append(request)
        return outcome

    registry = Registry(approval=approve)
    recorder = Recorder(registry)
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Ask("why"))
    result = call(registry, "echo", {"text": "ok"}, agent="agent-1")
    assert requests[0].tool_name == "echo" and requests[0].call_id == "c1"
    assert requests[0].agent == "agent-1" and requests[0].reason == "why" and requests[0].signal is None
    if expected is None:
        assert not result.is_error and result.value == "ok"
        return
    assert result.is_error and result.error.message == expected and result.error.info is None
    if outcome == "maybe":  # a throw in the pre stage is a final-result: no post-execute
        assert "post" not in recorder.phases
    else:
        assert "post" in recorder.phases


def test_ask_without_agent() -> None:
    """digest 6.3."""
    registry = Registry(approval=lambda request: "allowed-once")
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Ask())
    result = call(registry, "echo")
    assert result.error.message == 'tool "echo" requires approval, but the call has no agent to route it through'  # type: ignore[union-attr]


def test_guards_run_only_after_allow_and_first_reason_wins() -> None:
    """digest 6.4."""
    calls: list[str] = []
    registry, recorder, _ = _registry_with_echo()
    registry.add_guard(lambda run: calls.append("first"))
    registry.add_guard(lambda run: (calls.append("second"), "guarded")[1])
    registry.add_guard(lambda run: calls.append("third"))
    result = call(registry, "echo")
    assert calls == ["first", "second"]
    assert result.is_error and result.error.message == "guarded"
    assert plain(result.content) == [{"type": "text", "text": "Error: guarded"}]
    assert "post" in recorder.phases and "execute:before" not in recorder.phases
    calls.clear()
    registry.on_pre_execute(lambda run, nxt: Deny("denied"))
    call(registry, "echo")
    assert calls == []


@pytest.mark.parametrize("stage", ["pre", "guard", "approval"])
def test_throw_before_dispatch_is_a_final_result(stage: str) -> None:
    """digest 6.6: a throwing listener, guard or approval hook skips post-execute; info kept."""

    def boom(*args: Any) -> Any:
        raise HarnessError("denied", "DENIED")

    registry = Registry(approval=boom if stage == "approval" else None)
    recorder = Recorder(registry)
    registry.register(echo_tool())
    if stage == "pre":
        registry.on_pre_execute(boom)
    elif stage == "guard":
        registry.add_guard(boom)
    else:
        registry.on_pre_execute(lambda run, nxt: Ask())
    result = call(registry, "echo", agent="a")
    assert result.error == ToolError("denied", ErrorInfo("HarnessError", "DENIED"))  # type: ignore[union-attr]
    assert "post" not in recorder.phases and recorder.phases[-1] == "observed"


def test_non_decision_from_pre_execute_is_a_final_failure() -> None:
    """A Python-specific decision: a listener returning something that is not a decision fails the call."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: "allow")
    result = call(registry, "echo")
    assert result.is_error and result.error.message == "tools/pre-execute returned str, not a decision"


# --- around wrappers (6.7, 6.13, 12.8) ----------------------------------------------------------------


def test_body_failure_reaches_wrapper_as_normalized_failure_and_post_runs() -> None:
    """digest 6.7."""
    seen: list[Any] = []

    def body(args: Any, run: ToolExecution) -> Any:
        raise RuntimeError("exploded")

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        seen.append(result)
        return result

    registry = Registry()
    recorder = Recorder(registry)
    registry.on_execute(wrapper)
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert isinstance(seen[0], ToolFailure) and seen[0].error.message == "exploded"
    assert result.is_error and "post" in recorder.phases


def test_wrapper_throw_is_final_and_loses_deferred_contexts() -> None:
    """digest 6.7 / 6.11."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d"})
        return 1

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        await nxt()
        raise HarnessError("wrapper failed", "WRAPPER_FAILURE")

    registry = Registry()
    recorder = Recorder(registry)
    registry.on_execute(wrapper)
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert result.error == ToolError("wrapper failed", ErrorInfo("HarnessError", "WRAPPER_FAILURE"))  # type: ignore[union-attr]
    assert result.additional_contexts is ABSENT
    assert "post" not in recorder.phases


def test_wrapper_signal_replacement_is_fused() -> None:
    """digest 6.13 / 12.8: the body sees a fresh fused signal; exec.signal restored to the wrapper's."""
    from toolcanon import AbortController

    caller = AbortController()
    replacement = AbortController()
    seen: dict[str, Any] = {}

    def body(args: Any, run: ToolExecution) -> Any:
        seen["body"] = run.signal
        return 1

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        original = run.signal
        run.signal = replacement.signal
        result = await nxt()
        seen["after"] = run.signal
        run.signal = original
        return result

    registry = Registry()
    registry.on_execute(wrapper)
    registry.register(raw_tool("t", body))
    result = call(registry, "t", signal=caller.signal)
    assert not result.is_error
    assert seen["body"] is not caller.signal and seen["body"] is not replacement.signal
    assert seen["after"] is replacement.signal


# --- post-execute (6.8) --------------------------------------------------------------------------------


def _post(decision: Any) -> Any:
    return lambda run, result, nxt: decision


def test_accept_content_keeps_value_and_meta() -> None:
    """digest 6.8 step 5: content replacement is not redaction."""
    registry, _, _ = _registry_with_echo()
    registry.on_post_execute(_post(Accept(content=[{"type": "text", "text": "policy content"}])))
    result = call(registry, "echo", {"text": "body"})
    assert isinstance(result, ToolSuccess)
    assert result.value == "body" and result.meta == {"projected": "body"}
    assert plain(result.content) == [{"type": "text", "text": "policy content"}]


def test_accept_value_revalidates_rerenders_and_recomputes_meta() -> None:
    """digest 7.5 / 6.8 step 4."""
    registry, _, _ = _registry_with_echo()
    registry.on_post_execute(_post(Accept(value="policy value", additional_contexts=[{"id": "post"}])))
    result = call(registry, "echo", {"text": "body"})
    assert isinstance(result, ToolSuccess)
    assert result.value == "policy value"
    assert plain(result.content) == [{"type": "text", "text": "render:policy value"}]
    assert result.meta == {"projected": "policy value"}
    assert plain(result.additional_contexts) == [{"id": "post"}]


def test_invalid_value_replacement_is_a_final_output_error() -> None:
    """digest 6.8 step 4 / 4.3."""
    registry, _, _ = _registry_with_echo()
    registry.on_post_execute(_post(Accept(value=5)))
    result = call(registry, "echo", {"text": "body"})
    assert result.error == ToolError(  # type: ignore[union-attr]
        'tool "echo" returned invalid output: "value" must be a string',
        ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"),
    )
    assert not hasattr(result, "value")


def test_accept_both_is_an_error() -> None:
    """digest 6.8 step 2: own-key presence decides, even for None."""
    registry, _, _ = _registry_with_echo()
    registry.on_post_execute(_post(Accept(content=[], value=None)))
    result = call(registry, "echo", {"text": "x"})
    assert result.error == ToolError("tools/post-execute accept decision cannot replace both value and content")  # type: ignore[union-attr]
    assert plain(result.content) == [
        {
            "type": "text",
            "text": "Error: tools/post-execute accept decision cannot replace both value and content",
        }
    ]


def test_value_replacement_on_a_failure_is_an_error() -> None:
    """digest 6.8 step 3."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Deny("no"))
    registry.on_post_execute(_post(Accept(value="v")))
    result = call(registry, "echo")
    assert result.error.message == "tools/post-execute cannot replace the value of a failed result"  # type: ignore[union-attr]


def test_content_replacement_works_on_failures() -> None:
    registry = Registry()
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Deny("no"))
    registry.on_post_execute(_post(Accept(content=[{"type": "text", "text": "softened"}])))
    result = call(registry, "echo")
    assert result.is_error and result.error.message == "no"
    assert plain(result.content) == [{"type": "text", "text": "softened"}]


def test_a_tuple_of_accept_contexts_follows_the_contexts_the_body_deferred() -> None:
    """A decision's contexts given as a tuple (Python code may) are taken as a list, after the deferred ones."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d"})
        return 1

    registry = Registry()
    registry.register(raw_tool("t", body))
    registry.on_post_execute(_post(Accept(additional_contexts=({"id": "a"},))))
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess), result
    assert plain(result.additional_contexts) == [{"id": "d"}, {"id": "a"}]


def test_block_drops_value_meta_contexts_and_concludes() -> None:
    """digest 6.8 step 1: feedback verbatim; message derived; only the decision's non-empty contexts."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "deferred"})
        run.conclude_turn()
        return "v"

    registry = Registry()
    registry.register(echo_tool(execute=body))
    feedback = [{"type": "text", "text": "blocked"}, {"type": "image", "attachment": {}}]
    dispose = registry.on_post_execute(_post(Block(feedback)))
    result = call(registry, "echo")
    assert isinstance(result, ToolFailure)
    assert result.error == ToolError("blocked\n[image content]")
    assert plain(result.content) == feedback
    assert not result.has_meta and result.additional_contexts is ABSENT and result.concludes_turn is False
    dispose()
    dispose = registry.on_post_execute(_post(Block([], additional_contexts=[])))
    result = call(registry, "echo")
    assert result.error.message == "tool result blocked by post-execute policy"  # type: ignore[union-attr]
    assert result.additional_contexts is ABSENT
    dispose()
    registry.on_post_execute(_post(Block([{"type": "text", "text": "b"}], additional_contexts=[{"id": "block"}])))
    result = call(registry, "echo")
    assert plain(result.additional_contexts) == [{"id": "block"}]


@pytest.mark.parametrize(
    ("feedback", "message"),
    [
        (
            [
                {"type": "text"},
                {"type": 5},
                {"type": "text", "text": None},
                {"type": "text", "text": 2.0},
                {"type": None},
                "str",
            ],
            "\n[5 content]\n\n2\n[null content]\n[undefined content]",
        ),
        (
            [
                {"type": "text", "text": [1, [None, "x"], {"a": 1}]},
                {"type": [1, "b"]},
                {"type": {"k": 1}},
                {"type": True},
                {"type": "text", "text": False},
                {"type": "text", "text": 1e21},
            ],
            "1,,x,[object Object]\n[1,b content]\n[[object Object] content]\n[true content]\nfalse\n1e+21",
        ),
        ([5, True, [1], "text", {"text": "no type"}], "\n".join(["[undefined content]"] * 5)),
        ([{"type": "text"}], "tool result blocked by post-execute policy"),
        ([{"type": "text", "text": None}, {"type": "text"}], "\n"),
    ],
    ids=["mixed", "containers", "not-records", "one-missing-text", "two-empty-texts"],
)
def test_block_message_prints_its_blocks_as_the_original_does(feedback: list[Any], message: str) -> None:
    """digest 6.8 step 1: ``block.type === 'text' ? block.text : `[${block.type} content]` `` joined by ``\\n``:
    ``join`` prints a missing or null text as nothing, the template literal a missing type as ``undefined``, and
    both print any other value as ``String()`` does."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(_post(Block(feedback)))
    result = call(registry, "echo", {"text": "x"})
    assert isinstance(result, ToolFailure) and result.error == ToolError(message)
    assert plain(result.content) == feedback


def test_a_null_block_in_feedback_fails_the_call() -> None:
    """digest 6.8 steps 1 and 6: reading a ``null`` block's type throws in the original, so the call is a final
    failure without info or contexts, whatever the blocks beside it."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(
        _post(Block([{"type": "text", "text": "before"}, None], additional_contexts=[{"id": "post"}]))
    )
    result = call(registry, "echo", {"text": "x"})
    message = "tools/post-execute block feedback must be a list of content blocks"
    assert isinstance(result, ToolFailure) and result.error == ToolError(message)
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]
    assert result.additional_contexts is ABSENT


class ContextList(list[Any]):
    """A ``list`` subclass of contexts: not lossless JSON, though a block reads its length as a list's."""


def test_block_contexts_in_an_empty_list_subclass_are_none_and_in_a_full_one_fail_materialization() -> None:
    """digest 6.8 step 1: an empty list of contexts is dropped, whatever its class; any other is kept, and the
    final materialization refuses a list subclass."""
    blocked = [{"type": "text", "text": "b"}]
    for contexts, message in [
        (ContextList(), "b"),
        (ContextList([{"id": "one"}]), "tool result must be losslessly JSON-serializable"),
    ]:
        registry = Registry()
        registry.register(echo_tool())
        registry.on_post_execute(_post(Block(blocked, additional_contexts=contexts)))
        result = call(registry, "echo", {"text": "x"})
        assert isinstance(result, ToolFailure) and result.error.message == message
        assert result.additional_contexts is ABSENT


def test_non_json_block_feedback_fails_materialization() -> None:
    """digest 6.9: a function inside a block gives the materialization message, no info."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(_post(Block([{"type": "text", "text": "x", "f": len}])))
    result = call(registry, "echo")
    assert result.error == ToolError("tool result must be losslessly JSON-serializable")  # type: ignore[union-attr]


def test_post_listener_throw_is_final_without_contexts() -> None:
    """digest 6.8 step 6."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d"})
        return "v"

    def boom(run: ToolExecution, result: Any, nxt: Any) -> Any:
        raise RuntimeError("post-policy failed")

    registry = Registry()
    registry.register(echo_tool(execute=body))
    registry.on_post_execute(boom)
    result = call(registry, "echo")
    assert result.error == ToolError("post-policy failed")  # type: ignore[union-attr]
    assert result.additional_contexts is ABSENT


def test_unknown_post_decision_is_a_plain_accept() -> None:
    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(_post("whatever"))
    result = call(registry, "echo", {"text": "t"})
    assert not result.is_error and result.value == "t"


# --- finish (6.9, 12.2) ---------------------------------------------------------------------------------


def test_finalize_content_runs_exactly_once_on_every_path() -> None:
    """digest 12.2: captured before the argument snapshot; called once for every result."""
    import math

    calls: list[str] = []

    def finalize(run: ToolExecution, result: Any) -> Any:
        calls.append(run.call_id)
        return [{"type": "text", "text": "final"}]

    registry = Registry()
    registry.register(echo_tool(finalize_content=finalize))
    deny = registry.on_pre_execute(lambda run, nxt: Deny("no"))
    assert plain(call(registry, "echo", call_id="deny").content) == [{"type": "text", "text": "final"}]
    deny()
    call(registry, "echo", {"x": math.nan}, call_id="args")

    def boom(run: ToolExecution, nxt: Any) -> Any:
        raise RuntimeError("pre")

    raising = registry.on_pre_execute(boom)
    call(registry, "echo", call_id="pre-throw")
    raising()
    call(registry, "echo", call_id="ok")
    assert calls == ["deny", "args", "pre-throw", "ok"]


def test_finalize_content_none_keeps_and_failure_is_final() -> None:
    """digest 6.9 / 12.2: None keeps the content; a raise gives ``Error: <message>`` without a second call."""
    calls: list[str] = []

    def keep(run: ToolExecution, result: Any) -> None:
        calls.append("keep")

    def explode(run: ToolExecution, result: Any) -> Any:
        calls.append("explode")
        raise RuntimeError("finalizer violated its total contract")

    registry = Registry()
    registry.register(echo_tool(finalize_content=keep))
    registry.register(echo_tool("boom", finalize_content=explode))
    kept = call(registry, "echo", {"text": "x"})
    assert plain(kept.content) == [{"type": "text", "text": "render:x"}]
    failed = call(registry, "boom", {"text": "x"})
    assert failed.error == ToolError("finalizer violated its total contract")  # type: ignore[union-attr]
    assert plain(failed.content) == [{"type": "text", "text": "Error: finalizer violated its total contract"}]
    assert calls == ["keep", "explode"]


def test_finalize_content_is_not_retained_for_unknown_tools() -> None:
    """digest 12.2: a tool not visible at creation has no finalizer (even if registered later)."""
    registry = Registry()
    calls: list[str] = []

    async def register_late(run: ToolExecution, nxt: Any) -> Any:
        registry.register(echo_tool("late", finalize_content=lambda run, result: calls.append("late")))
        return await nxt()

    registry.on_pre_execute(register_late)
    result = call(registry, "late", {"text": "x"})
    assert not result.is_error and calls == []


def test_finalize_content_returning_non_json_fails() -> None:
    registry = Registry()
    registry.register(echo_tool(finalize_content=lambda run, result: [len]))
    result = call(registry, "echo")
    assert result.error == ToolError("tool result must be losslessly JSON-serializable")  # type: ignore[union-attr]


# --- observers (6.10) -------------------------------------------------------------------------------------


def test_observers_see_the_returned_object_and_failures_are_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """digest 6.10: the same frozen object; sync and async failures logged as warnings."""
    seen: list[Any] = []

    def boom(run: ToolExecution, result: Any) -> None:
        raise RuntimeError("observer boom")

    async def async_boom(run: ToolExecution, result: Any) -> None:
        raise RuntimeError("async boom")

    registry = Registry()
    registry.register(echo_tool())
    registry.on_result(boom)
    registry.on_result(async_boom)
    registry.on_result(lambda run, result: seen.append((run, result)))

    async def scenario() -> Any:
        result = await registry.execute(Call("c1", "echo", {"text": "x"}))
        await asyncio.sleep(0)
        return result

    with caplog.at_level(logging.WARNING, logger="toolcanon"):
        result = asyncio.run(scenario())
    assert seen[0][1] is result
    messages = [record.getMessage() for record in caplog.records]
    assert 'tool "echo" (c1): tools/result observer failed: observer boom' in messages
    assert 'tool "echo" (c1): tools/result observer failed: async boom' in messages
    with pytest.raises(AttributeError):
        seen[0][0].signal = None


def test_observers_that_succeed_log_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """digest 6.10: only an observer's failure is reported, a sync or an async one alike."""
    seen: list[str] = []

    async def async_observer(run: ToolExecution, result: Any) -> None:
        seen.append("async")

    registry = Registry()
    registry.register(echo_tool())
    registry.on_result(async_observer)
    registry.on_result(lambda run, result: seen.append("sync"))

    async def scenario() -> None:
        await registry.execute(Call("c1", "echo", {"text": "x"}))
        for _ in range(3):
            await asyncio.sleep(0)

    with caplog.at_level(logging.DEBUG, logger="toolcanon"):
        asyncio.run(scenario())
    assert sorted(seen) == ["async", "sync"]
    assert caplog.records == []


def test_a_result_the_call_made_earlier_is_its_own_result() -> None:
    """digest 6.6: a wrapper may run the body twice and return the first result; that result is this call's own,
    so it comes back as it is: not copied, not rendered again."""
    renders: list[str] = []

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        renders.append(value)
        return [{"type": "text", "text": value}]

    returned: list[Any] = []

    async def first_of_two(run: ToolExecution, nxt: Any) -> Any:
        first = await nxt()
        await nxt()
        returned.append(first)
        return first

    registry = Registry()
    registry.register(echo_tool(output=Output(schema={"type": "string"}, render=render)))
    registry.on_execute(first_of_two)
    result = call(registry, "echo", {"text": "x"})
    assert result is returned[0]
    assert renders == ["x", "x"]  # once per body run


# --- contexts (6.11) and concludes_turn (6.12) ---------------------------------------------------------


def test_context_order_deferred_wrapper_post() -> None:
    """digest 6.11: [deferred1, deferred2, wrapper, post]."""
    import dataclasses

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "deferred1"})
        run.defer_context({"id": "deferred2"})
        run.conclude_turn()
        return [{"type": "text", "text": "done"}]

    async def spread(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        return dataclasses.replace(result, additional_contexts=[{"id": "wrapper"}])

    registry = Registry()
    registry.register(raw_tool("comp", body))
    registry.on_execute(spread)
    registry.on_post_execute(
        _post(Accept(content=[{"type": "text", "text": "replaced"}], additional_contexts=[{"id": "post"}]))
    )
    result = call(registry, "comp")
    assert isinstance(result, ToolSuccess)
    assert [c["id"] for c in result.additional_contexts] == ["deferred1", "deferred2", "wrapper", "post"]
    assert result.concludes_turn is True  # kept by a content replacement
    assert plain(result.content) == [{"type": "text", "text": "replaced"}]


@pytest.mark.parametrize(
    ("own", "decision", "expected"),
    [
        (None, Accept(additional_contexts=[]), ABSENT),
        (None, Accept(content=[{"type": "text", "text": "c"}], additional_contexts=[]), ABSENT),
        (None, Accept(value="w", additional_contexts=[]), ABSENT),
        ([], Accept(value="w"), ABSENT),
        ([], Accept(value="w", additional_contexts=[]), ABSENT),
        ([], Accept(additional_contexts=[]), []),
        ([], Accept(content=[{"type": "text", "text": "c"}]), []),
        ([], Accept(value="w", additional_contexts=[{"id": "post"}]), [{"id": "post"}]),
    ],
    ids=[
        "accept",
        "content",
        "value",
        "value-own-empty",
        "value-both-empty",
        "accept-own-empty",
        "content-own-empty",
        "value-own-empty-post",
    ],
)
def test_an_accept_sets_no_empty_list_of_contexts(own: list[Any] | None, decision: Accept, expected: Any) -> None:
    """digest 6.8 steps 4-5, as the original's ``postExecute`` spreads them: the concatenated contexts are set only
    when there are some, so a value replacement drops an empty list and another accept keeps the result's own."""
    import dataclasses

    async def spread(run: ToolExecution, nxt: Any) -> Any:
        result = await nxt()
        return result if own is None else dataclasses.replace(result, additional_contexts=own)

    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: [{"type": "text", "text": "done"}]))
    registry.on_execute(spread)
    registry.on_post_execute(_post(decision))
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess)
    contexts = result.additional_contexts
    assert contexts is ABSENT if expected is ABSENT else plain(contexts) == expected


def test_deferred_contexts_survive_a_body_throw() -> None:
    """digest 6.11."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "d"})
        raise RuntimeError("x")

    registry = Registry()
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    assert result.is_error and plain(result.additional_contexts) == [{"id": "d"}]


def test_execution_is_frozen_after_the_call() -> None:
    """digest 6.10: exec is shallow-frozen when observers see it; only signal is replaceable before."""
    seen: list[ToolExecution] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: seen.append(run) or 1))
    call(registry, "t")
    with pytest.raises(AttributeError):
        seen[0].signal = None
    with pytest.raises(AttributeError):
        seen[0].name = "other"  # type: ignore[misc]


def test_allow_decision_dispatches() -> None:
    registry = Registry()
    registry.register(echo_tool())
    registry.on_pre_execute(lambda run, nxt: Allow())
    assert not call(registry, "echo").is_error


def test_block_contexts_in_an_empty_tuple_are_none_and_in_a_full_one_fail_materialization() -> None:
    """digest 6.8 step 1: an empty tuple of contexts is dropped as an empty list is; a full one is kept, and the
    final materialization refuses it (a tuple is no JSON array)."""
    blocked = [{"type": "text", "text": "b"}]
    contexts: tuple[Any, ...]
    for contexts, message in [
        ((), "b"),
        (({"id": "one"},), "tool result must be losslessly JSON-serializable"),
    ]:
        registry = Registry()
        registry.register(echo_tool())
        registry.on_post_execute(_post(Block(blocked, additional_contexts=contexts)))
        result = call(registry, "echo", {"text": "x"})
        assert isinstance(result, ToolFailure) and result.error == ToolError(message)
        assert result.additional_contexts is ABSENT


@pytest.mark.parametrize("route", ["guard", "post-execute", "failure", "finalizer"])
def test_execution_is_frozen_after_a_call_on_every_route(route: str) -> None:
    """The execution refuses a new signal once the call is over, whichever stages the call went through."""
    seen: list[ToolExecution] = []
    registry = Registry()

    def body(args: Any, run: ToolExecution) -> Any:
        seen.append(run)
        if route == "failure":
            raise RuntimeError("body failed")
        return 1

    finalizer = (lambda run, result: None) if route == "finalizer" else None
    registry.register(raw_tool("t", body, finalize_content=finalizer))
    if route == "guard":
        registry.add_guard(lambda run: None)
    elif route == "post-execute":
        registry.on_post_execute(lambda run, result, nxt: nxt())
    result = call(registry, "t")
    assert result.is_error is (route == "failure")
    with pytest.raises(AttributeError):
        seen[0].signal = None


@pytest.mark.parametrize("reason", ["denied", 5], ids=["string-reason", "number-reason"])
def test_a_denial_seen_by_post_execute_is_the_final_result(reason: Any) -> None:
    """A denial is already final when post-execute sees it: an accept leaves it as it is, so the listener and the
    result observers see the very object execute returns."""
    seen: list[Any] = []
    observed: list[Any] = []

    def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        seen.append(result)
        return nxt()

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_pre_execute(lambda run, nxt: Deny(reason))
    registry.on_post_execute(post)
    registry.on_result(lambda run, result: observed.append(result))
    result = call(registry, "t")
    assert isinstance(result, ToolFailure)
    assert plain(result.error.message) == reason
    assert result is seen[0]
    assert observed == [result] and observed[0] is result


def test_result_observers_are_told_in_registration_order() -> None:
    """digest 6.10: every observer sees the final result once, the first registered first."""
    told: list[tuple[str, Any]] = []
    registry = Registry()
    registry.register(echo_tool())
    registry.on_result(lambda run, result: told.append(("first", result)))
    registry.on_result(lambda run, result: told.append(("second", result)))
    registry.on_result(lambda run, result: told.append(("third", result)))
    result = call(registry, "echo", {"text": "x"})
    assert [name for name, _ in told] == ["first", "second", "third"]
    assert all(seen is result for _, seen in told)
