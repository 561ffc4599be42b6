"""Hostile hooks and what they return: pre-execute decisions, guards, approval outcomes, wrappers and the results
they hand back, post-execute decisions, finalizers, result observers, and hook disposal.

Every trust decision is an identity test on objects the registry made, and a result, error, info or decision of
a foreign class (a subclass, a lying ``__class__``) is read through the contract class's own fields, never
returned as it is. Each case asserts the exact failure (message and info) or the exact surviving result.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import weakref
from collections.abc import Awaitable, Callable
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
    EqTrue,
    Explosive,
    GetattributeRaises,
    HostileStr,
    LyingList,
    Phases,
    RaisingAwaitable,
    Unprintable,
    failed,
)

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    ABSENT,
    AbortController,
    Accept,
    Allow,
    Ask,
    Block,
    Call,
    Deny,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolSuccess,
)
from toolcanon.result import ErrorInfo, ToolError


def _raise(error: BaseException) -> Any:
    raise error


def registry_with_t(body: Callable[..., Any] = lambda a, r: 1) -> Registry:
    registry = Registry()
    registry.register(raw_tool("t", body))
    return registry


# --- subclasses of the contract's classes --------------------------------------------------------------


class EqSuccess(ToolSuccess):
    """A success equal to every object (so ``result in owned`` would trust it)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class PropertySuccess(ToolSuccess):
    """A success whose attributes say something else than its fields hold."""

    __slots__ = ()

    def __init__(self, value: Any) -> None:
        ToolSuccess.__dict__["value"].__set__(self, value)
        ToolSuccess.__dict__["content"].__set__(self, [{"type": "text", "text": "authored"}])
        ToolSuccess.__dict__["meta"].__set__(self, ABSENT)
        ToolSuccess.__dict__["additional_contexts"].__set__(self, ABSENT)
        ToolSuccess.__dict__["concludes_turn"].__set__(self, True)

    @property
    def value(self) -> Any:
        raise Boom("value property")

    @property
    def additional_contexts(self) -> Any:
        raise Boom("contexts property")


class EmptySuccess(ToolSuccess):
    __slots__ = ()


class EqFailure(ToolFailure):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class ShiftingError(ToolError):
    """An error whose ``message`` is different on every read (its field holds ``authored``)."""

    __slots__ = ()

    def __init__(self) -> None:
        ToolError.__dict__["message"].__set__(self, "authored")
        ToolError.__dict__["info"].__set__(self, None)

    _reads = itertools.count()

    @property
    def message(self) -> str:
        return f"read {next(self._reads)}"


class InfoSub(ErrorInfo):
    __slots__ = ()

    @property
    def name(self) -> str:
        raise Boom("name property")

    def __init__(self, name: str, code: str) -> None:
        ErrorInfo.__dict__["name"].__set__(self, name)
        ErrorInfo.__dict__["code"].__set__(self, code)


class DenySub(Deny):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    __hash__ = object.__hash__


class BlockSub(Block):
    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise Boom("__class__")


class AcceptSub(Accept):
    __slots__ = ()


class ClassClaimsBlock:
    """Claims to be a Block through ``__class__``."""

    feedback: ClassVar[list[Any]] = [{"type": "text", "text": "claimed"}]
    additional_contexts = ABSENT

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return Block


class ClassClaimsSuccess:
    value = float("nan")
    content: ClassVar[list[Any]] = []
    meta = ABSENT
    additional_contexts = ABSENT

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return ToolSuccess


def authored_failure(error: Any, content: Any = (), meta: Any = ABSENT, contexts: Any = ABSENT) -> ToolFailure:
    return ToolFailure(error, [{"type": "text", "text": "authored"}] if content == () else content, meta, contexts)


# --- pre-execute ---------------------------------------------------------------------------------------

DENIED_AS = "denied"

