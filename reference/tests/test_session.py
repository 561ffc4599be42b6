"""Durable events, the JSON Lines log, the agent-loop step and replay (digest 2.6, 3.7 session row, 9.1-9.8)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    Accept,
    Block,
    HarnessError,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
    canonical_json,
)
from toolcanon.demo import word_count_registry
from toolcanon.jsonvalue import MAX_SAFE_INTEGER
from toolcanon.result import ErrorInfo, ToolError
from toolcanon.session import (
    CODE_DISPATCH,
    CODE_DISPATCH_START,
    KNOWN_EVENT_TYPES,
    TOOL_CALL,
    TOOL_RESULT,
    InvalidEventError,
    MalformedLogError,
    ModelToolCall,
    SessionDataError,
    SessionLog,
    StepOutcome,
    TornLine,
    derive_messages,
    parse_model_arguments,
    replay,
    run_tool_calls,
    tool_result_data,
)
from toolcanon_conformance.replay_cli import replay_command


def by_call_id(call_id: str) -> str:
    return f"{call_id}:result"


def run_step(
    registry: Registry, path: Path, calls: list[ModelToolCall], **options: Any
) -> tuple[StepOutcome, list[dict[str, Any]]]:
    """Run one step into a fresh log at ``path``; return the outcome and the log lines as plain JSON."""
    options.setdefault("message_id", by_call_id)

    async def go() -> StepOutcome:
        with SessionLog.open(path) as log:
            return await run_tool_calls(registry, log, calls, turn=1, step=1, **options)

    outcome = asyncio.run(go())
    # the session's own strict parser: it also reads lines deeper than the recursive json module can
    return outcome, [parse_model_arguments(line) for line in path.read_text("utf-8").splitlines()]


def model_call(call_id: str, name: str, arguments: str = "{}") -> ModelToolCall:
    return ModelToolCall(call_id, name, arguments)


# --- 2.6: the loop parses the model's argument text ------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("", {}),
        ('{"text": "hi"}', {"text": "hi"}),
        ("[1, 2]", [1, 2]),
        ('"s"', "s"),
        ("{bad", "{bad"),
        ("NaN", "NaN"),
        ('{"a": Infinity}', '{"a": Infinity}'),
        ("{} {}", "{} {}"),
    ],
)
def test_argument_text_parse_rules(raw: str, parsed: Any) -> None:
    """digest 2.6: "" becomes {}; valid JSON is parsed; invalid JSON (NaN literals too) stays the raw string."""
    assert parse_model_arguments(raw) == parsed


def test_negative_zero_argument_text_is_not_lossless(tmp_path: Path) -> None:
    """digest 2.6 + 2.3: JSON.parse reads -0 as negative zero, which the argument snapshot then rejects."""
    registry = Registry()
    registry.register(echo_tool())
    outcome, _ = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "echo", '{"text": -0}')])
    assert outcome.results[0].error == ToolError("tool execution arguments must be losslessly JSON-serializable")  # type: ignore[union-attr]


def test_invalid_argument_text_reaches_define_tool_as_a_string(tmp_path: Path) -> None:
    """digest 2.6: a define_tool rejects the raw string with `"arguments" must be an object`."""
    registry = Registry()
    registry.register(echo_tool())
    outcome, lines = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "echo", "{bad")])
    failure = outcome.results[0]
    assert failure.error == ToolError(  # type: ignore[union-attr]
        'invalid arguments: "arguments" must be an object', ErrorInfo("ToolArgsError", "INVALID_ARGS")
    )
    assert lines[0]["data"]["arguments"] == "{bad"


def test_deep_argument_text_is_parsed() -> None:
    """digest 2.6 / 3.1: argument text nested deeper than Python's recursive JSON parser still parses."""
    depth = 5000
    parsed = parse_model_arguments("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        assert isinstance(parsed, list) and len(parsed) == 1
        parsed = parsed[0]
    assert parsed == []


# --- 9.1: tool/call ------------------------------------------------------------------------------------


def test_tool_call_event_is_the_raw_model_text(tmp_path: Path) -> None:
    """digest 9.1: tool/call is {turn, step, callId, name, arguments: <raw model JSON string>}."""
    registry = Registry()
    registry.register(echo_tool())
    _, lines = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "echo", '{ "text" :  "hi" }')])
    assert lines[0] == {
        "seq": 1,
        "type": "tool/call",
        "data": {"turn": 1, "step": 1, "callId": "c1", "name": "echo", "arguments": '{ "text" :  "hi" }'},
    }


def test_tool_call_is_appended_when_the_call_starts(tmp_path: Path) -> None:
    """digest 9.1: the tool/call line is on disk before pre-execute runs (flushed per event)."""
    path = tmp_path / "s.jsonl"
    registry = Registry()
    registry.register(echo_tool())
    seen: list[list[str]] = []

    async def pre(run: ToolExecution, nxt: Any) -> Any:
        seen.append([json.loads(line)["type"] for line in path.read_text("utf-8").splitlines()])
        return await nxt()

    registry.on_pre_execute(pre)
    run_step(registry, path, [model_call("c1", "echo"), model_call("c2", "echo")])
    assert seen == [["tool/call"], ["tool/call", "tool/result", "tool/call"]]


def test_calls_not_started_after_an_abort_get_synthetic_events(tmp_path: Path) -> None:
    """digest 9.1: an unstarted call gets a tool/call plus a tool/result marked ABORTED_BEFORE_DISPATCH."""
    controller = AbortController()
    registry = Registry()
    bodies: list[str] = []

    def abort_then_return(args: Any, run: ToolExecution) -> str:
        bodies.append(run.call_id)
        controller.abort("stop")
        return "done"

    registry.register(raw_tool("stopper", abort_then_return, schema={"type": "string"}))
    registry.register(echo_tool())
    outcome, lines = run_step(
        registry,
        tmp_path / "s.jsonl",
        [model_call("c1", "stopper"), model_call("c2", "echo", '{"text":"never"}')],
        signal=controller.signal,
    )
    assert bodies == ["c1"]
    assert [line["type"] for line in lines] == ["tool/call", "tool/result", "tool/call", "tool/result"]
    assert lines[2]["data"]["arguments"] == '{"text":"never"}'
    assert lines[3]["data"] == {
        "turn": 1,
        "step": 1,
        "message": {
            "source": {"kind": "tool", "callId": "c2"},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}],
                    "isError": True,
                }
            ],
            "role": "user",
            "id": "c2:result",
        },
        "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    }
    # the started call was aborted while its body ran
    assert outcome.results[0].error.info == ErrorInfo("AbortError", "ABORTED")  # type: ignore[union-attr]


# --- 9.2 / 9.3: tool/result ------------------------------------------------------------------------------


def test_tool_result_event_of_a_success_with_meta(tmp_path: Path) -> None:
    """digest 9.2: message {source, content:[tool-result block], role, id}; meta present; no error key."""
    registry = Registry()
    registry.register(echo_tool())
    _, lines = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "echo", '{"text":"hi"}')])
    assert canonical_json(lines[1]) == (
        '{"seq":2,"type":"tool/result","data":{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},'
        '"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"render:hi"}],'
        '"isError":false}],"role":"user","id":"c1:result"},"meta":{"projected":"hi"}}}'
    )


