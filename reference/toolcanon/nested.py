"""Nested (code-mode) dispatch: a program's tool calls run through the registry as sub-calls of one outer call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from toolcanon.errors import CodeRunFailedError, error_message, is_interrupt
from toolcanon.execution import Call, ToolExecution
from toolcanon.jsonvalue import JsonValue, NotLosslessJson, plain_str, snapshot_json, type_name
from toolcanon.registry import RESERVED_NAME, Registry, is_awaitable
from toolcanon.renderers._ecma import js_string
from toolcanon.result import ABSENT, ToolResult, ToolSuccess
from toolcanon.signal import AbortController, AbortSignal

__all__ = [
    "CodeMode",
    "DispatchLogListener",
    "EventSink",
    "Program",
    "ProgramRun",
    "SubCall",
    "ToolCallError",
    "Tools",
]

logger = logging.getLogger("toolcanon")

Program: TypeAlias = Callable[["Tools"], Any]
"""``program(tools) -> result``: plain or ``async``; ``None`` means the program returned nothing."""
EventSink: TypeAlias = Callable[[str, JsonValue], Any]
"""``sink(event_type, data)``: receives the dispatch events (``SessionLog.append`` is one)."""

_UNLOSSLESS_ARGUMENTS: Final = (
    "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"
)
_MISSING: Final[Any] = object()
_SETTLED: Final = "run_code settled"


class ToolCallError(Exception):
    """How a binding call fails inside a program: the failure's message only (no info, no content)."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class SubCall:
    """A committed sub-call, as the dispatch-log listeners see it."""

    root_call_id: str
    parent_call_id: str
    sub_call_id: str
    name: str
    arguments: JsonValue
    result: ToolResult


DispatchLogListener: TypeAlias = Callable[[SubCall, Callable[[], Awaitable[Any]]], Any]
"""``(sub_call, next) -> content``: the ``tool/code-dispatch`` log copy of the content (``await next()`` for
the inner listeners' copy; the innermost is the final content unchanged)."""


@dataclass(frozen=True, slots=True)
class ProgramRun:
    """How a program run ended: its result (:data:`~toolcanon.result.ABSENT` when it returned nothing or
    failed), its logs, and the exception it raised (``None`` on success)."""

    result: Any
    logs: tuple[str, ...]
    error: BaseException | None


@dataclass(frozen=True, slots=True)
class _Outcome:
    value: Any = None
    error: str | None = None


class Tools:
    """What a program receives: ``await tools.call(name, arguments)``, ``tools[name](arguments)`` or
    ``tools.<name>(arguments)`` (for names that are not methods of this class), and ``tools.log(text)``.

    A binding call returns an awaitable at once (the call is submitted then, so submission order is call
    order); awaiting it gives the final value or raises :class:`ToolCallError`. ``run_code`` is never a binding.
    """

    __slots__ = ("_run",)

    def __init__(self, run: _Run) -> None:
        self._run = run

    def call(self, name: str, arguments: Any = _MISSING) -> Awaitable[JsonValue]:
        """Submit a nested call of ``name``; omitting ``arguments`` fails like non-JSON arguments."""
        return self[name](arguments)

    def __getitem__(self, name: str) -> Callable[..., Awaitable[JsonValue]]:
        exact = plain_str(name)  # the name reaches the registry: none of a foreign object's code may come with it
        if exact is None:
            raise TypeError(f"a tool name must be a string, not {type_name(type(name))}")
        name = exact
        if name == RESERVED_NAME:
            raise KeyError(f"{RESERVED_NAME} is not callable from inside a program")

        def binding(arguments: Any = _MISSING) -> Awaitable[JsonValue]:
            return self._run.submit(name, arguments)

        return binding

    def __getattr__(self, name: str) -> Callable[..., Awaitable[JsonValue]]:
        if name.startswith("_") or name == RESERVED_NAME:
            raise AttributeError(name)
        return self[name]

    def log(self, text: str) -> None:
        """Capture one log entry (one entry per call, not split on newlines)."""
        entry = plain_str(text)
        if entry is None:
            raise TypeError("a log entry must be a string")
        self._run.logs.append(entry)

    @property
    def signal(self) -> AbortSignal:
        """The run-scoped signal every sub-call receives."""
        return self._run.controller.signal

    def abort(self, reason: object = None) -> None:
        """Abort the run-scoped signal (sub-calls in flight and later ones see it aborted)."""
        self._run.controller.abort(reason)


