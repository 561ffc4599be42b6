"""The plain path: a call through a registry with no pre-execute listener, guard or wrapper runs dispatch and the
body stage in one frame. Each call here runs there and through the hooked path (forced by a hook that changes
nothing), and the two must give the same result, field for field and type for type, the same log records, and
the same view of the execution to the body."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from conftest import echo_tool, plain, raw_tool
from toolcanon import (
    AbortController,
    Call,
    DispatchToken,
    HarnessError,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
)
from toolcanon.jsonvalue import snapshot_json
from toolcanon.result import ABSENT, ErrorInfo, ToolError

Case = Callable[[Registry, list[Any]], Call]
"""Registers the tools a call needs on a fresh registry, and returns the call; ``seen`` gathers what the body saw."""


def _anatomy(thing: Any) -> Any:
    """``thing`` spelled out with the exact type of every part, so that equal anatomies mean equal results."""
    kind = type(thing)
    if kind is ToolSuccess:
        fields = ("value", "content", "meta", "additional_contexts", "concludes_turn")
    elif kind is ToolFailure:
        fields = ("error", "content", "meta", "additional_contexts")
    elif kind is ToolError:
        fields = ("message", "info")
    elif kind is ErrorInfo:
        fields = ("name", "code")
    elif isinstance(thing, dict):
        return (kind.__name__, [(key, _anatomy(item)) for key, item in thing.items()])
    elif isinstance(thing, (list, tuple)):
        return (kind.__name__, [_anatomy(item) for item in thing])
    elif thing is ABSENT or thing is None or kind in (str, int, float, bool):
        return (kind.__name__, repr(thing))
    else:
        return (kind.__name__,)
    return (kind.__name__, [(field, _anatomy(getattr(thing, field))) for field in fields])


def _noting(seen: list[Any]) -> Callable[[Any, ToolExecution], None]:
    def note(args: Any, run: ToolExecution) -> None:
        signal = run.signal
        seen.append((type(signal).__name__, signal is not None and signal.aborted, run.is_nested, run.arguments))

    return note


def success(registry: Registry, seen: list[Any]) -> Call:
    note = _noting(seen)

    def body(args: Any, run: ToolExecution) -> Any:
        note(args, run)
        return args["text"]

    registry.register(echo_tool(execute=body))
    return Call("c1", "echo", {"text": "hi"})


def nested_success(registry: Registry, seen: list[Any]) -> Call:
    success(registry, seen)
    return Call("c1", "echo", {"text": "hi"}, parent=DispatchToken())


def async_success(registry: Registry, seen: list[Any]) -> Call:
    note = _noting(seen)

    async def body(args: Any, run: ToolExecution) -> Any:
        note(args, run)
        await asyncio.sleep(0)
        return {"items": [1, 2.5, None, True], "10": "a", "2": "b"}

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {"k": [1, {"j": "v"}]})


def tool_error(registry: Registry, seen: list[Any]) -> Call:
    def body(args: Any, run: ToolExecution) -> Any:
        raise HarnessError("the tool failed", "SOME_CODE")

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def plain_exception(registry: Registry, seen: list[Any]) -> Call:
    def body(args: Any, run: ToolExecution) -> Any:
        raise ValueError("plain")

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def not_lossless(registry: Registry, seen: list[Any]) -> Call:
    registry.register(raw_tool("raw", lambda args, run: {"score": float("nan")}))
    return Call("c1", "raw", {})


def schema_violation(registry: Registry, seen: list[Any]) -> Call:
    registry.register(raw_tool("raw", lambda args, run: 7, schema={"type": "string"}))
    return Call("c1", "raw", {})


def invalid_arguments(registry: Registry, seen: list[Any]) -> Call:
    registry.register(echo_tool())
    return Call("c1", "echo", {"text": 3})


def arguments_not_lossless(registry: Registry, seen: list[Any]) -> Call:
    registry.register(echo_tool())
    return Call("c1", "echo", {"text": float("inf")})


def unknown_tool(registry: Registry, seen: list[Any]) -> Call:
    registry.register(echo_tool())
    return Call("c1", "missing", {"text": "hi"})


def render_raises(registry: Registry, seen: list[Any]) -> Call:
    def render(args: Any, value: Any) -> Any:
        raise RuntimeError("no render")

    registry.register(raw_tool("raw", lambda args, run: "v", output=Output({}, render)))
    return Call("c1", "raw", {})


def render_not_lossless(registry: Registry, seen: list[Any]) -> Call:
    registry.register(raw_tool("raw", lambda args, run: "v", output=Output({}, lambda args, value: [{1, 2}])))
    return Call("c1", "raw", {})


def meta_raises(registry: Registry, seen: list[Any]) -> Call:
    def meta(args: Any, value: Any) -> Any:
        raise RuntimeError("no meta")

    output = Output({}, lambda args, value: [{"type": "text", "text": "x"}], meta)
    registry.register(raw_tool("raw", lambda args, run: "v", output=output))
    return Call("c1", "raw", {})


def aborted_before_dispatch(registry: Registry, seen: list[Any]) -> Call:
    registry.register(echo_tool())
    controller = AbortController()
    controller.abort("stop")
    return Call("c1", "echo", {"text": "hi"}, signal=controller.signal)


def aborted_during_body(registry: Registry, seen: list[Any]) -> Call:
    controller = AbortController()
    note = _noting(seen)

    async def body(args: Any, run: ToolExecution) -> Any:
        controller.abort("stop")
        note(args, run)
        return "late"

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {}, signal=controller.signal)


def aborted_body_raises(registry: Registry, seen: list[Any]) -> Call:
    controller = AbortController()

    def body(args: Any, run: ToolExecution) -> Any:
        controller.abort("stop")
        raise ValueError("gave up")

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {}, signal=controller.signal)


def signal_not_aborted(registry: Registry, seen: list[Any]) -> Call:
    success(registry, seen)
    return Call("c1", "echo", {"text": "hi"}, signal=AbortController().signal)


def deferred_and_concluded(registry: Registry, seen: list[Any]) -> Call:
    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"note": "first"})
        run.defer_context("second")
        run.conclude_turn()
        return "done"

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def deferred_on_failure(registry: Registry, seen: list[Any]) -> Call:
    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context("kept")
        raise ValueError("failed")

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def finalized(registry: Registry, seen: list[Any]) -> Call:
    def finalize(run: ToolExecution, result: Any) -> Any:
        seen.append(_anatomy(result))
        return [{"type": "text", "text": "finalized"}]

    registry.register(echo_tool(finalize_content=finalize))
    return Call("c1", "echo", {"text": "hi"})


def finalizer_raises(registry: Registry, seen: list[Any]) -> Call:
    def finalize(run: ToolExecution, result: Any) -> Any:
        raise RuntimeError("finalizer")

    registry.register(raw_tool("raw", lambda args, run: "v", finalize_content=finalize))
    return Call("c1", "raw", {})


def body_adds_hooks(registry: Registry, seen: list[Any]) -> Call:
    """Hooks registered by the body: the stages after it see them on either path."""

    def body(args: Any, run: ToolExecution) -> Any:
        registry.on_post_execute(lambda run, result, nxt: _replaced())
        registry.on_result(lambda run, result: seen.append(("observed", _anatomy(result))))
        registry.on_result(_failing_observer)
        return "v"

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def body_adds_an_observer(registry: Registry, seen: list[Any]) -> Call:
    def body(args: Any, run: ToolExecution) -> Any:
        registry.on_result(lambda run, result: seen.append(("observed", _anatomy(result))))
        registry.on_result(_failing_observer)
        return "v"

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {})


def aborted_with_deferred(registry: Registry, seen: list[Any]) -> Call:
    controller = AbortController()

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context("kept")
        controller.abort("stop")
        return "late"

    registry.register(raw_tool("raw", body))
    return Call("c1", "raw", {}, signal=controller.signal)


def body_disposes_its_tool(registry: Registry, seen: list[Any]) -> Call:
    dispose: list[Callable[[], None]] = []

    def body(args: Any, run: ToolExecution) -> Any:
        dispose[0]()
        return "v"

    dispose.append(registry.register(raw_tool("raw", body)))
    registry.on_change(lambda name: seen.append(("changed", name)))
    return Call("c1", "raw", {})


def _replaced() -> Any:
    from toolcanon import Accept

    return Accept(value="replaced")


def _failing_observer(run: ToolExecution, result: Any) -> None:
    raise RuntimeError("observer failed")


CASES: list[Case] = [
    success,
    nested_success,
    async_success,
    tool_error,
    plain_exception,
    not_lossless,
    schema_violation,
    invalid_arguments,
    arguments_not_lossless,
    unknown_tool,
    render_raises,
    render_not_lossless,
    meta_raises,
    aborted_before_dispatch,
    aborted_during_body,
    aborted_body_raises,
    signal_not_aborted,
    deferred_and_concluded,
    deferred_on_failure,
    finalized,
    finalizer_raises,
    body_adds_hooks,
    body_adds_an_observer,
    aborted_with_deferred,
    body_disposes_its_tool,
]


async def _pass_pre(run: ToolExecution, nxt: Any) -> Any:
    return await nxt()


async def _pass_around(run: ToolExecution, nxt: Any) -> Any:
    return await nxt()


# each forces the hooked path and changes nothing
FORCING: dict[str, Callable[[Registry], Any]] = {
    "guard": lambda registry: registry.add_guard(lambda run: None),
    "pre-execute": lambda registry: registry.on_pre_execute(_pass_pre),
    "wrapper": lambda registry: registry.on_execute(_pass_around),
}


def _run(case: Case, force: Callable[[Registry], Any] | None, caplog: pytest.LogCaptureFixture) -> Any:
    registry = Registry()
    seen: list[Any] = []
    call = case(registry, seen)
    if force is not None:
        force(registry)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="toolcanon"):
        result = asyncio.run(registry.execute(call))
    logs = [(record.levelname, record.getMessage()) for record in caplog.records]
    return _anatomy(result), seen, logs


@pytest.mark.parametrize("force", list(FORCING))
@pytest.mark.parametrize("case", CASES, ids=[case.__name__ for case in CASES])
def test_the_plain_path_gives_the_hooked_paths_results(
    case: Case, force: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain_run, hooked = _plain_and_hooked(case, caplog, monkeypatch, force)
    assert plain_run == hooked


def test_the_cases_cover_each_outcome() -> None:
    """The cases reach every way the plain path ends: a success, each kind of failure, and a cancellation."""
    results = {}
    for case in CASES:
        registry = Registry()
        results[case.__name__] = asyncio.run(registry.execute(case(registry, [])))

    def code(name: str) -> str | None:
        result = results[name]
        assert isinstance(result, ToolFailure), name
        return result.error.info.code if result.error.info else None

    assert isinstance(results["success"], ToolSuccess) and results["success"].meta == {"projected": "hi"}
    assert isinstance(results["nested_success"], ToolSuccess) and results["nested_success"].meta is ABSENT
    assert results["deferred_and_concluded"].concludes_turn is True  # type: ignore[union-attr]
    assert results["deferred_and_concluded"].additional_contexts == [{"note": "first"}, "second"]
    assert code("aborted_before_dispatch") == "ABORTED_BEFORE_DISPATCH"
    assert code("aborted_during_body") == "ABORTED"
    assert code("aborted_body_raises") is None  # a failure stays itself: a cancellation replaces only a success
    assert code("unknown_tool") == "UNKNOWN_TOOL"
    assert results["body_disposes_its_tool"].value == "v"  # type: ignore[union-attr]
    assert code("schema_violation") == code("not_lossless") == code("render_raises") == "INVALID_TOOL_OUTPUT"
    assert code("invalid_arguments") == "INVALID_ARGS"
    assert code("tool_error") == "SOME_CODE"
    assert code("plain_exception") is None and code("arguments_not_lossless") is None
    assert results["body_adds_hooks"].value == "replaced"  # type: ignore[union-attr]
    assert code("aborted_with_deferred") == "ABORTED"
    assert results["aborted_with_deferred"].additional_contexts == ["kept"]


@pytest.mark.parametrize("force", list(FORCING))
def test_the_plain_path_declines_once_a_hook_is_registered(force: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any pre-execute listener, guard or wrapper sends a call through the hooked path."""
    registry = Registry()
    registry.register(echo_tool())
    FORCING[force](registry)
    entered: list[str] = []
    original = Registry._dispatch

    async def counting(self: Registry, *args: Any) -> Any:
        entered.append("dispatch")
        return await original(self, *args)

    monkeypatch.setattr(Registry, "_dispatch", counting)
    result = asyncio.run(registry.execute(Call("c1", "echo", {"text": "hi"})))
    assert entered == ["dispatch"]
    assert not result.is_error


