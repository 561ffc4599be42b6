"""What can go wrong on a connection to an implementation under test, one exception per step.

The lifecycle of a connection, and what each step raises:

1. **Start the adapter.** The runner launches the adapter (a command, or an importable Python object). When it
   cannot be launched at all, or exits or raises before answering the handshake: :class:`CannotStart`.
2. **Handshake.** The runner sends ``start {version}``; the adapter answers with its implementation's metadata.
   An answer for another protocol version: :class:`VersionMismatch`. An answer that is not a valid ``start``
   response (with protocol validation, one declaring a capability the scenario format does not know):
   :class:`InvalidResponse`. No answer within the start-up timeout: :class:`TimedOut`.
3. **Run each scenario.** The runner sends ``run {seq, scenario}`` and waits for one line. A line that is not
   JSON, not UTF-8, too long or nested too deep, is not a valid ``run`` response, echoes another ``seq``, or
   came before the command: :class:`InvalidResponse`. No line within the per-scenario timeout:
   :class:`TimedOut`. The process exits (or closes its output) instead of answering: :class:`Crashed`. None
   of these ever counts as a pass: the scenario is *errored*, the context of the exception is attached to it,
   and the adapter is restarted for the next scenario. After a few unanswered scenarios in a row the runner
   gives up on the implementation (``runner.Watchdog``).
4. **Stop.** The runner sends ``stop`` and the adapter exits; one that lingers is killed. Stopping raises
   nothing.

Every exception derives from :class:`AdapterError`, carries the adapter's captured standard error (when there
is one), and turns itself into the ``context`` of an errored outcome with :meth:`AdapterError.context`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AdapterError",
    "CannotStart",
    "Crashed",
    "InvalidResponse",
    "TimedOut",
    "VersionMismatch",
]


class AdapterError(Exception):
    """Base of every failure of the connection between the kit and an adapter."""

    #: A stable, machine-readable name of the failure (the ``context.kind`` of an errored outcome).
    kind = "adapter-error"

    def __init__(self, message: str, *, stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr

    def context(self) -> dict[str, Any]:
        """The ``context`` of the errored outcome this failure becomes (JSON-compatible)."""
        context: dict[str, Any] = {"kind": self.kind, "message": self.message}
        context.update(self._details())
        if self.stderr:
            context["stderr"] = self.stderr
        return context

    def _details(self) -> dict[str, Any]:
        return {}

    def __str__(self) -> str:
        text = self.message
        if self.stderr:
            text += "\n--- adapter stderr ---\n" + self.stderr.rstrip("\n")
        return text


class CannotStart(AdapterError):
    """The adapter could not be launched, or exited (or raised) before answering ``start``."""

    kind = "cannot-start"

    def __init__(self, message: str, *, stderr: str = "", returncode: int | None = None) -> None:
        super().__init__(message, stderr=stderr)
        self.returncode = returncode

    def _details(self) -> dict[str, Any]:
        return {} if self.returncode is None else {"returncode": self.returncode}


class VersionMismatch(AdapterError):
    """The adapter speaks another version of the protocol than the kit."""

    kind = "version-mismatch"

    def __init__(self, expected: int, got: object, *, stderr: str = "") -> None:
        super().__init__(
            f"protocol version mismatch: the kit speaks version {expected}, the adapter answered {got!r}",
            stderr=stderr,
        )
        self.expected = expected
        self.got = got

    def _details(self) -> dict[str, Any]:
        return {"expected": self.expected, "got": self.got if isinstance(self.got, int) else repr(self.got)}


class InvalidResponse(AdapterError):
    """The adapter answered something that is not a valid response to the command it was sent."""

    kind = "invalid-response"

    def __init__(self, reason: str, *, line: str | None = None, stderr: str = "") -> None:
        shown = "" if line is None else f": {_excerpt(line)}"
        super().__init__(f"invalid response ({reason}){shown}", stderr=stderr)
        self.reason = reason
        self.line = line

    def _details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"reason": self.reason}
        if self.line is not None:
            details["line"] = _excerpt(self.line, 2000)
        return details


class TimedOut(AdapterError):
    """The adapter did not answer within the allotted time (it is then killed)."""

    kind = "timed-out"

    def __init__(self, phase: str, seconds: float, *, stderr: str = "") -> None:
        super().__init__(f"no answer to {phase} within {seconds:g} s", stderr=stderr)
        self.phase = phase
        self.seconds = seconds

    def _details(self) -> dict[str, Any]:
        return {"phase": self.phase, "seconds": self.seconds}


class Crashed(AdapterError):
    """The adapter exited, or closed its output, instead of answering."""

    kind = "crashed"

    def __init__(self, phase: str, returncode: int | None, *, stderr: str = "") -> None:
        status = "closed its output" if returncode is None else f"exited with code {returncode}"
        super().__init__(f"the adapter {status} during {phase}", stderr=stderr)
        self.phase = phase
        self.returncode = returncode

    def _details(self) -> dict[str, Any]:
        return {"phase": self.phase, "returncode": self.returncode}


def _excerpt(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"
