"""Hostile inputs at the bridges and the edges: nested programs, MCP responses, the spill and timeout policies, the
session log, schemas and registration, and the call itself.

Each case asserts the exact contained outcome. The call's own fields are the caller's typed input: a malformed
``Call`` is a ``TypeError`` raised by ``execute`` (the one thing it raises), never a tool failure.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from test_hostile import (
    NOT_JSON,
    UNPRINTABLE,
    VALUE_NOT_LOSSLESS,
    BaseExplosive,
    Boom,
    ClassLiar,
    ClassRaises,
    Explosive,
    GetattributeRaises,
    HostileFloat,
    HostileStr,
    LyingDict,
    LyingList,
    RaisingAwaitable,
    Unprintable,
    failed,
)
from test_hostile_hooks import InfoSub

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    Accept,
    Call,
    JsonSchemaError,
    Output,
    Registry,
    ToolDefinition,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
    define_tool,
)
from toolcanon.errors import CodeRunFailedError
from toolcanon.mcp import mcp_tool
from toolcanon.nested import CodeMode, SubCall, ToolCallError, Tools
from toolcanon.result import ErrorInfo, ToolError
from toolcanon.session import ModelToolCall, SessionLog, replay, run_tool_calls
from toolcanon.signal import AbortController
from toolcanon.spill import install_spill
from toolcanon.timeout import install_timeout

ARGUMENTS_MESSAGE = "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"


def _raise(error: BaseException) -> Any:
    raise error


# --- nested programs ------------------------------------------------------------------------------------


def run_program(program: Callable[[Tools], Any], **mode_options: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """Run ``program`` as ``run_code`` does, as the body of a direct call ``outer`` (with an agent); returns the
    outer call's result and the dispatch events."""
    events: list[tuple[str, Any]] = []
    registry = Registry()
    registry.register(echo_tool())
    mode = CodeMode(registry, events=lambda kind, data: events.append((kind, plain(data))), **mode_options)

    async def body(args: Any, run: ToolExecution) -> Any:
        return await mode.run_code(run, program, description="a program")

    registry.register(raw_tool("outer", body))
    return call(registry, "outer", agent="agent"), events


def code_failed(kind: str, message: str) -> ToolError:
    return ToolError(f"code run failed ({kind}): {message}", ErrorInfo("CodeRunFailedError", "CODE_RUN_FAILED"))


async def _call_then_raise(tools: Tools, error: BaseException) -> Any:
    tools.call("echo", {"text": "submitted before the failure"})  # started, never awaited by the program
    raise error


PROGRAM_FAILURES = [
    pytest.param(
        lambda tools: _call_then_raise(tools, Boom("base")), code_failed("exception", "base"), id="raises-base"
    ),
    pytest.param(
        lambda tools: _call_then_raise(tools, Unprintable()), code_failed("exception", UNPRINTABLE), id="unprintable"
    ),
    pytest.param(
        lambda tools: _call_then_raise(tools, asyncio.CancelledError("own")),
        code_failed("exception", "own"),
        id="cancelled-error-of-its-own",
    ),
    pytest.param(
        lambda tools: Explosive(),
        code_failed("invalid-output", "the program's result is not lossless JSON"),
        id="returns-explosive",
    ),
    pytest.param(
        lambda tools: ClassRaises(),
        code_failed("invalid-output", "the program's result is not lossless JSON"),
        id="returns-class-raises",
    ),
    pytest.param(
        lambda tools: GetattributeRaises(),
        code_failed("invalid-output", "the program's result is not lossless JSON"),
        id="returns-getattribute-raises",
    ),
    pytest.param(
        lambda tools: {"r": LyingDict()},
        code_failed("invalid-output", "the program's result is not lossless JSON"),
        id="returns-dict-subclass",
    ),
    pytest.param(
        lambda tools: RaisingAwaitable(), code_failed("exception", "__await__"), id="returns-raising-awaitable"
    ),
]


@pytest.mark.parametrize(("program", "expected"), PROGRAM_FAILURES)
def test_a_hostile_program_fails_the_run_and_its_sub_calls_are_drained(
    program: Callable[[Tools], Any], expected: ToolError
) -> None:
    """digest 10.6 / 10.7: whatever ends the program, the run settles (every started sub-call is drained)."""
    result, events = run_program(program)
    failed(result, expected)
    if events:  # the failing programs submitted one call first: it still ran to its commit
        assert [kind for kind, _ in events] == ["tool/code-dispatch-start", "tool/code-dispatch"]


