"""Hostile inputs are contained: each becomes the contract's exact failure, never an exception out of execute.

This file holds the corpus's hostile kinds (objects whose dunders raise, lie or change) and the entry points that
take data: body values, object keys, arguments, renderers, metadata projectors and raised values. Hooks and
results are in ``test_hostile_hooks.py``; the bridges (nested programs, MCP, spill, session, timeout), schemas and
the call itself in ``test_hostile_bridges.py``. Every case asserts the failure's exact message and info.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import types
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from conftest import call, echo_tool, plain, raw_tool
from toolcanon import (
    FrozenDict,
    FrozenList,
    HarnessError,
    Output,
    Registry,
    ToolExecution,
    ToolFailure,
    ToolResult,
    ToolSuccess,
)
from toolcanon.result import ErrorInfo, ToolError

# --- the hostile kinds ---------------------------------------------------------------------------------


class Boom(BaseException):
    """Not an ``Exception``: it escapes every ``except Exception``."""


class Explosive:
    """Every protocol method raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__")

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("__getattr__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("__format__")


class BaseExplosive:
    """Every protocol method raises a ``BaseException`` that is not an ``Exception``."""

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    def __hash__(self) -> int:
        raise Boom("__hash__")

    def __iter__(self) -> Any:
        raise Boom("__iter__")

    def __len__(self) -> int:
        raise Boom("__len__")

    def __getattr__(self, name: str) -> Any:
        raise Boom("__getattr__")

    def __str__(self) -> str:
        raise Boom("__str__")

    def __repr__(self) -> str:
        raise Boom("__repr__")


class ClassLiar:
    """Claims to be a dict through ``__class__`` (``isinstance`` believes it; ``type()`` does not)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict


class ClassRaises:
    """Its ``__class__`` property raises (so ``isinstance`` on it raises)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise Boom("__class__")

    def __hash__(self) -> int:
        return 7


class GetattributeRaises:
    """Every attribute read raises, even ``__class__``."""

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError("__getattribute__")

    def __hash__(self) -> int:
        return 11


class RecursiveGetattr:
    """``__getattr__`` recurses without end (a RecursionError on any missing attribute)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self, name + "_")


class DelRaises:
    """Its finalizer raises (Python reports it as unraisable; it can never reach the caller)."""

    def __del__(self) -> None:
        raise RuntimeError("__del__")


class EqTrue:
    """Equal to everything; prints as ``eq-true``."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __str__(self) -> str:
        return "eq-true"


class LaterUnhashable:
    """Hashes once (to go into a dict), then raises."""

    def __init__(self) -> None:
        self.hashed = False

    def __hash__(self) -> int:
        if self.hashed:
            raise RuntimeError("__hash__ again")
        self.hashed = True
        return 3


class HostileMeta(type):
    """A metaclass whose class-level attribute reads and comparisons raise."""

    def __getattribute__(cls, name: str) -> Any:
        raise RuntimeError("metaclass __getattribute__")

    def __eq__(cls, other: object) -> bool:
        raise RuntimeError("metaclass __eq__")

    __hash__ = type.__hash__


class OfHostileMeta(metaclass=HostileMeta):
    pass


class LyingDict(dict):  # type: ignore[type-arg]
    """Claims to hold one thing while holding another."""

    def items(self) -> Any:
        return [("a", 1)]

    def keys(self) -> Any:
        return ["a"]

    def __iter__(self) -> Any:
        return iter(["a"])

    def __len__(self) -> int:
        return 1


class RaisingDict(dict):  # type: ignore[type-arg]
    """Every way to read it raises."""

    def items(self) -> Any:
        raise RuntimeError("items")

    def keys(self) -> Any:
        raise RuntimeError("keys")

    def values(self) -> Any:
        raise RuntimeError("values")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("__getitem__")


class LyingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("iterated")

    def __len__(self) -> int:
        return 0


class HugeLenList(list):  # type: ignore[type-arg]
    def __len__(self) -> int:
        return 10**9


class RaisingGetitemList(list):  # type: ignore[type-arg]
    def __getitem__(self, index: Any) -> Any:
        raise Boom("__getitem__")


class FormatInt(int):
    """An int whose text raises (reached when a rejection path is formatted)."""

    def __format__(self, spec: str) -> str:
        raise RuntimeError("__format__")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")

    def __pos__(self) -> int:
        raise RuntimeError("__pos__")

    __hash__ = int.__hash__


class HostileStr(str):
    """A string whose every method of its own raises; its stored characters are ordinary."""

    def __str__(self) -> str:
        raise Boom("__str__")

    def __repr__(self) -> str:
        raise Boom("__repr__")

    def __format__(self, spec: str) -> str:
        raise Boom("__format__")

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    def strip(self, chars: Any = None) -> str:
        raise Boom("strip")

    __hash__ = str.__hash__


class HostileFloat(float):
    def __repr__(self) -> str:
        raise RuntimeError("__repr__")


class FrozenDictSub(FrozenDict):
    __slots__ = ()


class FrozenListSub(FrozenList):
    __slots__ = ()


class RaisingAwaitable:
    """Awaitable by its type; awaiting it raises."""

    def __await__(self) -> Any:
        raise RuntimeError("__await__")


class Unprintable(Exception):
    """An exception whose ``__str__`` and ``args`` raise."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    @property
    def args(self) -> Any:  # type: ignore[override]
        raise RuntimeError("no args")


class BaseUnprintable(Exception):
    """An exception whose ``__str__`` raises a ``BaseException`` subclass."""

    def __str__(self) -> str:
        raise Boom("no str")


class MessageRaises(Exception):
    @property
    def message(self) -> str:
        raise Boom("message")


class AttributesRaise(Exception):
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError("__getattribute__")


class ClassRaisingError(Exception):
    """An exception whose ``__class__`` raises: its message is still its argument."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise Boom("__class__")


class UnreadableHarnessError(HarnessError):
    """A coded error whose ``name`` and ``code`` cannot be read."""

    @property
    def name(self) -> str:
        raise RuntimeError("name getter")

    @name.setter
    def name(self, value: str) -> None:
        pass

    @property
    def code(self) -> str:
        raise Boom("code getter")

    @code.setter
    def code(self, value: str) -> None:
        pass


def _generator() -> Any:
    yield 1


async def _async_generator() -> Any:
    yield 1


def make_cycle() -> Any:
    cycle: list[Any] = []
    cycle.append(cycle)
    return cycle


def later_unhashable_key() -> Any:
    key = LaterUnhashable()
    return {key: 1}


# factories: pytest itself must not touch the hostile objects while collecting
HOSTILE_VALUES = [
    pytest.param(lambda: Explosive(), id="every-dunder-raises"),
    pytest.param(lambda: BaseExplosive(), id="every-dunder-raises-base-exception"),
    pytest.param(lambda: ClassLiar(), id="class-claims-dict"),
    pytest.param(lambda: ClassRaises(), id="class-property-raises"),
    pytest.param(lambda: GetattributeRaises(), id="getattribute-raises"),
    pytest.param(lambda: RecursiveGetattr(), id="getattr-recursion"),
    pytest.param(lambda: DelRaises(), id="del-raises"),
    pytest.param(lambda: EqTrue(), id="eq-always-true"),
    pytest.param(lambda: OfHostileMeta(), id="hostile-metaclass"),
    pytest.param(lambda: LyingDict({"a": float("nan")}), id="dict-subclass-lies"),
    pytest.param(lambda: RaisingDict({"a": 1}), id="dict-subclass-keys-items-raise"),
    pytest.param(lambda: LyingList([1]), id="list-subclass-iter-raises"),
    pytest.param(lambda: HugeLenList([1]), id="list-subclass-len-lies"),
    pytest.param(lambda: RaisingGetitemList([1]), id="list-subclass-getitem-raises"),
    pytest.param(lambda: FrozenDictSub({"a": 1}), id="frozen-dict-subclass"),
    pytest.param(lambda: FrozenListSub([1]), id="frozen-list-subclass"),
    pytest.param(lambda: HostileStr("text"), id="str-subclass"),
    pytest.param(lambda: FormatInt(5), id="int-subclass"),
    pytest.param(lambda: HostileFloat(1.5), id="float-subclass"),
    pytest.param(lambda: 10**5000, id="huge-int"),
    pytest.param(lambda: -(10**5000), id="huge-negative-int"),
    pytest.param(lambda: 2**53, id="just-unsafe-int"),
    pytest.param(lambda: float("nan"), id="nan"),
    pytest.param(lambda: -0.0, id="negative-zero"),
    pytest.param(make_cycle, id="cycle"),
    pytest.param(lambda: (1, 2), id="tuple"),
    pytest.param(lambda: {1, 2}, id="set"),
    pytest.param(lambda: b"bytes", id="bytes"),
    pytest.param(lambda: types.MappingProxyType({"a": 1}), id="mapping-proxy"),
    pytest.param(lambda: lambda: 1, id="function"),
    pytest.param(lambda: types, id="module"),
    pytest.param(lambda: Explosive, id="a-class-itself"),
    pytest.param(lambda: RuntimeError("x"), id="exception-instance"),
    pytest.param(_generator, id="generator"),
    pytest.param(_async_generator, id="async-generator"),
    pytest.param(lambda: {"k": Explosive()}, id="explosive-in-dict"),
    pytest.param(lambda: [Explosive()], id="explosive-in-list"),
    pytest.param(lambda: {"ok": [1, {"deep": BaseExplosive()}]}, id="deep-base-explosive"),
    pytest.param(lambda: [{"a": [ClassRaises()]}], id="deep-class-raises"),
    # keys: the walk must never call a key's own code, even to name the key in a rejection
    pytest.param(lambda: {1: "a"}, id="key-int"),
    pytest.param(lambda: {True: "a"}, id="key-bool"),
    pytest.param(lambda: {FormatInt(3): 1}, id="key-int-subclass-format-raises"),
    pytest.param(lambda: {HostileStr("k"): 1}, id="key-str-subclass-eq-raises"),
    pytest.param(lambda: {ClassRaises(): 1}, id="key-class-property-raises"),
    pytest.param(lambda: {GetattributeRaises(): 1}, id="key-getattribute-raises"),
    pytest.param(lambda: {10**5000: 1}, id="key-huge-int"),
    pytest.param(lambda: {(1, Explosive.__name__): 1}, id="key-tuple"),
    pytest.param(lambda: {b"k": 1}, id="key-bytes"),
    pytest.param(lambda: {None: 1}, id="key-none"),
    pytest.param(lambda: {1.5: 1}, id="key-float"),
    pytest.param(later_unhashable_key, id="key-hash-raises-after-insertion"),
    pytest.param(lambda: {EqTrue(): 1}, id="key-eq-always-true"),
    pytest.param(lambda: {"a": {FormatInt(1): {ClassRaises(): 1}}}, id="key-nested-hostile-keys"),
]

VALUE_NOT_LOSSLESS = ToolError(
    'tool "t" returned invalid output: value is not lossless JSON', ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT")
)
ARGUMENTS_NOT_LOSSLESS = ToolError("tool execution arguments must be losslessly JSON-serializable")
NOT_JSON = ToolError("tool result must be losslessly JSON-serializable")
UNPRINTABLE = "<unprintable thrown value>"


def invalid_output(*violations: str) -> ToolError:
    return ToolError(
        f'tool "t" returned invalid output: {"; ".join(violations)}',
        ErrorInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"),
    )


def failed(result: ToolResult, expected: ToolError) -> None:
    """``result`` is exactly the failure ``expected``, with the synthesized content ``Error: <message>``."""
    assert type(result) is ToolFailure
    assert result.error == expected
    assert type(result.error) is ToolError and type(result.error.message) is str
    assert plain(result.content) == [{"type": "text", "text": "Error: " + expected.message}]


class Phases:
    """Counts the stages a call entered."""

    def __init__(self, registry: Registry) -> None:
        self.seen: list[str] = []

        async def execute(run: ToolExecution, nxt: Any) -> Any:
            self.seen.append("execute")
            return await nxt()

        async def post(run: ToolExecution, result: Any, nxt: Any) -> Any:
            self.seen.append("post")
            return await nxt()

        registry.on_execute(execute)
        registry.on_post_execute(post)


# --- values, keys, arguments ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("hostile", HOSTILE_VALUES)
def test_a_hostile_body_value_is_not_lossless_json(hostile: Callable[[], Any]) -> None:
    """digest 3.3 / 3.7: only exact JSON types are read, so no user code runs and the message is the contract's."""
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: hostile()))
    failed(call(registry, "t"), VALUE_NOT_LOSSLESS)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("hostile", HOSTILE_VALUES)
