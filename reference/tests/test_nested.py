"""Nested (code-mode) dispatch: binding input, pipeline, what the program sees, forwarding, events (digest 9.5-9.6,
10.1-10.7, 0.5)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    Accept,
    Block,
    Call,
    Deny,
    DispatchToken,
    Output,
    Registry,
    ToolDefinition,
    ToolExecution,
    ToolResult,
    canonical_json,
    define_tool,
)
from toolcanon.errors import CodeRunFailedError
from toolcanon.nested import CodeMode, ProgramRun, SubCall, ToolCallError, Tools
from toolcanon.renderers.run_code import run_code_output
from toolcanon.result import ErrorInfo, ToolError
from toolcanon.schema import compile_value_schema
from toolcanon.session import ModelToolCall, SessionLog, replay, run_tool_calls

Program = Callable[[Tools], Any]


class Events:
    """An event sink that keeps every dispatch event."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def __call__(self, event_type: str, data: Any) -> None:
        self.seen.append((event_type, plain(data)))

    def types(self) -> list[str]:
        return [event_type for event_type, _ in self.seen]


def program_tool(mode: CodeMode, program: Program, name: str = "prog") -> ToolDefinition:
    """A tool whose body runs ``program`` through the bridge and returns its result (``null`` for none)."""

    async def body(args: Any, run: ToolExecution) -> Any:
        ran = await mode.run(run, program)
        if ran.error is not None:
            raise ran.error
        return None if ran.result is ABSENT else ran.result

    return raw_tool(name, body)


def execute(registry: Registry, name: str = "prog", call_id: str = "p", **fields: Any) -> ToolResult:
    return asyncio.run(registry.execute(Call(call_id, name, fields.pop("arguments", {}), **fields)))


def setup(program: Program, **mode_options: Any) -> tuple[Registry, CodeMode]:
    registry = Registry()
    registry.register(echo_tool())
    mode = CodeMode(registry, **mode_options)
    registry.register(program_tool(mode, program))
    return registry, mode


async def attempt(awaitable: Any) -> dict[str, Any]:
    """What a program receives: ``{"value": v}`` or ``{"error": message}``."""
    try:
        return {"value": plain(await awaitable)}
    except ToolCallError as failure:
        return {"error": str(failure)}


# --- 10.1: binding input -------------------------------------------------------------------------------


def test_binding_input_identity() -> None:
    """digest 7.6 / 10.1: callId `<outer>:code:<n>`, outer rootCallId, outer token as parent, outer agent, and a
    run-scoped signal."""
    seen: list[dict[str, Any]] = []
    outer_runs: list[ToolExecution] = []

    async def program(tools: Tools) -> Any:
        await tools.echo({"text": "a"})
        await tools.call("echo", {"text": "b"})
        return await tools["echo"]({"text": "c"})

    registry, _ = setup(program)

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        if run.name == "prog":
            outer_runs.append(run)
        else:
            seen.append(
                {"id": run.call_id, "root": run.root_call_id, "parent": run.parent, "agent": run.agent, "s": run.signal}
            )
        return await nxt()

    registry.on_pre_execute(pre)
    controller = AbortController()
    result = execute(registry, call_id="p", root_call_id="root", agent="agent-1", signal=controller.signal)
    assert result.value == "c"  # type: ignore[union-attr]
    assert [s["id"] for s in seen] == ["p:code:1", "p:code:2", "p:code:3"]
    assert {s["root"] for s in seen} == {"root"} and {s["agent"] for s in seen} == {"agent-1"}
    assert all(s["parent"] is outer_runs[0].token for s in seen)
    signals = {id(s["s"]) for s in seen}
    assert len(signals) == 1 and seen[0]["s"] is not controller.signal


def test_numbering_follows_successful_normalization_only() -> None:
    """digest 10.1 / 3.7 code-mode row: rejected arguments dispatch nothing, log nothing and take no number."""
    received: list[dict[str, Any]] = []
    events = Events()

    async def program(tools: Tools) -> Any:
        received.append(await attempt(tools.echo({"text": math.nan})))
        received.append(await attempt(tools.echo()))
        received.append(await attempt(tools.echo({"bad": {1, 2}})))
        received.append(await attempt(tools.echo({"text": "ok"})))

    registry, _ = setup(program, events=events)
    dispatched: list[str] = []
    registry.on_result(lambda run, result: dispatched.append(run.call_id))
    execute(registry, agent="agent")
    message = "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"
    assert received == [{"error": message}, {"error": message}, {"error": message}, {"value": "ok"}]
    assert dispatched == ["p:code:1", "p"]
    assert [data["subCallId"] for _, data in events.seen] == ["p:code:1", "p:code:1"]