PRE_DECISIONS = [
    pytest.param(
        lambda: Explosive(), ToolError("tools/pre-execute returned Explosive, not a decision"), id="explosive"
    ),
    pytest.param(
        lambda: ClassRaises(), ToolError("tools/pre-execute returned ClassRaises, not a decision"), id="class-raises"
    ),
    pytest.param(
        lambda: GetattributeRaises(),
        ToolError("tools/pre-execute returned GetattributeRaises, not a decision"),
        id="getattribute-raises",
    ),
    pytest.param(
        lambda: ClassClaimsBlock(),
        ToolError("tools/pre-execute returned ClassClaimsBlock, not a decision"),
        id="claims",
    ),
    pytest.param(lambda: EqTrue(), ToolError("tools/pre-execute returned EqTrue, not a decision"), id="eq-true"),
    pytest.param(lambda: DenySub("sub reason"), ToolError("sub reason"), id="deny-subclass"),
    pytest.param(lambda: Deny(Explosive()), NOT_JSON, id="deny-explosive-reason"),
    pytest.param(lambda: Deny(BaseExplosive()), NOT_JSON, id="deny-base-explosive-reason"),
    pytest.param(lambda: Deny(HostileStr("sub")), ToolError("sub"), id="deny-str-subclass-reason"),
    pytest.param(lambda: Deny(10**5000), NOT_JSON, id="deny-huge-int-reason"),
    pytest.param(lambda: Deny(RuntimeError("as error")), NOT_JSON, id="deny-error-reason"),
    pytest.param(lambda: Ask(Explosive()), NOT_JSON, id="ask-explosive-reason"),  # type: ignore[arg-type]
    pytest.param(lambda: RaisingAwaitable(), ToolError("__await__"), id="awaitable-raises"),
]


@pytest.mark.parametrize(("decision", "expected"), PRE_DECISIONS)
def test_a_hostile_pre_execute_decision(decision: Callable[[], Any], expected: ToolError) -> None:
    """A decision's kind is its type; a denial reason that is not a string is read as a raised value's message."""
    registry = registry_with_t()
    registry.on_pre_execute(lambda run, nxt: decision())
    failed(call(registry, "t"), expected)


def test_an_allow_subclass_allows() -> None:
    class AllowSub(Allow):
        __slots__ = ()

        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise Boom("__class__")

    registry = registry_with_t()
    registry.on_pre_execute(lambda run, nxt: AllowSub())
    assert type(call(registry, "t")) is ToolSuccess


HOOK_RAISES = [
    pytest.param(lambda: Boom("base"), "base", id="base-exception-subclass"),
    pytest.param(lambda: Unprintable(), UNPRINTABLE, id="unprintable"),
    pytest.param(lambda: asyncio.CancelledError("own"), "own", id="cancelled-error-of-its-own"),
    pytest.param(lambda: RuntimeError(HostileStr("sub")), "sub", id="str-subclass-argument"),
]


@pytest.mark.parametrize(("error", "message"), HOOK_RAISES)
def test_a_pre_execute_listener_raising(error: Callable[[], BaseException], message: str) -> None:
    """digest 6.6: a final failure that skips post-execute."""
    registry = registry_with_t()
    phases = Phases(registry)
    registry.on_pre_execute(lambda run, nxt: _raise(error()))
    failed(call(registry, "t"), ToolError(message))
    assert phases.seen == []


def test_a_hook_that_is_not_callable() -> None:
    registry = registry_with_t()
    registry.on_pre_execute(42)  # type: ignore[arg-type]
    failed(call(registry, "t"), ToolError("'int' object is not callable"))


# --- guards --------------------------------------------------------------------------------------------

GUARD_REASONS = [
    pytest.param(lambda: Explosive(), id="explosive"),
    pytest.param(lambda: BaseExplosive(), id="base-explosive"),
    pytest.param(lambda: EqTrue(), id="eq-true"),
    pytest.param(lambda: GetattributeRaises(), id="getattribute-raises"),
    pytest.param(lambda: RuntimeError("error as reason"), id="an-error"),
]


@pytest.mark.parametrize("reason", GUARD_REASONS)
def test_a_guard_returning_a_reason_that_is_not_json_is_a_final_failure(reason: Callable[[], Any]) -> None:
    """R-PRE-8: the reason fails as its materialization would, its own code never run; post-execute is skipped."""
    registry = registry_with_t()
    phases = Phases(registry)
    registry.add_guard(lambda run: reason())
    failed(call(registry, "t"), NOT_JSON)
    assert phases.seen == []