def test_hostile_arguments_are_not_lossless_json(hostile: Callable[[], Any]) -> None:
    """digest 2.3: a final failure before any stage; no info."""
    registry = Registry()
    registry.register(echo_tool())
    failed(call(registry, "echo", {"x": hostile()}), ARGUMENTS_NOT_LOSSLESS)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("hostile", HOSTILE_VALUES)
def test_hostile_values_through_a_validating_schema(hostile: Callable[[], Any]) -> None:
    """The fused walk (generated once a tool has seen enough data) declines them just the same."""
    registry = Registry()
    body = lambda args, run: {"v": hostile() if run.call_id == "c1" else 1}  # noqa: E731
    registry.register(raw_tool("t", body, schema={"type": "object"}))
    for _ in range(80):  # past the fused normalizer's threshold
        call(registry, "t", call_id="warm-up")
    failed(call(registry, "t"), VALUE_NOT_LOSSLESS)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(lambda: Explosive(), id="root-explosive"),
        pytest.param(lambda: LyingDict({"text": 1}), id="root-dict-subclass"),
        pytest.param(lambda: ClassLiar(), id="root-class-liar"),
        pytest.param(lambda: {HostileStr("text"): "x"}, id="root-key-str-subclass"),
    ],
)
def test_hostile_argument_roots(arguments: Callable[[], Any]) -> None:
    registry = Registry()
    registry.register(echo_tool())
    failed(call(registry, "echo", arguments()), ARGUMENTS_NOT_LOSSLESS)