def test_normalization_that_raises_gives_the_thrown_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """digest 3.7 code-mode row: a snapshot that raises gives `tool arguments must be lossless JSON: <message>`."""
    from toolcanon import nested

    def explode(value: Any) -> Any:
        raise RuntimeError("trap fired")

    received: list[dict[str, Any]] = []

    async def program(tools: Tools) -> Any:
        monkeypatch.setattr(nested, "snapshot_json", explode)
        received.append(await attempt(tools.echo({})))
        monkeypatch.undo()

    registry, _ = setup(program)
    execute(registry)
    assert received == [{"error": "tool arguments must be lossless JSON: trap fired"}]


def test_run_signal_follows_the_outer_abort_and_aborts_when_the_run_settles() -> None:
    """digest 10.1: the run-scoped signal follows the outer abort, and aborts when the run settles."""
    controller = AbortController()
    kept: list[Tools] = []
    states: list[bool] = []

    async def program(tools: Tools) -> Any:
        kept.append(tools)
        states.append(tools.signal.aborted)
        controller.abort("outer stop")
        states.append(tools.signal.aborted)
        return await attempt(tools.echo({"text": "late"}))

    registry, _ = setup(program)
    result = execute(registry, signal=controller.signal)
    assert states == [False, True] and kept[0].signal.reason == "outer stop"
    assert result.error.info == ErrorInfo("AbortError", "ABORTED")  # type: ignore[union-attr]

    settled: list[Tools] = []

    async def quiet(tools: Tools) -> Any:
        settled.append(tools)

    registry2, _ = setup(quiet)
    execute(registry2)
    assert settled[0].signal.aborted and settled[0].signal.reason == "run_code settled"


def test_a_sub_call_whose_run_signal_aborted_in_pre_execute_is_aborted_before_dispatch() -> None:
    """R-NEST-6 / digest 10.1, 8.2: the run signal alone aborted (the outer call's is not) while a sub-call is in
    its pre-execute stage: that sub-call is ABORTED_BEFORE_DISPATCH, the program is handed the run-over
    rejection instead of it, later calls are not dispatched, and the outer call succeeds."""
    received: list[dict[str, Any]] = []
    nested: list[ToolResult] = []
    kept: list[Tools] = []

    async def program(tools: Tools) -> Any:
        kept.append(tools)
        received.append(await attempt(tools.echo({"text": "one"})))
        received.append(await attempt(tools.echo({"text": "two"})))

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        if run.parent is not None:
            kept[0].abort("program stop")
        return await nxt()

    registry, _ = setup(program)
    registry.on_pre_execute(pre)
    registry.on_result(lambda run, result: nested.append(result) if run.parent is not None else None)
    outer = execute(registry)
    assert received == [
        {"error": "run_code run is over (program stop); echo result discarded"},
        {"error": "run_code run is over (program stop); echo not dispatched"},
    ]
    assert [result.error.info for result in nested] == [ErrorInfo("AbortError", "ABORTED_BEFORE_DISPATCH")]  # type: ignore[union-attr]
    assert not outer.is_error


def test_a_success_whose_run_signal_aborted_during_its_body_is_aborted() -> None:
    """R-NEST-6 / digest 8.3: a sub-call whose run signal aborts while its body runs becomes ABORTED."""
    received: list[dict[str, Any]] = []
    nested: list[ToolResult] = []
    kept: list[Tools] = []

    def stopping(args: Any, run: ToolExecution) -> str:
        kept[0].abort("program stop")
        return "done"

    async def program(tools: Tools) -> Any:
        kept.append(tools)
        received.append(await attempt(tools.stopping({})))

    registry, _ = setup(program)
    registry.register(raw_tool("stopping", stopping))
    registry.on_result(lambda run, result: nested.append(result) if run.parent is not None else None)
    assert not execute(registry).is_error
    assert received == [{"error": "run_code run is over (program stop); stopping result discarded"}]
    assert nested[0].error.info == ErrorInfo("AbortError", "ABORTED")  # type: ignore[union-attr]


