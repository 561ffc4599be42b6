"""``structured_output``: a constant acknowledgement of the recorded result (renderers.md §11)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, const, obj, required

__all__ = ["RECORDED", "STRUCTURED_OUTPUT_SCHEMA", "render_structured_output", "structured_output_output"]

RECORDED: Final = "Structured output recorded."

STRUCTURED_OUTPUT_SCHEMA: Final[Node] = obj({"recorded": required(const("boolean", True))})


def render_structured_output(args: Any, value: Any) -> TextContent:
    """The fixed sentence :data:`RECORDED`."""
    return text_content(RECORDED)


def structured_output_output() -> Output:
    """The ``structured_output`` output declaration."""
    return Output(schema=STRUCTURED_OUTPUT_SCHEMA, render=render_structured_output)