def test_tool_result_event_error_is_only_the_info(tmp_path: Path) -> None:
    """digest 9.2 / 9.3: `error` is result.error.info {name, code}; the message is not a field of its own."""

    def disk_full(args: Any, run: ToolExecution) -> Any:
        raise HarnessError("disk full", "ENOSPC", name="DiskError")

    registry = Registry()
    registry.register(raw_tool("boom", disk_full))
    _, lines = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "boom", "")])
    assert lines[1]["data"] == {
        "turn": 1,
        "step": 1,
        "message": {
            "source": {"kind": "tool", "callId": "c1"},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "content": [{"type": "text", "text": "Error: disk full"}],
                    "isError": True,
                }
            ],
            "role": "user",
            "id": "c1:result",
        },
        "error": {"name": "DiskError", "code": "ENOSPC"},
    }


def test_failure_without_info_has_no_error_key(tmp_path: Path) -> None:
    """digest 9.2: `error` is present only when info exists (a plain exception has none)."""

    def boom(args: Any, run: ToolExecution) -> Any:
        raise RuntimeError("exploded")

    registry = Registry()
    registry.register(raw_tool("boom", boom))
    _, lines = run_step(registry, tmp_path / "s.jsonl", [model_call("c1", "boom")])
    assert list(lines[1]["data"]) == ["turn", "step", "message"]
    assert lines[1]["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "Error: exploded"}]


def test_null_meta_is_persisted_and_absent_meta_is_not(tmp_path: Path) -> None:
    """digest 9.2: meta is written when result.meta is present, so `"meta":null` is persisted as present."""
    registry = Registry()
    registry.register(echo_tool("nulls", output=Output({"type": "string"}, lambda a, v: [], lambda a, v: None)))
    registry.register(echo_tool("bare", output=Output({"type": "string"}, lambda a, v: [])))
    path = tmp_path / "s.jsonl"
    run_step(registry, path, [model_call("c1", "nulls"), model_call("c2", "bare")])
    text = path.read_text("utf-8").splitlines()
    assert text[1].endswith(',"id":"c1:result"},"meta":null}}')
    assert text[3].endswith(',"id":"c2:result"}}}')


def test_message_id_is_a_fresh_uuid_by_default_and_injectable(tmp_path: Path) -> None:
    """digest 9.2: `id` is a fresh UUID; the kit injects `<callId>:result` instead."""
    registry = Registry()
    registry.register(echo_tool())

    async def go(path: Path, **options: Any) -> StepOutcome:
        with SessionLog.open(path) as log:
            calls = [model_call("a", "echo"), model_call("b", "echo")]
            return await run_tool_calls(registry, log, calls, turn=3, step=7, **options)

    fresh = asyncio.run(go(tmp_path / "fresh.jsonl"))
    ids = [message["id"] for message in fresh.messages]
    assert len(set(ids)) == 2 and all(uuid.UUID(i).version == 4 for i in ids)
    named = asyncio.run(go(tmp_path / "named.jsonl", message_id=lambda call_id: f"{call_id}:result"))
    assert [message["id"] for message in named.messages] == ["a:result", "b:result"]


def test_results_are_appended_in_model_order(tmp_path: Path) -> None:
    """digest 9.2: tool/result events follow the model's order of calls."""
    registry = Registry()
    registry.register(echo_tool())
    calls = [model_call(f"c{i}", "echo", json.dumps({"text": str(i)})) for i in range(5)]
    outcome, lines = run_step(registry, tmp_path / "s.jsonl", calls)
    results = [line for line in lines if line["type"] == "tool/result"]
    assert [line["data"]["message"]["source"]["callId"] for line in results] == [f"c{i}" for i in range(5)]
    assert [line["seq"] for line in lines] == list(range(1, 11))
    assert [plain(message) for message in outcome.messages] == [line["data"]["message"] for line in results]


def test_value_contexts_and_concludes_turn_are_never_persisted(tmp_path: Path) -> None:
    """digest 9.3: value, error.message as a field, additionalContexts and concludesTurn never reach the log."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": "ctx", "text": "CONTEXT-CANARY"})
        run.conclude_turn()
        return {"shown": "visible", "hidden": "VALUE-CANARY"}

    registry = Registry()
    registry.register(raw_tool("t", body, output=Output({}, lambda a, v: [{"type": "text", "text": v["shown"]}])))
    path = tmp_path / "s.jsonl"
    outcome, lines = run_step(registry, path, [model_call("c1", "t")])
    data = path.read_bytes()
    assert b"VALUE-CANARY" not in data and b"CONTEXT-CANARY" not in data
    assert b"concludesTurn" not in data and b"additionalContexts" not in data and b"value" not in data
    assert list(lines[1]["data"]) == ["turn", "step", "message"]
    # the contexts go to the next step's inbox instead
    assert [plain(c) for c in outcome.additional_contexts] == [{"id": "ctx", "text": "CONTEXT-CANARY"}]
    assert outcome.concludes_turn is True


def test_tool_result_data_builder_matches_the_log() -> None:
    """digest 9.2: the pure builder gives the event data (failure with info and meta)."""
    failure = ToolFailure(ToolError("m", ErrorInfo("N", "C")), [{"type": "text", "text": "x"}], meta={"k": 1})
    assert list(tool_result_data(1, 2, "c", failure, "id")) == ["turn", "step", "message", "error", "meta"]
    success = ToolSuccess("v", [], additional_contexts=[{"id": "a"}], concludes_turn=True)
    assert tool_result_data(1, 2, "c", success, "id") == {
        "turn": 1,
        "step": 2,
        "message": {
            "source": {"kind": "tool", "callId": "c"},
            "content": [{"type": "tool-result", "toolCallId": "c", "content": [], "isError": False}],
            "role": "user",
            "id": "id",
        },
    }


def test_session_append_rejects_non_json_data(tmp_path: Path) -> None:
    """digest 3.7 session row / 9.3: `session event "<type>" carries non-JSON-serializable data`; nothing is written."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        with pytest.raises(SessionDataError) as raised:
            log.append("session/title", {"x": float("nan")})
        assert str(raised.value) == 'session event "session/title" carries non-JSON-serializable data'
        assert raised.value.event_type == "session/title"
        event = log.append("session/title", {"x": [1, {"y": 2}]})
    assert (event.seq, event.type) == (1, "session/title")
    assert path.read_text("utf-8") == '{"seq":1,"type":"session/title","data":{"x":[1,{"y":2}]}}\n'
    with pytest.raises(TypeError):
        event.data["x"].append(3)  # appended data is snapshot and deep-frozen


def test_log_lines_are_canonical_json_in_utf8(tmp_path: Path) -> None:
    """The log is UTF-8 JSON Lines written by the canonical writer (lone surrogates escaped, keys in ES order)."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append("session/title", {"b": "é\ud800", "2": 1.0, "1": 1e21})
    assert path.read_bytes() == ('{"seq":1,"type":"session/title","data":{"1":1e+21,"2":1,"b":"é\\ud800"}}\n').encode()


# --- 9.4: replay -----------------------------------------------------------------------------------------


def test_replay_derives_tool_result_messages_verbatim(tmp_path: Path) -> None:
    """digest 9.4: a tool/result projects to data.message verbatim; tool/call projects to nothing."""
    registry = Registry()
    registry.register(echo_tool())
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "echo", '{"text":"a"}'), model_call("c2", "nope")])
    replayed = replay(path)
    assert replayed.torn is None
    assert [canonical_json(m) for m in replayed.messages] == [canonical_json(m) for m in outcome.messages]
    assert [e.type for e in replayed.events] == ["tool/call", "tool/result", "tool/call", "tool/result"]
    assert plain(replayed.messages[1]["content"][0]["content"]) == [
        {"type": "text", "text": 'Error: unknown tool "nope"'}
    ]


def test_code_dispatch_and_unknown_events_project_to_nothing(tmp_path: Path) -> None:
    """digest 9.4: tool/call, tool/code-dispatch-start and tool/code-dispatch produce no message."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append_tool_call(turn=1, step=1, call_id="r", name="prog", arguments="")
        ids = {"rootCallId": "r", "parentCallId": "r", "subCallId": "r:code:1", "name": "echo", "arguments": {}}
        log.append("tool/code-dispatch-start", ids)
        log.append("tool/code-dispatch", {**ids, "isError": False, "content": []})
        log.append("session/title", {})
    replayed = replay(path)
    assert len(replayed.events) == 4 and replayed.messages == ()
    assert derive_messages(replayed.events) == []


def test_replay_reproduces_presentation_not_the_value(tmp_path: Path) -> None:
    """digest 9.4: replay gives content, isError and the error.info/meta side data, never the canonical value."""
    registry = Registry()
    registry.register(echo_tool())
    registry.on_post_execute(lambda run, result, nxt: Accept(content=[{"type": "text", "text": "redacted view"}]))
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "echo", '{"text":"CANARY-VALUE"}')])
    assert outcome.results[0].value == "CANARY-VALUE"  # type: ignore[union-attr]
    replayed = replay(path)
    block = replayed.messages[0]["content"][0]
    assert plain(block["content"]) == [{"type": "text", "text": "redacted view"}] and block["isError"] is False
    assert plain(replayed.events[1].data["meta"]) == {
        "projected": "CANARY-VALUE"
    }  # meta projects the value, by contract


