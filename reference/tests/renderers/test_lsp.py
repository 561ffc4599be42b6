"""``lsp``: URI rendering and the final cap (renderers.md §16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from toolcanon.renderers._file_url import FileUrl, decode_uri_component, file_url, posix_file_path
from toolcanon.renderers.lsp import cap_result, render_uri

RECORDED: Final = json.loads((Path(__file__).parent / "data" / "lsp-uris.json").read_text(encoding="utf-8"))


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
        ("FILE:///w/a.ts", "file:///w", "FILE:///w/a.ts"),
        ("file:///w/./x/../a.ts", "file:///w", "a.ts"),
        ("file:///w/../x.ts", "file:///w", "/x.ts"),
        ("file:w/a.ts", "file:///w", "a.ts"),
        ("file:\\\\\\w\\a.ts", "file:///w", "a.ts"),
        ("file:///w//a.ts", "file:///w", "a.ts"),
        ("file:///x//a.ts", "file:///w", "/x//a.ts"),
        ("file:///w/a.ts?q#f", "file:///w", "a.ts"),
        ("file:///w/a%2Fb.ts", "file:///w", "file:///w/a%2Fb.ts"),
        ("file:///w/%zz.ts", "file:///w", "file:///w/%zz.ts"),
        ("file:///w/a%00.ts", "file:///w", "file:///w/a%00.ts"),
        ("file://host/w/a.ts", "file:///w", "file://host/w/a.ts"),
        ("file:///w/a.ts", "https://x/w", "file:///w/a.ts"),
    ],
)
def test_render_uri(uri: str, workspace: str, rendered: str) -> None:
    """§16: relative inside the workspace, absolute outside, non-``file:`` verbatim; both URIs read as ``new URL``
    and ``fileURLToPath`` read them (dot segments, ``\\``, no slashes), verbatim where either refuses."""
    assert render_uri(uri, workspace) == rendered


def test_render_uri_agrees_with_the_original() -> None:
    """§16: every recorded location path (583, from the original's renderer on Node 22) comes out the same."""
    disagreements = [
        (uri, workspace, expected, render_uri(uri, workspace))
        for uri, workspace, expected in RECORDED["cases"]
        if render_uri(uri, workspace) != expected
    ]
    assert disagreements == []


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        ("file:///a^b{c}d`e|f?g", FileUrl("", "/a^b%7Bc%7Dd%60e|f")),
        ('file:///a b"<>\u00e9\ud800', FileUrl("", "/a%20b%22%3C%3E%C3%A9%EF%BF%BD")),
        ("file:///a\tb\nc", FileUrl("", "/abc")),
        ("file://LOCALHOST/x", FileUrl("", "/x")),
        ("file://c|/x/../..", FileUrl("", "/c:/")),
        ("file:///C|/..", FileUrl("", "/C:/")),
        ("file:///a/%2e%2E/b", FileUrl("", "/b")),
        ("file:", FileUrl("", "/")),
        ("file://Host", FileUrl("host", "/")),
        ("https://a.test/", None),
        ("file://a b/", None),
    ],
)
def test_file_url(url: str, parsed: FileUrl | None) -> None:
    """``new URL(url)``'s hostname and pathname, as Node 22 gives them; ``None`` where it throws or is not ``file:``."""
    assert file_url(url) == parsed


@pytest.mark.parametrize(
    ("text", "decoded"),
    [("a%20b", "a b"), ("%C3%A9%2f", "é/"), ("%25", "%"), ("%zz", None), ("%E9", None), ("%ED%A0%80", None)],
)
def test_decode_uri_component(text: str, decoded: str | None) -> None:
    """``decodeURIComponent``: every escape decoded; a bad escape or bytes that are not UTF-8 throw."""
    if decoded is None:
        with pytest.raises(ValueError):
            decode_uri_component(text)
    else:
        assert decode_uri_component(text) == decoded


def test_posix_file_path_refuses_a_host_and_an_encoded_slash() -> None:
    """Node's ``getPathFromURLPosix``: a host and ``%2F`` / ``%2f`` throw, ``%5C`` decodes to a backslash."""
    assert posix_file_path(FileUrl("host", "/a")) is None
    assert posix_file_path(FileUrl("", "/a%2fb")) is None
    assert posix_file_path(FileUrl("", "/a%5Cb")) == "/a\\b"


def test_cap_exact_length() -> None:
    """§16 [T]: a capped hover is exactly ``max`` characters long and ends with the notice."""
    capped = cap_result("a" * 100, "hover", 60)
    assert len(capped) == 60 and capped.endswith("hover truncated (limit 60 characters).")