@pytest.mark.parametrize("later", ["post-execute", "deferred context"])
def test_the_plain_path_hands_on_its_success_as_this_call_s_own(later: str) -> None:
    """A success the plain path built and hands to a later stage is this call's own (R-WRAP-5 re-normalizes
    only one that is not): it is rendered and projected once, and reaches the caller as it was built."""
    registry = Registry()
    projections: list[str] = []

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        projections.append("render")
        return [{"type": "text", "text": value}]

    def meta(args: Any, value: Any) -> Any:
        projections.append("meta")
        return {"v": value}

    def body(args: Any, run: ToolExecution) -> Any:
        if later == "deferred context":
            run.defer_context("first")
        return "v"

    registry.register(
        raw_tool("t", body, output=Output(schema={"type": "string"}, render=render, presentation_meta=meta))
    )
    if later == "post-execute":
        registry.on_post_execute(lambda run, result, nxt: nxt())
    result = asyncio.run(registry.execute(Call("c1", "t", {})))
    assert isinstance(result, ToolSuccess)
    assert (result.value, plain(result.content), result.meta) == ("v", [{"type": "text", "text": "v"}], {"v": "v"})
    assert projections == ["render", "meta"]


def _plain_and_hooked(
    case: Case, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, force: str = "guard"
) -> tuple[Any, Any]:
    """The result of ``case`` on the plain path and on the hooked path (forced by the hook ``force`` names, a guard
    that passes unless told)."""
    hooked = _run(case, FORCING[force], caplog)
    with monkeypatch.context() as patched:

        def forbidden(*args: Any) -> Any:
            raise AssertionError("a call with no hooks took the hooked path")

        patched.setattr(Registry, "_dispatch", forbidden)
        patched.setattr(Registry, "_body_stage", forbidden)
        plain_run = _run(case, None, caplog)
    return plain_run, hooked