def test_a_guard_returning_a_string_subclass_denies_with_its_exact_text() -> None:
    """digest 6.4 / 6.5: any non-None answer denies; the denial reaches post-execute."""
    registry = registry_with_t()
    phases = Phases(registry)
    registry.add_guard(lambda run: HostileStr("sub reason"))
    failed(call(registry, "t"), ToolError("sub reason"))
    assert phases.seen == ["post"]


@pytest.mark.parametrize(("error", "message"), HOOK_RAISES)
def test_a_guard_raising(error: Callable[[], BaseException], message: str) -> None:
    async def guard(run: ToolExecution) -> Any:
        raise error()

    registry = registry_with_t()
    registry.add_guard(guard)
    failed(call(registry, "t"), ToolError(message))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_guard_returning_a_coroutine_someone_else_started() -> None:
    """Awaiting a coroutine already suspended elsewhere raises (Python's own error): the guard's final failure. Its
    ``finally``, which raises on close, never reaches the caller."""
    from test_hostile import _started_coroutine_raising_on_close

    registry = registry_with_t()
    registry.add_guard(lambda run: _started_coroutine_raising_on_close())
    failed(call(registry, "t"), ToolError("coroutine is being awaited already"))


# --- approval ------------------------------------------------------------------------------------------

APPROVALS = [
    pytest.param(lambda: EqTrue(), "unreachable variant in ApprovalOutcome: eq-true", id="eq-always-true"),
    pytest.param(lambda: Explosive(), f"unreachable variant in ApprovalOutcome: {UNPRINTABLE}", id="explosive"),
    pytest.param(lambda: None, "unreachable variant in ApprovalOutcome: null", id="none"),
    pytest.param(lambda: ["allowed-once"], 'unreachable variant in ApprovalOutcome: ["allowed-once"]', id="a-list"),
    pytest.param(lambda: RaisingAwaitable(), "__await__", id="awaitable-raises"),
    pytest.param(lambda: _raise(Boom("approval")), "approval", id="raises-base-exception"),
]


@pytest.mark.parametrize(("outcome", "message"), APPROVALS)
def test_a_hostile_approval_outcome_is_an_unreachable_variant(outcome: Callable[[], Any], message: str) -> None:
    """digest 6.3: only the four exact strings are outcomes; a foreign object's ``__eq__`` never decides."""
    registry = Registry(approval=lambda request: outcome())
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_pre_execute(lambda run, nxt: Ask())
    failed(call(registry, "t", agent="agent"), ToolError(message))


def test_a_string_subclass_outcome_counts_as_its_exact_text() -> None:
    class Never(str):
        def __eq__(self, other: object) -> bool:
            return False

        __hash__ = str.__hash__

    registry = Registry(approval=lambda request: Never("allowed-once"))
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_pre_execute(lambda run, nxt: Ask())
    assert type(call(registry, "t", agent="agent")) is ToolSuccess


# --- wrappers and the results they return ---------------------------------------------------------------