def test_an_outer_abort_before_the_run_does_not_end_it() -> None:
    """S:nest-outer-aborted: the run signal follows an outer signal aborted before the run, and each call is
    dispatched and answered by the registry (ABORTED_BEFORE_DISPATCH); the run-over rejections are for aborts
    while the run lasts."""
    controller = AbortController()
    received: list[dict[str, Any]] = []

    async def program(tools: Tools) -> Any:
        received.append(await attempt(tools.echo({"text": "x"})))

    registry, mode = setup(program)

    async def body(args: Any, run: ToolExecution) -> Any:
        controller.abort("before")
        await mode.run(run, program)

    registry.register(raw_tool("aborting", body))
    execute(registry, "aborting", signal=controller.signal)
    assert received == [{"error": "tool call aborted before dispatch"}]


# --- 10.2 / 0.5: same pipeline, no presentation metadata ---------------------------------------------------


def test_nested_calls_run_the_whole_pipeline_without_meta() -> None:
    """digest 10.2: pre, guard, around, body, post, finalizeContent and result observers; no meta even though
    the tool declares a projector."""
    phases: list[str] = []
    results: list[ToolResult] = []

    async def program(tools: Tools) -> Any:
        return await tools.echo({"text": "inner"})

    registry = Registry()
    registry.register(echo_tool(finalize_content=lambda run, result: phases.append(f"finalize {run.call_id}")))
    mode = CodeMode(registry)
    registry.register(program_tool(mode, program))

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        phases.append(f"pre {run.call_id}")
        return await nxt()

    async def around(run: ToolExecution, nxt: Any) -> Any:
        phases.append(f"execute {run.call_id}")
        return await nxt()

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        phases.append(f"post {run.call_id}")
        return await nxt()

    def observe(run: ToolExecution, result: ToolResult) -> None:
        phases.append(f"observed {run.call_id}")
        results.append(result)

    registry.on_pre_execute(pre)

    def guard(run: ToolExecution) -> None:
        phases.append(f"guard {run.call_id}")

    registry.add_guard(guard)
    registry.on_execute(around)
    registry.on_post_execute(post)
    registry.on_result(observe)
    outer = execute(registry)
    inner = [p for p in phases if p.endswith("p:code:1")]
    assert inner == [f"{stage} p:code:1" for stage in ("pre", "guard", "execute", "post", "finalize", "observed")]
    assert results[0].meta is ABSENT and not results[0].has_meta
    assert plain(results[0].content) == [{"type": "text", "text": "render:inner"}]
    assert outer.meta is ABSENT  # the program tool declares no projector either


def test_direct_call_has_meta_and_a_forged_parent_counts_as_nested() -> None:
    """digest 0.5 / 4.4: any parent token makes a call nested, real or not: no meta."""
    registry = Registry()
    registry.register(echo_tool())
    direct = execute(registry, "echo", "d", arguments={"text": "x"})
    forged = execute(registry, "echo", "f", arguments={"text": "x"}, parent=DispatchToken())
    assert plain(direct.meta) == {"projected": "x"}
    assert forged.meta is ABSENT and forged.value == "x"  # type: ignore[union-attr]


# --- 10.3: what the program sees ------------------------------------------------------------------------


def test_program_receives_the_final_value_after_policy() -> None:
    """digest 10.3: a post-execute value replacement changes what the program receives; a content one does not;
    the value is frozen."""
    received: list[Any] = []

    async def program(tools: Tools) -> Any:
        received.append(await tools.echo({"text": "value-replaced"}))
        received.append(await tools.echo({"text": "content-replaced"}))

    registry, _ = setup(program)

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.arguments == {"text": "value-replaced"}:
            return Accept(value="policy value")
        if run.arguments == {"text": "content-replaced"}:
            return Accept(content=[{"type": "text", "text": "hidden"}])
        return await nxt()

    registry.on_post_execute(post)
    execute(registry)
    assert received == ["policy value", "content-replaced"]

    frozen: list[Any] = []

    async def mutate(tools: Tools) -> Any:
        frozen.append(await tools.obj({}))

    registry2, _ = setup(mutate)
    registry2.register(raw_tool("obj", lambda a, r: {"k": [1]}))
    execute(registry2)
    with pytest.raises(TypeError):
        frozen[0]["k"].append(2)


