"""The kit fails every deliberately broken implementation, on a scenario of the rule its bug violates."""

from __future__ import annotations

from typing import Any

import pytest
from broken_implementations import BUGS, Broken, Bug

from toolcontract_conformance.adapters.inprocess import InProcess
from toolcontract_conformance.adapters.reference import ReferenceImplementation
from toolcontract_conformance.locations import goldens_dir
from toolcontract_conformance.runner import golden_directory, run_suite, select
from toolcontract_conformance.scenario import load_scenarios


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    return [scenario.data for scenario in load_scenarios()]


@pytest.fixture(scope="module")
def reference_statuses() -> dict[str, list[str]]:
    """By rule, the reference's status on each scenario of that rule: run once per rule, however many bugs
    break it (several scenarios of some rules hold values 100,000 levels deep)."""
    return {}


def test_there_are_at_least_fifteen_bugs() -> None:
    assert len(BUGS) >= 15
    assert len({bug.name for bug in BUGS}) == len(BUGS)


@pytest.mark.parametrize("bug", BUGS, ids=[bug.name for bug in BUGS])
def test_the_kit_fails_the_broken_implementation_naming_the_rule(
    bug: Bug, scenarios: list[dict[str, Any]], reference_statuses: dict[str, list[str]]
) -> None:
    chosen = select(scenarios, rules=[bug.rule])
    if not chosen:
        pytest.fail(f"no scenario exercises {bug.rule}, so nothing can catch {bug.name}", pytrace=False)
    goldens = golden_directory(goldens_dir())
    if bug.rule not in reference_statuses:
        reference = run_suite(InProcess(ReferenceImplementation()), chosen, goldens)
        reference_statuses[bug.rule] = [result.status for result in reference.results]
    broken = run_suite(InProcess(Broken(bug)), chosen, goldens)
    assert not broken.ok
    caught = [
        result
        for result, sound in zip(broken.results, reference_statuses[bug.rule], strict=True)
        if sound == "passed" and result.status == "failed" and bug.rule in result.rules
    ]
    assert caught, f"{bug.name} passes every scenario of {bug.rule} that the reference passes"
    assert bug.rule in caught[0].explain()
