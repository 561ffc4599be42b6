"""``web_search``: the provider's answer, a markdown source list and a citation reminder (renderers.md §15)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, boolean, obj, optional, required, string
from toolcanon.renderers._hostname import InvalidUrl, url_hostname

__all__ = [
    "CITE_REMINDER",
    "WEB_SEARCH_SCHEMA",
    "render_web_search",
    "source_label",
    "web_search_output",
    "web_search_presentation_meta",
]

CITE_REMINDER: Final = "Cite the relevant URLs above as markdown links in your answer."

WEB_SEARCH_SCHEMA: Final[Node] = obj(
    {
        "content": optional(string()),
        "sources": required(
            array(
                obj(
                    {
                        "url": required(string()),
                        "title": optional(string()),
                        "snippet": optional(string()),
                        "publishedAt": optional(string()),
                    }
                )
            )
        ),
        "truncated": required(boolean()),
    }
)


def source_label(source: Any) -> str:
    """The link text: the title when non-empty, else the URL's hostname (empty for ``mailto:`` and the like).

    A URL that ``new URL`` refuses is its own label.
    """
    title = source.get("title")
    if title:
        return str(title)
    url: str = source["url"]
    try:
        return url_hostname(url)
    except InvalidUrl:
        return url


def _source_line(source: Any) -> str:
    details: list[str] = []
    if source.get("snippet"):
        details.append(source["snippet"])
    if source.get("publishedAt"):
        details.append(f"({source['publishedAt']})")
    suffix = " — " + " ".join(details) if details else ""
    return f"- [{source_label(source)}]({source['url']}){suffix}"


def render_web_search(args: Any, value: Any) -> TextContent:
    """Answer, ``Sources:`` list (or ``No results found.``), truncation note, citation reminder."""
    parts: list[str] = []
    content = value.get("content")
    if content:
        parts.append(content)
    sources = value["sources"]
    if sources:
        parts.append("Sources:\n" + "\n".join(_source_line(source) for source in sources))
    elif not content:
        parts.append("No results found.")
    if value["truncated"]:
        parts.append(f"(Showing the first {len(sources)} sources. Refine the query for more.)")
    parts.append(CITE_REMINDER)
    return text_content("\n\n".join(parts))


def web_search_presentation_meta(args: Any, value: Any) -> Any:
    """``{sources, truncated, answer?}`` (``answer`` whenever ``content`` is present, even empty)."""
    sources = []
    for source in value["sources"]:
        projected = {"url": source["url"]}
        for key in ("title", "snippet", "publishedAt"):
            if key in source:
                projected[key] = source[key]
        sources.append(projected)
    meta: dict[str, Any] = {"sources": sources, "truncated": value["truncated"]}
    if "content" in value:
        meta["answer"] = value["content"]
    return meta


def web_search_output() -> Output:
    """The ``web_search`` output declaration."""
    return Output(schema=WEB_SEARCH_SCHEMA, render=render_web_search, presentation_meta=web_search_presentation_meta)