def test_program_sees_only_the_failure_message() -> None:
    """digest 10.3: deny reason, thrown message, `unknown tool "<n>"`, and the block's derived message; the error
    carries no info and no content."""
    failures: list[ToolCallError] = []

    def boom(args: Any, run: ToolExecution) -> Any:
        raise RuntimeError("exploded")

    async def program(tools: Tools) -> Any:
        for name in ("denied", "boom", "nope", "blocked"):
            try:
                await tools.call(name, {})
            except ToolCallError as failure:
                failures.append(failure)

    registry, _ = setup(program)
    registry.register(raw_tool("denied", lambda a, r: 1))
    registry.register(raw_tool("boom", boom))
    registry.register(raw_tool("blocked", lambda a, r: 1))
    registry.on_pre_execute(lambda run, nxt: Deny("nested denied") if run.name == "denied" else nxt())

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.name == "blocked":
            return Block([{"type": "text", "text": "no"}, {"type": "image", "attachment": {}}])
        return await nxt()

    registry.on_post_execute(post)
    execute(registry)
    assert [str(f) for f in failures] == ["nested denied", "exploded", 'unknown tool "nope"', "no\n[image content]"]
    assert [f.tool_name for f in failures] == ["denied", "boom", "nope", "blocked"]
    assert all(f.args == (str(f),) and not hasattr(f, "info") and not hasattr(f, "content") for f in failures)
    assert all(not str(f).startswith("Error: ") for f in failures)


def test_upstream_program_scenario() -> None:
    """digest 10.1 / 10.3: the recorded `program` scenario — numbering skips the rejected call, so the deny on
    `p:code:4` hits the fifth call and the block on `p:code:5` the sixth."""
    received: list[dict[str, Any]] = []

    async def program(tools: Tools) -> Any:
        calls: list[tuple[str, Any]] = [
            ("echo", {"text": "a"}),
            ("boom", {}),
            ("nope", {}),
            ("echo", math.nan),
            ("concl", {}),
            ("echo", {"text": "blocked"}),
        ]
        for name, arguments in calls:
            received.append(await attempt(tools.call(name, arguments)))
        return received

    def boom(args: Any, run: ToolExecution) -> Any:
        raise RuntimeError("exploded")

    def concl(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "inner", "text": "i"})
        run.conclude_turn()
        return 7

    registry, _ = setup(program)
    registry.register(raw_tool("boom", boom))
    registry.register(raw_tool("concl", concl))
    registry.on_pre_execute(lambda run, nxt: Deny("nested denied") if run.call_id == "p:code:4" else nxt())

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.call_id == "p:code:5":
            return Block([{"type": "text", "text": "no"}])
        return await nxt()

    registry.on_post_execute(post)
    result = execute(registry)
    assert canonical_json(result.value) == (  # type: ignore[union-attr]
        '[{"value":"a"},{"error":"exploded"},{"error":"unknown tool \\"nope\\""},'
        '{"error":"tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"},'
        '{"error":"nested denied"},{"error":"no"}]'
    )
    assert result.additional_contexts is ABSENT and result.concludes_turn is False


# --- 10.4: run-over rejections ------------------------------------------------------------------------------


def test_a_binding_called_after_the_run_is_not_dispatched() -> None:
    """digest 10.4: `run_code run is over (<reason>); <name> not dispatched`, checked before dispatch."""
    kept: list[Tools] = []

    async def program(tools: Tools) -> Any:
        kept.append(tools)

    registry, _ = setup(program)
    dispatched: list[str] = []
    registry.on_result(lambda run, result: dispatched.append(run.call_id))
    execute(registry)

    async def late() -> dict[str, Any]:
        return await attempt(kept[0].echo({"text": "x"}))

    assert asyncio.run(late()) == {"error": "run_code run is over (run_code settled); echo not dispatched"}
    assert dispatched == ["p"]


def test_queued_calls_are_abandoned_and_in_flight_results_discarded() -> None:
    """digest 10.4: a queued call that never started is `… tool call abandoned`; one in flight when the run ended
    is `… result discarded`."""
    pending: list[Any] = []
    started: list[str] = []

    async def slow(args: Any, run: ToolExecution) -> str:
        started.append(run.call_id)
        await asyncio.sleep(0.01)
        return "slow"

    async def program(tools: Tools) -> Any:
        pending.append(tools.slow({}))
        pending.append(tools.slow({}))

    registry, _ = setup(program, max_parallel_sub_calls=1)
    registry.register(raw_tool("slow", slow))
    events = []
    registry.on_result(lambda run, result: events.append(run.call_id))
    execute(registry)
    assert started == ["p:code:1"] and events == ["p:code:1", "p"]

    async def outcomes() -> list[dict[str, Any]]:
        return [await attempt(p) for p in pending]

    assert asyncio.run(outcomes()) == [
        {"error": "run_code run is over (run_code settled); slow result discarded"},
        {"error": "run_code run is over (run_code settled); slow tool call abandoned"},
    ]


