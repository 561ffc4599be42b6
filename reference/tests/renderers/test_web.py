"""``web_search`` labels and metadata, ``web_fetch`` caps and metadata (renderers.md §14-15)."""

from __future__ import annotations

import pytest

from toolcontract.renderers import FAMILIES, output_for
from toolcontract.renderers._hostname import InvalidUrl, url_hostname


@pytest.mark.parametrize(
    ("url", "hostname"),
    [
        ("https://B.Test:8080/y", "b.test"),
        ("https://münchen.example/", "xn--mnchen-3ya.example"),
        ("mailto:a@b", ""),
        ("http://[::1]:80/", "[::1]"),
        ("https://user:pw@h.test/", "h.test"),
        ("https://ex%41mple.com/", "example.com"),
        ("file:///x", ""),
    ],
)
def test_hostname(url: str, hostname: str) -> None:
    """§15: WHATWG ``new URL(url).hostname`` (values checked against Node 20)."""
    assert url_hostname(url) == hostname


@pytest.mark.parametrize("url", ["not a url", "//a.test/x", "http://", "https://a b.test/"])
def test_hostname_rejects(url: str) -> None:
    """§15: inputs where ``new URL`` throws; the label falls back to the raw URL."""
    with pytest.raises(InvalidUrl):
        url_hostname(url)


def test_search_meta() -> None:
    """§15: ``{sources, truncated, answer?}``; ``answer`` present whenever ``content`` is, even empty."""
    projector = FAMILIES["web_search"].presentation_meta
    assert projector is not None
    value = {"content": "", "sources": [{"url": "u", "title": "t"}], "truncated": False}
    assert projector({}, value) == {"sources": [{"url": "u", "title": "t"}], "truncated": False, "answer": ""}
    assert "answer" not in projector({}, {"sources": [], "truncated": True})


def test_fetch_meta_uses_effective_truncation() -> None:
    """§14 [T]: ``truncated`` is the effective flag (value flag, source cut or prefix over the cap)."""
    projector = output_for("web_fetch", max_chars=40).presentation_meta
    assert projector is not None
    value = {
        "url": "https://a.test",
        "statusCode": 200,
        "body": {"kind": "text", "content": "x" * 10},
        "truncated": False,
    }
    assert projector({}, value) == {"url": "https://a.test", "statusCode": 200, "truncated": True}
    assert FAMILIES["web_fetch"].presentation_meta is not None
