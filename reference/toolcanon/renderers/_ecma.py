"""ECMAScript string, number and retention semantics that the first-party renderers reproduce.

Python strings count code points; the contract's renderers count UTF-16 code units (``String.length``), cut
strings in code units (possibly leaving a lone surrogate), measure bytes through ``TextEncoder`` (a lone
surrogate is U+FFFD, three bytes) and print numbers with ``Number::toString``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from toolcanon.jsonvalue import es_key_order, format_number

__all__ = [
    "RetainedItems",
    "RetainedText",
    "es_keys",
    "js_property",
    "js_string",
    "js_trim",
    "retain_head_items",
    "retain_text_head",
    "retain_text_tail",
    "utf8",
    "utf8_length",
    "utf16_length",
    "utf16_slice",
    "well_formed",
]

_T = TypeVar("_T")

# A surrogate pair spelled as two code points, or a lone surrogate: the only places where Python's view
# of a string differs from the UTF-16 view.
_SURROGATE: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_NEEDS_UNITS: Final = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
_UNDEFINED: Final = "undefined"


def _has_wide(text: str) -> bool:
    return not text.isascii() and _NEEDS_UNITS.search(text) is not None


def utf16_length(text: str) -> int:
    """``text.length`` in ECMAScript: the number of UTF-16 code units."""
    if not _has_wide(text):
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 code units (non-negative bounds); may leave a lone surrogate."""
    if not _has_wide(text):
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    stop = None if end is None else 2 * end
    return units[2 * start : stop].decode("utf-16-le", "surrogatepass")


def _replace_surrogate(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:
        high, low = ord(found[0]), ord(found[1])
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return "\ufffd"


def well_formed(text: str) -> str:
    """``text.toWellFormed()``: each lone surrogate becomes U+FFFD (what ``TextEncoder`` encodes)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_replace_surrogate, text)


def utf8(text: str) -> bytes:
    """``new TextEncoder().encode(text)``: UTF-8 with each lone surrogate encoded as U+FFFD."""
    return well_formed(text).encode("utf-8")


def utf8_length(text: str) -> int:
    """The number of bytes ``TextEncoder`` produces for ``text``."""
    if text.isascii():
        return len(text)
    return len(utf8(text))


def js_string(value: Any) -> str:
    """``String(value)`` of a JSON value, as a template literal prints it.

    ``None`` is ``null``; an array joins its items with commas (a ``null`` item prints nothing); an object is
    ``[object Object]``.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return format_number(value)
    if isinstance(value, dict):
        return "[object Object]"
    return _js_join(value)


def _js_join(array: list[Any]) -> str:
    # Array.prototype.join, iteratively: nested arrays join in place, null items print nothing.
    parts: list[str] = []
    stack: list[tuple[list[Any], int]] = [(array, 0)]
    while stack:
        items, index = stack.pop()
        if index == len(items):
            continue
        stack.append((items, index + 1))
        if index > 0:
            parts.append(",")
        item = items[index]
        if isinstance(item, list):
            stack.append((item, 0))
        elif item is not None:
            parts.append(js_string(item))
    return "".join(parts)


# ECMAScript WhiteSpace and LineTerminator: what String.prototype.trim removes (not Python's str.isspace set).
_JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(_JS_WHITESPACE)


def js_property(record: Any, key: str) -> str:
    """``String(record[key])`` where a missing key prints ``undefined``, as a template literal does."""
    if isinstance(record, dict) and key in record:
        return js_string(record[key])
    return _UNDEFINED


def es_keys(record: dict[str, Any]) -> list[str]:
    """``Object.keys(record)``: array-index keys ascending, then the rest in insertion order."""
    return es_key_order(list(record))


# --- retention (the output-retention primitives) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetainedItems(Generic[_T]):
    """What a head ``ItemRetainer`` kept: the first ``kept`` of ``seen`` items."""

    items: tuple[_T, ...]
    seen: int

    @property
    def kept(self) -> int:
        """How many items were kept."""
        return len(self.items)

    @property
    def omitted(self) -> int:
        """How many items were dropped."""
        return self.seen - len(self.items)

    @property
    def truncated(self) -> bool:
        """True when at least one item was dropped."""
        return self.omitted > 0


def retain_head_items(items: Sequence[_T], max_items: int) -> RetainedItems[_T]:
    """``ItemRetainer({kind: "head", maxItems})`` fed with ``items``."""
    return RetainedItems(tuple(items[: max(max_items, 0)]), len(items))


@dataclass(frozen=True, slots=True)
class RetainedText:
    """What a ``TextRetainer`` returned: the kept text and whether bytes were dropped."""

    text: str
    truncated: bool


def retain_text_head(text: str, max_bytes: int) -> RetainedText:
    """A ``head`` ``TextRetainer``: the first ``max_bytes`` UTF-8 bytes, cut back to a whole character.

    The text always comes back well-formed (lone surrogates as U+FFFD), even when nothing was cut.
    """
    encoded = utf8(text)
    if len(encoded) <= max_bytes:
        return RetainedText(encoded.decode("utf-8"), False)
    kept = encoded[: max(max_bytes, 0)]
    return RetainedText(kept.decode("utf-8", "ignore"), True)


def retain_text_tail(text: str, max_bytes: int) -> RetainedText:
    """A ``tail`` ``TextRetainer``: the last ``max_bytes`` UTF-8 bytes, without leading continuation bytes."""
    encoded = utf8(text)
    if len(encoded) <= max_bytes:
        return RetainedText(encoded.decode("utf-8"), False)
    kept = encoded[len(encoded) - max(max_bytes, 0) :] if max_bytes > 0 else b""
    start = 0
    while start < len(kept) and 0x80 <= kept[start] <= 0xBF:
        start += 1
    return RetainedText(kept[start:].decode("utf-8"), True)