def test_run_over_reason_after_a_failure() -> None:
    """code-mode.ts: the reason is the run signal's, `run_code settled` however the program ended (here it
    raised)."""
    pending: list[Any] = []

    async def slow(args: Any, run: ToolExecution) -> str:
        await asyncio.sleep(0.01)
        return "slow"

    async def program(tools: Tools) -> Any:
        pending.append(tools.slow({}))
        raise ValueError("program failed")

    registry, _ = setup(program)
    registry.register(raw_tool("slow", slow))
    result = execute(registry)
    assert result.error.message == "program failed"  # type: ignore[union-attr]

    async def outcome() -> dict[str, Any]:
        return await attempt(pending[0])

    assert asyncio.run(outcome()) == {"error": "run_code run is over (run_code settled); slow result discarded"}


def test_run_over_reason_after_an_abort_is_the_signals() -> None:
    """code-mode.ts: once the outer caller aborted the run, the messages give that abort's reason."""
    controller = AbortController()
    pending: list[Any] = []

    async def slow(args: Any, run: ToolExecution) -> str:
        await asyncio.sleep(0.01)
        return "slow"

    async def program(tools: Tools) -> Any:
        pending.append(tools.slow({}))
        controller.abort("caller stop")

    registry, _ = setup(program)
    registry.register(raw_tool("slow", slow))
    execute(registry, signal=controller.signal)

    async def outcome() -> dict[str, Any]:
        return await attempt(pending[0])

    assert asyncio.run(outcome()) == {"error": "run_code run is over (caller stop); slow result discarded"}


# --- 10.5: forwarding -------------------------------------------------------------------------------------


def test_forwarding_in_submission_order() -> None:
    """digest 10.5: at each commit, in submission order: image content as a deferred user message, every nested
    context, and concludesTurn."""
    image = {"type": "image", "attachment": {"attachmentId": "a1"}}

    async def pic(args: Any, run: ToolExecution) -> Any:
        await asyncio.sleep(0.02)  # finishes last, yet commits first
        run.defer_context({"id": "from-pic"})
        return [{"type": "text", "text": "see"}, image]

    def ctx(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "from-ctx"})
        run.conclude_turn()
        return 1

    async def program(tools: Tools) -> Any:
        await asyncio.gather(tools.pic({}), tools.ctx({}))

    registry, _ = setup(program)
    registry.register(raw_tool("pic", pic, output=Output({}, lambda a, v: v)))
    registry.register(raw_tool("ctx", ctx))
    result = execute(registry)
    assert plain(result.additional_contexts) == [
        {
            "source": {"kind": "plugin", "plugin": "tools-code-mode"},
            "content": [{"type": "text", "text": "see"}, image],
            "role": "user",
        },
        {"id": "from-pic"},
        {"id": "from-ctx"},
    ]
    assert result.concludes_turn is True


def test_failures_forward_contexts_but_not_images() -> None:
    """digest 10.5: only a success's image content is forwarded; contexts are forwarded for failures too."""

    def bad(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "kept"})
        raise RuntimeError("bad")

    async def program(tools: Tools) -> Any:
        await attempt(tools.bad({}))
        await attempt(tools.pic({}))

    registry, _ = setup(program)
    registry.register(raw_tool("bad", bad))
    registry.register(raw_tool("pic", lambda a, r: 1, output=Output({}, lambda a, v: [{"type": "image"}])))
    registry.on_post_execute(lambda run, result, nxt: Block([{"type": "image"}]) if run.name == "pic" else nxt())
    result = execute(registry)
    assert plain(result.additional_contexts) == [{"id": "kept"}]


def test_deferred_contexts_survive_a_later_program_failure() -> None:
    """digest 10.5: contexts forwarded before the program failed stay on the outer (failed) result."""

    def ctx(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "before-failure"})
        return 1

    async def program(tools: Tools) -> Any:
        await tools.ctx({})
        raise RuntimeError("later failure")

    registry, _ = setup(program)
    registry.register(raw_tool("ctx", ctx))
    result = execute(registry)
    assert result.is_error and plain(result.additional_contexts) == [{"id": "before-failure"}]


# --- 10.6: run_code's own output contract -----------------------------------------------------------------


def code_tool(mode: CodeMode, programs: dict[str, Program]) -> ToolDefinition:
    """A harness's code tool (the name `run_code` itself is reserved by the registry)."""

    async def body(args: Any, run: ToolExecution) -> Any:
        return await mode.run_code(run, programs[args["code"]], description=args.get("description"))

    return define_tool(
        name="code",
        description="Run a program.",
        parameters={"description": {"type": "string"}, "code": {"type": "string", "required": True}},
        output=run_code_output(),
        execute=body,
    )


