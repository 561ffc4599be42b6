"""``write`` and ``edit``: confirmations and the per-hunk diffs of their cards (renderers.md §3-4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcanon.renderers import FAMILIES, render_native
from toolcanon.renderers._hunks import compute_hunk_diffs, hunk_lines

from .conftest import REPOSITORY

VECTORS = json.loads((REPOSITORY / "fixtures" / "vectors" / "jsdiff-hunks.json").read_text(encoding="utf-8"))


def _meta(family: str, args: Any, value: Any) -> Any:
    projector = FAMILIES[family].presentation_meta
    assert projector is not None
    return projector(args, value)


def test_write_created_text() -> None:
    """§3 [D]: the file envelope around ``Created file``; contents are never echoed."""
    value = {"path": "/abs/a.txt", "operation": "create", "before": None, "after": "secret"}
    text = render_native("write", value, {"file_path": "/abs/a.txt"})[0]["text"]
    assert text == "<path>/abs/a.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"


def test_write_meta_empty_for_a_new_file() -> None:
    """§3: ``{diffs: []}`` when ``before`` is null."""
    value = {"path": "/a", "operation": "create", "before": None, "after": "x\n"}
    assert _meta("write", {"file_path": "a"}, value) == {"diffs": []}


def test_write_meta_uses_the_argument_path() -> None:
    """§3: the diff's path is ``args.file_path``, not ``value.path``."""
    value = {"path": "/abs/a", "operation": "update", "before": "gone\n", "after": ""}
    assert _meta("write", {"file_path": "rel/a"}, value) == {
        "diffs": [{"path": "rel/a", "oldText": "gone", "newText": ""}]
    }


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("gone\n", "", [{"path": "p", "oldText": "gone", "newText": ""}]),
        ("", "brand new\n", [{"path": "p", "oldText": None, "newText": "brand new"}]),
        ("same\n", "same\n", []),
    ],
)
def test_hunk_diffs_examples(before: str, after: str, expected: list[Any]) -> None:
    """§3 [T] (diff.spec.ts): deletion, creation and identical texts."""
    assert compute_hunk_diffs("p", before, after) == expected


def test_edit_meta_example() -> None:
    """§4 [T]: one hunk with three lines of context on each side."""
    before = "a\nb\nc\nOLD\nd\ne\nf\n"
    value = {"path": "/abs/a.txt", "before": before, "after": before.replace("OLD", "NEW")}
    assert _meta("edit", {"file_path": "a.txt"}, value) == {
        "diffs": [{"path": "a.txt", "oldText": "a\nb\nc\nOLD\nd\ne\nf", "newText": "a\nb\nc\nNEW\nd\ne\nf"}]
    }


def test_edit_text_depends_on_replace_all() -> None:
    """§4 [T]: the sentence follows ``args.replace_all``."""
    value = {"path": "/abs/a.txt", "before": "", "after": ""}
    assert render_native("edit", value, {"file_path": "a"})[0]["text"] == (
        "The file /abs/a.txt has been updated successfully."
    )
    assert render_native("edit", value, {"file_path": "a", "replace_all": True})[0]["text"] == (
        "The file /abs/a.txt has been updated. All occurrences were successfully replaced."
    )


def test_hunks_match_jsdiff_vectors() -> None:
    """§3: the hunks equal jsdiff 9.0.0 ``structuredPatch(…, {context: 3})`` on recorded vectors."""
    assert len(VECTORS["cases"]) >= 100
    for case in VECTORS["cases"]:
        assert hunk_lines(case["before"], case["after"]) == case["hunks"], case


def test_vectors_file_is_documented() -> None:
    """The vectors name their source (they were recorded by running jsdiff)."""
    assert "jsdiff" in VECTORS["source"]
    assert Path(REPOSITORY / "fixtures" / "vectors" / "jsdiff-hunks.json").stat().st_size < 200_000


def test_hunks_differ_from_difflib_where_jsdiff_does() -> None:
    """§3: jsdiff removes the third ``a`` with two lines of context each side (``difflib`` would not)."""
    assert compute_hunk_diffs("p", "a\na\na\nc\nb\n", "a\na\nc\nb\n") == [
        {"path": "p", "oldText": "a\na\na\nc\nb", "newText": "a\na\nc\nb"}
    ]
