"""Every family's renderer is total, pure and lossless-JSON (renderers.md §0.2), checked with the kit's toolkit."""

from __future__ import annotations

import importlib
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcanon.renderers import FAMILIES, output_for
from toolcanon.schema import compile_value_schema
from toolcanon_conformance.renderer_toolkit import RendererFixture, check_renderer, load_renderer_fixtures

from .conftest import FIXTURES

# Arguments the renderers read (the registry validates arguments before any renderer runs).
ARGS: Final[dict[str, Any]] = {
    "write": {"file_path": "f.txt"},
    "edit": {"file_path": "f.txt"},
    "terminal_signal": {"signal": "SIGINT"},
    "workflow": {"meta": {"name": "w"}},
}
CASES = load_renderer_fixtures(FIXTURES)


@pytest.mark.parametrize("fixture", CASES, ids=[case.id for case in CASES])
def test_fixture_values(fixture: RendererFixture) -> None:
    """Each worked example renders twice to the same bytes, without raising, as lossless JSON."""
    args = fixture.args if fixture.args else ARGS.get(fixture.family)
    assert check_renderer(output_for(fixture.family, **fixture.config), [fixture.value], args) == 1


def _values_for() -> Any:
    try:
        strategies = importlib.import_module("toolcanon_conformance.strategies")
    except ImportError:
        pytest.skip("toolcanon_conformance.strategies is not available")
    values_for = getattr(strategies, "values_for", None)
    if values_for is None:
        pytest.skip("toolcanon_conformance.strategies has no values_for")
    return values_for


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generated_values(family: str) -> None:
    """Schema-valid generated values (``values_for``) never make a renderer raise, differ or leak."""
    values_for = _values_for()
    output = FAMILIES[family]
    strategy: st.SearchStrategy[Any] = values_for(compile_value_schema(output.schema))
    if family == "ralph":
        # The tool only returns one of its three outcomes; anything else makes the renderer raise, as the original's.
        outcome = st.fixed_dictionaries(
            {"status": st.sampled_from(("complete", "blocked", "budget-limited")), "roundsStarted": st.integers(0, 9)},
            optional={"report": values_for({})},
        )
        strategy = st.tuples(strategy, outcome).map(lambda drawn: {**drawn[0], "result": drawn[1]})

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(strategy)
    def rendered(value: Any) -> None:
        check_renderer(output, [value], ARGS.get(family))

    rendered()
