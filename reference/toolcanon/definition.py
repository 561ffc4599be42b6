"""Tool definitions: the mandatory output declaration, raw ``ToolDefinition`` and the ``define_tool`` DSL."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from toolcanon.errors import ToolArgsError
from toolcanon.jsonvalue import JsonValue
from toolcanon.schema import compile_parameters, compile_validator, compile_value_schema

if TYPE_CHECKING:
    from toolcanon.execution import ToolExecution
    from toolcanon.result import ToolResult

__all__ = ["MetaProjector", "Output", "Renderer", "ToolDefinition", "define_tool"]

Renderer: TypeAlias = Callable[[JsonValue, JsonValue], Any]
"""``render(args, value) -> list of content blocks``: a pure function of the frozen arguments and value."""

MetaProjector: TypeAlias = Callable[[JsonValue, JsonValue], JsonValue]
"""``presentation_meta(args, value) -> JSON``: computed for direct calls only."""

Body: TypeAlias = Callable[[JsonValue, "ToolExecution"], Any]
"""``execute(args, run) -> value`` (plain or ``async``): returns only the canonical value, never content."""

Finalizer: TypeAlias = Callable[["ToolExecution", "ToolResult"], Any]
"""``finalize_content(run, result) -> content | None``: may replace only the content; ``None`` keeps it."""


@dataclass(frozen=True, slots=True)
class Output:
    """A tool's output declaration: the value schema, the Native renderer, an optional metadata projector.

    With :func:`define_tool` the schema is written in the value-schema DSL; with :class:`ToolDefinition` it is
    a raw JSON Schema of the supported subset.
    """

    schema: Any
    render: Renderer
    presentation_meta: MetaProjector | None = None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A registrable tool. ``parameters`` and ``output.schema`` are raw JSON Schema (not validated per call).

    ``output`` is typed loosely on purpose: the registry checks it and rejects what is not a declaration.
    """

    name: str
    description: str
    parameters: Any
    output: Any
    execute: Body
    finalize_content: Finalizer | None = None
    timeout_ms: Any = None
    is_concurrency_safe: Callable[[JsonValue], Any] | None = None
    present_call: Callable[[JsonValue], Any] | None = None
    present_result: Callable[[JsonValue, Any], Any] | None = None


def is_positive_finite(number: object) -> bool:
    """The contract's timeout check: a finite number greater than zero (``bool`` is not a number)."""
    kind = type(number)  # compared by identity: a metaclass's __eq__ must not decide
    if kind is int:
        return number > 0  # type: ignore[operator]
    return kind is float and math.isfinite(number) and number > 0  # type: ignore[arg-type,operator]


def define_tool(
    *,
    name: str,
    description: str,
    parameters: Any,
    output: Output,
    execute: Body,
    finalize_content: Finalizer | None = None,
    timeout_ms: Any = None,
    is_concurrency_safe: Callable[[JsonValue], Any] | None = None,
    present_call: Callable[[JsonValue], Any] | None = None,
    present_result: Callable[[JsonValue, Any], Any] | None = None,
) -> ToolDefinition:
    """Define a tool in the value-schema DSL: compile both schemas and validate arguments before the body.

    Raises ``ValueError`` for a bad ``timeout_ms`` and :class:`~toolcanon.errors.JsonSchemaError` for a
    schema outside the DSL or the raw subset. The generated body raises
    :class:`~toolcanon.errors.ToolArgsError` (``INVALID_ARGS``) when the arguments do not match.

    ``output.render`` is always wrapped, as the contract's ``defineTool`` wraps it: an output declared without
    a callable ``render`` registers, and each call then fails at render (``INVALID_TOOL_OUTPUT``). So is a
    ``presentation_meta`` other than ``None`` (no projector): one that is not callable registers, and each direct
    call then fails at its metadata (nested calls compute none).
    """
    if timeout_ms is not None and not is_positive_finite(timeout_ms):
        raise ValueError(f"defineTool({name}): timeoutMs must be a positive finite number")
    raw_parameters = compile_parameters(parameters, "parameters")
    raw_output = compile_value_schema(output.schema, "schema")
    arguments_validator = compile_validator(raw_parameters)
    user_render: Any = output.render
    user_presentation_meta: Any = output.presentation_meta

    def render(args: JsonValue, value: JsonValue) -> Any:
        return user_render(args, value)

    def presentation_meta(args: JsonValue, value: JsonValue) -> Any:
        return user_presentation_meta(args, value)

    def arguments_are_valid(args: JsonValue) -> bool:
        return arguments_validator.is_valid(args)

    def validated_execute(args: JsonValue, run: ToolExecution) -> Any:
        if not arguments_validator.is_valid(args):
            raise ToolArgsError(arguments_validator.violations(args, ""))
        return execute(args, run)  # an awaitable from an async body is awaited by the registry

    def soft_present_call(args: JsonValue) -> Any:
        return present_call(args) if present_call and arguments_are_valid(args) else None

    def soft_present_result(args: JsonValue, result: Any) -> Any:
        return present_result(args, result) if present_result and arguments_are_valid(args) else None

    def soft_is_concurrency_safe(args: JsonValue) -> bool:
        return bool(is_concurrency_safe and arguments_are_valid(args) and is_concurrency_safe(args) is True)

    return ToolDefinition(
        name=name,
        description=description,
        parameters=raw_parameters,
        output=Output(raw_output, render, None if user_presentation_meta is None else presentation_meta),
        execute=validated_execute,
        finalize_content=finalize_content,
        timeout_ms=timeout_ms,
        is_concurrency_safe=soft_is_concurrency_safe,
        present_call=soft_present_call if present_call else None,
        present_result=soft_present_result if present_result else None,
    )
