"""The contract's failure types and their stable codes."""

from __future__ import annotations

from collections.abc import Sequence

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
    "error_message",
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
        super().__init__(f"tool call timed out after {timeout_ms:g}ms", "TOOL_TIMEOUT")


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
    if isinstance(error, HarnessError):
        return error.name
    if isinstance(error, TypeError):
        return "TypeError"
    return "Error"


_UNPRINTABLE = "<unprintable thrown value>"


def error_message(thrown: object) -> str:
    """The message of any raised or returned error value; total (never raises).

    An exception gives its message (``str(exc)``, or its ``message`` attribute when it is a string);
    another object with a string ``message`` attribute gives that; anything else gives ``str(value)``.
    """
    try:
        if isinstance(thrown, HarnessError):
            return thrown.message if type(thrown.message) is str else str(thrown.message)
        if isinstance(thrown, BaseException):
            message = getattr(thrown, "message", None)
            if type(message) is str:
                return message
            text = str(thrown) if not thrown.args or len(thrown.args) > 1 else str(thrown.args[0])
            return text if type(text) is str else _UNPRINTABLE
        message = getattr(thrown, "message", None)
        if type(message) is str:
            return message
        text = str(thrown)
        return text if type(text) is str else _UNPRINTABLE
    except Exception:
        return _UNPRINTABLE
