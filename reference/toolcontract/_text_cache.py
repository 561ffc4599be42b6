"""A bounded cache of things compiled from JSON data, keyed by the data's canonical JSON text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from toolcontract._collector import without_collector
from toolcontract.frozen import FrozenDict, FrozenList
from toolcontract.jsonvalue import NotLosslessJson, _Bail, _fast_check, canonical_json

__all__ = ["TextKeyedCache"]

_T = TypeVar("_T")


class TextKeyedCache(Generic[_T]):
    """Compile each distinct JSON text once; data that is not lossless JSON is compiled every time, never cached.

    Only for compilations that are pure functions of the data's JSON text and whose results are never mutated.
    The text is the data's compact JSON in its own key order, so data written in another key order is compiled
    once more: a miss, never a wrong hit.
    """

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._entries: dict[str, _T] = {}

    def get(self, data: Any, compile_: Callable[[Any], _T], *extra_key: str) -> _T:
        """The compiled form of ``data`` (made with ``compile_(data)`` on first sight)."""
        text = _text_of(data)
        if text is None:
            return compile_(data)
        key = text + "\x00" + "\x00".join(extra_key)
        try:
            return self._entries[key]
        except KeyError:
            pass
        compiled = compile_(data)
        if len(self._entries) >= self._size:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = compiled
        return compiled


# Frozen data cannot change, so its text can be remembered by identity (holding the object keeps its id unique).
_RECENT_TEXTS: dict[int, tuple[Any, str | None]] = {}
_RECENT_SIZE = 256


def _text_of(data: Any) -> str | None:
    if type(data) is not FrozenDict and type(data) is not FrozenList:
        return _json_text(data)
    remembered = _RECENT_TEXTS.get(id(data))
    if remembered is not None and remembered[0] is data:
        return remembered[1]
    text = _json_text(data)
    if len(_RECENT_TEXTS) >= _RECENT_SIZE:
        _RECENT_TEXTS.pop(next(iter(_RECENT_TEXTS)))
    _RECENT_TEXTS[id(data)] = (data, text)
    return text


_encode: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _json_text(data: Any) -> str | None:
    """A text that only equal lossless JSON data shares, or ``None`` when ``data`` is not lossless JSON.

    The C encoder writes the text of data that the exact-type lossless check accepted (it would also accept
    tuples, subclasses and non-string keys, so it never runs first). Data too deep for either falls back to the
    iterative canonical text, marked apart so that the two kinds of text never meet.
    """
    try:
        lossless = _fast_check(data, 0)
    except (_Bail, RecursionError):
        lossless = None  # too deep for the recursive check, or a cycle
    if lossless is False:
        return None
    if lossless:
        try:
            return "j" + _encode(data)
        except RecursionError:
            pass
    try:
        return "c" + without_collector(canonical_json, data)
    except NotLosslessJson:
        return None
