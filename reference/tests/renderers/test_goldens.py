"""Every renderer fixture renders to its golden, byte for byte (renderers.md, all sections).

Goldens whose text renderers.md states were written from that text, not from the renderer's output.
"""

from __future__ import annotations

import pytest

from toolcanon.renderers import FAMILIES, render_native
from toolcanon_conformance.renderer_toolkit import NativeSnapshot, RendererFixture, load_renderer_fixtures

from .conftest import FIXTURES, GOLDENS

CASES = load_renderer_fixtures(FIXTURES)


@pytest.mark.parametrize("fixture", CASES, ids=[case.id for case in CASES])
def test_fixture_renders_to_its_golden(fixture: RendererFixture, native_snapshot: NativeSnapshot) -> None:
    """The rendering of ``fixtures/renderers/<family>/<case>.json`` equals ``snapshots/renderers/…``."""
    content = render_native(
        fixture.family, fixture.value, fixture.args, config=fixture.config, finalize=fixture.finalize
    )
    native_snapshot.match(content, family=fixture.family, case=fixture.case)


def test_every_family_has_fixtures() -> None:
    """Each family of the registry has at least one worked example."""
    assert {case.family for case in CASES} == set(FAMILIES)


def test_goldens_and_fixtures_pair_up() -> None:
    """Each fixture has exactly one golden and each golden a fixture (syrupy never deletes orphans here)."""
    goldens: dict[str, list[str]] = {}
    for path in GOLDENS.glob("*/*"):
        goldens.setdefault(f"{path.parent.name}/{path.stem}", []).append(path.suffix)
    assert sorted(goldens) == sorted(case.id for case in CASES)
    assert all(suffixes in ([".txt"], [".json"]) for suffixes in goldens.values())
