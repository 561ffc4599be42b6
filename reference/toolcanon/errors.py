"""The contract's failure types and their stable codes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final

from toolcanon.jsonvalue import format_number, plain_str, type_name

__all__ = [
    "ABORTED",
    "ABORTED_BEFORE_DISPATCH",
    "CodeRunFailedError",
    "DuplicateToolError",
    "HarnessError",
    "JsonSchemaError",
    "ReservedToolNameError",
    "ToolArgsError",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolTimeoutError",
    "contract_error_name",
    "error_info",
    "error_message",
    "is_interrupt",
]

ABORTED = "ABORTED"
ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"


class HarnessError(Exception):
    """The project's error base class: the only exceptions whose failures carry ``info {name, code}``.

    ``name`` defaults to the concrete class name; ``code`` is a stable machine-readable string.
    """

    code: str
    name: str

    def __init__(self, message: str, code: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = name if name is not None else type(self).__name__


class JsonSchemaError(HarnessError):
    """A schema outside the supported subset (``UNSUPPORTED_SCHEMA``); ``violations`` lists each problem."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        super().__init__(f"unsupported JSON schema: {'; '.join(self.violations)}", "UNSUPPORTED_SCHEMA")


class ToolOutputError(HarnessError):
    """A tool's value or projection broke its output declaration (``INVALID_TOOL_OUTPUT``)."""

    def __init__(self, tool_name: str, violations: Sequence[str]) -> None:
        self.tool_name = tool_name
        self.violations = tuple(violations)
        super().__init__(
            f'tool "{tool_name}" returned invalid output: {"; ".join(self.violations)}', "INVALID_TOOL_OUTPUT"
        )


class ToolArgsError(HarnessError):
    """Arguments that do not match a ``define_tool`` parameter schema (``INVALID_ARGS``)."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        super().__init__(f"invalid arguments: {'; '.join(self.violations)}", "INVALID_ARGS")


class ToolNotFoundError(HarnessError):
    """No tool of that name is visible to the call (``UNKNOWN_TOOL``)."""

    def __init__(self, tool_name: str, route: str | None = None) -> None:
        self.tool_name = tool_name
        suffix = f": {route}" if route else ""
        super().__init__(f'unknown tool "{tool_name}"{suffix}', "UNKNOWN_TOOL")


class ToolTimeoutError(HarnessError):
    """A timeout wrapper's authored failure (``TOOL_TIMEOUT``)."""

    def __init__(self, timeout_ms: float) -> None:
        super().__init__(f"tool call timed out after {format_number(timeout_ms)}ms", "TOOL_TIMEOUT")


class CodeRunFailedError(HarnessError):
    """A ``run_code`` program failed (``CODE_RUN_FAILED``)."""

    def __init__(self, kind: str, message: str, logs: Sequence[str] = ()) -> None:
        captured = "\nCaptured output:\n" + "\n".join(logs) if logs else ""
        super().__init__(f"code run failed ({kind}): {message}{captured}", "CODE_RUN_FAILED")


class ReservedToolNameError(ValueError):
    """Registration of the reserved name ``run_code`` (the contract's plain ``Error``)."""


class DuplicateToolError(ValueError):
    """Registration of a name already registered in the same layer (the contract's plain ``Error``)."""


def contract_error_name(error: BaseException) -> str:
    """The contract's name for an exception: a HarnessError's ``name``, ``TypeError``, or ``Error``."""
    kind = type(error)
    if issubclass(kind, HarnessError):
        name = plain_str(getattr(error, "name", None))
        return name if name is not None else type_name(kind)
    if issubclass(kind, TypeError):
        return "TypeError"
    return "Error"


_UNPRINTABLE = "<unprintable thrown value>"
_ARGS: Final[Any] = BaseException.__dict__["args"]


def error_message(thrown: object) -> str:
    """The message of any raised or returned error value; total (never raises, whatever the value does).

    An exception gives its string ``message`` attribute, else its single argument's text, else ``str(exc)``;
    another object gives its string ``message`` attribute, else ``str(value)``. A string subclass counts as its
    exact ``str`` copy. When reading the value raises anything at all, the message is
    ``<unprintable thrown value>`` (digest 5.5).
    """
    try:
        message = getattr(thrown, "message", None)
        text = plain_str(message)
        if text is not None:
            return text
        if issubclass(type(thrown), BaseException):
            args = _ARGS.__get__(thrown)
            single = args[0] if len(args) == 1 else None
            text = plain_str(single)  # a string argument is the message as it is, without its own code
            if text is None:
                text = plain_str(str(single) if len(args) == 1 else str(thrown))
        else:
            text = plain_str(str(thrown))
    except BaseException:  # the value's own code raised while being read: inspection stays total
        return _UNPRINTABLE
    return text if text is not None else _UNPRINTABLE


def error_info(thrown: object) -> tuple[str, str] | None:
    """``(name, code)`` of a raised :class:`HarnessError`, else ``None`` (digest 5.4).

    Read once each; when either cannot be read, or is not a string, the failure carries no info (as when the
    contract's getter throws).
    """
    if not issubclass(type(thrown), HarnessError):
        return None
    try:
        name, code = plain_str(thrown.name), plain_str(thrown.code)  # type: ignore[attr-defined]
    except BaseException:
        return None
    if name is None or code is None:
        return None
    return name, code


def is_interrupt(thrown: BaseException) -> bool:
    """True for what stops the process or the running task, which the pipeline lets through, never a failure.

    That is ``KeyboardInterrupt``, ``SystemExit`` and ``GeneratorExit`` (the coroutine running the call is being
    closed), and ``asyncio.CancelledError`` while the current task is being cancelled. A ``CancelledError`` a
    tool raises on its own (say, from a future someone else cancelled) is the tool's failure.
    """
    kind = type(thrown)
    if issubclass(kind, _STOPS):
        return True
    if issubclass(kind, asyncio.CancelledError):
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no running loop: nothing else could have been cancelled
            return True
        return task is None or task.cancelling() > 0
    return False


_STOPS: Final = (KeyboardInterrupt, SystemExit, GeneratorExit)
