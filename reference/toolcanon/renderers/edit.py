"""``edit``: a confirmation chosen by ``replace_all``, and per-hunk diffs for the card (renderers.md §4)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, obj, required, string
from toolcanon.renderers._hunks import compute_hunk_diffs

__all__ = ["EDIT_SCHEMA", "edit_output", "edit_presentation_meta", "render_edit"]

EDIT_SCHEMA: Final[Node] = obj({"path": required(string()), "before": required(string()), "after": required(string())})


def render_edit(args: Any, value: Any) -> TextContent:
    """The sentence depends on the arguments (``replace_all``), not on the value's texts."""
    path = value["path"]
    if isinstance(args, dict) and args.get("replace_all") is True:
        return text_content(f"The file {path} has been updated. All occurrences were successfully replaced.")
    return text_content(f"The file {path} has been updated successfully.")


def edit_presentation_meta(args: Any, value: Any) -> Any:
    """``{diffs}``: the hunks between ``before`` and ``after`` under ``args.file_path`` (always computed)."""
    return {"diffs": compute_hunk_diffs(args["file_path"], value["before"], value["after"])}


def edit_output() -> Output:
    """The ``edit`` output declaration."""
    return Output(schema=EDIT_SCHEMA, render=render_edit, presentation_meta=edit_presentation_meta)
