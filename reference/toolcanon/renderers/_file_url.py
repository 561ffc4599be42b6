"""A ``file:`` URL as ``new URL(url)`` reads it, and Node's ``fileURLToPath`` of it on POSIX.

The WHATWG URL parser's file states: the host (``localhost`` is no host), the Windows drive letter quirk, path
segments split on ``/`` and ``\\``, dot segments (``%2e`` included) removed, the query and fragment dropped, and
each code point of the path percent-encoded with the path percent-encode set as Node 22's URL parser has it
(``^`` and ``|`` stay). Then Node's ``getPathFromURLPosix``: a host or an encoded ``/`` is refused and the
pathname is decoded as ``decodeURIComponent`` decodes it.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple
from urllib.parse import quote

from toolcanon.renderers._ecma import well_formed
from toolcanon.renderers._hostname import InvalidUrl, url_hostname

__all__ = ["FileUrl", "decode_uri_component", "file_url", "posix_file_path"]

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_LEADING_TRAILING: Final = "".join(chr(code) for code in range(0x21))
_WINDOWS_DRIVE: Final = re.compile(r"[A-Za-z][:|]")
_NORMALIZED_DRIVE: Final = re.compile(r"[A-Za-z]:")
_SLASHES: Final = ("/", "\\")
_SINGLE_DOT: Final = frozenset({".", "%2e"})
_DOUBLE_DOT: Final = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})
# The path percent-encode set of Node 22's URL parser: C0 controls, space, ", #, <, >, ?, `, {, } and non-ASCII.
_PATH_ENCODED: Final = frozenset(' "#<>?`{}')
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")


class FileUrl(NamedTuple):
    """The ``hostname`` and ``pathname`` of a parsed ``file:`` URL."""

    hostname: str
    pathname: str


def file_url(url: str) -> FileUrl | None:
    """``new URL(url)`` of a ``file:`` URL; ``None`` when the URL is not one or ``new URL`` throws."""
    text = well_formed(url).strip(_LEADING_TRAILING).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme = _SCHEME.match(text)
    if scheme is None or scheme.group()[:-1].lower() != "file":
        return None
    try:
        hostname = url_hostname(text)
    except InvalidUrl:
        return None
    return FileUrl(hostname, _pathname(text[scheme.end() :]))


def _path_input(rest: str) -> str:
    """What the path state reads, after the file, file slash and file host states took their part."""
    if rest[:1] not in _SLASHES:
        return rest
    if rest[1:2] not in _SLASHES:
        return rest[1:]
    host = re.split(r"[/\\?#]", rest[2:], maxsplit=1)[0]
    after = rest[2 + len(host) :]
    if _WINDOWS_DRIVE.fullmatch(host):
        # the drive letter quirk: the host state's buffer is kept as the path's first segment
        return host + after
    return after[1:] if after[:1] in _SLASHES else after


def _encoded(char: str) -> str:
    if char in _PATH_ENCODED or not 0x20 <= ord(char) < 0x7F:
        return quote(char.encode("utf-8"), safe="")
    return char


def _pathname(rest: str) -> str:
    segments: list[str] = []
    buffer: list[str] = []
    source = _path_input(rest)
    for index in range(len(source) + 1):
        char = source[index] if index < len(source) else ""
        if char and char not in "/\\?#":
            buffer.append(_encoded(char))
            continue
        segment = "".join(buffer)
        buffer = []
        ends = char not in _SLASHES
        if segment.lower() in _DOUBLE_DOT:
            if not (len(segments) == 1 and _NORMALIZED_DRIVE.fullmatch(segments[0])):
                segments[-1:] = []
            if ends:
                segments.append("")
        elif segment.lower() in _SINGLE_DOT:
            if ends:
                segments.append("")
        else:
            if not segments and _WINDOWS_DRIVE.fullmatch(segment):
                segment = segment[0] + ":"
            segments.append(segment)
        if ends:
            break
    return "".join(f"/{segment}" for segment in segments)


def decode_uri_component(text: str) -> str:
    """``decodeURIComponent(text)``; a ``ValueError`` where it throws (a bad escape or bytes that are not UTF-8)."""
    parts: list[str] = []
    index = 0
    while index < len(text):
        if text[index] != "%":
            parts.append(text[index])
            index += 1
            continue
        octets = bytearray()
        while index < len(text) and text[index] == "%":
            escape = _ESCAPE.match(text, index)
            if escape is None:
                raise ValueError("URI malformed")
            octets.append(int(escape.group(1), 16))
            index += 3
        parts.append(octets.decode("utf-8"))
    return "".join(parts)


def posix_file_path(url: FileUrl) -> str | None:
    """``fileURLToPath(url, {windows: false})``; ``None`` where it throws (a host, an encoded ``/``, a bad escape)."""
    if url.hostname or re.search(r"%2[Ff]", url.pathname):
        return None
    try:
        path = decode_uri_component(url.pathname)
    except ValueError:
        return None
    return path
