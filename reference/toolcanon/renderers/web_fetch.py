"""``web_fetch``: a fetched page under an HTTP header line, capped in UTF-16 units (renderers.md §14)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, boolean, const, integer, obj, one_of, required, string
from toolcanon.renderers._ecma import js_string, utf16_length, utf16_slice
from toolcanon.renderers._html_markdown import html_to_markdown
from toolcanon.renderers._options import positive_integer

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "TRUNCATION_FOOTER",
    "WEB_FETCH_SCHEMA",
    "render_web_fetch",
    "web_fetch_output",
    "web_fetch_presentation_meta",
]

DEFAULT_MAX_OUTPUT_CHARS: Final = 200_000
TRUNCATION_FOOTER: Final = "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"
_FOOTER_LENGTH: Final = utf16_length(TRUNCATION_FOOTER)

WEB_FETCH_SCHEMA: Final[Node] = obj(
    {
        "url": required(string()),
        "statusCode": required(integer()),
        "body": required(
            one_of(
                obj({"kind": required(const("string", "html")), "content": required(string())}),
                obj({"kind": required(const("string", "text")), "content": required(string())}),
            )
        ),
        "truncated": required(boolean()),
    }
)


def _prefix_and_flag(value: Any, max_chars: int) -> tuple[str, bool]:
    header = f"Fetched {value['url']} (HTTP {js_string(value['statusCode'])})\n\n"
    content: str = value["body"]["content"]
    source = utf16_slice(content, 0, max_chars)
    source_truncated = utf16_length(source) < utf16_length(content)
    rendered = html_to_markdown(source) if value["body"]["kind"] == "html" else source
    prefix = header + rendered
    truncated = bool(value["truncated"]) or source_truncated or utf16_length(prefix) > max_chars
    return prefix, truncated


def render_web_fetch(args: Any, value: Any, *, max_chars: int = DEFAULT_MAX_OUTPUT_CHARS) -> TextContent:
    """Header, body (text verbatim, HTML as markdown), truncation footer; never longer than ``max_chars``."""
    prefix, truncated = _prefix_and_flag(value, max_chars)
    full = prefix + TRUNCATION_FOOTER if truncated else prefix
    if utf16_length(full) <= max_chars:
        return text_content(full)
    if max_chars < _FOOTER_LENGTH:
        return text_content(utf16_slice(full, 0, max_chars))
    return text_content(utf16_slice(prefix, 0, max_chars - _FOOTER_LENGTH) + TRUNCATION_FOOTER)


def web_fetch_presentation_meta(args: Any, value: Any, *, max_chars: int = DEFAULT_MAX_OUTPUT_CHARS) -> Any:
    """``{url, statusCode, truncated}`` with the effective truncation flag."""
    return {
        "url": value["url"],
        "statusCode": value["statusCode"],
        "truncated": _prefix_and_flag(value, max_chars)[1],
    }


def web_fetch_output(*, max_chars: int = DEFAULT_MAX_OUTPUT_CHARS) -> Output:
    """The ``web_fetch`` output declaration (``max_chars`` in UTF-16 units)."""

    max_chars = positive_integer("max_chars", max_chars)

    def render(args: Any, value: Any) -> TextContent:
        return render_web_fetch(args, value, max_chars=max_chars)

    def meta(args: Any, value: Any) -> Any:
        return web_fetch_presentation_meta(args, value, max_chars=max_chars)

    return Output(schema=WEB_FETCH_SCHEMA, render=render, presentation_meta=meta)
