"""A call's input (``Call``) and the per-call execution object every phase receives (``ToolExecution``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolcanon.jsonvalue import JsonValue
from toolcanon.result import DispatchToken
from toolcanon.signal import AbortSignal

__all__ = ["Call", "ToolExecution"]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as a harness submits it.

    ``root_call_id`` defaults to ``call_id``. A call is *nested* exactly when ``parent`` is set (to the outer
    call's token); nothing checks that the token is real. ``signal`` is the caller's cancellation signal.
    """

    call_id: str
    name: str
    arguments: Any
    root_call_id: str | None = None
    parent: DispatchToken | None = None
    signal: AbortSignal | None = None
    agent: Any = None


class ToolExecution:
    """The execution shared by every phase of one call (the contract's ``exec``).

    Its identity fields are read-only. ``arguments`` is the frozen argument snapshot (``None`` when the
    snapshot failed). ``signal`` may be replaced by an around wrapper (and restored by it); once the call has
    finished the execution is frozen and ``signal`` can no longer be replaced.
    """

    __slots__ = (
        "_agent",
        "_arguments",
        "_call_id",
        "_concluded",
        "_deferred",
        "_finished",
        "_name",
        "_parent",
        "_root_call_id",
        "_signal",
        "_token",
    )

    def __init__(
        self,
        token: DispatchToken,
        call_id: str,
        root_call_id: str,
        name: str,
        agent: Any,
        parent: DispatchToken | None,
        signal: AbortSignal | None,
    ) -> None:
        self._token = token
        self._call_id = call_id
        self._root_call_id = root_call_id
        self._name = name
        self._arguments: JsonValue = None
        self._agent = agent
        self._parent = parent
        self._signal = signal
        self._deferred: list[Any] = []
        self._concluded = False
        self._finished = False

    @property
    def token(self) -> DispatchToken:
        """This call's opaque dispatch token (hand it as ``parent`` to nested calls)."""
        return self._token

    @property
    def call_id(self) -> str:
        """The call's id."""
        return self._call_id

    @property
    def root_call_id(self) -> str:
        """The id of the outermost call this one belongs to."""
        return self._root_call_id

    @property
    def name(self) -> str:
        """The tool name the call asked for."""
        return self._name

    @property
    def arguments(self) -> JsonValue:
        """The frozen argument snapshot (``None`` when it could not be made)."""
        return self._arguments

    @property
    def agent(self) -> Any:
        """The agent the call runs for (opaque to the registry)."""
        return self._agent

    @property
    def parent(self) -> DispatchToken | None:
        """The outer call's token for a nested call, else ``None``."""
        return self._parent

    @property
    def is_nested(self) -> bool:
        """True when the call carries a parent token."""
        return self._parent is not None

    @property
    def signal(self) -> AbortSignal | None:
        """The current cancellation signal (a wrapper may replace it around ``next()``)."""
        return self._signal

    @signal.setter
    def signal(self, replacement: AbortSignal | None) -> None:
        if self._finished:
            raise AttributeError(f"the execution of {self._call_id!r} has finished and is frozen")
        if replacement is not None and type(replacement) is not AbortSignal:
            # the body stage reads the signal: a look-alike's properties would run inside the pipeline
            raise TypeError("an execution's signal must be an AbortSignal or None")
        self._signal = replacement

    def defer_context(self, context: JsonValue) -> None:
        """Attach an additional context to this call's result (in call order, before wrapper contexts)."""
        self._deferred.append(context)

    def conclude_turn(self) -> None:
        """Mark the call so that the success built for it carries ``concludes_turn``."""
        self._concluded = True

    def __repr__(self) -> str:
        return f"<ToolExecution {self._name!r} call_id={self._call_id!r}>"
