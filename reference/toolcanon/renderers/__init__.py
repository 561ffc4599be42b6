"""The first-party tools' output declarations (value schema, Native renderer, metadata), by family name.

Each family module builds its :class:`~toolcanon.definition.Output` with the value-schema DSL;
:data:`FAMILIES` holds them with the default configuration, :func:`output_for` builds one with another, and
:func:`render_native` runs the success path of the contract on a value (snapshot, validate, render, snapshot
the content) and, on request, the family's ``finalize_content``.

The family modules and their declarations are loaded when one of these names is first read: the registry
needs only the package's ECMAScript helpers, and a process that renders no first-party family (the reference
adapter serving most scenarios) never pays for the HTML port or the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcanon.renderers._families import (
        FAMILIES,
        FINALIZING_FAMILIES,
        finalize_native,
        output_for,
        render_native,
        violations_of,
    )

__all__ = ["FAMILIES", "FINALIZING_FAMILIES", "finalize_native", "output_for", "render_native", "violations_of"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module("toolcanon.renderers._families"), name)
    globals()[name] = value
    return value