def test_replay_of_a_deep_content(tmp_path: Path) -> None:
    """digest 3.1 / 9.4: content nested 5,000 deep is written and replayed (no recursion limit)."""
    depth = 5000
    nested: Any = "leaf"
    for _ in range(depth):
        nested = [nested]
    registry = Registry()
    registry.register(raw_tool("deep", lambda a, r: 0, output=Output({}, lambda a, v: [{"type": "x", "v": nested}])))
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "deep")])
    assert canonical_json(replay(path).messages[0]) == canonical_json(outcome.messages[0])


# --- 9.7: durability invariants ---------------------------------------------------------------------------


def test_tool_result_needs_a_prior_tool_call_in_the_same_step(tmp_path: Path) -> None:
    """digest 9.7: a tool/result needs a prior tool/call in the same step, unless it is TOOL_NOT_STARTED."""
    result = ToolFailure(ToolError("x"), [])
    with SessionLog.open(tmp_path / "s.jsonl") as log:
        with pytest.raises(InvalidEventError, match='"tool/result" for "c1" has no prior "tool/call" in the same step'):
            log.append_tool_result(turn=1, step=1, call_id="c1", result=result, message_id="m")
        log.append_tool_call(turn=1, step=1, call_id="c1", name="t", arguments="")
        with pytest.raises(InvalidEventError):
            log.append_tool_result(turn=1, step=2, call_id="c1", result=result, message_id="m")
        log.append_tool_result(turn=1, step=1, call_id="c1", result=result, message_id="m")
        repair = ToolFailure(ToolError("not started", ErrorInfo("ToolNotStartedError", "TOOL_NOT_STARTED")), [])
        log.append_tool_result(turn=1, step=1, call_id="c9", result=repair, message_id="m9")


def test_code_dispatch_invariants(tmp_path: Path) -> None:
    """digest 9.7: non-empty ids, inside the open root call, parent is the root or a recorded sub-call, and a
    sub-call never changes its root."""

    def dispatch(root: str, parent: str, sub: str) -> dict[str, Any]:
        return {"rootCallId": root, "parentCallId": parent, "subCallId": sub, "name": "t", "arguments": {}}

    with SessionLog.open(tmp_path / "s.jsonl") as log:
        with pytest.raises(InvalidEventError, match="falls outside its root call"):
            log.append("tool/code-dispatch-start", dispatch("r", "r", "r:code:1"))
        log.append_tool_call(turn=1, step=1, call_id="r", name="prog", arguments="")
        log.append_tool_call(turn=1, step=1, call_id="q", name="prog", arguments="")
        with pytest.raises(InvalidEventError, match="needs a non-empty subCallId"):
            log.append("tool/code-dispatch-start", dispatch("r", "r", ""))
        log.append("tool/code-dispatch-start", dispatch("r", "r", "r:code:1"))
        log.append("tool/code-dispatch-start", dispatch("r", "r:code:1", "r:code:1:code:1"))
        with pytest.raises(InvalidEventError, match="neither the root nor a recorded sub-call"):
            log.append("tool/code-dispatch-start", dispatch("r", "elsewhere", "r:code:2"))
        with pytest.raises(InvalidEventError, match="cannot change its root"):
            log.append("tool/code-dispatch-start", dispatch("q", "q", "r:code:1"))
        log.append_tool_result(turn=1, step=1, call_id="r", result=ToolFailure(ToolError("x"), []), message_id="m")
        with pytest.raises(InvalidEventError, match="falls outside its root call"):
            log.append("tool/code-dispatch", {**dispatch("r", "r", "r:code:1"), "isError": False, "content": []})


def test_replay_checks_the_same_invariants(tmp_path: Path) -> None:
    """digest 9.7: a log that breaks an invariant is malformed at the offending line."""
    path = tmp_path / "s.jsonl"
    good = '{"seq":1,"type":"tool/call","data":{"turn":1,"step":1,"callId":"a","name":"t","arguments":""}}\n'
    orphan = tool_result_data(1, 1, "b", ToolFailure(ToolError("x"), []), "m")
    path.write_text(good + canonical_json({"seq": 2, "type": "tool/result", "data": orphan}) + "\n", "utf-8")
    with pytest.raises(MalformedLogError) as raised:
        replay(path)
    assert (raised.value.line, raised.value.offset) == (2, len(good))
    assert raised.value.reason == '"tool/result" for "b" has no prior "tool/call" in the same step'


# --- 9.8: presentation metadata on replay -----------------------------------------------------------------


def _cards(result_events: list[Any], call_events: dict[str, Any], present: Any) -> list[Any]:
    cards = []
    for data in result_events:
        call_id = data["message"]["source"]["callId"]
        block = data["message"]["content"][0]
        card_input = {"content": block["content"], "isError": block["isError"]}
        if "meta" in data:
            card_input["meta"] = data["meta"]
        cards.append(present(parse_model_arguments(call_events[call_id]["arguments"]), card_input))
    return cards


