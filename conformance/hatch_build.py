"""Build hook: the kit's data folders, which live outside its folder, travel inside its wheel and sdist.

From a checkout, ``../fixtures``, ``../snapshots`` and ``../docs/examples`` (the adapter guide's example, which
``toolcanon example`` writes out) are force-included under ``toolcanon_conformance/_data/`` at the same relative
paths (in the sdist at the same place, so a wheel built from the sdist carries them as ordinary package files).
An editable install takes nothing: ``toolcanon_conformance.locations`` finds the folders in the checkout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.config import BuilderConfig
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

DATA_FOLDERS = ("fixtures", "snapshots", "docs/examples")
PACKAGE_DATA = "toolcanon_conformance/_data"


class DataFoldersHook(BuildHookInterface[BuilderConfig]):
    """Force-includes the repository's data folders unless the tree being built already holds them."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Map each data folder to ``toolcanon_conformance/_data/<folder>`` in the artifact."""
        if version == "editable":
            return
        root = Path(self.root)
        for folder in DATA_FOLDERS:
            if (root / PACKAGE_DATA / folder).is_dir():
                continue  # an unpacked sdist: the folder is package data already
            source = root.parent / folder
            if not source.is_dir():
                raise FileNotFoundError(f"{source} not found: the kit is built from a checkout or from its sdist")
            build_data["force_include"][str(source)] = f"{PACKAGE_DATA}/{folder}"
