"""The byte cap on search-card metadata: drop trailing items until its JSON text fits (renderers.md §5-6)."""

from __future__ import annotations

from typing import Any, Final

from toolcanon.jsonvalue import canonical_json
from toolcanon.renderers._ecma import utf8_length

__all__ = ["SEARCH_META_MAX_BYTES", "cap_meta_items"]

SEARCH_META_MAX_BYTES: Final = 65536


def cap_meta_items(meta: dict[str, Any], key: str, max_bytes: int = SEARCH_META_MAX_BYTES) -> dict[str, Any]:
    """Drop trailing ``meta[key]`` items (never below one) until the JSON text fits ``max_bytes``."""
    if utf8_length(canonical_json(meta)) <= max_bytes:
        return meta
    items = list(meta[key])
    capped = {**meta, "truncated": True}
    # The JSON text grows with each kept item: find the longest prefix that fits.
    low, high = 1, len(items)
    while low < high:
        middle = (low + high + 1) // 2
        if utf8_length(canonical_json({**capped, key: items[:middle]})) <= max_bytes:
            low = middle
        else:
            high = middle - 1
    capped[key] = items[:low]
    return capped