def test_present_result_works_identically_live_and_on_replay(tmp_path: Path) -> None:
    """digest 9.8: UIs call presentResult(args from the raw tool/call, {content, isError, meta?})."""

    def present(args: Any, result: Any) -> Any:
        return canonical_json({"args": args, "result": result})

    registry = Registry()
    registry.register(echo_tool(present_result=present))
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "echo", '{"text":"hi"}')])
    live_result = outcome.results[0]
    live = present({"text": "hi"}, {"content": live_result.content, "isError": False, "meta": live_result.meta})
    events = replay(path).events
    calls = {e.data["callId"]: e.data for e in events if e.type == "tool/call"}
    replayed = _cards([e.data for e in events if e.type == "tool/result"], calls, present)
    assert replayed == [live]


def test_meta_follows_the_value(tmp_path: Path) -> None:
    """digest 9.8: content replacement keeps meta, value replacement recomputes it, block and cancellation drop
    it, and a wrapper-authored failure's meta is kept and persisted."""
    registry = Registry()
    registry.register(echo_tool())
    controller = AbortController()

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        if run.call_id == "content":
            return Accept(content=[{"type": "text", "text": "replaced"}])
        if run.call_id == "value":
            return Accept(value="new")
        if run.call_id == "block":
            return Block([{"type": "text", "text": "blocked"}])
        if run.call_id == "cancel":
            controller.abort()
        return await nxt()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        if run.call_id == "authored":
            return ToolFailure(ToolError("authored", ErrorInfo("X", "Y")), [{"type": "text", "text": "v"}], {"m": 1})
        return await nxt()

    registry.on_post_execute(post)
    registry.on_execute(wrapper)
    ids = ["content", "value", "block", "authored"]
    _, lines = run_step(registry, tmp_path / "a.jsonl", [model_call(i, "echo", '{"text":"old"}') for i in ids])
    metas = {line["data"]["message"]["id"]: line["data"].get("meta", "ABSENT") for line in lines[1::2]}
    assert metas == {
        "content:result": {"projected": "old"},
        "value:result": {"projected": "new"},
        "block:result": "ABSENT",
        "authored:result": {"m": 1},
    }
    _, cancelled = run_step(
        registry, tmp_path / "b.jsonl", [model_call("cancel", "echo", '{"text":"old"}')], signal=controller.signal
    )
    assert "meta" not in cancelled[1]["data"]
    assert cancelled[1]["data"]["error"] == {"name": "AbortError", "code": "ABORTED"}


# --- durability: flush, fsync, torn lines, malformed lines, reopening --------------------------------------


def test_each_append_is_flushed_and_close_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SessionLog durability promise: a line is on disk (to the OS) when append returns; close() fsyncs."""
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "s.jsonl"
    log = SessionLog.open(path)
    log.append("session/title", {"n": 1})
    assert path.read_bytes() == b'{"seq":1,"type":"session/title","data":{"n":1}}\n'
    assert synced == []
    log.close()
    assert len(synced) == 2  # the file, then the directory of a new log
    log.close()  # idempotent
    with pytest.raises(ValueError, match="is closed"):
        log.append("session/title", {})


def _write_log(path: Path, count: int) -> list[bytes]:
    with SessionLog.open(path) as log:
        for index in range(count):
            log.append("session/title", {"n": index, "text": "ü" * index})
    return path.read_bytes().splitlines(keepends=True)


def test_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    """A torn last line (no newline) is reported with its line number and byte offset, and skipped."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 3)
    path.write_bytes(b"".join(lines[:2]) + lines[2][:-5])
    replayed = replay(path)
    assert replayed.torn == TornLine(3, len(lines[0]) + len(lines[1]), len(lines[2]) - 5)
    assert str(replayed.torn) == (
        f"line 3 (byte offset {len(lines[0]) + len(lines[1])}) is torn: {len(lines[2]) - 5} bytes without a newline"
    )
    assert [e.data["n"] for e in replayed.events] == [0, 1]


def test_a_complete_json_without_its_newline_is_still_torn(tmp_path: Path) -> None:
    """A line counts only once its newline is written."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 2)
    path.write_bytes(lines[0] + lines[1][:-1])
    replayed = replay(path)
    assert replayed.torn is not None and replayed.torn.line == 2 and len(replayed.events) == 1


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"{not json}", "not valid JSON"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b"", "empty line"),
        (b"[1]", "an event must be a JSON object"),
        (b'{"seq":5,"type":"x","data":{}}', "seq must be 2 (the line number), not 5"),
        (b'{"seq":2,"type":"","data":{}}', '"type" must be a non-empty string'),
        (b'{"seq":2,"type":"x"}', 'an event needs "data"'),
        (b'{"seq":2,"type":"x","data":{"a":NaN}}', "not valid JSON"),
        (b'{"seq":2,"type":"x","data":{"a":1e400}}', "not lossless JSON"),
        (
            b'{"seq":2,"type":"tool/result","data":{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},'
            b'"content":[],"role":"user","id":"m"}}}',
            "one tool-result block",
        ),
    ],
)
def test_malformed_line_is_a_typed_error_naming_the_line(tmp_path: Path, bad: bytes, reason: str) -> None:
    """Any malformed complete line raises MalformedLogError with its line number and byte offset."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 3)
    path.write_bytes(lines[0] + bad + b"\n" + lines[2])
    with pytest.raises(MalformedLogError) as raised:
        replay(path)
    error = raised.value
    assert (error.line, error.offset) == (2, len(lines[0]))
    assert reason in error.reason
    assert str(error) == f"{path}: line 2 (byte offset {len(lines[0])}): {error.reason}"


_UNCHECKED_ON_REPLAY = [
    b'{"seq":1,"type":"tool/call","data":{"turn":"1","step":1.5,"callId":"r","name":5,"arguments":{}}}',
    b'{"seq":2,"type":"tool/code-dispatch-start","data":{"rootCallId":"r","parentCallId":"r","subCallId":"r:1"}}',
    b'{"seq":3,"type":"tool/code-dispatch","data":{"rootCallId":"r","parentCallId":"r","subCallId":"r:1",'
    b'"name":null,"arguments":1,"isError":"no"}}',
    b'{"seq":4,"type":"tool/result","data":{"turn":"1","step":1.5,"message":{"source":{"kind":"tool","callId":"r"},'
    b'"content":[{"type":"tool-result","toolCallId":"r","content":[],"isError":"no"}],"role":"user","id":"m"},'
    b'"error":"boom"}}',
]


