"""The cooperative timeout policy (digest 5.6, 7.3; the original's ``tools/execute`` timeout wrapper).

Timings are real but small: budgets of 10-30 ms against bodies that settle only when their signal aborts (or
that sleep well past the budget), so every outcome is decided by order, never by a race.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import pytest

from conftest import call, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    AbortSignal,
    Call,
    HarnessError,
    Output,
    Registry,
    ToolDefinition,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
)
from toolcanon.errors import ToolTimeoutError
from toolcanon.nested import CodeMode, ToolCallError, Tools
from toolcanon.result import ErrorInfo, ToolError
from toolcanon.timeout import (
    MAX_TIMER_DELAY_MS,
    TOOL_TIMEOUT,
    TimeoutReason,
    deadline,
    install_timeout,
    timeout_of,
    timeout_result,
)

ABORTED = ToolError("tool call aborted", ErrorInfo("AbortError", "ABORTED"))


def timed_out(ms: str) -> ToolError:
    return ToolError(f"tool call timed out after {ms}ms", ErrorInfo("ToolTimeoutError", "TOOL_TIMEOUT"))


async def wait_for_abort(args: Any, run: ToolExecution) -> Any:
    """A cooperative body: it settles only once its signal aborts."""
    assert run.signal is not None
    await run.signal.wait()
    return "stopped cooperatively"


def registry_with(*definitions: ToolDefinition) -> Registry:
    registry = Registry()
    for definition in definitions:
        registry.register(definition)
    install_timeout(registry)
    return registry


def test_a_cooperative_body_that_times_out_gets_tool_timeout() -> None:
    """The deadline aborts the body's signal; its result (the registry's ABORTED) becomes TOOL_TIMEOUT."""
    posts: list[Any] = []
    registry = registry_with(raw_tool("slow", wait_for_abort, timeout_ms=20))
    registry.on_post_execute(lambda run, result, nxt: (posts.append(result), nxt())[1])
    result = call(registry, "slow", signal=AbortController().signal)
    assert isinstance(result, ToolFailure)
    assert result.error == timed_out("20")
    assert plain(result.content) == [{"type": "text", "text": "Error: tool call timed out after 20ms"}]
    assert not result.has_meta and result.additional_contexts is ABSENT
    assert [post.error for post in posts] == [timed_out("20")]  # a post-result: post-execute sees it


def test_a_body_that_raises_its_own_abort_error_gets_tool_timeout() -> None:
    async def body(args: Any, run: ToolExecution) -> Any:
        assert run.signal is not None
        await run.signal.wait()
        raise HarnessError("web fetch aborted", "WEB_ABORTED")

    result = call(registry_with(raw_tool("aborter", body, timeout_ms=15)), "aborter")
    assert result.error == timed_out("15")  # type: ignore[union-attr]


def test_a_body_that_ignores_its_signal_is_awaited_and_its_success_replaced() -> None:
    """Cooperative, never a hard kill: the body runs to its end, then the call still reports the timeout."""
    finished: list[float] = []

    async def body(args: Any, run: ToolExecution) -> Any:
        await asyncio.sleep(0.06)
        finished.append(time.monotonic())
        return "late"

    started = time.monotonic()
    result = call(registry_with(raw_tool("stubborn", body, timeout_ms=10)), "stubborn")
    assert result.error == timed_out("10")  # type: ignore[union-attr]
    assert len(finished) == 1 and finished[0] - started >= 0.06


def test_a_body_that_ignores_its_signal_and_raises_is_replaced_too() -> None:
    async def body(args: Any, run: ToolExecution) -> Any:
        await asyncio.sleep(0.04)
        raise RuntimeError("own failure")

    result = call(registry_with(raw_tool("stubborn", body, timeout_ms=10)), "stubborn")
    assert result.error == timed_out("10")  # type: ignore[union-attr]


def test_a_body_that_finishes_in_time_keeps_its_result_and_the_timer_is_cleared() -> None:
    seen: list[AbortSignal] = []

    def body(args: Any, run: ToolExecution) -> Any:
        assert run.signal is not None
        seen.append(run.signal)
        return {"ok": True}

    async def go() -> Any:
        registry = registry_with(raw_tool("fast", body, timeout_ms=30))
        result = await registry.execute(Call("c1", "fast", {}))
        await asyncio.sleep(0.06)  # past the budget: a timer left armed would abort the signal now
        return result

    result = asyncio.run(go())
    assert isinstance(result, ToolSuccess) and plain(result.value) == {"ok": True}
    assert plain(result.content) == [{"type": "text", "text": '{"ok":true}'}]
    assert seen[0].aborted is False


def test_a_tool_without_a_budget_is_delegated_with_its_signal_untouched() -> None:
    """Only a declared timeout_ms arms a deadline; the inner stages see the very signal they would have seen."""
    caller = AbortController()
    inner_signals: dict[str, Any] = {}
    registry = registry_with(raw_tool("plain", lambda a, r: 1), raw_tool("budgeted", lambda a, r: 2, timeout_ms=5000))

    async def inner(run: ToolExecution, nxt: Any) -> Any:
        inner_signals[run.name] = run.signal
        return await nxt()

    registry.on_execute(inner)  # installed after the policy: inside it
    assert call(registry, "plain", signal=caller.signal).value == 1  # type: ignore[union-attr]
    assert call(registry, "budgeted", signal=caller.signal).value == 2  # type: ignore[union-attr]
    assert inner_signals["plain"] is caller.signal
    assert inner_signals["budgeted"] is not caller.signal and isinstance(inner_signals["budgeted"], AbortSignal)


def test_the_callers_signal_is_restored_for_post_execute() -> None:
    caller = AbortController()
    post_signals: list[Any] = []
    registry = registry_with(raw_tool("fast", lambda a, r: 1, timeout_ms=5000))
    registry.on_post_execute(lambda run, result, nxt: (post_signals.append(run.signal), nxt())[1])
    call(registry, "fast", signal=caller.signal)
    assert post_signals == [caller.signal]


def test_a_caller_abort_before_the_deadline_keeps_the_registrys_aborted() -> None:
    """The fused signal carries the caller's reason: not this policy's timeout, so its result stays."""
    caller = AbortController()

    async def body(args: Any, run: ToolExecution) -> Any:
        caller.abort("user cancelled")
        assert run.signal is not None
        await run.signal.wait()
        return "stopped"

    result = call(registry_with(raw_tool("slow", body, timeout_ms=1000)), "slow", signal=caller.signal)
    assert result.error == ABORTED  # type: ignore[union-attr]


def test_a_caller_abort_after_the_deadline_keeps_tool_timeout() -> None:
    caller = AbortController()

    async def body(args: Any, run: ToolExecution) -> Any:
        assert run.signal is not None
        await run.signal.wait()
        caller.abort("too late to replace the timeout")
        return "cleanup complete"

    result = call(registry_with(raw_tool("slow", body, timeout_ms=15)), "slow", signal=caller.signal)
    assert result.error == timed_out("15")  # type: ignore[union-attr]


def test_an_outer_deadline_that_fires_first_is_not_this_policys_timeout() -> None:
    """An outer wrapper's deadline of another code reads as an upstream cancel: the inner result stays ABORTED,
    and the outer wrapper sees its own deadline."""
    outer_saw: list[Any] = []
    registry = Registry()
    registry.register(raw_tool("slow", wait_for_abort, timeout_ms=1000))

    async def outer(run: ToolExecution, nxt: Any) -> Any:
        with deadline(run.signal, 10, "OUTER_BUDGET") as armed:
            saved, run.signal = run.signal, armed.signal
            try:
                result = await nxt()
            finally:
                run.signal = saved
            outer_saw.append(timeout_of(armed.signal, "OUTER_BUDGET"))
            return result

    registry.on_execute(outer)
    install_timeout(registry)  # inside the outer wrapper
    result = call(registry, "slow")
    assert result.error == ABORTED  # type: ignore[union-attr]
    assert outer_saw == [TimeoutReason("OUTER_BUDGET", 10)]


def test_two_policies_both_claim_the_same_deadline_code() -> None:
    """Timeouts are told apart by code only: a second policy (same code, same budget) reports the timeout too."""
    registry = registry_with(raw_tool("slow", wait_for_abort, timeout_ms=10))
    install_timeout(registry)
    assert call(registry, "slow").error == timed_out("10")  # type: ignore[union-attr]


def test_a_nested_call_times_out_like_a_direct_one() -> None:
    """The wrapper runs for every call through the registry: the program receives the timeout's message."""
    registry = registry_with(raw_tool("slow", wait_for_abort, timeout_ms=10))
    mode = CodeMode(registry)
    received: list[str] = []

    async def program(tools: Tools) -> Any:
        try:
            await tools.call("slow", {})
        except ToolCallError as error:
            received.append(error.message)

    async def outer_body(args: Any, run: ToolExecution) -> Any:
        await mode.run(run, program)
        return None

    registry.register(raw_tool("outer", outer_body))
    assert isinstance(call(registry, "outer"), ToolSuccess)
    assert received == ["tool call timed out after 10ms"]


