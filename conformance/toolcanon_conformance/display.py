"""How the kit shows text to a person: lone surrogates as visible escapes, long texts where they part, colour.

The contract allows any string, a lone surrogate (``"\\ud800"``) included, and no UTF-8 output can carry one
as it is. :func:`visible` writes each as its JSON escape, which is also what makes a JSON text printable, so
every output of the kit (terminal, JSON, Markdown, HTML) passes through it last. :func:`excerpts` cuts two
long texts down to the region around their first differing character, with the offsets of what it kept;
:func:`first_difference`, which finds that character, is the kit's one scan for where two texts part.

:class:`Style` colours terminal text, and only terminal text: :func:`colour_wanted` decides, from the stream and
the environment (``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb``), whether a stream gets colour at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CONTEXT", "PLAIN", "Excerpt", "Style", "colour_wanted", "excerpts", "first_difference", "visible"]

#: Characters shown on either side of the first differing character.
CONTEXT = 80

_SURROGATE = re.compile("[\ud800-\udfff]")


def visible(text: str) -> str:
    """``text`` with each surrogate code point written as ``\\udXXX``: the JSON escape, printable in UTF-8.

    In a JSON text this is the escape JSON itself uses (a raw surrogate can only stand inside a string
    literal there), so the result parses back to the same string.
    """
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def first_difference(left: str, right: str) -> int:
    """The index of the first character where ``left`` and ``right`` differ (the shorter length if one is a
    prefix of the other): their common prefix's length.

    Texts are compared slice by slice at C speed, in slices growing from 64 characters to 64 Ki (a difference
    near the start costs little), then the differing slice is halved down to a few characters: a difference at
    the end of 10 MB is found in milliseconds.
    """
    limit = min(len(left), len(right))
    start, size = 0, 64
    while start < limit:
        end = min(limit, start + size)
        if left[start:end] != right[start:end]:
            while end - start > 16:
                middle = (start + end) // 2
                if left[start:middle] == right[start:middle]:
                    start = middle
                else:
                    end = middle
            return next(index for index in range(start, end) if left[index] != right[index])
        start, size = end, min(size * 2, 1 << 16)
    return limit


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The part ``text[start:end]`` of a text ``length`` characters long, already :func:`visible`."""

    text: str
    start: int
    end: int
    length: int

    @property
    def whole(self) -> bool:
        """True when nothing was cut."""
        return self.start == 0 and self.end == self.length

    @property
    def marked(self) -> str:
        """The text with ``…`` where something was cut."""
        return ("…" if self.start > 0 else "") + self.text + ("…" if self.end < self.length else "")

    @property
    def offsets(self) -> str:
        """Where the excerpt lies: its first and past-the-end characters, and the length (empty when whole)."""
        return "" if self.whole else f"characters {self.start}–{self.end} of {self.length}"

    def __str__(self) -> str:
        return self.marked + (f" ({self.offsets})" if not self.whole else "")


def _cut(text: str, at: int, context: int) -> Excerpt:
    if len(text) <= 2 * context + 40:
        return Excerpt(visible(text), 0, len(text), len(text))
    start = max(0, min(at, len(text)) - context)
    end = min(len(text), start + 2 * context)
    return Excerpt(visible(text[start:end]), start, end, len(text))


def excerpts(expected: str | None, actual: str | None, context: int = CONTEXT) -> tuple[Excerpt | None, Excerpt | None]:
    """Both texts cut to ``context`` characters either side of where they first differ (whole when short).

    Both are cut at the same offsets, so the differing character stands at the same place in each; a
    missing side stays ``None``.
    """
    at = first_difference(expected, actual) if expected is not None and actual is not None else 0
    return (
        None if expected is None else _cut(expected, at, context),
        None if actual is None else _cut(actual, at, context),
    )


# --- colour ----------------------------------------------------------------------------------------------

_RESET = "\x1b[0m"
_CODES = {"green": "32", "red": "31", "yellow": "33", "bold": "1"}
#: The verdict labels a verdict line starts with, longest first, and their colour.
_VERDICT_COLOURS = (("NOTHING PASSED", "red"), ("INTERRUPTED", "yellow"), ("PASS", "green"), ("FAIL", "red"))


def colour_wanted(stream: object, environ: Mapping[str, str] | None = None) -> bool:
    """Whether text written to ``stream`` is coloured.

    ``NO_COLOR`` set to anything but the empty string: never (https://no-color.org). Otherwise
    ``FORCE_COLOR`` set to anything but the empty string: always. Otherwise ``TERM=dumb``: never. Otherwise
    only when ``stream`` is a terminal.
    """
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


@dataclass(frozen=True, slots=True)
class Style:
    """Colours text when ``enabled``; leaves it as it is otherwise (``Style(colour_wanted(stream))``)."""

    enabled: bool = False

    def paint(self, text: str, *colours: str) -> str:
        """``text`` in the ``colours`` (``green``, ``red``, ``yellow``, ``bold``)."""
        if not self.enabled or not colours or not text:
            return text
        return f"\x1b[{';'.join(_CODES[colour] for colour in colours)}m{text}{_RESET}"

    def good(self, text: str) -> str:
        """Green and bold: a pass."""
        return self.paint(text, "green", "bold")

    def bad(self, text: str) -> str:
        """Red and bold: a failure."""
        return self.paint(text, "red", "bold")

    def warning(self, text: str) -> str:
        """Yellow: neither pass nor failure (skipped, excused, interrupted)."""
        return self.paint(text, "yellow")

    def strong(self, text: str) -> str:
        """Bold: a heading."""
        return self.paint(text, "bold")

    def verdict(self, line: str) -> str:
        """A verdict line (``PASS: …``, ``FAIL (…): …``) with its label coloured by what it says."""
        for label, colour in _VERDICT_COLOURS:
            if line.startswith(label):
                return self.paint(label, colour, "bold") + line[len(label) :]
        return line


#: The style that colours nothing.
PLAIN = Style()