def test_replay_reads_only_what_its_messages_and_invariants_need(tmp_path: Path) -> None:
    """As the original's load, which validates only what replaying a message needs: a tool/call's turn, step,
    name and arguments, a code-dispatch event's name, arguments, isError and content and a tool/result's error
    are not checked; the turn and step still pair a tool/result with its call, compared as JSON values. The
    writer refuses them."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(_UNCHECKED_ON_REPLAY) + b"\n")
    replayed = replay(path)
    assert [event.type for event in replayed.events] == ["tool/call", "tool/code-dispatch-start",
                                                          "tool/code-dispatch", "tool/result"]  # fmt: skip
    assert [plain(message)["id"] for message in replayed.messages] == ["m"]
    other_step = _UNCHECKED_ON_REPLAY[3].replace(b'"turn":"1"', b'"turn":1')
    path.write_bytes(_UNCHECKED_ON_REPLAY[0] + b"\n" + other_step.replace(b'"seq":4', b'"seq":2') + b"\n")
    with pytest.raises(MalformedLogError, match="no prior"):
        replay(path)
    with SessionLog.open(tmp_path / "w.jsonl") as log:
        with pytest.raises(InvalidEventError, match="integer turn and step"):
            log.append("tool/call", {"turn": "1", "step": 1, "callId": "r", "name": "t", "arguments": "{}"})
        log.append("tool/call", {"turn": 1, "step": 1, "callId": "r", "name": "t", "arguments": "{}"})
        ids = {"rootCallId": "r", "parentCallId": "r", "subCallId": "r:1"}
        for partial in ({}, {"name": "t"}, {"arguments": {}}, {"name": 5, "arguments": {}}):
            with pytest.raises(InvalidEventError, match="needs a name and arguments"):
                log.append("tool/code-dispatch-start", {**ids, **partial})
        for partial in ({"isError": False}, {"content": []}, {"isError": 0, "content": []}):
            with pytest.raises(InvalidEventError, match="needs isError and content"):
                log.append("tool/code-dispatch", {**ids, "name": "t", "arguments": {}, **partial})
        result = json.loads(_result_line().replace(b'"c"', b'"r"'))["data"]
        for error in (
            "boom",
            None,
            0,
            [],
            {},
            {"name": "E"},
            {"code": "X"},
            {"name": 1, "code": "X"},
            {"name": "E", "code": 2},
        ):
            with pytest.raises(InvalidEventError, match=r"error must be \{name, code\}"):
                log.append("tool/result", {**result, "error": error})
        log.append("tool/result", {**result, "error": {"name": "E", "code": "X"}})


def test_replay_does_not_read_a_call_s_id_nor_a_dispatch_s_sub_call_id(tmp_path: Path) -> None:
    """As the original's load: a tool/call whose callId is empty, absent or no string, and a dispatch event whose
    subCallId is so, replay; such a call opens no call (a result naming it has no prior call, and a dispatch
    under it falls outside its root), and such a sub-call records no root."""
    call = b'{"seq":%d,"type":"tool/call","data":{"turn":1,"step":1,%s"name":"t","arguments":"{}"}}'
    lines = [call % (1, b'"callId":"",'), call % (2, b""), call % (3, b'"callId":7,'), call % (4, b'"callId":["c"],')]
    lines.append(call % (5, b'"callId":"c",'))
    start = b'{"seq":%d,"type":"tool/code-dispatch-start","data":{"rootCallId":"c","parentCallId":"c"%s}}'
    lines += [start % (6, b',"subCallId":""'), start % (7, b""), start % (8, b',"subCallId":{"s":1}')]
    lines.append(start % (9, b',"subCallId":"s"'))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert [event.data.get("callId", "absent") for event in replay(path).events[:5]] == ["", "absent", 7, ["c"], "c"]
    orphan = _result_line().replace(b'"c"', b'"7"')
    path.write_bytes(lines[2].replace(b'"seq":3', b'"seq":1') + b"\n" + orphan + b"\n")
    with pytest.raises(MalformedLogError, match='"tool/result" for "7" has no prior "tool/call"'):
        replay(path)
    path.write_bytes(lines[1].replace(b'"seq":2', b'"seq":1') + b"\n" + start % (2, b',"subCallId":"s"') + b"\n")
    with pytest.raises(MalformedLogError, match='falls outside its root call "c"'):
        replay(path)
    no_parent = b'{"seq":2,"type":"tool/code-dispatch","data":{"rootCallId":"c","parentCallId":"","subCallId":"s"}}'
    path.write_bytes(lines[4].replace(b'"seq":5', b'"seq":1') + b"\n" + no_parent + b"\n")
    with pytest.raises(MalformedLogError, match='"tool/code-dispatch" names no parent call'):
        replay(path)


def test_an_event_of_an_unknown_type_is_refused_unless_marked_ignorable(tmp_path: Path) -> None:
    """R-REPLAY-2: a type outside the harness's vocabulary refuses the log at its line, unless its envelope says
    ``"ignorable": true`` (then it replays and projects to nothing, R-REPLAY-1); only ``true`` marks it."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 2)
    for marker, refused in (
        ("", True),
        (',"ignorable":false', True),
        (',"ignorable":1', True),
        (',"ignorable":true', False),
    ):
        path.write_bytes(lines[0] + b'{"seq":2,"type":"x/note","data":{}' + marker.encode() + b"}\n")
        if refused:
            with pytest.raises(MalformedLogError) as raised:
                replay(path)
            assert (raised.value.line, raised.value.reason) == (
                2,
                'event type "x/note" is unknown to this reader and not marked ignorable',
            )
        else:
            replayed = replay(path)
            assert [event.type for event in replayed.events][1] == "x/note"
            assert replayed.messages == ()


def test_the_writer_refuses_an_unknown_type_unless_marked_ignorable(tmp_path: Path) -> None:
    """What the log's own reader would refuse is never written: an unknown type needs ``ignorable=True``, which
    marks its envelope, and the log replays with it."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        with pytest.raises(InvalidEventError) as refused:
            log.append("x/note", {"n": 1})
        assert (
            str(refused.value) == 'event type "x/note" is unknown to the log\'s readers: append it with ignorable=True'
        )
        assert path.read_bytes() == b""
        log.append("x/note", {"n": 1}, ignorable=True)
    assert path.read_bytes() == b'{"seq":1,"type":"x/note","data":{"n":1},"ignorable":true}\n'
    replayed = replay(path)
    assert [event.type for event in replayed.events] == ["x/note"] and replayed.messages == ()


def test_every_type_of_the_harness_vocabulary_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    known = sorted(KNOWN_EVENT_TYPES - {TOOL_CALL, TOOL_RESULT, CODE_DISPATCH, CODE_DISPATCH_START})
    path.write_bytes(
        b"".join(f'{{"seq":{seq},"type":"{name}","data":{{}}}}\n'.encode() for seq, name in enumerate(known, 1))
    )
    assert [event.type for event in replay(path).events] == known
    assert len(KNOWN_EVENT_TYPES) == 48 and "turn/end" in KNOWN_EVENT_TYPES


def test_a_repair_record_needs_its_failed_block(tmp_path: Path) -> None:
    """R-REPLAY-2: a TOOL_NOT_STARTED result needs no tool/call only when its tool-result block has isError true."""
    path = tmp_path / "s.jsonl"
    for is_error, refused in ((True, False), (False, True)):
        message = {
            "source": {"kind": "tool", "callId": "lost"},
            "content": [{"type": "tool-result", "toolCallId": "lost", "content": [], "isError": is_error}],
            "role": "user",
            "id": "lost:result",
        }
        data = {"turn": 1, "step": 1, "message": message, "error": {"name": "E", "code": "TOOL_NOT_STARTED"}}
        path.write_text(json.dumps({"seq": 1, "type": "tool/result", "data": data}) + "\n", encoding="utf-8")
        if refused:
            with pytest.raises(MalformedLogError, match='has no prior "tool/call"'):
                replay(path)
        else:
            assert len(replay(path).messages) == 1


def test_numbers_are_read_as_json_parse_reads_them(tmp_path: Path) -> None:
    """decisions.md 2 / 8: an integer literal beyond the safe range is a double, as for an ECMAScript reader, so
    a float such as 2**53 that the canonical writer prints in integer form reads back as the same float."""
    assert parse_model_arguments("9007199254740993") == 9007199254740992.0
    assert type(parse_model_arguments("9007199254740991")) is int
    assert type(parse_model_arguments("-9007199254740992")) is float
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append("session/title", {"a": 2.0**53, "b": 1e300})
    assert b'"a":9007199254740992,"b":1e+300' in path.read_bytes()
    data = replay(path).events[0].data
    assert data == {"a": 2.0**53, "b": 1e300} and type(data["a"]) is float


def test_reopening_cuts_a_torn_tail_and_continues(tmp_path: Path) -> None:
    """SessionLog.open on an existing log repairs a torn tail, then appends with the next sequence number."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 2)
    path.write_bytes(lines[0] + lines[1][:7])
    with SessionLog.open(path) as log:
        assert log.repaired == TornLine(2, len(lines[0]), 7)
        event = log.append("session/title", {"n": "again"})
    assert event.seq == 2
    replayed = replay(path)
    assert replayed.torn is None and [e.data["n"] for e in replayed.events] == [0, "again"]


