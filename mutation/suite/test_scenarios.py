"""Every conformance scenario as one test: the in-process reference's transcript equals the golden, byte for byte.

Copied into the scratch project of ``python -m mutation`` as ``tests/test_scenarios.py``, beside
``locations.json`` (where the scenarios and goldens are). One test per scenario, so that a mutant is tried
against exactly the scenarios that reach the function it changes.

Each scenario has the deadline ``toolcanon fuzz`` gives an implementation by default: a mutant that makes a
scenario wait for ever, or loop, fails it as *timed out*, as the kit reports such an implementation. mutmut's
own time limits are set above it (``mutation/scratch.py``), so that they end only a run of many slow scenarios.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from toolcanon_conformance.adapters.inprocess import InProcess
from toolcanon_conformance.adapters.reference import ReferenceImplementation
from toolcanon_conformance.runner import golden_directory, run_scenario
from toolcanon_conformance.scenario import load_scenarios

SCENARIO_TIMEOUT: Final = 10.0
"""Seconds per scenario: ``toolcanon fuzz --timeout``'s default; the slowest scenario takes under 1 s here."""

_LOCATIONS: Final = json.loads((Path(__file__).parent / "locations.json").read_text(encoding="utf-8"))
SCENARIOS: Final = {scenario.id: scenario.data for scenario in load_scenarios(_LOCATIONS["scenarios"])}
GOLDENS: Final = golden_directory(_LOCATIONS["goldens"])
IMPLEMENTATION: Final = InProcess(ReferenceImplementation(), timeout=SCENARIO_TIMEOUT)
INFO: Final = IMPLEMENTATION.start()


@pytest.mark.parametrize("scenario_id", sorted(SCENARIOS))
def test_scenario(scenario_id: str) -> None:
    """The scenario passes (or the reference declines it, as unmutated it does)."""
    scenario: dict[str, Any] = SCENARIOS[scenario_id]
    result = run_scenario(IMPLEMENTATION, INFO, 0, scenario, GOLDENS(scenario_id))
    if result.status == "skipped":
        pytest.skip(result.message)
    assert result.status == "passed", result.explain()
