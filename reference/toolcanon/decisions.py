"""What policy hooks return: pre-execute decisions, post-execute decisions, and approval requests."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from toolcanon.jsonvalue import JsonValue
from toolcanon.result import ABSENT, Absent
from toolcanon.signal import AbortSignal

__all__ = [
    "Accept",
    "Allow",
    "ApprovalOutcome",
    "ApprovalRequest",
    "Ask",
    "Block",
    "Deny",
    "PostExecuteDecision",
    "PreExecuteDecision",
    "as_post_execute_decision",
    "as_pre_execute_decision",
]


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call proceed to the guards (the default pre-execute decision)."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call: it fails with ``reason`` as its message and ``Error: <reason>`` as its content.

    ``reason`` is a string, or any lossless JSON value: that value is then the message, and the content reads
    it as ECMAScript's ``String()`` does (``Error: 5``, ``Error: 1,x``, ``Error: [object Object]``).
    """

    reason: JsonValue


@dataclass(frozen=True, slots=True)
class Ask:
    """Route the call through the approval hook (without one it is denied)."""

    reason: str | None = None


PreExecuteDecision: TypeAlias = Allow | Deny | Ask


@dataclass(frozen=True, slots=True)
class Accept:
    """Accept the result; optionally replace its ``content`` *or* its ``value`` (never both).

    Replacing ``content`` keeps value and metadata (it is not redaction); replacing ``value`` revalidates it
    and re-renders content and metadata. :data:`~toolcanon.result.ABSENT` means "not replaced".
    """

    content: Any = ABSENT
    value: JsonValue | Absent = ABSENT
    additional_contexts: Any = ABSENT


@dataclass(frozen=True, slots=True)
class Block:
    """Turn the result into a failure whose content is ``feedback`` verbatim; value and metadata are dropped."""

    feedback: Any
    additional_contexts: Any = ABSENT


PostExecuteDecision: TypeAlias = Accept | Block

ApprovalOutcome: TypeAlias = Literal["allowed-once", "rejected", "cancelled", "unavailable"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the approval hook receives for an ``Ask`` decision; ``signal`` is the caller's signal."""

    agent: Any
    tool_name: str
    call_id: str
    reason: str | None
    signal: AbortSignal | None


# A decision of a subclass is read through the decision class's own slots: a subclass's properties never run.
def _fields(cls: type) -> tuple[Any, ...]:
    return tuple(cls.__dict__[field.name].__get__ for field in dataclasses.fields(cls))


_FIELDS: Final[dict[type, tuple[Any, ...]]] = {cls: _fields(cls) for cls in (Allow, Deny, Ask, Accept, Block)}


def _as(decision: object, kinds: tuple[type, ...]) -> Any:
    kind = type(decision)
    for cls in kinds:
        if kind is cls:
            return decision
        if issubclass(kind, cls):
            return cls(*(field(decision) for field in _FIELDS[cls]))
    return None


def as_pre_execute_decision(decision: object) -> PreExecuteDecision | None:
    """``decision`` as an exact ``Allow``, ``Deny`` or ``Ask`` (a subclass is copied from its fields), else ``None``.

    The kind is decided from the type alone, never from what the object says of itself (``__class__``).
    """
    result: PreExecuteDecision | None = _as(decision, (Allow, Deny, Ask))
    return result


def as_post_execute_decision(decision: object) -> PostExecuteDecision | None:
    """``decision`` as an exact ``Accept`` or ``Block`` (a subclass is copied from its fields), else ``None``."""
    result: PostExecuteDecision | None = _as(decision, (Accept, Block))
    return result
