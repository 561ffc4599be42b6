"""The one interface through which the kit reaches an implementation under test, and its outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

__all__ = ["Errored", "Implementation", "ImplementationInfo", "Outcome", "Ran", "Skipped"]


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
    """The implementation ran the scenario and answered a transcript (canonical JSON text)."""

    transcript: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """The implementation declined the scenario (a missing capability or an inexpressible value)."""

    message: str
    issue_url: str | None = None


@dataclass(frozen=True, slots=True)
class Errored:
    """The implementation (or its adapter) failed on the scenario: never counted as a pass."""

    context: dict[str, Any] = field(default_factory=dict)


Outcome: TypeAlias = Ran | Skipped | Errored


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
