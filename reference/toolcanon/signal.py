"""Explicit cancellation: an abort signal passed with a call, its controller, and signal fusion."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["AbortController", "AbortSignal", "fuse_signals"]


class AbortSignal:
    """Read side of a cancellation: ``aborted`` becomes true once, with a ``reason``; never resets."""

    __slots__ = ("_aborted", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[Callable[[object], None]] | None = None

    @property
    def aborted(self) -> bool:
        """True once the signal has been aborted."""
        return self._aborted

    @property
    def reason(self) -> object:
        """The abort reason (``None`` before the abort or when none was given)."""
        return self._reason

    def add_listener(self, callback: Callable[[object], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            callback(self._reason)
            return _noop
        if self._listeners is None:
            self._listeners = []
        self._listeners.append(callback)

        def remove() -> None:
            if self._listeners is not None and callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    async def wait(self) -> object:
        """Wait until the signal is aborted; return the reason."""
        if self._aborted:
            return self._reason
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        def settle(reason: object) -> None:
            if not future.done():
                future.set_result(reason)

        remove = self.add_listener(settle)
        try:
            return await future
        finally:
            remove()

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, None
        for callback in listeners or ():
            callback(reason)

    def __repr__(self) -> str:
        return f"<AbortSignal aborted={self._aborted}>"


def _noop() -> None:
    return None


class AbortController:
    """Write side of a cancellation: owns one :class:`AbortSignal` and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        """Abort the signal (idempotent; the first reason wins)."""
        self.signal._abort(reason)


def fuse_signals(*sources: AbortSignal | None) -> tuple[AbortSignal, Callable[[], None]]:
    """A fresh signal that aborts when any source aborts, with that source's reason; and an unlinker."""
    fused = AbortSignal()
    removers: list[Callable[[], None]] = []
    for source in sources:
        if source is None:
            continue
        if source.aborted:
            fused._abort(source.reason)
            break
        removers.append(source.add_listener(fused._abort))
    if not removers:
        return fused, _noop

    def unlink() -> None:
        for remove in removers:
            remove()

    return fused, unlink
