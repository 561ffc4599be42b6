"""``web_search`` labels and metadata, ``web_fetch`` caps and metadata (renderers.md §14-15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from toolcanon.renderers import FAMILIES, output_for, render_native
from toolcanon.renderers._hostname import InvalidUrl, url_hostname
from toolcanon.renderers._html_markdown import exceeds_conversion_depth, html_to_markdown

HOSTNAMES: Final = json.loads((Path(__file__).parent / "data" / "url-hostnames.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("url", "hostname"),
    [
        ("https://B.Test:8080/y", "b.test"),
        ("https://münchen.example/", "xn--mnchen-3ya.example"),
        ("mailto:a@b", ""),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("https://ｅｘａｍｐｌｅ。com/", "example.com"),
        ("https://\u00adsoft.com/", "soft.com"),
        ("https://faß.de/", "xn--fa-hia.de"),
        ("foo://Höst/", "H%C3%B6st"),
        ("file://localhost/x", ""),
    ],
)
def test_hostname(url: str, hostname: str) -> None:
    """§15: WHATWG ``new URL(url).hostname``: IPv4/IPv6 forms, UTS #46 mapping, opaque hosts."""
    assert url_hostname(url) == hostname


def test_hostname_agrees_with_node() -> None:
    """§15: every recorded URL (3,275, recorded from Node 20) gets Node's hostname, or is refused where Node throws."""
    disagreements = []
    for url, expected in HOSTNAMES["cases"]:
        try:
            actual: str | None = url_hostname(url)
        except InvalidUrl:
            actual = None
        if actual != expected:
            disagreements.append((url, expected, actual))
    assert disagreements == []


@pytest.mark.parametrize(
    "url", ["not a url", "//a.test/x", "http://", "https://a b.test/", "https://a.test:99999/", "https://xn--a.com/"]
)
def test_hostname_rejects(url: str) -> None:
    """§15: inputs where ``new URL`` throws; the label falls back to the raw URL."""
    with pytest.raises(InvalidUrl):
        url_hostname(url)


@pytest.mark.parametrize(("url", "label"), [("mailto:a@b", ""), ("https://a.test:99999/", "https://a.test:99999/")])
def test_label_is_the_hostname_even_when_empty(url: str, label: str) -> None:
    """§15: without a title the label is the hostname — empty for a URL without a host — or the unparseable URL."""
    text = render_native("web_search", {"sources": [{"url": url}], "truncated": False})[0]["text"]
    assert f"- [{label}]({url})" in text


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


HTML_MARKDOWN: Final = json.loads((Path(__file__).parent / "data" / "html-markdown.json").read_text(encoding="utf-8"))


def test_html_bodies_convert_as_the_original_does() -> None:
    """§14: every recorded HTML body (825, recorded from the original's web_fetch) converts to the same markdown."""
    disagreements = [
        (group, html, expected, html_to_markdown(html))
        for group, html, expected in HTML_MARKDOWN["cases"]
        if html_to_markdown(html) != expected
    ]
    assert disagreements == []


@pytest.mark.parametrize(
    ("html", "exceeds"),
    [
        ("<div>" * 512 + "x", False),
        ("<div>" * 513 + "x", True),
        ("<div>x</div>" * 600, False),
        ("<br>" * 600 + "<img src=a>" * 600, False),
        ("<span />" * 600, False),
        ("<!--" + "<div>" * 600 + "-->x", True),
        ("<script>" + "</scriptx>" + "<div>" * 600 + "</script>x", False),
        ("<div title='a>b'>" * 513, True),
        ("<div><span>" * 300 + "</div>" * 300, True),
        ("<DIV>" * 513, True),
        ("<1div>" * 600 + "<div>x", False),
        ("<div>" * 10 + "<div title='x", False),
    ],
)
def test_depth_preflight(html: str, exceeds: bool) -> None:
    """§14: the tool's lexical nesting scan (answers checked against the original: above 512 the source is shown)."""
    assert exceeds_conversion_depth(html) is exceeds
    if exceeds:
        assert html_to_markdown(html) == html
