"""``lsp``: URI rendering and the final cap (renderers.md §16)."""

from __future__ import annotations

import pytest

from toolcanon.renderers.lsp import cap_result, render_uri


@pytest.mark.parametrize(
    ("uri", "workspace", "rendered"),
    [
        ("file:///w/a.ts", "file:///w", "a.ts"),
        ("file:///w", "file:///w", "."),
        ("file:///w/", "file:///w", "."),
        ("file:///wx/a.ts", "file:///w", "/wx/a.ts"),
        ("file:///w/a%20b.ts", "file:///w/", "a b.ts"),
        ("jdt://contents/x.class", "file:///w", "jdt://contents/x.class"),
        ("file:///a.ts", "file:///", "a.ts"),
    ],
)
def test_render_uri(uri: str, workspace: str, rendered: str) -> None:
    """§16: relative inside the workspace, absolute outside, non-``file:`` verbatim."""
    assert render_uri(uri, workspace) == rendered


def test_cap_exact_length() -> None:
    """§16 [T]: a capped hover is exactly ``max`` characters long and ends with the notice."""
    capped = cap_result("a" * 100, "hover", 60)
    assert len(capped) == 60 and capped.endswith("hover truncated (limit 60 characters).")