async def _received(tools: Tools, submit: Callable[[Tools], Any]) -> Any:
    try:
        return {"value": await submit(tools)}
    except ToolCallError as error:
        return {"error": error.message}
    except TypeError as error:
        return {"raised": str(error)}


BINDINGS = [
    pytest.param(lambda tools: tools.call("echo", Explosive()), {"error": ARGUMENTS_MESSAGE}, id="args-explosive"),
    pytest.param(lambda tools: tools.call("echo", ClassRaises()), {"error": ARGUMENTS_MESSAGE}, id="args-class-raises"),
    pytest.param(
        lambda tools: tools.call("echo", {"text": HostileStr("x")}),
        {"error": ARGUMENTS_MESSAGE},
        id="args-str-subclass",
    ),
    pytest.param(
        lambda tools: tools.call(42, {}),
        {"raised": "a tool name must be a string, not int"},
        id="name-not-a-string",
    ),
    pytest.param(
        lambda tools: tools.call(Explosive(), {}),
        {"raised": "a tool name must be a string, not Explosive"},
        id="name-explosive",
    ),
    pytest.param(lambda tools: tools.call(HostileStr("echo"), {"text": "ok"}), {"value": "ok"}, id="name-str-subclass"),
    pytest.param(
        lambda tools: tools.call("missing", {}), {"error": 'unknown tool "missing"'}, id="unknown-name-still-dispatched"
    ),
]


@pytest.mark.parametrize(("submit", "received"), BINDINGS)
def test_a_hostile_binding_call(submit: Callable[[Tools], Any], received: Any) -> None:
    """digest 10.1 / 10.3: arguments are normalized first; a name reaches the registry as an exact string."""

    async def program(tools: Tools) -> Any:
        return await _received(tools, submit)

    result, _ = run_program(program)
    assert type(result) is ToolSuccess and plain(result.value) == {"logs": [], "result": received}


def test_log_entries_are_exact_strings() -> None:
    def program(tools: Tools) -> Any:
        tools.log(HostileStr("a line"))
        try:
            tools.log(Explosive())  # type: ignore[arg-type]
        except TypeError as error:
            return str(error)
        return None

    result, _ = run_program(program)
    assert plain(result.value) == {"logs": ["a line"], "result": "a log entry must be a string"}
    assert all(type(entry) is str for entry in result.value["logs"])


@pytest.mark.parametrize(
    "sink",
    [
        pytest.param(lambda kind, data: _raise(Boom("sink")), id="raises-base-exception"),
        pytest.param(lambda kind, data: RaisingAwaitable(), id="returns-raising-awaitable"),
        pytest.param(lambda kind, data: ClassRaises(), id="returns-class-raises"),
    ],
)
def test_a_hostile_event_sink_does_not_change_what_the_program_sees(sink: Any) -> None:
    registry = Registry()
    registry.register(echo_tool())
    mode = CodeMode(registry, events=sink)

    async def program(tools: Tools) -> Any:
        return await tools.call("echo", {"text": "seen"})

    async def body(args: Any, run: ToolExecution) -> Any:
        return await mode.run_code(run, program, description="d")

    registry.register(raw_tool("outer", body))
    result = call(registry, "outer", agent="agent")
    assert plain(result.value) == {"logs": [], "result": "seen"}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "listener",
    [
        pytest.param(lambda sub, nxt: Explosive(), id="returns-explosive"),
        pytest.param(lambda sub, nxt: LyingList([]), id="returns-list-subclass"),
        pytest.param(lambda sub, nxt: _raise(Boom("log listener")), id="raises-base-exception"),
        pytest.param(lambda sub, nxt: RaisingAwaitable(), id="returns-raising-awaitable"),
    ],
)
def test_a_hostile_dispatch_log_listener_logs_the_original_content(listener: Any) -> None:
    """digest 9.6: a failing log listener is contained and the final content is logged; a non-JSON answer too."""
    events: list[tuple[str, Any]] = []
    registry = Registry()
    registry.register(echo_tool())
    mode = CodeMode(registry, events=lambda kind, data: events.append((kind, plain(data))))
    mode.on_dispatch_log(listener)

    async def program(tools: Tools) -> Any:
        return await tools.call("echo", {"text": "x"})

    async def body(args: Any, run: ToolExecution) -> Any:
        return await mode.run_code(run, program, description="d")

    registry.register(raw_tool("outer", body))
    call(registry, "outer", agent="agent")
    logged = [data for kind, data in events if kind == "tool/code-dispatch"]
    assert [entry["content"] for entry in logged] == [[{"type": "text", "text": "render:x"}]]


