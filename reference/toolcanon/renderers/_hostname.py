"""``new URL(url).hostname``: the WHATWG URL parser up to the host, with its host parser.

Covered: scheme and authority rules for special and non-special schemes, ``file:`` hosts, user info, port
validity, percent-decoding, IPv4 (shorthand, octal, hex) and IPv6 (compressed serialization, embedded IPv4)
addresses, opaque hosts, and domain-to-ASCII (UTS #46, non-transitional, without STD3 rules): label separators,
ignored code points, case folding and compatibility mapping, the deviation characters kept, punycode, and the
validity checks (leading combining mark, joiners, bidi). The UTS #46 mapping is derived from ``unicodedata``
(NFKC case folding), not read from the IDNA mapping table, so a few code points the table treats specially may
differ.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final
from urllib.parse import quote, unquote_to_bytes

from toolcanon.renderers._ecma import well_formed

__all__ = ["InvalidUrl", "url_hostname"]

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SPECIAL: Final = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_LEADING_TRAILING: Final = "".join(chr(code) for code in range(0x21))
_FORBIDDEN_HOST: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN: Final = _FORBIDDEN_HOST | frozenset(chr(code) for code in range(0x20)) | {"%", "\x7f"}
_WINDOWS_DRIVE: Final = re.compile(r"[A-Za-z][:|]")

# UTS #46: what maps to the full stop, what is ignored, and the deviations that non-transitional processing keeps.
_LABEL_SEPARATORS: Final = frozenset("\u3002\uff0e\uff61")
_IGNORED: Final = frozenset(
    [
        *(0xAD, 0x34F, 0x180B, 0x180C, 0x180D, 0x180F, 0x200B, 0x2060, 0x2064, 0xFEFF),
        *range(0xFE00, 0xFE10),
        *range(0x1BCA0, 0x1BCA4),
        *range(0xE0100, 0xE01F0),
    ]
)
_DEVIATIONS: Final = frozenset("\u00df\u03c2\u200c\u200d")
_DISALLOWED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp", "Zs"})
# Code points the IDNA mapping table disallows although their category and NFKC form would let them through.
_DISALLOWED: Final = frozenset("\u115f\u1160\u1806\u3164\uffa0\ufffc\ufffd")
_VIRAMA: Final = 9


class InvalidUrl(ValueError):
    """The WHATWG URL parser would throw for this input."""


def url_hostname(url: str) -> str:
    """The WHATWG ``hostname`` of ``url``; raises :class:`InvalidUrl` where ``new URL(url)`` throws."""
    text = well_formed(url).strip(_LEADING_TRAILING).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme_match = _SCHEME.match(text)
    if scheme_match is None:
        raise InvalidUrl(url)
    scheme = scheme_match.group()[:-1].lower()
    rest = text[scheme_match.end() :]
    if scheme == "file":
        return _file_host(rest, url)
    if scheme in _SPECIAL:
        authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
        return _authority_host(authority, special=True, url=url)
    if not rest.startswith("//"):
        return ""
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    return _authority_host(authority, special=False, url=url)


def _file_host(rest: str, url: str) -> str:
    if rest[:1] not in ("/", "\\") or rest[1:2] not in ("/", "\\"):
        return ""
    buffer = re.split(r"[/\\?#]", rest[2:], maxsplit=1)[0]
    if not buffer or _WINDOWS_DRIVE.fullmatch(buffer):
        return ""
    host = _host(buffer, url)
    return "" if host == "localhost" else host


def _authority_host(authority: str, *, special: bool, url: str) -> str:
    if "@" in authority:
        authority = authority.rpartition("@")[2]
        if not authority:
            raise InvalidUrl(url)
    host, port = _split_port(authority)
    if port is not None and (not host or (port and (not port.isascii() or not port.isdigit() or int(port) > 65535))):
        raise InvalidUrl(url)
    if not host:
        if special:
            raise InvalidUrl(url)
        return ""
    return _host(host, url) if special else _opaque_host(host, url)


def _split_port(authority: str) -> tuple[str, str | None]:
    inside_brackets = False
    for index, char in enumerate(authority):
        if char == "[":
            inside_brackets = True
        elif char == "]":
            inside_brackets = False
        elif char == ":" and not inside_brackets:
            return authority[:index], authority[index + 1 :]
    return authority, None


def _opaque_host(host: str, url: str) -> str:
    if host.startswith("["):
        return _bracketed_ipv6(host, url)
    if any(char in _FORBIDDEN_HOST for char in host):
        raise InvalidUrl(url)
    # The C0-control percent-encode set: controls, DEL and every non-ASCII code point are percent-encoded.
    return "".join(char if 0x20 <= ord(char) < 0x7F else quote(char.encode("utf-8"), safe="") for char in host)


def _bracketed_ipv6(host: str, url: str) -> str:
    if not host.endswith("]"):
        raise InvalidUrl(url)
    pieces = _ipv6(host[1:-1])
    if pieces is None:
        raise InvalidUrl(url)
    return f"[{_ipv6_text(pieces)}]"


def _host(host: str, url: str) -> str:
    if host.startswith("["):
        return _bracketed_ipv6(host, url)
    domain = unquote_to_bytes(host.encode("utf-8")).decode("utf-8", "replace")
    ascii_domain = _domain_to_ascii(domain)
    if ascii_domain is None or any(char in _FORBIDDEN_DOMAIN for char in ascii_domain):
        raise InvalidUrl(url)
    if _ends_in_number(ascii_domain):
        address = _ipv4(ascii_domain)
        if address is None:
            raise InvalidUrl(url)
        return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))
    return ascii_domain


# --- IPv4 and IPv6 -----------------------------------------------------------------------------------------


def _ipv4_number(part: str) -> int | None:
    radix = 10
    if part[:2] in ("0x", "0X"):
        radix, part = 16, part[2:]
    elif len(part) >= 2 and part.startswith("0"):
        radix, part = 8, part[1:]
    if not part:
        return 0
    digits = "0123456789abcdefABCDEF"[: radix + 6 if radix == 16 else radix]
    if not all(char in digits for char in part):
        return None
    return int(part, radix)


def _ends_in_number(domain: str) -> bool:
    parts = domain.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return bool(last) and _ipv4_number(last) is not None


def _ipv4(domain: str) -> int | None:
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4 or any(not part for part in parts):
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    values = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for index, value in enumerate(values[:-1]):
        address += value * 256 ** (3 - index)
    return address


def _ipv6(text: str) -> list[int] | None:
    """The WHATWG IPv6 parser: eight 16-bit pieces, or ``None`` for a failure."""
    pieces = [0] * 8
    index, compress, pointer = 0, None, 0
    if text.startswith(":"):
        if not text.startswith("::"):
            return None
        pointer, index = 2, 1
        compress = index
    while pointer < len(text):
        if index == 8:
            return None
        if text[pointer] == ":":
            if compress is not None:
                return None
            pointer += 1
            index += 1
            compress = index
            continue
        value = length = 0
        while length < 4 and pointer < len(text) and text[pointer] in "0123456789abcdefABCDEF":
            value = value * 16 + int(text[pointer], 16)
            pointer += 1
            length += 1
        if pointer < len(text) and text[pointer] == ".":
            if length == 0 or index > 6:
                return None
            pointer -= length
            numbers_seen = 0
            while pointer < len(text):
                ipv4_piece: int | None = None
                if numbers_seen > 0:
                    if text[pointer] == "." and numbers_seen < 4:
                        pointer += 1
                    else:
                        return None
                if pointer >= len(text) or not text[pointer].isascii() or not text[pointer].isdigit():
                    return None
                while pointer < len(text) and text[pointer].isascii() and text[pointer].isdigit():
                    number = int(text[pointer])
                    if ipv4_piece is None:
                        ipv4_piece = number
                    elif ipv4_piece == 0:
                        return None
                    else:
                        ipv4_piece = ipv4_piece * 10 + number
                    if ipv4_piece > 255:
                        return None
                    pointer += 1
                pieces[index] = pieces[index] * 0x100 + (ipv4_piece or 0)
                numbers_seen += 1
                if numbers_seen in (2, 4):
                    index += 1
            if numbers_seen != 4:
                return None
            break
        if pointer < len(text) and text[pointer] == ":":
            pointer += 1
            if pointer >= len(text):
                return None
        elif pointer < len(text):
            return None
        pieces[index] = value
        index += 1
    if compress is not None:
        swaps = index - compress
        index = 7
        while index != 0 and swaps > 0:
            pieces[index], pieces[compress + swaps - 1] = pieces[compress + swaps - 1], pieces[index]
            index -= 1
            swaps -= 1
    elif index != 8:
        return None
    return pieces


def _ipv6_text(pieces: list[int]) -> str:
    best_start, best_length, start = -1, 1, None
    for position in range(9):
        if position < 8 and pieces[position] == 0:
            start = position if start is None else start
        elif start is not None:
            if position - start > best_length:
                best_start, best_length = start, position - start
            start = None
    out = ""
    skipping = False
    for position, piece in enumerate(pieces):
        if skipping and piece == 0:
            continue
        skipping = False
        if position == best_start:
            out += "::" if position == 0 else ":"
            skipping = True
            continue
        out += format(piece, "x")
        if position != 7:
            out += ":"
    return out


# --- domain to ASCII (UTS #46) -----------------------------------------------------------------------------


def _mapped(char: str) -> str | None:
    """The UTS #46 mapping of one code point; ``None`` when it is disallowed."""
    code = ord(char)
    if code < 0x80:
        return char.lower()
    if code in _IGNORED:
        return ""
    if char in _LABEL_SEPARATORS:
        return "."
    if char in _DEVIATIONS:
        return char
    if unicodedata.category(char) in _DISALLOWED_CATEGORIES or (code & 0xFFFE) == 0xFFFE or char in _DISALLOWED:
        return None
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", char).casefold())
    # A compatibility mapping can land on a separator or an ignored code point in turn.
    return "".join("." if mapped in _LABEL_SEPARATORS else mapped for mapped in folded if ord(mapped) not in _IGNORED)