WRAPPER_RESULTS = [
    pytest.param(
        lambda nxt: EqSuccess([float("nan")], [{"type": "text", "text": "x"}]), VALUE_NOT_LOSSLESS, id="eq-true-success"
    ),
    pytest.param(
        lambda nxt: ClassClaimsSuccess(),
        ToolError("tools/execute returned ClassClaimsSuccess, not a tool result"),
        id="class-claims-success",
    ),
    pytest.param(
        lambda nxt: Explosive(), ToolError("tools/execute returned Explosive, not a tool result"), id="explosive"
    ),
    pytest.param(
        lambda nxt: GetattributeRaises(),
        ToolError("tools/execute returned GetattributeRaises, not a tool result"),
        id="getattribute-raises",
    ),
    pytest.param(lambda nxt: ToolSuccess(Explosive(), []), VALUE_NOT_LOSSLESS, id="success-with-explosive-value"),
    pytest.param(
        lambda nxt: object.__new__(EmptySuccess),
        ToolError("'EmptySuccess' object has no attribute 'value'"),
        id="success-without-fields",
    ),
    pytest.param(lambda nxt: authored_failure(ToolError("m", ErrorInfo(1, [2]))), NOT_JSON, id="info-not-strings"),  # type: ignore[arg-type]
    pytest.param(lambda nxt: authored_failure(ToolError("m", {"name": "N", "code": "C"})), NOT_JSON, id="info-a-dict"),  # type: ignore[arg-type]
    pytest.param(lambda nxt: authored_failure(ToolError("m", Explosive())), NOT_JSON, id="info-explosive"),  # type: ignore[arg-type]
    pytest.param(lambda nxt: authored_failure(ToolError(float("nan"))), NOT_JSON, id="message-nan"),
    pytest.param(lambda nxt: authored_failure(ToolError(Explosive())), NOT_JSON, id="message-explosive"),  # type: ignore[arg-type]
    pytest.param(lambda nxt: authored_failure("not an error"), NOT_JSON, id="error-a-string"),
    pytest.param(lambda nxt: authored_failure(Explosive()), NOT_JSON, id="error-explosive"),
    pytest.param(lambda nxt: authored_failure(ToolError("m"), [Explosive()]), NOT_JSON, id="content-explosive"),
    pytest.param(lambda nxt: authored_failure(ToolError("m"), LyingList([1])), NOT_JSON, id="content-list-subclass"),
    pytest.param(lambda nxt: authored_failure(ToolError("m"), [], Explosive()), NOT_JSON, id="meta-explosive"),
    pytest.param(lambda nxt: authored_failure(ToolError("m"), [], ABSENT, [ClassLiar()]), NOT_JSON, id="contexts-liar"),
]


@pytest.mark.parametrize(("returned", "expected"), WRAPPER_RESULTS)
def test_a_wrapper_returning_a_foreign_or_broken_result(returned: Callable[[Any], Any], expected: ToolError) -> None:
    """digest 7.2-7.4 / 5.3: only this call's own object is trusted; a foreign success is re-normalized, a foreign
    failure copied and materialized into the registry's own types, or it fails as not lossless."""
    registry = registry_with_t()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        await nxt()
        return returned(nxt)

    registry.on_execute(wrapper)
    failed(call(registry, "t"), expected)


@pytest.mark.parametrize("message", [5, None, [1, {"a": None}]], ids=["number", "null", "array"])
def test_a_wrapper_failure_whose_message_is_other_json_is_kept_as_it_is(message: Any) -> None:
    """digest 5.3: the registry does not check that a wrapper-authored failure's message is a string; one that is
    lossless JSON is kept, frozen, with the content the wrapper gave (a denial's non-string reason reused)."""
    registry = registry_with_t()
    registry.on_execute(lambda run, nxt: authored_failure(ToolError(message, ErrorInfo("N", "C"))))
    result = call(registry, "t")
    assert type(result) is ToolFailure and type(result.error) is ToolError
    assert plain(result.error.message) == message and result.error.info == ErrorInfo("N", "C")
    assert plain(result.content) == [{"type": "text", "text": "authored"}]
    if isinstance(message, list):
        with pytest.raises(TypeError):
            result.error.message.append(2)


def test_a_success_subclass_is_read_through_its_fields() -> None:
    """Its properties never run: the value in its field is re-normalized, its content and flag are discarded."""
    registry = registry_with_t()
    registry.on_execute(lambda run, nxt: PropertySuccess({"from": "field"}))
    result = call(registry, "t")
    assert type(result) is ToolSuccess and plain(result.value) == {"from": "field"}
    assert plain(result.content) == [{"type": "text", "text": '{"from":"field"}'}] and result.concludes_turn is False


