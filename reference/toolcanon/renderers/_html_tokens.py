"""The HTML tokenizer of the WHATWG parsing algorithm, as far as HTML content needs it.

Tokens are tuples: ``("text", data)``, ``("start", name, attributes, self_closing)``, ``("end", name)``,
``("comment", data)`` and ``("doctype",)``. The tree builder switches the tokenizer into RCDATA, RAWTEXT,
script data or PLAINTEXT after the start tags that need it (:meth:`Tokenizer.switch_to`). Character references
follow the standard's table and its attribute rule; the input stream is normalized first (CR LF and CR to LF).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.entities import html5
from typing import Final

__all__ = ["Token", "Tokenizer", "decode_references"]

Token = tuple[object, ...]

_TAG_NAME_END: Final = re.compile(r"[\t\n\f />]")
_ATTRIBUTE_NAME_END: Final = re.compile(r"[\t\n\f />=]")
_UNQUOTED_END: Final = re.compile(r"[\t\n\f >]")
_WHITESPACE: Final = "\t\n\f "
_REFERENCE: Final = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
_LONGEST_NAME: Final = max(len(name) for name in html5)
# Numeric references the standard maps from windows-1252, and the code points it refuses.
_WINDOWS_1252: Final = {
    0x80: "\u20ac", 0x82: "\u201a", 0x83: "\u0192", 0x84: "\u201e", 0x85: "\u2026", 0x86: "\u2020", 0x87: "\u2021",
    0x88: "\u02c6", 0x89: "\u2030", 0x8A: "\u0160", 0x8B: "\u2039", 0x8C: "\u0152", 0x8E: "\u017d", 0x91: "\u2018",
    0x92: "\u2019", 0x93: "\u201c", 0x94: "\u201d", 0x95: "\u2022", 0x96: "\u2013", 0x97: "\u2014", 0x98: "\u02dc",
    0x99: "\u2122", 0x9A: "\u0161", 0x9B: "\u203a", 0x9C: "\u0153", 0x9E: "\u017e", 0x9F: "\u0178",
}  # fmt: skip


def _numeric(reference: str) -> str:
    digits = reference[1:].rstrip(";")
    code = int(digits[1:], 16) if digits[:1] in ("x", "X") else int(digits)
    if code in _WINDOWS_1252:
        return _WINDOWS_1252[code]
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def decode_references(text: str, *, in_attribute: bool = False) -> str:
    """``text`` with its character references decoded (in an attribute value, a legacy reference without its
    semicolon stays as written when a letter, digit or ``=`` follows)."""
    if "&" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        reference = match.group(1)
        if reference.startswith("#"):
            return _numeric(reference)
        if reference in html5:
            return html5[reference]
        for length in range(min(len(reference), _LONGEST_NAME) - 1, 0, -1):
            name = reference[:length]
            if name in html5:
                following = reference[length]
                if in_attribute and ((following.isascii() and following.isalnum()) or following == "="):
                    return "&" + reference
                return html5[name] + reference[length:]
        return "&" + reference

    return _REFERENCE.sub(replace, text)


def _tag_name(name: str) -> str:
    return name.translate(_LOWER).replace("\x00", "\ufffd")


_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class Tokenizer:
    """Tokens of a whole document, one at a time; the consumer may switch the content model between tokens."""

    def __init__(self, source: str) -> None:
        self.text = source.replace("\r\n", "\n").replace("\r", "\n")
        self._folded: str | None = None
        self.position = 0
        self._mode = "data"
        self._end_tag = ""

    def switch_to(self, mode: str, element: str) -> None:
        """Read what follows as ``rcdata``, ``rawtext``, ``script`` or ``plaintext``, up to ``</element>``."""
        self._mode = mode
        self._end_tag = element

    def __iter__(self) -> Iterator[Token]:
        return self

    def __next__(self) -> Token:
        if self.position >= len(self.text):
            raise StopIteration
        if self._mode != "data":
            return self._raw_text()
        text, position = self.text, self.position
        if text[position] != "<":
            end = text.find("<", position)
            end = len(text) if end < 0 else end
            self.position = end
            return ("text", decode_references(text[position:end]))
        return self._markup()

    def _raw_text(self) -> Token:
        text, start = self.text, self.position
        mode = self._mode
        if mode == "plaintext":
            self.position = len(text)
            return ("text", text[start:].replace("\x00", "\ufffd"))
        end = self._appropriate_end(start)
        self.position = end
        self._mode = "data"
        chunk = text[start:end].replace("\x00", "\ufffd")
        if not chunk:
            return self.__next__()
        return ("text", decode_references(chunk) if mode == "rcdata" else chunk)

    def _appropriate_end(self, start: int) -> int:
        lowered_prefix = "</" + self._end_tag
        text = self.text
        if self._folded is None:
            self._folded = text.translate(_LOWER)  # ASCII case folding keeps every index in place
        position = start
        while True:
            found = self._folded.find(lowered_prefix, position)
            if found < 0:
                return len(text)
            after = found + len(lowered_prefix)
            if after >= len(text) or text[after] in "\t\n\f />":
                return found
            position = found + 1

    def _markup(self) -> Token:
        text, position = self.text, self.position
        following = text[position + 1 : position + 2]
        if following == "!":
            return self._declaration()
        if following == "/":
            return self._end_tag_token()
        if following.isascii() and following.isalpha():
            return self._start_tag()
        if following == "?":
            return self._bogus_comment(position + 1)
        self.position = position + 1
        return ("text", "<")

    def _declaration(self) -> Token:
        text, position = self.text, self.position
        if text.startswith("<!--", position):
            start = position + 4
            for abrupt in (">", "->"):
                if text.startswith(abrupt, start):
                    self.position = start + len(abrupt)
                    return ("comment", "")
            index = start
            while True:
                end = text.find("--", index)
                if end < 0:
                    self.position = len(text)
                    return ("comment", text[start:].replace("\x00", "\ufffd"))
                if text.startswith("-->", end):
                    self.position = end + 3
                    return ("comment", text[start:end].replace("\x00", "\ufffd"))
                if text.startswith("--!>", end):
                    self.position = end + 4
                    return ("comment", text[start:end].replace("\x00", "\ufffd"))
                index = end + 1
        if text[position + 2 : position + 9].lower() == "doctype":
            end = text.find(">", position)
            self.position = len(text) if end < 0 else end + 1
            return ("doctype",)
        return self._bogus_comment(position + 2)

    def _bogus_comment(self, start: int) -> Token:
        end = self.text.find(">", start)
        end = len(self.text) if end < 0 else end
        self.position = end + 1
        return ("comment", self.text[start:end].replace("\x00", "\ufffd"))

    def _end_tag_token(self) -> Token:
        text, position = self.text, self.position
        following = text[position + 2 : position + 3]
        if following == ">":
            self.position = position + 3
            return self.__next__() if self.position < len(text) else ("text", "")
        if not following:
            self.position = len(text)
            return ("text", "</")
        if not (following.isascii() and following.isalpha()):
            return self._bogus_comment(position + 2)
        match = _TAG_NAME_END.search(text, position + 2)
        name_end = len(text) if match is None else match.start()
        name = _tag_name(text[position + 2 : name_end])
        end = self._skip_attributes(name_end)
        if end is None:
            self.position = len(text)
            raise StopIteration
        self.position = end
        return ("end", name)

    def _start_tag(self) -> Token:
        text, position = self.text, self.position
        match = _TAG_NAME_END.search(text, position + 1)
        name_end = len(text) if match is None else match.start()
        name = _tag_name(text[position + 1 : name_end])
        attributes: dict[str, str] = {}
        self_closing = False
        index = name_end
        while True:
            while index < len(text) and text[index] in _WHITESPACE:
                index += 1
            if index >= len(text):
                self.position = len(text)
                raise StopIteration
            char = text[index]
            if char == ">":
                self.position = index + 1
                return ("start", name, attributes, self_closing)
            if char == "/":
                index += 1
                if text[index : index + 1] == ">":
                    self.position = index + 1
                    return ("start", name, attributes, True)
                continue
            index = self._attribute(index, attributes)

    def _attribute(self, index: int, attributes: dict[str, str]) -> int:
        text = self.text
        # A leading "=" belongs to the name; the name ends at white space, "/", ">" or "=".
        match = _ATTRIBUTE_NAME_END.search(text, index + 1)
        name_end = len(text) if match is None else match.start()
        name = _tag_name(text[index:name_end])
        index = name_end
        while index < len(text) and text[index] in _WHITESPACE:
            index += 1
        value = ""
        if text[index : index + 1] == "=":
            index += 1
            while index < len(text) and text[index] in _WHITESPACE:
                index += 1
            quote = text[index : index + 1]
            if quote in ('"', "'"):
                end = text.find(quote, index + 1)
                end = len(text) if end < 0 else end
                value = text[index + 1 : end]
                index = end + 1
            else:
                match = _UNQUOTED_END.search(text, index)
                end = len(text) if match is None else match.start()
                value = text[index:end]
                index = end
            value = decode_references(value, in_attribute=True).replace("\x00", "\ufffd")
        if name not in attributes:
            attributes[name] = value
        return index

    def _skip_attributes(self, index: int) -> int | None:
        """The position after an end tag's ``>`` (its attributes are read and dropped); ``None`` at EOF."""
        scratch: dict[str, str] = {}
        text = self.text
        while True:
            while index < len(text) and text[index] in _WHITESPACE:
                index += 1
            if index >= len(text):
                return None
            if text[index] == ">":
                return index + 1
            if text[index] == "/":
                index += 1
                continue
            index = self._attribute(index, scratch)
            if index > len(text):
                return None
