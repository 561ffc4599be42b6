"""``read`` and ``read_image`` (renderers.md §1-2)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcanon.errors import ToolOutputError
from toolcanon.renderers import FAMILIES, render_native
from toolcanon.renderers.read import language_for_path

VALUE: dict[str, Any] = {
    "path": "/abs/a.txt",
    "offset": 1,
    "lines": [{"number": 1, "text": "hello"}, {"number": 2, "text": "world"}],
    "totalLines": 2,
}


def test_two_lines_exact_text() -> None:
    """§1 [T]: numbered lines, a blank line, the end-of-file footer, inside the file envelope."""
    assert render_native("read", VALUE)[0]["text"] == (
        "<path>/abs/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n"
        "(End of file - total 2 lines)\n</content>"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"file_path": "  "}, "file_path must be a non-empty string"),
        ({"file_path": "\ufeff\u3000"}, "file_path must be a non-empty string"),
        ({"file_path": ""}, "file_path must be a non-empty string"),
        ({"offset": 0}, "offset must be a positive integer"),
        ({"limit": -1}, "limit must be a positive integer"),
        ({"limit": 1.5}, "limit must be a positive integer"),
        ({"limit": 2001}, "limit must be less than or equal to 2000"),
    ],
)
def test_render_rechecks_its_arguments(args: dict[str, Any], message: str) -> None:
    """§1: a blank path, a non-positive or fractional offset/limit, or a limit above the configured one make
    render throw, with the original's messages."""
    with pytest.raises(ToolOutputError) as caught:
        render_native("read", VALUE, args)
    assert caught.value.code == "INVALID_TOOL_OUTPUT"
    assert caught.value.message == f'tool "read" returned invalid output: output.render failed: {message}'


def test_limit_is_bounded_by_the_configured_read_limit() -> None:
    """§1: ``limit`` may not exceed the configured ``read_limit`` (not a fixed 2000)."""
    with pytest.raises(ToolOutputError) as caught:
        render_native("read", VALUE, {"file_path": "f", "limit": 6}, config={"read_limit": 5})
    assert caught.value.message.endswith("output.render failed: limit must be less than or equal to 5")


def test_a_path_of_other_whitespace_is_not_blank() -> None:
    """§1: blank means JavaScript's ``trim()`` leaves nothing; U+0085 and U+001F are not JavaScript whitespace."""
    assert "End of file" in render_native("read", VALUE, {"file_path": "\x85\x1f"})[0]["text"]


def test_limit_2000_is_accepted() -> None:
    """§1: the largest accepted limit is the configured read limit, 2000."""
    assert "End of file" in render_native("read", VALUE, {"file_path": "/abs/a.txt", "limit": 2000})[0]["text"]


def test_presentation_meta_with_language() -> None:
    """§1 presentationMeta: the value's fields plus ``lang`` from the extension."""
    meta = FAMILIES["read"].presentation_meta
    assert meta is not None
    assert meta({}, {**VALUE, "path": "/src/App.TSX"}) == {
        "path": "/src/App.TSX",
        "offset": 1,
        "lines": VALUE["lines"],
        "totalLines": 2,
        "lang": "tsx",
    }
    assert "lang" not in meta({}, VALUE)


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("a.mts", "ts"),
        ("a.jsonc", "json"),
        ("run.bash", "sh"),
        ("c.yml", "yaml"),
        ("README.markdown", "md"),
        ("index.htm", "html"),
        ("C:\\w\\main.rs", "rs"),
        ("Main.KT", "kotlin"),
        ("x.hpp", "cpp"),
        ("page.mdx", "mdx"),
        ("q.sql", "sql"),
        (".bashrc", None),
        ("dir.d/Makefile", None),
        ("foo.constructor", None),
        ("foo.unknownext", None),
    ],
)
def test_language_for_path(path: str, lang: str | None) -> None:
    """§1: lowercased extension after the last separator and dot; dotfiles and prototype names get none."""
    assert language_for_path(path) == lang


def test_read_image_blocks() -> None:
    """§2: a text block and an image block carrying only the attachment reference; no metadata."""
    image = {"attachmentId": "a", "mediaType": "image/gif", "bytes": 1, "width": 2, "height": 3}
    content = render_native("read_image", {"path": "/p.gif", "image": image})
    assert content[1] == {"type": "image", "attachment": image}
    assert FAMILIES["read_image"].presentation_meta is None
