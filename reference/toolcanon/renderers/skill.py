"""``skill``: the skill body wrapped in ``<skill_content>`` with resource hints (renderers.md §13)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, const, obj, one_of, optional, required, string

__all__ = ["SKILL_SCHEMA", "escape_attribute", "escape_text", "render_skill", "skill_output"]

_LOAD_AS_NEEDED: Final = "Load referenced resources only as needed."

SKILL_SCHEMA: Final[Node] = obj(
    {
        "name": required(string()),
        "provider": required(string()),
        "resourceBase": optional(
            one_of(
                obj({"kind": required(const("string", "directory")), "path": required(string())}),
                obj({"kind": required(const("string", "url")), "url": required(string())}),
                obj({"kind": required(const("string", "opaque")), "description": required(string())}),
            )
        ),
        "content": required(string()),
    }
)


def escape_attribute(text: str) -> str:
    """The attribute escape: ``&``, ``"`` and ``<`` (not ``>``)."""
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def escape_text(text: str) -> str:
    """The text escape: ``&``, ``<`` and ``>``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _hints(value: Any) -> tuple[str, str]:
    base = value.get("resourceBase")
    if base is None:
        return (
            f'Resources for this skill are managed by provider "{escape_text(value["provider"])}".',
            _LOAD_AS_NEEDED,
        )
    if base["kind"] == "directory":
        return (
            f"Base directory for this skill: {escape_text(base['path'])}",
            "Resolve relative paths mentioned by this skill against the base directory before using them. "
            + _LOAD_AS_NEEDED,
        )
    if base["kind"] == "url":
        return (
            f"Base URL for this skill: {escape_text(base['url'])}",
            "Resolve relative URLs mentioned by this skill against the base URL before using them. " + _LOAD_AS_NEEDED,
        )
    return (f"Resources for this skill: {escape_text(base['description'])}", _LOAD_AS_NEEDED)


def render_skill(args: Any, value: Any) -> TextContent:
    """The envelope, the two hint lines, then the body verbatim (never escaped)."""
    lines = [
        f'<skill_content name="{escape_attribute(value["name"])}">',
        "<skill_resources>",
        *_hints(value),
        "</skill_resources>",
        "",
        "<skill_instructions>",
        value["content"],
        "</skill_instructions>",
        "</skill_content>",
    ]
    return text_content("\n".join(lines))


def skill_output() -> Output:
    """The ``skill`` output declaration."""
    return Output(schema=SKILL_SCHEMA, render=render_skill)
