"""``ask_user_question``: the answers as compact JSON text (renderers.md §9)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.jsonvalue import canonical_json
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, obj, optional, required, string

__all__ = ["ASK_USER_QUESTION_SCHEMA", "ask_user_question_output", "render_ask_user_question"]

ASK_USER_QUESTION_SCHEMA: Final[Node] = obj(
    {
        "answers": required(
            array(
                obj(
                    {
                        "id": required(string()),
                        "selected": required(array(string())),
                        "custom": optional(string()),
                    }
                )
            )
        )
    }
)


def render_ask_user_question(args: Any, value: Any) -> TextContent:
    """``JSON.stringify(value)``: compact, keys in the value's own order, no trailing newline."""
    return text_content(canonical_json(value))


def ask_user_question_output() -> Output:
    """The ``ask_user_question`` output declaration."""
    return Output(schema=ASK_USER_QUESTION_SCHEMA, render=render_ask_user_question)
