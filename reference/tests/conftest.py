"""Shared helpers for the reference's tests: small tools and a synchronous way to execute calls."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from toolcanon import Call, Output, Registry, ToolDefinition, ToolResult, define_tool


class BoundedAncestors(set[int]):
    """Ancestor ids that fail a schema walk at the add past ``limit``: a walk going round a cycle ends, not hangs."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.left = limit

    def add(self, element: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise AssertionError("the walk went round the cycle instead of finding it")
        super().add(element)


@contextlib.contextmanager
def line_budget(limit: int) -> Iterator[None]:
    """Fail the Python code called inside at its ``limit``-th line: a walk going round a cycle ends, not hangs.

    For walks whose set of open containers a test cannot reach (the JSON writer's and copier's): the failure
    is an ``AssertionError`` raised inside the walk, so a mutant that never finds the cycle fails at once.
    """
    left = limit

    def trace_lines(frame: FrameType, event: str, arg: object) -> Callable[..., object]:
        nonlocal left
        if event == "line":
            left -= 1
            if left < 0:
                raise AssertionError(f"the walk ran past {limit} lines instead of finding the cycle")
        return trace_lines

    previous, previous_limit = sys.gettrace(), sys.getrecursionlimit()
    # a RecursionError raised in the tracer turns tracing off for good, and a wrapped recursive walk (a coverage
    # or mutation tool's trampoline triples its frames) can reach the default limit: leave it room
    sys.setrecursionlimit(max(previous_limit, 10_000))
    sys.settrace(trace_lines)
    try:
        yield
    finally:
        sys.settrace(previous)
        sys.setrecursionlimit(previous_limit)


def items_chain(levels: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """``levels`` array schemas, each the ``items`` of the one above, around ``leaf`` (a string schema by default)."""
    schema: dict[str, Any] = {"type": "string"} if leaf is None else leaf
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


def text_render(prefix: str = "render:") -> Callable[[Any, Any], list[dict[str, str]]]:
    """A renderer writing ``prefix`` + the value (strings raw, anything else as canonical JSON)."""
    from toolcanon.jsonvalue import canonical_json

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": prefix + (value if isinstance(value, str) else canonical_json(value))}]

    return render


def echo_tool(name: str = "echo", **overrides: Any) -> ToolDefinition:
    """``echo(text)`` returning the text, rendering ``render:<text>``, projecting ``{"projected": value}``."""
    options: dict[str, Any] = {
        "name": name,
        "description": "Echo text.",
        "parameters": {"text": {"type": "string"}},
        "output": Output(
            schema={"type": "string"},
            render=text_render(),
            presentation_meta=lambda args, value: {"projected": value},
        ),
        "execute": lambda args, run: args.get("text", ""),
    }
    options.update(overrides)
    return define_tool(**options)


def raw_tool(name: str, execute: Callable[..., Any], schema: Any = None, **overrides: Any) -> ToolDefinition:
    """A raw definition (no argument validation) with an any-JSON output rendered as canonical JSON."""
    options: dict[str, Any] = {
        "name": name,
        "description": name,
        "parameters": {"type": "object"},
        "output": Output(schema={} if schema is None else schema, render=text_render("")),
        "execute": execute,
    }
    options.update(overrides)
    return ToolDefinition(**options)


def call(registry: Registry, name: str, arguments: Any = None, **fields: Any) -> ToolResult:
    """Execute one call synchronously (``call_id`` defaults to ``"c1"``)."""
    fields.setdefault("call_id", "c1")
    return asyncio.run(registry.execute(Call(name=name, arguments={} if arguments is None else arguments, **fields)))


def plain(value: Any) -> Any:
    """The value as plain JSON data (for comparisons that must ignore frozen types)."""
    import json

    return json.loads(json.dumps(value))