@pytest.mark.parametrize(
    "made",
    [
        pytest.param(lambda: EqFailure(ToolError("m"), [{"type": "text", "text": "x"}]), id="eq-true-failure"),
        pytest.param(lambda: ToolFailure(ShiftingError(), [{"type": "text", "text": "x"}]), id="shifting-message"),
        pytest.param(
            lambda: ToolFailure(ToolError(HostileStr("m"), ErrorInfo(HostileStr("N"), HostileStr("C"))), []),
            id="str-subclass-fields",
        ),
        pytest.param(lambda: ToolFailure(ToolError("m", InfoSub("N", "C")), []), id="info-subclass"),
    ],
)
def test_an_authored_failure_becomes_the_registrys_own_frozen_objects(made: Callable[[], ToolFailure]) -> None:
    """digest 7.3: kept field by field, and materialized into a ToolError of a str message and an ErrorInfo of
    str fields, so nothing about the final result can change after it is returned."""
    authored = made()
    registry = registry_with_t()
    registry.on_execute(lambda run, nxt: authored)
    result = call(registry, "t")
    assert type(result) is ToolFailure and result is not authored
    error = result.error
    assert type(error) is ToolError and type(error.message) is str
    assert error.message == error.message  # stable across reads
    if error.info is not None:
        assert type(error.info) is ErrorInfo and type(error.info.name) is str and type(error.info.code) is str
        assert (error.info.name, error.info.code) == ("N", "C")
    assert error.message in ("m", "authored")


@pytest.mark.parametrize(("error", "message"), HOOK_RAISES)
def test_a_wrapper_raising(error: Callable[[], BaseException], message: str) -> None:
    """digest 6.7: a final failure that skips post-execute."""
    registry = registry_with_t()
    phases = Phases(registry)

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        raise error()

    registry.on_execute(wrapper)
    failed(call(registry, "t"), ToolError(message))
    assert phases.seen == ["execute"]


@pytest.mark.parametrize(
    "replacement", [Explosive, ClassRaises, lambda: "signal"], ids=["explosive", "class-raises", "a-string"]
)
def test_a_wrapper_replacing_the_signal_with_a_look_alike(replacement: Callable[[], Any]) -> None:
    """The execution refuses anything but an AbortSignal: the wrapper raises, a final failure."""
    registry = registry_with_t()

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        run.signal = replacement()
        return await nxt()

    registry.on_execute(wrapper)
    failed(call(registry, "t"), ToolError("an execution's signal must be an AbortSignal or None"))


@pytest.mark.parametrize(
    ("contexts", "expected"),
    [
        pytest.param(lambda: Explosive(), ToolError("additional contexts must be a list"), id="explosive"),
        pytest.param(lambda: ClassLiar(), ToolError("additional contexts must be a list"), id="class-claims-dict"),
        pytest.param(lambda: LyingList([Explosive()]), NOT_JSON, id="list-subclass-of-explosives"),
    ],
)
def test_hostile_contexts_beside_deferred_ones(contexts: Callable[[], Any], expected: ToolError) -> None:
    """digest 6.11: deferred contexts are prepended to the wrapper's; the wrapper's are read without their code."""

    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context({"role": "user", "content": []})
        return 1

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        await nxt()
        return authored_failure(ToolError("m"), [], ABSENT, contexts())

    registry = registry_with_t(body)
    registry.on_execute(wrapper)
    failed(call(registry, "t"), expected)


def test_a_lying_list_of_contexts_contributes_its_stored_items() -> None:
    def body(args: Any, run: ToolExecution) -> Any:
        run.defer_context("deferred")
        return 1

    async def wrapper(run: ToolExecution, nxt: Any) -> Any:
        await nxt()
        return authored_failure(ToolError("m"), [], ABSENT, LyingList(["own"]))

    registry = registry_with_t(body)
    registry.on_execute(wrapper)
    result = call(registry, "t")
    assert type(result) is ToolFailure and plain(result.additional_contexts) == ["deferred", "own"]


# --- post-execute decisions ------------------------------------------------------------------------------

MUST_BE_A_LIST = ToolError("tools/post-execute block feedback must be a list of content blocks")