class _Pending:
    """The awaitable a binding call returns; its dispatch task never raises, so nothing goes unretrieved."""

    __slots__ = ("_name", "_outcome", "_task")

    def __init__(self, name: str, task: asyncio.Task[_Outcome] | None, outcome: _Outcome | None = None) -> None:
        self._name = name
        self._task = task
        self._outcome = outcome

    def __await__(self) -> Generator[Any, None, JsonValue]:
        if self._task is not None:
            # shielded: cancelling the program's wait must not cancel a started sub-call
            outcome = yield from asyncio.shield(self._task).__await__()
        else:
            assert self._outcome is not None
            outcome = self._outcome
        if outcome.error is not None:
            raise ToolCallError(self._name, outcome.error)
        return outcome.value


class _Run:
    """One program run: numbering, the concurrency cap, the ordered start and commit stages, settlement."""

    def __init__(self, mode: CodeMode, outer: ToolExecution) -> None:
        self.mode = mode
        self.outer = outer
        self.logs: list[str] = []
        self.controller = AbortController()
        outer_signal = outer.signal
        self._unfollow = outer_signal.add_listener(self.controller.abort) if outer_signal is not None else None
        # an abort that came before the run does not end it: the registry answers each call (S:nest-outer-aborted)
        self._aborted_at_start = self.controller.signal.aborted
        self.over: str | None = None
        self._count = 0
        self._free = mode.max_parallel_sub_calls
        self._slot_freed: asyncio.Future[None] | None = None
        self._tasks: list[asyncio.Task[_Outcome]] = []
        self._last_start: asyncio.Future[None] | None = None
        self._last_commit: asyncio.Future[None] | None = None
        self.controller.signal.add_listener(lambda reason: self._wake())  # a queued call sees the run is over

    def _over_reason(self) -> str | None:
        """Why the run is over, or ``None``: it settled, or its run signal was aborted while it ran (the reason
        is the signal's, as text)."""
        if self.over is not None:
            return self.over
        signal = self.controller.signal
        if signal.aborted and not self._aborted_at_start:
            return error_message(signal.reason)
        return None

    def _over_message(self, name: str, what: str) -> str:
        return f"run_code run is over ({self._over_reason()}); {name} {what}"

    def submit(self, name: str, arguments: Any) -> _Pending:
        if self._over_reason() is not None:
            return _Pending(name, None, _Outcome(error=self._over_message(name, "not dispatched")))
        if arguments is _MISSING:
            return _Pending(name, None, _Outcome(error=_UNLOSSLESS_ARGUMENTS))
        try:
            normalized = snapshot_json(arguments)
        except NotLosslessJson:
            return _Pending(name, None, _Outcome(error=_UNLOSSLESS_ARGUMENTS))
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            return _Pending(
                name, None, _Outcome(error=f"tool arguments must be lossless JSON: {error_message(thrown)}")
            )
        self._count += 1
        loop = asyncio.get_running_loop()
        previous_start, previous_commit = self._last_start, self._last_commit
        start_done: asyncio.Future[None] = loop.create_future()
        commit_done: asyncio.Future[None] = loop.create_future()
        self._last_start, self._last_commit = start_done, commit_done
        task = loop.create_task(
            self._dispatch(self._count, name, normalized, previous_start, start_done, previous_commit, commit_done)
        )
        self._tasks.append(task)
        return _Pending(name, task)

    async def _dispatch(
        self,
        number: int,
        name: str,
        arguments: JsonValue,
        previous_start: asyncio.Future[None] | None,
        start_done: asyncio.Future[None],
        previous_commit: asyncio.Future[None] | None,
        commit_done: asyncio.Future[None],
    ) -> _Outcome:
        outer = self.outer
        sub_call_id = f"{outer.call_id}:code:{number}"
        identity = {
            "rootCallId": outer.root_call_id,
            "parentCallId": outer.call_id,
            "subCallId": sub_call_id,
            "name": name,
        }
        try:
            try:
                if previous_start is not None:
                    await previous_start
                if not await self._acquire_slot():
                    return _Outcome(error=self._over_message(name, "tool call abandoned"))
                await self.mode._emit(
                    outer, "tool/code-dispatch-start", {**identity, "arguments": snapshot_json(arguments)}
                )
            finally:
                start_done.set_result(None)
            try:
                call = Call(
                    sub_call_id,
                    name,
                    arguments,
                    root_call_id=outer.root_call_id,
                    parent=outer.token,
                    signal=self.controller.signal,
                    agent=outer.agent,
                )
                result = await self.mode.registry.execute(call)
            finally:
                self._release_slot()
            if previous_commit is not None:
                await previous_commit
            return await self._commit(identity, arguments, result)
        except BaseException as thrown:  # the bridge's own failure; the program sees it as the call's failure
            if is_interrupt(thrown):
                raise
            return _Outcome(error=error_message(thrown))
        finally:
            if not start_done.done():
                start_done.set_result(None)
            commit_done.set_result(None)

    async def _commit(self, identity: dict[str, Any], arguments: JsonValue, result: ToolResult) -> _Outcome:
        outer = self.outer
        sub = SubCall(
            identity["rootCallId"], identity["parentCallId"], identity["subCallId"], identity["name"], arguments, result
        )
        if outer.agent is not None:  # the log copy exists (and its listeners run) only when the event is logged
            content = await self.mode._dispatch_log_content(sub)
            await self.mode._emit(
                outer,
                "tool/code-dispatch",
                {**identity, "arguments": snapshot_json(arguments), "isError": result.is_error, "content": content},
            )
        # A sub-call that commits once the run is over still forwards (as the original's commit does, before its
        # binding finds the run over): only the program no longer receives its result.
        if isinstance(result, ToolSuccess) and _has_image(result.content):
            outer.defer_context(
                {"source": {"kind": "plugin", "plugin": "tools-code-mode"}, "content": result.content, "role": "user"}
            )
        if result.additional_contexts is not ABSENT:
            for context in result.additional_contexts:
                outer.defer_context(context)
        if result.concludes_turn is True:
            outer.conclude_turn()
        if self._over_reason() is not None:
            return _Outcome(error=self._over_message(identity["name"], "result discarded"))
        if isinstance(result, ToolSuccess):
            return _Outcome(value=result.value)
        message = result.error.message
        # a denial's JSON reason reaches the program as the contract's Error(message) reads it: String(message)
        return _Outcome(error=message if isinstance(message, str) else js_string(message))

    async def _acquire_slot(self) -> bool:
        """Take a slot; ``False`` when the call would still be queued once the run is over (abandoned)."""
        while self._free == 0:
            if self._over_reason() is not None:
                return False
            self._slot_freed = asyncio.get_running_loop().create_future()
            await self._slot_freed
        self._free -= 1
        return True

    def _wake(self) -> None:
        waiter, self._slot_freed = self._slot_freed, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _release_slot(self) -> None:
        self._free += 1
        self._wake()

    async def settle(self) -> None:
        """End the run: reject later calls, start the submitted calls a slot is free for and abandon the queued
        ones, abort the run signal, then drain every started call.

        The run-over messages give the run signal's reason, as text: the one it was aborted with while the run
        lasted (the outer caller's, or the program's own), else ``run_code settled``, which it is aborted with
        now.
        """
        self.over = self._over_reason() or _SETTLED
        self._wake()
        if self._last_start is not None:
            await asyncio.shield(self._last_start)
        self.controller.abort(_SETTLED)
        if self._unfollow is not None:
            self._unfollow()
        await asyncio.shield(asyncio.gather(*self._tasks, return_exceptions=True))


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "image" for block in content
    )


