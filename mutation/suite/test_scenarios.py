"""Every conformance scenario as one test: the in-process reference's transcript equals the golden, byte for byte.

Copied into the scratch project of ``python -m mutation`` as ``tests/test_scenarios.py``, beside
``locations.json`` (where the scenarios and goldens are). One test per scenario, so that a mutant is tried
against exactly the scenarios that reach the function it changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from toolcontract_conformance.adapters.reference import ReferenceImplementation
from toolcontract_conformance.runner import golden_directory, run_scenario
from toolcontract_conformance.scenario import load_scenarios

_LOCATIONS: Final = json.loads((Path(__file__).parent / "locations.json").read_text(encoding="utf-8"))
SCENARIOS: Final = {scenario.id: scenario.data for scenario in load_scenarios(_LOCATIONS["scenarios"])}
GOLDENS: Final = golden_directory(_LOCATIONS["goldens"])
IMPLEMENTATION: Final = ReferenceImplementation()


@pytest.mark.parametrize("scenario_id", sorted(SCENARIOS))
def test_scenario(scenario_id: str) -> None:
    """The scenario passes (or the reference declines it, as unmutated it does)."""
    scenario: dict[str, Any] = SCENARIOS[scenario_id]
    result = run_scenario(IMPLEMENTATION, IMPLEMENTATION.start(), 0, scenario, GOLDENS(scenario_id))
    if result.status == "skipped":
        pytest.skip(result.message)
    assert result.status == "passed", result.explain()