POST_DECISIONS = [
    pytest.param(lambda: Accept(content=[Explosive()]), NOT_JSON, id="content-explosive"),
    pytest.param(lambda: Accept(content=LyingList([])), NOT_JSON, id="content-list-subclass"),
    pytest.param(lambda: Accept(value=Explosive()), VALUE_NOT_LOSSLESS, id="value-explosive"),
    pytest.param(lambda: Accept(value=ClassLiar()), VALUE_NOT_LOSSLESS, id="value-class-liar"),
    pytest.param(
        lambda: Accept(additional_contexts=Explosive()), ToolError("additional contexts must be a list"), id="ctx-bomb"
    ),
    pytest.param(lambda: Block(Explosive()), MUST_BE_A_LIST, id="block-explosive"),
    pytest.param(lambda: Block(ClassLiar()), MUST_BE_A_LIST, id="block-class-claims-dict"),
    pytest.param(lambda: Block("text"), MUST_BE_A_LIST, id="block-a-string"),
    pytest.param(lambda: Block(10**5000), MUST_BE_A_LIST, id="block-huge-int"),
    pytest.param(lambda: Block([Explosive()]), NOT_JSON, id="block-of-explosives"),
    pytest.param(lambda: Block(LyingList([{"type": "text", "text": "x"}])), NOT_JSON, id="block-list-subclass"),
    pytest.param(lambda: Block([{"type": "text", "text": HostileStr("x")}]), NOT_JSON, id="block-str-subclass-text"),
    pytest.param(lambda: Block([{"type": HostileStr("text"), "text": "x"}]), NOT_JSON, id="block-str-subclass-type"),
    pytest.param(lambda: Block([], Explosive()), NOT_JSON, id="block-contexts-explosive"),
    pytest.param(lambda: RaisingAwaitable(), ToolError("__await__"), id="awaitable-raises"),
]


@pytest.mark.parametrize(("decision", "expected"), POST_DECISIONS)
def test_a_hostile_post_execute_decision(decision: Callable[[], Any], expected: ToolError) -> None:
    """digest 6.8 / 6.9: each becomes the failure of the step that refused it."""
    registry = registry_with_t()
    registry.on_post_execute(lambda run, result, nxt: decision())
    failed(call(registry, "t"), expected)


@pytest.mark.parametrize(
    "decision",
    [
        pytest.param(lambda: Explosive(), id="explosive"),
        pytest.param(lambda: ClassClaimsBlock(), id="class-claims-block"),
        pytest.param(lambda: GetattributeRaises(), id="getattribute-raises"),
        pytest.param(lambda: EqTrue(), id="eq-true"),
        pytest.param(lambda: None, id="none"),
    ],
)
def test_a_post_decision_of_no_decision_type_is_a_plain_accept(decision: Callable[[], Any]) -> None:
    """digest 6.8 step 1 ("any other kind falls through to accept"): the kind is the type alone."""
    registry = registry_with_t()
    registry.on_post_execute(lambda run, result, nxt: decision())
    result = call(registry, "t")
    assert type(result) is ToolSuccess and result.value == 1


def test_decision_subclasses_act_as_their_kind() -> None:
    registry = registry_with_t()
    registry.on_post_execute(lambda run, result, nxt: BlockSub([{"type": "text", "text": "blocked"}]))
    result = call(registry, "t")
    assert type(result) is ToolFailure and result.error == ToolError("blocked")
    assert plain(result.content) == [{"type": "text", "text": "blocked"}]
    registry = registry_with_t()
    registry.on_post_execute(lambda run, result, nxt: AcceptSub(content=[{"type": "text", "text": "replaced"}]))
    replaced = call(registry, "t")
    assert type(replaced) is ToolSuccess and plain(replaced.content) == [{"type": "text", "text": "replaced"}]


@pytest.mark.parametrize(("error", "message"), HOOK_RAISES)
def test_a_post_execute_listener_raising(error: Callable[[], BaseException], message: str) -> None:
    registry = registry_with_t()
    registry.on_post_execute(lambda run, result, nxt: _raise(error()))
    failed(call(registry, "t"), ToolError(message))


# --- finalizers ------------------------------------------------------------------------------------------

