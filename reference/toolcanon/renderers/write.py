"""``write``: a create/update confirmation, and per-hunk diffs for the card (renderers.md §3)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, enum, null, obj, one_of, required, string
from toolcanon.renderers._hunks import compute_hunk_diffs

__all__ = ["WRITE_SCHEMA", "render_write", "write_output", "write_presentation_meta"]

WRITE_SCHEMA: Final[Node] = obj(
    {
        "path": required(string()),
        "operation": required(enum("create", "update")),
        "before": required(one_of(string(), null())),
        "after": required(string()),
    }
)


def render_write(args: Any, value: Any) -> TextContent:
    """``Created file`` or ``Updated file`` inside the file envelope; the content itself is never echoed."""
    verb = "Created" if value["operation"] == "create" else "Updated"
    return text_content(f"<path>{value['path']}</path>\n<type>file</type>\n<content>\n{verb} file\n</content>")


def write_presentation_meta(args: Any, value: Any) -> Any:
    """``{diffs: []}`` for a new file, else the hunks between ``before`` and ``after`` under ``args.file_path``."""
    if value["before"] is None:
        return {"diffs": []}
    return {"diffs": compute_hunk_diffs(args["file_path"], value["before"], value["after"])}


def write_output() -> Output:
    """The ``write`` output declaration."""
    return Output(schema=WRITE_SCHEMA, render=render_write, presentation_meta=write_presentation_meta)
