"""``lsp``: locations as ``path:line:column`` grouped by file, or hover contents; capped (renderers.md §16)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, const, integer, null, obj, one_of, optional, required, string
from toolcanon.renderers._ecma import js_string, utf16_length, utf16_slice
from toolcanon.renderers._file_url import FileUrl, file_url, posix_file_path

__all__ = [
    "DEFAULT_MAX_LOCATIONS",
    "DEFAULT_MAX_RESULT_CHARS",
    "LSP_SCHEMA",
    "cap_result",
    "lsp_output",
    "render_lsp",
    "render_uri",
]

DEFAULT_MAX_LOCATIONS: Final = 100
DEFAULT_MAX_RESULT_CHARS: Final = 16000

_POSITION: Final[Node] = obj({"line": required(integer()), "character": required(integer())})
_RANGE: Final[Node] = obj({"start": required(_POSITION), "end": required(_POSITION)})

LSP_SCHEMA: Final[Node] = one_of(
    obj(
        {
            "kind": required(const("string", "locations")),
            "locations": required(array(obj({"uri": required(string()), "range": required(_RANGE)}))),
            "resolvedWorkspaceUri": required(string()),
        }
    ),
    obj(
        {
            "kind": required(const("string", "hover")),
            "hover": required(one_of(null(), obj({"contents": required(string()), "range": optional(_RANGE)}))),
        }
    ),
)


def _normalized(path: str) -> list[str]:
    """The segments of an absolute path as ``path.posix.resolve`` leaves it (no ``.``, ``..`` or empty ones)."""
    segments: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            segments[-1:] = []
        elif segment not in ("", "."):
            segments.append(segment)
    return segments


def _posix_relative(start: str, target: str) -> str:
    """``path.posix.relative(start, target)`` of two absolute paths."""
    if start == target:
        return ""
    origin, destination = _normalized(start), _normalized(target)
    common = 0
    while common < min(len(origin), len(destination)) and origin[common] == destination[common]:
        common += 1
    return "/".join([".."] * (len(origin) - common) + destination[common:])


def _path_of(url: FileUrl) -> str | None:
    path = posix_file_path(url)
    return None if path is None or "\0" in path else path


def render_uri(uri: str, workspace_uri: str) -> str:
    """A ``file:`` URI as a workspace-relative path (``.`` for the root) or an absolute one; others verbatim.

    As the original's ``renderUri``: both URIs parsed as ``new URL`` parses them, decoded by Node's
    ``fileURLToPath``, compared with ``path.posix.relative``; a URI either step refuses stays verbatim. A workspace
    with a host or a drive letter puts the original in its Windows world (win32 paths, UNC hosts, drive letters
    compared without case), which is not ported: the POSIX rules apply there too.
    """
    if not uri.startswith("file:"):
        return uri
    target, workspace = file_url(uri), file_url(workspace_uri)
    if target is None or workspace is None:
        return uri
    workspace_path, target_path = _path_of(workspace), _path_of(target)
    if workspace_path is None or target_path is None:
        return uri
    relative = _posix_relative(workspace_path, target_path)
    if relative == "":
        return "."
    if relative == ".." or relative.startswith("../"):
        return target_path
    return relative


def cap_result(text: str, label: str, max_chars: int) -> str:
    """Keep ``text`` within ``max_chars`` UTF-16 units, ending with a ``… <label> truncated`` notice."""
    if utf16_length(text) <= max_chars:
        return text
    notice = f"\n… {label} truncated (limit {max_chars} characters)."
    if utf16_length(notice) >= max_chars:
        return utf16_slice(notice, 0, max_chars)
    return utf16_slice(text, 0, max_chars - utf16_length(notice)) + notice


def _render_locations(value: Any, max_locations: int) -> str:
    locations = value["locations"]
    if not locations:
        return "No results."
    groups: dict[str, list[str]] = {}
    for location in locations[:max_locations]:
        path = render_uri(location["uri"], value["resolvedWorkspaceUri"])
        start = location["range"]["start"]
        groups.setdefault(path, []).append(f"{path}:{js_string(start['line'] + 1)}:{js_string(start['character'] + 1)}")
    lines = [line for group in groups.values() for line in group]
    omitted = len(locations) - max_locations
    if omitted > 0:
        noun = "location" if omitted == 1 else "locations"
        lines.append(f"… {omitted} more {noun} omitted (limit {max_locations}).")
    return "\n".join(lines)


def render_lsp(
    args: Any,
    value: Any,
    *,
    max_locations: int = DEFAULT_MAX_LOCATIONS,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> TextContent:
    """Locations (``No results.`` when empty) or hover contents (``No hover information.`` for null)."""
    if value["kind"] == "locations":
        return text_content(cap_result(_render_locations(value, max_locations), "locations", max_result_chars))
    hover = value["hover"]
    text = "No hover information." if hover is None else hover["contents"]
    return text_content(cap_result(text, "hover", max_result_chars))


def lsp_output(
    *, max_locations: int = DEFAULT_MAX_LOCATIONS, max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
) -> Output:
    """The ``lsp`` output declaration."""

    def render(args: Any, value: Any) -> TextContent:
        return render_lsp(args, value, max_locations=max_locations, max_result_chars=max_result_chars)

    return Output(schema=LSP_SCHEMA, render=render)
