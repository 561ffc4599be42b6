"""``new URL(url).hostname`` for the common cases: scheme check, authority, IPv6, percent-decoding, IDN."""

from __future__ import annotations

import re
import unicodedata
from typing import Final
from urllib.parse import unquote

__all__ = ["InvalidUrl", "url_hostname"]

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SPECIAL: Final = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_AUTHORITY_END: Final = re.compile(r"[/\\?#]")
_FORBIDDEN_HOST: Final = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_STRIPPED: Final = "".join(chr(code) for code in range(0x21))


class InvalidUrl(ValueError):
    """The WHATWG URL parser would throw for this input."""


def _ascii_label(label: str) -> str:
    if label.isascii():
        return label
    return "xn--" + label.encode("punycode").decode("ascii")


def _domain_to_ascii(host: str) -> str:
    mapped = unicodedata.normalize("NFC", host.lower())
    return ".".join(_ascii_label(label) for label in mapped.split("."))


def url_hostname(url: str) -> str:
    """The WHATWG ``hostname`` of ``url`` (lowercased, port dropped, IDN as punycode).

    Raises :class:`InvalidUrl` where ``new URL(url)`` throws. IPv4 shorthand (``0x7f.1``) and the full
    UTS #46 mapping are not reproduced.
    """
    text = url.strip(_STRIPPED).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme_match = _SCHEME.match(text)
    if scheme_match is None:
        raise InvalidUrl(url)
    scheme = scheme_match.group()[:-1].lower()
    rest = text[scheme_match.end() :]
    special = scheme in _SPECIAL
    if scheme == "file":
        if rest[:2] not in ("//", "\\\\", "/\\", "\\/"):
            return ""
        rest = rest[2:]
    elif special:
        rest = rest.lstrip("/\\")
    elif rest.startswith("//"):
        rest = rest[2:]
    else:
        return ""
    end = _AUTHORITY_END.search(rest) if special else re.search(r"[/?#]", rest)
    authority = rest[: end.start()] if end else rest
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        closing = host.find("]")
        if closing < 0:
            raise InvalidUrl(url)
        return host[: closing + 1].lower()
    host = host.split(":", 1)[0]
    if not special:
        return host
    if not host:
        if scheme == "file":
            return ""
        raise InvalidUrl(url)
    decoded = unquote(host)
    if _FORBIDDEN_HOST.search(decoded):
        raise InvalidUrl(url)
    try:
        return _domain_to_ascii(decoded)
    except UnicodeError as error:
        raise InvalidUrl(url) from error
