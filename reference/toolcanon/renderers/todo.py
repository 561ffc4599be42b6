"""``todo_write``: the new list's counts in one sentence; the list itself is not rendered (renderers.md §8)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, enum, integer, obj, required, string
from toolcanon.renderers._ecma import js_string

__all__ = ["TODO_WRITE_SCHEMA", "render_todo_write", "todo_write_output"]

TODO_WRITE_SCHEMA: Final[Node] = obj(
    {
        "todos": required(
            array(
                obj(
                    {
                        "content": required(string()),
                        "status": required(enum("pending", "in_progress", "completed")),
                    }
                )
            )
        ),
        "counts": required(
            obj(
                {
                    "pending": required(integer()),
                    "inProgress": required(integer()),
                    "completed": required(integer()),
                }
            )
        ),
    }
)


def render_todo_write(args: Any, value: Any) -> TextContent:
    """``Updated todo list: <p> pending, <i> in progress, <c> completed.``"""
    counts = value["counts"]
    return text_content(
        f"Updated todo list: {js_string(counts['pending'])} pending, {js_string(counts['inProgress'])} in "
        f"progress, {js_string(counts['completed'])} completed."
    )


def todo_write_output() -> Output:
    """The ``todo_write`` output declaration."""
    return Output(schema=TODO_WRITE_SCHEMA, render=render_todo_write)
