"""The versions ``toolcanon --version`` prints: the kit's, the reference implementation's, the protocol's.

Each comes from the installed distribution's metadata, and falls back to the package's ``__version__`` when
the package runs without metadata (a plain checkout on ``PYTHONPATH``).
"""

from __future__ import annotations

import importlib
from importlib import metadata

from toolcanon_conformance.protocol import PROTOCOL_VERSION

__all__ = ["kit_version", "reference_version", "version_text"]


def _distribution_version(package: str, *names: str) -> str | None:
    """The version of the distribution that installs ``package`` (or, failing that, of the first of
    ``names`` that is installed), if it has metadata."""
    for name in [*metadata.packages_distributions().get(package, []), *names]:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _package_version(package: str) -> str | None:
    try:
        version = getattr(importlib.import_module(package), "__version__", None)
    except ImportError:
        return None
    return version if isinstance(version, str) else None


def kit_version() -> str:
    """The conformance kit's version (``unknown`` when neither metadata nor ``__version__`` says)."""
    return (
        _distribution_version("toolcanon_conformance", "toolcanon-conformance")
        or _package_version("toolcanon_conformance")
        # Kit and reference installed as one distribution.
        or _distribution_version("toolcanon", "toolcanon")
        or "unknown"
    )


def reference_version() -> str:
    """The bundled reference implementation's version (``unknown`` when neither metadata nor ``__version__``)."""
    return _distribution_version("toolcanon", "toolcanon") or _package_version("toolcanon") or "unknown"


def version_text() -> str:
    """``toolcanon 0.2.0`` then the reference implementation's and the adapter protocol's versions."""
    return (
        f"toolcanon {kit_version()}\n"
        f"reference implementation: toolcanon {reference_version()}; adapter protocol version {PROTOCOL_VERSION}"
    )
