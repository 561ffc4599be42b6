"""What policy hooks return: pre-execute decisions, post-execute decisions, and approval requests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from toolcontract.jsonvalue import JsonValue
from toolcontract.result import ABSENT, Absent
from toolcontract.signal import AbortSignal

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
]


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call proceed to the guards (the default pre-execute decision)."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call: it fails with ``reason`` as its message and ``Error: <reason>`` as its content."""

    reason: str


@dataclass(frozen=True, slots=True)
class Ask:
    """Route the call through the approval hook (without one it is denied)."""

    reason: str | None = None


PreExecuteDecision: TypeAlias = Allow | Deny | Ask


@dataclass(frozen=True, slots=True)
class Accept:
    """Accept the result; optionally replace its ``content`` *or* its ``value`` (never both).

    Replacing ``content`` keeps value and metadata (it is not redaction); replacing ``value`` revalidates it
    and re-renders content and metadata. :data:`~toolcontract.result.ABSENT` means "not replaced".
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
