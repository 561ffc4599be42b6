"""Content-block helpers shared by the first-party renderers (plain dicts, as renderers return them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["TextContent", "single_text", "text_content"]

TextContent = list[dict[str, Any]]
"""A rendered content list."""


def text_content(text: str) -> TextContent:
    """The content list of one text block."""
    return [{"type": "text", "text": text}]


def single_text(content: Sequence[Any]) -> str | None:
    """The text when ``content`` is exactly one text block with a string ``text``, else ``None``."""
    if len(content) != 1:
        return None
    block = content[0]
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        text: str = block["text"]
        return text
    return None