def test_a_value_whose_awaitable_type_raises_is_the_bodys_failure() -> None:
    """A body result that is awaitable by its type is awaited; what awaiting raises is the body's failure."""
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: RaisingAwaitable()))
    failed(call(registry, "t"), ToolError("__await__"))


class _AwaitLookalike:
    """A class-dict key that hashes as ``"__await__"`` and raises when compared."""

    def __hash__(self) -> int:
        return hash("__await__")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")


def test_a_value_whose_type_cannot_be_inspected_is_not_awaited() -> None:
    """A body result whose class dict raises on lookup is a value, not an awaitable: it fails as not lossless
    JSON, never as a failed ``await``."""
    unreadable = type("Unreadable", (), {_AwaitLookalike(): 1})
    registry = Registry()
    registry.register(raw_tool("t", lambda args, run: unreadable()))
    failed(call(registry, "t"), VALUE_NOT_LOSSLESS)


# --- renderers and metadata projectors --------------------------------------------------------------------

HOSTILE_PROJECTIONS = [
    pytest.param(lambda: Explosive(), id="every-dunder-raises"),
    pytest.param(lambda: [Explosive()], id="explosive-block"),
    pytest.param(lambda: LyingList([{"type": "text", "text": "x"}]), id="list-subclass"),
    pytest.param(lambda: [{"type": "text", "text": float("inf")}], id="infinity"),
    pytest.param(lambda: [{"type": "text", "text": HostileStr("x")}], id="str-subclass-text"),
    pytest.param(lambda: [{FormatInt(0): "x"}], id="int-subclass-key"),
    pytest.param(lambda: [ClassLiar()], id="class-claims-dict"),
    pytest.param(_generator, id="a-generator"),
    pytest.param(lambda: iter([{"type": "text", "text": "x"}]), id="an-iterator"),
    pytest.param(lambda: ({"type": "text", "text": "x"},), id="a-tuple"),
    pytest.param(lambda: [10**400], id="huge-int"),
]