def _aborted(code: str) -> Any:
    message = "tool call aborted" if code == "ABORTED" else "tool call aborted before dispatch"
    return _anatomy(
        ToolFailure(
            ToolError(message, ErrorInfo("AbortError", code)),
            snapshot_json([{"type": "text", "text": f"Error: {message}"}]),
        )
    )


def test_a_caller_aborted_during_the_body_cancels_its_success_when_a_listener_stops_the_abort(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's own listener raises as the caller aborts, so the call's signal never hears of it: the caller
    is still cancelled when the body settles, and its success becomes ABORTED (R-ABORT-4) on either path."""

    def case(registry: Registry, seen: list[Any]) -> Call:
        controller = AbortController()

        def refuse(reason: object) -> None:
            raise RuntimeError("listener refused")

        controller.signal.add_listener(refuse)

        def body(args: Any, run: ToolExecution) -> Any:
            try:
                controller.abort("stop")
            except RuntimeError as refused:
                seen.append((str(refused), run.signal is not None and run.signal.aborted))
            return "late"

        registry.register(raw_tool("raw", body))
        return Call("c1", "raw", {}, signal=controller.signal)

    plain_run, hooked = _plain_and_hooked(case, caplog, monkeypatch)
    assert plain_run == hooked
    assert plain_run[0] == _aborted("ABORTED")
    assert plain_run[1] == [("listener refused", False)]


class _Uncomparable:
    """A signal listener that is never called and raises when compared (as removing a listener compares)."""

    def __call__(self, reason: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("listener compared")

    __hash__ = None  # type: ignore[assignment]


def test_a_callers_signal_that_cannot_drop_the_calls_listener_fails_the_call_and_is_finalized(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unlinking the call's signal from the caller's raises after the body ran: the call fails with that error,
    skips post-execute, and its finalizer still runs once, on either path."""

    def case(registry: Registry, seen: list[Any]) -> Call:
        controller = AbortController()
        controller.signal.add_listener(_Uncomparable())

        def finalize(run: ToolExecution, result: Any) -> Any:
            seen.append(_anatomy(result))
            return [{"type": "text", "text": "finalized"}]

        registry.register(raw_tool("raw", lambda args, run: "v", finalize_content=finalize))

        async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
            seen.append("post")
            return await nxt()

        registry.on_post_execute(post)
        return Call("c1", "raw", {}, signal=controller.signal)

    plain_run, hooked = _plain_and_hooked(case, caplog, monkeypatch)
    assert plain_run == hooked
    failure = _anatomy(
        ToolFailure(ToolError("listener compared"), snapshot_json([{"type": "text", "text": "finalized"}]))
    )
    unfinalized = _anatomy(
        ToolFailure(
            ToolError("listener compared"), snapshot_json([{"type": "text", "text": "Error: listener compared"}])
        )
    )
    assert plain_run[0] == failure
    assert plain_run[1] == [unfinalized]


def test_a_body_that_aborts_the_signal_it_holds_ends_aborted(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call's signal aborted as the body settles, its caller not: the success becomes ABORTED (R-ABORT-4)."""

    def case(registry: Registry, seen: list[Any]) -> Call:
        def body(args: Any, run: ToolExecution) -> Any:
            signal = run.signal
            assert signal is not None
            controller = AbortController()
            controller.signal = signal
            controller.abort("by the body")
            return "late"

        registry.register(raw_tool("raw", body))
        return Call("c1", "raw", {})

    plain_run, hooked = _plain_and_hooked(case, caplog, monkeypatch)
    assert plain_run == hooked
    assert plain_run[0] == _aborted("ABORTED")


@pytest.mark.parametrize("force", [None, *FORCING])
def test_a_success_a_post_execute_listener_accepts_is_the_object_the_caller_gets(force: str | None) -> None:
    """A plain accept hands the very success the listener was shown to the caller, on either path."""
    registry = Registry()
    registry.register(echo_tool())
    shown: list[Any] = []

    async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
        shown.append(result)
        return await nxt()

    registry.on_post_execute(post)
    if force is not None:
        FORCING[force](registry)
    result = asyncio.run(registry.execute(Call("c1", "echo", {"text": "hi"})))
    assert isinstance(result, ToolSuccess) and plain(result.content) == [{"type": "text", "text": "render:hi"}]
    assert len(shown) == 1 and result is shown[0]


class _CountedListener:
    """A signal listener that is never called and records each time it is compared (as removing a listener
    compares)."""

    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def __call__(self, reason: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        self.seen.append("compared")
        return False

    __hash__ = None  # type: ignore[assignment]


def test_the_plain_path_links_the_call_to_the_callers_signal_as_the_hooked_path_does(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call's signal listens on the caller's twice (the caller's signal and the unreplaced call signal) and
    drops both listeners after the body: the caller's earlier listener is compared as often on either path."""

    def case(registry: Registry, seen: list[Any]) -> Call:
        controller = AbortController()
        controller.signal.add_listener(_CountedListener(seen))
        registry.register(raw_tool("raw", lambda args, run: "v"))
        return Call("c1", "raw", {}, signal=controller.signal)

    plain_run, hooked = _plain_and_hooked(case, caplog, monkeypatch)
    assert plain_run == hooked
    assert plain_run[1] == ["compared"] * 4