def run_code(program: Program, description: str = "do it") -> ToolResult:
    registry = Registry()
    registry.register(echo_tool())
    mode = CodeMode(registry)
    registry.register(code_tool(mode, {"p": program}))
    return execute(registry, "code", "r", arguments={"code": "p", "description": description})


def test_run_code_schema() -> None:
    """digest 10.6: an object, additionalProperties false, `logs` a required array of strings, `result` any JSON."""
    assert canonical_json(compile_value_schema(run_code_output().schema, "schema")) == (
        '{"type":"object","additionalProperties":false,"properties":{"logs":{"type":"array","items":'
        '{"type":"string"}},"result":{}},"required":["logs"]}'
    )
    assert run_code_output().presentation_meta is None


def _text(result: ToolResult) -> str:
    return str(result.content[0]["text"])


def test_run_code_value_and_render() -> None:
    """digest 10.6: strings raw, other JSON pretty (two-space indent), logs then result joined by newlines."""

    async def both(tools: Tools) -> Any:
        tools.log("printed")
        return "returned"

    result = run_code(both)
    assert plain(result.value) == {"logs": ["printed"], "result": "returned"}  # type: ignore[union-attr]
    assert _text(result) == "printed\nreturned" and result.meta is ABSENT

    def structured(tools: Tools) -> Any:
        return {"n": 42, "ok": True}

    assert _text(run_code(structured)) == '{\n  "n": 42,\n  "ok": true\n}'

    def deep(tools: Tools) -> Any:
        return {"a": {"b": {"c": {"d": {"e": {"f": [1, 2]}}}}}}

    assert _text(run_code(deep)) == (
        '{\n  "a": {\n    "b": {\n      "c": {\n        "d": {\n          "e": {"f":[1,2]}'
        "\n        }\n      }\n    }\n  }\n}"
    )

    def logs_only(tools: Tools) -> None:
        tools.log("a")
        tools.log("b\nc")

    logged = run_code(logs_only)
    assert plain(logged.value) == {"logs": ["a", "b\nc"]} and _text(logged) == "a\nb\nc"  # type: ignore[union-attr]


def test_run_code_with_no_output() -> None:
    """digest 10.6: `(run_code completed with no output)`; a program returning nothing has no `result`."""

    async def nothing(tools: Tools) -> None:
        return None

    result = run_code(nothing)
    assert plain(result.value) == {"logs": []}  # type: ignore[union-attr]
    assert _text(result) == "(run_code completed with no output)"


def test_run_code_failures() -> None:
    """digest 10.6 / 5.6: a run error raises CodeRunFailedError with the captured output; a blank description
    raises `invalid description: expected a non-empty string`."""

    def failing(tools: Tools) -> Any:
        tools.log("captured before failure")
        raise RuntimeError("boom")

    failed = run_code(failing)
    assert failed.error == ToolError(  # type: ignore[union-attr]
        "code run failed (exception): boom\nCaptured output:\ncaptured before failure",
        ErrorInfo("CodeRunFailedError", "CODE_RUN_FAILED"),
    )
    assert _text(failed) == "Error: code run failed (exception): boom\nCaptured output:\ncaptured before failure"

    def unlossless(tools: Tools) -> Any:
        return {"x": math.inf}

    assert run_code(unlossless).error.message == (  # type: ignore[union-attr]
        "code run failed (invalid-output): the program's result is not lossless JSON"
    )
    blank = run_code(lambda tools: 1, description="  ")
    assert blank.error == ToolError("invalid description: expected a non-empty string")  # type: ignore[union-attr]
    assert isinstance(CodeRunFailedError("exception", "m"), Exception)


def test_run_code_is_never_a_binding() -> None:
    """digest 10.6 / 1.7: `run_code` is not exposed inside programs (and cannot be registered)."""
    errors: list[str] = []

    async def program(tools: Tools) -> Any:
        for lookup in (lambda: tools.run_code, lambda: tools["run_code"], lambda: tools.call("run_code", {})):
            try:
                lookup()
            except (AttributeError, KeyError) as failure:
                errors.append(type(failure).__name__)

    registry, _ = setup(program)
    dispatched: list[str] = []
    registry.on_result(lambda run, result: dispatched.append(run.call_id))
    execute(registry)
    assert errors == ["AttributeError", "KeyError", "KeyError"] and dispatched == ["p"]
    with pytest.raises(ValueError, match='tool name "run_code" is reserved'):
        registry.register(raw_tool("run_code", lambda a, r: 1))