def test_reopening_refuses_a_malformed_log(tmp_path: Path) -> None:
    """Nothing is appended to a corrupt log."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"garbage\n")
    with pytest.raises(MalformedLogError) as raised:
        SessionLog.open(path)
    assert raised.value.path == str(path)
    assert str(raised.value).startswith(f"{path}: line 1 (byte offset 0): ")
    assert path.read_bytes() == b"garbage\n"


def test_reopening_keeps_the_invariant_state(tmp_path: Path) -> None:
    """digest 9.7 across reopen: a result may close a call recorded before the log was reopened."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append_tool_call(turn=1, step=1, call_id="c1", name="t", arguments="")
    with SessionLog.open(path) as log:
        log.append_tool_result(turn=1, step=1, call_id="c1", result=ToolFailure(ToolError("x"), []), message_id="m")
    assert len(replay(path).messages) == 1


def test_missing_log_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        replay(tmp_path / "absent.jsonl")


# --- properties ---------------------------------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0 or str(f) == "0.0")
    | st.text(st.characters(exclude_categories=()), max_size=8)
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
)
CANARIES = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=12, max_size=16).map(lambda s: "CANARY" + s)


def _json_forms(text: str) -> list[bytes]:
    """The bytes a string can take inside a canonical JSON log line."""
    return [text.encode("utf-8", "surrogatepass"), canonical_json(text)[1:-1].encode()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shown=JSON_VALUES, hidden=JSON_VALUES, canary=CANARIES, fail=st.booleans())
def test_property_canary_in_dropped_fields_never_reaches_the_log(
    tmp_path: Path, shown: Any, hidden: Any, canary: str, fail: bool
) -> None:
    """issue property: a canary placed only in value fields the renderer drops never appears in the log bytes."""
    value = {"shown": shown, "hidden": [hidden, canary, {canary: canary}]}

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"id": canary})
        if fail:
            raise RuntimeError("failed")  # the failure message is persisted only inside the content text
        return value

    def render(args: Any, v: Any) -> Any:
        return [{"type": "text", "text": canonical_json(v["shown"])}]

    registry = Registry()
    registry.register(raw_tool("t", body, output=Output({}, render, lambda a, v: {"shown": v["shown"]})))
    path = tmp_path / f"{uuid.uuid4()}.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "t")])
    assert outcome.results[0].is_error is fail
    data = path.read_bytes()
    assert all(form not in data for form in _json_forms(canary))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(JSON_VALUES, min_size=1, max_size=4), indent=st.sampled_from([None, 2]))
def test_property_replayed_content_equals_live_content(tmp_path: Path, values: list[Any], indent: int | None) -> None:
    """issue property: the content replay derives equals the live content byte for byte."""
    registry = Registry()

    def render(args: Any, value: Any) -> Any:
        return [{"type": "text", "text": canonical_json(value, indent)}, {"type": "data", "value": value}]

    registry.register(raw_tool("t", lambda args, run: args["v"], output=Output({}, render)))
    path = tmp_path / f"{uuid.uuid4()}.jsonl"
    calls = [model_call(f"c{i}", "t", canonical_json({"v": v})) for i, v in enumerate(values)]
    outcome, _ = run_step(registry, path, calls)
    replayed = replay(path)
    live = [canonical_json(result.content).encode() for result in outcome.results]
    derived = [canonical_json(message["content"][0]["content"]).encode() for message in replayed.messages]
    assert derived == live
    assert [canonical_json(m) for m in replayed.messages] == [canonical_json(m) for m in outcome.messages]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(JSON_VALUES, min_size=1, max_size=4))
def test_property_truncated_last_line_keeps_every_earlier_event(tmp_path: Path, values: list[Any]) -> None:
    """issue property: a log truncated at every byte offset of its last line keeps all earlier events."""
    path = tmp_path / f"{uuid.uuid4()}.jsonl"
    with SessionLog.open(path) as log:
        for value in values:
            log.append("session/title", {"v": value})
    full = path.read_bytes()
    lines = full.splitlines(keepends=True)
    start = len(full) - len(lines[-1])
    earlier = [canonical_json(e.data) for e in replay(path).events][:-1]
    for cut in range(start, len(full)):
        path.write_bytes(full[:cut])
        replayed = replay(path)
        assert [canonical_json(e.data) for e in replayed.events] == earlier
        assert replayed.torn == (None if cut == start else TornLine(len(lines), start, cut - start))


# --- the command line -------------------------------------------------------------------------------------


