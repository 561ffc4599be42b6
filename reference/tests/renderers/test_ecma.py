"""The ECMAScript semantics the renderers reproduce (renderers.md §0.5-0.6)."""

from __future__ import annotations

from toolcanon.renderers._ecma import (
    es_keys,
    js_string,
    js_trim,
    retain_head_items,
    retain_text_head,
    retain_text_tail,
    utf8,
    utf8_length,
    utf16_length,
    utf16_slice,
    well_formed,
)


def test_utf16_length_and_slice() -> None:
    """§0.5.4: lengths and slices count UTF-16 code units; a cut can leave a lone surrogate."""
    assert utf16_length("a😀") == 3
    assert utf16_slice("a😀b", 0, 2) == "a\ud83d"
    assert utf16_slice("a😀b", 2) == "\ude00b"
    assert utf16_slice("a😀b", 1, 3) == "😀"
    assert utf16_length("\ud83d\ude00") == 2


def test_text_encoder_bytes() -> None:
    """§0.5.5: a lone surrogate encodes as U+FFFD (three bytes); a split pair joins."""
    assert utf8("x\ud800y") == "x\ufffdy".encode()
    assert utf8_length("\udc00") == 3
    assert well_formed("\ud83d\ude00") == "😀"


def test_numbers_and_scalars() -> None:
    """§0.5.3: ``Number::toString`` for interpolated numbers; ``null``/``true``/``false`` as JavaScript prints them."""
    assert [js_string(v) for v in (1.0, 1e21, 1e-7, 0.000001, None, True)] == [
        "1",
        "1e+21",
        "1e-7",
        "0.000001",
        "null",
        "true",
    ]


def test_key_order() -> None:
    """§0.5.1 [D]: array-index keys ascending first, then insertion order."""
    assert es_keys({"b": 1, "2": 2, "a": 3, "1": 4, "-1": 5, "01": 6}) == ["1", "2", "b", "a", "-1", "01"]


def test_text_retainer_head_and_tail() -> None:
    """§0.6: byte-oriented; a cut never leaves a partial character; ``truncated`` iff bytes were dropped."""
    assert retain_text_head("aéaéaéaé", 7).text == "aéaéa"
    assert retain_text_head("a😀", 4) == type(retain_text_head("a", 1))("a", True)
    assert retain_text_tail("界界界", 7).text == "界界"
    assert retain_text_tail("abc", 3).truncated is False
    assert retain_text_head("x\ud800", 10).text == "x\ufffd"


def test_item_retainer() -> None:
    """§0.6: keep the first ``maxItems``; ``seen``, ``kept``, ``omitted`` and ``truncated``."""
    kept = retain_head_items([1, 2, 3], 2)
    assert (kept.items, kept.seen, kept.kept, kept.omitted, kept.truncated) == ((1, 2), 3, 2, 1, True)


def test_js_string_of_containers() -> None:
    """``String(value)``: arrays join with commas (``null`` prints nothing, nesting flattens), objects print
    ``[object Object]``."""
    assert [js_string(v) for v in ([1, "a", None, True], [[1, [2]], [], 3], [], {"a": 1}, {})] == [
        "1,a,,true",
        "1,2,,3",
        "",
        "[object Object]",
        "[object Object]",
    ]


def test_js_trim_is_ecmascript_whitespace() -> None:
    """``trim()`` removes ECMAScript white space and line terminators, BOM included, not U+0085 or U+001F."""
    assert js_trim("\ufeff\u3000\u2028 a \t\u00a0") == "a"
    assert js_trim("\x85a\x1f") == "\x85a\x1f"