def test_a_hostile_description() -> None:
    async def go(description: Any) -> Any:
        registry = Registry()
        mode = CodeMode(registry)
        run = ToolExecution(object(), "c", "c", "outer", None, None, None)  # type: ignore[arg-type]
        return await mode.run_code(run, lambda tools: "ok", description=description)

    assert asyncio.run(go(HostileStr(" fine "))) == {"logs": [], "result": "ok"}
    for bad in (Explosive(), HostileStr("   "), ClassLiar()):
        with pytest.raises(ValueError) as raised:
            asyncio.run(go(bad))
        assert str(raised.value) == "invalid description: expected a non-empty string"


def test_a_program_interrupt_propagates_after_no_wait() -> None:
    """KeyboardInterrupt from a program is not a failure of the run: it propagates out of the registry."""
    with pytest.raises(KeyboardInterrupt):
        run_program(lambda tools: _raise(KeyboardInterrupt()))


def test_run_code_failure_is_coded() -> None:
    error = CodeRunFailedError("exception", "m")
    assert (error.name, error.code) == ("CodeRunFailedError", "CODE_RUN_FAILED")


# --- MCP responses -------------------------------------------------------------------------------------


def mcp_call(response: Callable[[], Any], **spec: Any) -> Any:
    def server(name: str, arguments: Any) -> Any:  # plain: what it returns is awaited only if awaitable
        return response()

    registry = Registry()
    registry.register(mcp_tool({"name": "t", **spec}, server, server_name="s"))
    return call(registry, "mcp__s__t")


NON_OBJECT = ToolError('MCP tool "t" returned a non-object result')
MCP_NOT_LOSSLESS = ToolError(
    'tool "mcp__s__t" returned invalid output: value is not lossless JSON', VALUE_NOT_LOSSLESS.info
)

MCP_FAILURES = [
    pytest.param(lambda: Explosive(), NON_OBJECT, id="explosive"),
    pytest.param(lambda: LyingDict({"content": []}), NON_OBJECT, id="dict-subclass"),
    pytest.param(lambda: ClassLiar(), NON_OBJECT, id="class-claims-dict"),
    pytest.param(lambda: GetattributeRaises(), NON_OBJECT, id="getattribute-raises"),
    pytest.param(lambda: [{"content": []}], NON_OBJECT, id="a-list"),
    pytest.param(lambda: RaisingAwaitable(), ToolError("__await__"), id="raising-awaitable"),
    pytest.param(lambda: {"content": [Explosive()]}, MCP_NOT_LOSSLESS, id="block-explosive"),
    pytest.param(lambda: {"content": [{"type": HostileStr("text"), "text": "x"}]}, MCP_NOT_LOSSLESS, id="type-sub"),
    pytest.param(lambda: {"content": [{1: "x"}]}, MCP_NOT_LOSSLESS, id="block-int-key"),
    pytest.param(lambda: {"content": LyingList([])}, MCP_NOT_LOSSLESS, id="content-list-subclass"),
    pytest.param(lambda: {"content": [], "structuredContent": ClassRaises()}, MCP_NOT_LOSSLESS, id="structured-bomb"),
    pytest.param(
        lambda: {
            "content": [LyingDict({"type": "text", "text": "no"}), {"type": "text", "text": "kept"}],
            "isError": True,
        },
        ToolError("kept"),
        id="error-text-skips-foreign-blocks",
    ),
    pytest.param(
        lambda: {"content": LyingList([{"type": "text", "text": "stored"}]), "isError": True},
        ToolError("stored"),
        id="error-text-of-a-list-subclass",
    ),
    pytest.param(
        lambda: {"content": [{"type": "text", "text": HostileStr("sub")}], "isError": True},
        ToolError("(t returned no model-visible content)"),
        id="error-text-str-subclass-skipped",
    ),
    pytest.param(lambda: {"toolResult": Explosive(), "isError": True}, ToolError("(no output)"), id="legacy-bomb"),
    pytest.param(lambda: {"toolResult": None, "isError": True}, ToolError("null"), id="legacy-null"),
]