def test_replay_command_prints_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`toolcanon replay LOG` prints each derived message as canonical JSON, one per line."""
    registry = Registry()
    registry.register(echo_tool())
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(registry, path, [model_call("c1", "echo", '{"text":"é"}'), model_call("c2", "x")])
    assert replay_command([str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "".join(canonical_json(m) + "\n" for m in outcome.messages)
    assert captured.err == ""


def test_replay_command_reports_a_torn_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 2)
    path.write_bytes(lines[0] + lines[1][:3])
    assert replay_command([str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"toolcanon replay: {path}: line 2 (byte offset {len(lines[0])}) is torn: 3 bytes without a newline; skipped\n"
    )


def test_replay_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed log exits 1; a log that is not there or is a folder is a usage error, 2: one clear line."""
    missing = tmp_path / "absent.jsonl"
    assert replay_command([str(missing)]) == 2
    assert capsys.readouterr().err == f"toolcanon replay: error: {missing}: no such file\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"oops\n")
    assert replay_command([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"toolcanon replay: error: malformed session log: {bad}: line 1 (byte offset 0): not valid JSON"
    )
    assert replay_command([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"toolcanon replay: error: {tmp_path}: is a directory, not a session log\n"
    assert replay_command([]) == 2
    assert "usage: toolcanon replay" in capsys.readouterr().err


def test_define_tool_demo_round_trip(tmp_path: Path) -> None:
    """The demo's tool (a closed object value): the log holds the content, never the value's fields."""
    path = tmp_path / "s.jsonl"
    outcome, _ = run_step(word_count_registry(), path, [model_call("c1", "word_count", '{"text":"a bb c"}')])
    assert outcome.results[0].value == {"words": 3, "longest": "bb"}  # type: ignore[union-attr]
    assert b'"words"' not in path.read_bytes()
    assert plain(replay(path).messages[0]["content"][0]["content"]) == [
        {"type": "text", "text": "3 words; longest: bb"}
    ]


def test_absent_and_none_differ() -> None:
    """decisions.md 6a: a result without meta and one with null meta are told apart by the event data."""
    assert "meta" not in tool_result_data(1, 1, "c", ToolSuccess(1, [], ABSENT), "m")
    assert tool_result_data(1, 1, "c", ToolSuccess(1, [], None), "m")["meta"] is None


def _result_line(
    *, message: dict[str, Any] | None = None, source: dict[str, Any] | None = None, block: dict[str, Any] | None = None
) -> bytes:
    """Line 2 of a log: the tool/result of line 1's call ``c``, its message, source and block changed as given."""
    data = {
        "turn": 1,
        "step": 1,
        "message": {
            "source": {"kind": "tool", "callId": "c", **(source or {})},
            "content": [{"type": "tool-result", "toolCallId": "c", "content": [], "isError": False, **(block or {})}],
            "role": "user",
            "id": "m",
            **(message or {}),
        },
    }
    return json.dumps({"seq": 2, "type": "tool/result", "data": data}, separators=(",", ":")).encode()


_DEEP = 50_000  # deeper than the recursive standard parser reads: the line goes to the iterative one

_DEEP_HEAD = b'{"seq":2,"type":"x","data":{"a":'
_DEEP_AT = len(_DEEP_HEAD) + _DEEP  # where the innermost text starts in the line


def _deep_line(inner: bytes) -> bytes:
    return _DEEP_HEAD + b"[" * _DEEP + inner + b"]" * _DEEP + b"}}"


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (_result_line(message={"id": ""}), '"tool/result" needs a message with a non-empty id'),
        (_result_line(message={"role": "assistant"}), '"tool/result" message must have role "user"'),
        (_result_line(source={"kind": "model"}), '"tool/result" message source must be {kind: "tool", callId}'),
        (_result_line(source={"callId": ""}), '"tool/result" message source must be {kind: "tool", callId}'),
        (_result_line(message={"content": None}), '"tool/result" message must hold one tool-result block'),
        (_result_line(block={"type": "text"}), '"tool/result" message must hold one tool-result block'),
        (_result_line(block={"toolCallId": "d"}), '"tool/result" tool-result block must name the source\'s callId'),
        (
            b'{"seq":2,"type":"tool/code-dispatch-start","data":{"rootCallId":"c","parentCallId":null,"subCallId":"s"}}',
            '"tool/code-dispatch-start" names no parent call',
        ),
        (
            b'{"seq":2,"type":"tool/code-dispatch","data":{"rootCallId":[1],"parentCallId":"c","subCallId":"s"}}',
            '"tool/code-dispatch" names no root call',
        ),
        (
            b'{"seq":2,"type":"x","data":{"a":' + b"[" * _DEEP + b"?" + b"]" * _DEEP + b"}}",
            f"not valid JSON (unexpected character at {32 + _DEEP})",
        ),
        (b'{"type":"x","data":{}}', "seq must be 2 (the line number), not absent"),
        (b'{"seq":"2","type":"x","data":{}}', 'seq must be 2 (the line number), not "2"'),
        (b'{"seq":2.5,"type":"x","data":{}}', "seq must be 2 (the line number), not 2.5"),
        (b"", "empty line"),
        (b"[1]", "an event must be a JSON object"),
        (b'{"seq":2,"type":"x","data":{"a":1e400}}', "not lossless JSON"),
        (b'{"seq":2,"type":"","data":{}}', '"type" must be a non-empty string'),
        (
            b'{"seq":2,"type":"tool/code-dispatch-start","data":{"rootCallId":"c","parentCallId":"c"}}',
            '"tool/code-dispatch-start" falls outside its root call "c"',
        ),
        (
            b'{"seq":2,"type":"tool/code-dispatch-start","data":{"rootCallId":"c","parentCallId":"c","subCallId":"s"}}',
            '"tool/code-dispatch-start" of "s" falls outside its root call "c"',
        ),
        (_DEEP_HEAD + b"[" * _DEEP, "not valid JSON (unexpected end of JSON text)"),
        (_deep_line(b"") + b" x", f"not valid JSON (extra data at {len(_deep_line(b'')) + 1})"),
        (_deep_line(b"1 2"), f"not valid JSON (expected ',' or ']' at {_DEEP_AT + 2})"),
        (_deep_line(b"-"), f"not valid JSON (invalid number at {_DEEP_AT})"),
        (_deep_line(b"X"), f"not valid JSON (unexpected character at {_DEEP_AT})"),
        (b'{"seq":2,"type":"x","data":{"a":NaN}}', "not valid JSON (NaN is not JSON)"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b'{"seq":2,"type":"x"}', 'an event needs "data"'),
    ],
    ids=[
        "result-message-without-id",
        "result-message-of-another-role",
        "result-source-of-another-kind",
        "result-source-with-an-empty-call-id",
        "result-without-content",
        "result-block-of-another-type",
        "result-block-of-another-call",
        "dispatch-without-parent",
        "dispatch-with-a-root-that-is-no-id",
        "deep-line-unexpected-character",
        "seq-absent",
        "seq-a-string",
        "seq-a-fraction",
        "empty-line",
        "not-an-object",
        "not-lossless-json",
        "type-empty",
        "dispatch-without-sub-call-outside-its-root",
        "dispatch-outside-its-root-names-its-sub-call",
        "deep-cut",
        "deep-extra-data",
        "deep-no-comma",
        "deep-bad-number",
        "deep-letter",
        "nan",
        "not-utf-8",
        "no-data",
    ],
)
def test_a_malformed_line_s_reason_says_what_is_wrong(tmp_path: Path, bad: bytes, reason: str) -> None:
    """A refused line's reason is exactly what is wrong with it, worded as the reader words it."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 1)
    path.write_bytes(lines[0] + bad + b"\n")
    with pytest.raises(MalformedLogError) as raised:
        replay(path)
    assert (raised.value.line, raised.value.reason) == (2, reason)
    assert raised.value.path == str(path)


def test_a_deep_line_with_a_raw_control_character_in_a_string_is_refused(tmp_path: Path) -> None:
    """The iterative parser is as strict as the standard one: a control character inside a string is escaped."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 1)
    deep = b"[" * _DEEP + b'"a\tb"' + b"]" * _DEEP
    path.write_bytes(lines[0] + b'{"seq":2,"type":"x","data":{"a":' + deep + b"}}\n")
    with pytest.raises(MalformedLogError) as raised:
        replay(path)
    tab = len('{"seq":2,"type":"x","data":{"a":') + _DEEP + 2  # where the tab is in the line
    assert raised.value.reason == f"not valid JSON (Invalid control character at: line 1 column {tab + 1} (char {tab}))"


class _FailingWrites:
    """A log file whose writes fail, as on a full disk."""

    def __init__(self, file: Any) -> None:
        self.file = file

    def write(self, data: bytes) -> int:
        raise OSError("no space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


def test_an_append_after_a_failed_write_is_refused_and_says_why(tmp_path: Path) -> None:
    """A failed write may have left part of a line on disk: the log accepts nothing after it."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        file = log._file
        log._file = _FailingWrites(file)  # type: ignore[assignment]
        with pytest.raises(OSError, match=r"^no space left on device$"):
            log.append("session/title", {})
        log._file = file  # the disk has room again: the log still refuses
        with pytest.raises(OSError) as raised:
            log.append("session/title", {})
    assert str(raised.value) == f"the session log {path} failed an earlier write and accepts no more events"
    assert path.read_bytes() == b""


_CALL = {"turn": 1, "step": 1, "callId": "c", "name": "t", "arguments": "{}"}
_IDS = {"rootCallId": "c", "parentCallId": "c", "subCallId": "c:1"}


@pytest.mark.parametrize(
    ("event_type", "data", "reason"),
    [
        ("tool/call", [], '"tool/call" data must be an object'),
        ("tool/call", {**_CALL, "step": "1"}, '"tool/call" needs integer turn and step'),
        ("tool/call", {**_CALL, "callId": ""}, '"tool/call" needs a non-empty callId and a name'),
        ("tool/call", {**_CALL, "name": 5}, '"tool/call" needs a non-empty callId and a name'),
        ("tool/call", {**_CALL, "arguments": {}}, '"tool/call" arguments must be the raw argument text (a string)'),
        ("tool/result", {"turn": 1, "message": {}}, '"tool/result" needs integer turn and step'),
        (
            "tool/code-dispatch-start",
            {**_IDS, "arguments": {}},
            '"tool/code-dispatch-start" needs a name and arguments',
        ),
        (
            "tool/code-dispatch",
            {**_IDS, "name": "t", "arguments": {}, "content": []},
            '"tool/code-dispatch" needs isError and content',
        ),
        (
            "tool/code-dispatch-start",
            {**_IDS, "subCallId": "", "name": "t", "arguments": {}},
            '"tool/code-dispatch-start" needs a non-empty subCallId',
        ),
    ],
    ids=[
        "not-an-object",
        "step-a-string",
        "call-id-empty",
        "name-not-a-string",
        "arguments-not-text",
        "result-without-step",
        "dispatch-start-without-name",
        "dispatch-without-is-error",
        "dispatch-with-an-empty-sub-call-id",
    ],
)
def test_the_writer_s_refusal_says_what_is_wrong(tmp_path: Path, event_type: str, data: Any, reason: str) -> None:
    """The InvalidEventError of an ill-formed event names the rule it breaks; nothing is written."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append("tool/call", _CALL)
        before = path.read_bytes()
        with pytest.raises(InvalidEventError) as raised:
            log.append(event_type, data)
    assert str(raised.value) == reason
    assert path.read_bytes() == before


_RESULT = plain(tool_result_data(1, 1, "c", ToolSuccess("v", []), "m"))  # a well-formed result of call "c"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({**_RESULT, "message": {**_RESULT["message"], "id": ""}}, '"tool/result" needs a message with a non-empty id'),
        (
            {**_RESULT, "message": {**_RESULT["message"], "role": "assistant"}},
            '"tool/result" message must have role "user"',
        ),
        ({**_RESULT, "error": "boom"}, '"tool/result" error must be {name, code}'),
    ],
    ids=["message-without-id", "message-of-another-role", "error-not-an-object"],
)
def test_the_writer_s_refusal_of_a_result_says_what_is_wrong(tmp_path: Path, data: Any, reason: str) -> None:
    """The InvalidEventError of an ill-formed tool/result names the rule it breaks; nothing is written."""
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append("tool/call", _CALL)
        before = path.read_bytes()
        with pytest.raises(InvalidEventError) as raised:
            log.append("tool/result", data)
    assert str(raised.value) == reason
    assert path.read_bytes() == before


