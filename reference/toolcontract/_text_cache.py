"""A bounded cache of things compiled from JSON data, keyed by the data's canonical JSON text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from toolcontract.frozen import FrozenDict, FrozenList
from toolcontract.jsonvalue import NotLosslessJson, canonical_json

__all__ = ["TextKeyedCache"]

_T = TypeVar("_T")


class TextKeyedCache(Generic[_T]):
    """Compile each distinct JSON text once; data that is not JSON is compiled every time, never cached.

    Only for compilations that are pure functions of the data's JSON text and whose results are never mutated.
    """

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._entries: dict[str, _T] = {}

    def get(self, data: Any, compile_: Callable[[Any], _T], *extra_key: str) -> _T:
        """The compiled form of ``data`` (made with ``compile_(data)`` on first sight)."""
        try:
            key = _text_of(data) + "\x00" + "\x00".join(extra_key)
        except NotLosslessJson:
            return compile_(data)
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
_RECENT_TEXTS: dict[int, tuple[Any, str]] = {}
_RECENT_SIZE = 256


def _text_of(data: Any) -> str:
    if type(data) is not FrozenDict and type(data) is not FrozenList:
        return canonical_json(data)
    remembered = _RECENT_TEXTS.get(id(data))
    if remembered is not None and remembered[0] is data:
        return remembered[1]
    text = canonical_json(data)
    if len(_RECENT_TEXTS) >= _RECENT_SIZE:
        _RECENT_TEXTS.pop(next(iter(_RECENT_TEXTS)))
    _RECENT_TEXTS[id(data)] = (data, text)
    return text