FINALIZED = [
    pytest.param(lambda: Explosive(), NOT_JSON, id="explosive"),
    pytest.param(lambda: LyingList([]), NOT_JSON, id="list-subclass"),
    pytest.param(lambda: ClassRaises(), NOT_JSON, id="class-raises"),
    pytest.param(lambda: GetattributeRaises(), NOT_JSON, id="getattribute-raises"),
    pytest.param(lambda: [{"type": "text", "text": HostileStr("x")}], NOT_JSON, id="str-subclass-text"),
    pytest.param(lambda: iter([]), NOT_JSON, id="an-iterator"),
    pytest.param(lambda: RaisingAwaitable(), ToolError("__await__"), id="awaitable-raises"),
    pytest.param(lambda: _raise(Boom("finalizer")), ToolError("finalizer"), id="raises-base-exception"),
    pytest.param(lambda: _raise(Unprintable()), ToolError(UNPRINTABLE), id="raises-unprintable"),
]


@pytest.mark.parametrize(("produced", "expected"), FINALIZED)
def test_a_finalizer_returning_or_raising_hostile_content(produced: Callable[[], Any], expected: ToolError) -> None:
    """digest 6.9 / 12.2: called once; what it produces is materialized, or the call fails with no second call."""
    calls: list[int] = []

    def finalize(run: ToolExecution, result: Any) -> Any:
        calls.append(1)
        return produced()

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, finalize_content=finalize))
    failed(call(registry, "t"), expected)
    assert calls == [1]


# --- result observers ------------------------------------------------------------------------------------


async def _raising_coroutine() -> None:
    raise Boom("async observer")


OBSERVERS = [
    pytest.param(lambda run, result: _raise(Boom("observer")), "observer", id="raises-base-exception"),
    pytest.param(lambda run, result: _raise(Unprintable()), UNPRINTABLE, id="raises-unprintable"),
    pytest.param(lambda run, result: _raising_coroutine(), "async observer", id="coroutine-raises"),
    pytest.param(lambda run, result: RaisingAwaitable(), "__await__", id="awaitable-raises"),
    pytest.param(42, "'int' object is not callable", id="not-callable"),
    pytest.param(lambda run, result: ClassRaises(), None, id="returns-class-raises"),
    pytest.param(lambda run, result: GetattributeRaises(), None, id="returns-getattribute-raises"),
    pytest.param(lambda run, result: Explosive(), None, id="returns-explosive"),
]


@pytest.mark.parametrize(("observer", "logged"), OBSERVERS)
def test_a_hostile_observer_is_contained(observer: Any, logged: str | None, caplog: pytest.LogCaptureFixture) -> None:
    """digest 6.10: the result is unaffected and the failure logged; a return value that is not awaitable by its
    type is ignored without asking the object anything."""

    async def go() -> Any:
        registry = registry_with_t()
        registry.on_result(observer)
        result = await registry.execute(Call("c1", "t", {}))
        await asyncio.sleep(0)  # let an asynchronous observer run
        await asyncio.sleep(0)
        return result

    with caplog.at_level(logging.WARNING, logger="toolcanon"):
        result = asyncio.run(go())
    assert type(result) is ToolSuccess and result.value == 1
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ([f'tool "t" (c1): tools/result observer failed: {logged}'] if logged is not None else [])


# --- disposal by identity ---------------------------------------------------------------------------------


def test_disposing_a_hook_removes_that_hook_even_beside_one_equal_to_everything() -> None:
    """Hook lists are searched by identity: a hostile ``__eq__`` cannot make another hook's disposal remove it."""

    class EqualToAll:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

        def __call__(self, run: ToolExecution) -> Any:
            return "hostile guard still installed"

    registry = registry_with_t()
    registry.add_guard(EqualToAll())
    dispose_good = registry.add_guard(lambda run: None)
    dispose_good()
    failed(call(registry, "t"), ToolError("hostile guard still installed"))