def test_deferred_contexts_survive_a_timeout() -> None:
    """The timeout failure is a wrapper-authored failure: the dispatch still prepends the deferred contexts."""
    context = {"role": "user", "content": [{"type": "text", "text": "deferred"}]}

    async def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context(context)
        return await wait_for_abort(args, run)

    result = call(registry_with(raw_tool("slow", body, timeout_ms=10)), "slow")
    assert result.error == timed_out("10")  # type: ignore[union-attr]
    assert plain(result.additional_contexts) == [context]


def test_a_budget_beyond_the_longest_timer_fails_the_call_in_the_wrapper() -> None:
    """Registration accepts any positive finite budget; arming one past 2**31-1 ms raises in the wrapper: a final
    failure with no info that skips post-execute (digest 6.7)."""
    posts: list[Any] = []
    registry = registry_with(raw_tool("huge", lambda a, r: 1, timeout_ms=MAX_TIMER_DELAY_MS + 1))
    registry.on_post_execute(lambda run, result, nxt: (posts.append(result), nxt())[1])
    result = call(registry, "huge")
    message = "deadline timeoutMs must be a positive finite number no greater than 2147483647"
    assert result.error == ToolError(message)  # type: ignore[union-attr]
    assert plain(result.content) == [{"type": "text", "text": "Error: " + message}]
    assert posts == []