HOSTILE_RAISES = [
    pytest.param(lambda: RuntimeError("boom"), "boom", id="plain-error"),
    pytest.param(lambda: Boom("base"), "base", id="base-exception-subclass"),
    pytest.param(lambda: Unprintable(), UNPRINTABLE, id="str-and-args-raise"),
    pytest.param(lambda: BaseUnprintable(), UNPRINTABLE, id="str-raises-base-exception"),
    pytest.param(lambda: MessageRaises("m"), UNPRINTABLE, id="message-property-raises"),
    pytest.param(lambda: AttributesRaise("m"), UNPRINTABLE, id="getattribute-raises"),
    pytest.param(lambda: ClassRaisingError("still read"), "still read", id="class-property-raises"),
    pytest.param(lambda: asyncio.CancelledError(), "", id="cancelled-error-of-its-own"),
    pytest.param(lambda: RuntimeError(10**5000), UNPRINTABLE, id="huge-int-argument"),
    pytest.param(lambda: RuntimeError(HostileStr("sub")), "sub", id="str-subclass-argument"),
]


def _raise(error: BaseException) -> Any:
    raise error


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("produced", HOSTILE_PROJECTIONS)
def test_a_renderer_returning_hostile_content(produced: Callable[[], Any]) -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, lambda a, v: produced())))
    failed(call(registry, "t"), invalid_output("output.render returned non-lossless JSON"))


