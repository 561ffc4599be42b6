"""Where a scenario's golden transcript comes from.

Most goldens are the reference's transcripts. A scenario the reference cannot express (a JavaScript-only value,
``docs/protocol.md``, "Exotic values") names the implementation its golden is recorded from instead, with a
top-level ``"golden": {"source": ..., "reason": ...}``; the reference answers it ``skipped``, and
``tools/record_goldens.py`` (re)records its golden from that implementation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["REFERENCE", "count_sources", "golden_source_of", "sources_text"]

REFERENCE: Final = "reference"
"""The source of a golden that is the reference's transcript (a scenario without ``golden``)."""


def golden_source_of(scenario: Mapping[str, Any]) -> str:
    """The source of a scenario's golden: its ``golden.source``, or :data:`REFERENCE`."""
    marker = scenario.get("golden")
    if isinstance(marker, Mapping) and isinstance(marker.get("source"), str):
        return str(marker["source"])
    return REFERENCE


def count_sources(sources: Iterable[str]) -> dict[str, int]:
    """How many goldens come from each source: the reference first, then the others by name."""
    counts = Counter(sources)
    ordered = sorted(counts, key=lambda source: (source != REFERENCE, source))
    return {source: counts[source] for source in ordered}


def sources_text(counts: Mapping[str, int]) -> str:
    """``reference: 168, typescript-dsh-tools: 9``."""
    return ", ".join(f"{source}: {count}" for source, count in counts.items())
