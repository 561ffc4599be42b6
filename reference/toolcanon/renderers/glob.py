"""``glob``: matched paths, capped, optionally sampled across top-level entries (renderers.md §5)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.definition import Output
from toolcanon.renderers._blocks import TextContent, text_content
from toolcanon.renderers._dsl import Node, array, obj, required, string
from toolcanon.renderers._meta_cap import cap_meta_items
from toolcanon.renderers._options import positive_integer

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "GLOB_SCHEMA",
    "UNSAVED_RECOVERY",
    "glob_output",
    "glob_page",
    "glob_presentation_meta",
    "render_glob",
    "sample_across_top_level",
]

DEFAULT_MAX_RESULTS: Final = 100
UNSAVED_RECOVERY: Final = "The complete result could not be saved; narrow pattern or path to see more."

GLOB_SCHEMA: Final[Node] = obj({"root": required(string()), "paths": required(array(string()))})


def _top_level_key(path: str, root: str) -> str:
    if root == ".":
        relative = path[2:] if path.startswith("./") else path
    else:
        trimmed = root.rstrip("/")
        if not trimmed:
            relative = path.lstrip("/")
        elif path == trimmed:
            relative = ""
        elif path.startswith(trimmed + "/"):
            relative = path[len(trimmed) + 1 :]
        else:
            relative = path
    return relative.lstrip("/").split("/", 1)[0]


def sample_across_top_level(paths: list[str], max_results: int, root: str) -> tuple[list[str], int, int]:
    """Round-robin over top-level groups: ``(page, groups shown, groups total)``, page in group order."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(_top_level_key(path, root), []).append(path)
    taken = dict.fromkeys(groups, 0)
    remaining = max_results
    while remaining > 0:
        progressed = False
        for key, members in groups.items():
            if remaining == 0:
                break
            if taken[key] < len(members):
                taken[key] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            break
    page = [path for key, members in groups.items() for path in members[: taken[key]]]
    shown = sum(1 for count in taken.values() if count)
    return page, shown, len(groups)


def glob_page(paths: list[str], root: str, max_results: int, sample_over_cap: bool) -> tuple[list[str], str]:
    """The paths shown for an over-cap result and the footer's basis phrase (``"."`` or the sampling note)."""
    if not sample_over_cap:
        return paths[:max_results], "."
    page, shown, total = sample_across_top_level(paths, max_results, root)
    if total == len(paths):
        return page, "."
    basis = (
        f", sampled across {shown} of the {total} top-level entries this pattern matched instead of taken in "
        "modification-time order."
    )
    if shown < total:
        basis += " Narrow path to inspect a specific subtree."
    return page, basis


def render_glob(
    args: Any, value: Any, *, max_results: int = DEFAULT_MAX_RESULTS, sample_over_cap: bool = False
) -> TextContent:
    """The paths one per line; over the cap, a page and a ``(Showing n of m paths…)`` footer."""
    paths = list(value["paths"])
    if not paths:
        return text_content("No files found")
    if len(paths) <= max_results:
        return text_content("\n".join(paths))
    page, basis = glob_page(paths, value["root"], max_results, sample_over_cap)
    footer = f"(Showing {len(page)} of {len(paths)} paths{basis} {UNSAVED_RECOVERY})"
    return text_content("\n".join(page) + "\n\n" + footer)


def glob_presentation_meta(
    args: Any, value: Any, *, max_results: int = DEFAULT_MAX_RESULTS, sample_over_cap: bool = False
) -> Any:
    """``{shape: "paths", paths, truncated, total}`` over the page the text shows, byte-capped."""
    paths = list(value["paths"])
    over_cap = len(paths) > max_results
    shown = glob_page(paths, value["root"], max_results, sample_over_cap)[0] if over_cap else paths
    meta = {"shape": "paths", "paths": shown, "truncated": over_cap, "total": len(paths)}
    return cap_meta_items(meta, "paths")


def glob_output(*, max_results: int = DEFAULT_MAX_RESULTS, sample_over_cap: bool = False) -> Output:
    """The ``glob`` output declaration (``sample_over_cap`` is the composition's sampling switch)."""

    max_results = positive_integer("max_results", max_results)

    def render(args: Any, value: Any) -> TextContent:
        return render_glob(args, value, max_results=max_results, sample_over_cap=sample_over_cap)

    def meta(args: Any, value: Any) -> Any:
        return glob_presentation_meta(args, value, max_results=max_results, sample_over_cap=sample_over_cap)

    return Output(schema=GLOB_SCHEMA, render=render, presentation_meta=meta)