def test_a_renderer_returning_a_coroutine_is_not_awaited() -> None:
    """Renderers are plain functions: a coroutine is a non-JSON value (and is closed, never run)."""
    ran: list[str] = []

    async def render(args: Any, value: Any) -> Any:
        ran.append("render")
        return []

    def plain_render(args: Any, value: Any) -> Any:
        coroutine = render(args, value)
        coroutine.close()  # never awaited: closed here so that it is not reported later
        return coroutine

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, plain_render)))
    failed(call(registry, "t"), invalid_output("output.render returned non-lossless JSON"))
    assert ran == []


def _started_coroutine_raising_on_close() -> Any:
    """A coroutine suspended inside a ``finally`` that raises when the coroutine is closed."""

    async def body() -> None:
        try:
            await asyncio.sleep(0)
        finally:
            raise Boom("raised on close")

    coroutine = body()
    coroutine.send(None)  # suspended at the sleep
    return coroutine


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_renderer_returning_a_coroutine_that_raises_on_close() -> None:
    """The registry never closes what it refuses: the coroutine's raise on close can only be unraisable."""
    kept: list[Any] = []

    def render(args: Any, value: Any) -> Any:
        kept.append(_started_coroutine_raising_on_close())
        return kept[-1]

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, render)))
    failed(call(registry, "t"), invalid_output("output.render returned non-lossless JSON"))
    with pytest.raises(Boom):  # closing it is what raises, and only the holder does that
        kept.pop().close()


@pytest.mark.parametrize(("error", "message"), HOSTILE_RAISES)
def test_a_renderer_raising_a_hostile_error(error: Callable[[], BaseException], message: str) -> None:
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1, output=Output({}, lambda a, v: _raise(error()))))
    failed(call(registry, "t"), invalid_output(f"output.render failed: {message}"))


@pytest.mark.parametrize("produced", HOSTILE_PROJECTIONS)
def test_a_metadata_projector_returning_hostile_data(produced: Callable[[], Any]) -> None:
    registry = Registry()
    output = Output({}, lambda a, v: [], lambda a, v: produced())
    registry.register(raw_tool("t", lambda a, r: 1, output=output))
    failed(call(registry, "t"), invalid_output("output.presentationMeta returned non-lossless JSON"))


@pytest.mark.parametrize(("error", "message"), HOSTILE_RAISES)
def test_a_metadata_projector_raising_a_hostile_error(error: Callable[[], BaseException], message: str) -> None:
    registry = Registry()
    output = Output({}, lambda a, v: [], lambda a, v: _raise(error()))
    registry.register(raw_tool("t", lambda a, r: 1, output=output))
    failed(call(registry, "t"), invalid_output(f"output.presentationMeta failed: {message}"))


def test_a_renderer_mutating_its_input_is_refused() -> None:
    """Renderers receive frozen data: a renderer that tries to mutate fails as a render failure."""

    def render(args: Any, value: Any) -> Any:
        value.append(1)
        return []

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: [0], output=Output({}, render)))
    failed(call(registry, "t"), invalid_output("output.render failed: FrozenList is frozen and cannot be modified"))


# --- raised values -----------------------------------------------------------------------------------------

RAISED = [
    *HOSTILE_RAISES,
    pytest.param(lambda: KeyError("key"), "key", id="key-error-single-argument"),
    pytest.param(lambda: RuntimeError(1, 2), "(1, 2)", id="two-arguments"),
    pytest.param(lambda: RuntimeError(), "", id="no-argument"),
    pytest.param(lambda: RuntimeError(Explosive()), UNPRINTABLE, id="explosive-argument"),
    pytest.param(lambda: StopIteration("inside a coroutine"), "coroutine raised StopIteration", id="stop-iteration"),
]


