"""Where the kit's data lives: the scenario files and the goldens, in a wheel or in a checkout.

A wheel carries the top-level ``fixtures/`` and ``snapshots/`` folders inside the package, as
``toolcanon_conformance/_data/fixtures`` and ``_data/snapshots``. An editable install or a plain checkout
has no such copy, so the folders are found at the repository root instead.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_root", "fixtures_dir", "goldens_dir", "scenarios_dir", "snapshots_dir", "upstream_dir"]

_PACKAGE = Path(__file__).resolve().parent


def data_root(folder: str) -> Path:
    """The directory of a data folder (``"fixtures"`` or ``"snapshots"``), installed or in a checkout.

    Raises :class:`FileNotFoundError` when neither place has it.
    """
    for candidate in (_PACKAGE / "_data" / folder, _PACKAGE.parent.parent / folder):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the kit's {folder}/ folder is neither installed with the package nor in a checkout")


def fixtures_dir() -> Path:
    """The language-neutral inputs: ``scenarios/``, ``upstream/``, test vectors."""
    return data_root("fixtures")


def snapshots_dir() -> Path:
    """The goldens (byte-exact expected outcomes)."""
    return data_root("snapshots")


def scenarios_dir() -> Path:
    """The conformance scenarios, one ``<id>.json`` file each."""
    return fixtures_dir() / "scenarios"


def goldens_dir() -> Path:
    """The reference's transcript of each scenario, ``<id>.json``."""
    return snapshots_dir() / "scenarios"


def upstream_dir() -> Path:
    """The transcripts recorded from the contract's first implementation, with their scenarios."""
    return fixtures_dir() / "upstream"
