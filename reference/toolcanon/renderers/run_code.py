"""``run_code``: the program's logs, then its return value as raw text or depth-capped JSON (renderers.md §12)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.jsonvalue import canonical_json, encode_string
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, any_json, array, obj, optional, required, string
from toolcanon.renderers._ecma import es_keys

__all__ = ["NO_OUTPUT", "RUN_CODE_SCHEMA", "pretty_json", "render_run_code", "run_code_output"]

NO_OUTPUT: Final = "(run_code completed with no output)"
# Two spaces per level; a container whose indent would exceed ten characters is written compact.
_INDENT: Final = "  "
_MAX_INDENT_CHARS: Final = 10
_NOTHING: Final = object()

RUN_CODE_SCHEMA: Final[Node] = obj({"logs": required(array(string())), "result": optional(any_json())})


def pretty_json(value: Any) -> str:
    """``JSON.stringify(value, null, 2)`` down to depth 4; containers at depth 5 and deeper stay on one line.

    Iterative over the pretty levels (at most five); compact subtrees use the iterative canonical writer.
    """
    parts: list[str] = []
    # Each frame: (children iterator, is_object, depth, first-child flag).
    stack: list[list[Any]] = []
    pending: Any = value
    depth = 0
    while True:
        if pending is not _NOTHING:
            pretty = (depth + 1) * len(_INDENT) <= _MAX_INDENT_CHARS
            if isinstance(pending, dict) and pending and pretty:
                parts.append("{")
                stack.append([iter([(key, pending[key]) for key in es_keys(pending)]), True, depth, True])
            elif isinstance(pending, list) and pending and pretty:
                parts.append("[")
                stack.append([iter(pending), False, depth, True])
            else:
                parts.append(canonical_json(pending))
            pending = _NOTHING
        if not stack:
            break
        frame = stack[-1]
        child: Any = next(frame[0], _NOTHING)
        if child is _NOTHING:
            stack.pop()
            parts.append("\n" + _INDENT * frame[2] + ("}" if frame[1] else "]"))
            continue
        parts.append(("\n" if frame[3] else ",\n") + _INDENT * (frame[2] + 1))
        frame[3] = False
        if frame[1]:
            key, pending = child
            parts.append(encode_string(key) + ": ")
        else:
            pending = child
        depth = frame[2] + 1
    return "".join(parts)


def render_run_code(args: Any, value: Any) -> TextContent:
    """Logs joined by newlines, then the result (a string raw, anything else as :func:`pretty_json`)."""
    if "result" not in value:
        rendered = ""
    elif isinstance(value["result"], str):
        rendered = value["result"]
    else:
        rendered = pretty_json(value["result"])
    parts = [part for part in ("\n".join(value["logs"]), rendered) if part]
    return text_content("\n".join(parts) if parts else NO_OUTPUT)


def run_code_output() -> Output:
    """The ``run_code`` output declaration."""
    return Output(schema=RUN_CODE_SCHEMA, render=render_run_code)