@pytest.mark.parametrize(("error", "message"), RAISED)
def test_a_body_raising_a_hostile_error_reaches_wrappers_and_post_execute(
    error: Callable[[], BaseException], message: str
) -> None:
    """digest 5.5 (message extraction is total) / 6.7: the failure is an ordinary body failure."""

    async def body(args: Any, run: ToolExecution) -> Any:
        raise error()

    registry = Registry()
    phases = Phases(registry)
    registry.register(raw_tool("t", body))
    failed(call(registry, "t"), ToolError(message))
    assert phases.seen == ["execute", "post"]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(
            lambda: UnreadableHarnessError("disk full", "ENOSPC"), ToolError("disk full"), id="name-and-code-unreadable"
        ),
        pytest.param(
            lambda: HarnessError("coded", HostileStr("E_SUB"), name=HostileStr("SubName")),
            ToolError("coded", ErrorInfo("SubName", "E_SUB")),
            id="name-and-code-str-subclasses",
        ),
        pytest.param(lambda: HarnessError("coded", 500), ToolError("coded"), id="code-not-a-string"),  # type: ignore[arg-type]
        pytest.param(
            lambda: HarnessError(HostileStr("sub message"), "E"),
            ToolError("sub message", ErrorInfo("HarnessError", "E")),
            id="message-str-subclass",
        ),
        pytest.param(
            lambda: HarnessError(Explosive(), "E"),  # type: ignore[arg-type]
            ToolError(UNPRINTABLE, ErrorInfo("HarnessError", "E")),
            id="message-explosive",
        ),
    ],
)
def test_a_coded_error_that_cannot_be_read(error: Callable[[], BaseException], expected: ToolError) -> None:
    """digest 5.4: info only when name and code are read and are strings; the message is extracted separately."""

    def body(args: Any, run: ToolExecution) -> Any:
        raise error()

    registry = Registry()
    registry.register(raw_tool("t", body))
    result = call(registry, "t")
    failed(result, expected)
    info = result.error.info  # type: ignore[union-attr]
    assert info is None or (type(info.name) is str and type(info.code) is str)


def test_a_body_that_is_not_callable() -> None:
    registry = Registry()
    registry.register(raw_tool("t", 42))  # type: ignore[arg-type]
    failed(call(registry, "t"), ToolError("'int' object is not callable"))


def test_interrupts_propagate_from_a_body() -> None:
    """KeyboardInterrupt, SystemExit and GeneratorExit stop the process or close the coroutine: never failures."""
    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        registry = Registry()
        registry.register(raw_tool("t", lambda a, r, stop=stop: _raise(stop("stop"))))
        with pytest.raises(stop):
            call(registry, "t")


def test_interrupts_propagate_from_a_body_behind_a_wrapper() -> None:
    """With an around wrapper registered (the staged path), an interrupt from the body still propagates."""

    async def passthrough(run: ToolExecution, nxt: Callable[[], Any]) -> Any:
        return await nxt()

    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        registry = Registry()
        registry.register(raw_tool("t", lambda a, r, stop=stop: _raise(stop("stop"))))
        registry.on_execute(passthrough)
        with pytest.raises(stop):
            call(registry, "t")


def test_interrupts_propagate_from_a_post_execute_listener() -> None:
    """An interrupt raised by a post-execute listener propagates; it is never made a failure result."""
    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        registry = Registry()
        registry.register(raw_tool("t", lambda a, r: 1))

        def listener(run: Any, result: Any, nxt: Any, stop: type[BaseException] = stop) -> Any:
            raise stop("stop")

        registry.on_post_execute(listener)
        with pytest.raises(stop):
            call(registry, "t")


@types.coroutine
def _generator_coroutine() -> Any:
    yield from ()
    return 7


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "behind-a-wrapper"])
def test_a_generator_based_coroutine_returned_by_a_body_is_awaited(wrapped: bool) -> None:
    """A body may return any awaitable, a generator-based coroutine too: its result is the value, on either path."""

    async def passthrough(run: ToolExecution, nxt: Callable[[], Any]) -> Any:
        return await nxt()

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: _generator_coroutine()))
    if wrapped:
        registry.on_execute(passthrough)
    result = call(registry, "t")
    assert isinstance(result, ToolSuccess), result
    assert result.value == 7