@pytest.mark.parametrize(("response", "expected"), MCP_FAILURES)
def test_a_hostile_mcp_response(response: Callable[[], Any], expected: ToolError) -> None:
    """digest 11.1-11.5: the response is protocol JSON; anything else is read as data only, never run."""
    failed(mcp_call(response), expected)


@pytest.mark.parametrize(
    "flag",
    [float("nan"), 0, 0.0, "", None, False, Explosive(), [], 1],
    ids=["nan", "zero", "zero-float", "empty-string", "null", "false", "explosive", "list", "one"],
)
def test_is_error_flags_other_than_true(flag: Any) -> None:
    """`isError === true` in the original: any other flag is a success, and a foreign one is never read."""
    result = mcp_call(lambda: {"content": [{"type": "text", "text": "fine"}], "isError": flag})
    assert type(result) is ToolSuccess and plain(result.content) == [{"type": "text", "text": "fine"}]


def test_hostile_keys_of_a_response_are_ignored() -> None:
    result = mcp_call(lambda: {ClassRaises(): 1, Explosive: 2, "content": [{"type": "text", "text": "ok"}]})
    assert type(result) is ToolSuccess and plain(result.value) == {"content": [{"type": "text", "text": "ok"}]}


# --- spill ---------------------------------------------------------------------------------------------

BIG = "x" * 2000


def spill_registry(store: Any, inner: Any = None) -> Registry:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: BIG, output=Output({}, lambda a, v: [{"type": "text", "text": v}])))
    if inner is not None:
        registry.on_post_execute(inner)
    install_spill(registry, max_bytes=300, store=store)
    return registry


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        pytest.param(lambda run, result, nxt: Accept(content=[Explosive()]), NOT_JSON, id="content-explosive"),
        pytest.param(lambda run, result, nxt: Accept(content=LyingList([])), NOT_JSON, id="content-list-subclass"),
        pytest.param(lambda run, result, nxt: Accept(content=ClassLiar()), NOT_JSON, id="content-class-liar"),
    ],
)
def test_spill_leaves_hostile_content_to_the_registry(inner: Any, expected: ToolError) -> None:
    """The spill policy never reads a foreign block: content that is not an exact list of exact dicts is left to
    the registry, which refuses it."""
    stored: list[str] = []
    failed(call(spill_registry(lambda call_id, text: stored.append(text), inner), "t", agent="a"), expected)
    assert stored == []


@pytest.mark.parametrize(
    ("content", "text"),
    [
        pytest.param([{"type": "text", "text": BIG, "n": math.nan}], BIG, id="nan-member"),
        pytest.param([{1: "a", "type": "text", "text": BIG}], BIG, id="non-string-key-member"),
        pytest.param(
            [{"type": "text", "text": BIG}, {"type": "text", "text": -math.inf}], BIG + "-Infinity", id="infinite-text"
        ),
        pytest.param(
            [{"type": "text", "text": BIG}, {"type": "text", "text": math.inf}],
            BIG + "Infinity",
            id="positive-infinite-text",
        ),
        pytest.param([{"type": "text", "text": BIG}, {"type": "text", "text": math.nan}], BIG + "NaN", id="nan-text"),
        pytest.param(
            [{"type": "text", "text": BIG}, {"type": "text"}, {"type": "text", "text": [math.nan]}],
            None,
            id="text-not-lossless-nor-a-number",
        ),
        pytest.param([{"type": "text", "text": BIG}, [math.nan]], None, id="block-not-a-dict"),
        pytest.param([{"type": HostileStr("text"), "text": BIG, "n": math.nan}], None, id="type-a-str-subclass"),
    ],
)
def test_spill_bounds_all_text_content_that_is_not_lossless(content: list[Any], text: str | None) -> None:
    """spill-policy index.ts reads only each block's type and text, so all-text content is bounded whatever else
    it holds (its replacement is lossless); other content that is not lossless JSON is left to the registry."""
    stored: list[str] = []
    registry = spill_registry(
        lambda call_id, full: stored.append(full) or "/kept", lambda r, res, nxt: Accept(content=content)
    )
    result = call(registry, "t", agent="a")
    if text is None:
        failed(result, NOT_JSON)
        assert stored == []
    else:
        assert type(result) is ToolSuccess and result.content[0]["text"].endswith("Use the read tool to view it.)")
        assert stored == [text]


