"""A bounded cache of things compiled from JSON data, keyed by the data's JSON text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from toolcanon._collector import without_collector
from toolcanon.frozen import FrozenDict, FrozenList
from toolcanon.jsonvalue import NotLosslessJson, _Bail, _fast_check, canonical_json

__all__ = ["TextKeyedCache", "remember_lossless_text"]

_T = TypeVar("_T")


class TextKeyedCache(Generic[_T]):
    """Compile each distinct JSON text once; data that is not lossless JSON is compiled every time, never cached.

    Only for compilations that are pure functions of the data's JSON text and whose results are never mutated.
    The text is the data's compact JSON in its own key order, so data written in another key order is compiled
    once more: a miss, never a wrong hit. At most ``size`` entries are kept, and texts of at most ``budget``
    characters in all (a compiled form is about as large as its text), the oldest dropped first; the newest
    entry is kept whatever its length.
    """

    def __init__(self, size: int = 512, budget: int = 1 << 23) -> None:
        self._size = size
        self._budget = budget
        self._held = 0
        # keyed by the text and the extra key as a tuple: a text caches its hash, so a long one is hashed once
        self._entries: dict[tuple[str, ...], _T] = {}

    def put(self, text: str, compiled: _T, *extra_key: str) -> None:
        """Hold ``compiled`` as the compiled form of the data whose text (from :func:`remember_lossless_text`) is
        ``text``."""
        self._hold((text, *extra_key), compiled)

    def get(self, data: Any, compile_: Callable[[Any], _T], *extra_key: str) -> _T:
        """The compiled form of ``data`` (made with ``compile_(data)`` on first sight)."""
        text = _text_of(data)
        if text is None:
            return compile_(data)
        key = (text, *extra_key)
        try:
            return self._entries[key]
        except KeyError:
            pass
        compiled = compile_(data)
        self._hold(key, compiled)
        return compiled

    def _hold(self, key: tuple[str, ...], compiled: _T) -> None:
        entries = self._entries
        if key in entries:
            return
        length = len(key[0])
        while entries and (len(entries) >= self._size or self._held + length > self._budget):
            oldest = next(iter(entries))
            del entries[oldest]
            self._held -= len(oldest[0])
        entries[key] = compiled
        self._held += length


# Frozen data cannot change, so its text can be remembered by identity (holding the object keeps its id unique),
# for a few objects and a bounded length of text in all.
_RECENT_TEXTS: dict[int, tuple[Any, str | None]] = {}
_RECENT_SIZE = 256
_RECENT_BUDGET = 1 << 23
_recent_held = 0


def _text_of(data: Any) -> str | None:
    kind = type(data)
    if kind is not FrozenDict and kind is not FrozenList:
        return without_collector(_json_text, data) if kind is dict or kind is list else _json_text(data)
    remembered = _RECENT_TEXTS.get(id(data))
    if remembered is not None and remembered[0] is data:
        return remembered[1]
    # the encoder makes a list of items for every object: for a large schema, enough to start full collections
    return _remember(data, without_collector(_json_text, data))


def remember_lossless_text(frozen: FrozenDict | FrozenList) -> str | None:
    """The text of a frozen copy just made from lossless JSON (so not checked again), remembered by identity.

    ``None`` when the encoder cannot write it (too deep for the caller's stack): the text is then made and
    remembered on first use.
    """
    try:
        text = "j" + without_collector(_encode, frozen)
    except RecursionError:
        return None
    return _remember(frozen, text)


def _remember(data: FrozenDict | FrozenList, text: str | None) -> str | None:
    global _recent_held
    length = len(text) if text is not None else 0
    while _RECENT_TEXTS and (len(_RECENT_TEXTS) >= _RECENT_SIZE or _recent_held + length > _RECENT_BUDGET):
        oldest = _RECENT_TEXTS.pop(next(iter(_RECENT_TEXTS)))[1]
        _recent_held -= len(oldest) if oldest is not None else 0
    _RECENT_TEXTS[id(data)] = (data, text)
    _recent_held += length
    return text


# Only data already known to be lossless JSON, so acyclic, is encoded: the encoder's own cycle check is spared.
_encode: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


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
        return "c" + canonical_json(data)
    except NotLosslessJson:
        return None
