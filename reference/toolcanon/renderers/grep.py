"""``grep``: matches grouped by file, lines byte-capped, matches count-capped (renderers.md §6)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, integer, obj, required, string
from toolcanon.renderers._ecma import js_string, retain_head_items, retain_text_head
from toolcanon.renderers._meta_cap import cap_meta_items
from toolcanon.renderers._options import positive_integer

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MATCHES",
    "GREP_SCHEMA",
    "UNSAVED_RECOVERY",
    "grep_output",
    "grep_presentation_meta",
    "preview_line",
    "render_grep",
]

DEFAULT_MAX_MATCHES: Final = 250
DEFAULT_MAX_LINE_BYTES: Final = 2000
UNSAVED_RECOVERY: Final = "The complete result could not be saved; narrow pattern, path, or include to see more."

GREP_SCHEMA: Final[Node] = obj(
    {
        "matches": required(
            array(obj({"path": required(string()), "lineNumber": required(integer()), "line": required(string())}))
        )
    }
)


def preview_line(line: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> str:
    """The UTF-8 head of ``line`` (lone surrogates become U+FFFD), marked when cut."""
    kept = retain_text_head(line, max_line_bytes)
    return kept.text + " (line truncated)" if kept.truncated else kept.text


def _grouped(matches: Any, max_matches: int, max_line_bytes: int) -> tuple[dict[str, list[Any]], int, bool]:
    retained = retain_head_items(list(matches), max_matches)
    groups: dict[str, list[Any]] = {}
    for match in retained.items:
        groups.setdefault(match["path"], []).append(
            {"lineNumber": match["lineNumber"], "line": preview_line(match["line"], max_line_bytes)}
        )
    return groups, retained.seen, retained.truncated


def render_grep(
    args: Any,
    value: Any,
    *,
    max_matches: int = DEFAULT_MAX_MATCHES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> TextContent:
    """``Found n matches`` then one block per file (first-seen order) of ``Line n: text`` rows."""
    groups, seen, truncated = _grouped(value["matches"], max_matches, max_line_bytes)
    if seen == 0:
        return text_content("No matches found")
    if truncated:
        kept = sum(len(rows) for rows in groups.values())
        header = f"Found {kept} of {seen} matches"
    else:
        header = f"Found {seen} match" if seen == 1 else f"Found {seen} matches"
    body = "\n\n".join(
        path + "\n" + "\n".join(f"Line {js_string(row['lineNumber'])}: {row['line']}" for row in rows)
        for path, rows in groups.items()
    )
    text = f"{header}\n\n{body}"
    if truncated:
        text += f"\n\n({UNSAVED_RECOVERY})"
    return text_content(text)


def grep_presentation_meta(
    args: Any,
    value: Any,
    *,
    max_matches: int = DEFAULT_MAX_MATCHES,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Any:
    """``{shape: "matches", files, truncated, total}`` over the retained, previewed matches; byte-capped."""
    groups, seen, truncated = _grouped(value["matches"], max_matches, max_line_bytes)
    files = [{"path": path, "matches": rows} for path, rows in groups.items()]
    return cap_meta_items({"shape": "matches", "files": files, "truncated": truncated, "total": seen}, "files")


def grep_output(*, max_matches: int = DEFAULT_MAX_MATCHES, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Output:
    """The ``grep`` output declaration."""

    max_matches = positive_integer("max_matches", max_matches)
    max_line_bytes = positive_integer("max_line_bytes", max_line_bytes)

    def render(args: Any, value: Any) -> TextContent:
        return render_grep(args, value, max_matches=max_matches, max_line_bytes=max_line_bytes)

    def meta(args: Any, value: Any) -> Any:
        return grep_presentation_meta(args, value, max_matches=max_matches, max_line_bytes=max_line_bytes)

    return Output(schema=GREP_SCHEMA, render=render, presentation_meta=meta)
