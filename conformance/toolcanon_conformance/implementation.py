"""The one interface through which the kit reaches an implementation under test, and its outcomes."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from toolcanon_conformance.deepjson import NESTING_LIMIT, first_too_deep

__all__ = ["Errored", "Implementation", "ImplementationInfo", "Outcome", "Ran", "Skipped", "checked_outcome"]


@dataclass(frozen=True, slots=True)
class ImplementationInfo:
    """What an implementation says about itself in the ``start`` handshake."""

    name: str
    language: str
    version: str
    capabilities: tuple[str, ...] = ()
    homepage: str | None = None
    issues: str | None = None


@dataclass(frozen=True, slots=True)
class Ran:
    """The implementation ran the scenario and answered a transcript (canonical JSON text).

    ``stderr`` is what the adapter wrote on its standard error meanwhile: shown when the transcript fails,
    and no part of the outcome's identity.
    """

    transcript: str
    stderr: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Skipped:
    """The implementation declined the scenario (a missing capability or an inexpressible value).

    ``stderr`` is what the adapter wrote on its standard error meanwhile (not part of the outcome's identity).
    """

    message: str
    issue_url: str | None = None
    stderr: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Errored:
    """The implementation (or its adapter) failed on the scenario: never counted as a pass."""

    context: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def raised(cls, error: BaseException) -> Errored:
        """The outcome of a run that raised ``error``: its type, message and traceback."""
        try:
            text = str(error)
        except Exception:
            text = "<unprintable exception>"
        return cls(
            {
                "kind": "raised",
                "message": f"{type(error).__name__}: {text}",
                "traceback": "".join(traceback.format_exception(error)),
            }
        )


Outcome: TypeAlias = Ran | Skipped | Errored


def checked_outcome(outcome: object) -> Outcome:
    """``outcome`` when it is a well-formed outcome; otherwise an :class:`Errored` saying what came back.

    An errored context must be a dict nested at most :data:`~toolcanon_conformance.deepjson.NESTING_LIMIT`
    levels (a cycle is infinitely deep), as an adapter's answer must: reports carry it.
    """
    if isinstance(outcome, Ran):
        if not isinstance(outcome.transcript, str):
            return Errored({"kind": "invalid-outcome", "message": "Ran.transcript is not a str"})
        return outcome
    if isinstance(outcome, Skipped):
        return outcome
    if isinstance(outcome, Errored):
        if not isinstance(outcome.context, dict):
            return Errored({"kind": "invalid-outcome", "message": "Errored.context is not a dict"})
        if first_too_deep(outcome.context, NESTING_LIMIT) is not None:
            message = f"Errored.context is nested deeper than {NESTING_LIMIT} levels (or holds a cycle)"
            return Errored({"kind": "invalid-outcome", "message": message})
        return outcome
    return Errored({"kind": "invalid-outcome", "message": f"run returned {type(outcome).__name__}, not an outcome"})


@runtime_checkable
class Implementation(Protocol):
    """An implementation under test: started once, asked to run scenarios one by one, stopped."""

    def start(self) -> ImplementationInfo:
        """Start (or connect to) the implementation and return its metadata."""
        ...

    def run(self, seq: int, scenario: dict[str, Any]) -> Outcome:
        """Run one scenario (the parsed scenario file) and return its outcome."""
        ...

    def stop(self) -> None:
        """Stop the implementation; idempotent."""
        ...
