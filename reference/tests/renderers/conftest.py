"""The renderer tests check goldens with the kit's ``native_snapshot`` fixture, as renderer authors do."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from toolcanon_conformance.renderer_toolkit import native_snapshot  # noqa: F401

REPOSITORY: Final = Path(__file__).resolve().parents[3]
FIXTURES: Final = REPOSITORY / "fixtures" / "renderers"
GOLDENS: Final = REPOSITORY / "snapshots" / "renderers"