class CodeMode:
    """The code-mode bridge over a registry.

    A *program* is a plain Python callable (``async`` or not) that receives a :class:`Tools` object. Each binding
    call is normalized (a lossless JSON snapshot of its arguments), numbered ``<outer callId>:code:<n>``, and
    executed as a nested call: the outer token as ``parent``, the outer ``rootCallId``, the outer agent, and a
    run-scoped signal that follows the outer one and aborts when the run settles. The program receives the final
    value, or a :class:`ToolCallError` carrying only the failure message. At each sub-call's commit, in
    submission order, image content, additional contexts and ``concludes_turn`` are forwarded to the outer call.

    ``events`` receives ``tool/code-dispatch-start`` and ``tool/code-dispatch`` (only for outer calls that
    have an agent); ``max_parallel_sub_calls`` caps the sub-calls whose around/body stages overlap.
    """

    def __init__(
        self, registry: Registry, *, events: EventSink | None = None, max_parallel_sub_calls: int = 10
    ) -> None:
        if type(max_parallel_sub_calls) is not int or max_parallel_sub_calls < 1:
            raise ValueError("maxParallelSubCalls must be a positive integer")
        self.registry = registry
        self.events = events
        self.max_parallel_sub_calls = max_parallel_sub_calls
        self._log_listeners: list[DispatchLogListener] = []

    def on_dispatch_log(self, listener: DispatchLogListener, *, prepend: bool = False) -> Callable[[], None]:
        """Add a listener of the ``tool/code-dispatch`` log copy (a waterfall); returns its disposer."""
        if prepend:
            self._log_listeners.insert(0, listener)
        else:
            self._log_listeners.append(listener)

        def dispose() -> None:
            if listener in self._log_listeners:
                self._log_listeners.remove(listener)

        return dispose

    async def run(self, outer: ToolExecution, program: Program) -> ProgramRun:
        """Run ``program`` as the body of the outer call ``outer``; settles (drains every sub-call) first."""
        run = _Run(self, outer)
        tools = Tools(run)
        try:
            produced = program(tools)
            if is_awaitable(produced):
                produced = await produced
        except BaseException as thrown:
            if is_interrupt(thrown):
                if issubclass(type(thrown), asyncio.CancelledError):  # the task is cancelled: drain, then stop
                    await run.settle()
                raise  # the process stops, or the coroutine is being closed (it may not await again)
            await run.settle()
            return ProgramRun(ABSENT, tuple(run.logs), thrown)
        await run.settle()
        return ProgramRun(ABSENT if produced is None else produced, tuple(run.logs), None)

    async def run_code(self, outer: ToolExecution, program: Program, *, description: Any) -> dict[str, Any]:
        """Run a program as ``run_code`` does and return its value ``{logs, result?}``.

        Raises ``ValueError`` for a blank description and :class:`~toolcanon.errors.CodeRunFailedError`
        (``exception``, or ``invalid-output`` for a result that is not lossless JSON) when the run fails.
        """
        description = plain_str(description)
        if description is None or not description.strip():
            raise ValueError("invalid description: expected a non-empty string")
        ran = await self.run(outer, program)
        if ran.error is not None:
            raise CodeRunFailedError("exception", error_message(ran.error), ran.logs)
        value: dict[str, Any] = {"logs": list(ran.logs)}
        if ran.result is not ABSENT:
            try:
                value["result"] = snapshot_json(ran.result)
            except NotLosslessJson:
                raise CodeRunFailedError(
                    "invalid-output", "the program's result is not lossless JSON", ran.logs
                ) from None
        return value

    async def _emit(self, outer: ToolExecution, event_type: str, data: dict[str, Any]) -> None:
        sink = self.events
        if sink is None or outer.agent is None:
            return
        try:
            produced = sink(event_type, data)
            if is_awaitable(produced):
                await produced
        except BaseException as thrown:  # a failing sink must not change what the program sees
            if is_interrupt(thrown):
                raise
            logger.warning('event sink failed on "%s" for %s: %s', event_type, data["subCallId"], error_message(thrown))

    async def _dispatch_log_content(self, sub: SubCall) -> Any:
        listeners = list(self._log_listeners)
        final = sub.result.content
        if not listeners:
            return final

        async def step(index: int) -> Any:
            if index == len(listeners):
                return final
            produced = listeners[index](sub, lambda: step(index + 1))
            if is_awaitable(produced):
                produced = await produced
            return produced

        try:
            # the log copy is logged data: a listener's answer that is not lossless JSON counts as a failure
            return snapshot_json(await step(0))
        except BaseException as thrown:
            if is_interrupt(thrown):
                raise
            logger.warning("tools/code-dispatch-log listener failed for %s: %s", sub.sub_call_id, error_message(thrown))
            return final