def test_the_longest_timer_is_accepted() -> None:
    result = call(registry_with(raw_tool("long", lambda a, r: 1, timeout_ms=MAX_TIMER_DELAY_MS)), "long")
    assert isinstance(result, ToolSuccess)


def test_disposing_the_policy_removes_its_wrapper() -> None:
    caller = AbortController()
    seen: list[Any] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, timeout_ms=5000))
    dispose = install_timeout(registry)

    async def inner(run: ToolExecution, nxt: Any) -> Any:
        seen.append(run.signal)
        return await nxt()

    registry.on_execute(inner)
    call(registry, "t", signal=caller.signal)
    dispose()
    call(registry, "t", signal=caller.signal)
    assert seen[0] is not caller.signal and seen[1] is caller.signal


def test_prepend_installs_the_policy_outermost() -> None:
    order: list[str] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, timeout_ms=5000))

    async def earlier(run: ToolExecution, nxt: Any) -> Any:
        order.append("earlier:" + ("deadline" if run.signal is not None else "caller"))
        return await nxt()

    registry.on_execute(earlier)
    install_timeout(registry, prepend=True)
    call(registry, "t")  # no caller signal: only a wrapper inside the policy sees one
    assert order == ["earlier:deadline"]


@pytest.mark.parametrize(
    ("budget", "shown"),
    [(20, "20"), (20.0, "20"), (1.5, "1.5"), (1_000_000, "1000000"), (0.0001, "0.0001"), (2_147_483_647, "2147483647")],
    ids=["int", "integral-float", "fraction", "million", "tiny", "longest"],
)
def test_the_message_writes_the_budget_as_ecmascript_does(budget: float, shown: str) -> None:
    expected = timed_out(shown)
    assert timeout_result(budget).error == expected
    assert str(ToolTimeoutError(budget)) == expected.message and ToolTimeoutError(budget).code == TOOL_TIMEOUT


def test_the_message_uses_the_budget_the_tool_declared() -> None:
    result = call(registry_with(raw_tool("slow", wait_for_abort, timeout_ms=12.5)), "slow")
    assert result.error == timed_out("12.5")  # type: ignore[union-attr]


def test_deadline_without_a_timer_for_a_budget_of_zero_or_less() -> None:
    async def go() -> None:
        upstream = AbortController().signal
        assert deadline(upstream, 0, "X").signal is upstream
        assert deadline(upstream, -5.0, "X").signal is upstream
        fresh = deadline(None, 0, "X").signal
        assert isinstance(fresh, AbortSignal) and not fresh.aborted

    asyncio.run(go())


@pytest.mark.parametrize(
    "budget",
    [math.nan, math.inf, MAX_TIMER_DELAY_MS + 1, True, "5", None, 10**400],
    ids=["nan", "infinity", "too-long", "bool", "string", "none", "huge-int"],
)
def test_deadline_refuses_a_budget_it_cannot_arm(budget: Any) -> None:
    async def go() -> None:
        with pytest.raises(ValueError) as raised:
            deadline(None, budget, "X")
        assert str(raised.value) == "deadline timeoutMs must be a positive finite number no greater than 2147483647"

    asyncio.run(go())


def test_deadline_fires_with_its_reason_and_dispose_clears_it() -> None:
    async def go() -> None:
        armed = deadline(None, 5, "CODE")
        await armed.signal.wait()
        assert timeout_of(armed.signal) == TimeoutReason("CODE", 5) and str(armed.signal.reason) == "CODE after 5ms"
        assert timeout_of(armed.signal, "CODE") is not None and timeout_of(armed.signal, "OTHER") is None
        cleared = deadline(None, 5, "CODE")
        cleared.dispose()
        cleared.dispose()  # idempotent
        await asyncio.sleep(0.02)
        assert not cleared.signal.aborted and timeout_of(cleared.signal) is None

    asyncio.run(go())


def test_an_upstream_abort_wins_the_fused_signal_and_is_not_a_timeout() -> None:
    async def go() -> None:
        upstream = AbortController()
        upstream.abort("first")
        armed = deadline(upstream.signal, 5, TOOL_TIMEOUT)
        assert armed.signal.aborted and armed.signal.reason == "first"
        await asyncio.sleep(0.02)
        assert timeout_of(armed.signal, TOOL_TIMEOUT) is None
        armed.dispose()

    asyncio.run(go())


def test_the_budget_is_read_from_the_registered_definition_on_each_call() -> None:
    """The wrapper resolves the tool the call names when it runs: a tool registered later is covered."""
    registry = Registry()
    install_timeout(registry)
    registry.register(raw_tool("slow", wait_for_abort, output=Output({}, lambda a, v: []), timeout_ms=10))
    assert call(registry, "slow").error == timed_out("10")  # type: ignore[union-attr]
    assert call(registry, "missing").error.info == ErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL")  # type: ignore[union-attr]
