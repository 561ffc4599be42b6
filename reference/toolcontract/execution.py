"""A call's input (``Call``) and the per-call execution object every phase receives (``ToolExecution``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolcontract.jsonvalue import JsonValue
from toolcontract.result import DispatchToken
from toolcontract.signal import AbortSignal

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
    """The mutable execution shared by every phase of one call (the contract's ``exec``).

    ``arguments`` is the frozen argument snapshot (``None`` when the snapshot failed). ``signal`` may be
    replaced by an around wrapper (and restored by it). Once the call has finished the execution is frozen.
    """

    __slots__ = (
        "_concluded",
        "_deferred",
        "_frozen",
        "agent",
        "arguments",
        "call_id",
        "name",
        "parent",
        "root_call_id",
        "signal",
        "token",
    )

    _frozen: bool
    _deferred: list[Any]
    _concluded: bool
    token: DispatchToken
    call_id: str
    root_call_id: str
    name: str
    arguments: JsonValue
    agent: Any
    parent: DispatchToken | None
    signal: AbortSignal | None

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
        set_slot = object.__setattr__
        set_slot(self, "_frozen", False)
        set_slot(self, "token", token)
        set_slot(self, "call_id", call_id)
        set_slot(self, "root_call_id", root_call_id)
        set_slot(self, "name", name)
        set_slot(self, "arguments", None)
        set_slot(self, "agent", agent)
        set_slot(self, "parent", parent)
        set_slot(self, "signal", signal)
        set_slot(self, "_deferred", [])
        set_slot(self, "_concluded", False)

    @property
    def is_nested(self) -> bool:
        """True when the call carries a parent token."""
        return self.parent is not None

    def defer_context(self, context: JsonValue) -> None:
        """Attach an additional context to this call's result (in call order, before wrapper contexts)."""
        self._deferred.append(context)

    def conclude_turn(self) -> None:
        """Mark the call so that the success built for it carries ``concludes_turn``."""
        object.__setattr__(self, "_concluded", True)

    def __setattr__(self, name: str, value: object) -> None:
        if self._frozen:
            raise AttributeError(f"the execution of {self.call_id!r} has finished and is frozen")
        if name not in ("signal",):
            raise AttributeError(f"ToolExecution.{name} cannot be changed; only signal may be replaced")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"<ToolExecution {self.name!r} call_id={self.call_id!r}>"