def test_a_spill_store_answering_a_string_subclass_or_garbage() -> None:
    result = call(spill_registry(lambda call_id, text: HostileStr("/kept")), "t", agent="a")
    text = result.content[0]["text"]
    assert type(text) is str and text.endswith(
        "(Omitted 1793 bytes. Full formatted result stored at: /kept. Use the read tool to view it.)"
    )
    for answer in (Explosive(), ClassRaises(), RaisingAwaitable):
        unchanged = call(spill_registry(lambda call_id, text, answer=answer: answer), "t", agent="a")
        assert plain(unchanged.content) == [{"type": "text", "text": BIG}]


def test_a_spill_store_raising_keeps_the_inline_content() -> None:
    """spill-policy index.ts: a save failure never fails the call or hides the content."""
    result = call(spill_registry(lambda call_id, text: _raise(Boom("store full"))), "t", agent="a")
    assert type(result) is ToolSuccess and plain(result.content) == [{"type": "text", "text": BIG}]


# --- session ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authored", "error"),
    [
        pytest.param(lambda: ToolFailure(ToolError("m", ErrorInfo(1, [2])), []), None, id="info-not-strings"),  # type: ignore[arg-type]
        pytest.param(
            lambda: ToolFailure(ToolError("m", InfoSub("N", "C")), []), {"name": "N", "code": "C"}, id="info-sub"
        ),
        pytest.param(
            lambda: ToolFailure(ToolError("m", ErrorInfo(HostileStr("N"), HostileStr("C"))), []),
            {"name": "N", "code": "C"},
            id="info-str-subclasses",
        ),
    ],
)
def test_the_session_writes_a_tool_result_for_every_tool_call(tmp_path: Path, authored: Any, error: Any) -> None:
    """A wrapper's hostile failure never breaks a turn: each tool/call gets its tool/result."""
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_execute(lambda run, nxt: authored())

    async def go() -> None:
        with SessionLog.open(tmp_path / "log.jsonl") as log:
            await run_tool_calls(registry, log, [ModelToolCall("c1", "t", "{}")], turn=1, step=1)

    asyncio.run(go())
    events = replay(tmp_path / "log.jsonl").events
    assert [event.type for event in events] == ["tool/call", "tool/result"]
    assert events[1].data.get("error") == error


# --- the timeout policy ----------------------------------------------------------------------------------


def _with_fields(cls: type, base: type, **fields: Any) -> Any:
    """An instance of a subclass whose properties shadow the base's fields, the fields set through the base."""
    made: Any = object.__new__(cls)
    for name, value in fields.items():
        base.__dict__[name].__set__(made, value)
    return made


class ShiftingBudget(ToolDefinition):
    """A definition whose ``timeout_ms`` is valid at registration and something else afterwards."""

    __slots__ = ()
    reads: ClassVar[list[int]] = []

    @property
    def timeout_ms(self) -> Any:
        self.reads.append(1)
        if len(self.reads) == 1:
            return 10
        return self.budget()

    def budget(self) -> Any:
        raise NotImplementedError


def shifting_definition(cls: type) -> Any:
    fields = {
        "name": "t",
        "description": "t",
        "parameters": {"type": "object"},
        "output": Output({}, lambda a, v: []),
        "execute": lambda a, r: 1,
        "finalize_content": None,
        "timeout_ms": None,
        "is_concurrency_safe": None,
        "present_call": None,
        "present_result": None,
    }
    return _with_fields(cls, ToolDefinition, **fields)


@pytest.mark.parametrize(
    ("later", "expected"),
    [
        pytest.param(
            lambda: math.nan,
            ToolError("deadline timeoutMs must be a positive finite number no greater than 2147483647"),
            id="nan",
        ),
        pytest.param(
            lambda: HostileFloat(5.0),
            ToolError("deadline timeoutMs must be a positive finite number no greater than 2147483647"),
            id="float-subclass",
        ),
        pytest.param(lambda: _raise(Boom("budget")), ToolError("budget"), id="raises-base-exception"),
    ],
)
def test_a_budget_that_changes_after_registration(later: Callable[[], Any], expected: ToolError) -> None:
    """The policy reads the budget on each call, as the original does: one it cannot arm fails in the wrapper."""

    class Shifting(ShiftingBudget):
        __slots__ = ()
        reads: ClassVar[list[int]] = []

        def budget(self) -> Any:
            return later()

    definition = shifting_definition(Shifting)
    registry = Registry()
    registry.register(definition)
    install_timeout(registry)
    failed(call(registry, "t"), expected)