def test_a_hostile_agent_and_parent_are_opaque() -> None:
    """The agent and the parent token are passed along, never inspected."""
    seen: list[Any] = []
    registry = registry_with_t(lambda args, run: (seen.append((run.agent, run.parent)), 1)[1])
    agent, parent = Explosive(), BaseExplosive()
    result = call(registry, "t", agent=agent, parent=parent)
    assert type(result) is ToolSuccess and seen[0][0] is agent and seen[0][1] is parent
    assert not result.has_meta


def test_echo_with_hostile_neighbours_keeps_its_metadata() -> None:
    registry = Registry()
    registry.register(echo_tool())
    registry.on_result(lambda run, result: ClassRaises())
    result = call(registry, "echo", {"text": "x"}, signal=AbortController().signal)
    assert type(result) is ToolSuccess and plain(result.meta) == {"projected": "x"}


@pytest.mark.parametrize("guarded", [False, True], ids=["plain", "guarded"])
def test_a_log_filter_raising_on_an_observer_failure_propagates_from_execute(
    guarded: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """An observer's failure is contained, but the logging that reports it is the process's own: what a log filter
    raises while the failure is logged leaves ``execute`` as it is, on the plain path as on the hooked one."""

    class FilterFailed(Exception):
        pass

    def refuse(record: logging.LogRecord) -> bool:
        raise FilterFailed("log filter")

    registry = registry_with_t()
    if guarded:
        registry.add_guard(lambda run: None)
    registry.on_result(lambda run, result: _raise(Boom("observer")))
    logger = logging.getLogger("toolcanon")
    logger.addFilter(refuse)
    try:
        with caplog.at_level(logging.WARNING, logger="toolcanon"), pytest.raises(FilterFailed) as raised:
            call(registry, "t")
    finally:
        logger.removeFilter(refuse)
    assert str(raised.value) == "log filter"


async def _execute_observed_then_collect(
    registry: Registry, observer: Callable[[ToolExecution, Any], Awaitable[None]]
) -> None:
    """Run one call of ``t`` on ``registry`` with ``observer`` on its results, let the loop turn a few times, then
    collect. The caller holds ``registry``: one collected with the task would tell nothing of what it keeps."""
    registry.on_result(observer)
    await registry.execute(Call("c1", "t", {}))
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()


def test_a_settled_asynchronous_observer_is_not_kept_alive() -> None:
    """The registry holds an asynchronous observer's task only until it settles: then nothing keeps it."""
    tasks: list[weakref.ref[asyncio.Task[Any]]] = []

    async def observer(run: ToolExecution, result: Any) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.append(weakref.ref(task))

    async def go() -> None:
        registry = registry_with_t()
        await _execute_observed_then_collect(registry, observer)
        assert len(tasks) == 1 and tasks[0]() is None

    asyncio.run(go())


def test_a_pending_asynchronous_observer_is_kept_alive_until_it_settles() -> None:
    """An asynchronous observer awaiting something only it can reach is held by the registry, not collected with
    its task: it still runs to its end once that is resolved."""
    tasks: list[weakref.ref[asyncio.Task[Any]]] = []
    awaited: list[weakref.ref[asyncio.Future[None]]] = []
    ended: list[str] = []

    async def observer(run: ToolExecution, result: Any) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.append(weakref.ref(task))
        pending: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        awaited.append(weakref.ref(pending))
        try:
            await pending
            ended.append("settled")
        finally:
            ended.append("closed")

    async def go() -> None:
        registry = registry_with_t()
        await _execute_observed_then_collect(registry, observer)
        assert len(tasks) == 1 and tasks[0]() is not None and ended == []
        pending = awaited[0]()
        assert pending is not None
        pending.set_result(None)
        del pending
        for _ in range(3):
            await asyncio.sleep(0)
        assert ended == ["settled", "closed"]

    asyncio.run(go())


def test_a_failure_whose_error_is_an_empty_string_fails_as_not_lossless() -> None:
    """digest 5.3: a failure's error must be a ToolError; the empty string is no more one than any other string."""
    registry = registry_with_t()
    registry.on_execute(lambda run, nxt: authored_failure(""))
    failed(call(registry, "t"), NOT_JSON)