# --- 10.7: scheduling ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_max_parallel_sub_calls_must_be_a_positive_integer(bad: Any) -> None:
    """digest 10.7: `maxParallelSubCalls must be a positive integer`."""
    with pytest.raises(ValueError, match=r"^maxParallelSubCalls must be a positive integer$"):
        CodeMode(Registry(), max_parallel_sub_calls=bad)


def test_ordered_stages_and_the_parallel_cap() -> None:
    """digest 10.7: start events and commits in submission order; only bodies overlap, at most the cap."""
    events = Events()
    running: list[int] = []
    peak: list[int] = []

    async def work(args: Any, run: ToolExecution) -> Any:
        running.append(1)
        peak.append(len(running))
        await asyncio.sleep(args["delay"])
        running.pop()
        return args["delay"]

    async def program(tools: Tools) -> Any:
        delays = [0.03, 0.0, 0.02, 0.0, 0.01]
        return await asyncio.gather(*(tools.work({"delay": d}) for d in delays))

    registry, _ = setup(program, events=events, max_parallel_sub_calls=2)
    registry.register(raw_tool("work", work))
    result = execute(registry, agent="agent")
    assert plain(result.value) == [0.03, 0.0, 0.02, 0.0, 0.01]  # type: ignore[union-attr]
    assert max(peak) == 2
    starts = [d["subCallId"] for t, d in events.seen if t == "tool/code-dispatch-start"]
    commits = [d["subCallId"] for t, d in events.seen if t == "tool/code-dispatch"]
    assert starts == commits == [f"p:code:{n}" for n in range(1, 6)]


def test_settlement_drains_every_dispatch() -> None:
    """digest 10.7: the run returns only after every dispatched sub-call and its log append settled."""
    events = Events()
    finished: list[str] = []

    async def slow(args: Any, run: ToolExecution) -> Any:
        await asyncio.sleep(0.01)
        finished.append(run.call_id)
        return 1

    async def program(tools: Tools) -> Any:
        tools.slow({})
        tools.slow({})

    registry, _ = setup(program, events=events)
    registry.register(raw_tool("slow", slow))
    execute(registry, agent="agent")
    assert finished == ["p:code:1", "p:code:2"]
    assert events.types() == ["tool/code-dispatch-start", "tool/code-dispatch-start"] + ["tool/code-dispatch"] * 2


# --- 9.5 / 9.6: dispatch events --------------------------------------------------------------------------


def test_dispatch_events_exact_data() -> None:
    """digest 9.5 / 9.6: start {rootCallId, parentCallId, subCallId, name, arguments}; the end event adds
    {isError, content} with the final content; no value and no error info."""
    events = Events()

    async def program(tools: Tools) -> Any:
        await tools.echo({"text": "VALUE"})
        await attempt(tools.nope({"k": 1}))

    registry, _ = setup(program, events=events)
    registry.on_post_execute(
        lambda run, result, nxt: Accept(content=[{"type": "text", "text": "post"}]) if run.name == "echo" else nxt()
    )
    execute(registry, call_id="p", root_call_id="root", agent="agent")
    start = {"rootCallId": "root", "parentCallId": "p", "subCallId": "p:code:1", "name": "echo"}
    assert events.seen == [
        ("tool/code-dispatch-start", {**start, "arguments": {"text": "VALUE"}}),
        (
            "tool/code-dispatch",
            {**start, "arguments": {"text": "VALUE"}, "isError": False, "content": [{"type": "text", "text": "post"}]},
        ),
        (
            "tool/code-dispatch-start",
            {"rootCallId": "root", "parentCallId": "p", "subCallId": "p:code:2", "name": "nope", "arguments": {"k": 1}},
        ),
        (
            "tool/code-dispatch",
            {
                "rootCallId": "root",
                "parentCallId": "p",
                "subCallId": "p:code:2",
                "name": "nope",
                "arguments": {"k": 1},
                "isError": True,
                "content": [{"type": "text", "text": 'Error: unknown tool "nope"'}],
            },
        ),
    ]


def test_start_event_precedes_pre_execute_and_content_is_after_finalize() -> None:
    """digest 9.5 / 9.6: the start event is appended before the sub-call's pre-execute; the end event's content
    is the final content, after finalizeContent."""
    events = Events()
    order: list[str] = []

    async def program(tools: Tools) -> Any:
        await tools.fin({})

    registry, _ = setup(program, events=events)
    registry.register(
        raw_tool("fin", lambda a, r: 1, finalize_content=lambda run, result: [{"type": "text", "text": "finalized"}])
    )

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        order.append(f"pre after {events.types()}")
        return await nxt()

    registry.on_pre_execute(pre)
    execute(registry, agent="agent")
    assert order[1] == "pre after ['tool/code-dispatch-start']"
    assert events.seen[1][1]["content"] == [{"type": "text", "text": "finalized"}]