def test_a_body_raising_a_hostile_error_after_the_deadline_still_times_out() -> None:
    async def body(args: Any, run: ToolExecution) -> Any:
        assert run.signal is not None
        await run.signal.wait()
        raise Unprintable()

    registry = Registry()
    registry.register(raw_tool("t", body, timeout_ms=10))
    install_timeout(registry)
    failed(
        call(registry, "t"), ToolError("tool call timed out after 10ms", ErrorInfo("ToolTimeoutError", "TOOL_TIMEOUT"))
    )


# --- schemas and registration ------------------------------------------------------------------------------

SCHEMAS = [
    pytest.param(lambda: Explosive(), "schema must be a schema object", id="explosive"),
    pytest.param(lambda: ClassRaises(), "schema must be a schema object", id="class-raises"),
    pytest.param(lambda: LyingDict(type="string"), "schema must be a schema object", id="dict-subclass"),
    pytest.param(
        lambda: {"type": "string", "default": Explosive()},
        "schema.default annotation must be lossless JSON data",
        id="annotation-explosive",
    ),
    pytest.param(lambda: {Explosive: 1}, "schema must be a schema object", id="key-a-class"),
    pytest.param(
        lambda: {"type": "object", "properties": {"a": ClassRaises()}},
        "schema.properties.a must be a schema object",
        id="property-class-raises",
    ),
    pytest.param(
        lambda: {"type": HostileStr("string")},
        "schema.type must be one of object/array/string/number/integer/boolean/null",
        id="type-str-subclass",
    ),
]


@pytest.mark.parametrize(("schema", "violation"), SCHEMAS)
def test_a_hostile_output_schema_is_refused_at_registration(schema: Callable[[], Any], violation: str) -> None:
    with pytest.raises(JsonSchemaError) as raised:
        Registry().register(raw_tool("t", lambda a, r: 1, schema=schema()))
    assert str(raised.value) == f"unsupported JSON schema: {violation}" and raised.value.code == "UNSUPPORTED_SCHEMA"


@pytest.mark.parametrize(
    ("schema", "parameters", "violation"),
    [
        pytest.param(lambda: Explosive(), {}, "schema must be a value schema object", id="value-explosive"),
        pytest.param(lambda: ClassRaises(), {}, "schema must be a value schema object", id="value-class-raises"),
        pytest.param(
            lambda: {"type": "json"}, {"a": Explosive()}, "parameters.a must be a value schema object", id="param-bomb"
        ),
    ],
)
def test_a_hostile_dsl_schema_is_refused(schema: Callable[[], Any], parameters: Any, violation: str) -> None:
    with pytest.raises(JsonSchemaError) as raised:
        define_tool(
            name="t",
            description="",
            parameters=parameters,
            output=Output(schema(), lambda a, v: []),
            execute=lambda a, r: 1,
        )
    assert str(raised.value) == f"unsupported JSON schema: {violation}"


def test_hostile_parameters_fail_the_schema_projection() -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, parameters={"x": BaseExplosive()}))
    with pytest.raises(ValueError) as raised:
        registry.schemas()
    assert str(raised.value) == 'tool "t" parameters must be lossless JSON before schema projection'


@pytest.mark.parametrize(
    "budget",
    [True, HostileFloat(5.0), Explosive(), "5", math.inf],
    ids=["bool", "float-subclass", "explosive", "str", "inf"],
)
def test_a_hostile_timeout_is_refused_at_registration(budget: Any) -> None:
    with pytest.raises(TypeError) as raised:
        Registry().register(raw_tool("t", lambda a, r: 1, timeout_ms=budget))
    assert str(raised.value) == 'tool "t" timeoutMs must be a positive finite number'


def test_a_name_is_stored_as_an_exact_string() -> None:
    registry = Registry()
    registry.register(raw_tool(HostileStr("t"), lambda a, r: math.nan))
    failed(call(registry, "t"), VALUE_NOT_LOSSLESS)  # the message is built from the exact copy
    with pytest.raises(TypeError) as raised:
        registry.register(raw_tool(Explosive(), lambda a, r: 1))  # type: ignore[arg-type]
    assert str(raised.value) == "a tool name must be a string, not Explosive"