def _valid_label(label: str) -> bool:
    if not label:
        return True
    if unicodedata.normalize("NFC", label) != label or unicodedata.category(label[0]).startswith("M"):
        return False
    for index, char in enumerate(label):
        if char in "\u200c\u200d" and (index == 0 or unicodedata.combining(label[index - 1]) != _VIRAMA):
            return False
        if ord(char) >= 0x80 and _mapped(char) != char:
            return False
    return True


def _bidi_ok(label: str) -> bool:
    """RFC 5893's rule for a label that starts right-to-left (Node's URL parser checks only such labels)."""
    classes = [unicodedata.bidirectional(char) for char in label]
    if not classes or classes[0] not in ("R", "AL"):
        return True
    trailing = classes[:]
    while trailing and trailing[-1] == "NSM":
        trailing.pop()
    allowed = {"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"}
    return (
        all(kind in allowed for kind in classes)
        and bool(trailing)
        and trailing[-1] in ("R", "AL", "EN", "AN")
        and not ("EN" in classes and "AN" in classes)
    )


def _domain_to_ascii(domain: str) -> str | None:
    mapped_parts: list[str] = []
    for char in domain:
        mapped = _mapped(char)
        if mapped is None:
            return None
        mapped_parts.append(mapped)
    labels = unicodedata.normalize("NFC", "".join(mapped_parts)).split(".")
    decoded: list[str] = []
    for label in labels:
        if label.startswith("xn--"):
            try:
                unicode_label = label[4:].encode("ascii").decode("punycode")
            except (UnicodeError, ValueError):
                return None
            if not unicode_label or not _valid_label(unicode_label):
                return None
            decoded.append(unicode_label)
        elif not _valid_label(label):
            return None
        else:
            decoded.append(label)
    if not all(_bidi_ok(label) for label in decoded):
        return None
    result = ".".join(
        label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii") for label in labels
    )
    return result or None