def test_dispatch_events_only_with_an_agent() -> None:
    """digest 9.6: both code-dispatch events are appended only when the outer execution has an agent."""
    events = Events()

    async def program(tools: Tools) -> Any:
        await tools.echo({"text": "x"})

    registry, _ = setup(program, events=events)
    execute(registry)
    assert events.seen == []
    execute(registry, agent="agent")
    assert events.types() == ["tool/code-dispatch-start", "tool/code-dispatch"]


def test_dispatch_log_waterfall_and_a_throwing_listener(caplog: pytest.LogCaptureFixture) -> None:
    """digest 9.6: the log copy passes through the dispatch-log waterfall; a throwing listener is contained and
    the original content is logged."""
    events = Events()

    async def program(tools: Tools) -> Any:
        await tools.echo({"text": "x"})

    registry, mode = setup(program, events=events)
    seen: list[SubCall] = []

    async def preview(sub: SubCall, nxt: Any) -> Any:
        seen.append(sub)
        content = await nxt()
        return [{"type": "text", "text": "preview of " + content[0]["text"]}]

    dispose = mode.on_dispatch_log(preview)
    execute(registry, agent="agent")
    assert events.seen[1][1]["content"] == [{"type": "text", "text": "preview of render:x"}]
    assert seen[0].sub_call_id == "p:code:1" and seen[0].result.value == "x"  # type: ignore[union-attr]
    dispose()

    def broken(sub: SubCall, nxt: Any) -> Any:
        raise RuntimeError("listener broke")

    mode.on_dispatch_log(broken)
    events.seen.clear()
    with caplog.at_level(logging.WARNING, logger="toolcanon"):
        execute(registry, agent="agent")
    assert events.seen[1][1]["content"] == [{"type": "text", "text": "render:x"}]
    assert "listener broke" in caplog.text


def test_a_failing_sink_does_not_change_what_the_program_sees(caplog: pytest.LogCaptureFixture) -> None:
    def sink(event_type: str, data: Any) -> None:
        raise OSError("disk gone")

    received: list[Any] = []

    async def program(tools: Tools) -> Any:
        received.append(await tools.echo({"text": "x"}))

    registry, _ = setup(program, events=sink)
    with caplog.at_level(logging.WARNING, logger="toolcanon"):
        execute(registry, agent="agent")
    assert received == ["x"] and "disk gone" in caplog.text


def test_dispatch_events_in_a_session_log(tmp_path: Path) -> None:
    """digest 9.4-9.7 end to end: the agent loop's log holds the dispatch events inside the root call, and replay
    derives only the outer tool-result message."""
    path = tmp_path / "s.jsonl"

    async def program(tools: Tools) -> Any:
        return await tools.echo({"text": "inner"})

    async def go() -> Any:
        with SessionLog.open(path) as log:
            registry = Registry()
            registry.register(echo_tool())
            mode = CodeMode(registry, events=log.append)
            registry.register(program_tool(mode, program))
            calls = [ModelToolCall("c1", "prog", "{}")]
            return await run_tool_calls(registry, log, calls, turn=1, step=1, agent="a", message_id=lambda c: "m")

    outcome = asyncio.run(go())
    replayed = replay(path)
    assert [e.type for e in replayed.events] == [
        "tool/call",
        "tool/code-dispatch-start",
        "tool/code-dispatch",
        "tool/result",
    ]
    assert len(replayed.messages) == 1
    assert canonical_json(replayed.messages[0]) == canonical_json(outcome.messages[0])


def test_program_run_record() -> None:
    """A program may be a plain function; ProgramRun carries its result, logs and error."""
    registry = Registry()
    mode = CodeMode(registry)
    captured: list[ProgramRun] = []

    def program(tools: Tools) -> int:
        tools.log("x")
        return 5

    async def body(args: Any, run: ToolExecution) -> Any:
        captured.append(await mode.run(run, program))
        return 0

    registry.register(raw_tool("outer", body))
    execute(registry, "outer")
    assert captured == [ProgramRun(5, ("x",), None)]
    with pytest.raises(TypeError):
        Tools.log(Tools.__new__(Tools), 5)  # type: ignore[arg-type]