def test_a_concurrency_check_raising_anything_is_exclusive() -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, is_concurrency_safe=lambda args: _raise(Boom("check"))))
    assert registry.execution_mode("t", {}) == "exclusive"


# --- the call itself ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda: {"call_id": "c", "name": "t"}, "Registry.execute takes a Call, not dict", id="a-dict"),
        pytest.param(
            lambda: Call("c", 42, {}),  # type: ignore[arg-type]
            "a call's call_id, name and root_call_id must be strings",
            id="name-int",
        ),
        pytest.param(
            lambda: Call(Explosive(), "t", {}),  # type: ignore[arg-type]
            "a call's call_id, name and root_call_id must be strings",
            id="id-bomb",
        ),
        pytest.param(
            lambda: Call("c", "t", {}, root_call_id=5),  # type: ignore[arg-type]
            "a call's call_id, name and root_call_id must be strings",
            id="root-int",
        ),
        pytest.param(
            lambda: Call("c", "t", {}, signal=Explosive()),  # type: ignore[arg-type]
            "a call's signal must be an AbortSignal or None",
            id="signal-look-alike",
        ),
    ],
)
def test_a_malformed_call_is_the_callers_type_error(make: Callable[[], Any], message: str) -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    with pytest.raises(TypeError) as raised:
        asyncio.run(registry.execute(make()))
    assert str(raised.value) == message


def test_string_subclass_identity_fields_are_copied() -> None:
    seen: list[Any] = []
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: (seen.append((r.call_id, r.name, r.root_call_id)), 1)[1]))
    result = asyncio.run(registry.execute(Call(HostileStr("c"), HostileStr("t"), {}, root_call_id=HostileStr("r"))))
    assert type(result) is ToolSuccess and seen == [("c", "t", "r")]
    assert all(type(field) is str for field in seen[0])


def test_a_call_subclass_is_read_through_its_fields() -> None:
    class Hostile(Call):
        __slots__ = ()

        @property
        def name(self) -> str:
            raise Boom("name property")

    fields: dict[str, Any] = {
        "call_id": "c",
        "name": "t",
        "arguments": {},
        "root_call_id": None,
        "parent": None,
        "agent": None,
    }
    hostile = _with_fields(Hostile, Call, signal=AbortController().signal, **fields)
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    result = asyncio.run(registry.execute(hostile))
    assert type(result) is ToolSuccess


def test_an_absent_marker_is_not_a_result() -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_execute(lambda run, nxt: ABSENT)
    failed(call(registry, "t"), ToolError("tools/execute returned Absent, not a tool result"))


def test_nested_sub_call_records_are_frozen_results() -> None:
    """What a dispatch-log listener receives is the final, materialized result."""
    seen: list[Any] = []
    registry = Registry()
    registry.register(echo_tool())

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        if run.parent is None:
            return await nxt()
        return ToolFailure(ToolError(HostileStr("sub")), [])

    registry.on_execute(wrapper)
    mode = CodeMode(registry)

    async def listener(sub: SubCall, nxt: Any) -> Any:
        seen.append(sub.result)
        return await nxt()

    mode.on_dispatch_log(listener)

    async def program(tools: Tools) -> Any:
        try:
            await tools.call("echo", {"text": "x"})
        except ToolCallError as error:
            return error.message
        return None

    async def body(args: Any, run: ToolExecution) -> Any:
        return await mode.run_code(run, program, description="d")

    registry.register(raw_tool("outer", body))
    outer = call(registry, "outer", agent="a")  # the log copy exists for an outer call with an agent
    assert type(seen[0].error) is ToolError and type(seen[0].error.message) is str
    assert plain(outer.value) == {"logs": [], "result": "sub"}  # type: ignore[union-attr]


def test_logging_of_contained_failures_uses_exact_text(caplog: pytest.LogCaptureFixture) -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_result(lambda run, result: _raise(RuntimeError(HostileStr("logged"))))
    with caplog.at_level(logging.WARNING, logger="toolcanon"):
        call(registry, "t")
    assert [record.getMessage() for record in caplog.records] == ['tool "t" (c1): tools/result observer failed: logged']
