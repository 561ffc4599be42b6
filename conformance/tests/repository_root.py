"""Tests of the tools that live at the repository's root (``fuzz/``, ``mutation/``) import them from there."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def root_importable() -> Iterator[None]:
    """Put the repository's root first on ``sys.path`` for the tests of the module that imports this fixture."""
    sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        sys.path.remove(str(ROOT))
