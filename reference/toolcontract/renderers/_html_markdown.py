"""HTML page bodies for ``web_fetch``: the conversion to markdown (renderers.md §14)."""

from __future__ import annotations

__all__ = ["html_to_markdown"]


def html_to_markdown(source: str) -> str:
    """The text shown for an HTML body: its source as it is.

    The contract converts HTML with turndown and its GFM plugin over an HTML5 DOM; byte parity needs that whole
    pipeline, so the reference does not approximate it (documented in ``docs/edge-cases.md``).
    """
    return source
