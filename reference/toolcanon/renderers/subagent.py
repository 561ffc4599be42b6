"""``subagent``: a started job or agent, or the child's final text blocks concatenated (renderers.md §19)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, any_json, array, const, obj, one_of, required, string

__all__ = ["SUBAGENT_SCHEMA", "render_subagent", "subagent_output"]

SUBAGENT_SCHEMA: Final[Node] = one_of(
    obj({"kind": required(const("string", "background")), "jobId": required(string())}),
    obj({"kind": required(const("string", "continuable")), "subagentId": required(string())}),
    obj(
        {
            "kind": required(const("string", "foreground")),
            "runId": required(string()),
            "output": required(array(any_json())),
        }
    ),
)


def _text_of(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        text: str = block["text"]
        return text
    return ""


def render_subagent(args: Any, value: Any) -> TextContent:
    """Start notices, or the ``text`` of every text block of the child's output with no separator."""
    if value["kind"] == "background":
        return text_content(f"started background subagent job {value['jobId']}")
    if value["kind"] == "continuable":
        return text_content(f"started subagent {value['subagentId']}")
    return text_content("".join(_text_of(block) for block in value["output"]))


def subagent_output() -> Output:
    """The ``subagent`` output declaration."""
    return Output(schema=SUBAGENT_SCHEMA, render=render_subagent)