def test_a_cancelled_task_propagates_its_cancellation() -> None:
    """The task running execute is cancelled while the body awaits: CancelledError propagates (digest 8.5 is about
    the caller's signal, not about cancelling the task that runs the pipeline)."""
    started = asyncio.Event()

    async def body(args: Any, run: ToolExecution) -> Any:
        started.set()
        await asyncio.sleep(10)

    async def go() -> None:
        registry = Registry()
        registry.register(raw_tool("t", body))
        from toolcanon import Call

        task = asyncio.ensure_future(registry.execute(Call("c1", "t", {})))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())


def test_message_extraction_of_the_same_object_is_stable() -> None:
    """Reading happens once: an exception whose message changes on every read gives one message."""
    counter = itertools.count()

    class Shifting(Exception):
        @property
        def message(self) -> str:
            return f"read {next(counter)}"

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: _raise(Shifting())))
    result = call(registry, "t")
    failed(result, ToolError("read 0"))
    assert result.error.message == "read 0"  # type: ignore[union-attr]


def test_a_success_stays_a_success_with_hostile_neighbours() -> None:
    """A hostile object the body keeps to itself changes nothing."""
    keep = [Explosive(), ClassRaises()]
    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: {"kept": len(keep)}))
    result = call(registry, "t")
    assert type(result) is ToolSuccess and plain(result.value) == {"kept": 2}


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "behind-a-wrapper"])
def test_interrupts_propagate_from_a_render(wrapped: bool) -> None:
    """KeyboardInterrupt, SystemExit and GeneratorExit from output.render propagate on either path: never an
    output failure."""

    async def passthrough(run: ToolExecution, nxt: Callable[[], Any]) -> Any:
        return await nxt()

    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):

        def render(args: Any, value: Any, stop: type[BaseException] = stop) -> Any:
            raise stop("stop")

        registry = Registry()
        registry.register(raw_tool("t", lambda a, r: 1, output=Output(schema={}, render=render)))
        if wrapped:
            registry.on_execute(passthrough)
        with pytest.raises(stop):
            call(registry, "t")


def test_interrupts_propagate_from_a_finalizer() -> None:
    """KeyboardInterrupt, SystemExit and GeneratorExit from finalize_content propagate: never a failure result."""
    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        registry = Registry()
        registry.register(
            raw_tool("t", lambda a, r: 1, finalize_content=lambda run, result, stop=stop: _raise(stop("stop")))
        )
        with pytest.raises(stop):
            call(registry, "t")


def test_interrupts_propagate_from_a_pre_execute_listener_and_a_guard() -> None:
    """KeyboardInterrupt, SystemExit and GeneratorExit from a pre-execute listener or a guard propagate: the body
    never runs and no failure result is made."""
    ran: list[str] = []
    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        listening = Registry()
        listening.register(raw_tool("t", lambda a, r: ran.append("body")))

        def listener(run: Any, nxt: Any, stop: type[BaseException] = stop) -> Any:
            raise stop("stop")

        listening.on_pre_execute(listener)
        with pytest.raises(stop):
            call(listening, "t")
        guarded = Registry()
        guarded.register(raw_tool("t", lambda a, r: ran.append("body")))

        def guard(run: Any, stop: type[BaseException] = stop) -> Any:
            raise stop("stop")

        guarded.add_guard(guard)
        with pytest.raises(stop):
            call(guarded, "t")
    assert ran == []


def test_an_interrupt_while_the_result_is_materialized_propagates() -> None:
    """A KeyboardInterrupt arriving as the final result is materialized (a signal handler's) is never a failure."""

    def interrupt(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call" and "_materialize" in frame.f_code.co_name:
            raise KeyboardInterrupt("stop")
        return None

    registry = Registry()
    registry.register(raw_tool("t", lambda a, r: 1))
    registry.on_post_execute(lambda run, result, nxt: nxt())
    previous = sys.gettrace()
    sys.settrace(interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            call(registry, "t")
    finally:
        sys.settrace(previous)


def test_interrupts_propagate_from_a_result_observer() -> None:
    """An interrupt raised by a result observer propagates on the plain path as on the hooked one: it is never
    contained as an observer's failure."""
    for stop in (KeyboardInterrupt, SystemExit, GeneratorExit):
        for guarded in (False, True):
            registry = Registry()
            registry.register(raw_tool("t", lambda a, r: 1))
            if guarded:
                registry.add_guard(lambda run: None)

            def observer(run: Any, result: Any, stop: type[BaseException] = stop) -> Any:
                raise stop("stop")

            registry.on_result(observer)
            with pytest.raises(stop):
                call(registry, "t")
