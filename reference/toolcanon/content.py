"""Content blocks: the Native rendering a model sees (plain JSON records tagged by ``type``).

The registry never checks block shapes: it only requires rendered content to be lossless JSON, and passes
unknown tags through unchanged. The shapes below document the core tags.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.renderers._ecma import js_property, js_string

__all__ = [
    "ImageBlock",
    "TextBlock",
    "ToolResultBlock",
    "error_content",
    "text_block",
    "text_of_block",
]


class TextBlock(TypedDict):
    """``{"type": "text", "text": ...}``"""

    type: Literal["text"]
    text: str


class ImageBlock(TypedDict):
    """``{"type": "image", "attachment": {...}}``"""

    type: Literal["image"]
    attachment: Any


class ToolResultBlock(TypedDict):
    """``{"type": "tool-result", "toolCallId", "content", "isError"?}`` (inside durable tool messages)."""

    type: Literal["tool-result"]
    toolCallId: str
    content: list[Any]
    isError: NotRequired[bool]


def text_block(text: str) -> FrozenDict:
    """A frozen text block."""
    return FrozenDict({"type": "text", "text": text})


def error_content(message: str) -> FrozenList:
    """The content of a failure synthesized from an error: one text block ``Error: <message>``."""
    return FrozenList([text_block("Error: " + message)])


def text_of_block(block: object) -> str:
    """How a blocked result's message names a (snapshot) block: its text, or ``[<type> content]`` for other tags.

    Read as the original's ``block.type === 'text' ? block.text : `[${block.type} content]` `` joined by
    ``Array.prototype.join``: a missing or ``null`` text is empty, any other text and any type print as
    ``String()`` prints them (``2.0`` is ``2``), and a missing type, or a block that is no record, is
    ``undefined``.
    """
    if not isinstance(block, dict):
        return "[undefined content]"
    kind = block.get("type")
    if type(kind) is str and kind == "text":
        text = block.get("text")
        return "" if text is None else js_string(text)
    return f"[{js_property(block, 'type')} content]"
