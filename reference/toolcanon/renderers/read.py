"""``read`` and ``read_image``: a window of numbered file lines, and an image reference (renderers.md §1-2)."""

from __future__ import annotations

import math
from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, enum, integer, obj, optional, required, string
from toolcanon.renderers._ecma import js_string, js_trim
from toolcanon.renderers._options import positive_integer

__all__ = [
    "DEFAULT_READ_LIMIT",
    "READ_IMAGE_SCHEMA",
    "READ_SCHEMA",
    "language_for_path",
    "read_image_output",
    "read_output",
    "read_presentation_meta",
    "render_read",
    "render_read_image",
]

DEFAULT_READ_LIMIT: Final = 2000

READ_SCHEMA: Final[Node] = obj(
    {
        "path": required(string()),
        "offset": required(integer()),
        "lines": required(array(obj({"number": required(integer()), "text": required(string())}))),
        "totalLines": required(integer()),
    }
)

READ_IMAGE_SCHEMA: Final[Node] = obj(
    {
        "path": required(string()),
        "image": required(
            obj(
                {
                    "attachmentId": required(string()),
                    "mediaType": required(enum("image/png", "image/jpeg", "image/webp", "image/gif")),
                    "bytes": required(integer()),
                    "width": required(integer()),
                    "height": required(integer()),
                    "name": optional(string()),
                }
            )
        ),
    }
)

# The extension → language map of the read card, as the original's. Only own keys count: "foo.constructor" has none.
_LANGUAGES: Final[dict[str, str]] = {
    "ts": "ts",
    "tsx": "tsx",
    "mts": "ts",
    "cts": "ts",
    "js": "js",
    "jsx": "jsx",
    "mjs": "js",
    "cjs": "js",
    "json": "json",
    "jsonc": "json",
    "py": "py",
    "rb": "rb",
    "go": "go",
    "rs": "rs",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "cxx": "cpp",
    "cs": "cs",
    "kt": "kotlin",
    "swift": "swift",
    "php": "php",
    "sh": "sh",
    "bash": "sh",
    "zsh": "sh",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "md": "md",
    "markdown": "md",
    "mdx": "mdx",
    "html": "html",
    "htm": "html",
    "css": "css",
    "scss": "scss",
    "less": "less",
    "sql": "sql",
    "xml": "xml",
    "lua": "lua",
}


def _is_positive_integer(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value == int(value) and value >= 1


def _checked_limit(args: Any, read_limit: int) -> int:
    """Re-parse the arguments as the original's renderer does: it refuses what ``execute`` would refuse.

    The messages are the original's. A missing ``file_path`` is accepted (the registry never renders without
    one: the tool's parameters require it).
    """
    if not isinstance(args, dict):
        return read_limit
    if "file_path" in args:
        path = args["file_path"]
        if not isinstance(path, str) or not js_trim(path):
            raise ValueError("file_path must be a non-empty string")
    for name in ("offset", "limit"):
        if name in args and args[name] is not None and not _is_positive_integer(args[name]):
            raise ValueError(f"{name} must be a positive integer")
    limit = args.get("limit")
    if limit is None:
        return read_limit
    if limit > read_limit:
        raise ValueError(f"limit must be less than or equal to {js_string(read_limit)}")
    return int(limit)


def _footer(offset: Any, end_line: int | float, total_lines: Any, byte_capped: bool) -> str:
    start, end, resume = js_string(offset), js_string(end_line), js_string(end_line + 1)
    if byte_capped:
        return f"(Output capped. Showing lines {start}-{end}. Use offset={resume} to continue.)"
    if end_line < total_lines:
        total = js_string(total_lines)
        return f"(Showing lines {start}-{end} of {total}. Use offset={resume} to continue.)"
    return f"(End of file - total {js_string(total_lines)} lines)"


def render_read(args: Any, value: Any, *, read_limit: int = DEFAULT_READ_LIMIT) -> TextContent:
    """``<path>…</path><type>file</type><content>`` with ``N: text`` lines and the window footer."""
    limit = _checked_limit(args, read_limit)
    lines = value["lines"]
    offset = value["offset"]
    total_lines = value["totalLines"]
    end_line = lines[-1]["number"] if lines else max(0, offset - 1)
    byte_capped = len(lines) < limit and end_line < total_lines
    footer = _footer(offset, end_line, total_lines, byte_capped)
    if lines:
        numbered = "\n".join(f"{js_string(line['number'])}: {line['text']}" for line in lines)
        body = f"{numbered}\n\n{footer}"
    else:
        body = footer
    return text_content(f"<path>{value['path']}</path>\n<type>file</type>\n<content>\n{body}\n</content>")


def language_for_path(path: str) -> str | None:
    """The card's language for ``path``: from its lowercased extension; ``None`` for dotfiles and unknowns."""
    name = path[max(path.rfind("/"), path.rfind("\\")) + 1 :]
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return _LANGUAGES.get(name[dot + 1 :].lower())


def read_presentation_meta(args: Any, value: Any) -> Any:
    """``{path, offset, lines, totalLines, lang?}`` for the read card."""
    meta: dict[str, Any] = {
        "path": value["path"],
        "offset": value["offset"],
        "lines": [{"number": line["number"], "text": line["text"]} for line in value["lines"]],
        "totalLines": value["totalLines"],
    }
    lang = language_for_path(value["path"])
    if lang is not None:
        meta["lang"] = lang
    return meta


def read_output(*, read_limit: int = DEFAULT_READ_LIMIT) -> Output:
    """The ``read`` output declaration (``read_limit`` is the configured default window)."""

    read_limit = positive_integer("read_limit", read_limit)

    def render(args: Any, value: Any) -> TextContent:
        return render_read(args, value, read_limit=read_limit)

    return Output(schema=READ_SCHEMA, render=render, presentation_meta=read_presentation_meta)


def render_read_image(args: Any, value: Any) -> list[dict[str, Any]]:
    """A text block describing the image, then the image block carrying only the attachment reference."""
    image = value["image"]
    summary = (
        f"{image['mediaType']} image, {js_string(image['width'])}x{js_string(image['height'])} px, "
        f"{js_string(image['bytes'])} bytes"
    )
    attachment: dict[str, Any] = {
        "attachmentId": image["attachmentId"],
        "mediaType": image["mediaType"],
        "bytes": image["bytes"],
        "width": image["width"],
        "height": image["height"],
    }
    if "name" in image:
        attachment["name"] = image["name"]
    text = f"<path>{value['path']}</path>\n<type>image</type>\n<content>\n{summary}\n</content>"
    return [{"type": "text", "text": text}, {"type": "image", "attachment": attachment}]


def read_image_output() -> Output:
    """The ``read_image`` output declaration."""
    return Output(schema=READ_IMAGE_SCHEMA, render=render_read_image)
