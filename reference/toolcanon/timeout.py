"""The cooperative timeout policy: a tool's declared ``timeout_ms`` armed as a deadline on the body's signal.

The policy is one around wrapper. For a tool that declares ``timeout_ms`` it fuses the call's current signal with
a timer, hands the fused signal to the inner stages, restores the previous signal afterwards, and replaces the
result with the failure ``tool call timed out after <ms>ms`` (info ``ToolTimeoutError`` / ``TOOL_TIMEOUT``) exactly
when its own timer fired before the inner stages settled. It never kills anything: the deadline only notifies,
and a body that ignores its signal runs to its end (and its result is then replaced). A caller abort or an outer
deadline that fires first is not this policy's timeout: the inner outcome (the registry's ``ABORTED``) stays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Final

from toolcanon.definition import is_positive_finite
from toolcanon.errors import ToolTimeoutError
from toolcanon.execution import ToolExecution
from toolcanon.jsonvalue import format_number
from toolcanon.registry import Registry
from toolcanon.result import ToolFailure, ToolResult, tool_error_result
from toolcanon.signal import AbortController, AbortSignal, fuse_signals

__all__ = [
    "MAX_TIMER_DELAY_MS",
    "TOOL_TIMEOUT",
    "Deadline",
    "TimeoutReason",
    "deadline",
    "install_timeout",
    "timeout_of",
    "timeout_result",
]

TOOL_TIMEOUT: Final = "TOOL_TIMEOUT"
"""The policy's own code: the deadline's classification code and the failure's ``info.code``."""

MAX_TIMER_DELAY_MS: Final = 2_147_483_647
"""The longest deadline, in milliseconds (the largest delay an ECMAScript host schedules unclamped)."""


@dataclass(frozen=True, slots=True)
class TimeoutReason:
    """The abort reason of an expired deadline: the capability's code and the budget that elapsed."""

    code: str
    timeout_ms: int | float

    def __str__(self) -> str:
        return f"{self.code} after {format_number(self.timeout_ms)}ms"


def _noop() -> None:
    return None


class Deadline:
    """An armed deadline: :attr:`signal` (the upstream signal fused with the timer) and :meth:`dispose`.

    A context manager: leaving it disposes the deadline (clears the timer and unlinks the upstream signal).
    """

    __slots__ = ("_handle", "_unlink", "signal")

    def __init__(self, signal: AbortSignal, handle: asyncio.TimerHandle | None, unlink: Callable[[], None]) -> None:
        self.signal = signal
        self._handle = handle
        self._unlink = unlink

    def dispose(self) -> None:
        """Clear the timer (idempotent); the signal keeps whatever state it reached."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._unlink()
        self._unlink = _noop

    def __enter__(self) -> Deadline:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.dispose()


def deadline(upstream: AbortSignal | None, timeout_ms: int | float, code: str) -> Deadline:
    """Fuse ``upstream`` with a timer that aborts after ``timeout_ms`` with ``TimeoutReason(code, timeout_ms)``.

    A ``timeout_ms`` of zero or less arms no timer (the signal is ``upstream``, or a fresh one). Anything else that
    is not a finite number up to :data:`MAX_TIMER_DELAY_MS` raises ``ValueError``
    ``deadline timeoutMs must be a positive finite number no greater than 2147483647``. Must be called with an
    event loop running.
    """
    kind = type(timeout_ms)
    if (kind is int or kind is float) and timeout_ms <= 0:
        return Deadline(upstream if upstream is not None else AbortSignal(), None, _noop)
    if not is_positive_finite(timeout_ms) or timeout_ms > MAX_TIMER_DELAY_MS:
        raise ValueError(f"deadline timeoutMs must be a positive finite number no greater than {MAX_TIMER_DELAY_MS}")
    timer = AbortController()
    handle = asyncio.get_running_loop().call_later(timeout_ms / 1000, timer.abort, TimeoutReason(code, timeout_ms))
    if upstream is None:
        return Deadline(timer.signal, handle, _noop)
    signal, unlink = fuse_signals(upstream, timer.signal)
    return Deadline(signal, handle, unlink)


def timeout_of(signal: AbortSignal, code: str | None = None) -> TimeoutReason | None:
    """The deadline reason ``signal`` was aborted with, or ``None``; with ``code``, only a deadline of that code.

    Scoping by code keeps an outer deadline (another wrapper's timer that fired first) from reading as this one.
    """
    reason = signal.reason
    if type(reason) is not TimeoutReason:
        return None
    return reason if code is None or reason.code == code else None


def timeout_result(timeout_ms: int | float) -> ToolFailure:
    """The failure that replaces a timed-out call: ``tool call timed out after <ms>ms``, info ``TOOL_TIMEOUT``."""
    return tool_error_result(ToolTimeoutError(timeout_ms))


def install_timeout(registry: Registry, *, prepend: bool = False) -> Callable[[], None]:
    """Install the timeout policy's around wrapper on ``registry``; returns its disposer.

    The budget is the registered tool's own ``timeout_ms``, read on each call; a tool without one is delegated
    unchanged (its signal untouched). Wrappers compose in registration order (``prepend`` makes this one
    outermost): a timeout outside a retrying wrapper bounds the whole operation, inside it each attempt.
    """

    async def enforce(run: ToolExecution, next: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
        definition = registry.definition(run.name)
        timeout_ms = definition.timeout_ms if definition is not None else None
        if timeout_ms is None:
            return await next()
        with deadline(run.signal, timeout_ms, TOOL_TIMEOUT) as armed:
            upstream = run.signal
            run.signal = armed.signal
            try:
                result = await next()
                # our own timer fired: the body saw the abort and settled; whatever it produced, the call timed out
                if timeout_of(armed.signal, TOOL_TIMEOUT) is not None:
                    return timeout_result(timeout_ms)
                return result
            finally:
                run.signal = upstream

    return registry.on_execute(enforce, prepend=prepend)