@pytest.mark.parametrize("text", ["-100000000000000", "-1000000000000000", "-9007199254740991"])
def test_a_negative_safe_integer_of_15_or_16_digits_is_read_as_an_int(text: str) -> None:
    """decisions.md 2: every safe integer literal reads as an int, the longest negative ones included."""
    parsed = parse_model_arguments(text)
    assert type(parsed) is int
    assert parsed == int(text)


def test_a_log_s_repr_names_its_path_and_its_events(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog.open(path) as log:
        log.append("tool/call", _CALL)
        assert repr(log) == f"<SessionLog {str(path)!r} events=1>"


def test_an_append_to_a_closed_log_is_refused_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = SessionLog.open(path)
    log.close()
    with pytest.raises(ValueError) as raised:
        log.append("tool/call", _CALL)
    assert str(raised.value) == f"the session log {path} is closed"
    assert path.read_bytes() == b""


@pytest.mark.parametrize("event_type", ["", 5])
def test_an_event_type_that_is_not_a_non_empty_string_is_refused(tmp_path: Path, event_type: Any) -> None:
    with SessionLog.open(tmp_path / "s.jsonl") as log, pytest.raises(InvalidEventError) as raised:
        log.append(event_type, {})
    assert str(raised.value) == "an event type must be a non-empty string"


_DEEP_PREFIX = b'{"seq":2,"type":"x","data":{"a":' + b"[" * _DEEP


@pytest.mark.parametrize(
    ("inner", "reason"),
    [
        (b"{1:2}", f"not valid JSON (expected a property name at {len(_DEEP_PREFIX) + 1})"),
        (b'{"b":1,}', f"not valid JSON (expected a property name at {len(_DEEP_PREFIX) + 7})"),
        (b'{"b" 1}', f"not valid JSON (expected ':' at {len(_DEEP_PREFIX) + 5})"),
    ],
    ids=["no-name-after-the-brace", "no-name-after-a-comma", "no-colon-after-the-name"],
)
def test_a_deep_line_s_object_without_a_property_name_is_refused_and_says_where(
    tmp_path: Path, inner: bytes, reason: str
) -> None:
    """The iterative parser names the offset where a property name or its colon is missing, as the line's reason."""
    path = tmp_path / "s.jsonl"
    lines = _write_log(path, 1)
    path.write_bytes(lines[0] + _DEEP_PREFIX + inner + b"]" * _DEEP + b"}}\n")
    with pytest.raises(MalformedLogError) as raised:
        replay(path)
    assert raised.value.line == 2
    assert raised.value.reason == reason


def test_replayed_events_are_numbered_by_their_lines(tmp_path: Path) -> None:
    """Each replayed event's seq is its line number, as the writer numbered it, and reopening numbers on from it."""
    path = tmp_path / "s.jsonl"
    _write_log(path, 3)
    replayed = replay(path)
    assert [event.seq for event in replayed.events] == [1, 2, 3]
    assert [event.data["n"] for event in replayed.events] == [0, 1, 2]
    with SessionLog.open(path) as log:
        appended = log.append("session/title", {"n": 3, "text": ""})
    assert appended.seq == 4
    assert [event.seq for event in replay(path).events] == [1, 2, 3, 4]
