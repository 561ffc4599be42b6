"""``toolcanon info``: what an implementation says about itself when it is started.

The metadata of its ``start`` answer (name, version, language, capabilities, homepage and issues when given)
and how the kit reaches it: through the adapter protocol, whose version it answered (``--impl-cmd``), or in the
kit's own process, where there is no protocol (``--impl``).
"""

from __future__ import annotations

from typing import Any

from toolcanon_conformance.display import PLAIN, Style
from toolcanon_conformance.implementation import Implementation
from toolcanon_conformance.protocol import PROTOCOL_VERSION, info_to_wire

__all__ = ["describe", "info_text"]


def describe(implementation: Implementation, option: str, value: str) -> dict[str, Any]:
    """Start ``implementation`` (named by ``option value``), take its metadata, stop it.

    The answer: ``{"selectedBy": {"option", "value"}, "implementation": {name, language, version,
    capabilities, homepage?, issues?}, "protocolVersion": 1}``, ``protocolVersion`` ``null`` in-process.
    Raises the adapter's :class:`~toolcanon_conformance.exceptions.AdapterError` when it cannot start.
    """
    try:
        info = implementation.start()
    finally:
        implementation.stop()
    return {
        "selectedBy": {"option": option, "value": value},
        "implementation": info_to_wire(info),
        "protocolVersion": PROTOCOL_VERSION if option == "--impl-cmd" else None,
    }


def info_text(entry: dict[str, Any], style: Style = PLAIN) -> str:
    """:func:`describe`'s answer as aligned lines for the terminal."""
    implementation = entry["implementation"]
    protocol = entry["protocolVersion"]
    rows = [
        ("name", implementation["name"]),
        ("version", implementation["version"]),
        ("language", implementation["language"]),
        ("capabilities", ", ".join(implementation["capabilities"]) or "none"),
    ]
    rows += [(key, implementation[key]) for key in ("homepage", "issues") if key in implementation]
    rows.append(("protocol", f"adapter protocol version {protocol}" if protocol is not None else "in-process"))
    width = max(len(key) for key, _ in rows) + 1
    return "\n".join(f"{style.strong((key + ':').ljust(width))} {value}" for key, value in rows)
